"""Sparse arrays on the engine: their storage, and ``invoke`` for ops that
read or write one.

A sparse array's ``Storage`` holds one value (``ops.sparse.RSP`` or
``CSR``) and one engine var, like a dense buffer: ops that write it replace
the value, ops that read it are ordered after those writes, reads run
concurrently. ``invoke`` hands an op here when an input or ``out`` is sparse:

- an op with a storage-aware kernel for these storage types (MXNet's
  ``FComputeEx``, ``ops.sparse.SPARSE``) runs it as one engine op;
- any other op runs its dense kernel on dense copies of the sparse inputs
  (MXNet's storage fallback); a sparse ``out`` receives the result cast to
  its storage type, and sparse inputs the op updates in place get the
  updated values back.

The dense copies are made by ``cast_storage``, which autograd records like
any op, so gradients reach sparse arrays that called ``attach_grad``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import engine as _engine_mod
from ..base import MXNetError, OpError
from ..context import Context, current_context
from ..engine.storage import Storage
from ..ops import registry as _reg
from ..ops import sparse as _sp
from . import _invoke
from ._invoke import data_of, hooks

__all__ = ["SparseStorage", "sparse_invoke", "value_of", "new_sparse", "assign"]

_engine = _engine_mod.get()
_prod = math.prod
AUX_TYPES = {"row_sparse": (np.dtype(np.int64),),
             "csr": (np.dtype(np.int64), np.dtype(np.int64))}


class SparseStorage(Storage):
    """The storage of a sparse array: its value and its var."""
    __slots__ = ("stype", "aux_types")

    def __init__(self, shape, dtype, ctx, stype, aux_types=None):
        Storage.__init__(self, shape, dtype, ctx)
        self.stype = stype
        self.aux_types = tuple(np.dtype(t) for t in (aux_types or AUX_TYPES[stype]))

    def _alloc(self):
        v = _sp.empty_value(self.stype, self.shape, self.dtype, self.aux_types)
        cur = self.arr
        if cur is not None:
            return cur
        self.arr = v
        return v


_CLASSES = {}     # stype -> handle class, set by sparse.py


def new_sparse(stype, shape, dtype, ctx, aux_types=None):
    """A fresh all-zero sparse array handle (on a GPU context, its value
    lives in host memory: ``_sparse_gpu``)."""
    if ctx.device_typeid == 2:
        _invoke._no_gpu(ctx)
    cls = _CLASSES[stype]
    h = cls.__new__(cls)
    h._st = SparseStorage(tuple(shape), np.dtype(dtype), ctx, stype, aux_types)
    h._shape = tuple(shape)
    h._dtype = np.dtype(dtype)
    h._off = None
    h._ag = None
    return h


def value_of(h):
    """The value of handle ``h``: a numpy array, or an RSP/CSR for sparse arrays."""
    if h._sparse:
        st = h._st
        v = st.arr
        return v if v is not None else st._alloc()
    return data_of(h)


def _store(h, v):
    """Make ``v`` the value of ``h`` (converted to ``h``'s storage type and dtype)."""
    if h._sparse:
        st = h._st
        if _sp.stype_of(v) != st.stype or getattr(v, "data", v).dtype != h._dtype:
            v = _sp.convert(v, h._shape, st.stype, h._dtype, st.aux_types)
        st.arr = v
    else:
        dst = data_of(h)
        if _sp.stype_of(v) != "default":
            v = _sp.to_dense(v, h._shape, h._dtype)
        np.copyto(dst, v, casting="unsafe")


def _gpu_dense(*handles):
    """Whether a dense array on a GPU takes part: the op must then run on
    that device's executor (``_sparse_gpu``)."""
    return any(not h._sparse and h._st.ctx.device_typeid == 2 for h in handles)


def assign(src, dst, name="_copyto"):
    """Push ``dst = src`` across storage types, dtypes and contexts."""
    if src._st is dst._st and src._off == dst._off:
        return dst
    if src._shape != dst._shape:
        raise MXNetError("copyto: shape mismatch, source %s and target %s"
                         % (src._shape, dst._shape))

    def convert(v):
        if src._sparse:
            return _sp.convert(v, src._shape, _sp.stype_of(v))     # never share buffers
        if dst._sparse:
            return v
        return np.array(v, copy=True)
    rw = not dst._sparse and (dst._off is not None or dst._st.shape != dst._shape)
    nbytes = _prod(dst._shape) * dst._dtype.itemsize
    if _gpu_dense(src, dst):
        from . import _sparse_gpu
        work = _sparse_gpu.host_op(lambda host: host.store(dst, convert(host.value(src))),
                                   (src,), (dst,), _sparse_gpu.executor_for(src, dst))
        _engine.push(work, (src._st.var,), (dst._st.var,), name, nbytes, False, rw)
        return dst

    def copy():
        _store(dst, convert(value_of(src)))
    _engine.push(copy, (src._st.var,), (dst._st.var,), name, nbytes, False, rw)
    return dst


def _ctx_of(inputs, ctx):
    if inputs:
        c = inputs[0]._st.ctx
        for x in inputs:
            if x._st.ctx is not c:
                raise MXNetError("all inputs must be on the same context, got %s"
                                 % ", ".join(str(x._st.ctx) for x in inputs))
        return c
    if ctx is None:
        return current_context()
    return ctx if isinstance(ctx, Context) else Context(ctx)


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def sparse_invoke(op, inputs, attrs, out=None, ctx=None, force=False):
    """``invoke`` for an op with a sparse input or out (see the module doc);
    ``force`` runs ``op``'s storage-aware kernel on dense inputs too."""
    in_st = tuple(x.stype for x in inputs)
    impl = _sp.SPARSE.get(op.name)
    ost = impl.stypes(attrs, in_st) if impl is not None else None
    if ost is None:
        return _fallback(op, inputs, attrs, out, ctx)
    ctx = _ctx_of(inputs, ctx)
    shapes = tuple(x._shape for x in inputs)
    dtypes = tuple(x._dtype for x in inputs)
    try:
        oshapes, odtypes = op.infer(attrs, shapes, dtypes)
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    if out is None:
        outs = [_new(s, sh, dt, ctx) for s, sh, dt in zip(ost, oshapes, odtypes)]
        targets = outs
    else:
        outs = _as_list(out)
        _invoke._check_out(op, outs, oshapes, odtypes, ctx)
        targets = [o if o.stype == s else _new(s, sh, dt, ctx)
                   for o, s, sh, dt in zip(outs, ost, oshapes, odtypes)]
    kernel = impl.kernel
    mut_handles = [inputs[i] for i in op.mutated(len(inputs))]
    rng = None
    kattrs = attrs
    if op.needs_rng:
        # a sampling op's storage-aware kernel draws from the context's host
        # generator (as its dense kernel would), ordered on the generator's var
        from ..ops.random import rng_state
        rng = rng_state(ctx)
        kattrs = dict(attrs, _rng=rng)

    def run(host=None):
        vals = [host.value(x) for x in inputs] if host else [value_of(x) for x in inputs]
        muts = {}
        res = kernel(vals, kattrs, shapes, oshapes, odtypes, muts)
        store = host.store if host else _store
        for y, v in zip(targets, res):
            store(y, v)
        for i, v in muts.items():
            store(inputs[i], v)
    writes = []
    for y in targets:
        if y._st.var not in writes:
            writes.append(y._st.var)
    for x in mut_handles:
        if x._st.var not in writes:
            writes.append(x._st.var)
    if rng is not None:
        writes.append(rng.var)
    reads = []
    for x in inputs:
        v = x._st.var
        if v not in writes and v not in reads:
            reads.append(v)
    rw = any(x._st.var in writes for x in inputs) or \
        any(not y._sparse and (y._off is not None or y._st.shape != y._shape) for y in targets)
    rec = hooks.record
    if rec is not None:
        rec(op, inputs, attrs, outs)
    nbytes = sum(_prod(s) * d.itemsize for s, d in zip(oshapes, odtypes) if True)
    if ctx.device_typeid == 2:
        from . import _sparse_gpu
        written = list(targets) + list(mut_handles)
        ex = _sparse_gpu.executor_for(*(list(inputs) + written))
        _engine.push(_sparse_gpu.host_op(run, inputs, written, ex), tuple(reads),
                     tuple(writes), op.name, nbytes, False, rw)
    else:
        _engine.push(run, tuple(reads), tuple(writes), op.name, nbytes, False, rw)
    for t, o in zip(targets, outs):
        if t is not o:
            assign(t, o)
    if out is not None:
        return out
    if op.num_visible is not None:
        k = op.num_visible(attrs)
        return outs[0] if k == 1 else outs[:k]
    return outs[0] if len(outs) == 1 else outs


def _new(stype, shape, dtype, ctx):
    if stype == "default":
        return _invoke.new_array(tuple(shape), np.dtype(dtype), ctx)
    return new_sparse(stype, shape, dtype, ctx)


_CAST = None


def to_dense(x):
    """A dense copy of sparse ``x``, recorded by autograd (``cast_storage``)."""
    global _CAST
    if _CAST is None:
        _CAST = _reg.get("cast_storage")
    return sparse_invoke(_CAST, [x], {"stype": "default"})


def _fallback(op, inputs, attrs, out, ctx):
    dense_in = [to_dense(x) if x._sparse else x for x in inputs]
    if out is None:
        return _invoke.invoke(op, dense_in, attrs, None, ctx)
    outs = _as_list(out)
    # the in-place case (out is a sparse input): compute into a fresh dense array
    tmp = [_invoke.new_array(o._shape, o._dtype, o._st.ctx) if o._sparse else o for o in outs]
    res = _invoke.invoke(op, dense_in, attrs, tmp if isinstance(out, (list, tuple)) else tmp[0],
                         ctx)
    for i in op.mutated(len(inputs)):
        if inputs[i]._sparse:
            assign(dense_in[i], inputs[i])
    for t, o in zip(tmp, outs):
        if t is not o:
            assign(t, o)
    return out if res is not None else out
