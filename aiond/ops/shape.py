"""The rest of MXNet 1.9.1's shape, indexing and elementwise surface:
special functions (erf, erfinv, gamma, gammaln), hard_sigmoid,
logical_not, where, add_n, argmax_channel, reshape_like, SwapAxis, reverse,
tile, repeat, Concat, stack, SliceChannel, slice_like, take, pick,
gather_nd, scatter_nd, one_hot, diag, Pad, ravel/unravel_index,
broadcast_like, broadcast_axis, shape_array, size_array, sort, argsort,
topk, SequenceMask / SequenceLast / SequenceReverse and boolean_mask.

MXNet behaviours kept on purpose (checked against MXNet 1.9.1):

- take/pick truncate float indices toward zero; 'clip' clips negatives to 0,
  'wrap' wraps them (-1 is the last); take(mode='raise') raises on an index
  outside [0, n) when the kernel runs (MXNet checks at run time too);
- gather_nd wraps negative indices (-n <= i < 0) and raises beyond; one_hot
  gives an all-off row for indices outside [0, depth);
- unravel_index uses C integer division and does not wrap the first
  dimension (99 in shape (7, 6) gives (16, 3)); ravel_multi_index does no
  range checks;
- repeat(..., repeats=0) has shape (0,) whatever the axis;
- sort / argsort / topk are stable: equal keys keep their order in both
  directions; topk(k=0) (or k < 0) returns all entries; topk's 'mask' has
  data's dtype whatever ``dtype`` says;
- SequenceMask accepts axis 0 or 1, SequenceReverse only axis 0; lengths
  are truncated to ints. Out-of-range lengths read garbage memory in MXNet;
  here SequenceLast clips them to [1, T] and SequenceReverse to [0, T].

Extensions over MXNet (where MXNet raises): Pad works on any rank and on
every axis (MXNet: 4-D/5-D, first two axes unpadded), boolean_mask on any
axis, broadcast_axis takes negative axes. Negative pad widths (which MXNet
turns into a crop) raise here.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import MXNetError, OpError, ShapeError
from ._rules import fmt, same_dtype
from .nn import _ERFC_P, _ERFC_Q, _ERFC_R, _ERFC_S, _errstate, _need_float, _poly
from .nn import erf as _erf
from .registry import Null, Param, p_bool, p_dtype, p_float, p_int, p_shape, p_str, register

_prod = math.prod
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _p_opt_int(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_int(v)


def _p_axes(v):
    """An int or a tuple of ints, always returned as a tuple."""
    s = p_shape(v)
    return () if s is None else s


def _p_opt_shape(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_shape(v)


def _n_inputs(shapes, names, why=""):
    if len(shapes) != len(names):
        raise OpError("expects %d input(s) (%s)%s, got %d"
                      % (len(names), ", ".join(names), why, len(shapes)))


def _axis(ax, ndim, name="axis"):
    if ndim == 0 or not -ndim <= ax < ndim:
        raise OpError("%s=%d is out of range for an array of %d dimension(s)" % (name, ax, ndim))
    return ax % ndim


def _cast_into(xp, out, r):
    with _errstate():
        xp.copyto(out, r, casting="unsafe")


def _outs(out):
    """A kernel's outputs as a list (a single-output call passes one array)."""
    return out if isinstance(out, (list, tuple)) else [out]


def _as_index(xp, a):
    """Indices as int64, truncated toward zero like MXNet's C casts."""
    if a.dtype.kind in "iub":
        return a.astype(np.int64, copy=False)
    with _errstate():
        return xp.trunc(a).astype(np.int64)


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
    if not k.any():
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
    """psi(x) = d/dx log gamma(x) in float64 (nan at non-positive integers)."""
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
        return xp.where((x <= 0) & (x == xp.floor(x)), xp.nan, res)


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
    """_backward_gammaln(ograd, data): ograd * digamma(data)."""
    _cast_into(xp, out, ograd * digamma(xp, data))


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


# ============================================================ argmax_channel


def _argmax_channel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("needs data with at least 2 dimensions (it reduces axis 1), got %s"
                         % fmt(s))
    return (s[:1] + s[2:],), (dtypes[0],)


@register("argmax_channel", infer=_argmax_channel_rule)
def argmax_channel(xp, data, out):
    """argmax_channel(data): argmax over axis 1, in data's dtype."""
    xp.copyto(out, xp.argmax(data, axis=1), casting="unsafe")


# ============================================================== reshape_like


def _like_range(ndim, side, begin, end):
    b = 0 if begin is None else begin
    if b < 0:
        b += ndim
    e = ndim if end is None else end
    if e < 0:
        e += ndim
    if e > ndim:
        raise OpError("%s_end=%s is invalid for an array of %d dimension(s)" % (side, end, ndim))
    if not b < e:
        raise OpError("invalid range %s_begin=%s, %s_end=%s for an array of %d dimension(s)"
                      % (side, begin, side, end, ndim))
    if e < 0 or b < 0:
        raise OpError("%s_begin=%s is invalid for an array of %d dimension(s)"
                      % (side, begin, ndim))
    return b, e


def _reshape_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    ls, rs = tuple(shapes[0]), tuple(shapes[1])
    lb, le = _like_range(len(ls), "lhs", attrs["lhs_begin"], attrs["lhs_end"])
    rb, re_ = _like_range(len(rs), "rhs", attrs["rhs_begin"], attrs["rhs_end"])
    out = ls[:lb] + rs[rb:re_] + ls[le:]
    if _prod(out) != _prod(ls):
        raise ShapeError("cannot reshape lhs of shape %s to %s (from rhs %s): different sizes"
                         % (fmt(ls), fmt(out), fmt(rs)))
    return (out,), (dtypes[0],)


_OPT_INT = lambda name, doc: Param(name, _p_opt_int, None, doc)  # noqa: E731


@register("reshape_like", inputs=("lhs", "rhs"), params=[
    _OPT_INT("lhs_begin", "First lhs axis to replace (default 0)."),
    _OPT_INT("lhs_end", "Axis after the last lhs axis to replace (default: ndim)."),
    _OPT_INT("rhs_begin", "First rhs axis to take (default 0)."),
    _OPT_INT("rhs_end", "Axis after the last rhs axis to take (default: ndim).")],
    infer=_reshape_like_rule)
def reshape_like(xp, lhs, rhs, out, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    """reshape_like(lhs, rhs): lhs reshaped to rhs's shape (or lhs axes
    [lhs_begin, lhs_end) replaced by rhs axes [rhs_begin, rhs_end))."""
    xp.copyto(out, lhs.reshape(out.shape))


# ========================================================= swapaxes / flip


def _swap_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = list(shapes[0])
    a = _axis(attrs["dim1"], len(s), "dim1")
    b = _axis(attrs["dim2"], len(s), "dim2")
    s[a], s[b] = s[b], s[a]
    return (tuple(s),), (dtypes[0],)


@register("SwapAxis", params=[Param("dim1", p_int, 0, "the first axis to be swapped."),
                              Param("dim2", p_int, 0, "the second axis to be swapped.")],
          infer=_swap_rule, aliases=("swapaxes",))
def swap_axis(xp, data, out, dim1=0, dim2=0):
    """SwapAxis(data, dim1=0, dim2=0): data with two axes interchanged."""
    xp.copyto(out, xp.swapaxes(data, dim1, dim2))


def _flip_axes(attrs, ndim):
    ax = attrs["axis"]
    return tuple(sorted(set(_axis(a, ndim) for a in ax)))


def _flip_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    _flip_axes(attrs, len(shapes[0]))
    return (tuple(shapes[0]),), (dtypes[0],)


@register("reverse", params=[Param("axis", _p_axes, doc="The axis (or axes) to reverse.")],
          infer=_flip_rule, aliases=("flip",))
def reverse(xp, data, out, axis):
    """reverse(data, axis): data with the order of elements along axis reversed."""
    xp.copyto(out, xp.flip(data, axis=_flip_axes({"axis": axis}, data.ndim)))


# ============================================================ tile / repeat


def _tile_shapes(shape, reps):
    shape, reps = tuple(shape), tuple(reps)
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + shape
    r = (1,) * (n - len(reps)) + reps
    return s, r


def _tile_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    reps = attrs["reps"]
    for r in reps:
        if r < 0:
            raise OpError("reps=%s: repetitions must be non-negative" % (tuple(reps),))
    s, r = _tile_shapes(shapes[0], reps)
    return (tuple(a * b for a, b in zip(s, r)),), (dtypes[0],)


@register("tile", params=[Param("reps", p_shape, doc="The number of times to repeat along "
                                "each axis (numpy's rules when the lengths differ).")],
          infer=_tile_rule)
def tile(xp, data, out, reps):
    """tile(data, reps): data repeated reps[i] times along axis i."""
    xp.copyto(out, xp.tile(data, tuple(reps)) if reps else data)


def _repeat_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    r = attrs["repeats"]
    if r < 0:
        raise OpError("repeats=%d cannot be negative" % r)
    ax = attrs["axis"]
    if ax is not None:
        ax = _axis(ax, len(s))
    if r == 0:
        return ((0,),), (dtypes[0],)       # MXNet: shape (0,) whatever the axis
    if ax is None:
        return ((_prod(s) * r,),), (dtypes[0],)
    return (s[:ax] + (s[ax] * r,) + s[ax + 1:],), (dtypes[0],)


@register("repeat", params=[Param("repeats", p_int, doc="The number of repetitions."),
                            Param("axis", _p_opt_int, None, "The axis (None: the flattened "
                                  "input).")], infer=_repeat_rule)
def repeat(xp, data, out, repeats, axis=None):
    """repeat(data, repeats, axis=None): each element repeated ``repeats`` times."""
    if out.size:
        xp.copyto(out, xp.repeat(data, repeats, axis=axis).reshape(out.shape))


# =============================================================== concat etc.


def _check_num_args(attrs, n):
    if n == 0:
        raise OpError("needs at least one input")
    if attrs["num_args"] and attrs["num_args"] != n:
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], n))


def _concat_rule(attrs, shapes, dtypes):
    _check_num_args(attrs, len(shapes))
    s0 = tuple(shapes[0])
    ax = _axis(attrs["dim"], len(s0), "dim")
    total = 0
    for i, s in enumerate(shapes):
        s = tuple(s)
        if len(s) != len(s0) or s[:ax] != s0[:ax] or s[ax + 1:] != s0[ax + 1:]:
            raise ShapeError("input %d has shape %s but input 0 has %s; they may differ only "
                             "along dim=%d" % (i, fmt(s), fmt(s0), attrs["dim"]))
        total += s[ax]
    return (s0[:ax] + (total,) + s0[ax + 1:],), (same_dtype(dtypes),)


_NUM_ARGS = Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs given).")


@register("Concat", inputs=("*data",), variadic=True, aliases=("concat",),
          params=[Param("dim", p_int, 1, "the dimension to be concated."), _NUM_ARGS],
          infer=_concat_rule)
def concat(xp, *data, out, dim=1, num_args=0):
    """Concat(*data, dim=1): arrays joined along axis dim."""
    xp.concatenate(data, axis=dim % out.ndim, out=out)


def _stack_rule(attrs, shapes, dtypes):
    _check_num_args(attrs, len(shapes))
    s0 = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != s0:
            raise ShapeError("input %d has shape %s but input 0 has %s; stack needs equal "
                             "shapes" % (i, fmt(s), fmt(s0)))
    nd = len(s0) + 1
    ax = _axis(attrs["axis"], nd)
    return (s0[:ax] + (len(shapes),) + s0[ax:],), (same_dtype(dtypes),)


@register("stack", inputs=("*data",), variadic=True,
          params=[Param("axis", p_int, 0, "The axis in the result array along which the input "
                        "arrays are stacked."), _NUM_ARGS], infer=_stack_rule)
def stack(xp, *data, out, axis=0, num_args=0):
    """stack(*data, axis=0): arrays of equal shape joined along a new axis."""
    xp.stack(data, axis=axis % out.ndim, out=out)


def _split_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    n = attrs["num_outputs"]
    ax = _axis(attrs["axis"], len(s))
    if n < 1:
        raise OpError("num_outputs=%d must be at least 1" % n)
    if s[ax] % n:
        raise ShapeError("cannot split axis %d of shape %s into num_outputs=%d equal parts "
                         "(%d is not divisible by %d)" % (ax, fmt(s), n, s[ax], n))
    k = s[ax] // n
    if attrs["squeeze_axis"]:
        if k != 1:
            raise ShapeError("squeeze_axis=True needs axis %d of size num_outputs=%d, got %d"
                             % (ax, n, s[ax]))
        o = s[:ax] + s[ax + 1:]
    else:
        o = s[:ax] + (k,) + s[ax + 1:]
    return (o,) * n, (dtypes[0],) * n


@register("SliceChannel", params=[
    Param("num_outputs", p_int, doc="Number of splits."),
    Param("axis", p_int, 1, "Axis along which to split."),
    Param("squeeze_axis", p_bool, False, "Remove the split axis (its parts must have size 1).")],
    infer=_split_rule, aliases=("split",), num_outputs=lambda a: a["num_outputs"],
    num_visible=lambda a: a["num_outputs"])
def slice_channel(xp, data, out, num_outputs, axis=1, squeeze_axis=False):
    """SliceChannel(data, num_outputs, axis=1, squeeze_axis=False): a list of
    num_outputs equal parts along axis (one array when num_outputs=1)."""
    outs = _outs(out)
    ax = axis % data.ndim
    k = data.shape[ax] // num_outputs
    key = [slice(None)] * data.ndim
    for i, o in enumerate(outs):
        key[ax] = slice(i * k, (i + 1) * k)
        xp.copyto(o, data[tuple(key)].reshape(o.shape))


# ================================================================ slice_like


def _slice_like_axes(attrs, s, like):
    axes = attrs["axes"]
    if not axes:
        if len(like) != len(s):
            raise ShapeError("shape_like has %d dimension(s) but data has %d; without axes all "
                             "dimensions are sliced" % (len(like), len(s)))
        return tuple(range(len(s)))
    res = []
    for a in axes:
        b = a + len(s) if a < 0 else a
        if not 0 <= b < len(s):
            raise OpError("axes=%s: axis %d is out of range for data of shape %s"
                          % (tuple(axes), a, fmt(s)))
        if b >= len(like):
            raise OpError("axes=%s: axis %d is out of range for shape_like of shape %s"
                          % (tuple(axes), a, fmt(like)))
        res.append(b)
    return tuple(res)


def _slice_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "shape_like"))
    s, like = tuple(shapes[0]), tuple(shapes[1])
    out = list(s)
    for a in _slice_like_axes(attrs, s, like):
        if like[a] > s[a]:
            raise ShapeError("axis %d of shape_like (%d) exceeds data's (%d)" % (a, like[a], s[a]))
        out[a] = like[a]
    return (tuple(out),), (dtypes[0],)


@register("slice_like", inputs=("data", "shape_like"),
          params=[Param("axes", _p_axes, (), "Axes to slice (default: all).")],
          infer=_slice_like_rule)
def slice_like(xp, data, shape_like, out, axes=()):
    """slice_like(data, shape_like, axes=()): data[:n0, :n1, ...] with shape_like's sizes."""
    xp.copyto(out, data[tuple(slice(0, n) for n in out.shape)])


# ====================================================================== take


def _take_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("a", "indices"))
    s, i = tuple(shapes[0]), tuple(shapes[1])
    ax = _axis(attrs["axis"], len(s))
    return (s[:ax] + i + s[ax + 1:],), (dtypes[0],)


def _fix_index(xp, idx, n, mode, op="take"):
    if mode == "wrap":
        return idx % n if n else idx
    if mode == "raise":
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise IndexError("%s: index %d is out of bounds for an axis of size %d (mode='raise')"
                             % (op, int(idx[bad].reshape(-1)[0]), n))
        return idx
    return xp.clip(idx, 0, max(n - 1, 0))


_MODES = ("clip", "raise", "wrap")


@register("take", inputs=("a", "indices"), params=[
    Param("axis", p_int, 0, "The axis of input array to be taken."),
    Param("mode", p_str, "clip", "clip, wrap or raise on out-of-range indices.", choices=_MODES)],
    infer=_take_rule)
def take(xp, a, indices, out, axis=0, mode="clip"):
    """take(a, indices, axis=0, mode='clip'): slices of a along axis at indices."""
    ax = axis % a.ndim
    idx = _fix_index(xp, _as_index(xp, indices), a.shape[ax], mode)
    xp.copyto(out, xp.take(a, idx, axis=ax).reshape(out.shape))


@register("_backward_take", inputs=("ograd", "indices", "a"), params=[
    Param("axis", p_int, 0), Param("mode", p_str, "clip", choices=_MODES)],
    infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_take(xp, ograd, indices, a, out, axis=0, mode="clip"):
    """_backward_take(ograd, indices, a): ograd summed into a's shape at the taken indices."""
    ax = axis % a.ndim
    n = a.shape[ax]
    idx = _fix_index(xp, _as_index(xp, indices), n, mode).reshape(-1)
    pre, post = _prod(a.shape[:ax]), _prod(a.shape[ax + 1:])
    out[...] = 0
    o3 = out.reshape(pre, n, post)
    xp.add.at(o3, (slice(None), idx), ograd.reshape(pre, idx.size, post))


# ====================================================================== pick


def _pick_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "index"))
    s = tuple(shapes[0])
    if attrs["axis"] is None:
        raise OpError("axis=None is not supported by pick (as in MXNet 1.9.1); give an axis")
    ax = _axis(attrs["axis"], len(s))
    o = s[:ax] + ((1,) if attrs["keepdims"] else ()) + s[ax + 1:]
    if _prod(shapes[1]) != _prod(o):
        raise ShapeError("index has shape %s but data %s with axis=%d needs %s"
                         % (fmt(shapes[1]), fmt(s), attrs["axis"], fmt(s[:ax] + s[ax + 1:])))
    return (o,), (dtypes[0],)


def _pick_index(xp, data, index, axis, mode):
    ax = axis % data.ndim
    kshape = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    idx = _as_index(xp, index).reshape(kshape)
    n = data.shape[ax]
    idx = idx % n if mode == "wrap" else xp.clip(idx, 0, n - 1)
    return ax, idx


_PICK = [Param("axis", _p_opt_int, -1, "The axis to pick along."),
         Param("keepdims", p_bool, False, "Keep the picked axis with size 1."),
         Param("mode", p_str, "clip", "clip or wrap out-of-range indices.",
               choices=("clip", "wrap"))]


@register("pick", inputs=("data", "index"), params=_PICK, infer=_pick_rule)
def pick(xp, data, index, out, axis=-1, keepdims=False, mode="clip"):
    """pick(data, index, axis=-1, keepdims=False, mode='clip'): one element per
    position along axis, chosen by index."""
    ax, idx = _pick_index(xp, data, index, axis, mode)
    xp.copyto(out, xp.take_along_axis(data, idx, axis=ax).reshape(out.shape))


@register("_backward_pick", inputs=("ograd", "index", "data"), params=_PICK,
          infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_pick(xp, ograd, index, data, out, axis=-1, keepdims=False, mode="clip"):
    """_backward_pick(ograd, index, data): ograd placed at the picked positions."""
    ax, idx = _pick_index(xp, data, index, axis, mode)
    out[...] = 0
    xp.put_along_axis(out, idx, ograd.reshape(idx.shape), axis=ax)


# ========================================================= gather / scatter


def _nd_index_rule(s_idx, data_shape, what):
    if len(s_idx) < 1:
        raise ShapeError("indices must have at least 1 dimension, got %s" % fmt(s_idx))
    m = s_idx[0]
    if m > len(data_shape):
        raise ShapeError("indices of shape %s index %d axes but %s has only %d"
                         % (fmt(s_idx), m, what, len(data_shape)))
    return m


def _gather_nd_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "indices"))
    s, i = tuple(shapes[0]), tuple(shapes[1])
    m = _nd_index_rule(i, s, "data %s" % fmt(s))
    return (i[1:] + s[m:] or (1,),), (dtypes[0],)


def _nd_key(xp, indices, shape):
    """A tuple index from (M, ...) indices: negatives wrap, beyond raises."""
    idx = _as_index(xp, indices)
    key = []
    for j in range(idx.shape[0]):
        n = shape[j]
        ij = idx[j]
        bad = (ij < -n) | (ij >= n)
        if bad.any():
            raise IndexError("index %d is out of bounds for axis %d with size %d"
                             % (int(ij[bad].reshape(-1)[0]), j, n))
        key.append(ij % n if n else ij)
    return tuple(key)


@register("gather_nd", inputs=("data", "indices"), infer=_gather_nd_rule)
def gather_nd(xp, data, indices, out):
    """gather_nd(data, indices): data[indices[0], indices[1], ...]; indices has
    shape (M, ...) and the result (...) + data.shape[M:]."""
    xp.copyto(out, data[_nd_key(xp, indices, data.shape)].reshape(out.shape))


def _scatter_nd_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "indices"))
    d, i = tuple(shapes[0]), tuple(shapes[1])
    shape = tuple(attrs["shape"])
    m = _nd_index_rule(i, shape, "shape=%s" % (shape,))
    want = i[1:] + shape[m:]
    if d != want and not (d == (1,) and not want):
        raise ShapeError("data has shape %s but indices %s and shape=%s need %s"
                         % (fmt(d), fmt(i), shape, fmt(want)))
    return (shape,), (dtypes[0],)


_SHAPE = [Param("shape", p_shape, doc="Shape of the output.")]


@register("scatter_nd", inputs=("data", "indices"), params=_SHAPE, infer=_scatter_nd_rule)
def scatter_nd(xp, data, indices, out, shape):
    """scatter_nd(data, indices, shape): zeros of shape with data written at
    indices (the last write wins for repeated indices)."""
    out[...] = 0
    key = _nd_key(xp, indices, out.shape)
    out[key] = data.reshape(out[key].shape)


@register("_backward_gather_nd", inputs=("data", "indices"), params=_SHAPE,
          infer=_scatter_nd_rule)
def _backward_gather_nd(xp, data, indices, out, shape):
    """_backward_gather_nd(data, indices, shape): like scatter_nd, but repeated
    indices accumulate (the gradient of gather_nd)."""
    out[...] = 0
    key = _nd_key(xp, indices, out.shape)
    xp.add.at(out, key, data.reshape(out[key].shape))


# =================================================================== one_hot


def _one_hot_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("indices",))
    if attrs["depth"] < 0:
        raise OpError("depth=%d cannot be negative" % attrs["depth"])
    return (tuple(shapes[0]) + (attrs["depth"],),), (attrs["dtype"],)


@register("one_hot", inputs=("indices",), params=[
    Param("depth", p_int, doc="Depth of the one hot dimension."),
    Param("on_value", p_float, 1.0, "The value assigned to the locations represented by indices."),
    Param("off_value", p_float, 0.0, "The value assigned to the locations not represented by "
          "indices."),
    Param("dtype", p_dtype, _F32, "DType of the output")], infer=_one_hot_rule)
def one_hot(xp, indices, out, depth, on_value=1.0, off_value=0.0, dtype=None):
    """one_hot(indices, depth, on_value=1, off_value=0, dtype='float32'): a
    one-hot vector per index (all off_value for indices outside [0, depth))."""
    idx = _as_index(xp, indices)
    hot = xp.arange(depth).reshape((1,) * idx.ndim + (depth,)) == idx[..., None]
    with _errstate():
        on = np.array(on_value).astype(out.dtype)
        off = np.array(off_value).astype(out.dtype)
    xp.copyto(out, xp.where(hot, on, off))


# ====================================================================== diag


def _diag_axes(attrs, ndim):
    a1 = _axis(attrs["axis1"], ndim, "axis1")
    a2 = _axis(attrs["axis2"], ndim, "axis2")
    if a1 == a2:
        raise OpError("axis1 and axis2 cannot refer to the same axis %d" % a1)
    return a1, a2


def _diag_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    k = attrs["k"]
    if len(s) == 0:
        raise ShapeError("data must have at least 1 dimension")
    if len(s) == 1:
        n = s[0] + abs(k)
        return ((n, n),), (dtypes[0],)
    a1, a2 = _diag_axes(attrs, len(s))
    n = min(s[a1] + min(k, 0), s[a2] - max(k, 0))
    if n <= 0:
        raise ShapeError("diagonal k=%d does not exist in data of shape %s (axis1=%d, axis2=%d)"
                         % (k, fmt(s), a1, a2))
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    return (rest + (n,),), (dtypes[0],)


_DIAG = [Param("k", p_int, 0, "Diagonal offset (positive: above the main diagonal)."),
         Param("axis1", p_int, 0, "The first axis of the sub-arrays."),
         Param("axis2", p_int, 1, "The second axis of the sub-arrays.")]


@register("diag", params=_DIAG, infer=_diag_rule)
def diag(xp, data, out, k=0, axis1=0, axis2=1):
    """diag(data, k=0, axis1=0, axis2=1): a 1-D array's diagonal matrix, or the
    k-th diagonal of the (axis1, axis2) sub-arrays, as the last axis."""
    if data.ndim == 1:
        xp.copyto(out, xp.diag(data, k))
    else:
        xp.copyto(out, xp.diagonal(data, k, axis1 % data.ndim, axis2 % data.ndim))


@register("_backward_diag", inputs=("ograd", "data"), params=_DIAG,
          infer=lambda at, s, d: ((tuple(s[1]),), (d[0],)))
def _backward_diag(xp, ograd, data, out, k=0, axis1=0, axis2=1):
    """_backward_diag(ograd, data): ograd put back on data's diagonal, zeros elsewhere."""
    if data.ndim == 1:
        xp.copyto(out, xp.diag(ograd, k))
        return
    out[...] = 0
    v = xp.moveaxis(out, (axis1 % data.ndim, axis2 % data.ndim), (-2, -1))
    i = xp.arange(ograd.shape[-1])
    v[..., i + max(-k, 0), i + max(k, 0)] = ograd


# ======================================================================= Pad


def _pad_pairs(attrs, ndim):
    pw = attrs["pad_width"]
    if len(pw) != 2 * ndim:
        raise OpError("pad_width=%s has %d entries but data has %d dimension(s); it needs "
                      "2 * ndim = %d (before, after) pairs" % (tuple(pw), len(pw), ndim, 2 * ndim))
    if any(p < 0 for p in pw):
        raise OpError("pad_width=%s: pad widths must be non-negative" % (tuple(pw),))
    return tuple((pw[2 * i], pw[2 * i + 1]) for i in range(ndim))


def _pad_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    pairs = _pad_pairs(attrs, len(s))
    if attrs["mode"] == "reflect":
        for i, (b, a) in enumerate(pairs):
            if (b or a) and (b >= s[i] or a >= s[i]):
                raise OpError("pad_width=%s: mode='reflect' needs pad widths smaller than the "
                              "axis size (axis %d has size %d)"
                              % (tuple(attrs["pad_width"]), i, s[i]))
    if attrs["mode"] == "edge":
        for i, (b, a) in enumerate(pairs):
            if (b or a) and s[i] == 0:
                raise OpError("mode='edge' cannot pad the empty axis %d" % i)
    return (tuple(d + b + a for d, (b, a) in zip(s, pairs)),), (dtypes[0],)


_PAD = [Param("mode", p_str, doc="constant, edge or reflect padding.",
              choices=("constant", "edge", "reflect")),
        Param("pad_width", p_shape, doc="(before, after) widths for every axis, flattened."),
        Param("constant_value", p_float, 0.0, "The value used for padding when mode is "
              "'constant'.")]


@register("Pad", params=_PAD, infer=_pad_rule, aliases=("pad",))
def pad(xp, data, out, mode, pad_width, constant_value=0.0):
    """Pad(data, mode, pad_width, constant_value=0): data padded on every axis
    by (before, after) widths: a constant, the edge values or a reflection."""
    pairs = _pad_pairs({"pad_width": pad_width}, data.ndim)
    if mode == "constant":
        with _errstate():
            out[...] = np.array(constant_value).astype(out.dtype)
        out[tuple(slice(b, b + d) for (b, _), d in zip(pairs, data.shape))] = data
    else:
        xp.copyto(out, xp.pad(data, pairs, mode=mode))


@register("_backward_Pad", inputs=("ograd",), params=_PAD + [Param("shape", p_shape)],
          infer=lambda at, s, d: ((tuple(at["shape"]),), (d[0],)))
def _backward_pad(xp, ograd, out, mode, pad_width, constant_value=0.0, shape=()):
    """_backward_Pad(ograd, mode, pad_width, shape): the gradient of Pad for an
    input of ``shape`` (padded positions add into the values they copy)."""
    pairs = _pad_pairs({"pad_width": pad_width}, len(shape))
    g = ograd
    if mode == "constant":
        xp.copyto(out, g[tuple(slice(b, b + d) for (b, _), d in zip(pairs, shape))])
        return
    for ax, ((b, a), n) in enumerate(zip(pairs, shape)):
        if not (b or a):
            continue
        src = xp.pad(xp.arange(n), (b, a), mode=mode)       # output position -> input position
        gm = xp.moveaxis(g, ax, 0)
        acc = xp.zeros((n,) + gm.shape[1:], dtype=g.dtype)
        xp.add.at(acc, src, gm)
        g = xp.moveaxis(acc, 0, ax)
    xp.copyto(out, g)


# ===================================================== ravel / unravel index


def _check_shape_param(attrs):
    shape = attrs["shape"]
    if not shape:
        raise OpError("shape=%s: a non-empty shape is required" % (shape,))
    if any(d == 0 for d in shape):
        raise OpError("shape=%s: dimensions cannot be 0" % (tuple(shape),))
    return tuple(shape)


def _ravel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    shape = _check_shape_param(attrs)
    s = tuple(shapes[0])
    if len(s) != 2:
        raise ShapeError("data must be 2-D (ndim, n) multi-indices, got shape %s" % fmt(s))
    if s[0] != len(shape):
        raise ShapeError("data has %d rows of indices but shape=%s has %d dimension(s)"
                         % (s[0], shape, len(shape)))
    return ((s[1],),), (dtypes[0],)


@register("_ravel_multi_index", params=[Param("shape", _p_opt_shape, None,
                                              "Shape of the array into which the multi-indices "
                                              "apply.")],
          infer=_ravel_rule, aliases=("ravel_multi_index",))
def ravel_multi_index(xp, data, out, shape=None):
    """ravel_multi_index(data, shape): flat indices from (ndim, n) multi-indices
    (no range checks, as in MXNet)."""
    if data.dtype.kind in "iu":
        r = xp.zeros(data.shape[1:], dtype=np.int64)
        for j, d in enumerate(shape):
            r = r * d + data[j]
    else:
        r = xp.zeros(data.shape[1:], dtype=np.float64)
        with _errstate():
            for j, d in enumerate(shape):
                r = xp.trunc(r * d + data[j])
    _cast_into(xp, out, r)


def _unravel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    shape = _check_shape_param(attrs)
    return ((len(shape),) + tuple(shapes[0]),), (dtypes[0],)


@register("_unravel_index", params=[Param("shape", _p_opt_shape, None,
                                          "Shape of the array into which the indices apply.")],
          infer=_unravel_rule, aliases=("unravel_index",))
def unravel_index(xp, data, out, shape=None):
    """unravel_index(data, shape): (ndim, ...) multi-indices of flat indices, with
    C integer division (the first dimension is not wrapped)."""
    idx = _as_index(xp, data)
    for j in range(len(shape) - 1, 0, -1):
        d = shape[j]
        q = xp.abs(idx) // abs(d) * (xp.sign(idx) * (1 if d > 0 else -1))   # C's truncation
        _cast_into(xp, out[j], idx - q * d)
        idx = q
    _cast_into(xp, out[0], idx)


# ============================================================ broadcast_like


def _bcast_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    ls, rs = tuple(shapes[0]), tuple(shapes[1])
    la, ra = attrs["lhs_axes"], attrs["rhs_axes"]
    if la is None and ra is None:
        if len(ls) != len(rs):
            raise ShapeError("lhs of shape %s cannot be broadcast like rhs of shape %s (different "
                             "numbers of dimensions)" % (fmt(ls), fmt(rs)))
        out = []
        for i, (a, b) in enumerate(zip(ls, rs)):
            if a != b and a != 1:
                raise ShapeError("lhs of shape %s cannot be broadcast to %s (axis %d)"
                                 % (fmt(ls), fmt(rs), i))
            out.append(b)
        return (tuple(out),), (dtypes[0],)
    if la is None or ra is None or len(la) != len(ra):
        raise OpError("lhs_axes=%s and rhs_axes=%s must both be given, with the same length"
                      % (la, ra))
    out = list(ls)
    for a, b in zip(la, ra):
        a2 = _axis(a, len(ls), "lhs_axes")
        b2 = _axis(b, len(rs), "rhs_axes")
        if ls[a2] != 1 and ls[a2] != rs[b2]:
            raise ShapeError("lhs axis %d of size %d cannot be broadcast to %d (rhs axis %d)"
                             % (a2, ls[a2], rs[b2], b2))
        out[a2] = rs[b2]
    return (tuple(out),), (dtypes[0],)


@register("broadcast_like", inputs=("lhs", "rhs"), params=[
    Param("lhs_axes", _p_opt_shape, None, "Axes of lhs to broadcast (default: all)."),
    Param("rhs_axes", _p_opt_shape, None, "Axes of rhs whose sizes to use (default: all).")],
    infer=_bcast_like_rule)
def broadcast_like(xp, lhs, rhs, out, lhs_axes=None, rhs_axes=None):
    """broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None): lhs broadcast to
    rhs's shape (or to rhs's sizes on the given axes)."""
    xp.copyto(out, xp.broadcast_to(lhs, out.shape))


def _bcast_axis_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = list(shapes[0])
    axes, sizes = attrs["axis"], attrs["size"]
    if len(axes) != len(sizes):
        raise OpError("axis=%s and size=%s must have the same length" % (tuple(axes), tuple(sizes)))
    for a, n in zip(axes, sizes):
        a2 = _axis(a, len(s))
        if s[a2] != 1:
            raise ShapeError("axis %d has size %d; broadcast_axis needs size-1 axes" % (a, s[a2]))
        if n < 0:
            raise OpError("size=%s cannot be negative" % (tuple(sizes),))
        s[a2] = n
    return (tuple(s),), (dtypes[0],)


@register("broadcast_axis", params=[
    Param("axis", _p_axes, (), "The axes to perform the broadcasting."),
    Param("size", _p_axes, (), "Target sizes of the broadcasting axes.")],
    infer=_bcast_axis_rule, aliases=("broadcast_axes",))
def broadcast_axis(xp, data, out, axis=(), size=()):
    """broadcast_axis(data, axis, size): size-1 axes broadcast to the given sizes."""
    xp.copyto(out, xp.broadcast_to(data, out.shape))


# ================================================== shape_array / size_array


@register("shape_array", infer=lambda at, s, d: (((len(s[0]),),), (_I64,)))
def shape_array(xp, data, out):
    """shape_array(data): data's shape as a 1-D int64 array."""
    out[...] = xp.asarray(data.shape, dtype=np.int64)


@register("size_array", infer=lambda at, s, d: (((1,),), (_I64,)))
def size_array(xp, data, out):
    """size_array(data): data's size as a (1,) int64 array."""
    out[...] = data.size


# ======================================================= sort / argsort / topk


def _sort_axis(attrs, s):
    ax = attrs["axis"]
    if ax is None:
        return None
    if not -len(s) <= ax < len(s):
        raise OpError("axis=%d is out of range for an array of %d dimension(s)" % (ax, len(s)))
    return ax % len(s)


def _stable_order(xp, data, axis, ascend):
    """Stable argsort (equal keys keep their order, in both directions)."""
    x = data.reshape(-1) if axis is None else data
    ax = 0 if axis is None else axis
    if not ascend:
        if x.dtype.kind in "ub":
            x = x.astype(np.int64)
        x = -x
    return xp.argsort(x, axis=ax, kind="stable")


_SORT_AXIS = Param("axis", _p_opt_int, -1, "Axis along which to sort (None: the flattened "
                   "array).")


def _sort_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    o = (_prod(s),) if _sort_axis(attrs, s) is None else s
    return (o, o), (dtypes[0], _I64)


@register("sort", params=[_SORT_AXIS, Param("is_ascend", p_bool, True, "Ascending order.")],
          infer=_sort_rule, num_outputs=2, output_names=("output", "indices"),
          num_visible=lambda a: 1)
def sort(xp, data, out, axis=-1, is_ascend=True):
    """sort(data, axis=-1, is_ascend=True): sorted copy (stable)."""
    y, idx = out
    ax = None if axis is None else axis % data.ndim
    order = _stable_order(xp, data, ax, is_ascend)
    src = data.reshape(-1) if ax is None else data
    xp.copyto(y, xp.take_along_axis(src, order, axis=0 if ax is None else ax))
    xp.copyto(idx, order)


def _argsort_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    o = (_prod(s),) if _sort_axis(attrs, s) is None else s
    return (o,), (attrs["dtype"],)


@register("argsort", params=[_SORT_AXIS, Param("is_ascend", p_bool, True, "Ascending order."),
                             Param("dtype", p_dtype, _F32, "DType of the output indices.")],
          infer=_argsort_rule)
def argsort(xp, data, out, axis=-1, is_ascend=True, dtype=None):
    """argsort(data, axis=-1, is_ascend=True, dtype='float32'): the indices that
    sort data (stable), in dtype."""
    ax = None if axis is None else axis % data.ndim
    _cast_into(xp, out, _stable_order(xp, data, ax, is_ascend))


_RET_TYPES = ("both", "indices", "mask", "value")


def _topk_k(attrs, s):
    ax = _sort_axis(attrs, s)
    n = _prod(s) if ax is None else s[ax]
    k = attrs["k"]
    if k > n:
        raise OpError("k=%d is larger than the %d element(s) along the %s" % (
            k, n, "flattened array" if ax is None else "axis %d" % ax))
    return ax, (n if k <= 0 else k)


def _topk_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    ax, k = _topk_k(attrs, s)
    t = attrs["ret_typ"]
    if t == "mask":
        return (s,), (dtypes[0],)
    o = (k,) if ax is None else s[:ax] + (k,) + s[ax + 1:]
    if t == "indices":
        return (o,), (attrs["dtype"],)
    if t == "value":
        return (o, o), (dtypes[0], _I64)
    return (o, o, o), (dtypes[0], attrs["dtype"], _I64)


@register("topk", params=[
    _SORT_AXIS, Param("k", p_int, 1, "Number of top elements to select (<= 0: all)."),
    Param("ret_typ", p_str, "indices", "value, indices, both (value, indices) or mask.",
          choices=_RET_TYPES),
    Param("is_ascend", p_bool, False, "Select the smallest (True) or largest elements."),
    Param("dtype", p_dtype, _F32, "DType of the output indices.")],
    infer=_topk_rule, num_outputs=lambda a: {"mask": 1, "indices": 1, "value": 2}.get(
        a["ret_typ"], 3),
    num_visible=lambda a: 2 if a["ret_typ"] == "both" else 1)
def topk(xp, data, out, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype=None):
    """topk(data, axis=-1, k=1, ret_typ='indices', is_ascend=False): the k
    largest (smallest if is_ascend) elements along axis: their values, indices,
    both, or a 0/1 mask over data."""
    ax = None if axis is None else axis % data.ndim
    n = data.size if ax is None else data.shape[ax]
    kk = n if k <= 0 else k
    order = _stable_order(xp, data, ax, is_ascend)
    a = 0 if ax is None else ax
    top = order[:kk] if ax is None else xp.take(order, xp.arange(kk), axis=a)
    outs = _outs(out)
    if ret_typ == "mask":
        m = xp.zeros(data.size if ax is None else data.shape, dtype=out.dtype)
        xp.put_along_axis(m, top, m.dtype.type(1), axis=a)
        xp.copyto(outs[0], m.reshape(data.shape))
        return
    if ret_typ == "indices":
        _cast_into(xp, outs[0], top)
        return
    src = data.reshape(-1) if ax is None else data
    xp.copyto(outs[0], xp.take_along_axis(src, top, axis=a))
    if ret_typ == "both":
        _cast_into(xp, outs[1], top)
    xp.copyto(outs[-1], top)


@register("_backward_sort", inputs=("ograd", "indices", "data"), params=[_SORT_AXIS],
          infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_sort(xp, ograd, indices, data, out, axis=-1):
    """_backward_sort(ograd, indices, data): ograd scattered back to the positions
    the sort/topk indices (int64) came from; zeros elsewhere."""
    out[...] = 0
    if axis is None:
        out.reshape(-1)[indices.reshape(-1)] = ograd.reshape(-1)
    else:
        xp.put_along_axis(out, indices, ograd, axis=axis % data.ndim)


# ========================================================== Sequence* ops


def _seq_rule(kind):
    def rule(attrs, shapes, dtypes):
        use = attrs["use_sequence_length"]
        if use:
            _n_inputs(shapes, ("data", "sequence_length"), " with use_sequence_length=True")
        else:
            _n_inputs(shapes, ("data",), " (pass use_sequence_length=True to use "
                      "sequence_length)")
        s = tuple(shapes[0])
        ax = attrs["axis"]
        allowed = (0,) if kind == "reverse" else (0, 1)
        if len(s) < 2:
            raise ShapeError("data must have at least 2 dimensions (time and batch), got %s"
                             % fmt(s))
        if ax not in allowed:
            raise OpError("axis=%d is not supported; expected %s" % (
                ax, " or ".join(str(a) for a in allowed)))
        if use:
            batch = s[1 - ax]
            if tuple(shapes[1]) != (batch,):
                raise ShapeError("sequence_length has shape %s but expected (%d,) (the batch "
                                 "size of data %s)" % (fmt(shapes[1]), batch, fmt(s)))
        if kind == "last":
            return (s[:ax] + s[ax + 1:],), (dtypes[0],)
        return (s,), (dtypes[0],)
    return rule


def _optional(*names):
    def deco(kernel):
        kernel.optional_inputs = frozenset(names)
        return kernel
    return deco


def _seq_len(xp, length, T):
    return xp.clip(_as_index(xp, length), 0, T)


def _bcast_len(L, ndim, axis):
    """(batch,) lengths shaped to broadcast against data (time axis ``axis``)."""
    shp = [1] * ndim
    shp[1 - axis] = L.shape[0]
    return L.reshape(shp)


def _seq_params(*extra):
    return [Param("use_sequence_length", p_bool, False, "Use the sequence_length input."),
            *extra, Param("axis", p_int, 0, "The sequence axis (0: (T, N, ...), 1: (N, T, ...)).")]


@register("SequenceMask", inputs=("data", "sequence_length"),
          params=_seq_params(Param("value", p_float, 0.0, "The value to be used as mask.")),
          infer=_seq_rule("mask"))
@_optional("sequence_length")
def sequence_mask(xp, data, *length, out, use_sequence_length=False, value=0.0, axis=0):
    """SequenceMask(data, sequence_length=None, use_sequence_length=False, value=0,
    axis=0): positions at or after each sequence's length set to value."""
    if not use_sequence_length:
        xp.copyto(out, data)
        return
    T = data.shape[axis]
    L = _bcast_len(_seq_len(xp, length[0], T), data.ndim, axis)
    shp = [1] * data.ndim
    shp[axis] = T
    keep = xp.arange(T).reshape(shp) < L
    with _errstate():
        v = np.array(value).astype(out.dtype)
    xp.copyto(out, xp.where(keep, data, v))


def _last_index(xp, data, length, axis):
    T = data.shape[axis]
    if length:
        idx = xp.clip(_as_index(xp, length[0]) - 1, 0, T - 1)
    else:
        idx = xp.full((data.shape[1 - axis],), T - 1, dtype=np.int64)
    shp = [1] * data.ndim
    shp[1 - axis] = idx.shape[0]
    return idx.reshape(shp)


@register("SequenceLast", inputs=("data", "sequence_length"), params=_seq_params(),
          infer=_seq_rule("last"))
@_optional("sequence_length")
def sequence_last(xp, data, *length, out, use_sequence_length=False, axis=0):
    """SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0):
    the last valid element of each sequence (axis removed)."""
    idx = _last_index(xp, data, length if use_sequence_length else (), axis)
    xp.copyto(out, xp.take_along_axis(data, idx, axis=axis).reshape(out.shape))


@register("_backward_SequenceLast", inputs=("ograd", "data", "sequence_length"),
          params=_seq_params(), infer=lambda at, s, d: ((tuple(s[1]),), (d[0],)))
@_optional("sequence_length")
def _backward_sequence_last(xp, ograd, data, *length, out, use_sequence_length=False, axis=0):
    """_backward_SequenceLast(ograd, data, sequence_length): ograd at the picked steps."""
    idx = _last_index(xp, data, length if use_sequence_length else (), axis)
    out[...] = 0
    xp.put_along_axis(out, idx, xp.expand_dims(ograd, axis), axis=axis)


@register("SequenceReverse", inputs=("data", "sequence_length"), params=_seq_params(),
          infer=_seq_rule("reverse"))
@_optional("sequence_length")
def sequence_reverse(xp, data, *length, out, use_sequence_length=False, axis=0):
    """SequenceReverse(data, sequence_length=None, use_sequence_length=False): the
    first sequence_length steps of each sequence reversed (all T steps without
    lengths); the rest unchanged."""
    T = data.shape[0]
    if not use_sequence_length:
        xp.copyto(out, data[::-1])
        return
    L = _seq_len(xp, length[0], T).reshape(1, -1)
    t = xp.arange(T).reshape(-1, 1)
    src = xp.where(t < L, L - 1 - t, t)                  # (T, batch)
    src = src.reshape(src.shape + (1,) * (data.ndim - 2))
    xp.copyto(out, xp.take_along_axis(data, src, axis=0))


# ============================================================== boolean_mask
# The result's length is the number of nonzero mask entries: a value, not a
# shape. aiond infers every shape at push time without waiting for data, so
# ``boolean_mask`` (below) reads the mask only when it is already computed,
# through an inline engine read that never blocks; the count travels to the
# op as the hidden attribute ``_count``.


def _bmask_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "index"))
    s, m = tuple(shapes[0]), tuple(shapes[1])
    ax = _axis(attrs["axis"], len(s))
    if len(m) != 1 or m[0] != s[ax]:
        raise ShapeError("index has shape %s but expected (%d,) (data's axis %d)"
                         % (fmt(m), s[ax] if s else 0, ax))
    n = attrs.get("_count")
    if n is None:
        raise OpError("the result's shape depends on the values of index; call it as "
                      "aiond.ops.shape.boolean_mask(data, index, axis) (mx.nd.contrib."
                      "boolean_mask), which reads a computed index")
    return (s[:ax] + (n,) + s[ax + 1:],), (dtypes[0],)


@register("_contrib_boolean_mask", inputs=("data", "index"),
          params=[Param("axis", p_int, 0, "The axis to select along.")], infer=_bmask_rule)
def _contrib_boolean_mask(xp, data, index, out, axis=0, _count=None):
    """boolean_mask(data, index, axis=0): the slices of data along axis where index
    is nonzero."""
    ax = axis % data.ndim
    sel = xp.nonzero(index.reshape(-1) != 0)[0]
    xp.copyto(out, xp.take(data, sel, axis=ax))


@register("_backward_boolean_mask", inputs=("ograd", "index", "data"),
          params=[Param("axis", p_int, 0)], infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_boolean_mask(xp, ograd, index, data, out, axis=0):
    """_backward_boolean_mask(ograd, index, data): ograd at the selected slices."""
    ax = axis % data.ndim
    sel = xp.nonzero(index.reshape(-1) != 0)[0]
    out[...] = 0
    key = [slice(None)] * data.ndim
    key[ax] = sel
    out[tuple(key)] = ograd


def boolean_mask(data, index, axis=0, out=None, name=None):
    """``mx.nd.contrib.boolean_mask(data, index, axis=0)``: the slices of data
    along axis where index is nonzero (MXNet 1.9.1 supports axis 0 only).

    The result's shape depends on index's values, so index must already be
    computed when this is called: the count is read through an inline engine
    read that never blocks. If index is still pending (an op running on an
    engine thread), this raises; wait first with ``index.wait_to_read()`` or,
    in a coroutine, ``await index.read()``."""
    from ..engine import get as _get_engine
    from ..ndarray._invoke import data_of, invoke
    from ..ndarray.ndarray import NDArray
    from .registry import get
    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise TypeError("boolean_mask(): data and index must be NDArrays")
    op = get("_contrib_boolean_mask")
    attrs = op.parse({"axis": axis})
    # the shape checks first, so a bad call raises before the mask is read
    try:
        _bmask_rule(dict(attrs, _count=0), (data.shape, index.shape), (data._dtype, index._dtype))
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    eng = _get_engine()
    opr = eng.push(lambda: int(np.count_nonzero(data_of(index))), (index._st.var,), (),
                   "boolean_mask_count", 0, True)
    if not opr.done:
        raise MXNetError(
            "_contrib_boolean_mask: the result's shape depends on the values of index, which "
            "is still being computed; aiond infers shapes without waiting, so call "
            "index.wait_to_read() (or `await index.read()` in a coroutine) first")
    if opr.failure is not None:
        raise opr.failure.error("boolean_mask()")
    attrs["_count"] = opr.result
    return invoke(op, [data, index], attrs, out)


# ============================================================ gradient table
from ._grad import set_grads, unbroadcast  # noqa: E402,F401


def _no_grad(F, attrs, ins, outs, og):
    return [None] * len(ins)


def _un(rule):
    def grad(F, attrs, ins, outs, og):
        return [rule(F, ins[0], outs[0], og[0], attrs)]
    return grad


def _where_grad(F, attrs, ins, outs, og):
    c, x, g = ins[0], ins[1], og[0]
    z = F.zeros_like(g)
    return [None, F.where(c, g, z), F.where(c, z, g)]


def _reshape_like_grad(F, attrs, ins, outs, og):
    return [og[0].reshape(ins[0].shape), None]


def _flip_grad(F, attrs, ins, outs, og):
    return [F.reverse(og[0], axis=attrs["axis"])]


def _tile_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    s, r = _tile_shapes(x.shape, attrs["reps"])
    if not attrs["reps"]:
        return [g]
    inter = []
    for a, b in zip(r, s):
        inter += [a, b]
    red = tuple(range(0, 2 * len(s), 2))
    return [F.sum(g.reshape(tuple(inter)), axis=red).reshape(x.shape)]


def _repeat_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    r, ax = attrs["repeats"], attrs["axis"]
    if r == 0 or x.size == 0:
        return [F.zeros_like(x)]
    if ax is None:
        return [F.sum(g.reshape((x.size, r)), axis=1).reshape(x.shape)]
    ax %= x.ndim
    s = tuple(x.shape)
    return [F.sum(g.reshape(s[:ax] + (s[ax], r) + s[ax + 1:]), axis=ax + 1)]


def _concat_grad(F, attrs, ins, outs, og):
    ax = attrs["dim"] % ins[0].ndim
    res, b = [], 0
    for x in ins:
        n = x.shape[ax]
        res.append(F.slice_axis(og[0], axis=ax, begin=b, end=b + n))
        b += n
    return res


def _stack_grad(F, attrs, ins, outs, og):
    ax = attrs["axis"] % (ins[0].ndim + 1)
    if len(ins) == 1:
        return [og[0].reshape(ins[0].shape)]
    return list(F.split(og[0], num_outputs=len(ins), axis=ax, squeeze_axis=True))


def _split_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = attrs["axis"] % x.ndim
    gs = og
    if attrs["squeeze_axis"]:
        s = tuple(x.shape)
        gs = [g.reshape(s[:ax] + (1,) + s[ax + 1:]) for g in og]
    if len(gs) == 1:
        return [gs[0].reshape(x.shape)]
    return [F.concat(*gs, dim=ax)]


def _slice_like_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    return [F._internal._slice_assign(F.zeros_like(x), g, begin=(0,) * x.ndim,
                                      end=tuple(g.shape), step=()), None]


def _take_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_take(og[0], ins[1], ins[0], **attrs), None]


def _pick_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_pick(og[0], ins[1], ins[0], **attrs), None]


def _gather_nd_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_gather_nd(og[0], ins[1], shape=ins[0].shape), None]


def _scatter_nd_grad(F, attrs, ins, outs, og):
    return [F.gather_nd(og[0], ins[1]).reshape(ins[0].shape), None]


def _diag_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_diag(og[0], ins[0], **attrs)]


def _pad_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_Pad(og[0], shape=ins[0].shape, **attrs)]


def _bcast_like_grad(F, attrs, ins, outs, og):
    return [unbroadcast(F, og[0], ins[0].shape), None]


def _sort_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_sort(og[0], outs[1], ins[0], axis=attrs["axis"])]


def _topk_grad(F, attrs, ins, outs, og):
    t = attrs["ret_typ"]
    if t in ("indices", "mask"):
        return [F.zeros_like(ins[0])]
    return [F._internal._backward_sort(og[0], outs[-1], ins[0], axis=attrs["axis"])]


def _seq_mask_grad(F, attrs, ins, outs, og):
    if not attrs["use_sequence_length"]:
        return [og[0]]
    kw = dict(attrs, value=0.0)
    return [F.SequenceMask(og[0], ins[1], **kw), None]


def _seq_last_grad(F, attrs, ins, outs, og):
    g = F._internal._backward_SequenceLast(og[0], *ins, **attrs)
    return [g] + [None] * (len(ins) - 1)


def _seq_reverse_grad(F, attrs, ins, outs, og):
    return [F.SequenceReverse(og[0], *ins[1:], **attrs)] + [None] * (len(ins) - 1)


def _bmask_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_boolean_mask(og[0], ins[1], ins[0], axis=attrs["axis"]), None]


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
    "argmax_channel": _no_grad,
    "reshape_like": _reshape_like_grad,
    "SwapAxis": _un(lambda F, x, y, g, a: F.swapaxes(g, dim1=a["dim1"], dim2=a["dim2"])),
    "reverse": _flip_grad,
    "tile": _tile_grad,
    "repeat": _repeat_grad,
    "Concat": _concat_grad,
    "stack": _stack_grad,
    "SliceChannel": _split_grad,
    "slice_like": _slice_like_grad,
    "take": _take_grad,
    "pick": _pick_grad,
    "gather_nd": _gather_nd_grad,
    "scatter_nd": _scatter_nd_grad,
    "_backward_gather_nd": lambda F, at, ins, outs, og: [
        F.gather_nd(og[0], ins[1]).reshape(ins[0].shape), None],
    "one_hot": _no_grad,
    "diag": _diag_grad,
    "Pad": _pad_grad,
    "_ravel_multi_index": _no_grad,
    "_unravel_index": _no_grad,
    "broadcast_like": _bcast_like_grad,
    "broadcast_axis": _un(lambda F, x, y, g, a: unbroadcast(F, g, x.shape)),
    "shape_array": _no_grad,
    "size_array": _no_grad,
    "sort": _sort_grad,
    "argsort": _no_grad,
    "topk": _topk_grad,
    "SequenceMask": _seq_mask_grad,
    "SequenceLast": _seq_last_grad,
    "SequenceReverse": _seq_reverse_grad,
    "_contrib_boolean_mask": _bmask_grad,
})
