"""``mx.nd.random``: sampling functions (MXNet 1.9.1 signatures)."""
from __future__ import annotations

from ..ops import registry as _reg
from ._invoke import invoke

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "shuffle"]


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
    kw["shape"] = shape if shape is not None else (1,)
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
