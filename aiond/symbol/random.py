"""``mx.sym.random``: sampling symbols with MXNet 1.9.1's signatures.

As in MXNet, numbers as distribution parameters give a ``_random_<dist>``
node drawing ``shape`` samples, Symbols give a ``_sample_<dist>`` node
drawing ``shape`` samples per parameter element. The other ``_random_*`` /
``_sample_*`` registry ops (``normal_like``, ``pdf_normal``...) are added
under their short names by the package."""
from __future__ import annotations

from ..base import _Null, numeric_types
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


def _internal(name):
    from . import _internal as mod
    return getattr(mod, name)


def _random_helper(random, sampler, params, shape, dtype, kwargs):
    if isinstance(params[0], Symbol):
        for p in params[1:]:
            if not isinstance(p, Symbol):
                raise TypeError("Distribution parameters must all have the same type, but got "
                                "both %s and %s." % (type(params[0]), type(p)))
        return _internal(sampler)(*params, shape=shape, dtype=dtype, **kwargs)
    if isinstance(params[0], numeric_types):
        for p in params[1:]:
            if not isinstance(p, numeric_types):
                raise TypeError("Distribution parameters must all have the same type, but got "
                                "both %s and %s." % (type(params[0]), type(p)))
        names = _PARAM_NAMES[random]
        kw = dict(zip(names, params))
        return _internal(random)(shape=shape, dtype=dtype, **kw, **kwargs)
    raise ValueError("Distribution parameters must be either Symbol or numbers, but got %s."
                     % type(params[0]))


_PARAM_NAMES = {
    "_random_uniform": ("low", "high"), "_random_normal": ("loc", "scale"),
    "_random_poisson": ("lam",), "_random_exponential": ("lam",),
    "_random_gamma": ("alpha", "beta"), "_random_negative_binomial": ("k", "p"),
    "_random_generalized_negative_binomial": ("mu", "alpha"),
    "_random_randint": ("low", "high"),
}


def uniform(low=0, high=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from U[low, high)."""
    return _random_helper("_random_uniform", "_sample_uniform", [low, high], shape, dtype,
                          kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from N(loc, scale**2)."""
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype,
                          kwargs)


def randn(*shape, **kwargs):
    """Samples from N(loc, scale**2) of the given shape."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", _Null)
    return _random_helper("_random_normal", "_sample_normal", [loc, scale], shape, dtype,
                          kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from a Poisson distribution of rate ``lam``."""
    return _random_helper("_random_poisson", "_sample_poisson", [lam], shape, dtype, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from an exponential distribution of mean ``scale``."""
    return _random_helper("_random_exponential", "_sample_exponential", [1.0 / scale], shape,
                          dtype, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from a Gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _random_helper("_random_gamma", "_sample_gamma", [alpha, beta], shape, dtype,
                          kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, **kwargs):
    """Failures before ``k`` successes of probability ``p``."""
    return _random_helper("_random_negative_binomial", "_sample_negative_binomial", [k, p],
                          shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, **kwargs):
    """Negative binomial with mean ``mu`` and dispersion ``alpha``."""
    return _random_helper("_random_generalized_negative_binomial",
                          "_sample_generalized_negative_binomial", [mu, alpha], shape, dtype,
                          kwargs)


def multinomial(data, shape=_Null, get_prob=True, dtype="int32", **kwargs):
    """Category indices drawn from the probabilities on ``data``'s last axis."""
    return _internal("_sample_multinomial")(data, shape=shape, get_prob=get_prob, dtype=dtype,
                                            **kwargs)


def shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return _internal("_shuffle")(data, **kwargs)


def randint(low, high, shape=_Null, dtype=_Null, **kwargs):
    """Integers in [low, high)."""
    return _random_helper("_random_randint", None, [low, high], shape, dtype, kwargs)
