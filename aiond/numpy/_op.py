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
                         ndarray, zeros)

_F32 = _np.dtype(_np.float32)
_BOOL = _np.dtype(_np.bool_)

__all__ = ["logical_not", "negative", "absolute", "abs", "fabs", "sign", "square", "sqrt",
           "cbrt", "reciprocal", "exp", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
           "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
           "arctanh", "degrees", "radians", "rad2deg", "deg2rad", "floor", "ceil", "trunc",
           "rint", "fix", "around", "round", "round_", "isnan", "isinf", "isfinite",
           "isposinf", "isneginf", "invert", "bitwise_not", "reshape", "ravel", "transpose",
           "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to", "concatenate",
           "stack", "vstack", "hstack", "dstack", "row_stack", "column_stack", "split",
           "array_split", "tile", "repeat", "flip", "flipud", "fliplr", "clip", "where",
           "take", "atleast_1d", "atleast_2d", "atleast_3d", "diag", "copy",
           "may_share_memory", "shares_memory", "ndim", "size", "square", "tril", "triu",
           "nan_to_num"]


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


# ------------------------------------------------------------- shapes
def reshape(a, newshape, order="C"):
    """``a`` with a new shape (NumPy's rules; a view)."""
    if order != "C":
        raise NotImplementedError("reshape only supports order='C'")
    return _reshape(_arr(a), newshape)


def ravel(x, order="C"):
    """The flattened array."""
    return reshape(x, (-1,), order)


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed by default)."""
    a = _arr(a)
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    axes = tuple(norm_axis(int(x), a.ndim) for x in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    if a.ndim < 2:
        return a.copy() if False else _reshape(a, a.shape)
    return invoke("transpose", [a], {"axes": axes})


def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged."""
    a = _arr(a)
    axes = list(range(a.ndim))
    i, j = norm_axis(axis1, a.ndim), norm_axis(axis2, a.ndim)
    axes[i], axes[j] = axes[j], axes[i]
    return transpose(a, axes)


def moveaxis(a, source, destination):
    """``a`` with axes moved to new positions."""
    a = _arr(a)
    src = [norm_axis(s, a.ndim) for s in ((source,) if isinstance(source, integer_types) else source)]
    dst = [norm_axis(d, a.ndim) for d in ((destination,) if isinstance(destination, integer_types)
                                          else destination)]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a, axis):
    """``a`` with a new axis of size 1 at ``axis``."""
    a = _arr(a)
    axis = norm_axis(axis, a.ndim + 1)
    return _reshape(a, a.shape[:axis] + (1,) + a.shape[axis:])


def squeeze(x, axis=None):
    """``x`` without its size-1 axes (or only those in ``axis``)."""
    x = _arr(x)
    if axis is None:
        return _reshape(x, tuple(d for d in x.shape if d != 1))
    axes = (axis,) if isinstance(axis, integer_types) else tuple(axis)
    axes = {norm_axis(a, x.ndim) for a in axes}
    for a in axes:
        if x.shape[a] != 1:
            raise MXNetError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    return _reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def broadcast_to(array, shape):  # noqa: F811 - NumPy's argument name
    """``array`` broadcast to ``shape``."""
    a = _arr(array)
    shape = tuple(shape) if not isinstance(shape, integer_types) else (shape,)
    if a.shape == shape:
        return a
    if a.ndim == 0:
        a = _reshape(a, (1,) * len(shape) if shape else ())
    if a.ndim < len(shape):
        a = _reshape(a, (1,) * (len(shape) - a.ndim) + a.shape)
    try:
        _np.broadcast_shapes(a.shape, shape)
        if _np.broadcast_shapes(a.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError("operands could not be broadcast together with remapped shapes "
                         "[original->remapped]: %s and requested shape %s"
                         % (array.shape, shape)) from None
    if 0 in shape:
        return zeros(shape, dtype=a.dtype, ctx=a.context)
    return invoke("broadcast_to", [a], {"shape": shape})


def _arrays(seq):
    arrs = [_arr(x) for x in seq]
    if not arrs:
        raise ValueError("need at least one array to concatenate")
    dt = arrs[0].dtype
    for x in arrs[1:]:
        from ..ops.np_ops import promote
        dt = promote(dt, x.dtype)
    return [x if x.dtype == dt else x.astype(dt) for x in arrs]


def concatenate(seq, axis=0, out=None):
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    arrs = _arrays(seq)
    if axis is None:
        arrs = [_reshape(x, (-1,)) for x in arrs]
        axis = 0
    nd = arrs[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = norm_axis(axis, nd)
    for x in arrs:
        if x.ndim != nd:
            raise ValueError("all the input arrays must have same number of dimensions")
    arrs = [x for x in arrs if x.shape[axis] != 0] or arrs[:1]
    if len(arrs) == 1:
        return _out_assign(arrs[0].copy(), out)
    return invoke("concat", arrs, {"dim": axis, "num_args": len(arrs)}, out) \
        if "num_args" in _concat_params() else invoke("concat", arrs, {"dim": axis}, out)


def _concat_params():
    from ..ops.registry import get
    return get("concat").pindex


def stack(arrays, axis=0, out=None):
    """Join arrays along a new axis."""
    arrs = _arrays(arrays)
    shape = arrs[0].shape
    for x in arrs:
        if x.shape != shape:
            raise ValueError("all input arrays must have the same shape")
    axis = norm_axis(axis, len(shape) + 1)
    return concatenate([expand_dims(x, axis) for x in arrs], axis=axis, out=out)


def vstack(arrays, out=None):
    """Stack arrays row-wise."""
    return concatenate([atleast_2d(x) for x in arrays], axis=0, out=out)


row_stack = vstack


def hstack(arrays):
    """Stack arrays column-wise."""
    arrs = [atleast_1d(x) for x in arrays]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def dstack(arrays):
    """Stack arrays along the third axis."""
    return concatenate([atleast_3d(x) for x in arrays], axis=2)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array."""
    arrs = []
    for x in tup:
        x = _arr(x)
        arrs.append(_reshape(x, (x.shape[0], 1)) if x.ndim == 1 else x)
    return concatenate(arrs, axis=1)


def atleast_1d(*arys):
    res = [(_reshape(_arr(x), (1,)) if _arr(x).ndim == 0 else _arr(x)) for x in arys]
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    res = []
    for x in arys:
        x = _arr(x)
        res.append(_reshape(x, (1,) * (2 - x.ndim) + x.shape) if x.ndim < 2 else x)
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    res = []
    for x in arys:
        x = _arr(x)
        if x.ndim == 0:
            x = _reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = _reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = _reshape(x, x.shape + (1,))
        res.append(x)
    return res[0] if len(res) == 1 else res


def _split(ary, indices_or_sections, axis, strict):
    a = _arr(ary)
    axis = norm_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, integer_types):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % k:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), n)
                        for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        key = [slice(None)] * a.ndim
        key[axis] = slice(lo, builtins.max(lo, hi))
        out.append(a[tuple(key)])
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (or at the given indices) along ``axis``."""
    return _split(ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """Split into sections that may differ in size by one."""
    return _split(ary, indices_or_sections, axis, False)


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis."""
    a = _arr(A)
    reps = (reps,) if isinstance(reps, integer_types) else tuple(reps)
    if a.ndim == 0:
        a = _reshape(a, (1,))
    if 0 in reps or 0 in a.shape:
        shp = tuple(d * r for d, r in zip((1,) * (len(reps) - a.ndim) + a.shape,
                                          (1,) * (a.ndim - len(reps)) + reps))
        return zeros(shp, dtype=a.dtype, ctx=a.context)
    return invoke("tile", [a], {"reps": reps})


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times (along ``axis``, or flattened)."""
    a = _arr(a)
    if axis is None:
        a = _reshape(a, (-1,))
        axis = 0
    return invoke("repeat", [a], {"repeats": int(repeats), "axis": norm_axis(axis, a.ndim)})


def flip(m, axis=None, out=None):
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    m = _arr(m)
    axes = tuple(range(m.ndim)) if axis is None else \
        ((axis,) if isinstance(axis, integer_types) else tuple(axis))
    if m.ndim == 0:
        return _out_assign(m.copy(), out)
    return invoke("reverse", [m], {"axis": tuple(norm_axis(x, m.ndim) for x in axes)}, out)


def flipud(m):
    return flip(m, 0)


def fliplr(m):
    return flip(m, 1)


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


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``."""
    if x is None and y is None:
        from . import nonzero
        return nonzero(condition)
    cond = _arr(condition)
    ref = x if isinstance(x, NDArray) else y if isinstance(y, NDArray) else None
    ctx = cond.context if ref is None else ref.context
    if isinstance(x, numeric_types) and isinstance(y, numeric_types):
        dt = _F32 if isinstance(x, float) or isinstance(y, float) else _np.dtype(_np.int64)
        xa, ya = array(x, dtype=dt, ctx=ctx), array(y, dtype=dt, ctx=ctx)
    else:
        xa = _arr(x) if not isinstance(x, numeric_types) else None
        ya = _arr(y) if not isinstance(y, numeric_types) else None
        dt = xa.dtype if xa is not None else ya.dtype
        if xa is not None and ya is not None:
            from ..ops.np_ops import promote
            dt = promote(xa.dtype, ya.dtype)
        xa = array(x, dtype=dt, ctx=ctx) if xa is None else xa.astype(dt, copy=False)
        ya = array(y, dtype=dt, ctx=ctx) if ya is None else ya.astype(dt, copy=False)
    shape = _np.broadcast_shapes(cond.shape, xa.shape, ya.shape)
    c = broadcast_to(cond, shape)
    c = c.astype(dt) if c.dtype != dt else c
    return invoke("where", [c, broadcast_to(xa, shape), broadcast_to(ya, shape)], {})


def take(a, indices, axis=None, mode="raise", out=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by default)."""
    if mode not in ("raise", "wrap", "clip"):
        raise NotImplementedError("take: mode=%r is not supported" % mode)
    a = _arr(a)
    idx = _arr(indices) if not isinstance(indices, integer_types) else array(indices,
                                                                             dtype=_np.int64)
    if axis is None:
        a = _reshape(a, (-1,))
        axis = 0
    axis = norm_axis(axis, a.ndim)
    if mode == "raise":
        host = idx.asnumpy()
        n = a.shape[axis]
        if host.size and (host.max() >= n or host.min() < -n):
            raise IndexError("index out of bounds for axis %d with size %d" % (axis, n))
        if host.size and host.min() < 0:
            idx = array(host % n, dtype=host.dtype, ctx=a.context)
        mode = "clip"
    return invoke("take", [a, idx], {"axis": axis, "mode": mode}, out)


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with ``v`` on it."""
    v = _arr(v)
    return invoke("diag", [v], {"k": k})


def tril(m, k=0):
    """Lower triangle of ``m``."""
    m = _arr(m)
    n, c = m.shape[-2:]
    mask = array(_np.tril(_np.ones((n, c), dtype=bool), k), ctx=m.context)
    return where(mask, m, 0)


def triu(m, k=0):
    """Upper triangle of ``m``."""
    m = _arr(m)
    n, c = m.shape[-2:]
    mask = array(_np.triu(_np.ones((n, c), dtype=bool), k), ctx=m.context)
    return where(mask, m, 0)


def copy(a):
    """A copy of ``a``."""
    return _arr(a).copy()


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
