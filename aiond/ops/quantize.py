"""MXNet's contrib quantize / dequantize (``src/operator/quantization/
quantize-inl.h``, ``dequantize-inl.h``): float32 data to uint8 (affine over
[min_range, max_range]) or int8 (zero-centred over max(|min|, |max|)), and
back. The ranges are (1,) float32 arrays; quantize also returns the range
its output represents."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, host_kernels, p_str, register

_F32 = np.dtype(np.float32)


def _ranges_ok(shapes):
    for name, s in zip(("min_range", "max_range"), shapes[1:]):
        if tuple(s) != (1,):
            raise ShapeError("%s must have shape (1,), got %s" % (name, fmt(s)))


def _quantize_rule(attrs, shapes, dtypes):
    _ranges_ok(shapes)
    if dtypes[0] != _F32:
        raise OpError("data must be float32, got %s" % dtypes[0].name)
    return (tuple(shapes[0]), (1,), (1,)), (np.dtype(attrs["out_type"]), _F32, _F32)


@register("_contrib_quantize", inputs=("data", "min_range", "max_range"), params=[
    Param("out_type", p_str, "uint8", "Output data type.", choices=("int8", "uint8"))],
    infer=_quantize_rule, num_outputs=3, output_names=("output", "min_output", "max_output"))
def _contrib_quantize(xp, data, min_range, max_range, out, out_type="uint8"):
    """quantize(data, min_range, max_range, out_type='uint8'): (quantized data,
    min, max) as MXNet: uint8 rounds (x - min) * 255 / (max - min); int8 rounds
    |x| * 127 / max(|min|, |max|) (clipped) and keeps the sign."""
    lo, hi = np.float32(min_range[0]), np.float32(max_range[0])
    x = data.astype(np.float32)
    if out_type == "uint8":
        scale = np.float32(255.0 / (hi - lo))
        q = xp.trunc((x - lo) * scale + np.float32(0.5))
        out[0][...] = xp.clip(q, 0, 255).astype(np.uint8)
        out[1][...] = lo
        out[2][...] = hi
    else:
        real = max(abs(lo), abs(hi))
        scale = np.float32(127.0) / real
        q = xp.sign(x) * xp.minimum(xp.abs(x) * scale + np.float32(0.5), np.float32(127.0))
        out[0][...] = xp.trunc(q).astype(np.int8)
        out[1][...] = -real
        out[2][...] = real


def _dequantize_rule(attrs, shapes, dtypes):
    _ranges_ok(shapes)
    if dtypes[0] not in (np.dtype(np.uint8), np.dtype(np.int8)):
        raise OpError("data must be uint8 or int8, got %s" % dtypes[0].name)
    return (tuple(shapes[0]),), (np.dtype(attrs["out_type"]),)


@register("_contrib_dequantize", inputs=("data", "min_range", "max_range"), params=[
    Param("out_type", p_str, "float32", "Output data type.", choices=("float32",))],
    infer=_dequantize_rule)
def _contrib_dequantize(xp, data, min_range, max_range, out, out_type="float32"):
    """dequantize(data, min_range, max_range, out_type='float32'): the float
    values that uint8/int8 data stand for over the given range."""
    lo, hi = np.float32(min_range[0]), np.float32(max_range[0])
    q = data.astype(np.float32)
    if data.dtype == np.uint8:
        out[...] = q * np.float32((hi - lo) / 255.0) + lo
    else:
        out[...] = q * np.float32(max(abs(lo), abs(hi)) / 127.0)


set_grads({"_contrib_quantize": lambda F, at, ins, outs, og: [None] * 3,
           "_contrib_dequantize": lambda F, at, ins, outs, og: [None] * 3})


host_kernels("_contrib_quantize", "_contrib_dequantize")   # ranges read as Python numbers: host-side on a GPU
