"""'dist_device_sync' on NCCL: GPU buffers summed across ranks by
``cupy.cuda.nccl`` instead of being staged through host memory.

Used when every rank can: real CuPy built with NCCL, a GPU, an MPI launch
with more than one rank, and ``AIOND_DIST_NCCL`` not ``0``. The ranks decide
together, on the first GPU value a store sees (a small MPI allreduce: if one
rank can't, none uses NCCL and all stage through the host), then rank 0's
NCCL unique id is broadcast over MPI and every rank joins one communicator
on the device of that first value (its *NCCL device*; values on another
device are copied to it first). One communicator serves the process.

A key's values are summed on the device first (as kvstore 'device' does),
then one ``allReduce`` per key runs on a stream of its own. It is issued by
the communication thread, so NCCL calls keep the same order on every rank
as the MPI collectives do; the stream first waits, on the device, for the
CUDA events of the producers of what it reads and of the readers of what it
overwrites, and the op is finished once the event recorded after the
reduction has completed (queried by the communication thread with its
usual back-off; no stream or device is ever synchronized); that event is
also recorded on the vars, as the GPU executor records its own, so GPU
work on other streams orders itself after the reduction on the device. The result is
then copied to the other targets (other devices, the host copy of the
store) by ordinary engine copies.

Sums are in the values' dtype (float16 sums in float16, unlike the staged
path, which sums float16 in float32). NEVER RUN ON A REAL GPU while it was
written: the machines it was developed on had none; its test is marked
``gpu`` and skipped without CuPy, NCCL and a device.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from ..base import MXNetError
from ._stage import device_reduce, is_gpu

__all__ = ["local_capable", "NcclPath"]

_NCCL_TYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
               "float64": "NCCL_FLOAT64", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8",
               "int32": "NCCL_INT32", "uint32": "NCCL_UINT32", "int64": "NCCL_INT64",
               "uint64": "NCCL_UINT64"}

_lock = threading.Lock()
_decided = {}               # "ok" -> bool once the ranks agreed; "path" -> NcclPath


def _nccl_module():
    """``cupy.cuda.nccl`` if CuPy was built with it (never the test double)."""
    from ..engine import gpu as _gpu
    try:
        _gpu.cupy()
        from cupy.cuda import nccl
    except (ImportError, MXNetError):
        return None
    if not getattr(nccl, "available", True):
        return None
    return nccl


def local_capable():
    """Whether this rank could reduce with NCCL (what it says in the vote)."""
    if os.environ.get("AIOND_DIST_NCCL", "1") in ("0", ""):
        return False
    if _nccl_module() is None:
        return False
    from ..engine import gpu as _gpu
    return _gpu.device_count() > 0


class _EventDone:
    """A 'request' for the communication thread: complete once the CUDA
    event has (queried, never waited for)."""
    __slots__ = ("ev",)

    def __init__(self, ev):
        self.ev = ev

    def probe(self):
        return self.ev.done

    Test = probe


def _wait_for(stream, reads, writes):
    """Make ``stream`` wait on the device for the GPU producers of ``reads``
    and ``writes`` and for the GPU readers of ``writes`` (the events the
    GPU executor keeps on each var as ``gev``; see engine/gpu.py)."""
    seen = set()
    for v, overwrite in [(v, False) for v in reads] + [(v, True) for v in writes]:
        st = getattr(v, "gev", None)
        if st is None:
            continue
        evs = [st.wev] if st.wev is not None and st.wstream is not stream else []
        if overwrite:
            evs += [ev for s, ev in list(st.reads.items()) if s is not stream]
        for ev in evs:
            if id(ev) not in seen:
                seen.add(id(ev))
                stream.wait_event(ev)


def vote_and_connect(ct, ctx):
    """Run once per process, synchronously, by every rank at the same call:
    agree whether all can use NCCL, and if so build the communicator on GPU
    ``ctx``. Returns the NcclPath or None."""
    with _lock:
        if "ok" in _decided:
            return _decided.get("path")
        comm = ct.comm
        mine = local_capable() and comm.name == "mpi" and comm.size > 1
        result = {}

        def steps():
            flag = np.array([0 if mine else 1], dtype=np.int64)
            anyone_not = np.empty(1, dtype=np.int64)
            yield comm.iallreduce_max(flag, anyone_not)
            if anyone_not[0]:
                return
            nccl = _nccl_module()
            uid = np.zeros(128, dtype=np.int8)
            if comm.rank == 0:
                uid[:] = np.array(nccl.get_unique_id(), dtype=np.int64).astype(np.int8)
            yield comm.ibcast(uid, root=0)
            from ..engine import gpu as _gpu
            cp = _gpu.cupy()
            with cp.cuda.Device(ctx.device_id):
                # blocks until every rank joined: they are all in this job
                nc = nccl.NcclCommunicator(comm.size, tuple(int(x) for x in uid), comm.rank)
                stream = cp.cuda.Stream(non_blocking=True)
            result["path"] = NcclPath(ct, nccl, nc, ctx, stream)

        ct.run("NCCL set-up on rank %d" % ct.rank, steps)
        _decided["ok"] = "path" in result
        _decided["path"] = result.get("path")
        return _decided["path"]


def _mark(stream, ev, reads, writes):
    """Record ``ev`` on the vars as the GPU executor records its own ops'
    events, so later GPU work on other streams waits for the reduction on
    the device (the host has also seen ``ev`` complete before the op ends,
    which keeps the buffers alive and orders host readers)."""
    from ..engine.gpu import _VarEvents
    for v in writes:
        st = getattr(v, "gev", None)
        if st is None:
            st = v.gev = _VarEvents()
        st.wev, st.wstream, st.reads = ev, stream, {}
    for v in reads:
        if v in writes:
            continue
        st = getattr(v, "gev", None)
        if st is None:
            st = v.gev = _VarEvents()
        st.reads[stream] = ev


class NcclPath:
    """The process's NCCL communicator and the jobs that use it."""

    def __init__(self, ct, nccl, comm, ctx, stream):
        self.ct, self.nccl, self.comm, self.ctx, self.stream = ct, nccl, comm, ctx, stream
        self.scratch = {}       # key -> GPU buffer for results with no GPU target on ctx
        self.reductions = 0

    @staticmethod
    def handles(vals, targets):
        """Whether the key goes through NCCL: all values on GPUs, default
        storage, and a dtype NCCL sums."""
        return all(is_gpu(v) and v.stype == "default" for v in vals) \
            and np.dtype(vals[0].dtype).name in _NCCL_TYPES \
            and all(t.stype == "default" for t in targets)

    def sum(self, store, what, k, rec, vals, targets):
        """Push the job that sums ``vals`` over the devices and the ranks
        into every array of ``targets``."""
        from ..ndarray import empty
        from ._stage import copy_out
        src = device_reduce(vals)
        if src.context != self.ctx:
            src = src.as_in_context(self.ctx)
        dst = next((t for t in targets if is_gpu(t) and t.context == self.ctx), None)
        if dst is None:
            dst = self.scratch.get(k)
            if dst is None or dst.shape != src.shape or dst.dtype != src.dtype:
                dst = self.scratch[k] = empty(src.shape, self.ctx, dtype=src.dtype)
        nccl, comm, stream, ct = self.nccl, self.comm, self.stream, self.ct
        dtype = getattr(nccl, _NCCL_TYPES[np.dtype(src.dtype).name])
        check = store._check
        known = list(store._store)
        svar, dvar = src._st.var, dst._st.var
        path = self

        def steps():
            from ..engine import gpu as _gpu
            from ..ndarray._invoke import data_of
            from .dist import _agree
            poisoned = ct.current.poisoned is not None if ct.current is not None else False
            if check:
                yield from _agree(ct.comm, what + " (NCCL)", [k], [rec], known, poisoned)
            cp = _gpu.cupy()
            s, d = data_of(src), data_of(dst)
            with cp.cuda.Device(path.ctx.device_id):
                # in place (a pushpull into its value): its readers are waited for too
                _wait_for(stream, [svar] if svar is not dvar else [], [dvar])
                comm.allReduce(s.data.ptr, d.data.ptr, d.size, dtype, nccl.NCCL_SUM, stream.ptr)
                ev = cp.cuda.Event(disable_timing=True)
                ev.record(stream)
            _mark(stream, ev, [svar], [dvar])
            path.reductions += 1
            yield [_EventDone(ev)]

        store._push_job("kvstore_%s" % what, steps, [src], [dst])
        copy_out([(dst, t) for t in targets if t is not dst])
