"""ONNX -> aiond translations of the newer indexing operators: ScatterElements
(and its deprecated name Scatter), EyeLike, ReverseSequence, CumProd and
Unique (value-shaped, as NonZero is)."""
from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._graph import Const
from ._ops import _norm_axis, op
from ._ops_tensor import element_coords, scatter_into


def _np(x):
    return x.as_np_ndarray()


@op("ScatterElements", "Scatter")
def _scatter_elements(imp, node, ins, at):
    data, idx, upd = ins
    red = at.get("reduction", "none")
    if red not in ("none", "add"):
        imp.unsupported("ScatterElements with reduction=%r (aiond imports 'none' and 'add')"
                        % red)
    shape = imp.static_shape(data, "ScatterElements' data")
    r = len(shape)
    axis = _norm_axis(at.get("axis", 0), r)
    I = sym.Cast(imp.sym(idx), dtype="int64")
    I = I + (I < 0) * shape[axis]       # ONNX counts negative indices from the end
    return scatter_into(imp.sym(data), element_coords(I, r, axis), imp.sym(upd), shape, red)


@op("EyeLike")
def _eye_like(imp, node, ins, at):
    n, m = imp.static_shape(ins[0], "EyeLike's input")
    from onnx import helper
    dt = helper.tensor_dtype_to_np_dtype(at["dtype"]) if "dtype" in at else \
        (imp.dtype(ins[0]) or np.dtype(np.float32))
    eye = imp.sym(Const(np.eye(n, m, int(at.get("k", 0)), dtype=dt)))
    # tied to the input (same shape), so the graph keeps it as an input
    return sym.broadcast_like(eye, imp.sym(ins[0]))


@op("ReverseSequence")
def _reverse_sequence(imp, node, ins, at):
    x, lens = ins
    b, t = at.get("batch_axis", 1), at.get("time_axis", 0)
    if {b, t} != {0, 1}:
        imp.fail("batch_axis and time_axis must be 0 and 1, got %d and %d" % (b, t))
    X = imp.sym(x)
    dt = (imp.dtype(x) or np.dtype(np.float32)).name
    if dt not in ("float16", "float32", "float64"):
        imp.unsupported("ReverseSequence of %s data (MXNet's SequenceReverse takes floats)" % dt)
    L = sym.Cast(imp.sym(lens), dtype=dt)
    if t == 1:      # MXNet's SequenceReverse wants (time, batch, ...)
        X = sym.swapaxes(X, dim1=0, dim2=1)
    Y = sym.SequenceReverse(X, L, use_sequence_length=True, axis=0)
    return sym.swapaxes(Y, dim1=0, dim2=1) if t == 1 else Y


@op("CumProd")
def _cumprod(imp, node, ins, at):
    r = imp.rank(ins[0], "CumProd's input")
    ax = _norm_axis(int(imp.const(ins[1], "CumProd's axis").reshape(())), r)
    X = imp.sym(ins[0])
    rev = at.get("reverse", 0)
    if rev:
        X = sym.flip(X, axis=ax)
    if at.get("exclusive", 0):
        # the product of the elements before each: a 1 first, the last one dropped
        one = sym.ones_like(sym.slice_axis(X, axis=ax, begin=0, end=1))
        n = imp.partial_shapes(ins[0])[0][ax]
        X = one if n == 1 else sym.concat(one, sym.slice_axis(X, axis=ax, begin=0, end=-1),
                                          dim=ax)
    Y = sym.np.cumprod(_np(X), axis=ax).as_nd_ndarray()
    return sym.flip(Y, axis=ax) if rev else Y


@op("Unique")
def _unique(imp, node, ins, at):
    if not at.get("sorted", 1):
        imp.unsupported("Unique with sorted=0 (first-occurrence order)")
    axis = at.get("axis")
    X = _np(imp.sym(ins[0]))
    y, idx, inv, cnt = sym.np.unique(X, return_index=True, return_inverse=True,
                                     return_counts=True, axis=axis)
    return [v.as_nd_ndarray() for v in (y, idx, inv, cnt)]
