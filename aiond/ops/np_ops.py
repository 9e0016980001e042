"""NumPy-semantics ops behind ``mx.np`` (MXNet's ``_npi_*``/``_np_*`` names).

They differ from the legacy ops in what NumPy users expect: binary ops
promote mixed dtypes (an integer and a float array give the float dtype,
``true_divide`` of integers gives float32, comparisons give bool), a full
reduction has shape ``()``, and ``reshape`` follows NumPy's rules (``-1``
infers one dimension, ``0`` is a zero-size dimension).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import set_grads, unbroadcast
from ._rules import broadcast_shapes, fmt, reduce_axes
from .elemwise import cast_scalar
from .registry import Param, p_axis, p_bool, p_dtype, p_float, p_int, p_shape, register

_BOOL = np.dtype(np.bool_)
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def promote(a, b):
    """MXNet NumPy's result dtype of a binary op on arrays of dtypes a and b:
    a float with a non-float gives that float; otherwise NumPy's promotion."""
    if a is b and isinstance(a, np.dtype):
        return a
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    fa, fb = a.kind == "f", b.kind == "f"
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    return np.result_type(a, b)


def scalar_result(dtype, scalar_is_int):
    """dtype of ``array <op> python scalar``: an integer or bool array with a
    float scalar gives float32; a bool array with an int scalar gives int64."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub" and not scalar_is_int:
        return _F32
    if dtype.kind == "b" and scalar_is_int:
        return _I64
    return dtype


# ------------------------------------------------------------- binary
def _bin_rule(kind):
    def rule(attrs, shapes, dtypes):
        a, b = shapes
        d = dtypes[0]
        if kind == "arith" and a == b and d is dtypes[1]:
            return (a,), (d,)          # the common case, kept lean (a push's path)
        shape = broadcast_shapes(a, b)
        if kind == "cmp":
            return (shape,), (_BOOL,)
        d = promote(dtypes[0], dtypes[1])
        if kind == "div" and d.kind in "iub":
            d = _F32
        return (shape,), (d,)
    return rule


def _errstate():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _as(xp, a, dt):
    return a if a.dtype == dt else a.astype(dt)


def _binary_kernel(fname):
    # floating-point warnings are already off around every kernel (_quiet)
    ufunc = getattr(np, fname)

    def kernel(xp, lhs, rhs, out):
        dt = out.dtype
        if dt != _BOOL:
            if lhs.dtype != dt:
                lhs = lhs.astype(dt)
            if rhs.dtype != dt:
                rhs = rhs.astype(dt)
        (ufunc if xp is np else getattr(xp, fname))(lhs, rhs, out=out, casting="unsafe")
    return kernel


def _mod_kernel(xp, lhs, rhs, out):
    dt = out.dtype
    with _errstate():
        xp.mod(_as(xp, lhs, dt), _as(xp, rhs, dt), out=out, casting="unsafe")
    if dt.kind == "f":
        xp.copyto(out, 0, where=xp.broadcast_to(rhs == 0, out.shape))


_BINARY = {"add": "add", "subtract": "subtract", "multiply": "multiply",
           "true_divide": "true_divide", "power": "power", "maximum": "maximum",
           "minimum": "minimum", "hypot": "hypot", "arctan2": "arctan2",
           "copysign": "copysign"}
_CMP = {"equal": "equal", "not_equal": "not_equal", "greater": "greater",
        "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
        "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor"}

for _n, _f in _BINARY.items():
    register("_npi_" + _n, inputs=("lhs", "rhs"),
             infer=_bin_rule("div" if _n == "true_divide" else "arith"),
             elemwise=True)(_binary_kernel(_f))
register("_npi_mod", inputs=("lhs", "rhs"), infer=_bin_rule("arith"), elemwise=True)(_mod_kernel)
for _n, _f in _CMP.items():
    register("_npi_" + _n, inputs=("lhs", "rhs"), infer=_bin_rule("cmp"), elemwise=True)(
        _binary_kernel(_f))


# ------------------------------------------------------------- with a scalar
_SCALAR = [Param("scalar", p_float, doc="the scalar operand"),
           Param("is_int", p_bool, True, "whether the scalar is an integer")]


def _scalar_rule(kind):
    def rule(attrs, shapes, dtypes):
        if kind == "cmp":
            return (shapes[0],), (_BOOL,)
        d = scalar_result(dtypes[0], attrs["is_int"])
        if kind == "div" and d.kind in "iub":
            d = _F32
        return (shapes[0],), (d,)
    return rule


def _scalar_kernel(fname, reverse):
    ufunc = getattr(np, fname)
    direct = fname != "mod"

    def kernel(xp, data, out, scalar, is_int=True):
        dt = out.dtype
        if direct and dt.kind == "f" and xp is np:
            # a float result: straight into ``out`` (the floating-point
            # warnings are off around every kernel, see _quiet)
            s = dt.type(scalar)
            if data.dtype != dt:
                data = data.astype(dt)
            if reverse:
                ufunc(s, data, out=out)
            else:
                ufunc(data, s, out=out)
            return
        dt = out.dtype if out.dtype != _BOOL else promote(data.dtype, np.float64 if not is_int
                                                          else data.dtype)
        s = cast_scalar(scalar, dt) if dt.kind != "b" else dt.type(scalar)
        a = _as(xp, data, dt)
        with _errstate():
            if reverse:
                r = getattr(xp, fname)(s, a)
            else:
                r = getattr(xp, fname)(a, s)
            if fname == "mod" and dt.kind == "f":
                r = xp.where((a if reverse else xp.asarray(s)) == 0, 0, r)
            xp.copyto(out, r, casting="unsafe")
    return kernel


_SCALAR_OPS = {"add": "add", "subtract": "subtract", "multiply": "multiply",
               "true_divide": "true_divide", "mod": "mod", "power": "power",
               "maximum": "maximum", "minimum": "minimum"}
for _n, _f in _SCALAR_OPS.items():
    register("_npi_%s_scalar" % _n, params=_SCALAR,
             infer=_scalar_rule("div" if _n == "true_divide" else "arith"),
             elemwise=True)(_scalar_kernel(_f, False))
for _n in ("subtract", "true_divide", "mod", "power"):
    register("_npi_r%s_scalar" % _n, params=_SCALAR,
             infer=_scalar_rule("div" if _n == "true_divide" else "arith"),
             elemwise=True)(_scalar_kernel(_SCALAR_OPS[_n], True))
for _n, _f in _CMP.items():
    if not _n.startswith("logical"):
        register("_npi_%s_scalar" % _n, params=_SCALAR, infer=_scalar_rule("cmp"),
                 elemwise=True)(_scalar_kernel(_f, False))


# ------------------------------------------------------------- reductions
def np_axes(axis, ndim):
    """The sorted axes a NumPy reduction reduces: None is every axis, () none."""
    if axis == ():
        return ()
    return reduce_axes({"axis": axis, "exclude": False}, ndim)


_RED = [Param("axis", p_axis, None, "axis or axes to reduce; None: all"),
        Param("dtype", p_dtype, None, "dtype of the result"),
        Param("keepdims", p_bool, False, "keep reduced axes with size 1")]
_RED_NODT = [_RED[0], _RED[2]]


def _np_reduce_rule(kind):
    def rule(attrs, shapes, dtypes):
        shape = shapes[0]
        axes = np_axes(attrs["axis"], len(shape))
        if kind == "extreme":
            for a in axes:
                if shape[a] == 0:
                    raise OpError("zero-size array to reduction operation %s which has no "
                                  "identity (shape %s)" % ("max/min", fmt(shape)))
            if not axes and not shape:
                pass
        if attrs["keepdims"]:
            out = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:
            out = tuple(d for i, d in enumerate(shape) if i not in axes)
        d = attrs.get("dtype")
        if d is None:
            d = dtypes[0]
            if kind == "mean" and d.kind in "iub":
                d = _F32
            elif kind == "sum" and d.kind == "b":
                d = _I64
        return (out,), (np.dtype(d),)
    return rule


def _np_reducer(fname):
    def kernel(xp, data, out, axis=None, keepdims=False, dtype=None):
        axes = np_axes(axis, data.ndim)
        # MXNet accumulates float16 in float32
        kw = {} if fname in ("max", "min") else {
            "dtype": np.float32 if out.dtype == np.float16 else out.dtype}
        with _errstate():
            r = getattr(xp, fname)(data, axis=axes, keepdims=keepdims, **kw)
        out[...] = xp.reshape(r, out.shape)
    return kernel


for _n, _f, _k in (("_np_sum", "sum", "sum"), ("_np_prod", "prod", "sum"),
                   ("_npi_mean", "mean", "mean")):
    register(_n, params=_RED, infer=_np_reduce_rule(_k))(_np_reducer(_f))
for _n, _f in (("_np_max", "max"), ("_np_min", "min")):
    register(_n, params=_RED_NODT, infer=_np_reduce_rule("extreme"))(_np_reducer(_f))


# ------------------------------------------------------------- reshape
def np_newshape(shape, newshape):
    """NumPy's reshape rule: ``-1`` infers one dimension; the size must match."""
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    newshape = tuple(int(d) for d in newshape)
    size = 1
    for d in shape:
        size *= d
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise OpError("can only specify one unknown dimension")
    for d in newshape:
        if d < -1:
            raise OpError("negative dimensions not allowed: %s" % fmt(newshape))
    known = 1
    for d in newshape:
        if d != -1:
            known *= d
    if unknown:
        if known == 0 or size % known:
            raise OpError("cannot reshape array of shape %s into shape %s"
                          % (fmt(shape), fmt(newshape)))
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    elif known != size:
        raise OpError("cannot reshape array of size %d (shape %s) into shape %s"
                      % (size, fmt(shape), fmt(newshape)))
    return newshape


def _reshape_rule(attrs, shapes, dtypes):
    return (np_newshape(shapes[0], attrs["newshape"]),), (dtypes[0],)


@register("_np_reshape", params=[Param("newshape", p_shape, doc="the new shape"),
                                 Param("order", str, "C", choices=("C",))],
          infer=_reshape_rule)
def _np_reshape(xp, data, out, newshape, order="C"):
    """_np_reshape(a, newshape): a with NumPy's reshape rules."""
    out[...] = data.reshape(out.shape)


# ------------------------------------------------------------- gradients
def _cast_to(g, dtype):
    return g if g.dtype == dtype else g.astype(dtype)


def _np_bin(rule):
    def grad(F, attrs, ins, outs, og):
        a, b = ins
        y = outs[0]
        a2, b2 = _cast_to(a, y.dtype), _cast_to(b, y.dtype)
        ga, gb = rule(F, a2, b2, y, og[0])
        return [None if ga is None else _cast_to(unbroadcast(F, ga, a.shape), a.dtype),
                None if gb is None else _cast_to(unbroadcast(F, gb, b.shape), b.dtype)]
    return grad


def _bin_grads():
    from .elemwise import _BIN_GRADS
    g = _BIN_GRADS
    rows = {"_npi_add": _np_bin(g["add"]), "_npi_subtract": _np_bin(g["sub"]),
            "_npi_multiply": _np_bin(g["mul"]), "_npi_true_divide": _np_bin(g["div"]),
            "_npi_power": _np_bin(g["power"]), "_npi_maximum": _np_bin(g["maximum"]),
            "_npi_minimum": _np_bin(g["minimum"]), "_npi_hypot": _np_bin(g["hypot"]),
            "_npi_mod": _np_bin(g["mod"])}
    for n in _CMP:
        rows["_npi_" + n] = lambda F, at, ins, outs, og: [None, None]
        if not n.startswith("logical"):
            rows["_npi_%s_scalar" % n] = lambda F, at, ins, outs, og: [None]
    return rows


def _sc(rule):
    def grad(F, attrs, ins, outs, og):
        x = ins[0]
        y = outs[0]
        g = rule(F, _cast_to(x, y.dtype), y, og[0], attrs["scalar"])
        return [_cast_to(g, x.dtype)]
    return grad


def _red(name):
    def grad(F, attrs, ins, outs, og):
        from . import reduce as R
        if attrs["axis"] == ():           # nothing was reduced
            return [_cast_to(og[0], ins[0].dtype)]
        a = {"axis": attrs["axis"], "keepdims": attrs["keepdims"], "exclude": False}
        x = ins[0]
        fn = {"sum": R._sum_grad, "mean": R._mean_grad, "extreme": R._extreme_grad,
              "prod": R._prod_grad}[name]
        # computed in x's dtype (MXNet's backward casts the head gradient to it), so
        # an integer result dtype (mean(x, dtype='int8')) still gives x a real gradient
        wd = np.dtype(x.dtype)
        if wd.kind != "f":
            wd = np.dtype(outs[0].dtype) if np.dtype(outs[0].dtype).kind == "f" else _F32
        xs = _cast_to(x, wd)
        if wd != outs[0].dtype:
            outs = [_cast_to(outs[0], wd)]
            og = [_cast_to(og[0], wd)]
        g = fn(F, a, [xs], outs, og)[0]
        return [_cast_to(g, x.dtype)]
    return grad


_rows = _bin_grads()
_rows.update({
    "_npi_add_scalar": _sc(lambda F, x, y, g, s: g),
    "_npi_subtract_scalar": _sc(lambda F, x, y, g, s: g),
    "_npi_rsubtract_scalar": _sc(lambda F, x, y, g, s: -g),
    "_npi_multiply_scalar": _sc(lambda F, x, y, g, s: g * s),
    "_npi_true_divide_scalar": _sc(lambda F, x, y, g, s: g / s),
    "_npi_rtrue_divide_scalar": _sc(lambda F, x, y, g, s: -g * s / (x * x)),
    "_npi_power_scalar": _sc(lambda F, x, y, g, s: g * s * x ** (s - 1)),
    "_npi_rpower_scalar": _sc(lambda F, x, y, g, s: g * y * float(np.log(s))),
    "_npi_maximum_scalar": _sc(lambda F, x, y, g, s: g * (x >= s)),
    "_npi_minimum_scalar": _sc(lambda F, x, y, g, s: g * (x <= s)),
    "_npi_mod_scalar": _sc(lambda F, x, y, g, s: g),
    "_npi_rmod_scalar": _sc(lambda F, x, y, g, s: -g * F.floor(s / x)),
    "_np_sum": _red("sum"), "_npi_mean": _red("mean"), "_np_prod": _red("prod"),
    "_np_max": _red("extreme"), "_np_min": _red("extreme"),
    # NumPy reshape rules (a legacy reshape reads 0 as "keep this dimension")
    "_np_reshape": lambda F, at, ins, outs, og: [
        F._internal._np_reshape(og[0], newshape=ins[0].shape)],
})
set_grads(_rows)
