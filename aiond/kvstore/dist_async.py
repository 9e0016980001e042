"""'dist_async': workers push and pull without waiting for each other.

MXNet's asynchronous parameter server, on MPI point-to-point messages: the
communication thread of rank 0 is the server. It holds the weights (rank 0's
``init`` values) and the optimizer (rank 0's ``set_optimizer``; MXNet's
async server needs one, and so does this store), and it answers requests
between and while running rank 0's own jobs. Every other rank sends its
pushes (its gradient, summed over its devices) and pulls to rank 0.

What is guaranteed:

* every push is applied exactly once, with the optimizer, on the server, as
  soon as it arrives (no waiting for other workers, no aggregation);
* a worker's own requests are applied in the order it made them: a pull
  sees every earlier push *of that worker* (MPI keeps the order of messages
  between two ranks, and each request waits for the server's answer);
* a pull returns the server's weight at the moment the server handled it:
  some set of the other workers' pushes, different on every worker and
  every run (that is the asynchronous contract; MXNet's is the same);
* pushes of different workers to one key are applied one at a time, in the
  order the server received them (the server is one thread);
* errors the server finds (unknown key, wrong size, no optimizer) come back
  to the worker that made the request and fail its op;
* a server (rank 0) that dies or hangs makes the workers' requests fail
  after ``AIOND_DIST_TIMEOUT``, as for the sync stores;
* rank 0 keeps serving at exit until every worker has exited its script
  (an exit barrier, waited for without the time-out).

``init``, ``set_optimizer`` and ``_barrier`` are collective (every rank
calls them, in the same order); ``push``/``pull``/``pushpull`` are not.

Cost: MPI has no way to sleep until a message arrives without polling, so
rank 0's communication thread, when idle, looks for requests with a back-off
of up to 1 ms (about a thousand cheap wake-ups a second; a request waits at
most that long to be seen). Each request is one round trip; keys are not
fused.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError
from ..ndarray._invoke import data_of
from ._comm import DistError
from ._stage import copy_out, is_gpu
from .dist import DistSyncKVStore, _key_code

__all__ = ["DistAsyncKVStore"]

_PUSH, _PULL, _PUSHPULL = 1, 2, 3
_TAG_REQ, _TAG_REP = 71, 72
_HEAD = 4       # int64: op, key code, payload bytes, dtype num


class _Server:
    """Rank 0's server state; touched only on the communication thread."""

    def __init__(self, ct):
        self.ct = ct
        self.keys = {}          # key code -> (key, weight NDArray)
        self.updater = None
        self.sends = []         # (request, buffer) replies in flight
        self.comm = None
        self.handled = 0

    # called on the comm thread
    def apply(self, code, op, payload):
        """Apply a request; returns the reply payload (bytes or None)."""
        from ..ndarray import array
        entry = self.keys.get(code)
        if entry is None:
            raise DistError("dist_async server: key #%d has not been initialized" % code)
        key, weight = entry
        if op in (_PUSH, _PUSHPULL):
            if self.updater is None:
                raise DistError("dist_async server: no optimizer: call set_optimizer on "
                                "every worker before pushing (MXNet's async server needs "
                                "an updater)")
            g = np.frombuffer(payload, dtype=weight.dtype)
            if g.size != weight.size:
                raise DistError("dist_async server: key %r holds %d values, a push sent %d"
                                % (key, weight.size, g.size))
            self.updater(key, array(g.reshape(weight.shape), dtype=weight.dtype), weight)
        if op in (_PULL, _PUSHPULL):
            return weight.asnumpy().tobytes()
        return b""

    def serve(self):
        """Answer one waiting request from another rank, if any."""
        MPI = self.ct.comm.MPI
        comm = self.comm
        if self.sends:
            self.sends = [(r, b) for r, b in self.sends if not r.Test()]
        st = MPI.Status()
        if not comm.Iprobe(MPI.ANY_SOURCE, _TAG_REQ, st):
            return False
        src, n = st.Get_source(), st.Get_count(MPI.BYTE)
        msg = np.empty(n, dtype=np.uint8)
        comm.Recv([msg, MPI.BYTE], source=src, tag=_TAG_REQ)
        head = msg[:_HEAD * 8].view(np.int64)
        op, code = int(head[0]), int(head[1])
        try:
            body = self.apply(code, op, msg[_HEAD * 8:].tobytes())
            reply = np.zeros(2, dtype=np.int64).tobytes() + body
        except Exception as e:  # noqa: BLE001 - the requester gets the error
            text = ("%s: %s" % (type(e).__name__, e)).encode()
            reply = np.array([1, len(text)], dtype=np.int64).tobytes() + text
        buf = np.frombuffer(reply, dtype=np.uint8).copy()
        self.sends.append((comm.Isend([buf, MPI.BYTE], dest=src, tag=_TAG_REP), buf))
        self.handled += 1
        return True


class DistAsyncKVStore(DistSyncKVStore):
    """'dist_async' (see the module docstring)."""

    def __init__(self, kvtype="dist_async"):
        super().__init__(kvtype)
        self._server = None
        self._has_opt = False
        if self.rank == 0:
            self._server = _Server(self._ct)
            if self._ct.size > 1:
                srv = self._server

                def start():
                    srv.comm = self._ct.comm.p2p()
                    yield None
                self._ct.run("dist_async server start", start)
                self._ct.add_service(srv.serve)
        elif self._ct.size > 1:
            def open_p2p():
                self._p2p = self._ct.comm.p2p()
                yield None
            self._ct.run("dist_async p2p", open_p2p)
        if self._ct.size > 1:
            import atexit
            atexit.register(self._close)

    def _close(self):
        """At exit: the server (rank 0) keeps answering until every worker
        is done - a barrier no worker reaches with requests outstanding.
        Workers may finish far apart, so it waits without the time-out."""
        if self._ct.broken is not None:
            return
        comm = self._ct.comm

        def steps():
            yield comm.ibarrier()
        try:
            self._ct.run("dist_async exit barrier on rank %d" % self.rank, steps,
                         timeout=float("inf"))
        except Exception:  # noqa: BLE001 - exiting: nothing to report to
            pass

    # ------------------------------------------------------------ collective
    def init(self, key, value):
        """Initialise key(s) with rank 0's value(s) on the server (collective)."""
        super().init(key, value)
        if self._server is not None:
            for k, vals in self._pairs(key, value, "init"):
                self._server.keys[_key_code(k)] = (k, self._store[k].copy())
        # as MXNet's: no worker pushes before the server holds the keys
        self._barrier()

    def set_optimizer(self, optimizer):
        """Install ``optimizer`` on the server (rank 0's is used); collective,
        returns once every worker has called it (MXNet's is synchronous too)."""
        from .. import optimizer as opt
        if not isinstance(optimizer, opt.Optimizer):
            raise MXNetError("set_optimizer takes an Optimizer, got %s" % type(optimizer).__name__)
        if self._server is not None:
            updater = opt.get_updater(optimizer)
            srv = self._server

            def install():
                srv.updater = updater
                yield None
            self._ct.run("dist_async set_optimizer", install)
        self._has_opt = True
        self._barrier()

    # ------------------------------------------------------------ requests
    def _request(self, k, op, payload_of, out):
        """A job: send one request for key ``k`` to the server (or apply it
        here on rank 0) and copy the reply into ``out`` (a list)."""
        ct = self._ct
        code = _key_code(k)
        srv = self._server

        def steps():
            payload = payload_of() if payload_of is not None else b""
            if srv is not None:
                body = srv.apply(code, op, payload)
            else:
                MPI = ct.comm.MPI
                comm = self._p2p
                head = np.array([op, code, len(payload), 0], dtype=np.int64).tobytes()
                msg = np.frombuffer(head + payload, dtype=np.uint8).copy()
                st = MPI.Status()
                sreq = comm.Isend([msg, MPI.BYTE], dest=0, tag=_TAG_REQ)
                yield [sreq]
                # the reply's size is known only once it is there: probe for it
                while not comm.Iprobe(0, _TAG_REP, st):
                    yield [_ProbeWait(comm, MPI)]
                rep = np.empty(st.Get_count(MPI.BYTE), dtype=np.uint8)
                comm.Recv([rep, MPI.BYTE], source=0, tag=_TAG_REP)
                status = rep[:16].view(np.int64)
                if status[0] != 0:
                    raise DistError("dist_async: the server (rank 0) refused a request for "
                                    "key %r: %s" % (k, rep[16:].tobytes().decode(errors="replace")))
                body = rep[16:].tobytes()
            if out:
                src = np.frombuffer(body, dtype=out[0].dtype)
                for o in out:
                    np.copyto(data_of(o).reshape(-1), src)
        return steps

    def _host_outs(self, k, outs):
        """(host outs the reply is copied into, (host, GPU out) copies after):
        a reply for outs on GPUs lands in one host buffer first."""
        gpus = [o for o in outs if is_gpu(o)]
        if not gpus:
            return outs, []
        h = self._stage.host(k, "out", gpus[0])
        return [o for o in outs if not is_gpu(o)] + [h], [(h, g) for g in gpus]

    def _grad_payload(self, vals):
        def payload():
            g = np.array(data_of(vals[0]), copy=True)
            for v in vals[1:]:
                g += data_of(v)
            return g.tobytes()
        return payload

    def push(self, key, value, priority=0):
        """Send value(s) (summed over this worker's devices) to the server,
        which applies the optimizer at once."""
        self._need_optimizer()
        items = self._targets(self._pairs(key, value, "push"), "push")
        for k, vals, _ in items:
            self._dense_only(k, vals)
            vals = self._stage.values(k, vals)      # GPU values summed on a device, staged
            self._push_job("kvstore_push", self._request(k, _PUSH, self._grad_payload(vals), []),
                           vals, ())

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the server's current value(s) into ``out``."""
        if out is None:
            raise MXNetError("pull: out= is required")
        for k, outs in self._pairs(key, out, "pull"):
            stored = self._stored(k, "pull")
            outs = [o for o in outs if o.stype == "default" or not ignore_sparse]
            for o in outs:
                self._dense_only(k, [o])
                if o.shape != stored.shape or o.dtype != stored.dtype:
                    raise MXNetError("pull: out of shape %s/%s for key %r stored as %s/%s"
                                     % (o.shape, np.dtype(o.dtype).name, k, stored.shape,
                                        np.dtype(stored.dtype).name))
            if outs:
                outs, back = self._host_outs(k, outs)
                self._push_job("kvstore_pull", self._request(k, _PULL, None, outs), (), outs)
                copy_out(back)

    def pushpull(self, key, value, out=None, priority=0):
        """push then pull, in one round trip per key."""
        self._need_optimizer()
        pairs = self._pairs(key, value, "pushpull")
        outs = self._pairs(key, value if out is None else out, "pushpull")
        items = self._targets(pairs, "pushpull")
        for (k, vals, stored), (_, os_) in zip(items, outs):
            self._dense_only(k, list(vals) + list(os_))
            for o in os_:
                if o.shape != stored.shape or o.dtype != stored.dtype:
                    raise MXNetError("pushpull: out of shape %s for key %r stored with "
                                     "shape %s" % (o.shape, k, stored.shape))
            vals = self._stage.values(k, vals)
            os_, back = self._host_outs(k, os_)
            self._push_job("kvstore_pushpull",
                           self._request(k, _PUSHPULL, self._grad_payload(vals), os_),
                           vals, os_)
            copy_out(back)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        raise MXNetError("row_sparse_pull is not supported by aiond's dist_async store")

    def set_gradient_compression(self, compression_params):
        raise MXNetError("gradient compression is supported by the dist_sync stores only")

    def _need_optimizer(self):
        if not self._has_opt:
            raise MXNetError("dist_async needs an optimizer on the server: call "
                             "set_optimizer() first (MXNet: 'Updater needs to be set for "
                             "async mode')")

    @staticmethod
    def _dense_only(k, arrays):
        for a in arrays:
            if a.stype != "default":
                raise MXNetError("dist_async: key %r: only dense (default storage) arrays "
                                 "are supported" % (k,))

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """The optimizer lives on the server: only rank 0 can save it."""
        if self._server is None:
            raise MXNetError("save_optimizer_states: the dist_async optimizer lives on the "
                             "server (rank 0); save from rank 0")
        srv = self._server
        box = []

        def get():
            box.append(srv.updater.get_states(dump_optimizer))
            yield None
        if srv.updater is None:
            raise MXNetError("save_optimizer_states: no optimizer was set (set_optimizer)")
        self._ct.run("dist_async save_optimizer_states", get)
        with open(fname, "wb") as f:
            f.write(box[0])

    def load_optimizer_states(self, fname):
        if self._server is None:
            raise MXNetError("load_optimizer_states: the dist_async optimizer lives on the "
                             "server (rank 0); load on rank 0")
        srv = self._server
        if srv.updater is None:
            raise MXNetError("load_optimizer_states: no optimizer was set (set_optimizer)")
        with open(fname, "rb") as f:
            data = f.read()

        def put():
            srv.updater.set_states(data)
            yield None
        self._ct.run("dist_async load_optimizer_states", put)

    @property
    def _updater(self):
        # the optimizer is on the server: workers hand gradients over as they are
        return None

    @_updater.setter
    def _updater(self, value):
        pass


class _ProbeWait:
    """A 'request' that is complete once a reply is waiting to be received."""
    __slots__ = ("comm", "MPI")

    def __init__(self, comm, MPI):
        self.comm, self.MPI = comm, MPI

    def probe(self):
        return self.comm.Iprobe(0, _TAG_REP)
