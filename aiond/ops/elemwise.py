"""Elementwise ops: binary (broadcast_*, elemwise_*), with a scalar
(_plus_scalar, _rminus_scalar, ...) and unary math. Comparison results keep
the input dtype (1.0 / 0.0), as in MXNet. Integer arrays follow MXNet's C
casts: a scalar is cast to the array's dtype first (``int_array * 2.5``
multiplies by 2, ``uint8 + 300`` adds 44), float math (``exp``, ``sqrt``,
``**``) runs in float32 and is cast back."""
from __future__ import annotations

import numpy as np

from ._fast import relu_into
from ._rules import broadcast, elemwise_same, unary
from .registry import Param, p_float, register



def _copy_fn(fn):
    import types
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def cast_scalar(value, dtype):
    """``static_cast<DType>(value)`` as MXNet does it: out-of-range values wrap
    (``uint8(300.0) == 44``) instead of raising as numpy scalars do. ``dtype``
    is a numpy dtype (kernels pass ``out.dtype``)."""
    if dtype.kind == "f":
        return dtype.type(value)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.array(value, dtype=np.float64).astype(dtype)[()]


def _cast_into(xp, out, r):
    with np.errstate(invalid="ignore", over="ignore"):
        xp.copyto(out, r, casting="unsafe")


def _hypot(xp, lhs, rhs, out):
    if out.dtype.kind in "iub":
        r = xp.hypot(xp.asarray(lhs, dtype=np.float32), xp.asarray(rhs, dtype=np.float32))
        _cast_into(xp, out, r)
    else:
        xp.hypot(lhs, rhs, out=out)


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
    if isinstance(zero, (bool, np.bool_)):
        if zero:
            out[...] = 0
    elif xp is not np or zero.any():    # a device never asks (that would be a host sync)
        xp.copyto(out, 0, where=zero)


def _power(xp, a, b, out):
    if out.dtype.kind in "iub":
        # MXNet: powf on the values as float32, cast back (2 ** -1 == 0, 7 ** 11 rounded)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = xp.power(xp.asarray(a, dtype=np.float32), xp.asarray(b, dtype=np.float32))
        _cast_into(xp, out, r)
        return
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
    "minimum": _ufunc("minimum"), "hypot": _hypot,
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


_INT64 = np.dtype(np.int64)
_FLOAT64 = np.dtype(np.float64)


def _scalar_rule(attrs, shapes, dtypes):
    d = dtypes[0]
    if d.kind == "b":       # MXNet: a bool array with a scalar gives int64 (float64 if not is_int)
        d = _INT64 if attrs.get("is_int", True) else _FLOAT64
    return (shapes[0],), (d,)


def _make_scalar(opname, fn, reverse=False):
    if reverse:
        def kernel(xp, data, out, scalar, is_int=True):
            fn(xp, cast_scalar(scalar, out.dtype), data, out)
    else:
        def kernel(xp, data, out, scalar, is_int=True):
            fn(xp, data, cast_scalar(scalar, out.dtype), out)
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


def _make_unary(opname, body, doc, aliases=(), float_math=True):
    if opname in _INT_ROUNDING:
        def kernel(xp, data, out):
            if out.dtype.kind in "iu":      # already whole numbers
                xp.copyto(out, data)
            else:
                body(xp, data, out)
    elif float_math:
        def kernel(xp, data, out):
            if out.dtype.kind in "iu":
                # MXNet's math:: functions on integer types: float32 math (here
                # float64 rounded to float32), C cast back
                tmp = xp.empty(out.shape, dtype=np.float64)
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    body(xp, xp.asarray(data, dtype=np.float64), tmp)
                    _cast_into(xp, out, tmp.astype(np.float32))
            else:
                body(xp, data, out)
    else:
        def kernel(xp, data, out):
            body(xp, data, out)
    kernel.__doc__ = doc
    register(opname, infer=unary, elemwise=True, aliases=aliases)(kernel)


def _u(fname):
    def body(xp, x, out):
        getattr(xp, fname)(x, out=out)
    return body


def _relu(xp, x, out):
    relu_into(xp, x, out)


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


def _rint(xp, x, out):
    # MXNet's rint: the nearer of floor and ceil, ties to floor (rint(-0.5) == -1, rint(1.5) == 1)
    fl = xp.floor(x)
    ce = xp.ceil(x)
    xp.copyto(out, xp.where(x - fl <= ce - x, fl, ce))


def _square(xp, x, out):
    xp.multiply(x, x, out=out)


def _copy(xp, x, out):
    xp.copyto(out, x)


# unary ops that are exact on integers (no float round trip needed)
_INT_EXACT = frozenset(("negative", "abs", "sign", "square", "relu"))
# rounding ops leave integers as they are
_INT_ROUNDING = frozenset(("floor", "ceil", "round", "rint", "fix", "trunc"))


for _name, _body in (
        ("negative", _u("negative")), ("abs", _u("absolute")), ("sign", _u("sign")),
        ("exp", _u("exp")), ("log", _u("log")), ("log2", _u("log2")), ("log10", _u("log10")),
        ("log1p", _u("log1p")), ("expm1", _u("expm1")), ("sqrt", _u("sqrt")),
        ("rsqrt", _rsqrt), ("cbrt", _u("cbrt")), ("square", _square),
        ("reciprocal", _u("reciprocal")), ("floor", _u("floor")), ("ceil", _u("ceil")),
        ("round", _round), ("rint", _rint), ("fix", _fix), ("trunc", _u("trunc")),
        ("sin", _u("sin")), ("cos", _u("cos")), ("tan", _u("tan")), ("arcsin", _u("arcsin")),
        ("arccos", _u("arccos")), ("arctan", _u("arctan")), ("sinh", _u("sinh")),
        ("cosh", _u("cosh")), ("tanh", _u("tanh")), ("arcsinh", _u("arcsinh")),
        ("arccosh", _u("arccosh")), ("arctanh", _u("arctanh")), ("degrees", _u("degrees")),
        ("radians", _u("radians")), ("relu", _relu), ("sigmoid", _sigmoid),
        ("softsign", _softsign)):
    _make_unary(_name, _body, "%s(data): elementwise %s." % (_name, _name),
                float_math=_name not in _INT_EXACT)

_make_unary("_copy", _copy, "_copy(data): a copy of data.", aliases=("identity",),
            float_math=False)


@register("_identity_with_attr_like_rhs", inputs=("lhs", "rhs"), infer=elemwise_same)
def _identity_with_attr_like_rhs(xp, lhs, rhs, out):
    """_identity_with_attr_like_rhs(lhs, rhs): lhs, with its shape and dtype
    constrained to be rhs's (an internal op: lets shape inference run from
    rhs back to lhs)."""
    xp.copyto(out, lhs)

# ------------------------------------------------------------ gradient table
# One row per op: grad(F, attrs, inputs, outputs, out_grads) -> input grads.
import math as _math  # noqa: E402

from ._grad import set_grads, unbroadcast, zeros_grad  # noqa: E402


def _integral(x):
    """Whether ``x`` holds integers: MXNet's mod gradients (mod_grad,
    mod_rgrad, rmod_grad) are 0 for integer types, whatever the out-grad."""
    dt = getattr(x, "dtype", None)
    return dt is not None and np.dtype(dt).kind in "iub"


def _bin(rule):
    def grad(F, attrs, ins, outs, og):
        a, b = ins
        ga, gb = rule(F, a, b, outs[0], og[0])
        return [None if ga is None else unbroadcast(F, ga, a.shape),
                None if gb is None else unbroadcast(F, gb, b.shape)]
    return grad


_BIN_GRADS = {
    "add": lambda F, a, b, y, g: (g, g),
    "sub": lambda F, a, b, y, g: (g, -g),
    "mul": lambda F, a, b, y, g: (g * b, g * a),
    "div": lambda F, a, b, y, g: (g / b, -g * a / (b * b)),
    "power": lambda F, a, b, y, g: (g * b * a ** (b - 1), g * y * F.log(a)),
    "maximum": lambda F, a, b, y, g: (g * (a >= b), g * (a < b)),
    "minimum": lambda F, a, b, y, g: (g * (a <= b), g * (a > b)),
    "hypot": lambda F, a, b, y, g: (g * a / y, g * b / y),
    "mod": lambda F, a, b, y, g: ((F.zeros_like(a), F.zeros_like(b)) if _integral(a)
                                  else (g, -g * F.floor(a / b))),
}
_rows = {}
for _k, _r in _BIN_GRADS.items():
    _rows["broadcast_" + _k] = _bin(_r)
    if _k in ("add", "sub", "mul", "div"):
        _rows["elemwise_" + _k] = _bin(_r)
    else:
        _rows["_" + _k] = _bin(_r)
for _k in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
           "logical_and", "logical_or", "logical_xor"):
    _rows["broadcast_" + _k] = _rows["_" + _k] = lambda F, at, ins, outs, og: [None, None]


def _sc(rule):
    def grad(F, attrs, ins, outs, og):
        return [rule(F, ins[0], outs[0], og[0], attrs["scalar"])]
    return grad


_rows.update({
    "_plus_scalar": _sc(lambda F, x, y, g, s: g),
    "_minus_scalar": _sc(lambda F, x, y, g, s: g),
    "_rminus_scalar": _sc(lambda F, x, y, g, s: -g),
    "_mul_scalar": _sc(lambda F, x, y, g, s: g * s),
    "_div_scalar": _sc(lambda F, x, y, g, s: g / s),
    "_rdiv_scalar": _sc(lambda F, x, y, g, s: -g * s / (x * x)),
    "_power_scalar": _sc(lambda F, x, y, g, s: g * s * x ** (s - 1)),
    "_rpower_scalar": _sc(lambda F, x, y, g, s: g * y * _math.log(s)),
    "_maximum_scalar": _sc(lambda F, x, y, g, s: g * (x >= s)),
    "_minimum_scalar": _sc(lambda F, x, y, g, s: g * (x <= s)),
    "_mod_scalar": _sc(lambda F, x, y, g, s: F.zeros_like(x) if _integral(x) else g),
    "_rmod_scalar": _sc(lambda F, x, y, g, s: F.zeros_like(x) if _integral(x)
                        else -g * F.floor(s / x)),
    "_hypot_scalar": _sc(lambda F, x, y, g, s: g * x / y),
})
for _k in ("_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
           "_lesser_scalar", "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
           "_logical_xor_scalar"):
    _rows[_k] = lambda F, at, ins, outs, og: [None]


def _un(rule):
    def grad(F, attrs, ins, outs, og):
        return [rule(F, ins[0], outs[0], og[0])]
    return grad


_LN2, _LN10 = _math.log(2.0), _math.log(10.0)
_rows.update({
    "negative": _un(lambda F, x, y, g: -g),
    "abs": _un(lambda F, x, y, g: g * F.sign(x)),
    "exp": _un(lambda F, x, y, g: g * y),
    "log": _un(lambda F, x, y, g: g / x),
    "log2": _un(lambda F, x, y, g: g / (x * _LN2)),
    "log10": _un(lambda F, x, y, g: g / (x * _LN10)),
    "log1p": _un(lambda F, x, y, g: g / (x + 1)),
    "expm1": _un(lambda F, x, y, g: g * (y + 1)),
    "sqrt": _un(lambda F, x, y, g: g / (2 * y)),
    "rsqrt": _un(lambda F, x, y, g: g * -0.5 * y * y * y),
    "cbrt": _un(lambda F, x, y, g: g / (3 * y * y)),
    "square": _un(lambda F, x, y, g: g * 2 * x),
    "reciprocal": _un(lambda F, x, y, g: -g * y * y),
    "sin": _un(lambda F, x, y, g: g * F.cos(x)),
    "cos": _un(lambda F, x, y, g: -g * F.sin(x)),
    "tan": _un(lambda F, x, y, g: g * (1 + y * y)),
    "arcsin": _un(lambda F, x, y, g: g / F.sqrt(1 - x * x)),
    "arccos": _un(lambda F, x, y, g: -g / F.sqrt(1 - x * x)),
    "arctan": _un(lambda F, x, y, g: g / (1 + x * x)),
    "sinh": _un(lambda F, x, y, g: g * F.cosh(x)),
    "cosh": _un(lambda F, x, y, g: g * F.sinh(x)),
    "tanh": _un(lambda F, x, y, g: F._internal._backward_Activation(g, y, act_type="tanh")),
    "arcsinh": _un(lambda F, x, y, g: g / F.sqrt(x * x + 1)),
    "arccosh": _un(lambda F, x, y, g: g / F.sqrt(x * x - 1)),
    "arctanh": _un(lambda F, x, y, g: g / (1 - x * x)),
    "degrees": _un(lambda F, x, y, g: g * (180.0 / _math.pi)),
    "radians": _un(lambda F, x, y, g: g * (_math.pi / 180.0)),
    # from the output, as MXNet's (ElemwiseGradUseOut): Activation's one-op gradient
    "relu": _un(lambda F, x, y, g: F._internal._backward_Activation(g, y, act_type="relu")),
    "sigmoid": _un(lambda F, x, y, g: F._internal._backward_Activation(g, y,
                                                                    act_type="sigmoid")),
    "softsign": _un(lambda F, x, y, g: g / F.square(1 + F.abs(x))),
    "_copy": _un(lambda F, x, y, g: g),
    "_identity_with_attr_like_rhs": lambda F, at, ins, outs, og: [og[0],
                                                                 F.zeros_like(ins[1])],
})
for _k in ("sign", "floor", "ceil", "round", "rint", "fix", "trunc"):
    _rows[_k] = zeros_grad
set_grads(_rows)
