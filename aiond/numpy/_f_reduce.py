"""Reductions, statistics, sorting and searching as front functions (see
``_front``): ``sum``, ``mean``, ``std``, ``argmax``, ``cumsum``, ``average``,
``percentile``, ``sort``, ``unique``, ``nonzero``, ``histogram``, ...; one
definition for ``mx.np``, ``mx.nd.np`` and ``mx.sym.np``."""
from __future__ import annotations

import numbers

import numpy as _np

from ..base import integer_types, numeric_types
from ..ops import registry as _reg
from ._front import front


def dtype_attr(dtype):
    """A user's dtype (a string, a NumPy type, Python's bool/int/float) as an op attr."""
    if dtype is None:
        return None
    if dtype is bool:
        return _np.dtype(_np.bool_)
    if dtype is int:
        return _np.dtype(_np.int64)
    if dtype is float:
        return _np.dtype(_np.float64)
    return _reg.to_dtype(dtype)


def axis_attr(axis):
    if isinstance(axis, list):
        return tuple(int(a) for a in axis)
    if isinstance(axis, _np.integer):
        return int(axis)
    return axis


def _dynamic(F, name, inputs, attrs):
    """A value-dependent-shape op: arrays run its DYNAMIC entry (it reads the
    computed input), Symbols get a graph node."""
    if F.kind == "nd":
        from ..ops.dynamic import DYNAMIC
        from . import _dynamic  # noqa: F401  (mx.np's DYNAMIC entries)
        return DYNAMIC[name](*inputs, **{k: v for k, v in attrs.items() if v is not None})
    return F.op(name, inputs, attrs)


# ------------------------------------------------------------------ sums
def _red(F, opname, a, axis, dtype, out, keepdims, with_dtype=True):
    a = F.arr(a)
    attrs = {"axis": axis_attr(axis), "keepdims": bool(keepdims)}
    if with_dtype:
        attrs["dtype"] = dtype_attr(dtype)
    return F.op(opname, [a], attrs, out)


@front("sum")
def _sum(F, a, axis=None, dtype=None, keepdims=False, initial=None, out=None):
    """Sum over ``axis`` (every axis by default); bool input sums as int64."""
    r = _red(F, "_np_sum", a, axis, dtype, None if initial is not None else out, keepdims)
    if initial is not None:
        r = F.op("_npi_add_scalar", [r], {"scalar": float(initial),
                                          "is_int": isinstance(initial, integer_types)}, out)
    return r


@front("prod")
def _prod(F, a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over ``axis``."""
    return _red(F, "_np_prod", a, axis, dtype, out, keepdims)


@front("mean")
def _mean(F, a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean over ``axis`` (float32 for integer input)."""
    return _red(F, "_npi_mean", a, axis, dtype, out, keepdims)


@front("max", "amax")
def _max(F, a, axis=None, keepdims=False, out=None):
    """Maximum over ``axis``."""
    return _red(F, "_np_max", a, axis, None, out, keepdims, with_dtype=False)


@front("min", "amin")
def _min(F, a, axis=None, keepdims=False, out=None):
    """Minimum over ``axis``."""
    return _red(F, "_np_min", a, axis, None, out, keepdims, with_dtype=False)


def _moment(F, name, a, axis, dtype, out, ddof, keepdims):
    return F.op(name, [F.arr(a)], {"axis": axis_attr(axis), "dtype": dtype_attr(dtype),
                                   "ddof": int(ddof), "keepdims": bool(keepdims)}, out)


@front("std")
def _std(F, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` (``ddof``: delta degrees of freedom)."""
    return _moment(F, "_npi_std", a, axis, dtype, out, ddof, keepdims)


@front("var")
def _var(F, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over ``axis``."""
    return _moment(F, "_npi_var", a, axis, dtype, out, ddof, keepdims)


def _argext(F, name, a, axis, out):
    if axis is not None and not isinstance(axis, numbers.Integral):
        raise TypeError("%s: axis must be an int or None, got %r" % (name, axis))
    return F.op("_npi_" + name, [F.arr(a)], {"axis": None if axis is None else int(axis),
                                             "keepdims": False}, out)


@front("argmax")
def _argmax(F, a, axis=None, out=None):
    """Indices (int64) of the maxima along ``axis`` (of the flattened array by default)."""
    return _argext(F, "argmax", a, axis, out)


@front("argmin")
def _argmin(F, a, axis=None, out=None):
    """Indices (int64) of the minima along ``axis``."""
    return _argext(F, "argmin", a, axis, out)


@front("all")
def _all(F, a, axis=None, keepdims=False, out=None):
    """Whether every element along ``axis`` is true (bool)."""
    return _red(F, "_np_all", a, axis, None, out, keepdims, with_dtype=False)


@front("any")
def _any(F, a, axis=None, keepdims=False, out=None):
    """Whether some element along ``axis`` is true (bool)."""
    return _red(F, "_np_any", a, axis, None, out, keepdims, with_dtype=False)


@front("cumsum")
def _cumsum(F, a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array by default)."""
    return F.op("_np_cumsum", [F.arr(a)], {"axis": axis_attr(axis), "dtype": dtype_attr(dtype)},
                out)


@front("cumprod")
def _cumprod(F, a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (of the flattened array by default)."""
    return F.op("_npi_cumprod", [F.arr(a)], {"axis": axis_attr(axis),
                                            "dtype": dtype_attr(dtype)}, out)


@front("average")
def _average(F, a, axis=None, weights=None, returned=False, out=None):
    """Weighted average over ``axis``; with ``returned`` also the sum of weights."""
    a = F.arr(a)
    attrs = {"axis": axis_attr(axis), "returned": bool(returned)}
    if weights is None:
        attrs["weighted"] = False
        r = F.op("_npi_average", [a], attrs, out)
    else:
        attrs["weighted"] = True
        r = F.op("_npi_average", [a, F.arr(weights, like=a)], attrs, out)
    if F.kind == "sym" and isinstance(r, list):
        return (r[0], r[1]) if returned else r[0]
    return tuple(r) if returned and isinstance(r, list) else r


@front("trace")
def _trace(F, a, offset=0, axis1=0, axis2=1, out=None):
    """Sum along the diagonal ``offset`` of the 2-D sub-arrays on ``axis1``/``axis2``."""
    return F.op("_np_trace", [F.arr(a)], {"offset": int(offset), "axis1": int(axis1),
                                          "axis2": int(axis2)}, out)


@front("diff")
def _diff(F, a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis``."""
    if prepend is not None or append is not None:
        raise NotImplementedError("diff: prepend and append are not supported by MXNet's "
                                  "mx.np.diff; concatenate them first")
    if not isinstance(n, numbers.Integral):
        raise TypeError("diff: n must be an integer, got %r" % (n,))
    return F.op("_npi_diff", [F.arr(a)], {"n": int(n), "axis": int(axis)})


@front("ediff1d")
def _ediff1d(F, ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, with
    ``to_begin``/``to_end`` (numbers or arrays) around them."""
    a = F.arr(ary)
    ins = [a]
    attrs = {"to_begin_arr_given": False, "to_end_arr_given": False}
    for key, v in (("to_begin", to_begin), ("to_end", to_end)):
        if v is None:
            continue
        if isinstance(v, numeric_types) and not isinstance(v, _np.ndarray):
            attrs[key + "_scalar"] = float(v)
        else:
            attrs[key + "_arr_given"] = True
            ins.append(F.arr(v, like=a))
    return F.op("_npi_ediff1d", ins, attrs)


# ------------------------------------------------------------------ quantiles
def _pct(F, a, q, axis, out, interpolation, keepdims, scale):
    a = F.arr(a)
    attrs = {"axis": axis_attr(axis), "interpolation": interpolation or "linear",
             "keepdims": bool(keepdims)}
    if isinstance(q, numeric_types) and not isinstance(q, _np.ndarray):
        attrs["q_scalar"] = float(q) * scale
        return F.op("_npi_percentile", [a], attrs, out)
    qa = F.arr(q, like=a)
    if scale != 1:
        qa = F.op("_npi_multiply_scalar", [qa], {"scalar": float(scale), "is_int": False})
    return F.op("_npi_percentile", [a, qa], attrs, out)


@front("percentile")
def _percentile(F, a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
                keepdims=False):
    """The ``q``-th percentiles (0..100) along ``axis``."""
    if overwrite_input is not None:
        raise NotImplementedError("percentile: overwrite_input is not supported (MXNet's "
                                  "mx.np.percentile never overwrites its input)")
    return _pct(F, a, q, axis, out, interpolation, keepdims, 1)


@front("quantile")
def _quantile(F, a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
              keepdims=False):
    """The ``q``-th quantiles (0..1) along ``axis``."""
    if overwrite_input is not None:
        raise NotImplementedError("quantile: overwrite_input is not supported (MXNet's "
                                  "mx.np.quantile never overwrites its input)")
    return _pct(F, a, q, axis, out, interpolation, keepdims, 100)


@front("median")
def _median(F, a, axis=None, out=None, overwrite_input=None, keepdims=False):
    """The median along ``axis``."""
    return _percentile(F, a, 50, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims)


@front("histogram")
def _histogram(F, a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    """Counts of ``a``'s values in ``bins`` (a count, with ``range``, or the edges)."""
    if normed is True or density is True or weights is not None:
        raise NotImplementedError("histogram: normed, density and weights are not supported "
                                  "by MXNet's mx.np.histogram")
    a = F.arr(a)
    if isinstance(bins, numbers.Integral):
        if range is None:
            raise NotImplementedError("histogram: an integer bins needs range=(min, max) in "
                                      "MXNet's mx.np.histogram")
        r = F.op("_npi_histogram", [a], {"bin_cnt": int(bins),
                                         "range": tuple(float(v) for v in range)})
    else:
        r = F.op("_npi_histogram", [a, F.arr(bins, like=a)], {})
    return tuple(r) if F.kind == "nd" else (r[0], r[1])


@front("bincount")
def _bincount(F, x, weights=None, minlength=0):
    """How many times each non-negative int occurs in ``x`` (or the sum of its weights)."""
    if minlength < 0:
        raise ValueError("bincount: minlength must be non-negative, got %r" % (minlength,))
    x = F.arr(x)
    if weights is None:
        return _dynamic(F, "_npi_bincount", [x], {"minlength": int(minlength),
                                                  "has_weights": False})
    return _dynamic(F, "_npi_bincount", [x, F.arr(weights, like=x)],
                    {"minlength": int(minlength), "has_weights": True})


# ------------------------------------------------------------------ sorting
def _sort_axis(axis):
    return None if axis is None else int(axis)


@front("sort")
def _sort(F, a, axis=-1, kind=None, order=None):
    """A sorted copy of ``a`` along ``axis`` (of the flattened array for None)."""
    if order is not None:
        raise NotImplementedError("sort: order is not supported (mx.np arrays have no "
                                  "fields)")
    return F.op("_npi_sort", [F.arr(a)], {"axis": _sort_axis(axis), "is_ascend": True})


@front("argsort")
def _argsort(F, a, axis=-1, kind=None, order=None):
    """The int64 indices that sort ``a`` along ``axis``."""
    if order is not None:
        raise NotImplementedError("argsort: order is not supported (mx.np arrays have no "
                                  "fields)")
    return F.op("_npi_argsort", [F.arr(a)], {"axis": _sort_axis(axis), "is_ascend": True,
                                             "dtype": _np.dtype(_np.int64)})


@front("unique")
def _unique(F, ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique values (and, as asked, first indices, inverse, counts)."""
    attrs = {"return_index": bool(return_index), "return_inverse": bool(return_inverse),
             "return_counts": bool(return_counts), "axis": None if axis is None else int(axis)}
    r = _dynamic(F, "_npi_unique", [F.arr(ar)], attrs)
    return tuple(r) if isinstance(r, list) else r


@front("nonzero", ns="npx")
def _npx_nonzero(F, a):
    """The int64 indices (N, a.ndim) of ``a``'s non-zero elements."""
    return _dynamic(F, "_npx_nonzero", [F.arr(a)], {})


@front("nonzero")
def _nonzero(F, a):
    """The indices of ``a``'s non-zero elements: one int64 array per axis."""
    r = _npx_nonzero(F, a)
    if F.kind == "nd":
        t = F.op("transpose", [r], {})
        return tuple(t[i] for i in range(t.shape[0]))
    raise NotImplementedError("mx.sym.np.nonzero: a Symbol has no known number of axes; "
                              "use mx.sym.npx.nonzero (one row of indices per element)")


@front("count_nonzero")
def _count_nonzero(F, a, axis=None):
    """How many elements along ``axis`` are non-zero (int64)."""
    a = F.arr(a)
    nz = F.op("_npi_not_equal_scalar", [a], {"scalar": 0.0, "is_int": True})
    return F.op("_np_sum", [nz], {"axis": axis_attr(axis), "dtype": _np.dtype(_np.int64),
                                  "keepdims": False})


@front("ptp")
def _ptp(F, a, axis=None, out=None, keepdims=False):
    """Range (maximum minus minimum) along ``axis``."""
    hi = _max(F, a, axis=axis, keepdims=keepdims)
    lo = _min(F, a, axis=axis, keepdims=keepdims)
    return F.op("_npi_subtract", [hi, lo], None, out)


@front("searchsorted")
def _searchsorted(F, a, v, side="left", sorter=None):
    """Indices (int64) where ``v``'s elements keep the sorted 1-D ``a`` sorted."""
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right', got %r" % (side,))
    a = F.arr(a)
    if sorter is not None:
        a = F.op("take", [a, F.arr(sorter, like=a)], {"axis": 0, "mode": "clip"})
    return F.op("_npi_searchsorted", [a, F.arr(v, like=a)], {"side": side})


# NumPy's other names of prod and any (MXNet 1.9.1 has them in mx.np)
front("product")(_prod)
front("sometrue")(_any)
