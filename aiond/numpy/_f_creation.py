"""Array creation as front functions (see ``_front``): zeros, ones, full and
the ``*_like`` family, ranges, eye/identity, index grids, windows, and the
index-valued helpers (unravel_index, diag_indices_from, tril_indices) and
polyval. Float results default to float32, as MXNet's do."""
from __future__ import annotations

from numbers import Integral

import numpy as _np

from ..base import numeric_types
from ._front import front

_F32 = "float32"


def _dtype(dtype, default=_F32):
    """A dtype as the ops' parameters take it (None: ``default``)."""
    if dtype is None:
        dtype = default
    if dtype is None:
        return None
    if dtype is bool:
        return _np.dtype(_np.bool_)
    if dtype is int:
        return _np.dtype(_np.int64)
    if dtype is float:
        return _np.dtype(_np.float64)
    from ..ops.registry import to_dtype
    return to_dtype(dtype)


def _shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, Integral):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def make(F, name, attrs, ctx=None, out=None):
    """An op without array inputs: on ``ctx`` for arrays (the current device
    by default); a graph node's device is its executor's."""
    if F.kind == "nd":
        from .multiarray import _ctx, invoke
        attrs = {k: v for k, v in attrs.items() if v is not None}
        if out is not None:
            return invoke(name, [], attrs, out, out.context)
        return invoke(name, [], attrs, None, _ctx(ctx))
    if ctx is not None:
        attrs = dict(attrs, ctx=str(ctx))
    return F.op(name, [], attrs, out)


def _order(order):
    if order != "C":
        raise NotImplementedError("only order='C' is supported, got %r" % (order,))


@front()
def zeros(F, shape, dtype=None, order="C", ctx=None):
    """An array of zeros (float32 unless ``dtype``)."""
    _order(order)
    return make(F, "_npi_zeros", {"shape": _shape(shape), "dtype": _dtype(dtype)}, ctx)


@front()
def ones(F, shape, dtype=None, order="C", ctx=None):
    """An array of ones (float32 unless ``dtype``)."""
    _order(order)
    return make(F, "_npi_ones", {"shape": _shape(shape), "dtype": _dtype(dtype)}, ctx)


@front()
def full(F, shape, fill_value, dtype=None, order="C", ctx=None, out=None):
    """An array of ``shape`` filled with ``fill_value`` (an array ``fill_value``
    is broadcast to ``shape``; a bool one gives a bool array)."""
    _order(order)
    if F.isarr(fill_value):
        from ._f_shape import broadcast_to
        res = broadcast_to(F, fill_value, _shape(shape))
        return res if dtype is None else F.op("Cast", [res], {"dtype": _dtype(dtype)})
    if isinstance(fill_value, (bool, _np.bool_)):
        fill_value = int(fill_value)
        dtype = _np.bool_ if dtype is None else dtype
    return make(F, "_npi_full", {"shape": _shape(shape), "dtype": _dtype(dtype),
                                 "value": float(fill_value)}, ctx, out)


def _like(F, a, fill_value, dtype, ctx, out):
    if ctx is not None and F.kind == "nd" and F.isarr(a) and ctx != F.ctx(a):
        from .multiarray import _ctx
        a = a.as_in_context(_ctx(ctx))
    a = F.arr(a)
    if isinstance(fill_value, (bool, _np.bool_)):
        fill_value = int(fill_value)
    return F.op("_npi_full_like", [a], {"fill_value": float(fill_value),
                                        "dtype": _dtype(dtype, None)}, out)


@front()
def zeros_like(F, a, dtype=None, order="C", ctx=None, out=None):
    """Zeros with the shape and dtype of ``a``."""
    _order(order)
    return _like(F, a, 0, dtype, ctx, out)


@front()
def ones_like(F, a, dtype=None, order="C", ctx=None, out=None):
    """Ones with the shape and dtype of ``a``."""
    _order(order)
    return _like(F, a, 1, dtype, ctx, out)


@front()
def full_like(F, a, fill_value, dtype=None, order="C", ctx=None, out=None):
    """``fill_value`` with the shape and dtype of ``a``."""
    _order(order)
    if F.isarr(fill_value):
        raise TypeError("full_like: fill_value must be a scalar, got an array")
    return _like(F, a, fill_value, dtype, ctx, out)


@front()
def empty_like(F, prototype, dtype=None, order="C", subok=False, shape=None):
    """An array with the shape and dtype of ``prototype`` (its entries are
    unspecified in NumPy's terms; aiond's are zeros)."""
    _order(order)
    if subok:
        raise NotImplementedError("empty_like: subok=True (array subclasses) is not supported")
    return F.op("_npi_empty_like", [F.arr(prototype)],
                {"dtype": _dtype(dtype, None), "shape": None if shape is None else _shape(shape)})


@front()
def arange(F, start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in [start, stop) (float32 unless ``dtype``)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if start is None and stop is None:
        raise ValueError("start and stop cannot be both None")
    if step == 0:
        raise ZeroDivisionError("step cannot be 0")
    return make(F, "_npi_arange", {"start": float(start), "stop": float(stop),
                                   "step": float(step), "dtype": _dtype(dtype)}, ctx)


def _check_num(name, num):
    if not isinstance(num, Integral) or isinstance(num, bool):
        from ..base import OpError
        raise OpError("%s: num must be an integer, got %r" % (name, num))


def _check_scalar_range(name, start, stop, axis):
    for v in (start, stop):
        if not isinstance(v, numeric_types) or isinstance(v, _np.ndarray):
            raise NotImplementedError("%s: start and stop must be numbers, got %s"
                                      % (name, type(v).__name__))
    if axis != 0:
        raise NotImplementedError("%s only supports axis=0" % name)


@front()
def linspace(F, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             ctx=None):
    """``num`` evenly spaced values over [start, stop] (float32 unless ``dtype``)."""
    _check_scalar_range("linspace", start, stop, axis)
    _check_num("linspace", num)
    res = make(F, "_npi_linspace", {"start": float(start), "stop": float(stop), "num": int(num),
                                    "endpoint": bool(endpoint), "dtype": _dtype(dtype)}, ctx)
    if retstep:
        div = (num - 1) if endpoint else num
        return res, ((stop - start) / div if div > 0 else float("nan"))
    return res


@front()
def logspace(F, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    """``base ** linspace(start, stop, num)`` (float32 unless ``dtype``)."""
    _check_scalar_range("logspace", start, stop, axis)
    _check_num("logspace", num)
    return make(F, "_npi_logspace", {"start": float(start), "stop": float(stop),
                                     "num": int(num), "endpoint": bool(endpoint),
                                     "base": float(base), "dtype": _dtype(dtype)}, ctx)


@front()
def eye(F, N, M=None, k=0, dtype=_np.float32, **kwargs):
    """A 2-D array with ones on the k-th diagonal (``ctx=`` places it)."""
    ctx = kwargs.pop("ctx", None)
    order = kwargs.pop("order", "C")
    _order(order)
    if kwargs:
        raise TypeError("eye() got unexpected keyword argument(s) %s" % sorted(kwargs))
    return make(F, "_npi_eye", {"N": int(N), "M": int(N if M is None else M), "k": int(k),
                                "dtype": _dtype(dtype)}, ctx)


@front()
def identity(F, n, dtype=None, ctx=None):
    """The n x n identity matrix (float32 unless ``dtype``)."""
    if not isinstance(n, Integral):
        raise TypeError("Input 'n' should be an integer")
    if n < 0:
        raise ValueError("Input 'n' cannot be negative")
    return make(F, "_npi_identity", {"shape": (int(n), int(n)), "dtype": _dtype(dtype)}, ctx)


@front()
def indices(F, dimensions, dtype=_np.int32, ctx=None):
    """The index grid of an array of shape ``dimensions`` (int32 by default)."""
    if not isinstance(dimensions, (tuple, list)):
        raise ValueError("The dimensions must be sequence of ints")
    return make(F, "_npi_indices", {"dimensions": _shape(dimensions),
                                    "dtype": _dtype(dtype, "int32")}, ctx)


def _window(name):
    def impl(F, M, dtype=_np.float32, ctx=None):
        return make(F, "_npi_" + name, {"M": int(M), "dtype": _dtype(dtype)}, ctx)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = "NumPy's %s window of M points (float32 by default)." % name
    return front(name)(impl)


hanning = _window("hanning")
hamming = _window("hamming")
blackman = _window("blackman")


@front()
def tril_indices(F, n, k=0, m=None, ctx=None):
    """The row and column indices of the lower triangle of an (n, m) array."""
    return tuple(make(F, "_npi_tril_indices", {"n": int(n), "k": int(k),
                                               "m": int(n if m is None else m)}, ctx))


@front()
def diag_indices_from(F, arr):
    """The indices of the main diagonal of ``arr`` (all axes of equal length)."""
    res = F.op("_npi_diag_indices_from", [F.arr(arr)])
    if F.kind == "nd":
        return tuple(res[i] for i in range(res.shape[0]))
    return res


@front()
def unravel_index(F, indices, shape, order="C"):
    """The coordinates of flat ``indices`` in an array of ``shape``."""
    if order != "C":
        raise NotImplementedError("unravel_index: only order='C' is supported")
    if isinstance(indices, numeric_types) and not isinstance(indices, _np.ndarray):
        return _np.unravel_index(indices, shape)
    res = F.op("_npi_unravel_index", [F.arr(indices)], {"shape": _shape(shape)})
    if F.kind == "nd":
        return tuple(res[i] for i in range(res.shape[0]))
    return res


@front()
def polyval(F, p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    if F.isarr(p) and F.isarr(x):
        return F.op("_npi_polyval", [F.arr(p), F.arr(x)])
    if not F.isarr(p) and not F.isarr(x):
        return _np.polyval(p, x)
    raise TypeError("polyval: p and x must both be arrays or both be array-likes, got %s and %s"
                    % (type(p).__name__, type(x).__name__))


@front()
def interp(F, x, xp, fp, left=None, right=None, period=None):
    """NumPy's 1-D linear interpolation of ``(xp, fp)`` at ``x`` (float64, as
    NumPy's; a scalar ``x`` gives a Python float)."""
    if period is not None and period == 0:
        raise ValueError("period must be a non-zero value")
    scalar = isinstance(x, numeric_types) and not isinstance(x, _np.ndarray)
    xa = F.arr(x if F.isarr(x) else _np.asarray(x, dtype=_np.float64))
    like = xa
    xpa = F.arr(xp if F.isarr(xp) else _np.asarray(xp, dtype=_np.float64), like=like)
    fpa = F.arr(fp if F.isarr(fp) else _np.asarray(fp, dtype=_np.float32), like=like)
    res = F.op("_npi_interp", [xa, xpa, fpa], {
        "left": None if left is None else float(left),
        "right": None if right is None else float(right),
        "period": None if period is None else float(period)})
    return res.item() if scalar and F.kind == "nd" else res
