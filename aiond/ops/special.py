"""MXNet 1.9.1's special functions (erf, erfinv, gamma, gammaln; digamma for
gammaln's gradient) and the remaining elementwise ops: hard_sigmoid,
logical_not, where and add_n."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._common import _cast_into, _n_inputs, _un
from ._rules import fmt, same_dtype
from ._nn_util import _ERFC_P, _ERFC_Q, _ERFC_R, _ERFC_S, _errstate, _need_float, _poly
from ._nn_util import erf as _erf
from .registry import Param, p_float, p_int, register


# ========================================================= special functions
_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_ERFINV_C = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_T = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
# Lanczos (g=7, n=9): ~1e-15 relative accuracy for x >= 0.5
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _erfc_pos(xp, a):
    """erfc(a) for a >= 0, accurate in the tail (Cephes)."""
    with _errstate():
        a = xp.minimum(a, 30.0)
        ez = xp.exp(-a * a)
        tail = xp.where(a < 8.0, ez * _poly(a, _ERFC_P) / _poly(a, _ERFC_Q),
                        ez * _poly(a, _ERFC_R) / _poly(a, _ERFC_S))
        return xp.where(a < 1.0, 1.0 - _erf(xp, a), tail)


def erfinv(xp, y):
    """erfinv in float64: Giles' approximation refined by two Halley steps."""
    y = xp.asarray(y, dtype=np.float64)
    with _errstate():
        a = xp.abs(y)
        w = -xp.log((1.0 - a) * (1.0 + a))
        x = xp.where(w < 5.0, _poly(w - 2.5, _ERFINV_C), _poly(xp.sqrt(w) - 3.0, _ERFINV_T)) * a
        x = xp.where(a < 1.0, x, 0.0)
        for _ in range(2):
            # f = erf(x) - a, from erfc in the tail where 1 - a is exact
            f = xp.where(a <= 0.5, _erf(xp, x) - a, (1.0 - a) - _erfc_pos(xp, x))
            d = (2.0 / _SQRT_PI) * xp.exp(-x * x)
            x = x - f / (d + x * f)
        x = xp.where(a == 1.0, xp.inf, xp.where(a > 1.0, xp.nan, x))
        return xp.copysign(x, y)


def _sinpi(xp, x):
    n = xp.round(x)
    s = xp.sin(math.pi * (x - n))
    return xp.where(xp.fmod(n, 2.0) != 0, -s, s)


def _cospi(xp, x):
    n = xp.round(x)
    c = xp.cos(math.pi * (x - n))
    return xp.where(xp.fmod(n, 2.0) != 0, -c, c)


def _lanczos(xp, z):
    s = z * 0 + _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], 1):
        s = s + c / (z + i)
    return s


def _gamma_pos(xp, x):
    z = x - 1.0
    t = z + 7.5
    half = t ** ((z + 0.5) * 0.5)           # split the power: no overflow before exp(-t)
    return math.sqrt(2.0 * math.pi) * half * (half * xp.exp(-t)) * _lanczos(xp, z)


def _lgamma_pos(xp, x):
    z = x - 1.0
    t = z + 7.5
    return _LOG_SQRT_2PI + (z + 0.5) * xp.log(t) - t + xp.log(_lanczos(xp, z))


# gamma and log-gamma of 1..171, exact where float64 can be: integer inputs
# (gamma of an int32 array) give whole numbers
_FACT = np.array([float(math.factorial(k - 1)) for k in range(1, 172)])
_LOG_FACT = np.array([math.lgamma(k) for k in range(1, 172)])


def _at_integers(xp, x, r, table):
    k = (x >= 1) & (x <= 171) & (x == xp.floor(x))
    if xp is np and not k.any():   # a shortcut numpy can take; a device would sync for it
        return r
    i = xp.clip(xp.where(k, x, 1), 1, 171).astype(np.int64) - 1
    return xp.where(k, xp.asarray(table)[i], r)


def gamma(xp, x):
    """The gamma function in float64 (C's tgamma: nan at negative integers)."""
    x = xp.asarray(x, dtype=np.float64)
    with _errstate():
        pos = x >= 0.5
        xr = xp.where(pos, x, 1.0 - x)
        g = _gamma_pos(xp, xr)
        r = xp.where(pos, g, math.pi / (_sinpi(xp, x) * g))
        r = xp.where(x == 0, xp.copysign(xp.inf, x), r)
        r = xp.where((x < 0) & (x == xp.floor(x)), xp.nan, r)
        r = _at_integers(xp, x, r, _FACT)
        return xp.where(xp.isinf(x) & (x > 0), xp.inf, r)


def gammaln(xp, x):
    """log|gamma(x)| in float64 (inf at non-positive integers)."""
    x = xp.asarray(x, dtype=np.float64)
    with _errstate():
        pos = x >= 0.5
        xr = xp.where(pos, x, 1.0 - x)
        lg = _lgamma_pos(xp, xr)
        r = xp.where(pos, lg, math.log(math.pi) - xp.log(xp.abs(_sinpi(xp, x))) - lg)
        r = xp.where((x <= 0) & (x == xp.floor(x)), xp.inf, r)
        r = _at_integers(xp, x, r, _LOG_FACT)
        return xp.where(xp.isinf(x), xp.inf, r)


def digamma(xp, x):
    """psi(x) = d/dx log gamma(x) in float64; at its poles (the non-positive
    integers) the largest float64, as MXNet's psi (inf once cast to float32)."""
    x = xp.asarray(x, dtype=np.float64)
    with _errstate():
        refl = x < 0.5
        y = xp.where(refl, 1.0 - x, x)
        res = xp.zeros_like(y)
        for _ in range(10):
            m = y < 10.0
            res = res - xp.where(m, 1.0 / y, 0.0)
            y = xp.where(m, y + 1.0, y)
        z = 1.0 / (y * y)
        ser = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (
            1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))))
        res = res + xp.log(y) - 0.5 / y - ser
        res = xp.where(refl, res - math.pi * _cospi(xp, x) / _sinpi(xp, x), res)
        return xp.where((x <= 0) & (x == xp.floor(x)), np.finfo(np.float64).max, res)


def _any_unary(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    return (tuple(shapes[0]),), (dtypes[0],)


def _special(name, fn, doc):
    def kernel(xp, data, out):
        _cast_into(xp, out, fn(xp, data))
    kernel.__name__ = name
    kernel.__doc__ = doc
    register(name, infer=_any_unary, elemwise=True)(kernel)


_special("erf", _erf, "erf(data): the error function (integer input: the result cast back).")
_special("erfinv", erfinv, "erfinv(data): the inverse error function (+-inf at +-1, nan "
         "outside [-1, 1]).")
_special("gamma", gamma, "gamma(data): the gamma function (nan at negative integers, "
         "+-inf at +-0).")
_special("gammaln", gammaln, "gammaln(data): log of the absolute value of the gamma function.")


@register("_backward_gammaln", inputs=("ograd", "data"),
          infer=lambda a, s, d: ((tuple(s[1]),), (d[1],)), elemwise=True)
def _backward_gammaln(xp, ograd, data, out):
    """_backward_gammaln(ograd, data): ograd * digamma(data), in the output's
    dtype as MXNet computes it (a pole's psi is inf in float32, so a zero
    ograd there gives nan)."""
    _cast_into(xp, out, digamma(xp, data))
    with _errstate():
        xp.multiply(out, ograd, out=out, casting="unsafe")


def _float_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    return (tuple(shapes[0]),), (dtypes[0],)


@register("hard_sigmoid", params=[Param("alpha", p_float, 0.2, "Slope of hard sigmoid"),
                                  Param("beta", p_float, 0.5, "Bias of hard sigmoid.")],
          infer=_float_rule, elemwise=True)
def hard_sigmoid(xp, data, out, alpha=0.2, beta=0.5):
    """hard_sigmoid(data, alpha=0.2, beta=0.5): clip(alpha * x + beta, 0, 1)."""
    t = out.dtype.type
    r = data * t(alpha) + t(beta)
    xp.clip(r, t(0), t(1), out=out)


@register("logical_not", infer=_any_unary, elemwise=True)
def logical_not(xp, data, out):
    """logical_not(data): 1 where data == 0, else 0, in data's dtype."""
    xp.copyto(out, data == 0, casting="unsafe")


# ===================================================================== where


def _where_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("condition", "x", "y"))
    c, x, y = (tuple(s) for s in shapes)
    if x != y:
        raise ShapeError("x has shape %s but y has %s; they must be equal" % (fmt(x), fmt(y)))
    if dtypes[1] != dtypes[2]:
        raise OpError("x has dtype %s but y has %s; they must be equal"
                      % (dtypes[1].name, dtypes[2].name))
    if c != x and not (len(c) == 1 and len(x) >= 1 and c[0] == x[0]):
        raise ShapeError("condition has shape %s; it must have x's shape %s or be 1-D of "
                         "size %d (x's first dimension)"
                         % (fmt(c), fmt(x), x[0] if x else 0))
    return (x,), (dtypes[1],)


@register("where", inputs=("condition", "x", "y"), infer=_where_rule)
def where(xp, condition, x, y, out):
    """where(condition, x, y): x where condition is nonzero, else y; condition
    has x's shape or is 1-D over x's first axis."""
    c = condition != 0
    if c.ndim != x.ndim:
        c = c.reshape(c.shape + (1,) * (x.ndim - 1))
    xp.copyto(out, xp.where(c, x, y))


# ===================================================================== add_n


def _add_n_rule(attrs, shapes, dtypes):
    if not shapes:
        raise OpError("needs at least one input")
    if attrs["num_args"] and attrs["num_args"] != len(shapes):
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], len(shapes)))
    s0 = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != s0:
            raise ShapeError("input %d has shape %s but input 0 has %s; all inputs must have "
                             "the same shape" % (i, fmt(s), fmt(s0)))
    return (s0,), (same_dtype(dtypes),)


@register("add_n", inputs=("*args",), variadic=True, aliases=("ElementWiseSum",),
          params=[Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs).")],
          infer=_add_n_rule, elemwise=True)
def add_n(xp, *args, out, num_args=0):
    """add_n(*args): the elementwise sum of arrays of equal shape."""
    xp.copyto(out, args[0])
    for a in args[1:]:
        out += a


# ============================================================ gradient table
from ._grad import set_grads  # noqa: E402


def _where_grad(F, attrs, ins, outs, og):
    c, x, g = ins[0], ins[1], og[0]
    z = F.zeros_like(g)
    return [None, F.where(c, g, z), F.where(c, z, g)]


_SQRT_PI_2 = math.sqrt(math.pi) / 2.0

set_grads({
    "erf": _un(lambda F, x, y, g, a: g * (2.0 / _SQRT_PI) * F.exp(-F.square(x))),
    "erfinv": _un(lambda F, x, y, g, a: g * _SQRT_PI_2 * F.exp(F.square(y))),
    "gammaln": _un(lambda F, x, y, g, a: F._internal._backward_gammaln(g, x)),
    "gamma": _un(lambda F, x, y, g, a: F._internal._backward_gammaln(g * y, x)),
    "hard_sigmoid": _un(lambda F, x, y, g, a: g * ((y > 0) * (y < 1)) * a["alpha"]),
    "logical_not": lambda F, at, ins, outs, og: [F.zeros_like(ins[0])],
    "where": _where_grad,
    "add_n": lambda F, at, ins, outs, og: [og[0]] * len(ins),
})
