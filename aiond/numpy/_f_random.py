"""``np.random`` and ``npx.random`` as front functions (see ``_front``): one
definition for ``mx.np.random``, ``mx.nd.np.random`` and ``mx.sym.np.random``
(so ``F.np.random.normal(loc, scale, size)`` in a HybridBlock samples the
same way imperatively and hybridized).

A distribution parameter is a number (an attribute of the op) or an array
(an input, so gradients reach it where MXNet's op has them); the samplers
are the ``_npi_*`` ops of ``aiond/ops/np_random.py``."""
from __future__ import annotations

import numpy as _np

from ..base import integer_types
from ._f_binary import binary, is_scalar
from ._front import front

_RS = "np.random"
_XRS = "npx.random"


def _size(size, empty_is_none=True):
    """MXNet's size argument: None, an int or a tuple (``()``: None, as MXNet's
    samplers treat it)."""
    if size is None:
        return None
    if isinstance(size, integer_types):
        return (int(size),)
    size = tuple(int(d) for d in size)
    return None if (empty_is_none and size == ()) else size


def _params(F, fname, names, values):
    """Split parameters into array inputs and scalar attributes (None marks
    an attribute whose value is an input)."""
    inputs, attrs = [], {}
    for k, v in zip(names, values):
        if F.isarr(v):
            inputs.append(F.arr(v))
            attrs[k] = None
        elif is_scalar(v):
            attrs[k] = float(v)
        elif F.kind == "nd" and isinstance(v, (list, tuple, _np.ndarray)):
            inputs.append(F.arr(v))
            attrs[k] = None
        else:
            raise ValueError("%s: parameter %s must be a number or an array, got %s"
                             % (fname, k, type(v).__name__))
    return inputs, attrs


def _sample(F, op, inputs, attrs, ctx=None, out=None):
    """Run sampler ``op``; an NDArray call without array inputs is placed on
    ``ctx`` (or ``out``'s device, or the current device)."""
    if F.kind != "nd":
        return F.op(op, inputs, attrs, out)
    from ..ops import registry as _reg
    from .multiarray import _ctx, invoke
    entry = _reg.get(op)
    # parsed here (dtype names, checks), as a Symbol's node parses its attributes
    attrs = entry.parse({k: v for k, v in attrs.items() if v is not None})
    where = None
    if not inputs:
        where = out.context if out is not None and ctx is None else _ctx(ctx)
    if out is not None and entry.num_outputs == 2:
        # a reparameterised sampler also writes its (hidden) noise
        from .multiarray import empty
        noise = empty(out.shape, dtype=_np.float64 if out.dtype == _np.float64 else _np.float32,
                      ctx=out.context)
        invoke(op, inputs, attrs, [out, noise], where)
        return out
    return invoke(op, inputs, attrs, out, where)


def _dist(op, names, fname):
    def run(F, values, size, ctx, out, dtype=None, size_key="size", empty_is_none=True):
        inputs, attrs = _params(F, fname, names, values)
        attrs[size_key] = _size(size, empty_is_none)
        if dtype is not None:
            attrs["dtype"] = dtype
        return _sample(F, op, inputs, attrs, ctx, out)
    return run


_uniform = _dist("_npi_uniform", ("low", "high"), "uniform")
_normal = _dist("_npi_normal", ("loc", "scale"), "normal")
_logistic = _dist("_npi_logistic", ("loc", "scale"), "logistic")
_gumbel = _dist("_npi_gumbel", ("loc", "scale"), "gumbel")
_gamma = _dist("_npi_gamma", ("shape", "scale"), "gamma")
_exponential = _dist("_npi_exponential", ("scale",), "exponential")
_rayleigh = _dist("_npi_rayleigh", ("scale",), "rayleigh")
_weibull = _dist("_npi_weibull", ("a",), "weibull")
_pareto = _dist("_npi_pareto", ("a",), "pareto")
_power = _dist("_npi_powerd", ("a",), "power")
_uniform_n = _dist("_npi_uniform_n", ("low", "high"), "uniform_n")
_normal_n = _dist("_npi_normal_n", ("loc", "scale"), "normal_n")


@front("uniform", ns=_RS)
def uniform(F, low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from U[low, high) (float32 unless ``dtype``)."""
    return _uniform(F, (low, high), size, ctx, out, dtype)


@front("normal", ns=_RS)
def normal(F, loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2); differentiable in array loc and scale."""
    return _normal(F, (loc, scale), size, ctx, out, dtype)


@front("lognormal", ns=_RS)
def lognormal(F, mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    """exp of N(mean, sigma**2) samples; differentiable in array mean and sigma."""
    return F.op("exp", [normal(F, mean, sigma, size, dtype, ctx)], None, out)


@front("logistic", ns=_RS)
def logistic(F, loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the logistic distribution; differentiable in array loc and scale."""
    return _logistic(F, (loc, scale), size, ctx, out)


@front("gumbel", ns=_RS)
def gumbel(F, loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Gumbel distribution; differentiable in array loc and scale."""
    return _gumbel(F, (loc, scale), size, ctx, out)


@front("gamma", ns=_RS)
def gamma(F, shape, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from Gamma(shape, scale) (both > 0)."""
    return _gamma(F, (shape, scale), size, ctx, out, dtype)


@front("exponential", ns=_RS)
def exponential(F, scale=1.0, size=None, ctx=None, out=None):
    """Samples with mean ``scale``; differentiable in an array scale."""
    return _exponential(F, (scale,), size, ctx, out)


@front("rayleigh", ns=_RS)
def rayleigh(F, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Rayleigh distribution; differentiable in an array scale."""
    return _rayleigh(F, (scale,), size, ctx, out)


@front("weibull", ns=_RS)
def weibull(F, a, size=None, ctx=None, out=None):
    """Samples from Weibull(a) (a > 0); differentiable in an array a."""
    return _weibull(F, (a,), size, ctx, out)


@front("pareto", ns=_RS)
def pareto(F, a, size=None, ctx=None, out=None):
    """Samples from the Pareto II (Lomax) distribution as NumPy's; differentiable in an array a."""
    return _pareto(F, (a,), size, ctx, out)


@front("power", ns=_RS)
def power(F, a, size=None):
    """Samples in [0, 1] from the power distribution with exponent a - 1 (a > 0)."""
    return _power(F, (a,), size, None, None)


@front("beta", ns=_RS)
def beta(F, a, b, size=None, dtype=None, ctx=None):
    """Samples from Beta(a, b): X / (X + Y) of Gamma(a, 1) and Gamma(b, 1) draws
    (in float64, then ``dtype``, float32 by default)."""
    x = gamma(F, a, 1.0, size=size, dtype="float64", ctx=ctx)
    y = gamma(F, b, 1.0, size=size, dtype="float64", ctx=ctx)
    res = F.op("_npi_true_divide", [x, F.op("_npi_add", [x, y])])
    return F.arr(res, dtype=dtype or "float32")


@front("chisquare", ns=_RS)
def chisquare(F, df, size=None, dtype=None, ctx=None):
    """Samples from the chi-square distribution with ``df`` degrees of freedom
    (Gamma(df / 2, 2))."""
    half = df / 2.0 if is_scalar(df) else binary(F, "true_divide", F.arr(df), 2.0)
    return gamma(F, half, 2.0, size=size, dtype=dtype, ctx=ctx)


@front("rand", ns=_RS)
def rand(F, *size, **kwargs):
    """U[0, 1) samples of shape ``size`` (``()`` with no arguments)."""
    return uniform(F, 0.0, 1.0, size=size, **kwargs)


@front("randn", ns=_RS)
def randn(F, *size, **kwargs):
    """Standard normal samples of shape ``size``."""
    return normal(F, 0.0, 1.0, size=size, **kwargs)


@front("randint", ns=_RS)
def randint(F, low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers in [low, high) ([0, low) without ``high``), int64 unless ``dtype``."""
    if high is None:
        low, high = 0, low
    for k, v in (("low", low), ("high", high)):
        if not isinstance(v, integer_types + (_np.integer,)):
            raise TypeError("randint: %s must be an integer, got %r" % (k, v))
    if low >= high:
        raise ValueError("randint: low >= high (low=%d, high=%d)" % (low, high))
    attrs = {"low": int(low), "high": int(high), "shape": _size(size, False) or (),
             "dtype": dtype}
    return _sample(F, "_npi_random_randint", [], attrs, ctx, out)


@front("shuffle", ns=_RS)
def shuffle(F, x):
    """Shuffle ``x`` along its first axis: in place for an array (returns None),
    a shuffled copy for a Symbol."""
    if F.kind == "nd":
        F.op("_npi_shuffle", [x], None, x)
        return None
    return F.op("_npi_shuffle", [x])


@front("choice", ns=_RS)
def choice(F, a, size=None, replace=True, p=None, ctx=None, out=None):
    """Random samples from ``a`` (an int: ``range(a)``; an array: its elements),
    with probabilities ``p`` when given."""
    size = _size(size, False)
    attrs = {"size": size, "replace": bool(replace), "weighted": p is not None}
    weights = [] if p is None else [F.arr(p)]
    if is_scalar(a):
        if not isinstance(a, integer_types + (_np.integer,)):
            raise ValueError("choice: a must be an int or an array, got %r" % (a,))
        if a <= 0 and (size is None or _np.prod(size) > 0):
            raise ValueError("a must be greater than 0 unless no samples are taken")
        if not replace and int(_np.prod(size or ())) > a:
            raise ValueError("Cannot take a larger sample than population when 'replace=False'")
        attrs["a"] = int(a)
        return _sample(F, "_npi_choice", weights, attrs, ctx, out)
    a = F.arr(a)
    idx = _sample(F, "_npi_choice", [a] + weights, attrs)
    return F.op("take", [a, idx], {"axis": 0}, out)


@front("multinomial", ns=_RS)
def multinomial(F, n, pvals, size=None):
    """Counts of ``n`` experiments over ``len(pvals)`` outcomes (int64), of shape
    ``size + (len(pvals),)``."""
    if F.isarr(pvals):
        return _sample(F, "_npi_multinomial", [F.arr(pvals)], {"n": int(n), "size": _size(size)})
    if isinstance(pvals, _np.ndarray):
        raise ValueError("numpy ndarray is not supported!")
    if any(isinstance(p, (list, tuple)) for p in pvals):
        raise ValueError("object too deep for desired array")
    attrs = {"n": int(n), "pvals": tuple(float(p) for p in pvals), "size": _size(size)}
    return _sample(F, "_npi_multinomial", [], attrs)


@front("multivariate_normal", ns=_RS)
def multivariate_normal(F, mean, cov, size=None, check_valid=None, tol=None):
    """Samples of N(mean, cov) (batched: mean (..., N), cov (..., N, N)), of shape
    ``size + broadcast(mean, cov[..., 0])``."""
    if check_valid is not None:
        raise NotImplementedError("multivariate_normal: check_valid is not supported "
                                  "(as in MXNet); leave it None")
    if tol is not None:
        raise NotImplementedError("multivariate_normal: tol is not supported (as in MXNet); "
                                  "leave it None")
    return _sample(F, "_npi_mvn_fallback", [F.arr(mean), F.arr(cov)], {"size": _size(size)})


# ------------------------------------------------------------------ npx.random
@front("bernoulli", ns=_XRS)
def bernoulli(F, prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """0/1 samples that are 1 with probability ``prob`` (or sigmoid(``logit``));
    exactly one of the two is given."""
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. "
                         "Received prob={}, logit={}".format(prob, logit))
    name, v = ("prob", prob) if logit is None else ("logit", logit)
    inputs, attrs = _params(F, "bernoulli", (name,), (v,))
    attrs.update({"is_logit": logit is not None, "size": _size(size, False),
                  "dtype": dtype or "float32"})
    return _sample(F, "_npi_bernoulli", inputs, attrs, ctx, out)


@front("uniform_n", ns=_XRS)
def uniform_n(F, low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """U[low, high) samples of shape ``batch_shape + broadcast(low, high)``."""
    return _uniform_n(F, (low, high), batch_shape, ctx, None, dtype)


@front("normal_n", ns=_XRS)
def normal_n(F, loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """N(loc, scale**2) samples of shape ``batch_shape + broadcast(loc, scale)``."""
    return _normal_n(F, (loc, scale), batch_shape, ctx, None, dtype)
