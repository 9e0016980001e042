"""ONNX -> aiond translations of the integer operators: QuantizeLinear,
DequantizeLinear and DynamicQuantizeLinear (the QDQ form of quantized models,
computed in float32 as onnxruntime's reference does), and the bitwise ones."""
from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._graph import Const
from ._ops import _norm_axis, op

_RANGE = {np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max)
          for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)}


def _per_axis(imp, v, x, at, what):
    """``v`` (a scale or zero point) shaped to broadcast against ``x``: a
    scalar as is, a vector along ``axis`` (ONNX's per-axis quantization)."""
    if at.get("block_size"):
        imp.unsupported("%s with block_size (blocked quantization)" % what)
    V = imp.sym(v)
    a, _ = imp.partial_shapes(v)
    if a is None or len(a) == 0 or (len(a) == 1 and a[0] == 1):
        return V
    r = imp.rank(x, what + "'s input")
    ax = _norm_axis(at.get("axis", 1), r)
    return sym.reshape(V, shape=tuple(-1 if k == ax else 1 for k in range(r)))


def _zero_point(ins, at):
    zp = ins[2] if len(ins) > 2 else None
    if zp is None:
        from onnx import helper
        dt = helper.tensor_dtype_to_np_dtype(at["output_dtype"]) if at.get("output_dtype") \
            else np.dtype(np.uint8)
        zp = Const(np.zeros((), dt))
    return zp


@op("QuantizeLinear")
def _quantize(imp, node, ins, at):
    x, scale = ins[0], ins[1]
    zp = _zero_point(ins, at)
    dt = imp.dtype(zp) or np.dtype(np.uint8)
    if dt not in _RANGE:
        imp.unsupported("QuantizeLinear to %s (aiond imports 8, 16 and 32-bit integers)" % dt)
    lo, hi = _RANGE[dt]
    X = sym.Cast(imp.sym(x), dtype="float32")
    S = sym.Cast(_per_axis(imp, scale, x, at, "QuantizeLinear"), dtype="float32")
    Z = sym.Cast(_per_axis(imp, zp, x, at, "QuantizeLinear"), dtype="float32")
    # round half to even (NumPy's rint), then saturate
    q = sym.np.rint(sym.broadcast_div(X, S).as_np_ndarray()).as_nd_ndarray()
    q = sym.clip(sym.broadcast_add(q, Z), float(lo), float(hi))
    return sym.Cast(q, dtype=dt.name)


@op("DequantizeLinear")
def _dequantize(imp, node, ins, at):
    x, scale = ins[0], ins[1]
    zp = ins[2] if len(ins) > 2 else None
    sdt = (imp.dtype(scale) or np.dtype(np.float32)).name
    X = sym.Cast(imp.sym(x), dtype="float64" if imp.dtype(x) == np.int32 else "float32")
    if zp is not None:
        X = sym.broadcast_sub(X, sym.Cast(_per_axis(imp, zp, x, at, "DequantizeLinear"),
                                          dtype="float64" if imp.dtype(x) == np.int32
                                          else "float32"))
    X = sym.Cast(X, dtype="float32")
    S = sym.Cast(_per_axis(imp, scale, x, at, "DequantizeLinear"), dtype="float32")
    return sym.Cast(sym.broadcast_mul(X, S), dtype=sdt)


@op("DynamicQuantizeLinear")
def _dynamic_quantize(imp, node, ins, at):
    X = sym.Cast(imp.sym(ins[0]), dtype="float32")
    flat = sym.reshape(X, shape=(-1,))
    zero = sym.zeros((1,))
    hi = sym.broadcast_maximum(sym.max(flat, axis=0, keepdims=True), zero)
    lo = sym.broadcast_minimum(sym.min(flat, axis=0, keepdims=True), zero)
    scale = (hi - lo) / 255.0
    safe = sym.where(scale == 0, sym.ones_like(scale), scale)
    rint = lambda v: sym.np.rint(v.as_np_ndarray()).as_nd_ndarray()   # noqa: E731
    zp = sym.clip(rint(0 - lo / safe), 0.0, 255.0)
    q = sym.clip(sym.broadcast_add(rint(sym.broadcast_div(X, safe)), zp), 0.0, 255.0)
    return [sym.Cast(q, dtype="uint8"), sym.reshape(scale, shape=()),
            sym.Cast(sym.reshape(zp, shape=()), dtype="uint8")]


def _bitwise(fn):
    def tr(imp, node, ins, at):
        xs = [imp.sym(v).as_np_ndarray() for v in ins]
        return fn(*xs).as_nd_ndarray()
    return tr


for _name, _fn in (("BitwiseAnd", lambda a, b: sym.np.bitwise_and(a, b)),
                   ("BitwiseOr", lambda a, b: sym.np.bitwise_or(a, b)),
                   ("BitwiseXor", lambda a, b: sym.np.bitwise_xor(a, b)),
                   ("BitwiseNot", lambda a: sym.np.bitwise_not(a))):
    op(_name)(_bitwise(_fn))


@op("BitShift")
def _bit_shift(imp, node, ins, at):
    x, y = ins
    dt = imp.dtype(x) or np.dtype(np.uint32)
    if dt.itemsize > 4:
        imp.unsupported("BitShift of %s (aiond shifts integers of up to 32 bits exactly)" % dt)
    X, Y = sym.Cast(imp.sym(x), dtype="float64"), sym.Cast(imp.sym(y), dtype="float64")
    p = sym.broadcast_power(sym.full((1,), 2.0, dtype="float64"), Y)
    if at["direction"] == "LEFT":
        # the bits shifted past the type's width are lost: modulo 2**bits
        r = sym.broadcast_mul(X, p)
        r = r - sym.floor(r / float(2 ** (8 * dt.itemsize))) * float(2 ** (8 * dt.itemsize))
    else:
        r = sym.floor(sym.broadcast_div(X, p))
    return sym.Cast(r, dtype=dt.name)
