"""MXNet 1.9.1's other random ops: ``_random_<dist>_like`` (samples shaped
like an input), ``_random_pdf_<dist>`` (densities of samples, with gradients
for samples and parameters) and ``_sample_unique_zipfian``.

A pdf op takes ``sample`` and one array per distribution parameter; the
parameters' shape is a prefix of the sample's, and each parameter value
applies to the trailing sample dimensions (for ``dirichlet`` the last sample
axis holds the k components and is reduced away). ``is_log`` gives the log
density. Densities are computed in float64 and cast to the sample's dtype.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from ._grad import set_grads
from .random import _dev_exponential, _dev_gnb, _dev_negbin, _fdt, _fill
from .registry import Param, host_kernels, p_bool, p_float, p_int, p_shape, register
from .special import digamma, gammaln

_F64 = np.dtype(np.float64)


# ------------------------------------------------------------ *_like samplers
def _like_rule(attrs, shapes, dtypes):
    return (tuple(shapes[0]),), (dtypes[0],)


_LIKE = {
    "normal": ([Param("loc", p_float, 0.0), Param("scale", p_float, 1.0)],
               lambda g, a, s: g.normal(a["loc"], a["scale"], size=s)),
    "uniform": ([Param("low", p_float, 0.0), Param("high", p_float, 1.0)],
                lambda g, a, s: g.uniform(a["low"], a["high"], size=s)),
    "gamma": ([Param("alpha", p_float, 1.0), Param("beta", p_float, 1.0)],
              lambda g, a, s: g.gamma(a["alpha"], a["beta"], size=s)),
    "exponential": ([Param("lam", p_float, 1.0)],
                    lambda g, a, s: g.exponential(1.0 / a["lam"], size=s)),
    "poisson": ([Param("lam", p_float, 1.0)], lambda g, a, s: g.poisson(a["lam"], size=s)),
    "negative_binomial": ([Param("k", p_int, 1), Param("p", p_float, 1.0)],
                          lambda g, a, s: g.negative_binomial(a["k"], a["p"], size=s)),
    "generalized_negative_binomial": (
        [Param("mu", p_float, 1.0), Param("alpha", p_float, 1.0)],
        lambda g, a, s: _gnb(g, a["mu"], a["alpha"], s)),
}


def _gnb(gen, mu, alpha, size):
    if alpha == 0:
        return gen.poisson(mu, size=size)
    lam = gen.gamma(1.0 / alpha, mu * alpha, size=size)
    return gen.poisson(lam)


# the same draws on a GPU context, from its device generator (``random.py``)
_LIKE_DEVICE = {
    "normal": lambda xp, rs, a, o: rs.normal(a["loc"], a["scale"], size=o.shape, dtype=_fdt(o)),
    "uniform": lambda xp, rs, a, o: rs.uniform(a["low"], a["high"], size=o.shape, dtype=_fdt(o)),
    "gamma": lambda xp, rs, a, o: rs.gamma(a["alpha"], a["beta"], size=o.shape, dtype=_fdt(o)),
    "exponential": lambda xp, rs, a, o: _dev_exponential(xp, rs, a["lam"], o),
    "poisson": lambda xp, rs, a, o: rs.poisson(a["lam"], size=o.shape),
    "negative_binomial": lambda xp, rs, a, o: _dev_negbin(xp, rs, a["k"], a["p"], o),
    "generalized_negative_binomial": lambda xp, rs, a, o: _dev_gnb(xp, rs, a["mu"], a["alpha"], o),
}


def _make_like(dist, params, draw):
    device_draw = _LIKE_DEVICE[dist]

    def kernel(xp, data, out, rng, **attrs):
        if xp is not np:
            return _fill(out, device_draw(xp, rng.device(xp), attrs, out))
        _fill(out, draw(rng.gen, attrs, out.shape))
    kernel.__doc__ = ("_random_%s_like(data, %s): samples with data's shape and dtype."
                      % (dist, ", ".join(p.name for p in params)))
    register("_random_%s_like" % dist, params=params, infer=_like_rule, needs_rng=True,
             aliases=("random_%s_like" % dist,))(kernel)


for _d, (_p, _draw) in _LIKE.items():
    _make_like(_d, _p, _draw)


# ------------------------------------------------------------------- pdfs
# dist -> (parameter names, log-density(x, *params), d logpdf / d(x, *params))
def _lp_normal(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)


def _dl_normal(x, mu, sigma):
    z = (x - mu) / sigma
    return [-z / sigma, z / sigma, (z * z - 1) / sigma]


def _lp_uniform(x, low, high):
    return -np.log(high - low) + 0 * x


def _dl_uniform(x, low, high):
    d = 1.0 / (high - low)
    return [0 * x, d + 0 * x, -d + 0 * x]


def _lp_gamma(x, alpha, beta):
    return alpha * np.log(beta) + (alpha - 1) * np.log(x) - beta * x - gammaln(np, alpha)


def _dl_gamma(x, alpha, beta):
    return [(alpha - 1) / x - beta, np.log(beta) + np.log(x) - digamma(np, alpha),
            alpha / beta - x]


def _lp_exponential(x, lam):
    return np.log(lam) - lam * x


def _dl_exponential(x, lam):
    return [-lam + 0 * x, 1.0 / lam - x]


def _lp_poisson(x, lam):
    return x * np.log(lam) - lam - gammaln(np, x + 1)


def _dl_poisson(x, lam):
    return [0 * x, x / lam - 1]


def _lp_nb(x, k, p):
    return (gammaln(np, x + k) - gammaln(np, k) - gammaln(np, x + 1) + k * np.log(p)
            + x * np.log1p(-p))


def _dl_nb(x, k, p):
    return [0 * x, digamma(np, x + k) - digamma(np, k) + np.log(p), k / p - x / (1 - p)]


def _lp_gnb(x, mu, alpha):
    k = 1.0 / alpha
    p = 1.0 / (mu * alpha + 1.0)
    return _lp_nb(x, k, p)


def _dl_gnb(x, mu, alpha):
    k = 1.0 / alpha
    p = 1.0 / (mu * alpha + 1.0)
    _, dk, dp = _dl_nb(x, k, p)
    # chain rule: k = 1/alpha, p = 1/(mu*alpha + 1)
    dp_dmu = -alpha * p * p
    dp_dalpha = -mu * p * p
    dk_dalpha = -k * k
    return [0 * x, dp * dp_dmu, dk * dk_dalpha + dp * dp_dalpha]


_PDFS = {
    "normal": (("mu", "sigma"), _lp_normal, _dl_normal, False),
    "uniform": (("low", "high"), _lp_uniform, _dl_uniform, False),
    "gamma": (("alpha", "beta"), _lp_gamma, _dl_gamma, False),
    "exponential": (("lam",), _lp_exponential, _dl_exponential, False),
    "poisson": (("lam",), _lp_poisson, _dl_poisson, True),
    "negative_binomial": (("k", "p"), _lp_nb, _dl_nb, True),
    "generalized_negative_binomial": (("mu", "alpha"), _lp_gnb, _dl_gnb, True),
}


def _pdf_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    for i, p in enumerate(shapes[1:], 1):
        p = tuple(p)
        if s[:len(p)] != p:
            raise ShapeError("parameter %d has shape %s, which is not a prefix of the sample "
                             "shape %s" % (i, fmt(p), fmt(s)))
        if p != tuple(shapes[1]):
            raise ShapeError("the parameters must have one shape, got %s and %s"
                             % (fmt(tuple(shapes[1])), fmt(p)))
    if dtypes[0].kind != "f":
        raise OpError("sample must have a floating dtype, got %s" % dtypes[0].name)
    return (s,), (dtypes[0],)


def _expand(p, ndim):
    """A parameter array (a prefix of the sample's shape) broadcastable against it."""
    return np.asarray(p, dtype=_F64).reshape(p.shape + (1,) * (ndim - p.ndim))


def _make_pdf(dist, names, logpdf, dlog):
    def kernel(xp, sample, *params, out, is_log=False):
        x = np.asarray(sample, dtype=_F64)
        ps = [_expand(p, x.ndim) for p in params]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lp = logpdf(x, *ps)
            r = lp if is_log else np.exp(lp)
        out[...] = r
    kernel.__doc__ = ("_random_pdf_%s(sample, %s, is_log=False): the %s density of the "
                      "samples." % (dist, ", ".join(names), dist))
    register("_random_pdf_%s" % dist, inputs=("sample",) + names,
             params=[Param("is_log", p_bool, False, "return the log density")],
             infer=_pdf_rule, aliases=("random_pdf_%s" % dist,))(kernel)


for _d, (_n, _lp, _dl, _disc) in _PDFS.items():
    _make_pdf(_d, _n, _lp, _dl)


# dirichlet: sample (..., n, k), alpha (..., k); density over the last axis
def _dir_rule(attrs, shapes, dtypes):
    s, a = tuple(shapes[0]), tuple(shapes[1])
    if len(a) < 1 or len(s) < len(a) or s[-1] != a[-1] or s[:len(a) - 1] != a[:-1]:
        raise ShapeError("dirichlet: alpha of shape %s does not match samples of shape %s"
                         % (fmt(a), fmt(s)))
    return (s[:-1],), (dtypes[0],)


def _dir_alpha(alpha, ndim):
    # alpha (..., k) -> (..., 1, ..., 1, k) against samples of ndim dims
    return alpha.reshape(alpha.shape[:-1] + (1,) * (ndim - alpha.ndim) + alpha.shape[-1:])


def _dir_logpdf(x, alpha):
    a = _dir_alpha(alpha, x.ndim)
    return (gammaln(np, a.sum(axis=-1)) - gammaln(np, a).sum(axis=-1)
            + ((a - 1) * np.log(x)).sum(axis=-1))


@register("_random_pdf_dirichlet", inputs=("sample", "alpha"),
          params=[Param("is_log", p_bool, False, "return the log density")],
          infer=_dir_rule, aliases=("random_pdf_dirichlet",))
def _random_pdf_dirichlet(xp, sample, alpha, out, is_log=False):
    """_random_pdf_dirichlet(sample, alpha, is_log=False): Dirichlet densities
    of the k-vectors on the last sample axis."""
    x = np.asarray(sample, dtype=_F64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lp = _dir_logpdf(x, np.asarray(alpha, dtype=_F64))
        out[...] = lp if is_log else np.exp(lp)


# ------------------------------------------------------------- backward
def _bwd_rule(attrs, shapes, dtypes):
    # inputs: ograd, sample, *params -> grads of sample and params
    return tuple(tuple(s) for s in shapes[1:]), tuple(dtypes[1:])


def _reduce_to(g, shape):
    """Sum a gradient over the trailing sample dims a parameter was broadcast to."""
    extra = tuple(range(len(shape), g.ndim))
    return g.sum(axis=extra) if extra else g


@register("_backward_pdf", inputs=("ograd", "sample", "*params"), variadic=True,
          params=[Param("dist", str, doc="the distribution"),
                  Param("is_log", p_bool, False)],
          infer=_bwd_rule, num_outputs=lambda a: 1 + _NPARAMS[a["dist"]], inline=False)
def _backward_pdf(xp, ograd, sample, *params, out, dist, is_log=False):
    """_backward_pdf(ograd, sample, *params, dist, is_log): gradients of a
    _random_pdf_<dist> op for its sample and parameters."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    x = np.asarray(sample, dtype=_F64)
    g = np.asarray(ograd, dtype=_F64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if dist == "dirichlet":
            alpha = np.asarray(params[0], dtype=_F64)
            a = _dir_alpha(alpha, x.ndim)
            lp = _dir_logpdf(x, alpha)
            scale = g if is_log else g * np.exp(lp)
            s = scale[..., None]
            gx = s * (a - 1) / x
            ga = s * (digamma(np, a.sum(axis=-1, keepdims=True)) - digamma(np, a) + np.log(x))
            extra = tuple(range(alpha.ndim - 1, x.ndim - 1))
            grads = [gx, ga.sum(axis=extra) if extra else ga]
        else:
            _, logpdf, dlog, _ = _PDFS[dist]
            ps = [_expand(p, x.ndim) for p in params]
            lp = logpdf(x, *ps)
            scale = g if is_log else g * np.exp(lp)
            grads = [scale * d for d in dlog(x, *ps)]
            grads = [grads[0]] + [_reduce_to(gp, p.shape) for gp, p in zip(grads[1:], params)]
    for o, gr in zip(outs, grads):
        o[...] = np.broadcast_to(gr, o.shape)


_NPARAMS = dict({d: len(v[0]) for d, v in _PDFS.items()}, dirichlet=1)


def _pdf_grad(dist):
    def grad(F, attrs, ins, outs, og):
        res = F._internal._backward_pdf(og[0], *ins, dist=dist, is_log=attrs["is_log"])
        return list(res) if isinstance(res, (list, tuple)) else [res]
    return grad


_rows = {"_random_pdf_%s" % d: _pdf_grad(d) for d in _PDFS}
_rows["_random_pdf_dirichlet"] = _pdf_grad("dirichlet")
for _d in _LIKE:
    _rows["_random_%s_like" % _d] = lambda F, at, ins, outs, og: [F.zeros_like(ins[0])]
set_grads(_rows)


# ------------------------------------------------------------ zipfian
def _uz_rule(attrs, shapes, dtypes):
    shape = attrs["shape"]
    if shape is None or len(shape) != 2:
        raise OpError("shape must be (batch_size, num_sampled), got %s" % (shape,))
    if shape[1] > attrs["range_max"]:
        raise OpError("num_sampled %d exceeds range_max %d" % (shape[1], attrs["range_max"]))
    return ((tuple(shape), (shape[0],)), (np.dtype(np.int64), np.dtype(np.int64)))


@register("_sample_unique_zipfian", inputs=(), needs_rng=True, inline=False,
          params=[Param("range_max", p_int, doc="classes are drawn from [0, range_max)"),
                  Param("shape", p_shape, None, "(batch_size, num_sampled)")],
          infer=_uz_rule, num_outputs=2)
def _sample_unique_zipfian(xp, out, rng, range_max, shape=None):
    """_sample_unique_zipfian(range_max, shape): per row, num_sampled distinct
    classes drawn from the log-uniform (Zipfian) distribution
    P(c) = log((c + 2) / (c + 1)) / log(range_max + 1), and the number of
    draws it took."""
    samples, tries = out
    log_range = np.log(range_max + 1.0)
    n = shape[1]
    for b in range(shape[0]):
        seen = set()
        picked = []
        count = 0
        while len(picked) < n:
            k = max(2 * (n - len(picked)), 64)
            u = rng.gen.random(k)
            cls = (np.exp(u * log_range).astype(np.int64) - 1) % range_max
            for c in cls.tolist():
                count += 1
                if c not in seen:
                    seen.add(c)
                    picked.append(c)
                    if len(picked) == n:
                        break
        samples[b] = picked
        tries[b] = count


set_grads({"_sample_unique_zipfian": lambda F, at, ins, outs, og: []})


# the densities are numpy code (and scipy-style special functions): on a GPU
# they run on the host
host_kernels(*["_random_pdf_%s" % d for d in _PDFS], "_random_pdf_dirichlet", "_backward_pdf")
