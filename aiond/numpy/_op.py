"""``mx.np`` functions: ufuncs, reductions and shape manipulation with NumPy
semantics, each pushed to the engine as registry ops (so autograd records
them and they run asynchronously)."""
from __future__ import annotations

import builtins

import numpy as _np

from ..base import MXNetError, integer_types, numeric_types
from ..ndarray.ndarray import NDArray
from ..ops._rules import norm_axis
from .multiarray import (_as_np, _bin, _dtype_arg, _reshape, _to_array, array, invoke,
                         ndarray)

_F32 = _np.dtype(_np.float32)
_BOOL = _np.dtype(_np.bool_)

__all__ = ["sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin",
           "all", "any", "cumsum", "dot", "matmul", "tensordot", "inner", "outer", "vdot", "sort",
           "argsort", "nonzero", "trace", "ndim", "size", "einsum", "unique", "average", "cumprod"]


def _arr(x, like=None):
    if isinstance(x, NDArray):
        return x if isinstance(x, ndarray) else x.as_np_ndarray()
    return _to_array(x, like) if not isinstance(x, numeric_types) else array(x)


def _out_assign(res, out):
    if out is None:
        return res
    out[...] = res
    return out


# ------------------------------------------------------------- reductions
def _axis(axis):
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _reduce(opname, a, axis, dtype, out, keepdims, with_dtype=True):
    a = _arr(a)
    attrs = {"axis": _axis(axis), "keepdims": bool(keepdims)}
    if with_dtype:
        attrs["dtype"] = None if dtype is None else _dtype_arg(dtype)
    return invoke(opname, [a], attrs, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Sum over ``axis`` (all axes by default: a 0-d result)."""
    if initial is not None or where is not None:
        raise NotImplementedError("sum: initial and where are not supported")
    return _reduce("_np_sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """Product over ``axis``."""
    if initial is not None:
        raise NotImplementedError("prod: initial is not supported")
    return _reduce("_np_prod", a, axis, dtype, out, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean over ``axis`` (float32 for integer input)."""
    return _reduce("_npi_mean", a, axis, dtype, out, keepdims)


def max(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis``."""
    return _reduce("_np_max", a, axis, None, out, keepdims, with_dtype=False)


def min(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``."""
    return _reduce("_np_min", a, axis, None, out, keepdims, with_dtype=False)


amax = max
amin = min


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over ``axis`` (``ddof`` delta degrees of freedom)."""
    a = _arr(a)
    x = a if a.dtype.kind == "f" else a.astype(_F32 if dtype is None else dtype)
    m = mean(x, axis=axis, keepdims=True)
    d = x - m
    n = _count(a.shape, axis)
    res = sum(d * d, axis=axis, keepdims=keepdims) / builtins.max(n - ddof, 0)
    if dtype is not None:
        res = res.astype(dtype)
    return _out_assign(res, out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis``."""
    return _out_assign(sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof,  # noqa: F821
                                keepdims=keepdims)), out)


def _count(shape, axis):
    if axis is None:
        return int(_np.prod(shape))
    axes = (axis,) if isinstance(axis, integer_types) else tuple(axis)
    n = 1
    for ax in axes:
        n *= shape[norm_axis(ax, len(shape))]
    return n


def average(a, axis=None, weights=None, returned=False, out=None):
    """Weighted average over ``axis``."""
    a = _arr(a)
    if weights is None:
        avg = mean(a, axis=axis)
        scl = array(_count(a.shape, axis), dtype=avg.dtype)
    else:
        w = _arr(weights)
        if w.shape != a.shape:
            if axis is None or w.ndim != 1:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            shp = [1] * a.ndim
            shp[norm_axis(axis, a.ndim)] = w.shape[0]
            w = _reshape(w, tuple(shp))
        scl = sum(broadcast_to(w, a.shape), axis=axis)
        avg = sum(a * w, axis=axis) / scl
    avg = _out_assign(avg, out)
    return (avg, scl) if returned else avg


def _arg(opname, a, axis, out):
    a = _arr(a)
    if axis is None:
        if a.size == 0:
            raise ValueError("attempt to get %s of an empty sequence" % opname)
        r = invoke(opname, [_reshape(a, (-1,))], {"axis": 0, "keepdims": False})
        r = _reshape(r, ())
    else:
        r = invoke(opname, [a], {"axis": norm_axis(axis, a.ndim), "keepdims": False})
    return _out_assign(r.astype(_np.int64), out)


def argmax(a, axis=None, out=None):
    """Indices (int64) of the maxima along ``axis`` (of the flattened array by default)."""
    return _arg("argmax", a, axis, out)


def argmin(a, axis=None, out=None):
    """Indices (int64) of the minima along ``axis``."""
    return _arg("argmin", a, axis, out)


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether every element along ``axis`` is true: a bool array."""
    a = _arr(a)
    nz = _bin("not_equal", a, 0).astype(_np.int64)
    return _out_assign(_bin("equal", min(nz, axis=axis, keepdims=keepdims), 1)
                       if a.size else _bin("equal", sum(nz, axis=axis, keepdims=keepdims), 0),
                       out)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001
    """Whether some element along ``axis`` is true: a bool array."""
    a = _arr(a)
    nz = _bin("not_equal", a, 0).astype(_np.int64)
    return _out_assign(_bin("greater", sum(nz, axis=axis, keepdims=keepdims), 0), out)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array by default)."""
    a = _arr(a)
    return _cum(_np.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis``."""
    return _cum(_np.cumprod, _arr(a), axis, dtype, out)


def _cum(fn, a, axis, dtype, out):
    # computed by a host read (no registry op yet); not differentiable
    v = fn(a.asnumpy(), axis=axis, dtype=None if dtype is None else _dtype_arg(dtype))
    return _out_assign(array(v, dtype=v.dtype, ctx=a.context), out)


# ------------------------------------------------------------- shapes





def dot(a, b, out=None):
    """NumPy's dot: inner product of 1-D arrays, matrix product of 2-D ones,
    a sum over the last axis of ``a`` and the second-to-last of ``b`` otherwise."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b, out=out)
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise MXNetError("dot: shapes %s and %s not aligned" % (a.shape, b.shape))
        return _out_assign(sum(a * b), out)
    if b.ndim <= 2:
        bb = b if b.ndim == 2 else _reshape(b, (b.shape[0], 1))
        aa = _reshape(a, (-1, a.shape[-1])) if a.ndim != 2 else a
        if aa.shape[-1] != bb.shape[0]:
            raise MXNetError("dot: shapes %s and %s not aligned" % (a.shape, b.shape))
        r = invoke("dot", [aa, bb], {})
        shp = a.shape[:-1] + (b.shape[1:] if b.ndim == 2 else ())
        return _out_assign(_reshape(r, shp), out)
    return _out_assign(tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2])), out)


def matmul(a, b, out=None, **kwargs):
    """NumPy's matmul: matrix products broadcast over leading (batch) axes."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        raise MXNetError("matmul: Input operand does not have enough dimensions")
    if a.ndim <= 2 and b.ndim <= 2:
        return dot(a, b, out=out)
    a2 = _reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = _reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    batch = _np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    if a2.shape[-1] != b2.shape[-2]:
        raise MXNetError("matmul: shapes %s and %s not aligned" % (a.shape, b.shape))
    a3 = _reshape(broadcast_to(a2, batch + a2.shape[-2:]), (-1,) + a2.shape[-2:])
    b3 = _reshape(broadcast_to(b2, batch + b2.shape[-2:]), (-1,) + b2.shape[-2:])
    r = invoke("batch_dot", [a3, b3], {})
    shp = batch + (a2.shape[-2], b2.shape[-1])
    if a.ndim == 1:
        shp = shp[:-2] + shp[-1:]
    if b.ndim == 1:
        shp = shp[:-1]
    return _out_assign(_reshape(r, shp), out)


def tensordot(a, b, axes=2):
    """Sum products over the given axes of ``a`` and ``b``."""
    a, b = _arr(a), _arr(b)
    if isinstance(axes, integer_types):
        ax_a = list(range(a.ndim - axes, a.ndim))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, integer_types) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, integer_types) else list(ax_b)
    ax_a = [norm_axis(x, a.ndim) for x in ax_a]
    ax_b = [norm_axis(x, b.ndim) for x in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    k = int(_np.prod([a.shape[i] for i in ax_a]))
    at = _reshape(transpose(a, free_a + ax_a), (-1, k))
    bt = _reshape(transpose(b, ax_b + free_b), (k, -1))
    r = invoke("dot", [at, bt], {})
    return _reshape(r, tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


def inner(a, b):
    """Inner product over the last axes."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a, b):
    """Outer product of two flattened arrays."""
    a, b = _reshape(_arr(a), (-1,)), _reshape(_arr(b), (-1,))
    return _reshape(a, (-1, 1)) * _reshape(b, (1, -1))


def vdot(a, b):
    """Dot product of two flattened arrays."""
    return dot(_reshape(_arr(a), (-1,)), _reshape(_arr(b), (-1,)))


def einsum(*operands, **kwargs):
    """Einstein summation (computed by a host read; not differentiable here)."""
    subscripts, arrs = operands[0], operands[1:]
    hosts = [x.asnumpy() if isinstance(x, NDArray) else x for x in arrs]
    r = _np.einsum(subscripts, *hosts)
    ctx = next((x.context for x in arrs if isinstance(x, NDArray)), None)
    return _out_assign(array(r, dtype=r.dtype, ctx=ctx), kwargs.get("out"))



def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy of ``a`` along ``axis``."""
    a = _arr(a)
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    return invoke("sort", [a], {"axis": norm_axis(axis, a.ndim), "is_ascend": True})


def argsort(a, axis=-1, kind=None, order=None):
    """Indices (int64) that sort ``a`` along ``axis``."""
    a = _arr(a)
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    return invoke("argsort", [a], {"axis": norm_axis(axis, a.ndim), "is_ascend": True,
                                   "dtype": _np.dtype(_np.int64)})


def nonzero(a):
    """Indices of the non-zero elements, one int64 array per axis (a host read)."""
    a = _arr(a)
    idx = _np.nonzero(a.asnumpy())
    return tuple(array(i, dtype=_np.int64, ctx=a.context) for i in idx)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique elements (a host read)."""
    a = _arr(ar)
    res = _np.unique(a.asnumpy(), return_index, return_inverse, return_counts, axis)
    if isinstance(res, tuple):
        return tuple(array(r, dtype=r.dtype, ctx=a.context) for r in res)
    return array(res, dtype=res.dtype, ctx=a.context)



def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal."""
    a = _arr(a)
    return _out_assign(sum(invoke("diag", [a], {"k": offset, "axis1": axis1, "axis2": axis2}),
                           axis=-1), out)



def ndim(a):
    """Number of dimensions."""
    return _arr(a).ndim if isinstance(a, NDArray) else _np.ndim(a)


def size(a, axis=None):
    """Number of elements (along ``axis``)."""
    if axis is None:
        return a.size if isinstance(a, NDArray) else _np.size(a)
    return a.shape[axis]


_ = _as_np


# front functions (one definition each, in _f_*.py) that the nd-only functions above call
from . import _fronts  # noqa: E402,F401  (registers them)
from ._front import ND as _ND, bind as _bind, table as _table  # noqa: E402
for _n in ("sqrt", "multiply", "absolute", "zeros", "broadcast_to", "transpose", "where",
           "take"):
    globals()[_n] = _bind(_ND, _table()[_n], _n, __name__)
