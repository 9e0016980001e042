"""A test double of ``cupy.cuda.nccl`` over the CuPy double (tests/fakecupy.py)
and mpi4py, for running aiond's NCCL path of 'dist_device_sync' under
``mpiexec`` without GPUs. Only ever imported by dist_worker.py.

* ``get_unique_id()`` is random per process, and ``NcclCommunicator``
  checks with an MPI allgather that every rank passed the same id (so the
  id really was broadcast), the right size and its own rank.
* ``allReduce(sendptr, recvptr, count, dtype, op, stream_ptr)`` finds the
  double's arrays and stream behind the pointers, records the accesses with
  the double's race checker (a reduction that did not wait for its
  producer's event is a race), and sums the ranks' buffers in rank order in
  their dtype (as NCCL, float16 in float16). Like the double's kernels it
  computes at launch, on the calling thread: aiond's communication thread,
  the only one that calls MPI.
"""
from __future__ import annotations

import os
import sys

import numpy as np

available = True
NCCL_SUM = 0
_TYPES = {"NCCL_INT8": np.int8, "NCCL_UINT8": np.uint8, "NCCL_INT32": np.int32,
          "NCCL_UINT32": np.uint32, "NCCL_INT64": np.int64, "NCCL_UINT64": np.uint64,
          "NCCL_FLOAT16": np.float16, "NCCL_FLOAT32": np.float32, "NCCL_FLOAT64": np.float64}
_CODES = {}
for _i, (_n, _t) in enumerate(_TYPES.items()):
    globals()[_n] = _i + 1
    _CODES[_i + 1] = np.dtype(_t)

_arrays = {}        # data pointer -> the double's ndarray it was taken from
calls = []          # (count, dtype) of every allReduce


def get_unique_id():
    return tuple(int(b) for b in np.frombuffer(os.urandom(128), dtype=np.int8))


def _comm_world():
    from mpi4py import MPI
    return MPI.COMM_WORLD


class NcclCommunicator:
    def __init__(self, ndev, commId, rank):
        w = _comm_world()
        ids = w.allgather(tuple(commId))
        if any(i != ids[0] for i in ids) or ndev != w.Get_size() or rank != w.Get_rank():
            raise RuntimeError("fake NCCL: ranks joined with different ids or a wrong "
                               "size/rank (%d of %d)" % (rank, ndev))
        self.rank, self.size = rank, ndev

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
        import fakecupy
        assert op == NCCL_SUM
        src, dst = _arrays[sendbuf], _arrays[recvbuf]
        st = next(s for s in fakecupy.S.streams if s.ptr == stream)
        st.tick()
        fakecupy._access(fakecupy._buf_of(src._a, src._dev), st, False, "nccl allReduce")
        fakecupy._access(fakecupy._buf_of(dst._a, dst._dev), st, True, "nccl allReduce")
        dt = _CODES[datatype]
        mine = src._a.reshape(-1)[:count].view(dt).copy()
        parts = _comm_world().allgather(mine)
        acc = parts[0].copy()
        for p in parts[1:]:
            acc += p
        dst._a.reshape(-1)[:count].view(dt)[...] = acc
        calls.append((count, dt.name))

    def destroy(self):
        pass


def install():
    """Make ``from cupy.cuda import nccl`` give this module (the CuPy double
    must be installed first); pointers taken from the double's arrays are
    remembered so allReduce can find them."""
    import fakecupy
    mp = fakecupy.MemoryPointer
    if not getattr(mp, "_nccl_hooked", False):
        raw = mp.ptr

        def ptr(self):
            p = raw.fget(self)
            _arrays[p] = self.arr
            return p
        mp.ptr = property(ptr)
        mp._nccl_hooked = True
    mod = sys.modules[__name__]
    sys.modules["cupy.cuda.nccl"] = mod
    sys.modules["cupy.cuda"].nccl = mod
