"""Elementwise ops: binary (broadcast_*, elemwise_*), with a scalar
(_plus_scalar, _rminus_scalar, ...) and unary math. Comparison results keep
the input dtype (1.0 / 0.0), as in MXNet."""
from __future__ import annotations

import numpy as np

from ._rules import broadcast, elemwise_same, unary
from .registry import Param, p_float, register



def _copy_fn(fn):
    import types
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _div(xp, a, b, out):
    if out.dtype.kind in "iu":
        q = xp.true_divide(a, b)
        xp.trunc(q, out=q)
        out[...] = q
    else:
        xp.true_divide(a, b, out=out)


def _mod(xp, a, b, out):
    if out.dtype.kind in "iu":
        with np.errstate(divide="ignore", invalid="ignore"):
            xp.mod(a, b, out=out)
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        xp.mod(a, b, out=out)
    zero = b == 0
    if getattr(zero, "any", lambda: zero)():
        xp.copyto(out, 0, where=zero)


def _power(xp, a, b, out):
    xp.power(a, b, out=out)


def _ufunc(name):
    def fn(xp, lhs, rhs, out):
        getattr(xp, name)(lhs, rhs, out=out)
    return fn


def _cmp(name):
    def fn(xp, a, b, out):
        getattr(xp, name)(a, b, out=out, casting="unsafe")
    return fn


def _logic(name):
    def fn(xp, a, b, out):
        getattr(xp, name)(a != 0, b != 0, out=out, casting="unsafe")
    return fn


BINARY = {
    "add": _ufunc("add"), "sub": _ufunc("subtract"), "mul": _ufunc("multiply"),
    "div": _div, "mod": _mod, "power": _power, "maximum": _ufunc("maximum"),
    "minimum": _ufunc("minimum"), "hypot": _ufunc("hypot"),
    "equal": _cmp("equal"), "not_equal": _cmp("not_equal"), "greater": _cmp("greater"),
    "greater_equal": _cmp("greater_equal"), "lesser": _cmp("less"),
    "lesser_equal": _cmp("less_equal"), "logical_and": _logic("logical_and"),
    "logical_or": _logic("logical_or"), "logical_xor": _logic("logical_xor"),
}


def _make_binary(opname, fn, infer, inputs=("lhs", "rhs")):
    def kernel(xp, lhs, rhs, out):
        fn(xp, lhs, rhs, out)
    if fn.__code__.co_varnames[:4] == ("xp", "lhs", "rhs", "out"):
        kernel = _copy_fn(fn)          # no extra call level on the hot path
    kernel.__doc__ = "%s(lhs, rhs): elementwise %s of two arrays." % (opname, opname.split("_", 1)[-1])
    register(opname, inputs=inputs, infer=infer, elemwise=True)(kernel)


for _k, _fn in BINARY.items():
    _make_binary("broadcast_" + _k, _fn, broadcast)

for _k, _alias in (("add", "_plus"), ("sub", "_minus"), ("mul", "_mul"), ("div", "_div")):
    _make_binary("elemwise_" + _k, BINARY[_k], elemwise_same)
    from .registry import alias as _aliasf
    _aliasf("elemwise_" + _k, _alias)
for _k in ("mod", "power", "maximum", "minimum", "hypot", "equal", "not_equal", "greater",
           "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or", "logical_xor"):
    _make_binary("_" + _k, BINARY[_k], elemwise_same)
from .registry import alias as _aliasf  # noqa: E402
_aliasf("broadcast_add", "broadcast_plus")
_aliasf("broadcast_sub", "broadcast_minus")
_aliasf("elemwise_add", "_add")
_aliasf("elemwise_sub", "_sub")
_aliasf("_power", "_Power")
_aliasf("_maximum", "_Maximum")
_aliasf("_minimum", "_Minimum")
_aliasf("_hypot", "_Hypot")
_aliasf("_mod", "_Mod")

# ----------------------------------------------------------------- scalar ops

_SCALAR = [Param("scalar", p_float, 1.0, "the scalar operand"),
           Param("is_int", lambda v: bool(int(v)) if isinstance(v, str) else bool(v), True)]


def _scalar_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


def _make_scalar(opname, fn, reverse=False):
    if reverse:
        def kernel(xp, data, out, scalar, is_int=True):
            fn(xp, out.dtype.type(scalar), data, out)
    else:
        def kernel(xp, data, out, scalar, is_int=True):
            fn(xp, data, out.dtype.type(scalar), out)
    kernel.__doc__ = "%s(data, scalar)" % opname
    register(opname, params=_SCALAR, infer=_scalar_rule, elemwise=True)(kernel)


for _name, _fn, _rev in (
        ("_plus_scalar", BINARY["add"], False), ("_minus_scalar", BINARY["sub"], False),
        ("_rminus_scalar", BINARY["sub"], True), ("_mul_scalar", BINARY["mul"], False),
        ("_div_scalar", _div, False), ("_rdiv_scalar", _div, True),
        ("_mod_scalar", _mod, False), ("_rmod_scalar", _mod, True),
        ("_power_scalar", _power, False), ("_rpower_scalar", _power, True),
        ("_maximum_scalar", BINARY["maximum"], False), ("_minimum_scalar", BINARY["minimum"], False),
        ("_hypot_scalar", BINARY["hypot"], False),
        ("_equal_scalar", BINARY["equal"], False), ("_not_equal_scalar", BINARY["not_equal"], False),
        ("_greater_scalar", BINARY["greater"], False),
        ("_greater_equal_scalar", BINARY["greater_equal"], False),
        ("_lesser_scalar", BINARY["lesser"], False),
        ("_lesser_equal_scalar", BINARY["lesser_equal"], False),
        ("_logical_and_scalar", BINARY["logical_and"], False),
        ("_logical_or_scalar", BINARY["logical_or"], False),
        ("_logical_xor_scalar", BINARY["logical_xor"], False)):
    _make_scalar(_name, _fn, _rev)
_aliasf("_plus_scalar", "_PlusScalar")
_aliasf("_minus_scalar", "_MinusScalar")
_aliasf("_rminus_scalar", "_RMinusScalar")
_aliasf("_mul_scalar", "_MulScalar")
_aliasf("_div_scalar", "_DivScalar")
_aliasf("_rdiv_scalar", "_RDivScalar")

# ------------------------------------------------------------------- unary


def _make_unary(opname, body, doc, aliases=()):
    def kernel(xp, data, out):
        body(xp, data, out)
    kernel.__doc__ = doc
    register(opname, infer=unary, elemwise=True, aliases=aliases)(kernel)


def _u(fname):
    def body(xp, x, out):
        getattr(xp, fname)(x, out=out)
    return body


def _relu(xp, x, out):
    xp.maximum(x, out.dtype.type(0), out=out)


def _sigmoid(xp, x, out):
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1
    xp.reciprocal(out, out=out)


def _rsqrt(xp, x, out):
    xp.sqrt(x, out=out)
    xp.reciprocal(out, out=out)


def _fix(xp, x, out):
    xp.trunc(x, out=out)


def _softsign(xp, x, out):
    xp.abs(x, out=out)
    out += 1
    xp.true_divide(x, out, out=out)


def _round(xp, x, out):
    # MXNet rounds half away from zero (C's round), numpy to even
    xp.copysign(xp.floor(xp.abs(x) + 0.5), x, out=out)


def _square(xp, x, out):
    xp.multiply(x, x, out=out)


def _copy(xp, x, out):
    xp.copyto(out, x)


for _name, _body in (
        ("negative", _u("negative")), ("abs", _u("absolute")), ("sign", _u("sign")),
        ("exp", _u("exp")), ("log", _u("log")), ("log2", _u("log2")), ("log10", _u("log10")),
        ("log1p", _u("log1p")), ("expm1", _u("expm1")), ("sqrt", _u("sqrt")),
        ("rsqrt", _rsqrt), ("cbrt", _u("cbrt")), ("square", _square),
        ("reciprocal", _u("reciprocal")), ("floor", _u("floor")), ("ceil", _u("ceil")),
        ("round", _round), ("rint", _u("rint")), ("fix", _fix), ("trunc", _u("trunc")),
        ("sin", _u("sin")), ("cos", _u("cos")), ("tan", _u("tan")), ("arcsin", _u("arcsin")),
        ("arccos", _u("arccos")), ("arctan", _u("arctan")), ("sinh", _u("sinh")),
        ("cosh", _u("cosh")), ("tanh", _u("tanh")), ("arcsinh", _u("arcsinh")),
        ("arccosh", _u("arccosh")), ("arctanh", _u("arctanh")), ("degrees", _u("degrees")),
        ("radians", _u("radians")), ("relu", _relu), ("sigmoid", _sigmoid),
        ("softsign", _softsign)):
    _make_unary(_name, _body, "%s(data): elementwise %s." % (_name, _name))

_make_unary("_copy", _copy, "_copy(data): a copy of data.", aliases=("identity",))
