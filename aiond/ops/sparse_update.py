"""Lazy optimizer updates for row_sparse gradients (MXNet 1.9.1's
``FComputeEx`` of ``sgd_update``, ``sgd_mom_update``, ``adam_update``,
``ftrl_update``, ``_sparse_adagrad_update`` and their multi-precision forms).

With a row_sparse gradient, ``lazy_update=True`` and states stored like the
weight, only the rows the gradient holds are updated: weight decay and the
states of the other rows are left alone. The rows are updated by the op's own
dense kernel, run on those rows only, so the arithmetic is the dense one.
Every other combination (``lazy_update=False``, dense states for a
row_sparse weight) is MXNet's standard update, which is the dense kernel on
the densified gradient: the storage fallback gives it.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from . import optimizer_fused as _fused
from . import optimizer_ops as _ops  # noqa: F401  (the dense update ops)
from . import registry as _reg
from .registry import register
from .sparse import RSP, SPARSE, SparseImpl, stype_of

_I64 = np.dtype(np.int64)


def _rows_of(v, idx, shape):
    """Dense rows ``idx`` of value ``v`` (zeros for rows a row_sparse value lacks)."""
    if isinstance(v, RSP):
        out = np.zeros((len(idx),) + tuple(shape[1:]), dtype=v.data.dtype)
        if len(v.indices):
            pos = np.searchsorted(v.indices, idx)
            pos_c = np.minimum(pos, len(v.indices) - 1)
            hit = v.indices[pos_c] == idx
            out[hit] = v.data[pos_c[hit]]
        return out
    return v[idx]


def _put_rows(v, idx, rows, inplace):
    """Value ``v`` with rows ``idx`` replaced by ``rows``."""
    if isinstance(v, RSP):
        new_idx = np.union1d(v.indices, idx).astype(v.indices.dtype)
        data = np.zeros((len(new_idx),) + rows.shape[1:], dtype=v.data.dtype)
        if len(v.indices):
            data[np.searchsorted(new_idx, v.indices)] = v.data
        data[np.searchsorted(new_idx, idx)] = rows
        return RSP(data, new_idx)
    nv = v if inplace else np.array(v, copy=True)
    nv[idx] = rows
    return nv


def _lazy_stypes(n_states, needs_lazy_flag=True, all_rsp=False):
    def rule(attrs, st):
        w, g, states = st[0], st[1], st[2:2 + n_states]
        if g != "row_sparse" or w not in ("default", "row_sparse"):
            return None
        if needs_lazy_flag and not attrs.get("lazy_update", True):
            return None
        if any(s != w for s in states):
            return None
        if all_rsp and w != "row_sparse":
            return None
        if any(s != "default" for s in st[2 + n_states:]):   # mp_* master weights: dense
            if not all(s == w for s in st[2 + n_states:]):
                return None
        return (w,)
    return rule


def _lazy_kernel(opname):
    def kern(vals, attrs, shapes, oshapes, odtypes, muts):
        op = _reg.get(opname)
        w, g = vals[0], vals[1]
        idx = g.indices.astype(_I64)
        if not len(idx):
            return [w if isinstance(w, RSP) else np.array(w, copy=True)]
        wr = _rows_of(w, idx, shapes[0])
        states = [_rows_of(s, idx, shapes[i + 2]) for i, s in enumerate(vals[2:])]
        out = np.empty_like(wr)
        op.kernel(np, wr, g.data, *states, out=out, **attrs)
        for i, (s, r) in enumerate(zip(vals[2:], states)):
            if 2 + i in op.mutates:
                muts[2 + i] = _put_rows(s, idx, r, inplace=True)
        return [_put_rows(w, idx, out, inplace=False)]
    return kern


for _name, _n in (("sgd_update", 0), ("sgd_mom_update", 1), ("mp_sgd_update", 0),
                  ("mp_sgd_mom_update", 1), ("adam_update", 2), ("_mp_adam_update", 2)):
    SPARSE[_name] = SparseImpl(_lazy_stypes(_n), _lazy_kernel(_name))

SPARSE["ftrl_update"] = SparseImpl(_lazy_stypes(2, needs_lazy_flag=False, all_rsp=True),
                                   _lazy_kernel("ftrl_update"))


def _adagrad_check(op, attrs):
    if attrs["wd"] != 0:
        raise OpError("sparse adagrad_update does not support wd (got wd=%s)" % attrs["wd"])


@register("_sparse_adagrad_update", inputs=("weight", "grad", "history"),
          params=[_reg.Param("lr", _reg.p_float, doc="learning rate"),
                  _reg.Param("epsilon", _reg.p_float, 1e-7), _reg.Param("wd", _reg.p_float, 0.0),
                  _reg.Param("rescale_grad", _reg.p_float, 1.0),
                  _reg.Param("clip_gradient", _reg.p_float, -1.0)],
          infer=_reg.get("_adagrad_update").infer, mutates=(2,), attr_check=_adagrad_check)
def _sparse_adagrad_update(xp, weight, grad, history, out, lr, epsilon=1e-7, wd=0.0,
                           rescale_grad=1.0, clip_gradient=-1.0):
    """adagrad_update(weight, grad, history, lr, epsilon, wd, rescale_grad,
    clip_gradient): history += g*g; weight -= lr*g/sqrt(history + epsilon), with
    g = clip(grad*rescale_grad); for row_sparse gradients, on their rows only."""
    _fused._adagrad_update(xp, weight, grad, history, out, lr, epsilon, wd, rescale_grad,
                           clip_gradient)


SPARSE["_sparse_adagrad_update"] = SparseImpl(_lazy_stypes(1, needs_lazy_flag=False),
                                              _lazy_kernel("_sparse_adagrad_update"))

_ = stype_of
