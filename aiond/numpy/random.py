"""``mx.np.random``: NumPy-style sampling (``size=``, 0-d results for
``size=None``, array parameters broadcast). Draws come from the context's
generator inside the engine, so ``mx.random.seed`` makes them reproducible."""
from __future__ import annotations

import numpy as _np

from ..base import integer_types, numeric_types
from ..ndarray.ndarray import NDArray
from .multiarray import _ctx, _dtype_arg, _reshape, array, invoke, ndarray

__all__ = ["randint", "uniform", "normal", "choice", "rand", "randn", "shuffle", "gamma",
           "exponential", "beta", "chisquare", "laplace", "logistic", "gumbel", "lognormal",
           "weibull", "pareto", "power", "rayleigh", "f", "multinomial"]


def _size(size):
    if size is None:
        return None
    if isinstance(size, integer_types):
        return (int(size),)
    return tuple(int(d) for d in size)


def _draw(dist, params, size, dtype, ctx, out):
    """Sample ``dist`` with scalar or array ``params`` (NumPy broadcasting)."""
    arrays = [p for p in params if isinstance(p, NDArray)]
    for p in params:
        if not isinstance(p, (NDArray,) + numeric_types) or isinstance(p, _np.ndarray):
            if isinstance(p, (_np.ndarray, list, tuple)):
                continue
            raise TypeError("%s: parameters must be numbers or arrays, got %s"
                            % (dist, type(p).__name__))
    params = [array(p, ctx=ctx) if isinstance(p, (_np.ndarray, list, tuple)) else p
              for p in params]
    arrays = [p for p in params if isinstance(p, NDArray)]
    size = _size(size)
    if size is None:
        size = tuple(_np.broadcast_shapes(*[p.shape for p in arrays])) if arrays else ()
    if arrays:
        ctx = arrays[0].context
    elif out is not None:
        ctx = out.context
    else:
        ctx = _ctx(ctx)
    args = tuple(None if isinstance(p, NDArray) else float(p) for p in params)
    if dist == "integers":
        args = tuple(None if a is None else int(a) for a in args)
    attrs = {"dist": dist, "args": args, "size": size,
             "dtype": None if dtype is None else _dtype_arg(dtype)}
    ins = [p.astype(_np.float64) if p.dtype != _np.float64 else p for p in arrays]
    return invoke("_npi_random", ins, attrs, out, ctx)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from U[low, high) (float32 unless ``dtype``)."""
    return _draw("uniform", [low, high], size, dtype, ctx, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2)."""
    return _draw("normal", [loc, scale], size, dtype, ctx, out)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers in [low, high) (int64 unless ``dtype``; [0, low) without ``high``)."""
    if high is None:
        low, high = 0, low
    if not isinstance(low, integer_types) or not isinstance(high, integer_types):
        raise TypeError("randint: low and high must be integers")
    if high <= low:
        raise ValueError("low >= high")
    return _draw("integers", [low, high], size, dtype or _np.int64, ctx, out)


def rand(*size, **kwargs):
    """Uniform samples in [0, 1) of shape ``size``."""
    return uniform(size=size or None, **kwargs)


def randn(*size, **kwargs):
    """Standard normal samples of shape ``size``."""
    return normal(size=size or None, **kwargs)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Random samples from ``a`` (an int: ``range(a)``; or a 1-D array)."""
    if isinstance(a, integer_types):
        n, pool = int(a), None
    elif isinstance(a, NDArray):
        if a.ndim != 1:
            raise ValueError("a must be 1-dimensional")
        n, pool = a.shape[0], a
    else:
        raise TypeError("choice: a must be an int or an mx.np.ndarray, got %s"
                        % type(a).__name__)
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    sz = _size(size)
    shape = () if sz is None else sz
    if not replace and int(_np.prod(shape)) > n:
        raise ValueError("Cannot take a larger sample than population when 'replace=False'")
    ins = []
    if p is not None:
        pa = p if isinstance(p, NDArray) else array(p, dtype=_np.float64)
        ins = [pa]
    c = pool.context if pool is not None else _ctx(ctx)
    idx = invoke("_npi_choice", ins, {"a": n, "size": shape, "replace": bool(replace)},
                 None, c)
    if pool is None:
        if out is not None:
            out[...] = idx
            return out
        return idx
    from ._op import take
    return take(pool, idx, out=out)


def shuffle(x):
    """Shuffle ``x`` along its first axis, in place."""
    from ..ops import registry as _reg
    from ..ndarray._invoke import invoke as _invoke
    _invoke(_reg.get("_shuffle"), [x], {}, x)


def gamma(shape=1.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from Gamma(shape, scale)."""
    return _draw("gamma", [shape, scale], size, dtype, ctx, out)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    """Samples from an exponential distribution with mean ``scale``."""
    return _draw("exponential", [scale], size, None, ctx, out)


def beta(a, b, size=None, dtype=None, ctx=None):
    return _draw("beta", [a, b], size, dtype, ctx, None)


def chisquare(df, size=None, dtype=None, ctx=None):
    return _draw("chisquare", [df], size, dtype, ctx, None)


def laplace(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("laplace", [loc, scale], size, dtype, ctx, out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _draw("logistic", [loc, scale], size, None, ctx, out)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    return _draw("gumbel", [loc, scale], size, None, ctx, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    return _draw("lognormal", [mean, sigma], size, dtype, ctx, out)


def weibull(a, size=None, ctx=None, out=None):
    return _draw("weibull", [a], size, None, ctx, out)


def pareto(a, size=None, ctx=None, out=None):
    return _draw("pareto", [a], size, None, ctx, out)


def power(a, size=None, ctx=None, out=None):
    return _draw("power", [a], size, None, ctx, out)


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    return _draw("rayleigh", [scale], size, None, ctx, out)


def f(dfnum, dfden, size=None, ctx=None):
    return _draw("f", [dfnum, dfden], size, None, ctx, None)


def multinomial(n, pvals, size=None):
    """Counts of ``n`` draws over categories with probabilities ``pvals`` (int64)."""
    pv = _np.asarray(pvals.asnumpy() if isinstance(pvals, NDArray) else pvals, dtype=_np.float64)
    if pv.ndim != 1:
        raise ValueError("object too deep for desired array")
    sz = _size(size)
    shape = (() if sz is None else sz)
    k = pv.shape[0]
    draws = choice(k, size=shape + (int(n),), p=array(pv, dtype=_np.float64))
    onehot = _reshape(draws, shape + (int(n), 1)) == array(_np.arange(k), dtype=_np.int64)
    from . import sum as _sum
    return _sum(onehot, axis=len(shape), dtype=_np.int64)


_ = ndarray


from . import _front as _front  # noqa: E402
_front.populate(_front.ND, "np.random", globals(), __name__)
