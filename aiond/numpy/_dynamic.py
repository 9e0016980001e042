"""The ``DYNAMIC`` entries of mx.np's value-shaped ops (``npx.nonzero``,
``np.unique``, ``np.bincount``, ``np.linalg.lstsq``): each reads its computed
input on the host, finds the result there and hands it back as mx.np arrays
on the input's device. The ops themselves are registered in
``aiond.ops.np_sorting``; these front ends make arrays, so they live here,
above the ops layer. ``aiond.graph.program`` runs them for such ops in a graph."""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, OpError
from ..ops.dynamic import dynamic_shape
from .multiarray import array

__all__ = ["nonzero", "unique", "bincount", "lstsq"]


def _host(*arrs):
    """Host copies of computed inputs of a value-dependent-shape op."""
    from ..engine import get as _get_engine
    if _get_engine().tracing():
        from ..engine.segments import TraceError
        raise TraceError("the op's result shape depends on its input's values")
    return [a.asnumpy() for a in arrs]


def _to_nd(v, like, dtype=None):
    return array(v, dtype=v.dtype if dtype is None else dtype, ctx=like.context)


@dynamic_shape("_npx_nonzero")
def nonzero(a, out=None, name=None, **hidden):
    """``npx.nonzero(a)``: int64 indices (N, a.ndim) of a's non-zero elements."""
    (h,) = _host(a)
    # a 0-d array counts as 1-d, as NumPy's (deprecated) nonzero does
    r = np.transpose(np.stack(np.nonzero(np.atleast_1d(h)))).astype(np.int64)
    return _to_nd(r, a)


@dynamic_shape("_npi_unique")
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           out=None, name=None, **hidden):
    """``np.unique`` on a computed array: the sorted unique values, then the indices
    of their first occurrences, the inverse indices and the counts asked for."""
    (h,) = _host(ar)
    if axis is not None:
        axis = int(axis)
        if not -h.ndim <= axis < max(h.ndim, 1):
            raise OpError("unique: axis=%d is out of range for an array of %d dimension(s)"
                          % (axis, h.ndim))
        axis = axis % h.ndim if h.ndim else 0
    try:
        res = np.unique(h, return_index=True, return_inverse=True, return_counts=True,
                        axis=axis)
    except (ValueError, TypeError, np.exceptions.AxisError if hasattr(np, "exceptions")
            else ValueError) as e:
        raise MXNetError("unique: %s" % e) from None
    u, idx, inv, cnt = res
    inv = inv.reshape(-1)           # MXNet (and NumPy < 2): always 1-D
    # the outputs asked for, packed in this order (MXNet's visible outputs)
    outs = [_to_nd(u, ar)]
    for want, v in ((return_index, idx), (return_inverse, inv), (return_counts, cnt)):
        if want:
            outs.append(_to_nd(v.astype(np.int64), ar))
    return outs[0] if len(outs) == 1 else outs


@dynamic_shape("_npi_bincount")
def bincount(data, *weights, minlength=0, has_weights=False, out=None, name=None, **hidden):
    """``np.bincount`` on a computed array of non-negative ints."""
    hs = _host(data, *weights)
    h = hs[0]
    if h.dtype.kind not in "iub":
        raise MXNetError("bincount: input data must be an integer array, got %s" % h.dtype)
    if minlength < 0:
        raise MXNetError("bincount: minlength must be non-negative, got %d" % minlength)
    if h.size and h.min() < 0:
        raise MXNetError("bincount: input data must be non-negative")
    w = hs[1] if has_weights and len(hs) > 1 else None
    r = np.bincount(h.reshape(-1), weights=w, minlength=minlength)
    if w is None:
        return _to_nd(r.astype(np.int64), data)
    return _to_nd(r.astype(hs[1].dtype if hs[1].dtype.kind == "f" else np.float64), data)


@dynamic_shape("_npi_lstsq")
def lstsq(a, b, rcond="warn", out=None, name=None, **hidden):
    """``np.linalg.lstsq`` on computed arrays: the residuals' length depends on the rank."""
    ha, hb = _host(a, b)
    if ha.ndim != 2 or hb.ndim not in (1, 2) or hb.shape[0] != ha.shape[0]:
        raise MXNetError("lstsq: a must be 2-D and b 1-D or 2-D with a's rows, got shapes %s "
                         "and %s" % (ha.shape, hb.shape))
    dt = ha.dtype if ha.dtype.kind == "f" else np.dtype(np.float32)
    x, res, rank, sv = np.linalg.lstsq(ha.astype(np.float64), hb.astype(np.float64),
                                       rcond=None if rcond in ("warn", None) else rcond)
    return [_to_nd(x.astype(dt), a), _to_nd(res.astype(dt), a),
            _to_nd(np.asarray(rank, dtype=np.int64), a), _to_nd(sv.astype(dt), a)]
