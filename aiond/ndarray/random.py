"""``mx.nd.random``: sampling functions (MXNet 1.9.1 signatures)."""
from __future__ import annotations

from ..ops import registry as _reg
from ._invoke import invoke

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "bernoulli",
           "shuffle", "uniform_like", "normal_like", "gamma_like", "exponential_like",
           "poisson_like", "negative_binomial_like", "generalized_negative_binomial_like"]


def _sample(opname, params, shape, dtype, ctx, out):
    from .ndarray import NDArray, _ctx_arg
    nds = [v for v in params.values() if isinstance(v, NDArray)]
    if nds:
        # MXNet's _random_helper: NDArray parameters draw per element (_sample_*)
        if len(nds) != len(params):
            raise TypeError("Distribution parameters must all have the same type, but got %s"
                            % " and ".join(sorted({type(v).__name__ for v in params.values()})))
        op = _reg.get(opname.replace("_random_", "_sample_"))
        kw = {"shape": shape if shape is not None else ()}
        if dtype is not None:
            kw["dtype"] = dtype
        return invoke(op, nds, op.parse(kw), out)
    op = _reg.get(opname)
    kw = dict(params)
    # MXNet leaves shape (and dtype) unset when not given: with out= they come
    # from out (initializers write mx.nd.random.uniform(..., out=arr))
    if shape is None:
        shape = tuple(out.shape) if out is not None else (1,)
    kw["shape"] = shape
    if dtype is None and out is not None:
        dtype = out.dtype
    if dtype is not None:
        kw["dtype"] = dtype
    attrs = op.parse(kw)
    attrs["ctx"] = None
    if out is not None:
        return invoke(op, [], attrs, out, out.context)
    return invoke(op, [], attrs, None, _ctx_arg(ctx))


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high)."""
    return _sample("_random_uniform", {"low": low, "high": high}, shape, dtype, ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a normal distribution N(loc, scale**2)."""
    return _sample("_random_normal", {"loc": loc, "scale": scale}, shape, dtype, ctx, out)


def randn(*shape, **kwargs):
    """Standard normal samples of the given shape."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    return normal(loc, scale, shape=shape or None, **kwargs)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers in [low, high) (int32 unless ``dtype``)."""
    return _sample("_random_randint", {"low": low, "high": high}, shape, dtype, ctx, out)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from an exponential distribution with mean ``scale``."""
    return _sample("_random_exponential", {"lam": 1.0 / scale}, shape, dtype, ctx, out)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    return invoke(_reg.get("_shuffle"), [data], {}, kwargs.get("out"))


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a Gamma distribution with shape ``alpha`` and scale ``beta``."""
    return _sample("_random_gamma", {"alpha": alpha, "beta": beta}, shape, dtype, ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from a Poisson distribution with rate ``lam``."""
    return _sample("_random_poisson", {"lam": lam}, shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Failures before ``k`` successes of probability ``p``."""
    return _sample("_random_negative_binomial", {"k": k, "p": p}, shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  **kwargs):
    """Negative binomial with mean ``mu`` and dispersion ``alpha``."""
    return _sample("_random_generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape,
                   dtype, ctx, out)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Category indices drawn from the probabilities in ``data``'s last axis;
    with ``get_prob=True`` also their log-probabilities."""
    op = _reg.get("_sample_multinomial")
    attrs = op.parse({"shape": shape if shape is not None else (), "get_prob": get_prob,
                      "dtype": dtype})
    return invoke(op, [data], attrs, out)


def bernoulli(prob=0.5, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """1 with probability ``prob``, else 0 (float32 unless ``dtype``)."""
    return _sample("_random_bernoulli", {"prob": prob}, shape, dtype, ctx, out)


def _like_functions():
    # ``normal_like(data, loc, scale)`` ...: the _random_<dist>_like registry ops, as
    # MXNet's op registration puts them in this module
    from ._namespace import make_function
    for name in __all__:
        if name.endswith("_like"):
            fn = make_function(_reg.get("_random_" + name), name)
            fn.__name__ = name
            globals()[name] = fn


_like_functions()
