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
                         ndarray, zeros)

_F32 = _np.dtype(_np.float32)
_BOOL = _np.dtype(_np.bool_)

__all__ = ["sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "argmax",
           "argmin", "all", "any", "cumsum", "reshape", "ravel", "transpose", "swapaxes",
           "moveaxis", "expand_dims", "squeeze", "broadcast_to", "concatenate", "stack",
           "vstack", "hstack", "dstack", "row_stack", "column_stack", "split", "array_split",
           "tile", "repeat", "flip", "flipud", "fliplr", "where", "dot", "matmul",
           "tensordot", "inner", "outer", "vdot", "take", "sort", "argsort", "nonzero",
           "atleast_1d", "atleast_2d", "atleast_3d", "diag", "trace", "copy",
           "ndim", "size", "einsum", "unique", "tril", "triu",
           "average", "cumprod"]


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


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``."""
    if x is None and y is None:
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


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with ``v`` on it."""
    v = _arr(v)
    return invoke("diag", [v], {"k": k})


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along a diagonal."""
    a = _arr(a)
    return _out_assign(sum(invoke("diag", [a], {"k": offset, "axis1": axis1, "axis2": axis2}),
                           axis=-1), out)


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


def ndim(a):
    """Number of dimensions."""
    return _arr(a).ndim if isinstance(a, NDArray) else _np.ndim(a)


def size(a, axis=None):
    """Number of elements (along ``axis``)."""
    if axis is None:
        return a.size if isinstance(a, NDArray) else _np.size(a)
    return a.shape[axis]


_ = _as_np


# front functions (``_f_unary``, ``_f_binary``) that the nd-only functions above call
from . import _fronts  # noqa: E402,F401  (registers them)
from ._front import ND as _ND, bind as _bind, table as _table  # noqa: E402
for _n in ("sqrt", "multiply", "absolute"):
    globals()[_n] = _bind(_ND, _table()[_n], _n, __name__)
