"""The GPU executor: ops of ``mx.gpu(i)`` enqueued on CuPy streams.

Imported on the first use of a GPU context, never by ``import aiond``.

One ``GPUExecutor`` per device owns a compute stream and a copy stream
(host<->device and device<->device copies), so copies overlap compute.
``submit(opr)`` launches the op's kernel on its stream and returns; it never
waits for the device:

* **Dependencies are device-side.** Every var written on a GPU remembers the
  event recorded after its writer (``var.gev``) and the events of the GPU
  reads since. An op on another stream (or device) first makes its stream
  wait on those events (``stream.wait_event``); on the same stream, stream
  order suffices.
* **Enqueued is done, for the scheduler.** A device op is *finished* in the
  engine as soon as it is enqueued, so dependent GPU ops are launched at once
  behind it, with no host round trip between them. The host learns of
  completion only when it needs a value: reads, device->host copies and
  ``wait_to_read`` are *host* ops, finished from a ``launch_host_func``
  callback once their stream passed them (``Opr.done`` then means the bytes
  are on the host). ``waitall()`` drains every stream the same way.
* **Errors.** A kernel that raises at launch poisons what it writes, as on
  CPU; the error surfaces at read with the op and the user's push site.
* **Memory.** Buffers come from CuPy's pool, allocated on the stream that
  first writes them; a buffer used by another stream is kept alive until an
  event after that use has completed (queried, never waited for), so frees
  never synchronize. The bytes of ops enqueued and not yet known complete are
  bounded per device (``AIOND_GPU_MAX_INFLIGHT_BYTES``); a producer over the
  bound is held at push until a host callback says the device caught up.

The CuPy surface used here is small on purpose (``cuda.Device``,
``cuda.Stream``, ``cuda.Event``, ``launch_host_func``, ``wait_event``,
``empty``, ``ndarray.get``/``set``, ``cupyx.empty_pinned``, the memory pool):
the tests run this file against a test double of exactly that surface.
"""
from __future__ import annotations

import collections
import os
import threading

from ..base import MXNetError
from .executor import Executor
from .var import Failure

__all__ = ["cupy", "cupyx", "executor", "device_count", "memory_info", "drain_all",
           "GPUWork", "check_device"]

_mods = {}
_lock = threading.Lock()
_INSTALL = ("pip install aiond[gpu] (CuPy for CUDA 12: cupy-cuda12x) on a machine with an "
            "NVIDIA GPU")


def cupy():
    """The ``cupy`` module, imported on first use; a clear error without it."""
    m = _mods.get("cupy")
    if m is None:
        try:
            import cupy as m
        except ImportError as e:
            raise MXNetError("GPU contexts need CuPy, which is not installed (%s): %s"
                             % (e, _INSTALL)) from None
        _mods["cupy"] = m
    return m


def cupyx():
    m = _mods.get("cupyx")
    if m is None:
        cupy()
        import cupyx as m
        _mods["cupyx"] = m
    return m


def reset_backend():
    """Forget the imported CuPy and every executor (tests swap the backend)."""
    with _lock:
        drain_all()
        _mods.clear()
        _executors.clear()


def device_count() -> int:
    """GPUs CuPy sees; 0 without CuPy, a driver or a device."""
    try:
        cp = cupy()
    except MXNetError:
        return 0
    try:
        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no driver / no device: CuPy raises its own errors
        return 0


def check_device(ctx):
    """Raise a clear ``MXNetError`` when ``ctx`` (a GPU context) can't be used."""
    cupy()
    n = device_count()
    if ctx.device_id >= n:
        raise MXNetError("%s is not available: %s. Use mx.cpu(), or run on a machine whose "
                         "GPU CuPy can see (%s)."
                         % (ctx, "no GPU was found" if n == 0 else "only %d GPU(s) found" % n,
                            _INSTALL))


def memory_info(device_id: int):
    cp = cupy()
    with cp.cuda.Device(device_id):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


_executors: dict = {}


def executor(ctx) -> "GPUExecutor":
    """The executor of GPU ``ctx`` (made, and the device checked, on first use)."""
    ex = _executors.get(ctx.device_id)
    if ex is None:
        with _lock:
            ex = _executors.get(ctx.device_id)
            if ex is None:
                check_device(ctx)
                from . import get
                ex = _executors[ctx.device_id] = GPUExecutor(get(), ctx)
    return ex


def drain_all():
    """Block until every GPU stream has run what was enqueued (``waitall``)."""
    for ex in list(_executors.values()):
        ex.drain()


class _VarEvents:
    """Device-side state of one var: the event after its last GPU write (and
    that write's stream), and the events of GPU reads since."""
    __slots__ = ("wev", "wstream", "reads")

    def __init__(self):
        self.wev = None
        self.wstream = None
        self.reads = {}     # stream -> event of its latest read: stream order covers earlier ones


class _Touch:
    """Vars read and written, in the shape of an Opr's for ``_order``/``_mark``."""
    __slots__ = ("reads", "writes")

    def __init__(self, reads, writes):
        self.reads, self.writes = reads, writes


class GPUWork:
    """Base of the kernels of GPU ops (``opr.fn``). ``copy``: runs on the copy
    stream; ``host``: finished only once the device has run it (its result
    is on the host). ``launch(ex, stream)`` enqueues the work and returns the
    op's result; ``arrays()`` the device arrays it touched (kept alive when
    used off their home stream)."""
    __slots__ = ()
    copy = False
    host = False

    def launch(self, ex, stream):
        raise NotImplementedError

    def arrays(self):
        return ()

    def complete(self, result):
        """The host half of a host op, once the device ran it (on the engine
        loop's thread)."""
        return result

    def __call__(self):
        raise RuntimeError("GPU work runs through its executor, not inline")


class GPUExecutor(Executor):
    """Runs the ops of one GPU on a compute stream and a copy stream."""
    times_itself = True     # the profiler's spans come from CUDA events, not host clocks

    def __init__(self, engine, ctx):
        cp = cupy()
        self.engine = engine
        self.ctx = ctx
        self.cp = cp
        self.device = cp.cuda.Device(ctx.device_id)
        with self.device:
            # blocking streams (not non_blocking): stray host code using CuPy
            # on the legacy default stream stays ordered with our work
            self.compute = cp.cuda.Stream()
            self.copy = cp.cuda.Stream()
        self.lock = threading.Lock()
        # (event, nbytes, kept arrays) of enqueued ops not yet seen complete
        self.inflight = collections.deque()
        self.inflight_bytes = 0
        self.max_inflight = int(float(os.environ.get("AIOND_GPU_MAX_INFLIGHT_BYTES", 2 << 30)))
        self.launched = 0
        self.host_wakeups = 0
        self._eloop = None
        # ops timed while profiling, until their end event is seen done:
        # (profiler, name, stream, (anchor event, its host µs), start ev, end ev)
        self._timed = collections.deque()
        self._timed_lock = threading.Lock()
        self._anchors = {}                  # stream -> (event, host µs, profiler)

    # ------------------------------------------------------------ submit
    def submit(self, opr):
        engine = self.engine
        fail = engine._poisoned(opr)
        if fail is not None:
            engine.dispatch_all(engine.finish(opr, fail))
            return
        work = opr.fn
        stream = self.copy if work.copy else self.compute
        prof = engine.prof
        try:
            with self.device:
                self._order(stream, opr)
                if prof is not None:
                    anchor, t0 = self._timing_event(stream, prof)
                with stream:
                    result = work.launch(self, stream)
                ev = self.cp.cuda.Event(disable_timing=prof is None)
                ev.record(stream)
        except BaseException as e:  # noqa: BLE001 - every failure poisons
            fail = Failure(getattr(e, "aiond_op", opr.name), opr.origin, e)
            engine.failures.append(fail)
            engine.dispatch_all(engine.finish(opr, fail))
            return
        self._mark(stream, opr, ev)
        self.launched += 1
        if prof is not None:
            self._timed.append((prof, opr.name, stream, anchor, t0, ev))
            prof.device_sources.add(self)
        if self._timed:
            self._resolve(False)
        self._track(ev, opr.nbytes, stream, work)
        if work.host:
            self.host_wakeups += 1
            stream.launch_host_func(self._host_done, (opr, result))
            return
        opr.result = result
        engine.dispatch_all(engine.finish(opr, None))

    def _order(self, stream, opr):
        """Make ``stream`` wait for the GPU events of what ``opr`` touches."""
        waited = None
        for v in opr.reads:
            st = getattr(v, "gev", None)
            if st is not None and st.wev is not None and st.wstream is not stream:
                if waited is None:
                    waited = set()
                if id(st.wev) not in waited:
                    waited.add(id(st.wev))
                    stream.wait_event(st.wev)
        for v in opr.writes:
            st = getattr(v, "gev", None)
            if st is None:
                continue
            if st.wev is not None and st.wstream is not stream:
                if waited is None:
                    waited = set()
                if id(st.wev) not in waited:
                    waited.add(id(st.wev))
                    stream.wait_event(st.wev)
            for s, ev in list(st.reads.items()):
                if s is not stream:
                    if waited is None:
                        waited = set()
                    if id(ev) not in waited:
                        waited.add(id(ev))
                        stream.wait_event(ev)

    def wait_for(self, stream, reads=(), writes=()):
        """``_order`` for work outside the executor's ops (host work on the
        device's arrays, DLPack hand-overs): ``stream`` waits for the device
        events of the vars it reads and writes."""
        self._order(stream, _Touch(reads, writes))

    def record_done(self, stream, ev, reads=(), writes=()):
        """``_mark`` for such work: ``ev`` on ``stream`` ends it (the caller
        holds the vars' grants)."""
        self._mark(stream, _Touch(reads, writes), ev)

    def _mark(self, stream, opr, ev):
        # the op holds its vars' grants: nobody else touches their events now
        # (concurrent readers only set their stream's entry, atomic under the GIL)
        for v in opr.writes:
            st = getattr(v, "gev", None)
            if st is None:
                st = v.gev = _VarEvents()
            st.wev = ev
            st.wstream = stream
            st.reads = {}
        for v in opr.reads:
            st = getattr(v, "gev", None)
            if st is None:
                st = v.gev = _VarEvents()
            st.reads[stream] = ev

    def _track(self, ev, nbytes, stream, work):
        kept = work.arrays() or None
        with self.lock:
            q = self.inflight
            q.append((ev, nbytes, kept))
            self.inflight_bytes += nbytes
            # retire what the device has finished (queries, never waits)
            while len(q) > 1:
                e0, n0, _ = q[0]
                if not e0.done:
                    break
                q.popleft()
                self.inflight_bytes -= n0

    # ------------------------------------------------------------ profiling
    def _timing_event(self, stream, prof):
        """(the stream's anchor for ``prof``: an event and its host µs,
        a start event recorded now)."""
        a = self._anchors.get(stream)
        if a is None or a[2] is not prof:
            ev = self.cp.cuda.Event()
            ev.record(stream)
            a = self._anchors[stream] = (ev, prof.now_us(), prof)
        t0 = self.cp.cuda.Event()
        t0.record(stream)
        return (a[0], a[1]), t0

    def _resolve(self, wait):
        """Turn the timed ops the device has finished into spans on the
        stream's track of the profiler that timed them, anchored where that
        recording began on the stream (an event recorded then, at a known
        host time). ``wait``: all of them, waiting for the device (a dump)."""
        q = self._timed
        get = self.cp.cuda.get_elapsed_time
        with self._timed_lock:
            while q:
                prof, name, stream, (anchor, host_us), t0, t1 = q[0]
                if not t1.done:
                    if not wait:
                        break
                    t1.synchronize()
                q.popleft()
                try:
                    start = host_us + get(anchor, t0) * 1e3
                    end = host_us + get(anchor, t1) * 1e3
                except Exception:  # noqa: BLE001 - a device error poisons the op, not the trace
                    continue
                kind = "copy" if stream is self.copy else "compute"
                track = 1 << 40 | self.ctx.device_id << 8 | (kind == "copy")
                prof.device_span(track, "%s %s stream" % (self.ctx, kind), name, start, end)

    def flush_timed(self):
        """Every op timed so far as a span (the profiler dumps): waits for them."""
        self._resolve(True)

    def over_bound(self) -> bool:
        return self.inflight_bytes > self.max_inflight

    def throttle(self):
        """Hold a producer until the device finished the oldest in-flight
        work (woken by a host callback, not by polling)."""
        while self.inflight_bytes > self.max_inflight:
            with self.lock:
                if not self.inflight:
                    return
                ev = self.inflight[-1][0]
            self._wait_streams()
            with self.lock:
                while self.inflight and self.inflight[0][0].done:
                    _, n0, _ = self.inflight.popleft()
                    self.inflight_bytes -= n0
                if ev.done and not self.inflight:
                    return

    # ----------------------------------------------------------- host side
    def _host_done(self, arg):
        # runs on CUDA's callback thread, where no CUDA call is allowed (nor
        # freeing what may free device memory): hand the rest to the engine loop
        self._loop().call_soon(self._complete, arg)

    def _complete(self, arg):
        opr, result = arg
        fail = None
        try:
            opr.result = opr.fn.complete(result)
        except BaseException as e:  # noqa: BLE001 - poisons like a kernel error
            fail = Failure(opr.name, opr.origin, e)
            self.engine.failures.append(fail)
        self.engine.dispatch_all(self.engine.finish(opr, fail))

    def _loop(self):
        if self._eloop is None:
            from .loop import engine_loop
            self._eloop = engine_loop()
        return self._eloop

    def _wait_streams(self):
        """Block the calling thread (GIL released) until both streams have
        run all that is enqueued now."""
        evs = []
        with self.device:
            for s in (self.compute, self.copy):
                done = threading.Event()
                s.launch_host_func(_set_event, done)
                evs.append(done)
        for done in evs:
            done.wait()

    def drain(self):
        self._wait_streams()
        if self._timed:
            self._resolve(True)     # done by now: their spans, whoever records
        with self.lock:
            q = self.inflight
            while q and q[0][0].done:
                _, n0, _ = q.popleft()
                self.inflight_bytes -= n0

    def run_naive(self, opr):
        """The naive engine's way: launch now, and return once the device ran it."""
        self.submit(opr)
        self._wait_streams()
        if not opr.done:        # a host op: its callback is on its way
            done = threading.Event()
            with self.engine.lock:
                if not opr.done:
                    prev = opr.on_done

                    def cb(o, prev=prev):
                        if prev is not None:
                            prev(o)
                        done.set()
                    opr.on_done = cb
                else:
                    done.set()
            done.wait()

    def statistics(self):
        return {"device": str(self.ctx), "launched": self.launched,
                "host_wakeups": self.host_wakeups, "inflight_bytes": self.inflight_bytes,
                "max_inflight_bytes": self.max_inflight}


def _set_event(ev):
    ev.set()
