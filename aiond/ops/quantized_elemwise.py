"""MXNet 1.9.1's int8 element-wise ops (src/operator/quantization and its
oneDNN kernels), beside the int8 family in ``quantized``:

* ``_contrib_quantized_elemwise_add``: ``lhs + rhs`` of int8/uint8 data with
  their ranges; int32 over the sum of the ranges, or int8/uint8 over a
  calibrated range (oneDNN's scaled sum, rounded to nearest and saturated);
* ``_contrib_quantized_elemwise_mul``: ``lhs * rhs`` of int8 data: int32 over
  the product range, int8 over a calibrated range, or float32
  (``enable_float_output``), truncated toward zero as MXNet's CPU kernel does;
* ``_contrib_quantized_concat``: Concat of int8/uint8 arrays, each rescaled
  to the widest range (int8 output if any input is int8);
* ``_contrib_quantize_asym``: float32 -> uint8 with a scale and a shift
  (``q = x * scale + shift``), from the data's range or a calibrated one.

The ops are for inference: their gradients are zeros, as MXNet's.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import _REGISTRY, Op, Param, host_kernels, p_bool, p_int, register

_F32 = np.dtype(np.float32)
_I8, _U8, _I32 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)
# MXNet's quantized ranges (quantization_utils.h): kInt8Range, kUint8Range, kInt32Range
_RANGE = {_I8: 127.5, _U8: 255.5, _I32: 2147483647.0}
_LIMITS = {_I8: (-128, 127), _U8: (0, 255), _I32: (-2147483648, 2147483647)}
_OUT3 = ("output", "min_output", "max_output")


def _p_opt_float(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return float(v)


_CALIB = [Param("min_calib_range", _p_opt_float, None,
                "The minimum scalar value of the calibrated output range (None: derived from "
                "the input ranges)."),
          Param("max_calib_range", _p_opt_float, None,
                "The maximum scalar value of the calibrated output range.")]


def _calibrated(attrs):
    return attrs.get("min_calib_range") is not None and attrs.get("max_calib_range") is not None


def _absmax(lo, hi):
    return max(abs(float(lo)), abs(float(hi)))


def _saturate(xp, v, dtype):
    lo, hi = _LIMITS[dtype]
    return xp.clip(v, lo, hi).astype(dtype)


def _check_ranges(shapes, start, names):
    for name, s in zip(names, shapes[start:]):
        if tuple(s) != (1,):
            raise ShapeError("%s must have shape (1,), got %s" % (name, fmt(s)))


def _check_dtype(dtype, allowed, what):
    if dtype not in allowed:
        raise OpError("%s must be %s, got %s"
                      % (what, " or ".join(d.name for d in allowed), dtype.name))


# ------------------------------------------------------------ elemwise_add


def _add_out_type(attrs, lt, rt):
    if _calibrated(attrs):
        return lt if lt == rt else _I8
    return _I32


def _add_rule(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("lhs has shape %s but rhs %s; quantized_elemwise_add needs equal "
                         "shapes" % (fmt(shapes[0]), fmt(shapes[1])))
    _check_ranges(shapes, 2, ("lhs_min", "lhs_max", "rhs_min", "rhs_max"))
    _check_dtype(dtypes[0], (_I8, _U8), "lhs")
    _check_dtype(dtypes[1], (_I8, _U8), "rhs")
    return (tuple(shapes[0]), (1,), (1,)), (_add_out_type(attrs, dtypes[0], dtypes[1]),
                                           _F32, _F32)


@register("_contrib_quantized_elemwise_add",
          inputs=("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"), params=_CALIB,
          infer=_add_rule, num_outputs=3, output_names=_OUT3)
def _contrib_quantized_elemwise_add(xp, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, out,
                                    min_calib_range=None, max_calib_range=None):
    """quantized_elemwise_add(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max,
    min_calib_range=None, max_calib_range=None): the sum of two quantized
    arrays. Without a calibrated range the result is int32 over
    [-(|A|+|B|), |A|+|B|] (|A| = max(|lhs_min|, |lhs_max|)); with one it is
    int8 (uint8 when both inputs are uint8) over that range."""
    f = np.float32      # MXNet computes the scales in float
    a_abs = f(_absmax(lhs_min[0], lhs_max[0]))
    b_abs = f(_absmax(rhs_min[0], rhs_max[0]))
    calib = min_calib_range is not None and max_calib_range is not None
    t = _add_out_type({"min_calib_range": min_calib_range, "max_calib_range": max_calib_range},
                      lhs.dtype, rhs.dtype)
    o_range = f(_RANGE[t])
    a_range, b_range = f(_RANGE[lhs.dtype]), f(_RANGE[rhs.dtype])
    zero = f(0)
    a_scale = a_range / a_abs if a_abs else zero
    b_scale = b_range / b_abs if b_abs else zero
    if calib:
        o_lo, o_hi = f(min_calib_range), f(max_calib_range)
        o_abs = f(_absmax(o_lo, o_hi))
        o_scale = o_range / o_abs if o_abs else zero
        sa = o_scale / a_scale if a_scale else zero
        sb = o_scale / b_scale if b_scale else zero
    else:
        tot = a_abs + b_abs
        o_hi, o_lo = tot, -tot
        sa = a_abs * o_range / (tot * a_range) if tot else zero
        sb = b_abs * o_range / (tot * (a_range if lhs.dtype == rhs.dtype else b_range)) \
            if tot else zero
    a = lhs.astype(np.float32)
    b = rhs.astype(np.float32)
    if lhs.dtype != rhs.dtype:
        # oneDNN first brings the uint8 operand to int8 (rounded, saturated),
        # scaled so that a unit sum weight applies to it
        if lhs.dtype == _I8:
            b = _saturate(xp, xp.rint(b * sb), _I8).astype(np.float32)
            sb = f(1)
        else:
            a = _saturate(xp, xp.rint(a * sa), _I8).astype(np.float32)
            sa = f(1)
    acc = a * sa + b * sb
    out[0][...] = _saturate(xp, xp.rint(acc).astype(np.float64), t)
    out[1][...] = o_lo
    out[2][...] = o_hi


# ------------------------------------------------------------ elemwise_mul


def _mul_outputs(attrs):
    return 1 if attrs.get("enable_float_output") else 3


def _mul_out_type(attrs):
    if attrs.get("enable_float_output"):
        return _F32
    return _I8 if _calibrated(attrs) else _I32


def _mul_rule(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("lhs has shape %s but rhs %s; quantized_elemwise_mul does not "
                         "broadcast" % (fmt(shapes[0]), fmt(shapes[1])))
    _check_ranges(shapes, 2, ("lhs_min", "lhs_max", "rhs_min", "rhs_max"))
    _check_dtype(dtypes[0], (_I8,), "lhs")
    _check_dtype(dtypes[1], (_I8,), "rhs")
    if attrs.get("enable_float_output"):
        return (tuple(shapes[0]),), (_F32,)
    return (tuple(shapes[0]), (1,), (1,)), (_mul_out_type(attrs), _F32, _F32)


class _PairOp(Op):
    """quantized_elemwise_add/mul: graph inference gives the four range
    inputs their (1,) shape, and rhs lhs's shape."""
    __slots__ = ()

    def fill_inputs(self, params, in_shapes):
        known = in_shapes[0] if in_shapes[0] is not None else in_shapes[1]
        return [known, known] + [(1,)] * 4


class _MulOp(_PairOp):
    """quantized_elemwise_mul: one float32 output with enable_float_output,
    else (output, min_output, max_output)."""
    __slots__ = ()

    def output_names_for(self, params):
        return ["output"] if params.get("enable_float_output") else list(_OUT3)


@register("_contrib_quantized_elemwise_mul",
          inputs=("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"),
          params=_CALIB + [Param("enable_float_output", p_bool, False,
                                 "Whether to enable float32 output.")],
          infer=_mul_rule, num_outputs=_mul_outputs, num_visible=_mul_outputs,
          output_names=_OUT3)
def _contrib_quantized_elemwise_mul(xp, lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max, out,
                                    min_calib_range=None, max_calib_range=None,
                                    enable_float_output=False):
    """quantized_elemwise_mul(lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max,
    min_calib_range=None, max_calib_range=None, enable_float_output=False):
    the product of two int8 arrays: int32 whose limits stand for the product
    range, int8 over a calibrated range, or the float32 values."""
    l_abs = _absmax(lhs_min[0], lhs_max[0])
    r_abs = _absmax(rhs_min[0], rhs_max[0])
    prod = lhs.astype(np.int32) * rhs.astype(np.int32)
    outs = out if isinstance(out, (list, tuple)) else [out]
    if enable_float_output:
        scale = np.float32((l_abs / 127.5) * (r_abs / 127.5))
        outs[0][...] = prod.astype(np.float32) * scale
        return
    if min_calib_range is not None and max_calib_range is not None:
        o_lo, o_hi = float(min_calib_range), float(max_calib_range)
        o_abs = _absmax(o_lo, o_hi)
        o_scale = 127.5 / o_abs if o_abs else 0.0
        l_scale = 127.5 / l_abs if l_abs else 0.0
        r_scale = 127.5 / r_abs if r_abs else 0.0
        scale = np.float32(o_scale / l_scale / r_scale) if l_scale and r_scale else \
            np.float32(0)
        # MXNet's kernel casts the truncated value to int8: a value past the
        # int8 limits keeps its low 8 bits (x86's conversion), as here
        outs[0][...] = xp.trunc(prod.astype(np.float32) * scale).astype(np.int32).astype(np.int8)
    else:
        # MXNet's QuantizationRangeForS8S8Multiplication: one int32 step is
        # one step of each int8 range
        unit = (l_abs / 127.0) * (r_abs / 127.0)
        o_lo, o_hi = unit * -2147483648.0, unit * 2147483647.0
        outs[0][...] = prod
    outs[1][...] = o_lo
    outs[2][...] = o_hi


_REGISTRY["_contrib_quantized_elemwise_mul"].__class__ = _MulOp
_REGISTRY["_contrib_quantized_elemwise_add"].__class__ = _PairOp


# ------------------------------------------------------------------ concat


def _concat_names(n):
    names = ["arg%d" % i for i in range(n)]
    for i in range(n):
        names += ["arg%d_min" % i, "arg%d_max" % i]
    return names


class _ConcatOp(Op):
    """quantized_concat: ``num_args`` arrays, then a min/max pair for each."""
    __slots__ = ()

    def input_names_for(self, params):
        n = params.get("num_args")
        return _concat_names(n if n is not None else 1)

    def fill_inputs(self, params, in_shapes):
        n = _n_arrays(params.get("num_args"), len(in_shapes))
        return [None] * n + [(1,)] * (2 * n)


def _n_arrays(num_args, n_inputs):
    """How many arrays a call concatenates: ``num_args`` (the NDArray front
    end passes every input and leaves it out: then a third of them)."""
    n = num_args if num_args is not None else n_inputs // 3
    if n < 1 or n_inputs != 3 * n:
        if num_args is None:
            raise OpError("quantized_concat takes the arrays, then a min and a max for each "
                          "(3 inputs per array), got %d inputs" % n_inputs)
        raise OpError("quantized_concat with num_args=%d takes %d inputs (%s), got %d"
                      % (n, 3 * n, ", ".join(_concat_names(n)), n_inputs))
    return n


def _concat_rule(attrs, shapes, dtypes):
    n, dim = _n_arrays(attrs.get("num_args"), len(shapes)), attrs["dim"]
    first = tuple(shapes[0])
    nd = len(first)
    if not -nd <= dim < nd:
        raise OpError("dim %d is out of range for arrays of %d dimensions" % (dim, nd))
    ax = dim % nd
    total = 0
    for i, s in enumerate(shapes[:n]):
        s = tuple(s)
        if len(s) != nd or s[:ax] + s[ax + 1:] != first[:ax] + first[ax + 1:]:
            raise ShapeError("Incompatible input shape: arg%d has shape %s but arg0 has %s "
                             "(they may differ only on dim %d)" % (i, fmt(s), fmt(first), dim))
        total += s[ax]
    _check_ranges(shapes, n, _concat_names(n)[n:])
    for i, d in enumerate(dtypes[:n]):
        _check_dtype(d, (_I8, _U8), "arg%d" % i)
    t = _I8 if any(d == _I8 for d in dtypes[:n]) else _U8
    return (first[:ax] + (total,) + first[ax + 1:], (1,), (1,)), (t, _F32, _F32)


@register("_contrib_quantized_concat", inputs=("*data",), variadic=True, params=[
    Param("num_args", p_int, None, "Number of inputs to be concated."),
    Param("dim", p_int, 1, "the dimension to be concated.")],
    infer=_concat_rule, num_outputs=3, output_names=_OUT3)
def _contrib_quantized_concat(xp, *inputs, out, num_args=None, dim=1):
    """quantized_concat(*data, num_args, dim=1): ``num_args`` int8/uint8
    arrays then a (min, max) pair for each; the output range is
    [min(0, mins), max(0, maxes)] and each input is rescaled to it."""
    num_args = _n_arrays(num_args, len(inputs))
    arrays = inputs[:num_args]
    mins = [float(inputs[num_args + 2 * i][0]) for i in range(num_args)]
    maxs = [float(inputs[num_args + 2 * i + 1][0]) for i in range(num_args)]
    o_lo, o_hi = min([0.0] + mins), max([0.0] + maxs)
    t = out[0].dtype
    o_abs = _absmax(o_lo, o_hi)
    o_scale = np.float32(_RANGE[t] / o_abs) if o_abs else np.float32(0)
    parts = []
    for a, lo, hi in zip(arrays, mins, maxs):
        i_abs = _absmax(lo, hi)
        i_scale = np.float32(_RANGE[a.dtype] / i_abs) if i_abs else np.float32(0)
        if i_scale == o_scale and a.dtype == t:
            parts.append(a)
        else:
            r = np.float32(o_scale / i_scale) if i_scale else np.float32(0)
            parts.append(_saturate(xp, xp.rint(a.astype(np.float32) * r), t))
    out[0][...] = xp.concatenate(parts, axis=dim)
    out[1][...] = o_lo
    out[2][...] = o_hi


_REGISTRY["_contrib_quantized_concat"].__class__ = _ConcatOp


# ----------------------------------------------------------- quantize_asym


def _asym_rule(attrs, shapes, dtypes):
    _check_dtype(dtypes[0], (_F32, _I8, _U8), "data")
    return (tuple(shapes[0]), (1,), (1,)), (_U8, _F32, _F32)


@register("_contrib_quantize_asym", params=_CALIB, infer=_asym_rule, num_outputs=3,
          output_names=("output", "scale", "shift"))
def _contrib_quantize_asym(xp, data, out, min_calib_range=None, max_calib_range=None):
    """quantize_asym(data, min_calib_range=None, max_calib_range=None):
    (uint8 data, scale, shift) with ``q = x * scale + shift`` rounded to nearest,
    ``scale = 255 / (max - min)`` and ``shift = 255 - max * scale`` over the
    calibrated range or the data's; int8 data is shifted by 128 (scale 1),
    uint8 data passes through (scale 1, shift 0)."""
    if data.dtype == _U8:
        out[0][...] = data
        out[1][...] = 1.0
        out[2][...] = 0.0
        return
    if data.dtype == _I8:
        scale, shift = np.float32(1.0), np.float32(128.0)
    else:
        if min_calib_range is not None and max_calib_range is not None:
            lo, hi = np.float32(min_calib_range), np.float32(max_calib_range)
        elif data.size:
            lo, hi = np.float32(data.min()), np.float32(data.max())
        else:
            lo = hi = np.float32(0)
        if hi == lo:
            raise OpError("quantize_asym: the range [%g, %g] is empty; a uint8 scale needs "
                          "min < max" % (lo, hi))
        scale = np.float32(255.0) / (hi - lo)
        shift = np.float32(255.0) - hi * scale
    # rounded to nearest (ties to even), saturated: MXNet's oneDNN kernel
    q = xp.rint(data.astype(np.float32) * scale + shift)
    out[0][...] = _saturate(xp, q, _U8)
    out[1][...] = scale
    out[2][...] = shift


_NAMES = ("_contrib_quantized_elemwise_add", "_contrib_quantized_elemwise_mul",
          "_contrib_quantized_concat", "_contrib_quantize_asym")
set_grads({n: (lambda F, at, ins, outs, og: [None] * len(ins)) for n in _NAMES})
host_kernels(*_NAMES)   # ranges are read as Python numbers
