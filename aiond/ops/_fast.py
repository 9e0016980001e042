"""numpy fast paths for kernels that every conv net runs: ReLU and the
per-channel sums of bias gradients.

numpy 2.x's ``maximum`` of a float array against a scalar (a stride-0
operand) takes a loop without SIMD: ``maximum(x, 0)`` over a LeNet
activation (737k float32) costs 275 us where the same call against a
contiguous array of zeros costs 105. ReLU is run against a small cached
block of zeros, chunk by chunk; the results are bit for bit the scalar
call's (NaNs of either sign and signed zeros included).
"""
from __future__ import annotations

import numpy as np

_CHUNK = 1 << 17        # elements: a float32 block of zeros is 512 KB (L2-sized)
_MIN = 1 << 12          # below this the scalar loop's cost does not matter
_FILLED = {}


def _filled(value, dt, n):
    """A read-only array of ``n`` ``value``s of dtype ``dt``, from a cache
    that grows to the largest ``n`` asked for."""
    a = _FILLED.get((value, dt))
    if a is None or a.size < n:
        a = np.full(max(n, 1024), value, dt)
        a.flags.writeable = False
        _FILLED[value, dt] = a
    return a[:n]


def relu_into(xp, x, out):
    """``out = maximum(x, 0)`` in ``out``'s dtype (``x`` may be ``out``)."""
    n = x.size
    if (xp is np and n >= _MIN and x.dtype == out.dtype and x.dtype.kind == "f"
            and x.shape == out.shape and x.flags.c_contiguous and out.flags.c_contiguous):
        z = _filled(0, x.dtype, _CHUNK)
        xf = x.reshape(-1)
        of = out.reshape(-1)
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            np.maximum(xf[lo:hi], z[:hi - lo], out=of[lo:hi])
        return
    xp.maximum(x, out.dtype.type(0), out=out)


def channel_sum(xp, a, out=None):
    """``out[c] = a[:, c, ...].sum()`` (a new array when ``out`` is None): a
    convolution's bias gradient, BatchNorm's per-channel sums.

    numpy reduces over axes (0, 2, 3) of a contiguous float array 4-6x
    slower than BLAS multiplies its (N*C, H*W) view by a vector of ones and
    adds the N rows of the result; the BLAS sum is at least as accurate
    (blocked float accumulation, no pairwise tree), not bit for bit the same."""
    n, c = a.shape[0], a.shape[1]
    b = a.size // (n * c) if n * c else 0
    if (xp is np and b >= 16 and a.dtype.kind == "f" and a.dtype.itemsize >= 4
            and a.flags.c_contiguous and (out is None or out.dtype == a.dtype)):
        r = np.matmul(a.reshape(n * c, b), _filled(1, a.dtype, b))
        return np.sum(r.reshape(n, c), axis=0, out=out)
    r = xp.sum(a, axis=(0,) + tuple(range(2, a.ndim)))
    if out is None:
        return r
    out[...] = r.astype(out.dtype, copy=False)
    return out


_ROW_MAX_COLS = 64      # rows this short: numpy's axis reduction runs ~50 ns an element
_ROW_MAX_ROWS = 32      # fewer rows: the copy and the check cost more than they save


def last_axis_max(xp, x):
    """``max(x, axis=-1, keepdims=True)``, bit for bit.

    numpy 2.x reduces ``maximum`` along a short last axis one row at a time:
    7 us for a (128, 10) float32 array of logits, 65 us for (1280, 10). The
    same maxima come from the rows of the transposed copy, element by element,
    in ~1/5 of that. Only a maximum that is a zero (of either sign) or a NaN
    can differ in its sign bit between the two orders: then numpy's own
    reduction decides."""
    return _last_axis_extreme(xp, x, np.maximum)


def last_axis_min(xp, x):
    """``min(x, axis=-1, keepdims=True)``, bit for bit (see ``last_axis_max``)."""
    return _last_axis_extreme(xp, x, np.minimum)


def _last_axis_extreme(xp, x, uf):
    n = x.shape[-1] if x.ndim else 0
    if (xp is np and x.ndim >= 2 and 0 < n <= _ROW_MAX_COLS and x.dtype.kind == "f"
            and x.flags.c_contiguous and x.size >= _ROW_MAX_ROWS * n):
        m = uf.reduce(np.ascontiguousarray(x.reshape(-1, n).T), axis=0)
        # (the smallest |extreme| is NaN if one is, 0 if one is a zero)
        if np.minimum.reduce(np.abs(m)) > 0:
            return m.reshape(x.shape[:-1] + (1,))
    return uf.reduce(x, axis=-1, keepdims=True) if xp is np else \
        (xp.max if uf is np.maximum else xp.min)(x, axis=-1, keepdims=True)
