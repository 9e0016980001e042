"""``mx.np.random``/``mx.npx.random`` samplers as MXNet 1.9.1 names them
(``_npi_normal``, ``_npi_gamma``, ...), so MXNet's symbol JSON loads.

Each distribution parameter is either an attribute (a Python number) or,
when the attribute is left as None, an array input, in the order of the
parameters; array parameters broadcast as NumPy's do. Without ``size`` the
result has the broadcast shape of the array parameters (``()`` for none).

As in MXNet, ops whose samples are a differentiable function of their
parameters and a parameter-free noise (normal, logistic, gumbel,
exponential, rayleigh, weibull, pareto) keep that noise as a hidden second
output, and their gradient is the reparameterised one; the others (uniform,
gamma, power, bernoulli, choice, multinomial) give zero gradients.
A bad parameter value (a negative scale) fails in the kernel with a
ValueError, raised when the result is read, as MXNet's checks do.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import set_grads, unbroadcast, zeros_grad
from ._rules import broadcast_shapes, fmt
from .random import _random_randint, _random_uniform, _shuffle, uniform01  # noqa: F401
from .registry import Param, alias, host_kernels, p_bool, p_dtype, p_float, p_int, register

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_FLOATS = (np.dtype(np.float16), _F32, _F64)


def _none(v):
    return v is None or (isinstance(v, str) and v.strip() in ("None", ""))


def p_ofloat(v):
    """A number, or None: the parameter comes from an array input."""
    return None if _none(v) else p_float(v)


def p_oint(v):
    return None if _none(v) else p_int(v)


def p_osize(v):
    """A shape, or None (the broadcast shape of the array parameters)."""
    if _none(v):
        return None
    if isinstance(v, str):
        import ast
        v = ast.literal_eval(v.strip())
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    try:
        size = tuple(int(d) for d in v)
    except TypeError:
        raise TypeError("expected a size (int or tuple of ints), got %r" % (v,)) from None
    if any(d < 0 for d in size):
        raise ValueError("negative dimensions are not allowed in size %s" % (size,))
    return size


def p_ofloats(v):
    if _none(v):
        return None
    if isinstance(v, str):
        import ast
        v = ast.literal_eval(v.strip())
    return tuple(float(x) for x in v)


_SIZE = Param("size", p_osize, None, "shape of the samples; None: the parameters' shape")
_CTX = Param("ctx", str, "", "the device (an array call places the result itself)")
_DTYPE = Param("dtype", p_dtype, _F32, "dtype of the samples (float16, float32, float64)")


def _fdtype(op, attrs):
    d = attrs.get("dtype")
    if d is not None and d not in _FLOATS:
        raise OpError("%s: dtype=%s is not supported; expected float16, float32 or float64"
                      % (op.name, d.name))


def _sample_shape(names, attrs, shapes, batch=False):
    """The output shape: ``size`` (which the parameters must broadcast to),
    or the parameters' broadcast shape; ``batch``: ``size`` is prepended
    (MXNet's ``*_n`` ops)."""
    n_arrays = sum(1 for k in names if attrs.get(k) is None)
    if len(shapes) != n_arrays:
        raise OpError("expected %d array parameter(s) (those of %s given as None), got %d"
                      % (n_arrays, ", ".join(names), len(shapes)))
    pshape = ()
    for s in shapes:
        pshape = broadcast_shapes(pshape, tuple(s))
    size = attrs.get("size")
    if batch:
        return (tuple(size or ()) + pshape)
    if size is None:
        return pshape
    size = tuple(size)
    try:
        ok = broadcast_shapes(pshape, size) == size
    except OpError:
        ok = False
    if not ok:
        raise OpError("size %s is not compatible with the parameters' broadcast shape %s"
                      % (fmt(size), fmt(pshape)))
    return size


def _rule(names, noise=False, dtype=None, batch=False):
    def rule(attrs, shapes, dtypes):
        shape = _sample_shape(names, attrs, shapes, batch)
        d = dtype or attrs.get("dtype") or _F32
        if noise:
            return (shape, shape), (d, _F64 if d == _F64 else _F32)
        return (shape,), (d,)
    return rule


def _values(xp, names, attrs, params, dtype):
    """Each parameter as a Python float or an array of ``dtype``."""
    it = iter(params)
    vals = []
    for k in names:
        v = attrs.get(k)
        if v is None:
            a = next(it)
            vals.append(a if a.dtype == dtype else a.astype(dtype))
        else:
            vals.append(v)
    return vals


def _check(xp, v, ok, msg):
    """MXNet's parameter checks (a ValueError read with the result)."""
    good = ok(v)
    if not (bool(good) if isinstance(v, float) else bool(xp.all(good))):
        raise ValueError(msg)


def _std_normal(xp, rng, shape, dtype):
    if xp is not np:
        return rng.device(xp).normal(0.0, 1.0, size=shape, dtype=dtype)
    return rng.gen.standard_normal(shape, dtype=dtype)


def _put(xp, out, value):
    if np.isscalar(value):
        out[...] = value
        return
    if value.ndim > out.ndim and value.size == out.size:
        value = value.reshape(out.shape)    # a 0-d parameter stored as (1,)
    out[...] = xp.broadcast_to(value, out.shape)


# ------------------------------------------------------- location/scale
def _noise_normal(xp, rng, shape, dt):
    return _std_normal(xp, rng, shape, dt)


def _noise_logistic(xp, rng, shape, dt):
    u = uniform01(xp, rng, shape, dt)
    with np.errstate(divide="ignore"):
        return xp.log(u) - xp.log1p(-u)


def _noise_gumbel(xp, rng, shape, dt):
    u = uniform01(xp, rng, shape, dt)
    with np.errstate(divide="ignore"):
        return -xp.log(-xp.log(u))


def _loc_scale(noise_fn, what):
    def kernel(xp, *params, out, rng, loc=None, scale=None, size=None, ctx="", dtype=None):
        y, noise = out
        loc, scale = _values(xp, ("loc", "scale"), {"loc": loc, "scale": scale}, params,
                             noise.dtype)
        _check(xp, scale, lambda s: s >= 0, "%s: scale must be >= 0 (got a negative scale)"
               % what)
        noise[...] = noise_fn(xp, rng, noise.shape, noise.dtype)
        _put(xp, y, loc + scale * noise)
    kernel.__name__ = "_npi_" + what
    kernel.__doc__ = ("_npi_%s([loc], [scale], loc, scale, size, ctx, dtype): %s samples "
                      "loc + scale * noise (the noise is the hidden second output)" % (what, what))
    return kernel


_LS = [Param("loc", p_ofloat, None, "location; None: an array input"),
       Param("scale", p_ofloat, None, "scale; None: an array input"), _SIZE, _CTX]
for _name, _noise in (("normal", _noise_normal), ("logistic", _noise_logistic),
                      ("gumbel", _noise_gumbel)):
    register("_npi_" + _name, inputs=("*params",), variadic=True, needs_rng=True,
             params=_LS + [_DTYPE], infer=_rule(("loc", "scale"), noise=True),
             attr_check=_fdtype, num_outputs=2, output_names=("output", "noise"),
             num_visible=lambda attrs: 1, inline=False)(_loc_scale(_noise, _name))
register("_npi_normal_n", inputs=("*params",), variadic=True, needs_rng=True,
         params=_LS + [_DTYPE], infer=_rule(("loc", "scale"), noise=True, batch=True),
         attr_check=_fdtype, num_outputs=2, output_names=("output", "noise"),
         num_visible=lambda attrs: 1, inline=False)(_loc_scale(_noise_normal, "normal_n"))


def _loc_scale_grad(F, attrs, ins, outs, og):
    noise = outs[1]
    grads, i = [], 0
    g = og[0].astype(noise.dtype) if og[0].dtype != noise.dtype else og[0]
    for k in ("loc", "scale"):
        if attrs.get(k) is not None:
            continue
        x = ins[i]
        i += 1
        gk = g if k == "loc" else g * noise
        gk = unbroadcast(F, gk, x.shape)
        grads.append(gk if gk.dtype == x.dtype else gk.astype(x.dtype))
    return grads


# ------------------------------------------------------- uniform
def _uniform(xp, *params, out, rng, low=None, high=None, size=None, ctx="", dtype=None):
    """_npi_uniform([low], [high], low, high, size, ctx, dtype): samples from U[low, high)."""
    dt = _F64 if out.dtype == _F64 else _F32
    low, high = _values(xp, ("low", "high"), {"low": low, "high": high}, params, dt)
    u = uniform01(xp, rng, out.shape, dt)
    if out.dtype == np.float16:
        # the largest float16 below 1: a float32 draw near 1 would round up to high
        u = xp.minimum(u.astype(np.float16), np.float16(1 - 2.0 ** -11))
    _put(xp, out, low + (high - low) * u)


_UNI = [Param("low", p_ofloat, None, "lower bound; None: an array input"),
        Param("high", p_ofloat, None, "upper bound; None: an array input"), _SIZE, _CTX, _DTYPE]
register("_npi_uniform", inputs=("*params",), variadic=True, needs_rng=True, params=_UNI,
         infer=_rule(("low", "high")), attr_check=_fdtype, inline=False)(_uniform)
register("_npi_uniform_n", inputs=("*params",), variadic=True, needs_rng=True, params=_UNI,
         infer=_rule(("low", "high"), batch=True), attr_check=_fdtype, inline=False)(_uniform)


# ------------------------------------------------------- one scale / shape parameter
def _one_param(name, pname, noise_fn, check, msg):
    def kernel(xp, *params, out, rng, size=None, ctx="", **kw):
        y, noise = out
        (p,) = _values(xp, (pname,), kw, params, noise.dtype)
        _check(xp, p, check, "%s: %s" % (name, msg))
        noise[...] = noise_fn(xp, uniform01(xp, rng, noise.shape, noise.dtype))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            _put(xp, y, _APPLY[name](xp, p, noise))
    kernel.__name__ = "_npi_" + name
    kernel.__doc__ = "_npi_%s([%s], %s, size, ctx): %s samples" % (name, pname, pname, name)
    return kernel


def _exp1(xp, u):
    # Exp(1) noise from U[0, 1)
    return -xp.log1p(-u)


_APPLY = {
    "exponential": lambda xp, s, e: s * e,
    "rayleigh": lambda xp, s, e: s * e,
    "weibull": lambda xp, a, e: e ** (1.0 / a),
    "pareto": lambda xp, a, e: xp.expm1(e / a),
}
_ONE = (("exponential", "scale", 1.0, _exp1, lambda s: s >= 0, "expect scale >= 0"),
        ("rayleigh", "scale", 1.0, lambda xp, u: xp.sqrt(2.0 * _exp1(xp, u)),
         lambda s: s >= 0, "expect scale >= 0"),
        ("weibull", "a", None, _exp1, lambda a: a > 0, "expect a > 0"),
        ("pareto", "a", None, _exp1, lambda a: a > 0, "expect a > 0"))
for _name, _p, _default, _noise, _ok, _msg in _ONE:
    register("_npi_" + _name, inputs=("*params",), variadic=True, needs_rng=True,
             params=[Param(_p, p_ofloat, None, "%s (MXNet default %s); None: an array input" % (_p, _default)), _SIZE, _CTX],
             infer=_rule((_p,), noise=True, dtype=_F32), num_outputs=2,
             output_names=("output", "noise"), num_visible=lambda attrs: 1,
             inline=False)(_one_param(_name, _p, _noise, _ok, _msg))


def _one_grad(pname, dydp):
    def grad(F, attrs, ins, outs, og):
        if attrs.get(pname) is not None:
            return []
        x = ins[0]
        y, noise = outs
        g = og[0].astype(noise.dtype) if og[0].dtype != noise.dtype else og[0]
        xb = x if x.dtype == noise.dtype else x.astype(noise.dtype)
        gx = unbroadcast(F, g * dydp(F, xb, y.astype(noise.dtype), noise), x.shape)
        return [gx if gx.dtype == x.dtype else gx.astype(x.dtype)]
    return grad


# ------------------------------------------------------- power (no gradient)
@register("_npi_powerd", inputs=("*params",), variadic=True, needs_rng=True,
          params=[Param("a", p_ofloat, None, "a; None: an array input"), _SIZE],
          infer=_rule(("a",), dtype=_F32), inline=False)
def _npi_powerd(xp, *params, out, rng, a=None, size=None):
    """_npi_powerd([a], a, size): samples in [0, 1] of the power distribution."""
    (a,) = _values(xp, ("a",), {"a": a}, params, _F32)
    _check(xp, a, lambda v: v > 0, "power: expect a > 0")
    u = uniform01(xp, rng, out.shape, _F32)
    with np.errstate(divide="ignore"):
        _put(xp, out, u ** (1.0 / a))


# ------------------------------------------------------- gamma
@register("_npi_gamma", inputs=("*params",), variadic=True, needs_rng=True,
          params=[Param("shape", p_ofloat, None, "shape; None: an array input"),
                  Param("scale", p_ofloat, None, "scale; None: an array input"),
                  _SIZE, _CTX, _DTYPE],
          infer=_rule(("shape", "scale")), attr_check=_fdtype, inline=False)
def _npi_gamma(xp, *params, out, rng, shape=None, scale=None, size=None, ctx="", dtype=None):
    """_npi_gamma([shape], [scale], shape, scale, size, ctx, dtype): Gamma(shape, scale)."""
    k, s = _values(xp, ("shape", "scale"), {"shape": shape, "scale": scale}, params, _F64)
    _check(xp, k, lambda v: v > 0, "gamma: expect shape > 0")
    _check(xp, s, lambda v: v > 0, "gamma: expect scale > 0")
    if xp is not np:    # the device's own generator: the host one is not touched
        out[...] = rng.device(xp).gamma(k, s, size=out.shape)
        return
    out[...] = rng.gen.gamma(k, s, size=out.shape)


# ------------------------------------------------------- bernoulli
def _bern_rule(attrs, shapes, dtypes):
    if (attrs.get("prob") is None) == (attrs.get("logit") is None) and not shapes:
        raise OpError("_npi_bernoulli: give prob or logit (one of them)")
    names = ("logit",) if attrs["is_logit"] else ("prob",)
    return (_sample_shape(names, attrs, shapes),), (attrs.get("dtype") or _F32,)


@register("_npi_bernoulli", inputs=("*params",), variadic=True, needs_rng=True,
          params=[Param("prob", p_ofloat, None), Param("logit", p_ofloat, None), _SIZE, _CTX,
                  Param("dtype", p_dtype, _F32, "dtype of the 0/1 samples"),
                  Param("is_logit", p_bool, False, "the parameter is a logit")],
          infer=_bern_rule, grad=zeros_grad, inline=False)
def _npi_bernoulli(xp, *params, out, rng, prob=None, logit=None, size=None, ctx="",
                   dtype=None, is_logit=False):
    """_npi_bernoulli([prob or logit], prob, logit, size, ctx, dtype, is_logit): 1 with
    probability prob (or sigmoid(logit)), else 0."""
    name = "logit" if is_logit else "prob"
    (p,) = _values(xp, (name,), {"prob": prob, "logit": logit}, params, _F64)
    if is_logit:
        p = 1.0 / (1.0 + (np.exp(-p) if isinstance(p, float) else xp.exp(-p)))
    else:
        _check(xp, p, lambda v: (v >= 0) & (v <= 1), "bernoulli: expect probs >= 0 && probs <= 1")
    u = uniform01(xp, rng, out.shape, _F64)
    xp.copyto(out, xp.broadcast_to(u < p, out.shape), casting="unsafe")


# ------------------------------------------------------- randint, shuffle
def _randint_rule(attrs, shapes, dtypes):
    shape = attrs.get("shape")
    return (tuple(shape) if shape is not None else (),), (attrs.get("dtype") or _I64,)


def _randint_check(op, attrs):
    d = attrs.get("dtype")
    if d is not None and d.kind not in "iu":
        raise OpError("%s: dtype=%s is not an integer dtype" % (op.name, d.name))
    if attrs["low"] >= attrs["high"]:
        raise OpError("%s: low >= high (low=%r, high=%r)" % (op.name, attrs["low"], attrs["high"]))


register("_npi_random_randint", inputs=(), needs_rng=True,
         params=[Param("low", p_int), Param("high", p_int), Param("shape", p_osize, None),
                 Param("ctx", lambda v: v, None), Param("dtype", p_dtype, _I64)],
         infer=_randint_rule, attr_check=_randint_check, grad=zeros_grad)(_random_randint)
alias("_shuffle", "_npi_shuffle")


# ------------------------------------------------------- choice, multinomial, mvn
def _choice_rule(attrs, shapes, dtypes):
    want = (attrs.get("a") is None) + bool(attrs["weighted"])
    if len(shapes) != want:
        raise OpError("_npi_choice: expected %d array input(s) (a=%r, weighted=%r), got %d"
                      % (want, attrs.get("a"), attrs["weighted"], len(shapes)))
    size = attrs.get("size")
    return (tuple(size) if size is not None else (),), (_I64,)


@register("_npi_choice", inputs=("*params",), variadic=True, needs_rng=True,
          params=[Param("a", p_oint, None, "draw from range(a); None: from the first input"),
                  _SIZE, _CTX, Param("replace", p_bool, True),
                  Param("weighted", p_bool, False, "the last input holds probabilities")],
          infer=_choice_rule, grad=zeros_grad, inline=False)
def _npi_choice(xp, *params, out, rng, a=None, size=None, ctx="", replace=True,
                weighted=False):
    """_npi_choice([a], [p], a, size, ctx, replace, weighted): indices drawn from
    range(a) (range(a.size) for an array input), with probabilities p when weighted."""
    n = a if a is not None else int(params[0].size)
    p = np.asarray(params[-1], dtype=np.float64) if weighted else None
    if n <= 0 and out.size:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if p is not None:
        if p.shape != (n,):
            raise ValueError("choice: p must be 1-dimensional of size %d, got shape %s"
                             % (n, p.shape))
        p = p / p.sum()
    out[...] = rng.gen.choice(n, size=out.shape, replace=replace, p=p)


def _multinomial_rule(attrs, shapes, dtypes):
    pv = attrs.get("pvals")
    if pv is None:
        if len(shapes) != 1 or len(shapes[0]) != 1:
            raise OpError("_npi_multinomial: pvals must be one 1-D array, got shapes %s"
                          % (list(shapes),))
        k = shapes[0][0]
    else:
        k = len(pv)
    size = attrs.get("size")
    return ((tuple(size) if size is not None else ()) + (k,),), (_I64,)


@register("_npi_multinomial", inputs=("*params",), variadic=True, needs_rng=True,
          params=[Param("n", p_int, doc="number of experiments"),
                  Param("pvals", p_ofloats, None, "probabilities; None: an array input"), _SIZE],
          infer=_multinomial_rule, grad=zeros_grad, inline=False)
def _npi_multinomial(xp, *params, out, rng, n, pvals=None, size=None):
    """_npi_multinomial([pvals], n, pvals, size): counts of n draws per category."""
    pv = np.asarray(pvals if pvals is not None else params[0], dtype=np.float64)
    if n < 0:
        raise ValueError("multinomial: n must be >= 0, got %d" % n)
    if pv.size == 0:
        return          # no categories: an empty result, as MXNet's (numpy's own draw refuses)
    head = pv[:-1].sum()
    if np.any(pv < 0) or head > 1.0 + 1e-5:
        raise ValueError("multinomial: pvals must be >= 0 and sum(pvals[:-1]) <= 1")
    if head > 1.0:      # float32 pvals that sum to 1 may round a little past it
        pv = pv / head
    out[...] = rng.gen.multinomial(n, pv, size=out.shape[:-1])


def _mvn_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("_npi_mvn_fallback: expected mean and cov, got %d inputs" % len(shapes))
    m, c = tuple(shapes[0]), tuple(shapes[1])
    if len(m) < 1 or len(c) < 2 or c[-1] != c[-2] or c[-1] != m[-1]:
        raise OpError("multivariate_normal: mean of shape %s and cov of shape %s do not fit "
                      "(cov must be (..., N, N) with mean (..., N))" % (fmt(m), fmt(c)))
    batch = broadcast_shapes(m, c[:-1])
    size = attrs.get("size")
    return ((tuple(size) if size is not None else ()) + batch,), (dtypes[0],)


@register("_npi_mvn_fallback", inputs=("mean", "cov"), needs_rng=True, params=[_SIZE],
          infer=_mvn_rule, grad=zeros_grad, inline=False)
def _npi_mvn_fallback(xp, mean, cov, out, rng, size=None):
    """_npi_mvn_fallback(mean, cov, size): multivariate normal samples (cov positive
    semi-definite; factored by its eigen-decomposition, as NumPy's SVD does)."""
    m = np.asarray(mean, dtype=np.float64)
    c = np.asarray(cov, dtype=np.float64)
    w, v = np.linalg.eigh(c)
    factor = v * np.sqrt(np.maximum(w, 0.0))[..., None, :]
    z = rng.gen.standard_normal(out.shape)
    x = np.einsum("...ij,...j->...i", np.broadcast_to(factor, out.shape + (out.shape[-1],)), z)
    out[...] = x + m


host_kernels("_npi_choice", "_npi_multinomial", "_npi_mvn_fallback")

_rows = {n: _loc_scale_grad for n in ("_npi_normal", "_npi_normal_n", "_npi_logistic",
                                       "_npi_gumbel")}
_rows.update({
    # y = scale * noise
    "_npi_exponential": _one_grad("scale", lambda F, s, y, e: e),
    "_npi_rayleigh": _one_grad("scale", lambda F, s, y, e: e),
    # y = e ** (1/a): dy/da = -y * log(e) / a**2
    "_npi_weibull": _one_grad("a", lambda F, a, y, e: -y * F.log(e) / (a * a)),
    # y = exp(e/a) - 1: dy/da = -(y + 1) * e / a**2
    "_npi_pareto": _one_grad("a", lambda F, a, y, e: -(y + 1) * e / (a * a)),
    "_npi_uniform": zeros_grad, "_npi_uniform_n": zeros_grad, "_npi_gamma": zeros_grad,
    "_npi_powerd": zeros_grad,
})
set_grads(_rows)
