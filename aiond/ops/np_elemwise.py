"""NumPy-interface elementwise ops (MXNet's ``_npi_*`` names): unary math,
the bool-valued predicates, rounding, ``nan_to_num``, the bitwise family,
``lcm``, ``ldexp`` and the scalar forms of ``copysign``/``arctan2``/``hypot``.

Dtype rules (in the ops, so a Symbol gets the same dtypes as an array):
float math (``exp``, ``sin``, ``sqrt``, ...) on integer or bool arrays gives
float32; ``negative``/``absolute``/``sign``/``square`` and the rounding ops
keep an integer dtype and compute bool arrays as float32 (MXNet's own
results for ``-bool_array``); predicates give bool. The kernels are the
legacy ops' bodies (``elemwise.py``) wherever MXNet shares them (``rint``
rounds ties down, as MXNet's does)."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from ._grad import set_grads, unbroadcast
from ._rules import broadcast_shapes
from .elemwise import _fix, _rint, _square, _u, cast_scalar
from .np_ops import _SCALAR, promote, scalar_result
from .registry import Param, alias, p_bool, p_float, p_int, register

_BOOL = np.dtype(np.bool_)
_F32 = np.dtype(np.float32)


def _errstate():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _cast_to(g, dtype):
    return g if g.dtype == dtype else g.astype(dtype)


# ------------------------------------------------------------- unary
def _float_rule(attrs, shapes, dtypes):
    d = dtypes[0]
    return (shapes[0],), (_F32 if d.kind in "iub" else d,)


def _keep_rule(attrs, shapes, dtypes):
    d = dtypes[0]
    return (shapes[0],), (_F32 if d.kind == "b" else d,)


def _bool_rule(attrs, shapes, dtypes):
    return (shapes[0],), (_BOOL,)


def _unary_kernel(body, int_exact=False):
    def kernel(xp, x, out):
        dt = out.dtype
        if int_exact and dt.kind in "iu":
            with _errstate():
                body(xp, x, out)
            return
        src = x if x.dtype == dt else x.astype(dt)
        with _errstate():
            body(xp, src, out)
    return kernel


def _copy_whole(body):
    # rounding an integer array leaves it as it is
    def inner(xp, x, out):
        if out.dtype.kind in "iu":
            xp.copyto(out, x)
        else:
            body(xp, x, out)
    return inner


_FLOAT_MATH = {
    "exp": _u("exp"), "expm1": _u("expm1"), "log": _u("log"), "log2": _u("log2"),
    "log10": _u("log10"), "log1p": _u("log1p"), "sqrt": _u("sqrt"), "cbrt": _u("cbrt"),
    "reciprocal": _u("reciprocal"), "sin": _u("sin"), "cos": _u("cos"), "tan": _u("tan"),
    "arcsin": _u("arcsin"), "arccos": _u("arccos"), "arctan": _u("arctan"),
    "sinh": _u("sinh"), "cosh": _u("cosh"), "tanh": _u("tanh"), "arcsinh": _u("arcsinh"),
    "arccosh": _u("arccosh"), "arctanh": _u("arctanh"), "degrees": _u("degrees"),
    "radians": _u("radians"), "rad2deg": _u("rad2deg"), "deg2rad": _u("deg2rad"),
}
_KEEP = {
    "negative": (_u("negative"), True), "absolute": (_u("absolute"), True),
    "sign": (_u("sign"), True), "square": (_square, True),
    "floor": (_copy_whole(_u("floor")), True), "ceil": (_copy_whole(_u("ceil")), True),
    "trunc": (_copy_whole(_u("trunc")), True), "rint": (_copy_whole(_rint), True),
    "fix": (_copy_whole(_fix), True),
}

for _n, _body in _FLOAT_MATH.items():
    k = _unary_kernel(_body)
    k.__doc__ = "_npi_%s(x): NumPy's %s elementwise (integer input gives float32)." % (_n, _n)
    register("_npi_" + _n, inputs=("x",), infer=_float_rule, elemwise=True)(k)
for _n, (_body, _exact) in _KEEP.items():
    k = _unary_kernel(_body, _exact)
    k.__doc__ = "_npi_%s(x): NumPy's %s elementwise (keeps integer dtypes)." % (_n, _n)
    register("_npi_" + _n, inputs=("x",), infer=_keep_rule, elemwise=True,
             aliases=("_npi_abs",) if _n == "absolute" else ())(k)


def _predicate(fname):
    def kernel(xp, x, out):
        if x.dtype.kind != "f":
            # integers and bools hold neither NaN nor infinities
            out.fill(fname == "isfinite")
            return
        if fname == "isposinf":      # (written with isinf: CuPy has no isposinf)
            xp.logical_and(xp.isinf(x), x > 0, out=out)
        elif fname == "isneginf":
            xp.logical_and(xp.isinf(x), x < 0, out=out)
        else:
            getattr(xp, fname)(x, out=out)
    kernel.__doc__ = "_npi_%s(x): NumPy's %s, a bool array." % (fname, fname)
    return kernel


for _n in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
    register("_npi_" + _n, inputs=("x",), infer=_bool_rule, elemwise=True)(_predicate(_n))


@register("_npi_logical_not", inputs=("x",), infer=_bool_rule, elemwise=True)
def _npi_logical_not(xp, x, out):
    """_npi_logical_not(x): NOT of x's truth values, a bool array."""
    xp.logical_not(x, out=out)


def _bitwise_rule(name):
    def rule(attrs, shapes, dtypes):
        for d in dtypes:
            if d.kind not in "iub":
                raise OpError("ufunc '%s' not supported for the input types (%s): it takes "
                              "integer or bool arrays" % (name, ", ".join(x.name for x in dtypes)))
        if len(shapes) == 1:
            return (shapes[0],), (dtypes[0],)
        return (broadcast_shapes(shapes[0], shapes[1]),), (np.result_type(*dtypes),)
    return rule


@register("_npi_bitwise_not", inputs=("x",), infer=_bitwise_rule("bitwise_not"), elemwise=True)
def _npi_bitwise_not(xp, x, out):
    """_npi_bitwise_not(x): bitwise NOT of an integer array (logical NOT of a bool one)."""
    xp.invert(x, out=out)


@register("_npi_around", inputs=("x",), params=[Param("decimals", p_int, 0)],
          infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)), elemwise=True)
def _npi_around(xp, x, out, decimals=0):
    """_npi_around(x, decimals): x rounded to ``decimals`` decimals, ties to
    even (a negative ``decimals`` rounds to tens, hundreds, ...)."""
    if x.dtype.kind == "b":
        xp.copyto(out, x)
        return
    with _errstate():
        # NumPy rounds integers with negative decimals in integer arithmetic
        xp.copyto(out, xp.around(x, decimals), casting="unsafe")


_NAN_TO_NUM = [Param("copy", p_bool, True, "write into a copy (False: into x itself)"),
               Param("nan", p_float, 0.0, "the value that replaces NaN"),
               Param("posinf", p_float, None, "the value for +inf (None: the dtype's largest)"),
               Param("neginf", p_float, None, "the value for -inf (None: the dtype's lowest)")]


@register("_npi_nan_to_num", params=_NAN_TO_NUM,
          infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)), elemwise=True)
def _npi_nan_to_num(xp, data, out, copy=True, nan=0.0, posinf=None, neginf=None):
    """_npi_nan_to_num(data, copy, nan, posinf, neginf): NaN and infinities
    replaced by finite numbers."""
    if data.dtype.kind != "f":
        xp.copyto(out, data)
        return
    fi = np.finfo(out.dtype)
    pos = fi.max if posinf is None else cast_scalar(posinf, out.dtype)
    neg = fi.min if neginf is None else cast_scalar(neginf, out.dtype)
    with _errstate():
        r = xp.where(xp.isnan(data), cast_scalar(nan, out.dtype), data)
        inf = xp.isinf(data)
        r = xp.where(inf & (data > 0), pos, r)
        r = xp.where(inf & (data < 0), neg, r)
    xp.copyto(out, r, casting="unsafe")


@register("_npi_backward_nan_to_num", inputs=("ograd", "data"), params=_NAN_TO_NUM,
          infer=lambda attrs, shapes, dtypes: ((shapes[1],), (dtypes[1],)), elemwise=True)
def _npi_backward_nan_to_num(xp, ograd, data, out, copy=True, nan=0.0, posinf=None,
                             neginf=None):
    """_npi_backward_nan_to_num(ograd, data): the gradient of nan_to_num: ograd
    where data is finite, 0 where nan_to_num replaced it."""
    if data.dtype.kind != "f":
        xp.copyto(out, ograd, casting="unsafe")
        return
    xp.copyto(out, xp.where(xp.isfinite(data), ograd, 0), casting="unsafe")


# ------------------------------------------------------------- binary
_INT_BINARY = {"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
               "bitwise_xor": "bitwise_xor", "lcm": "lcm"}


def _int_kernel(fname):
    def kernel(xp, lhs, rhs, out):
        getattr(xp, fname)(lhs, rhs, out=out, casting="unsafe")
    return kernel


def _int_scalar_kernel(fname):
    def kernel(xp, data, out, scalar, is_int=True):
        s = cast_scalar(scalar, out.dtype) if out.dtype.kind != "b" else bool(scalar)
        getattr(xp, fname)(data.astype(out.dtype, copy=False), s, out=out, casting="unsafe")
    return kernel


def _int_scalar_rule(name):
    def rule(attrs, shapes, dtypes):
        d = dtypes[0]
        if d.kind not in "iub" or not attrs["is_int"]:
            raise OpError("ufunc '%s' not supported for the input types (%s and a %s "
                          "scalar): it takes integers or bools"
                          % (name, d.name, "int" if attrs["is_int"] else "float"))
        if d.kind == "b":
            d = np.dtype(np.int64)
        return (shapes[0],), (d,)
    return rule


def _lcm_rule(attrs, shapes, dtypes):
    for d in dtypes:
        if d.kind not in "iu":
            raise OpError("ufunc 'lcm' not supported for the input types (%s): it takes "
                          "integer arrays" % ", ".join(x.name for x in dtypes))
    return _bitwise_rule("lcm")(attrs, shapes, dtypes)


for _n, _f in _INT_BINARY.items():
    infer = _lcm_rule if _n == "lcm" else _bitwise_rule(_n)
    register("_npi_" + _n, inputs=("lhs", "rhs"), infer=infer, elemwise=True)(_int_kernel(_f))
    register("_npi_%s_scalar" % _n, params=_SCALAR, infer=_int_scalar_rule(_n),
             elemwise=True)(_int_scalar_kernel(_f))


def _ldexp_rule(attrs, shapes, dtypes):
    if len(shapes) == 2:
        return (broadcast_shapes(shapes[0], shapes[1]),), (promote(dtypes[0], dtypes[1]),)
    return (shapes[0],), (scalar_result(dtypes[0], attrs["is_int"]),)


def _ldexp(xp, x1, x2, out):
    # x1 * 2**x2 in the result dtype (MXNet's ldexp takes any pair of dtypes)
    dt = out.dtype
    with _errstate():
        if dt.kind == "f":
            r = xp.asarray(x1, dtype=dt) * xp.power(dt.type(2), xp.asarray(x2, dtype=dt))
        else:
            r = xp.asarray(x1, dtype=np.float64) * xp.power(2.0, xp.asarray(x2, np.float64))
        xp.copyto(out, r, casting="unsafe")


@register("_npi_ldexp", inputs=("lhs", "rhs"), infer=_ldexp_rule, elemwise=True)
def _npi_ldexp(xp, lhs, rhs, out):
    """_npi_ldexp(x1, x2): x1 * 2**x2 elementwise."""
    _ldexp(xp, lhs, rhs, out)


@register("_npi_ldexp_scalar", params=_SCALAR, infer=_ldexp_rule, elemwise=True)
def _npi_ldexp_scalar(xp, data, out, scalar, is_int=True):
    """_npi_ldexp_scalar(x1, scalar): x1 * 2**scalar."""
    _ldexp(xp, data, scalar, out)


@register("_npi_rldexp_scalar", params=_SCALAR, infer=_ldexp_rule, elemwise=True)
def _npi_rldexp_scalar(xp, data, out, scalar, is_int=True):
    """_npi_rldexp_scalar(x2, scalar): scalar * 2**x2."""
    _ldexp(xp, scalar, data, out)


def _float_scalar_rule(attrs, shapes, dtypes):
    d = dtypes[0]
    return (shapes[0],), (_F32 if d.kind in "iub" else d,)


def _scalar_float_kernel(fname, reverse):
    def kernel(xp, data, out, scalar, is_int=True):
        s = out.dtype.type(scalar)
        x = data if data.dtype == out.dtype else data.astype(out.dtype)
        with _errstate():
            r = getattr(xp, fname)(s, x) if reverse else getattr(xp, fname)(x, s)
        xp.copyto(out, r, casting="unsafe")
    return kernel


for _n, _rev in (("copysign", False), ("rcopysign", True), ("arctan2", False),
                 ("rarctan2", True), ("hypot", False)):
    register("_npi_%s_scalar" % _n, params=_SCALAR, infer=_float_scalar_rule,
             elemwise=True)(_scalar_float_kernel(_n.lstrip("r") if _rev else _n, _rev))

# legacy ops MXNet also registers under NumPy-interface names
alias("clip", "_npi_clip")
alias("Custom", "_npi_Custom")


# ------------------------------------------------------------- gradients
def _un(rule):
    def grad(F, attrs, ins, outs, og):
        x, y = ins[0], outs[0]
        g = rule(F, _cast_to(x, y.dtype), y, og[0])
        return [_cast_to(g, x.dtype)]
    return grad


def _zero(F, attrs, ins, outs, og):
    return [F.zeros_like(x) for x in ins]


_DEG = 180.0 / math.pi
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_rows = {
    "_npi_negative": _un(lambda F, x, y, g: -g),
    "_npi_absolute": _un(lambda F, x, y, g: g * F.sign(x)),
    "_npi_square": _un(lambda F, x, y, g: g * 2 * x),
    "_npi_exp": _un(lambda F, x, y, g: g * y),
    "_npi_expm1": _un(lambda F, x, y, g: g * (y + 1)),
    "_npi_log": _un(lambda F, x, y, g: g / x),
    "_npi_log2": _un(lambda F, x, y, g: g / (x * _LN2)),
    "_npi_log10": _un(lambda F, x, y, g: g / (x * _LN10)),
    "_npi_log1p": _un(lambda F, x, y, g: g / (x + 1)),
    "_npi_sqrt": _un(lambda F, x, y, g: g / (2 * y)),
    "_npi_cbrt": _un(lambda F, x, y, g: g / (3 * y * y)),
    "_npi_reciprocal": _un(lambda F, x, y, g: -g * y * y),
    "_npi_sin": _un(lambda F, x, y, g: g * F.cos(x)),
    "_npi_cos": _un(lambda F, x, y, g: -g * F.sin(x)),
    "_npi_tan": _un(lambda F, x, y, g: g * (y * y + 1)),
    "_npi_arcsin": _un(lambda F, x, y, g: g / F.sqrt(1 - x * x)),
    "_npi_arccos": _un(lambda F, x, y, g: -g / F.sqrt(1 - x * x)),
    "_npi_arctan": _un(lambda F, x, y, g: g / (x * x + 1)),
    "_npi_sinh": _un(lambda F, x, y, g: g * F.cosh(x)),
    "_npi_cosh": _un(lambda F, x, y, g: g * F.sinh(x)),
    "_npi_tanh": _un(lambda F, x, y, g: g * (1 - y * y)),
    "_npi_arcsinh": _un(lambda F, x, y, g: g / F.sqrt(x * x + 1)),
    "_npi_arccosh": _un(lambda F, x, y, g: g / F.sqrt(x * x - 1)),
    "_npi_arctanh": _un(lambda F, x, y, g: g / (1 - x * x)),
    "_npi_degrees": _un(lambda F, x, y, g: g * _DEG),
    "_npi_rad2deg": _un(lambda F, x, y, g: g * _DEG),
    "_npi_radians": _un(lambda F, x, y, g: g * (1.0 / _DEG)),
    "_npi_deg2rad": _un(lambda F, x, y, g: g * (1.0 / _DEG)),
    "_npi_nan_to_num": lambda F, at, ins, outs, og: [
        F._internal._npi_backward_nan_to_num(
            og[0], ins[0], **{k: v for k, v in at.items() if v is not None})],
    "_npi_around": _zero,
    "_npi_bitwise_not": _zero,
    "_npi_logical_not": _zero,
}
for _n in ("sign", "floor", "ceil", "trunc", "rint", "fix", "isnan", "isinf", "isfinite",
           "isposinf", "isneginf"):
    _rows["_npi_" + _n] = _zero
for _n in _INT_BINARY:
    _rows["_npi_" + _n] = _zero
    _rows["_npi_%s_scalar" % _n] = _zero


def _np_bin(rule):
    def grad(F, attrs, ins, outs, og):
        a, b = ins
        y = outs[0]
        ga, gb = rule(F, _cast_to(a, y.dtype), _cast_to(b, y.dtype), y, og[0])
        return [None if ga is None else _cast_to(unbroadcast(F, ga, a.shape), a.dtype),
                None if gb is None else _cast_to(unbroadcast(F, gb, b.shape), b.dtype)]
    return grad


def _sc(rule):
    def grad(F, attrs, ins, outs, og):
        x, y = ins[0], outs[0]
        g = rule(F, _cast_to(x, y.dtype), y, og[0], attrs["scalar"])
        return [_cast_to(g, x.dtype)]
    return grad


def _copysign_sign(F, a, b):
    # d copysign(a, b) / da: +1 where a and b have the same sign, else -1
    same = (a * b) >= 0
    return same * 2 - 1


_rows.update({
    "_npi_arctan2": _np_bin(lambda F, a, b, y, g: (g * b / (a * a + b * b),
                                                   -g * a / (a * a + b * b))),
    "_npi_copysign": _np_bin(lambda F, a, b, y, g: (g * _copysign_sign(F, a, b),
                                                    F.zeros_like(b))),
    "_npi_ldexp": _np_bin(lambda F, a, b, y, g: (g * 2.0 ** b, g * y * _LN2)),
    "_npi_ldexp_scalar": _sc(lambda F, x, y, g, s: g * (2.0 ** s)),
    "_npi_rldexp_scalar": _sc(lambda F, x, y, g, s: g * y * _LN2),
    "_npi_copysign_scalar": _sc(lambda F, x, y, g, s: g * _copysign_sign(F, x, s)),
    "_npi_rcopysign_scalar": _sc(lambda F, x, y, g, s: F.zeros_like(x)),
    "_npi_arctan2_scalar": _sc(lambda F, x, y, g, s: g * s / (x * x + s * s)),
    "_npi_rarctan2_scalar": _sc(lambda F, x, y, g, s: -g * s / (x * x + s * s)),
    "_npi_hypot_scalar": _sc(lambda F, x, y, g, s: g * x / y),
})

set_grads(_rows)


@register("_npi_share_memory", inputs=("a", "b"), grad=lambda F, at, ins, outs, og: [None, None],
          infer=lambda attrs, shapes, dtypes: (((),), (_BOOL,)))
def _npi_share_memory(xp, a, b, out):
    """_npi_share_memory(a, b): whether a and b overlap in memory (a 0-d bool)."""
    out[...] = a.size > 0 and b.size > 0 and xp.shares_memory(a, b)
