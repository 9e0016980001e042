"""``mx.np`` functions: ufuncs, reductions and shape manipulation with NumPy
semantics, each pushed to the engine as registry ops (so autograd records
them and they run asynchronously)."""
from __future__ import annotations

import builtins

import numpy as _np

from ..base import MXNetError, integer_types, numeric_types
from ..ndarray.ndarray import NDArray
from ..ops._rules import norm_axis
from ..util import wrap_np_binary_func, wrap_np_unary_func
from .multiarray import (_as_np, _bin, _dtype_arg, _reshape, _to_array, array, invoke,
                         ndarray)

_F32 = _np.dtype(_np.float32)
_BOOL = _np.dtype(_np.bool_)

__all__ = ["logical_not", "negative", "absolute", "abs", "fabs", "sign",
           "square", "sqrt", "cbrt", "reciprocal", "exp", "expm1", "log", "log2", "log10",
           "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
           "arcsinh", "arccosh", "arctanh", "degrees", "radians", "rad2deg", "deg2rad",
           "floor", "ceil", "trunc", "rint", "fix", "around", "round", "round_", "isnan",
           "isinf", "isfinite", "isposinf", "isneginf", "invert", "bitwise_not",
           "sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "argmax",
           "argmin", "all", "any", "cumsum", "clip", "dot", "matmul",
           "tensordot", "inner", "outer", "vdot", "sort", "argsort", "nonzero", "trace", "may_share_memory",
           "shares_memory", "ndim", "size", "square", "einsum", "unique",
           "nan_to_num", "average", "cumprod"]


def _arr(x, like=None):
    if isinstance(x, NDArray):
        return x if isinstance(x, ndarray) else x.as_np_ndarray()
    return _to_array(x, like) if not isinstance(x, numeric_types) else array(x)


def _out_assign(res, out):
    if out is None:
        return res
    out[...] = res
    return out


# ------------------------------------------------------------- unary ufuncs
def _float_in(x):
    x = _arr(x)
    return x.astype(_F32) if x.dtype.kind in "iub" else x


def _unary(name, legacy, float_math=True):
    def fn(x, out=None, **kwargs):
        if isinstance(x, numeric_types):
            return array(getattr(_np, name)(x))
        xin = _float_in(x) if float_math else _arr(x)
        return invoke(legacy, [xin], {}, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "NumPy's ``%s`` elementwise." % name
    return wrap_np_unary_func(fn)


for _n, _l in (("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log2", "log2"),
               ("log10", "log10"), ("log1p", "log1p"), ("sqrt", "sqrt"), ("cbrt", "cbrt"),
               ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "arcsin"),
               ("arccos", "arccos"), ("arctan", "arctan"), ("sinh", "sinh"),
               ("cosh", "cosh"), ("tanh", "tanh"), ("arcsinh", "arcsinh"),
               ("arccosh", "arccosh"), ("arctanh", "arctanh"), ("degrees", "degrees"),
               ("radians", "radians"), ("reciprocal", "reciprocal")):
    globals()[_n] = _unary(_n, _l)
rad2deg = _unary("rad2deg", "degrees")
deg2rad = _unary("deg2rad", "radians")
for _n, _l in (("negative", "negative"), ("absolute", "abs"), ("sign", "sign"),
               ("square", "square"), ("floor", "floor"), ("ceil", "ceil"),
               ("trunc", "trunc"), ("rint", "rint"), ("fix", "fix")):
    globals()[_n] = _unary(_n, _l, float_math=False)
abs = absolute  # noqa: A001 - NumPy's name
fabs = _unary("fabs", "abs")


def logical_not(x, out=None, **kwargs):
    """Elementwise NOT: a bool array."""
    return _bin("equal", _arr(x), 0, out=out)


def invert(x, out=None, **kwargs):
    """Bitwise NOT (logical NOT for bool arrays)."""
    x = _arr(x)
    if x.dtype == _BOOL:
        return logical_not(x, out=out)
    if x.dtype.kind not in "iu":
        raise TypeError("ufunc 'invert' not supported for the input types")
    return _bin("subtract", -1, x, out=out)


bitwise_not = invert


def _isclass(fname):
    def fn(x, out=None, **kwargs):
        x = _arr(x)
        if x.dtype.kind != "f":
            return _out_assign(zeros(x.shape, dtype=_BOOL, ctx=x.context)
                               if fname != "isfinite" else
                               _bin("equal", x, x), out)
        if fname == "isnan":
            return _bin(x, x, out=out)
        if fname == "isinf":
            return _bin("equal", absolute(x), _np.inf, out=out)
        if fname == "isposinf":
            return _bin("equal", x, _np.inf, out=out)
        if fname == "isneginf":
            return _bin("equal", x, -_np.inf, out=out)
        return _bin("less", absolute(x), _np.inf, out=out)
    fn.__name__ = fname
    fn.__doc__ = "NumPy's ``%s``: a bool array." % fname
    return fn


isnan = _isclass("isnan")
isinf = _isclass("isinf")
isfinite = _isclass("isfinite")
isposinf = _isclass("isposinf")
isneginf = _isclass("isneginf")


def around(x, decimals=0, out=None, **kwargs):
    """Round to ``decimals`` decimals (half to even, as NumPy)."""
    x = _arr(x)
    if decimals == 0:
        return invoke("rint", [x], {}, out) if x.dtype.kind == "f" else _out_assign(x.copy(), out)
    f = 10.0 ** decimals
    return _out_assign(invoke("rint", [x * f], {}) / f, out)


round = around  # noqa: A001
round_ = around


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """NaN -> ``nan``, +-inf -> the dtype's largest/smallest finite values."""
    x = _arr(x)
    if x.dtype.kind != "f":
        return x.copy() if copy else x
    fi = _np.finfo(x.dtype)
    res = where(isnan(x), nan, x)
    res = where(isposinf(res), fi.max if posinf is None else posinf, res)
    res = where(isneginf(res), fi.min if neginf is None else neginf, res)
    if not copy:
        x[...] = res
        return x
    return res


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



def clip(a, a_min, a_max, out=None):
    """Values of ``a`` limited to [a_min, a_max]."""
    if a_min is None and a_max is None:
        raise ValueError("array_clip: must set either max or min")
    a = _arr(a)
    res = a
    if a_min is not None:
        res = maximum(res, a_min)
    if a_max is not None:
        res = minimum(res, a_max)
    return _out_assign(res, out)



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



def may_share_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` are views of one buffer whose ranges overlap."""
    if a._st is not b._st:
        return False
    oa, ob = a._off or 0, b._off or 0
    return oa < ob + b.size and ob < oa + a.size and a.size > 0 and b.size > 0


shares_memory = may_share_memory


def ndim(a):
    """Number of dimensions."""
    return _arr(a).ndim if isinstance(a, NDArray) else _np.ndim(a)


def size(a, axis=None):
    """Number of elements (along ``axis``)."""
    if axis is None:
        return a.size if isinstance(a, NDArray) else _np.size(a)
    return a.shape[axis]


_ = _as_np


# front functions (one definition each, in _f_*.py) that the functions above call
from functools import partial as _partial  # noqa: E402

from . import _f_creation as _fc, _f_shape as _fs  # noqa: E402
from ._front import ND as _ND  # noqa: E402

zeros = _partial(_fc.zeros, _ND)
broadcast_to = _partial(_fs.broadcast_to, _ND)
transpose = _partial(_fs.transpose, _ND)
where = _partial(_fs.where, _ND)
take = _partial(_fs.take, _ND)
