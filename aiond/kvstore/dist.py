"""The synchronous distributed stores, 'dist_sync' and 'dist_device_sync',
on MPI (launch with ``mpiexec -n N python train.py`` or
``python -m aiond.launch -n N train.py``).

There is no parameter server: every worker keeps the whole store, and a
push is an allreduce of the workers' values, so after a push every worker
holds the same sum (MXNet's server would hold it and hand it out on pull).
With an optimizer (``set_optimizer``) every worker applies it to the same
summed gradient and the same stored weight, so the weights stay
bit-identical on every rank. ``pull`` is a local copy.

Ordering. Communication ops are engine ops: a push returns at once, its
collective runs when the values it reads are computed. Every call numbers
its collectives on the pushing thread and the communication thread starts
them in that order, so all ranks post the same collectives in the same
order as long as they make the same kvstore calls in the same order (as
MXNet requires). Within one call keys go in the order given; ``priority``
is accepted for MXNet's API but cannot reorder collectives across calls
without breaking that agreement.

Fusion. The keys of one call are packed into buckets of at most
``AIOND_DIST_FUSION_BYTES`` (default 4 MiB) per dtype and each bucket is one
allreduce; a larger key is its own bucket, posted as several allreduces of
at most ``AIOND_DIST_CHUNK_BYTES`` (default 16 MiB). Each bucket is its own
engine op, so it goes as soon as its values are computed - while backward
is still computing the rest when a Trainer pushes its gradients (if the
backward pass is split into several engine ops: see MXNet's
``MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD``).

Checks. ``init`` compares every key's shape and dtype across ranks (an error
names the key and the ranks on every rank). Every collective also checks
that all ranks are summing the same keys, shapes and dtypes - inside the
summed buffer for fused buckets, by a small allreduce before the data for
big single arrays and 1-byte dtypes (``AIOND_DIST_CHECK=0`` turns the
per-collective check off) - so ranks that push different keys fail, naming
them, instead of summing unrelated arrays. The same check carries a flag for
a value computed by a failed op: the rank it failed on still takes part (the
others wait for it), and every rank then fails the op - that rank with its
own error, the others naming it - instead of using a sum with garbage in it.
Time-outs: see ``_comm``
(``AIOND_DIST_TIMEOUT``). Values are summed in their dtype (float16 in
float32, then rounded back).

GPUs. Values and outs on GPU contexts go through host buffers (``_stage``):
a key's GPU values are summed on the first one's device, copied to the
host by that GPU's copy stream once their producer's event has passed (an
engine copy: the communication thread never waits on a device), summed
across ranks like host values, and copied back to each out's device.
'dist_device_sync' sums them with NCCL instead where every rank can
(``_nccl``). Every rank must put a key's values on GPUs or on the host
alike (the ranks would otherwise run different collectives).
"""
from __future__ import annotations

import hashlib
import math
import os
import threading

import numpy as np

from .. import engine as _engine
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray._invoke import data_of
from ._comm import CommExecutor, DistError, get_comm_thread
from ._compression import TwoBit, parse_params
from ._stage import Stager, copy_out, is_gpu
from .local import KVStore

_prod = math.prod
_GPU = 2            # Context.device_typeid of 'gpu'

__all__ = ["DistSyncKVStore"]

_MAX_DIMS = 8
_REC = 3 + _MAX_DIMS              # key code, dtype num, ndim, dims
# number-and-push must be atomic: a job numbered before another must not
# read what that other job's op writes (it would wait for it forever)
_push_lock = threading.Lock()


def _env_bytes(name, default):
    v = os.environ.get(name)
    try:
        return int(float(v)) if v else default
    except ValueError:
        raise MXNetError("%s must be a number of bytes, got %r" % (name, v)) from None


def _key_code(k):
    if isinstance(k, str):
        h = hashlib.blake2b(k.encode("utf-8"), digest_size=7).digest()
        return int.from_bytes(h, "little") | (1 << 56)
    return int(k) & ((1 << 56) - 1)


def _record(k, shape, dtype):
    rec = np.full(_REC, -1, dtype=np.int64)
    rec[0] = _key_code(k)
    rec[1] = np.dtype(dtype).num
    rec[2] = len(shape)
    rec[3:3 + min(len(shape), _MAX_DIMS)] = shape[:_MAX_DIMS]
    return rec


def _describe(rec, names):
    if rec[0] == -1:
        return "no key"
    name = names.get(int(rec[0]), "#%d" % rec[0])
    dt = next((d for d in np.sctypeDict.values() if np.dtype(d).num == rec[1]), None)
    shape = tuple(int(x) for x in rec[3:3 + int(rec[2])])
    return "key %s of shape %s and dtype %s" % (name, shape, np.dtype(dt).name if dt else rec[1])


def _digest(tag, recs):
    h = hashlib.blake2b(tag.encode(), digest_size=7)
    h.update(b"".join(r.tobytes() for r in recs))
    return int.from_bytes(h.digest(), "little")


def _failed_inputs(comm, what, poisoned):
    """Some rank sent values from a failed op: every rank drops the sum and
    fails, naming the ranks (the ranks with the failure report their own)."""
    flags = np.empty(comm.size, dtype=np.int64)
    yield comm.iallgather(np.array([int(poisoned)], dtype=np.int64), flags)
    bad = [str(r) for r in np.flatnonzero(flags)]
    raise DistError("%s: rank%s %s sent values computed by a failed operation; the sum "
                    "is dropped on every rank" % (what, "s" if len(bad) > 1 else "",
                                                   ",".join(bad)))


def _agree(comm, what, keys, recs, known=(), poisoned=False):
    """Steps of a job that makes sure every rank is about to run the same
    collective on the same keys, shapes and dtypes; raises on every rank,
    naming the first key they disagree on and which ranks hold what."""
    if comm.size == 1:
        return
    sig = _digest(what, recs)
    send = np.array([sig, -sig, int(poisoned)], dtype=np.int64)
    got = np.empty(3, dtype=np.int64)
    yield comm.iallreduce_max(send, got)
    if got[0] == sig and got[1] == -sig:
        if got[2]:
            yield from _failed_inputs(comm, what, poisoned)
        return
    mine = np.array([len(recs)], dtype=np.int64)
    counts = np.empty(comm.size, dtype=np.int64)
    yield comm.iallgather(mine, counts)
    width = int(counts.max())
    table = np.full((width, _REC), -1, dtype=np.int64)
    for i, r in enumerate(recs):
        table[i] = r
    everyone = np.empty((comm.size, width, _REC), dtype=np.int64)
    yield comm.iallgather(table, everyone)
    names = {_key_code(k): repr(k) for k in known}
    names.update((int(r[0]), repr(k)) for k, r in zip(keys, recs))
    for i in range(width):
        groups = {}
        for rank in range(comm.size):
            groups.setdefault(everyone[rank, i].tobytes(), []).append(rank)
        if len(groups) > 1:
            parts = ["%s on rank%s %s" % (_describe(np.frombuffer(b, np.int64), names),
                                          "s" if len(rs) > 1 else "", ",".join(map(str, rs)))
                     for b, rs in groups.items()]
            raise DistError("%s: the ranks disagree (entry %d of the call): %s"
                            % (what, i, "; ".join(parts)))
    raise DistError("%s: the ranks disagree on the collective (different calls or orders)"
                    % what)


def _copy_many(src, dst):
    """``dst[i][:] = src[i]`` for all i, as one engine op (one op per pair
    when a GPU is involved: each is a copy on that device's streams)."""
    if len(src) == 1 or any(is_gpu(a) for a in src) or any(is_gpu(b) for b in dst):
        copy_out(zip(src, dst))
        return

    def copy():
        for a, b in zip(src, dst):
            np.copyto(data_of(b), data_of(a))
    _engine.push(copy, reads=src, writes=dst, name="kvstore_copy")


# Buckets below this many bytes go through the fusion buffer even when they
# hold one array: the buffer carries the cross-rank check with the data
_DIRECT_BYTES = 256 << 10
# The check inside the data: three 10-bit hashes h of the collective's keys,
# shapes and dtypes and their squares ride at the end of the summed buffer.
# Every rank then sees sum(h) and sum(h*h) over the ranks; mean(h) == own h
# and mean(h*h) == own h*h hold on a rank iff all ranks sent the same h (the
# variance is 0), so all ranks reach the same verdict - and those that
# disagree run the full agreement to name the key and the ranks.
_SIG_SLOTS = 6


def _is_direct(bucket):
    """One big array: allreduced from the value straight into its target."""
    _, vals, t, comp = bucket[0]
    if comp or len(bucket) != 1 or len(vals) != 1:
        return False
    dt = np.dtype(t.dtype)
    return _wire_dtype(dt) == dt and t.size * dt.itemsize >= _DIRECT_BYTES


def _inline_ok(wire, size):
    if wire.kind == "f":
        return size <= 16           # n * 2**20 exact in a float32 significand
    return wire.kind in "iu" and wire.itemsize >= 4


def _sig_slots(sig):
    hs = [((sig >> (10 * i)) & 1023) + 1 for i in range(3)]
    return np.array([x for h in hs for x in (h, h * h)], dtype=np.float64)


def _sig_agrees(got, mine, n):
    return bool(np.array_equal(np.asarray(got, dtype=np.float64), mine * n))


class _Scratch:
    """Fusion buffers, owned by the communication thread (jobs run one at a time)."""

    def __init__(self):
        self.bufs = {}

    def get(self, dtype, n, slot=0):
        key = (np.dtype(dtype), slot)
        b = self.bufs.get(key)
        if b is None or b.size < n:
            b = np.empty(max(n, 1024), dtype=dtype)
            self.bufs[key] = b
        return b[:n]


_scratch = _Scratch()


def _wire_dtype(dt):
    # MPI has no portable float16 sum: such keys are summed in float32
    w = _WIRE.get(dt)
    if w is None:
        w = np.dtype(dt)
        w = _WIRE[dt] = np.dtype(np.float32) if w == np.float16 else w
    return w


_WIRE = {}


class DistSyncKVStore(KVStore):
    """'dist_sync' / 'dist_device_sync': synchronous data-parallel store on MPI."""

    def __init__(self, kvtype="dist_sync"):
        super().__init__(kvtype)
        self._ct = get_comm_thread()
        self._ex = CommExecutor(self._ct)
        self._merge = {}            # key -> summed gradient handed to the updater
        self._recs = {}             # key -> its shape/dtype record (cross-rank checks)
        self._compression = None
        self._residual = {}         # key -> numpy residual (comm thread only)
        self._fusion = _env_bytes("AIOND_DIST_FUSION_BYTES", 4 << 20)
        self._chunk = max(_env_bytes("AIOND_DIST_CHUNK_BYTES", 16 << 20), 1 << 16)
        self._check = os.environ.get("AIOND_DIST_CHECK", "1") not in ("0", "")
        self._stage = Stager()      # host buffers of values and outs on GPUs
        self._nccl = None           # the NCCL path ('dist_device_sync', see _nccl)
        self._nccl_voted = False

    # ----------------------------------------------------------- plumbing
    def _push_job(self, name, steps, reads, writes):
        from ._comm import Job
        reads = [x._st.var for x in reads]
        job = Job("%s on rank %d" % (name, self._ct.rank), steps, inputs=reads)
        writes = [x._st.var for x in writes]     # vars: the engine takes them as they are
        # the naive engine calls the job itself (it then runs synchronously,
        # after everything pushed before it: no reads need declaring)
        ex = self._ex
        if _engine.is_naive():
            ex, reads = None, ()
        with _push_lock:
            self._ct.number(job)
            opr = _engine.push(job, reads=reads, writes=writes, name=name, executor=ex)
            if not opr.done:
                self._ex.claim(opr, job)

    def _post_sum(self, send, recv):
        """Post the allreduce of ``send`` into ``recv`` (flat), in chunks."""
        comm = self._ct.comm
        step = max(self._chunk // recv.itemsize, 1)
        reqs = []
        for a in range(0, max(recv.size, 1), step):
            b = min(a + step, recv.size)
            reqs += comm.iallreduce(recv[a:b] if send is recv else send[a:b], recv[a:b])
        return reqs

    def _nccl_for(self, vals):
        """The NCCL path for values ``vals``, or None (staging through the
        host). The first GPU value of a 'dist_device_sync' store makes the
        ranks vote on it (a collective: every rank gets here at the same call)."""
        if self._type not in ("dist_device_sync", "dist_sync_device") or \
                not any(is_gpu(v) for v in vals):
            return None
        if not self._nccl_voted:
            self._nccl_voted = True
            if self._ct.size > 1:
                from ._nccl import vote_and_connect
                self._nccl = vote_and_connect(self._ct, next(v for v in vals if is_gpu(v)).context)
        return self._nccl

    def _via_nccl(self, what, k, vals, targets):
        """Sum key ``k`` with NCCL into ``targets`` if the path takes it."""
        if self._compression is not None:
            return False            # 2-bit pushes go through the host (their residuals live there)
        path = self._nccl_for(vals)
        if path is None or not path.handles(vals, targets):
            return False
        path.sum(self, what, k, self._rec(k, self._store[k]), vals, targets)
        return True

    # --------------------------------------------------------------- init
    def init(self, key, value):
        """Initialise key(s) on every worker with rank 0's value(s) (MXNet's
        dist init: the first worker's value wins); every rank must init the
        same keys with the same shapes and dtypes."""
        pairs = self._pairs(key, value, "init")
        for k, _ in pairs:
            if k in self._store:
                raise MXNetError("init: key %r is already initialized" % (k,))
        for _, vals in pairs:
            self._nccl_for(vals[:1])        # the vote, if GPU values come first here
        keys, stored, recs, sparse = [], [], [], []
        for k, vals in pairs:
            v = vals[0]
            if v.stype != "default":
                sparse.append((k, v.stype))
                v = v.tostype("default")
            st = v.copyto(self._ctx)
            keys.append(k)
            stored.append(st)
            recs.append(_record(k, st.shape, st.dtype))
        comm = self._ct.comm

        def steps():
            # always, whatever AIOND_DIST_CHECK says: a key's shape must agree
            yield from _agree(comm, "init", keys, recs, list(self._store))
            reqs = []
            for st in stored:
                a = data_of(st).reshape(-1)
                if comm.size > 1 and a.size:
                    reqs += comm.ibcast(a, root=0)
            yield reqs

        self._push_job("kvstore_init", steps, (), stored)
        for k, st in zip(keys, stored):
            self._store[k] = st
        for k, stype in sparse:
            self._store[k] = self._store[k].tostype(stype)

    # --------------------------------------------------------------- push
    def _targets(self, pairs, what):
        """Check the values of each key against what is stored."""
        out = []
        for k, vals in pairs:
            stored = self._stored(k, what)
            for v in vals:
                if v.shape != stored.shape:
                    raise MXNetError("%s: value of shape %s for key %r stored with shape %s"
                                     % (what, v.shape, k, stored.shape))
                if v.dtype != stored.dtype:
                    raise MXNetError("%s: value of dtype %s for key %r stored as %s"
                                     % (what, np.dtype(v.dtype).name, k,
                                        np.dtype(stored.dtype).name))
            out.append((k, vals, stored))
        return out

    def _buckets(self, items):
        """Group (key, vals, target) items into fusion buckets, in order."""
        buckets, cur, cur_bytes, cur_dt = [], [], 0, None
        compress = self._compression is not None
        for it in items:
            t = it[2]
            dt = _wire_dtype(t._dtype)
            nbytes = _prod(t._shape) * dt.itemsize
            comp = compress and dt == np.float32
            if cur and (dt != cur_dt or cur_bytes + nbytes > self._fusion or comp != cur[0][3]):
                buckets.append(cur)
                cur, cur_bytes = [], 0
            cur.append(it + (comp,))
            cur_bytes += nbytes
            cur_dt = dt
        if cur:
            buckets.append(cur)
        return buckets

    def _push_buckets(self, what, items, mirror=None):
        """One engine op per bucket: sum each key's values here, allreduce
        across ranks, write the key's target. ``mirror`` (key -> array):
        arrays that get a copy of the key's result too - in the same op for
        buckets that go through the fusion buffer, by a copy op after it
        for the others."""
        later_src, later_dst = [], []
        for bucket in self._buckets(items):
            keys = [b[0] for b in bucket]
            recs = [self._recs.get(b[0]) for b in bucket]
            if any(r is None for r in recs):
                recs = [self._rec(b[0], b[2]) for b in bucket]
            reads = [v for b in bucket for v in b[1]]
            writes = [b[2] for b in bucket]
            also = None
            if mirror is not None:
                if bucket[0][3] or _is_direct(bucket):
                    later_src += writes
                    later_dst += [mirror[k] for k in keys]
                else:
                    also = [mirror[k] for k in keys]
                    writes = writes + also
            steps = self._sum_steps(what, bucket, keys, recs, also) if not bucket[0][3] \
                else self._compressed_steps(what, bucket, keys, recs)
            self._push_job("kvstore_%s" % what, steps, reads, writes)
        if later_src:
            _copy_many(later_src, later_dst)

    def _sum_steps(self, what, bucket, keys, recs, also=None):
        ct = self._ct
        comm = ct.comm
        check = self._check

        def steps():
            k0, vals0, t0, _ = bucket[0]
            wire = _wire_dtype(t0.dtype)
            if _is_direct(bucket):
                # one big array: allreduce straight from the value into the
                # target (the agreement round trip is small next to it)
                if check:
                    yield from _agree(comm, what, keys, recs, list(self._store),
                                      ct.current.poisoned is not None)
                dst = data_of(t0).reshape(-1)
                yield self._post_sum(data_of(vals0[0]).reshape(-1), dst)
                return
            flats = [data_of(b[2]).reshape(-1) for b in bucket]
            ends = np.cumsum([f.size for f in flats]).tolist()
            total = ends[-1]
            inline = check and comm.size > 1 and _inline_ok(wire, comm.size)
            poisoned = ct.current.poisoned is not None
            if check and not inline:
                yield from _agree(comm, what, keys, recs, list(self._store), poisoned)
            extra = _SIG_SLOTS + 1 if inline else 0
            buf = _scratch.get(wire, total + extra)
            body = buf[:total]
            if all(len(b[1]) == 1 for b in bucket):
                np.concatenate([data_of(b[1][0]).reshape(-1) for b in bucket], out=body,
                               casting="unsafe")
            else:
                start = 0
                for (_, vals, _, _), end in zip(bucket, ends):
                    seg = body[start:end]
                    np.copyto(seg, data_of(vals[0]).reshape(-1), casting="unsafe")
                    for v in vals[1:]:
                        seg += data_of(v).reshape(-1)
                    start = end
            if inline:
                mine = _sig_slots(_digest(what, recs))
                buf[total:total + _SIG_SLOTS] = mine
                buf[-1] = int(poisoned)
            yield self._post_sum(buf, buf)
            if inline and not _sig_agrees(buf[total:total + _SIG_SLOTS], mine, comm.size):
                # some rank summed something else: find out what, on every rank
                yield from _agree(comm, what, keys, recs, list(self._store))
                raise DistError("%s: the ranks disagree on the collective" % what)
            if inline and buf[-1] != 0:
                yield from _failed_inputs(comm, what, poisoned)
            starts = [0] + ends[:-1]
            if also is not None:
                flats += [data_of(m).reshape(-1) for m in also]
                starts, ends = starts + starts, ends + ends
            copyto = np.copyto
            if wire == flats[0].dtype:
                for f, a, b in zip(flats, starts, ends):
                    copyto(f, body[a:b])
            else:
                for f, a, b in zip(flats, starts, ends):
                    copyto(f, body[a:b], casting="unsafe")
        return steps

    def _compressed_steps(self, what, bucket, keys, recs):
        """2-bit: quantise each key's local sum with its residual, gather
        every rank's codes, and sum their dequantised values in rank order
        (so the sum is the same bits on every rank)."""
        comm = self._ct.comm
        check = self._check
        comp = self._compression
        residual = self._residual

        def steps():
            if check:
                yield from _agree(comm, what + " (2bit)", keys, recs, list(self._store),
                                  self._ct.current.poisoned is not None)
            sizes = [TwoBit.compressed_bytes(b[2].size) for b in bucket]
            total = sum(sizes)
            send = _scratch.get(np.uint8, total, 1)
            off = 0
            for (k, vals, t, _), nb in zip(bucket, sizes):
                g = np.array(data_of(vals[0]), dtype=np.float32).reshape(-1)
                for v in vals[1:]:
                    g += data_of(v).reshape(-1)
                r = residual.get(k)
                if r is None:
                    r = residual[k] = np.zeros(t.size, dtype=np.float32)
                comp.quantize(g, r, send[off:off + nb])
                off += nb
            recv = _scratch.get(np.uint8, total * comm.size, 2)
            yield comm.iallgather(send, recv)
            recv = recv.reshape(comm.size, total)
            off = 0
            for (k, vals, t, _), nb in zip(bucket, sizes):
                acc = np.zeros(t.size, dtype=np.float32)
                for rank in range(comm.size):
                    comp.dequantize_add(recv[rank, off:off + nb], acc)
                np.copyto(data_of(t).reshape(-1), acc)
                off += nb
        return steps

    def _rec(self, k, target):
        rec = self._recs.get(k)
        if rec is None or tuple(rec[3:3 + int(rec[2])]) != target.shape:
            rec = self._recs[k] = _record(k, target.shape, target.dtype)
        return rec

    def _merge_buf(self, k, stored):
        m = self._merge.get(k)
        if m is None:
            from ..ndarray import empty
            m = self._merge[k] = empty(stored.shape, self._ctx, dtype=stored.dtype)
        return m

    def push(self, key, value, priority=0):
        """Sum value(s) over this worker's devices and over all workers; with
        an optimizer, update the stored weight with the sum, else store it."""
        pairs = self._pairs(key, value, "push")
        items = self._targets(pairs, "push")
        dense, sparse, nccl = [], [], []
        for k, vals, stored in items:
            if stored.stype != "default" or any(v.stype != "default" for v in vals):
                sparse.append((k, vals, stored))
            elif self._updater is not None:
                m = self._merge_buf(k, stored)
                if self._via_nccl("push", k, vals, [m]):
                    nccl.append((k, vals, m))
                else:
                    dense.append((k, self._stage.values(k, vals), m))
            elif not self._via_nccl("push", k, vals, [stored]):
                dense.append((k, self._stage.values(k, vals), stored))
        self._push_buckets("push", dense)
        if self._updater is not None:
            for k, _, target in nccl + dense:
                self._updater(k, target, self._store[k])
        for k, vals, stored in sparse:
            self._push_sparse(k, vals, stored)

    def _push_sparse(self, k, vals, stored):
        """row_sparse values are summed dense across workers and handed on
        as row_sparse (rows that sum to zero everywhere are dropped)."""
        dense_vals = [v.tostype("default") if v.stype != "default" else v for v in vals]
        from ..ndarray import empty
        merged = empty(stored.shape, self._ctx, dtype=stored.dtype)
        self._push_buckets("push", [(k, dense_vals, merged)])
        grad = merged.tostype(vals[0].stype) if vals[0].stype != "default" else merged
        if self._updater is not None:
            self._updater(k, grad, self._store[k])
        else:
            self._store[k] = grad if stored.stype == grad.stype else grad.tostype(stored.stype)

    def pushpull(self, key, value, out=None, priority=0):
        """push then pull (into ``value`` when ``out`` is None). Without an
        optimizer the allreduce writes the first out directly and the store
        takes a copy of it off the critical path."""
        if self._updater is not None:
            self.push(key, value, priority)
            self.pull(key, value if out is None else out, priority)
            return
        if self._compression is None and type(key) is list and self._fast_pushpull(
                key, value, value if out is None else out):
            return
        pairs = self._pairs(key, value, "pushpull")
        outs = self._pairs(key, value if out is None else out, "pushpull")
        items = self._targets(pairs, "pushpull")
        direct, rest = [], []
        stage = self._stage
        for (k, vals, stored), (_, os_) in zip(items, outs):
            if stored.stype != "default" or any(v.stype != "default" for v in vals) \
                    or any(o.stype != "default" or o.shape != stored.shape
                           or o.dtype != stored.dtype for o in os_):
                rest.append(k)
            elif not self._via_nccl("pushpull", k, vals, list(os_) + [stored]):
                direct.append((k, stage.values(k, vals), stage.target(k, os_[0]), os_))
        self._push_buckets("pushpull", [(k, vals, t) for k, vals, t, _ in direct],
                           {k: self._store[k] for k, _, _, _ in direct})
        # the other outs from the first (or all of them from a host buffer)
        more = [(t, o) if t is not os_[0] else (os_[0], o)
                for _, _, t, os_ in direct for o in (os_ if t is not os_[0] else os_[1:])]
        if more:
            _copy_many([a for a, _ in more], [b for _, b in more])
        if rest:
            kv = dict(pairs)
            ko = dict(outs)
            for k in rest:
                self.push(k, kv[k], priority)
                self.pull(k, ko[k], priority)

    def _fast_pushpull(self, keys, values, outs):
        """pushpull of many keys with one dense array each (a Trainer's
        gradients, the fusion case) without the general path's per-key
        bookkeeping; returns False to fall back to it for anything else."""
        if type(values) is not list or type(outs) is not list or \
                len(values) != len(keys) or len(outs) != len(keys):
            return False
        store, recs = self._store, self._recs
        items = []
        back = []                   # (host result, GPU out) copies after the sums
        stage = self._stage
        for k, v, o in zip(keys, values, outs):
            if type(v) is list and len(v) == 1:
                v = v[0]
            if type(o) is list and len(o) == 1:
                o = o[0]
            if type(v) is not NDArray or type(o) is not NDArray:
                return False
            st = store.get(k)
            if st is None or type(st) is not NDArray or v._shape != st._shape \
                    or o._shape != st._shape or v._dtype != st._dtype or o._dtype != st._dtype:
                return False
            items.append((k, (v,), o))
        if self._str_keys is None or any((type(k) is str) != self._str_keys for k in keys):
            return False
        if len(recs) < len(store):
            for k, _, o in items:
                self._rec(k, o)
        if any(v[0]._st.ctx.device_typeid == _GPU or o._st.ctx.device_typeid == _GPU
               for _, v, o in items):
            # checked: stage only now (a fall-back must not stage twice)
            staged = []
            for k, v, o in items:
                if self._via_nccl("pushpull", k, list(v), [o, store[k]]):
                    continue
                if is_gpu(v[0]) or is_gpu(o):
                    t = stage.target(k, o)
                    if t is not o:
                        back.append((t, o))
                    staged.append((k, tuple(stage.values(k, list(v))), t))
                else:
                    staged.append((k, v, o))
            items = staged
        self._push_buckets("pushpull", items, {k: store[k] for k, _, _ in items})
        if back:
            copy_out(back)
        return True

    # --------------------------------------------------------------- misc
    def set_gradient_compression(self, compression_params):
        """MXNet's 2-bit compression of pushes ({'type': '2bit', 'threshold': t}):
        each worker sends its gradient quantised to 0 / +-t and keeps the
        rest as a residual for its next push; pulls are not compressed."""
        self._compression = parse_params(compression_params)

    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` on every worker to the summed gradients (MXNet
        runs it on the servers); the updates are the same on every worker."""
        from .. import optimizer as opt
        if not isinstance(optimizer, opt.Optimizer):
            raise MXNetError("set_optimizer takes an Optimizer, got %s" % type(optimizer).__name__)
        self._set_updater(opt.get_updater(optimizer))

    @staticmethod
    def is_capable(capability):
        return capability.lower() == "optimizer"

    @property
    def rank(self):
        return self._ct.rank

    @property
    def num_workers(self):
        return self._ct.size

    def _barrier(self):
        """Block until every worker reaches this point (after this worker's
        earlier collectives have run)."""
        comm = self._ct.comm

        def steps():
            yield comm.ibarrier()
        self._ct.run("barrier on rank %d" % self._ct.rank, steps)
