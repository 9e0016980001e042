"""NumPy-interface sorting, searching and counting ops (MXNet's
``_npi_sort``, ``_npi_argsort``, ``_npi_percentile``, ``_npi_histogram``,
``_npi_unique``, ``_npx_nonzero``, ``_npi_bincount``).

``unique``, ``nonzero`` and ``bincount`` have value-dependent shapes: their
entries in ``DYNAMIC`` (``aiond.numpy._dynamic``, as they make mx.np arrays)
read the (computed) input, as ``boolean_mask``'s does.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._np_bwd import backward
from ._rules import norm_axis
from .dynamic import ValueShaped
from .np_stats import _F32, _I64, _axes, _no_grad, _red_shape
from .registry import Param, p_any, p_axis, p_bool, p_dtype, p_int, p_str, register


# ================================================================ sort / argsort
def _sort_rule(arg):
    def rule(attrs, shapes, dtypes):
        shape = tuple(shapes[0])
        if attrs["axis"] is None or not shape:
            out = (int(np.prod(shape)),)
        else:
            norm_axis(attrs["axis"], len(shape))
            out = shape
        return (out,), ((attrs.get("dtype") or _I64) if arg else dtypes[0],)
    return rule


# axis None (flatten) is the default: a None given by a front end is dropped
_SORTP = [Param("axis", p_any, None, "the axis (None: of the flattened array)"),
          Param("is_ascend", p_bool, True, "ascending order")]


def _sort_idx(xp, a, axis, is_ascend):
    if axis is None or a.ndim == 0:
        a, axis = a.reshape(-1), 0
    if a.ndim == 0:
        a = a.reshape(1)
    idx = xp.argsort(a if is_ascend else -a, axis=int(axis), kind="stable")
    return a, int(axis), idx


@register("_npi_sort", params=_SORTP, infer=_sort_rule(False))
def _npi_sort(xp, a, out, axis=-1, is_ascend=True):
    """_npi_sort(a, axis, is_ascend): a sorted copy."""
    if axis is None or a.ndim == 0:
        a, axis = a.reshape(-1), 0
    r = xp.sort(a, axis=int(axis)) if a.ndim else a
    if not is_ascend:
        r = xp.flip(r, int(axis))
    out[...] = xp.reshape(r, out.shape)


@register("_npi_argsort", params=_SORTP + [Param("dtype", p_dtype, _I64, "dtype of the indices")],
          infer=_sort_rule(True))
def _npi_argsort(xp, a, out, axis=-1, is_ascend=True, dtype=_I64):
    """_npi_argsort(a, axis, is_ascend, dtype): the indices that sort a."""
    _, _, idx = _sort_idx(xp, a, axis, is_ascend)
    out[...] = xp.reshape(idx, out.shape)


def _sort_bwd(xp, og, ins, outs, axis=-1, is_ascend=True):
    a, ax, idx = _sort_idx(xp, ins[0], axis, is_ascend)
    if not is_ascend:
        pass
    g = og[0].reshape(a.shape)
    ga = xp.zeros(a.shape, dtype=g.dtype)
    xp.put_along_axis(ga, idx, g if is_ascend else g, axis=ax)
    return [ga.reshape(ins[0].shape)]


backward("_npi_sort", _sort_bwd)


# ================================================================ quantile
_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _pct_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axes = _axes(attrs["axis"], len(shape))
    qshape = () if attrs["q_scalar"] is not None else tuple(shapes[1])
    d = dtypes[0] if dtypes[0].kind == "f" else np.dtype(np.float64)
    return (qshape + _red_shape(shape, axes, attrs["keepdims"]),), (d,)


@register("_npi_percentile", inputs=("a", "q"), variadic=True,
          params=[Param("axis", p_axis, None, "axis or axes"),
                  Param("interpolation", p_str, "linear", "how to pick between two points",
                        choices=_INTERP),
                  Param("keepdims", p_bool, False, "keep the reduced axes"),
                  Param("q_scalar", p_any, None, "the percentile as a number")],
          infer=_pct_rule)
def _npi_percentile(xp, a, *q, out, axis=None, interpolation="linear", keepdims=False,
                    q_scalar=None):
    """_npi_percentile(a, [q], axis, interpolation, keepdims, q_scalar): percentiles in [0, 100]."""
    qq = q_scalar if q_scalar is not None else q[0].astype(np.float64)
    ax = _axes(axis, a.ndim)
    if xp.any(xp.asarray(qq) < 0) or xp.any(xp.asarray(qq) > 100):
        raise OpError("percentile: percentiles must be in the range [0, 100]")
    r = xp.percentile(a, qq, axis=ax if ax else None, method=interpolation,
                      keepdims=keepdims) if ax or a.ndim == 0 else a
    out[...] = xp.reshape(r, out.shape)


# ================================================================ histogram
def _hist_rule(attrs, shapes, dtypes):
    if attrs["bin_cnt"] is not None:
        n = attrs["bin_cnt"]
        if n <= 0:
            raise OpError("histogram: bins must be positive, got %d" % n)
    else:
        if len(shapes) < 2 or len(shapes[1]) != 1:
            raise ShapeError("histogram: bins must be a 1-D array of edges")
        n = shapes[1][0] - 1
    ed = dtypes[0] if dtypes[0].kind == "f" else _F32
    if len(dtypes) > 1:
        ed = dtypes[1]
    return ((n,), (n + 1,)), (_I64, ed)


@register("_npi_histogram", inputs=("data", "bins"), variadic=True,
          params=[Param("bin_cnt", p_any, None, "number of equal bins"),
                  Param("range", p_any, None, "(min, max) of the bins")],
          infer=_hist_rule, num_outputs=2, output_names=("hist", "bin_edges"))
def _npi_histogram(xp, data, *bins, out, bin_cnt=None, range=None):  # noqa: A002
    """_npi_histogram(data, [bins], bin_cnt, range): counts and bin edges."""
    b = bins[0] if bins else int(bin_cnt)
    rng = tuple(range) if range is not None else None
    h, e = xp.histogram(data.reshape(-1), bins=b, range=rng)
    out[0][...] = h
    out[1][...] = e


# ================================================================ dynamic shapes
def _fixed_rule(attrs, shapes, dtypes):
    # the shapes were read from the values by the op's DYNAMIC entry
    shp, dts = attrs.get("_shapes"), attrs.get("_dtypes")
    if shp is None:
        raise OpError("the result's shape depends on the input's values; call it through "
                      "mx.np (whose function reads the computed input)")
    return tuple(tuple(s) for s in shp), tuple(np.dtype(d) for d in dts)


def _nonzero_rule(attrs, shapes, dtypes):
    if attrs.get("_shapes") is None:
        raise ValueShaped("the result's shape depends on the input's values; call it through "
                          "mx.np (whose function reads the computed input)",
                          ((-1, max(len(shapes[0]), 1)),), (_I64,))
    return _fixed_rule(attrs, shapes, dtypes)


@register("_npx_nonzero", params=[], infer=_nonzero_rule)
def _npx_nonzero(xp, a, out, **hidden):
    """_npx_nonzero(a): the indices of the non-zero elements, one row each (N, a.ndim)."""
    out[...] = xp.transpose(xp.stack(xp.nonzero(xp.atleast_1d(a))))


def _unique_rule(attrs, shapes, dtypes):
    if attrs.get("_shapes") is None:
        s, ax = tuple(shapes[0]), attrs.get("axis")
        if ax is None:
            u, n = (-1,), int(np.prod(s))
        else:
            ax = norm_axis(int(ax), len(s))
            u, n = s[:ax] + (-1,) + s[ax + 1:], s[ax]
        raise ValueShaped("the result's shape depends on the input's values; call it through "
                          "mx.np (whose function reads the computed input)",
                          (u, (-1,), (n,), (-1,)), (dtypes[0], _I64, _I64, _I64))
    return _fixed_rule(attrs, shapes, dtypes)


@register("_npi_unique", params=[Param("return_index", p_bool, False),
                                 Param("return_inverse", p_bool, False),
                                 Param("return_counts", p_bool, False),
                                 Param("axis", p_any, None, "the axis (None: flattened)")],
          infer=_unique_rule, num_outputs=4,
          num_visible=lambda at: 1 + bool(at.get("return_index")) + bool(
              at.get("return_inverse")) + bool(at.get("return_counts")))
def _npi_unique(xp, a, out, return_index=False, return_inverse=False, return_counts=False,
                axis=None, **hidden):
    """_npi_unique(ar, return_index, return_inverse, return_counts, axis): sorted unique values."""
    r = xp.unique(a, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    wants = (True, return_index, return_inverse, return_counts)
    outs = out if isinstance(out, (list, tuple)) else [out]
    for o, v in zip(outs, [v for v, w in zip(r, wants) if w]):
        o[...] = v.reshape(o.shape)


@register("_npi_bincount", inputs=("data", "weights"), variadic=True,
          params=[Param("minlength", p_int, 0, "the least number of bins"),
                  Param("has_weights", p_bool, False, "weights is given")],
          infer=_fixed_rule)
def _npi_bincount(xp, data, *w, out, minlength=0, has_weights=False, **hidden):
    """_npi_bincount(data, [weights], minlength, has_weights): counts of each value."""
    out[...] = xp.bincount(data.reshape(-1), weights=w[0] if has_weights else None,
                           minlength=out.shape[0])


@register("_npi_lstsq", inputs=("a", "b"), params=[
    Param("rcond", p_any, "warn", "cutoff for small singular values (None: machine precision)")],
    infer=_fixed_rule, num_outputs=4, output_names=("x", "residuals", "rank", "s"))
def _npi_lstsq(xp, a, b, out, rcond="warn", **hidden):
    """_npi_lstsq(a, b, rcond): least-squares x, residuals, rank and singular values."""
    r = np.linalg.lstsq(_np_host(xp, a).astype(np.float64), _np_host(xp, b).astype(np.float64),
                        rcond=None if rcond in ("warn", None) else rcond)
    for o, v in zip(out, r):
        o[...] = xp.asarray(np.asarray(v).reshape(o.shape))


def _np_host(xp, a):
    return a if xp is np else xp.asnumpy(a)


def _ss_rule(attrs, shapes, dtypes):
    if len(shapes[0]) != 1:
        raise ShapeError("searchsorted: a must be 1-D, got shape %s" % (tuple(shapes[0]),))
    return (tuple(shapes[1]),), (_I64,)


@register("_npi_searchsorted", inputs=("a", "v"),
          params=[Param("side", p_str, "left", "which index of an equal element",
                        choices=("left", "right"))], infer=_ss_rule)
def _npi_searchsorted(xp, a, v, out, side="left"):
    """_npi_searchsorted(a, v, side): where v's elements go in the sorted 1-D a."""
    out[...] = xp.searchsorted(a, v, side=side)


set_grads({n: _no_grad for n in ("_npi_searchsorted", "_npi_lstsq", "_npi_argsort", "_npi_histogram", "_npx_nonzero",
                                 "_npi_unique", "_npi_bincount", "_npi_percentile")})
