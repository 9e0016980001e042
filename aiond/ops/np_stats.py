"""NumPy-interface reductions and statistics ops (MXNet's ``_npi_std``,
``_npi_var``, ``_npi_argmax``, ``_np_all``, ``_np_cumsum``, ``_npi_average``,
``_np_trace``, ``_npi_diff``, ``_npi_ediff1d``; sums and means are in
``np_ops``; sorting, quantiles and value-shaped ops in ``np_sorting``).

Dtype rules are MXNet NumPy's: integer input to mean/std/var gives float32;
arg-reductions give int64; all/any give bool. Gradients are host formulas in
``_backward_<op>`` kernels (``_np_bwd``).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._np_bwd import backward
from ._rules import fmt, norm_axis
from .np_ops import np_axes
from .registry import Param, p_any, p_axis, p_bool, p_dtype, p_int, register

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)


def _no_grad(F, attrs, ins, outs, og):
    return [None] * len(ins)


def _axes(axis, ndim):
    return np_axes(axis, ndim)


def _red_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _errs():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


# ================================================================ std / var
def _moment_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axes = _axes(attrs["axis"], len(shape))
    d = attrs["dtype"] or (dtypes[0] if dtypes[0].kind == "f" else _F32)
    return (_red_shape(shape, axes, attrs["keepdims"]),), (np.dtype(d),)


_MOMENT = [Param("axis", p_axis, None, "axis or axes to reduce"),
           Param("dtype", p_dtype, None, "dtype of the result"),
           Param("ddof", p_int, 0, "delta degrees of freedom"),
           Param("keepdims", p_bool, False, "keep reduced axes with size 1")]


def _moment(kind):
    def kernel(xp, a, out, axis=None, dtype=None, ddof=0, keepdims=False):
        axes = _axes(axis, a.ndim)
        ct = np.float64 if out.dtype.kind != "f" or out.dtype.itemsize < 4 else out.dtype
        with _errs():
            r = getattr(xp, kind)(a.astype(ct, copy=False), axis=axes, ddof=ddof,
                                  keepdims=keepdims)
        out[...] = xp.reshape(r, out.shape)
    return kernel


def _moment_bwd(kind):
    def bwd(xp, og, ins, outs, axis=None, dtype=None, ddof=0, keepdims=False):
        a = ins[0]
        axes = _axes(axis, a.ndim)
        n = 1
        for i in axes:
            n *= a.shape[i]
        kshape = _red_shape(a.shape, axes, True)
        x = a.astype(np.float64)
        m = x.mean(axis=axes, keepdims=True) if a.size else x.sum(axis=axes, keepdims=True)
        g = og[0].reshape(kshape).astype(np.float64)
        with _errs():
            r = 2.0 * (x - m) / max(n - ddof, 0) * g
            if kind == "std":
                r = r / (2.0 * outs[0].reshape(kshape).astype(np.float64))
        return [xp.where(xp.isfinite(r), r, 0)]
    return bwd


for _k in ("std", "var"):
    register("_npi_" + _k, params=_MOMENT, infer=_moment_rule, inline=False)(_moment(_k))
    backward("_npi_" + _k, _moment_bwd(_k))


# ================================================================ argmax / argmin
def _arg_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axis = attrs["axis"]
    if axis is None:
        if not shape or 0 in shape:
            if 0 in shape:
                raise OpError("attempt to get argmax/argmin of an empty sequence")
        return ((1,) * len(shape) if attrs["keepdims"] else (),), (_I64,)
    if not shape:
        if axis not in (0, -1):
            raise OpError("axis %d is out of bounds for a 0-d array" % axis)
        return ((),), (_I64,)
    ax = norm_axis(axis, len(shape))
    if shape[ax] == 0:
        raise OpError("attempt to get argmax/argmin of an empty sequence (axis %d of shape %s)"
                      % (ax, fmt(shape)))
    return (_red_shape(shape, (ax,), attrs["keepdims"]),), (_I64,)


def _arg_kernel(fname):
    def kernel(xp, a, out, axis=None, keepdims=False):
        if axis is None or a.ndim == 0:
            r = getattr(xp, fname)(a)
        else:
            r = getattr(xp, fname)(a, axis=axis)
        out[...] = xp.reshape(r, out.shape)
    return kernel


_ARGP = [Param("axis", p_axis, None, "the axis (None: of the flattened array)"),
         Param("keepdims", p_bool, False, "keep the axis with size 1")]
register("_npi_argmax", params=_ARGP, infer=_arg_rule)(_arg_kernel("argmax"))
register("_npi_argmin", params=_ARGP, infer=_arg_rule)(_arg_kernel("argmin"))


# ================================================================ all / any
def _logic_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    return (_red_shape(shape, _axes(attrs["axis"], len(shape)), attrs["keepdims"]),), (_BOOL,)


def _logic(fname):
    def kernel(xp, a, out, axis=None, keepdims=False):
        r = getattr(xp, fname)(a, axis=_axes(axis, a.ndim), keepdims=keepdims)
        out[...] = xp.reshape(r, out.shape)
    return kernel


register("_np_all", params=_ARGP, infer=_logic_rule)(_logic("all"))
register("_np_any", params=_ARGP, infer=_logic_rule)(_logic("any"))


# ================================================================ cumsum
def _cum_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    if attrs["axis"] is None:
        out = (int(np.prod(shape)),)
    else:
        norm_axis(attrs["axis"], len(shape))
        out = shape
    d = attrs["dtype"]
    if d is None:
        d = dtypes[0]
        if d.kind == "b" or (d.kind in "iu" and d.itemsize < 8):
            d = _I64 if d.kind != "u" else np.dtype(np.uint64)
    return (out,), (np.dtype(d),)


_CUMP = [Param("axis", p_any, None, "the axis (None: of the flattened array)"),
         Param("dtype", p_dtype, None, "dtype of the result")]


def _cum(fname):
    def kernel(xp, a, out, axis=None, dtype=None):
        if axis is None:
            a, axis = a.reshape(-1), 0
        getattr(xp, fname)(a, axis=int(axis), dtype=out.dtype, out=out)
    return kernel


register("_np_cumsum", params=_CUMP, infer=_cum_rule)(_cum("cumsum"))
register("_npi_cumprod", params=_CUMP, infer=_cum_rule)(_cum("cumprod"))


def _cumsum_bwd(xp, og, ins, outs, axis=None, dtype=None):
    g = og[0]
    ax = 0 if axis is None else int(axis)
    r = xp.flip(xp.cumsum(xp.flip(g, ax), axis=ax), ax)
    return [r.reshape(ins[0].shape)]


def _cumprod_bwd(xp, og, ins, outs, axis=None, dtype=None):
    a = ins[0].reshape(-1) if axis is None else ins[0]
    ax = 0 if axis is None else int(axis)
    y = outs[0]
    with _errs():
        r = xp.flip(xp.cumsum(xp.flip(og[0] * y, ax), axis=ax), ax) / a
    return [r.reshape(ins[0].shape)]


backward("_np_cumsum", _cumsum_bwd)
backward("_npi_cumprod", _cumprod_bwd)


# ================================================================ average
def _avg_weights(xp, a, w, axis):
    if w.shape == a.shape:
        return w
    if axis is None:
        raise OpError("Axis must be specified when shapes of a and weights differ.")
    ax = axis if isinstance(axis, int) else None
    if ax is None or w.ndim != 1:
        raise OpError("1D weights expected when shapes of a and weights differ.")
    ax = norm_axis(ax, a.ndim)
    shp = [1] * a.ndim
    shp[ax] = w.shape[0]
    return w.reshape(shp)


def _avg_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axes = _axes(attrs["axis"], len(shape))
    d = dtypes[0] if dtypes[0].kind == "f" else _F32
    if attrs["weighted"]:
        w = tuple(shapes[1])
        if w != shape:
            ax = attrs["axis"]
            if ax is None:
                raise ShapeError("Axis must be specified when shapes of a and weights differ.")
            if not isinstance(ax, int):
                raise ShapeError("1D weights expected when shapes of a and weights differ "
                                 "(axis must be an int)")
            if len(w) != 1:
                raise ShapeError("1D weights expected when shapes of a and weights differ.")
            if w[0] != shape[norm_axis(ax, len(shape))]:
                raise ShapeError("Length of weights not compatible with specified axis.")
        if dtypes[1].kind == "f":
            d = dtypes[1] if d.kind != "f" else np.promote_types(d, dtypes[1])
    out = _red_shape(shape, axes, False)
    return (out, out), (d, d)


@register("_npi_average", inputs=("a", "weights"), variadic=True,
          params=[Param("axis", p_axis, None, "axis or axes to average over"),
                  Param("returned", p_bool, False, "also return the sum of weights"),
                  Param("weighted", p_bool, True, "weights is given")],
          infer=_avg_rule, num_outputs=2, inline=False, output_names=("avg", "sum_of_weights"),
          num_visible=lambda at: 2 if at.get("returned") else 1)
def _npi_average(xp, a, *w, out, axis=None, returned=False, weighted=True):
    """_npi_average(a, [weights], axis, returned, weighted): the weighted average."""
    axes = _axes(axis, a.ndim)
    x = a.astype(out[0].dtype, copy=False)
    if weighted:
        wt = _avg_weights(xp, a, w[0], axis).astype(out[0].dtype, copy=False)
        ws = xp.broadcast_to(wt, a.shape).sum(axis=axes)
        with _errs():
            out[0][...] = xp.reshape((x * wt).sum(axis=axes) / ws, out[0].shape)
        out[1][...] = xp.reshape(ws, out[1].shape)
    else:
        n = 1
        for i in axes:
            n *= a.shape[i]
        with _errs():
            out[0][...] = xp.reshape(x.mean(axis=axes) if a.size else x.sum(axis=axes) / 0,
                                     out[0].shape)
        out[1][...] = n


def _avg_bwd(xp, og, ins, outs, axis=None, returned=False, weighted=True):
    a = ins[0]
    axes = _axes(axis, a.ndim)
    kshape = _red_shape(a.shape, axes, True)
    g = og[0].reshape(kshape)
    if not weighted:
        n = max(int(np.prod([a.shape[i] for i in axes])), 1)
        return [xp.broadcast_to(g / n, a.shape)] + [None] * (len(ins) - 1)
    w = ins[1]
    wt = _avg_weights(xp, a, w, axis)
    wb = xp.broadcast_to(wt, a.shape)
    ws = outs[1].reshape(kshape)
    avg = outs[0].reshape(kshape)
    ga = g * wb / ws
    gw = g * (a - avg) / ws + og[1].reshape(kshape)
    gw = xp.broadcast_to(gw, a.shape)
    if wt.shape != w.shape or wt.ndim != a.ndim or wt.shape != a.shape:
        red = tuple(i for i in range(a.ndim) if wt.shape[i] == 1 and a.shape[i] != 1)
        gw = gw.sum(axis=red, keepdims=True) if red else gw
    return [ga, gw.reshape(w.shape)]


backward("_npi_average", _avg_bwd)


# ================================================================ trace
def _trace_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    if len(shape) < 2:
        raise ShapeError("trace: a must be at least 2-D, got shape %s" % fmt(shape))
    a1 = norm_axis(attrs["axis1"], len(shape), "axis1")
    a2 = norm_axis(attrs["axis2"], len(shape), "axis2")
    if a1 == a2:
        raise OpError("trace: axis1 and axis2 cannot be the same (%d)" % a1)
    return (tuple(d for i, d in enumerate(shape) if i not in (a1, a2)),), (dtypes[0],)


_TRACEP = [Param("offset", p_int, 0, "offset of the diagonal"),
           Param("axis1", p_int, 0, "first axis of the 2-D sub-arrays"),
           Param("axis2", p_int, 1, "second axis of the 2-D sub-arrays")]


@register("_np_trace", params=_TRACEP, infer=_trace_rule)
def _np_trace(xp, a, out, offset=0, axis1=0, axis2=1):
    """_np_trace(a, offset, axis1, axis2): sums along diagonals."""
    out[...] = xp.trace(a, offset=offset, axis1=axis1, axis2=axis2, dtype=out.dtype)


def _trace_bwd(xp, og, ins, outs, offset=0, axis1=0, axis2=1):
    a = ins[0]
    a1, a2 = norm_axis(axis1, a.ndim), norm_axis(axis2, a.ndim)
    n, m = a.shape[a1], a.shape[a2]
    eye = xp.eye(n, m, k=offset, dtype=a.dtype)
    g = og[0]
    rest = [i for i in range(a.ndim) if i not in (a1, a2)]
    full = g.reshape(g.shape + (1, 1)) * eye
    perm = np.argsort(rest + [a1, a2])
    return [xp.transpose(full, perm)]


backward("_np_trace", _trace_bwd)


# ================================================================ diff / ediff1d
def _diff_rule(attrs, shapes, dtypes):
    shape = list(shapes[0])
    n = attrs["n"]
    if n < 0:
        raise OpError("diff: order must be non-negative but got %d" % n)
    if not shape:
        raise ShapeError("diff requires input that is at least one dimensional")
    ax = norm_axis(attrs["axis"], len(shape))
    shape[ax] = max(shape[ax] - n, 0)
    d = dtypes[0]
    return (tuple(shape),), (d,)


@register("_npi_diff", params=[Param("n", p_int, 1, "times to difference"),
                               Param("axis", p_int, -1, "the axis")], infer=_diff_rule)
def _npi_diff(xp, a, out, n=1, axis=-1):
    """_npi_diff(a, n, axis): the n-th discrete difference along axis."""
    out[...] = xp.diff(a, n=n, axis=axis)


def _diff_bwd(xp, og, ins, outs, n=1, axis=-1):
    a = ins[0]
    ax = norm_axis(axis, a.ndim)
    g = og[0]
    for _ in range(n):
        pad = [(0, 0)] * g.ndim
        pad[ax] = (1, 1)
        g = -xp.diff(xp.pad(g, pad), axis=ax)
    return [g.reshape(a.shape)]


backward("_npi_diff", _diff_bwd)


def _ediff_rule(attrs, shapes, dtypes):
    n = max(int(np.prod(shapes[0])) - 1, 0)
    k = 1
    if attrs["to_begin_arr_given"]:
        n += int(np.prod(shapes[k]))
        k += 1
    elif attrs["to_begin_scalar"] is not None:
        n += 1
    if attrs["to_end_arr_given"]:
        n += int(np.prod(shapes[k]))
    elif attrs["to_end_scalar"] is not None:
        n += 1
    return ((n,),), (dtypes[0],)


@register("_npi_ediff1d", inputs=("input1", "input2", "input3"), variadic=True,
          params=[Param("to_begin_arr_given", p_bool, False, "to_begin is an array input"),
                  Param("to_end_arr_given", p_bool, False, "to_end is an array input"),
                  Param("to_begin_scalar", p_any, None, "to_begin as a number"),
                  Param("to_end_scalar", p_any, None, "to_end as a number")],
          infer=_ediff_rule)
def _npi_ediff1d(xp, a, *rest, out, to_begin_arr_given=False, to_end_arr_given=False,
                 to_begin_scalar=None, to_end_scalar=None):
    """_npi_ediff1d(ary, [to_begin], [to_end]): differences of the flattened array."""
    it = iter(rest)
    parts = []
    if to_begin_arr_given:
        parts.append(next(it).reshape(-1))
    elif to_begin_scalar is not None:
        parts.append(xp.asarray([to_begin_scalar]))
    parts.append(xp.diff(a.reshape(-1)))
    if to_end_arr_given:
        parts.append(next(it).reshape(-1))
    elif to_end_scalar is not None:
        parts.append(xp.asarray([to_end_scalar]))
    out[...] = xp.concatenate([p.astype(out.dtype) for p in parts]) if parts else 0


def _ediff_bwd(xp, og, ins, outs, to_begin_arr_given=False, to_end_arr_given=False,
               to_begin_scalar=None, to_end_scalar=None):
    a = ins[0]
    g = og[0]
    nb = 0
    if to_begin_arr_given:
        nb = ins[1].size
    elif to_begin_scalar is not None:
        nb = 1
    n = max(a.size - 1, 0)
    gd = g[nb:nb + n]
    ga = xp.zeros(a.size, dtype=g.dtype)
    if n:
        ga[1:] += gd
        ga[:-1] -= gd
    res = [ga.reshape(a.shape)]
    k = 1
    if to_begin_arr_given:
        res.append(g[:nb].reshape(ins[k].shape))
        k += 1
    if to_end_arr_given:
        res.append(g[nb + n:].reshape(ins[k].shape))
    return res


backward("_npi_ediff1d", _ediff_bwd)


set_grads({n: _no_grad for n in ("_npi_argmax", "_npi_argmin", "_np_all", "_np_any")})
