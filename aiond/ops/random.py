"""Random sampling ops. Each context owns one generator guarded by an engine
var that every sampling op writes, so draws happen in push order and a seeded
program is reproducible however the engine schedules it.

On a GPU context the samplers draw on the device, from a CuPy
``RandomState`` (cuRAND) of that context, on the op's stream: no host
generator, no copy in, no host synchronization. It is made on the first draw
and seeded from the same key as the host generator (seed, device type,
device id), so ``mx.random.seed(s)`` gives every device its own reproducible
stream and ``mx.random.seed(s, ctx=mx.gpu(i))`` reseeds only that one.
Distributions CuPy has no sampler for stay on the host generator."""
from __future__ import annotations

import threading

import numpy as np

from ..base import OpError
from ..engine.var import Var
from .registry import Param, p_dtype, p_float, p_int, p_shape, register

__all__ = ["RNGState", "rng_state", "all_states", "uniform01"]


def _device_seed(key):
    if key is None:
        return None     # CuPy seeds from os.urandom, as an unseeded host generator does
    return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0])


class RNGState:
    __slots__ = ("gen", "var", "key", "dev")

    def __init__(self, seed=None):
        self.var = Var()
        self.reseed(seed)

    def reseed(self, key):
        """Restart both generators from ``key`` (``[seed, device type, device
        id]``, or None for fresh entropy); runs as an engine op on ``var``."""
        self.key = key
        self.gen = np.random.Generator(np.random.PCG64(key))
        self.dev = None

    def device(self, cp):
        """This context's device generator; made on first use, inside the
        launching op (its device and stream are current)."""
        d = self.dev
        if d is None or d[0] is not cp:     # (a CuPy module swapped in by the tests' double)
            d = self.dev = (cp, cp.random.RandomState(_device_seed(self.key)))
        return d[1]


_states: dict = {}
_lock = threading.Lock()
DEFAULT_SEED = [None]       # set by mx.random.seed(s): contexts seen later start from s


def rng_state(ctx) -> RNGState:
    st = _states.get(ctx)
    if st is None:
        with _lock:
            s = DEFAULT_SEED[0]
            seed = None if s is None else [s, ctx.device_typeid, ctx.device_id]
            st = _states.setdefault(ctx, RNGState(seed))
    return st


def all_states():
    with _lock:
        return dict(_states)

# ------------------------------------------------------------- device draws
# ``xp`` is numpy on a CPU context (and for host kernels), CuPy on a GPU one.
# Every device draw below is a cuRAND call or an elementwise kernel on the
# current stream; none reads a value back (CuPy's own exponential, randint
# and negative_binomial check their parameters on the host, so they are
# built here from the primitives that do not).


def _on_device(xp):
    return xp is not np


def _fdt(out):
    # cuRAND fills float32 or float64; float16 outputs are drawn in float32
    return out.dtype if out.dtype.char in "fd" else np.dtype(np.float32)


def uniform01(xp, rng, shape, dtype=np.float32):
    """U[0, 1) draws as an ``xp`` array (float32 or float64): the host
    generator's on a CPU context, the device generator's on a GPU one."""
    if _on_device(xp):
        return rng.device(xp).random_sample(shape, dtype=dtype)
    return rng.gen.random(shape, dtype=dtype)


def _dev_exponential(xp, rs, lam, out):
    x = rs.standard_exponential(out.shape, dtype=_fdt(out))
    if isinstance(lam, (int, float)):
        x *= 1.0 / lam
    else:
        xp.divide(x, lam, out=x)
    return x


def _dev_negbin(xp, rs, k, p, out):
    # MXNet's: Poisson with a Gamma(k, (1-p)/p) rate
    lam = rs.gamma(k, (1.0 - p) / p, size=out.shape, dtype=np.float64)
    return rs.poisson(lam, size=out.shape)


def _dev_gnb(xp, rs, mu, alpha, out):
    if isinstance(alpha, (int, float)):
        if alpha == 0:
            return rs.poisson(mu, size=out.shape)
        return rs.poisson(rs.gamma(1.0 / alpha, mu * alpha, size=out.shape, dtype=np.float64),
                          size=out.shape)
    pos = alpha > 0
    safe = xp.where(pos, alpha, 1.0)
    lam = rs.gamma(1.0 / safe, mu * safe, size=out.shape, dtype=np.float64)
    return rs.poisson(xp.where(pos, lam, mu), size=out.shape)


def _dev_randint(xp, rs, low, high, out):
    # floor(u * range) from float64 uniforms: exact for ranges below 2**32
    # (the bias is under 2**-20 there); CuPy's randint rejects and redraws,
    # which reads a count back to the host
    x = rs.random_sample(out.shape, dtype=np.float64)
    x *= float(high - low)
    xp.floor(x, out=x)
    x += float(low)
    xp.minimum(x, float(high - 1), out=x)
    return x


def _shape_rule(attrs, shapes, dtypes):
    shape = attrs["shape"]
    if shape is None or shape == ():
        shape = (1,)
    if any(d < 0 for d in shape):
        raise OpError("shape %s has a negative dimension" % (tuple(shape),))
    return (tuple(shape),), (attrs["dtype"] or np.dtype(np.float32),)


_COMMON = [Param("shape", p_shape, None), Param("dtype", p_dtype, None),
           Param("ctx", lambda v: v, None)]


_FLOATS = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_INTS = (np.dtype(np.int32), np.dtype(np.int64))


def _check_dtype(op, attrs, allowed):
    d = attrs.get("dtype")
    if d is not None and d not in allowed:
        raise OpError("%s: dtype=%s is not supported; expected one of %s"
                      % (op.name, d.name, ", ".join(t.name for t in allowed)))


# As in MXNet, a bad parameter value (not a bad dtype) fails in the kernel: the
# error surfaces when the result is read, and poisons the result.
def _check_scale(op, attrs):
    _check_dtype(op, attrs, _FLOATS)


def _check_uniform(op, attrs):
    _check_dtype(op, attrs, _FLOATS)


def _check_randint(op, attrs):
    _check_dtype(op, attrs, _INTS)
    if attrs["low"] >= attrs["high"]:
        raise OpError("%s: low must be < high, got low=%r high=%r" % (op.name, attrs["low"], attrs["high"]))


def _check_exponential(op, attrs):
    _check_dtype(op, attrs, _FLOATS)
    if not attrs["lam"] > 0:
        raise OpError("%s: lam must be > 0, got %r" % (op.name, attrs["lam"]))


def _fill(out, values):
    out[...] = values


@register("_random_uniform", inputs=(), params=[Param("low", p_float, 0.0), Param("high", p_float, 1.0)]
          + _COMMON, infer=_shape_rule, needs_rng=True, attr_check=_check_uniform,
          aliases=("uniform", "random_uniform"))
def _random_uniform(xp, out, rng, low=0.0, high=1.0, shape=None, dtype=None, ctx=None):
    """uniform(low=0, high=1, shape): samples from U[low, high)."""
    if low > high:
        raise ValueError("uniform: low must be <= high, got low=%r high=%r" % (low, high))
    if _on_device(xp):
        return _fill(out, rng.device(xp).uniform(low, high, size=out.shape, dtype=_fdt(out)))
    _fill(out, rng.gen.uniform(low, high, size=out.shape))


@register("_random_normal", inputs=(), params=[Param("loc", p_float, 0.0), Param("scale", p_float, 1.0)]
          + _COMMON, infer=_shape_rule, needs_rng=True, attr_check=_check_scale,
          aliases=("normal", "random_normal"))
def _random_normal(xp, out, rng, loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None):
    """normal(loc=0, scale=1, shape): samples from N(loc, scale**2)."""
    if scale < 0:
        raise ValueError("normal: scale parameter in gaussian has to be positive, got %r"
                         % scale)
    if _on_device(xp):
        return _fill(out, rng.device(xp).normal(loc, scale, size=out.shape, dtype=_fdt(out)))
    _fill(out, rng.gen.normal(loc, scale, size=out.shape))


@register("_random_randint", inputs=(), params=[Param("low", p_int), Param("high", p_int)]
          + [Param("shape", p_shape, None), Param("dtype", p_dtype, np.dtype(np.int32)),
             Param("ctx", lambda v: v, None)],
          infer=_shape_rule, needs_rng=True, attr_check=_check_randint,
          aliases=("random_randint",))
def _random_randint(xp, out, rng, low, high, shape=None, dtype=None, ctx=None):
    """randint(low, high, shape): integers in [low, high)."""
    if low >= high:
        raise ValueError("randint: low (%d) must be < high (%d)" % (low, high))
    if _on_device(xp):
        return _fill(out, _dev_randint(xp, rng.device(xp), low, high, out))
    _fill(out, rng.gen.integers(low, high, size=out.shape))


@register("_random_exponential", inputs=(), params=[Param("lam", p_float, 1.0)] + _COMMON,
          infer=_shape_rule, needs_rng=True, attr_check=_check_exponential,
          aliases=("random_exponential",))
def _random_exponential(xp, out, rng, lam=1.0, shape=None, dtype=None, ctx=None):
    """exponential(lam=1, shape): samples with rate lam."""
    if lam <= 0:
        raise ValueError("exponential: lam must be > 0, got %r" % lam)
    if _on_device(xp):
        return _fill(out, _dev_exponential(xp, rng.device(xp), lam, out))
    _fill(out, rng.gen.exponential(1.0 / lam, size=out.shape))


@register("_shuffle", params=[], infer=lambda a, s, d: ((s[0],), (d[0],)), needs_rng=True,
          aliases=("shuffle",))
def _shuffle(xp, data, out, rng):
    """shuffle(data): a copy with the first axis randomly permuted."""
    if not data.ndim or data.shape[0] < 2:
        out[...] = data
    elif _on_device(xp):
        out[...] = data[rng.device(xp).permutation(data.shape[0])]
    else:
        out[...] = data[rng.gen.permutation(data.shape[0])]

# ------------------------------------------- per-element parameters (_sample_*)
# mx.nd.random.uniform(low_nd, high_nd, shape=s): shape(low) + s draws, the
# i-th block from the i-th parameters.

_SAMPLE = [Param("shape", p_shape, ()), Param("dtype", p_dtype, None)]


def _sample_rule(attrs, shapes, dtypes):
    s0 = shapes[0]
    for i, s in enumerate(shapes):
        if s != s0:
            raise OpError("parameter %d has shape %s but parameter 0 has %s; the distribution "
                          "parameters must have the same shape" % (i, tuple(s), tuple(s0)))
    extra = attrs["shape"] or ()
    if any(d < 0 for d in extra):
        raise OpError("shape %s has a negative dimension" % (tuple(extra),))
    return (tuple(s0) + tuple(extra),), (attrs["dtype"] or np.dtype(np.float32),)


def _check_sample(op, attrs):
    _check_dtype(op, attrs, _FLOATS)


def _per_element(p, out):
    return p.reshape(p.shape + (1,) * (out.ndim - p.ndim)).astype(np.float64)


@register("_sample_uniform", inputs=("low", "high"), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_uniform",))
def _sample_uniform(xp, low, high, out, rng, shape=(), dtype=None):
    """sample_uniform(low, high, shape=()): U[low[i], high[i]) draws per parameter."""
    lo, hi = _per_element(low, out), _per_element(high, out)
    # low + u * (high - low): MXNet draws this way, so low > high gives
    # values in (high, low] instead of an error
    if _on_device(xp):
        return _fill(out, lo + rng.device(xp).uniform(0.0, 1.0, size=out.shape,
                                                      dtype=np.float64) * (hi - lo))
    _fill(out, lo + rng.gen.uniform(0.0, 1.0, size=out.shape) * (hi - lo))


@register("_sample_normal", inputs=("mu", "sigma"), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_normal",))
def _sample_normal(xp, mu, sigma, out, rng, shape=(), dtype=None):
    """sample_normal(mu, sigma, shape=()): N(mu[i], sigma[i]**2) draws per parameter."""
    m, s = _per_element(mu, out), _per_element(sigma, out)
    if _on_device(xp):
        return _fill(out, rng.device(xp).normal(m, s, size=out.shape, dtype=np.float64))
    _fill(out, rng.gen.normal(m, s, size=out.shape))


@register("_sample_exponential", inputs=("lam",), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_exponential",))
def _sample_exponential(xp, lam, out, rng, shape=(), dtype=None):
    """sample_exponential(lam, shape=()): draws with rate lam[i] per parameter."""
    if _on_device(xp):
        return _fill(out, _dev_exponential(xp, rng.device(xp), _per_element(lam, out), out))
    _fill(out, rng.gen.exponential(1.0 / _per_element(lam, out), size=out.shape))

# ------------------------------------------- gamma, poisson, negative binomials


def _positive(*names, allow_zero=()):
    def check(op, attrs):
        _check_dtype(op, attrs, _FLOATS)
        for n in names:
            v = attrs[n]
            if not (v > 0 or (n in allow_zero and v == 0)):
                raise OpError("%s: %s must be %s 0, got %r"
                              % (op.name, n, ">=" if n in allow_zero else ">", v))
    return check


def _check_negbin(op, attrs):
    _check_dtype(op, attrs, _FLOATS)
    if not attrs["k"] > 0:
        raise OpError("%s: k must be > 0, got %r" % (op.name, attrs["k"]))
    if not 0 < attrs["p"] <= 1:
        raise OpError("%s: p must be in (0, 1], got %r" % (op.name, attrs["p"]))


def _gnb(gen, mu, alpha, size):
    # MXNet: a Poisson whose rate is Gamma(1/alpha, mu*alpha); alpha == 0 is Poisson(mu)
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), size)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), size)
    rate = np.where(alpha > 0, gen.gamma(np.where(alpha > 0, 1.0 / np.maximum(alpha, 1e-300), 1.0),
                                          mu * alpha, size=size), mu)
    return gen.poisson(rate)


@register("_random_gamma", inputs=(), params=[Param("alpha", p_float, 1.0), Param("beta", p_float, 1.0)]
          + _COMMON, infer=_shape_rule, needs_rng=True, attr_check=_positive("alpha", "beta"),
          aliases=("random_gamma",))
def _random_gamma(xp, out, rng, alpha=1.0, beta=1.0, shape=None, dtype=None, ctx=None):
    """gamma(alpha=1, beta=1, shape): Gamma draws with shape alpha and scale beta."""
    if _on_device(xp):
        return _fill(out, rng.device(xp).gamma(alpha, beta, size=out.shape, dtype=_fdt(out)))
    _fill(out, rng.gen.gamma(alpha, beta, size=out.shape))


@register("_random_poisson", inputs=(), params=[Param("lam", p_float, 1.0)] + _COMMON,
          infer=_shape_rule, needs_rng=True, attr_check=_positive("lam", allow_zero=("lam",)),
          aliases=("random_poisson",))
def _random_poisson(xp, out, rng, lam=1.0, shape=None, dtype=None, ctx=None):
    """poisson(lam=1, shape): Poisson draws (as floats, like MXNet)."""
    if _on_device(xp):
        return _fill(out, rng.device(xp).poisson(lam, size=out.shape))
    _fill(out, rng.gen.poisson(lam, size=out.shape))


@register("_random_negative_binomial", inputs=(), params=[Param("k", p_float, 1.0),
                                                          Param("p", p_float, 1.0)] + _COMMON,
          infer=_shape_rule, needs_rng=True, attr_check=_check_negbin,
          aliases=("random_negative_binomial",))
def _random_negative_binomial(xp, out, rng, k=1.0, p=1.0, shape=None, dtype=None, ctx=None):
    """negative_binomial(k=1, p=1, shape): failures before k successes of probability p."""
    if _on_device(xp):
        return _fill(out, _dev_negbin(xp, rng.device(xp), k, p, out))
    _fill(out, rng.gen.negative_binomial(k, p, size=out.shape))


@register("_random_generalized_negative_binomial", inputs=(),
          params=[Param("mu", p_float, 1.0), Param("alpha", p_float, 1.0)] + _COMMON,
          infer=_shape_rule, needs_rng=True,
          attr_check=_positive("mu", "alpha", allow_zero=("mu", "alpha")),
          aliases=("random_generalized_negative_binomial",))
def _random_generalized_negative_binomial(xp, out, rng, mu=1.0, alpha=1.0, shape=None, dtype=None,
                                          ctx=None):
    """generalized_negative_binomial(mu=1, alpha=1, shape): mean mu, dispersion alpha."""
    if _on_device(xp):
        return _fill(out, _dev_gnb(xp, rng.device(xp), mu, alpha, out))
    _fill(out, _gnb(rng.gen, mu, alpha, out.shape))


@register("_random_bernoulli", inputs=(), params=[Param("prob", p_float, 0.5)] + _COMMON,
          infer=_shape_rule, needs_rng=True, aliases=("random_bernoulli",),
          attr_check=lambda op, a: (_check_dtype(op, a, _FLOATS + _INTS),
                                    None if 0 <= a["prob"] <= 1 else _raise(
                                        "%s: prob must be in [0, 1], got %r" % (op.name, a["prob"]))))
def _random_bernoulli(xp, out, rng, prob=0.5, shape=None, dtype=None, ctx=None):
    """bernoulli(prob=0.5, shape): 1 with probability prob, else 0."""
    if _on_device(xp):
        return _fill(out, rng.device(xp).random_sample(out.shape, dtype=np.float64) < prob)
    _fill(out, rng.gen.random(size=out.shape) < prob)


def _raise(msg):
    raise OpError(msg)


@register("_sample_gamma", inputs=("alpha", "beta"), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_gamma",))
def _sample_gamma(xp, alpha, beta, out, rng, shape=(), dtype=None):
    """sample_gamma(alpha, beta, shape=()): Gamma(alpha[i], beta[i]) draws per parameter."""
    a, b = _per_element(alpha, out), _per_element(beta, out)
    if _on_device(xp):
        return _fill(out, rng.device(xp).gamma(a, b, size=out.shape, dtype=np.float64))
    _fill(out, rng.gen.gamma(a, b, size=out.shape))


@register("_sample_poisson", inputs=("lam",), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_poisson",))
def _sample_poisson(xp, lam, out, rng, shape=(), dtype=None):
    """sample_poisson(lam, shape=()): Poisson(lam[i]) draws per parameter."""
    if _on_device(xp):
        return _fill(out, rng.device(xp).poisson(_per_element(lam, out), size=out.shape))
    _fill(out, rng.gen.poisson(_per_element(lam, out), size=out.shape))


@register("_sample_negative_binomial", inputs=("k", "p"), params=_SAMPLE, infer=_sample_rule,
          needs_rng=True, attr_check=_check_sample, aliases=("sample_negative_binomial",))
def _sample_negative_binomial(xp, k, p, out, rng, shape=(), dtype=None):
    """sample_negative_binomial(k, p, shape=()): per-parameter negative binomial draws."""
    if _on_device(xp):
        return _fill(out, _dev_negbin(xp, rng.device(xp), _per_element(k, out),
                                      _per_element(p, out), out))
    _fill(out, rng.gen.negative_binomial(_per_element(k, out), _per_element(p, out), size=out.shape))


@register("_sample_generalized_negative_binomial", inputs=("mu", "alpha"), params=_SAMPLE,
          infer=_sample_rule, needs_rng=True, attr_check=_check_sample,
          aliases=("sample_generalized_negative_binomial",))
def _sample_generalized_negative_binomial(xp, mu, alpha, out, rng, shape=(), dtype=None):
    """sample_generalized_negative_binomial(mu, alpha, shape=()): per-parameter draws."""
    if _on_device(xp):
        return _fill(out, _dev_gnb(xp, rng.device(xp), _per_element(mu, out),
                                   _per_element(alpha, out), out))
    _fill(out, _gnb(rng.gen, _per_element(mu, out), _per_element(alpha, out), out.shape))

# ------------------------------------------------------------------ multinomial


def _multinomial_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if not s:
        raise OpError("data must have at least 1 dimension (the probabilities), got ()")
    extra = attrs["shape"] or ()
    out = s[:-1] + tuple(extra)
    if not out:
        out = (1,)
    dt = attrs["dtype"] or np.dtype(np.int32)
    if attrs["get_prob"]:
        return (out, out), (dt, dtypes[0])
    return (out,), (dt,)


@register("_sample_multinomial", params=[Param("shape", p_shape, ()),
                                         Param("get_prob", lambda v: str(v).lower() in ("true", "1"), False),
                                         Param("dtype", p_dtype, np.dtype(np.int32))],
          infer=_multinomial_rule, needs_rng=True, num_outputs=2,
          num_visible=lambda a: 2 if a["get_prob"] else 1, aliases=("sample_multinomial",))
def _sample_multinomial(xp, data, out, rng, shape=(), get_prob=False, dtype=None):
    """sample_multinomial(data, shape=(), get_prob=False): category indices drawn from the
    probabilities along data's last axis (and their log-probabilities with get_prob)."""
    outs = out if isinstance(out, list) else [out]
    p = data.astype(np.float64).reshape(-1, data.shape[-1])
    extra = tuple(shape or ())
    m = int(np.prod(extra)) if extra else 1
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    u = uniform01(xp, rng, (p.shape[0], m), np.float64)
    idx = np.minimum((u[:, :, None] > cdf[:, None, :]).sum(axis=2), p.shape[1] - 1)
    outs[0][...] = idx.reshape(outs[0].shape)
    if len(outs) > 1:
        logp = np.log(np.take_along_axis(p, idx, axis=1))
        outs[1][...] = logp.reshape(outs[1].shape)


# every sampler here draws on the device on a GPU context (see the module
# docstring); none is a host kernel
