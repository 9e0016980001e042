"""Dependency tracking: who may run when (MXNet's ThreadedEngine rules).

Per var, ops run in push order: a read waits for earlier writes, a write
waits for every earlier read and write, consecutive reads run together.
Tracking is separated from running policy: this file grants vars and counts
what is pending; executors (``cpu.py``, ``loop.py``) only run ready ops and
call ``finish``.

Threading invariants:
* every field of a ``Var``, and ``pending``/``bytes`` here, is touched only
  with ``self.lock`` held;
* a kernel never runs with the lock held, and nothing blocks while holding it;
* ``finish`` is called exactly once per op, from whichever thread ran it.
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
from asyncio import _get_running_loop
from time import monotonic as _monotonic

from ..base import DeadlockError, MXNetError
from . import blas as _blas
from . import loopblock as _loopblock
from .segments import Builder, Runner, TraceError
from .var import Failure, FailureLog, Opr, user_origin

__all__ = ["Engine", "async_kernel", "CALLER"]

_get_ident = threading.get_ident
# ``push(inline=CALLER)``: a registry kernel (it never pushes or waits) that a
# plain thread runs itself when the op is ready at push (see ``push``), with
# one BLAS thread, sharing a split-able op's ranges with idle workers
CALLER = 2


class _TLS(threading.local):
    seg = None          # this thread's open bulk segment (segment.Builder)
    bulk = 0            # this thread's bulk size (set_bulk_size)
    in_kernel = False   # a kernel runs on this thread (waiting would deadlock)


_tls = _TLS()
# the op whose coroutine kernel is running in this context (AsyncExecutor sets
# it around the task's creation, so the task and what it awaits inherit it)
async_kernel = contextvars.ContextVar("aiond_async_kernel", default=None)

# an event loop running on a pushing thread may not block in push below
# this multiple of the bounds (above it, memory safety wins): async code
# waits for room with ``await engine.room()``, which reads do by themselves
LOOP_SLACK = 4


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(float(v))
    except ValueError:
        raise MXNetError("environment variable %s=%r is not a number" % (name, v)) from None


def _default_max_bytes():
    """A quarter of physical memory, at most 4 GiB. Outputs are allocated
    when their op runs, so this bounds what pending ops will allocate (and
    roughly what they pin) without stalling a producer on chains that hold
    little."""
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        phys = 4 << 30
    return max(256 << 20, min(4 << 30, phys // 4))


class Engine:
    """The process-wide dependency engine (one per process, see ``engine.get``)."""

    def __init__(self):
        from .cpu import CPUExecutor
        self.lock = threading.Lock()
        self.cv = threading.Condition(self.lock)
        self.cv_waiters = 0         # threads held at push by the bounds, and room() waiters
        self.idle_waiters = 0       # threads in waitall()
        self.pending = 0            # pushed, not finished (inline ops excluded)
        self.bytes = 0              # output bytes those ops will write
        self.peak_pending = 0
        self.peak_bytes = 0
        self.ops_pushed = 0
        self.ops_inline = 0
        self.ops_caller = 0         # ready ops a plain pushing thread ran itself (CALLER)
        self.ops_joined = 0         # calls that joined a queued op instead of pushing (join)
        self.max_pending = _env_int("AIOND_MAX_PENDING_OPS", 4096)
        self.max_bytes = _env_int("AIOND_MAX_PENDING_BYTES", _default_max_bytes())
        self.failures = FailureLog()  # failures not yet reported, in order
        self.threads = set()        # idents of engine-owned threads
        self.naive_depth = 1 if os.environ.get("AIOND_ENGINE", "").lower() == "naive" else 0
        self.bulk_threads = 0       # threads whose bulk size is > 1 (see bulk_size())
        self.bulk_batch = []
        self.room_waiters = []      # (loop, future) of coroutines awaiting room()
        self.cpu = CPUExecutor(self, _env_int("AIOND_CPU_WORKERS", os.cpu_count() or 1))
        self.prof = None            # a Profiler while mx.profiler records

    # ------------------------------------------------------------------ push
    def push(self, fn, reads, writes, name, nbytes=0, inline=False, rw=False,
             split=None, executor=None, bulk=None):
        """Queue ``fn()`` to run after the vars it reads and writes allow it.

        Returns the ``Opr``. ``reads`` and ``writes`` must be disjoint
        tuples of vars (``rw=True`` marks that a written var is also read,
        for poisoning). A ready op marked ``inline=True`` runs right here on
        the caller's thread (a thread hop would cost more than the kernel);
        one marked ``CALLER`` (a kernel that never
        pushes or waits) runs here when it is ready and this is a plain
        thread, before push returns; every other op runs on its executor.
        Blocks only when the pending bound is exceeded, and never on an
        engine thread.
        """
        if self.prof is not None and (executor is None
                                      or not getattr(executor, "times_itself", False)):
            fn = self.prof.wrap(fn, name, reads, writes)
            split = None
        seg = _tls.seg
        if seg is not None and (seg.tracing or not self.naive_depth):
            if executor is None:
                opr = Opr(fn, reads, writes, name, nbytes, rw)
                opr.split = split
                if inline is not True and seg.inline:
                    if inline is CALLER:
                        seg.inline = CALLER
                    else:
                        seg.inline = False
                members = seg.members
                members.append(opr)
                if len(members) >= seg.limit:
                    self.flush_segment(seg)
                return opr
            if seg.tracing:
                raise TraceError("%s runs on its own executor" % name)
            self.flush_segment(seg)
        opr = Opr(fn, reads, writes, name, nbytes, rw)
        if bulk is not None:
            opr.bulk = bulk
        return self._submit(opr, inline, split, executor)

    def _submit(self, opr, inline, split, executor):
        """``push`` of the ``Opr`` made (or captured by a segment) already."""
        if self.naive_depth:
            opr.split = split
            opr.executor = executor
            return self._push_naive(opr)
        lock = self.lock
        reads, writes = opr.reads, opr.writes
        caller = False
        if inline is CALLER:
            # A serial loop on a plain thread (a training step, a script)
            # pushes each op after the one it reads: handing a ready op to a
            # worker then costs two GIL hand-offs against this very thread
            # and one-thread BLAS, for overlap the GIL mostly forbids. So a
            # ready op runs here, as the naive engine would run it. Event
            # loops (never blocked by a kernel) and engine threads still hand
            # off; ops that wait behind others stay asynchronous.
            caller = (executor is None and _get_running_loop() is None
                      and _get_ident() not in self.threads) and inline
            inline = False
        if inline and executor is None:
            # Fast path: a tiny kernel whose vars are all free runs right here
            # with the lock held - cheaper than marking and unmarking them.
            # Inline kernels are registry kernels: they never push or wait.
            lock.acquire()
            for v in reads:
                if v.queue is not None or v.writing:
                    break
            else:
                for v in writes:
                    if v.queue is not None or v.writing or v.nreads:
                        break
                else:
                    try:
                        cbs = self._run_locked(opr)
                    finally:
                        lock.release()
                    if cbs:
                        for m in cbs:
                            m.on_done(m)
                    f = opr.failure
                    if f is not None and type(f.exc) is KeyboardInterrupt and not f.reported:
                        _interrupted(f)     # in this kernel (a poisoned input's was told)
                    return opr
            lock.release()
        opr.split = split
        opr.executor = executor
        if not inline and not caller:
            # recorded before the op is visible: once registered, another
            # thread may grant it, run it and fail it at any moment
            opr.origin = user_origin(2)
        with lock:
            wait = self._register(opr)
            if wait or not (inline or caller):
                if inline or caller:
                    opr.origin = user_origin(2)
                    # a tiny kernel that waits: whoever frees it runs it
                    opr.tiny = inline is True and executor is None and opr.bulk is None
                opr.counted = True
                self.pending += 1
                self.bytes += opr.nbytes
                self.ops_pushed += 1
                if self.pending > self.peak_pending:
                    self.peak_pending = self.pending
                if self.bytes > self.peak_bytes:
                    self.peak_bytes = self.bytes
        if not opr.counted:
            self.ops_inline += 1
            if caller:
                self.ops_caller += 1
                self._run_caller(opr, caller)
            else:
                self._run_inline(opr)
            return opr
        if not wait:
            self._dispatch(opr)
        if self.pending > self.max_pending or self.bytes > self.max_bytes:
            self._throttle()
        return opr

    def run_now(self, fn, writes, name, nbytes=0, rw=False):
        """Run ``fn()`` (a kernel that reads nothing the engine orders and
        never pushes or waits) right here when this is a plain thread and
        ``writes`` are free; returns the ``Opr``, or None with nothing pushed
        (then push it as usual). What ``fn`` reads of the caller's memory is
        read before this returns: ``x[:] = numpy`` copies from the caller's
        array itself, not from a copy made to decouple it."""
        if (self.naive_depth or _tls.seg is not None or self.prof is not None
                or _get_running_loop() is not None or _get_ident() in self.threads):
            return None
        with self.lock:
            for v in writes:
                if v.queue is not None or v.writing or v.nreads:
                    return None
            for v in writes:
                v.writing = True
        opr = Opr(fn, (), writes, name, nbytes, rw)
        self.ops_inline += 1
        self.ops_caller += 1
        self._run_inline(opr)
        return opr

    def join(self, opr, reads, writes, shared, admit):
        """Add free vars to ``opr``, a ready op that has not started: it
        then also reads ``reads`` and writes ``writes``, as if pushed with
        them. ``shared``: vars ``opr`` already reads that the new work reads
        too; nothing may have been pushed on them since (a write queued
        behind ``opr``'s read must be seen by work pushed after it).
        ``admit()`` runs under the lock once all that holds; it returns
        False when the op's kernel has already taken its work (then nothing
        changes). Returns whether ``opr`` took the vars."""
        with self.lock:
            if opr.done or opr.wait:
                return False    # only an op that waits for a worker, not for other ops
            for v in shared:
                # opr holds each of these (a read or a write) and has not
                # finished: only an op pushed since would queue on it
                if v.queue is not None:
                    return False
            for v in reads:
                if v.queue is not None or v.writing or v.exc is not None:
                    return False
            for v in writes:
                if v.queue is not None or v.writing or v.nreads:
                    return False
            if not admit():
                return False
            for v in reads:
                v.pins += 1
                if v.nbytes and not v.held:
                    v.held = v.nbytes
                    self.bytes += v.nbytes
                v.nreads += 1
            for v in writes:
                v.writing = True
            opr.reads = opr.reads + tuple(reads)
            opr.writes = opr.writes + tuple(writes)
            self.ops_joined += 1
            return True

    def _run_locked(self, opr):
        """Run a ready inline op with the lock held (no var was marked)."""
        self.ops_inline += 1
        fail = None
        bulk = opr.bulk
        for v in (opr.reads if bulk is None else ()):
            if v.exc is not None:
                fail = v.exc
                break
        else:
            if opr.rw and bulk is None:
                for v in opr.writes:
                    if v.exc is not None:
                        fail = v.exc
                        break
        if fail is None and opr.fn is not None:
            try:
                opr.result = opr.fn()
            except BaseException as e:  # noqa: BLE001 - every failure poisons
                fail = Failure(getattr(e, "aiond_op", opr.name), user_origin(3), e)
                self.failures.append(fail)
        vf = bulk.vfail if bulk is not None else None
        for v in opr.writes:
            v.version += 1
            v.exc = fail if vf is None else vf.get(v)
        opr.failure = fail
        opr.done = True
        if bulk is not None:
            return self._members_done(bulk, fail)
        return None

    def _register(self, opr):
        """Grant ``opr`` the vars that are free, queue it on the others;
        returns how many it waits for (lock held)."""
        wait = 0
        for v in opr.reads:
            # a pending reader keeps the buffer alive: count it (once per var)
            v.pins += 1
            if v.nbytes and not v.held:
                v.held = v.nbytes
                self.bytes += v.nbytes
            if v.queue is None and not v.writing:
                v.nreads += 1
            else:
                self._enqueue(v, opr, False)
                wait += 1
        for v in opr.writes:
            if v.queue is None and not v.writing and not v.nreads:
                v.writing = True
            else:
                self._enqueue(v, opr, True)
                wait += 1
        opr.wait = wait
        return wait

    def _enqueue(self, v, opr, is_write):
        if v.queue is None:
            v.queue = [(opr, is_write)]
            v.head = 0
        else:
            v.queue.append((opr, is_write))

    def _grant(self, v, ready):
        """Grant queued ops of ``v`` that may now run (lock held)."""
        q = v.queue
        i = v.head
        n = len(q)
        while i < n:
            opr, is_write = q[i]
            if is_write:
                if v.writing or v.nreads:
                    break
                v.writing = True
                i += 1
                opr.wait -= 1
                if not opr.wait:
                    ready.append(opr)
                break
            if v.writing:
                break
            v.nreads += 1
            i += 1
            opr.wait -= 1
            if not opr.wait:
                ready.append(opr)
        if i >= n:
            v.queue = None
            v.head = 0
        else:
            v.head = i

    # ------------------------------------------------------------- execution
    def _poisoned(self, opr):
        if opr.bulk is not None:
            return None         # a segment poisons per member (segment.Runner)
        for v in opr.reads:
            if v.exc is not None:
                return v.exc
        if opr.rw:
            for v in opr.writes:
                if v.exc is not None:
                    return v.exc
        return None

    def _run_inline(self, opr):
        fail = self._poisoned(opr)
        if fail is None and opr.fn is not None:
            prev = getattr(_tls, "in_kernel", False)
            _tls.in_kernel = True       # a kernel that waits on itself raises, not hangs
            try:
                opr.result = opr.fn()
            except BaseException as e:  # noqa: BLE001 - every failure poisons
                fail = Failure(getattr(e, "aiond_op", opr.name), user_origin(3), e)
                self.failures.append(fail)
            finally:
                _tls.in_kernel = prev
        ready = self.finish(opr, fail)
        if ready:
            for r in ready:
                self._dispatch(r)
        if fail is not None and type(fail.exc) is KeyboardInterrupt and not fail.reported:
            _interrupted(fail)      # in this kernel (a poisoned input's was told)

    def _run_caller(self, opr, how):
        """Run a ready CALLER op on the pushing thread with one BLAS thread
        (``blas.py``), a split-able op by ranges shared with idle workers (a
        plan's steps split themselves the same way)."""
        cpu = self.cpu
        if not cpu._started:
            cpu._start()
        split = opr.split
        if split is not None:
            fn = opr.fn

            def by_ranges():
                n, run = split()[:2]
                if run is None:
                    return fn()
                cpu.run_ranges(n, run)
                return None
            opr.fn = by_ranges
        bl = _blas.state
        if bl.dynamic:
            bl.enter()
            try:
                self._run_inline(opr)
            finally:
                bl.leave()
        else:
            self._run_inline(opr)

    def execute(self, opr):
        """Run a ready op on an engine thread. Returns ready successors."""
        fail = self._poisoned(opr)
        if fail is None:
            if opr.split is not None:
                if self.cpu.can_split(opr):
                    self.cpu.run_split(opr)
                    return None
                opr.fn = self.cpu.serial(opr.split, opr.fn)
            if opr.fn is not None:
                _tls.in_kernel = True
                try:
                    opr.result = opr.fn()
                except BaseException as e:  # noqa: BLE001
                    fail = Failure(getattr(e, "aiond_op", opr.name), opr.origin, e)
                    self.failures.append(fail)
                finally:
                    _tls.in_kernel = False
        return self.finish(opr, fail)

    def finish(self, opr, fail):
        """Release ``opr``'s vars and return the ops that became ready."""
        ready = []
        bulk = opr.bulk
        vf = bulk.vfail if bulk is not None else None
        with self.lock:
            for v in opr.reads:
                v.nreads -= 1
                v.pins -= 1
                if not v.pins and v.held:
                    self.bytes -= v.held
                    v.held = 0
                if v.queue is not None and not v.nreads:
                    self._grant(v, ready)
            for v in opr.writes:
                v.writing = False
                v.version += 1
                v.exc = fail if vf is None else vf.get(v)
                if v.pins and not v.held and v.nbytes:
                    # readers registered before this output existed keep it now
                    v.held = v.nbytes
                    self.bytes += v.nbytes
                if v.queue is not None:
                    self._grant(v, ready)
            opr.failure = fail
            opr.done = True
            if opr.counted:
                self.pending -= 1
                self.bytes -= opr.nbytes
                if self.cv_waiters:
                    self._wake_room()
                elif self.idle_waiters and not self.pending:
                    self.cv.notify_all()
            cb = opr.on_done
            if bulk is not None:
                mcbs = self._members_done(bulk, fail)
        if cb is not None:
            cb(opr)
        if bulk is not None:
            for m in mcbs:
                m.on_done(m)
        return ready

    def _members_done(self, bulk, fail):
        """Mark a segment's members done (lock held); returns those with
        callbacks (waiters) to call once the lock is released."""
        cbs = []
        for m in bulk.members:
            if not m.done:      # the runner never got to it (the segment failed)
                m.failure = fail
                m.done = True
            if m.on_done is not None:
                cbs.append(m)
        return cbs

    def _dispatch(self, opr):
        ex = opr.executor
        if ex is not None:
            ex.submit(opr)
        elif self.bulk_threads and getattr(_tls, "bulk", 0) > 1:
            self._bulk_add(opr)
        else:
            self.cpu.submit(opr)

    def dispatch_all(self, ready):
        for r in ready:
            self._dispatch(r)

    # ------------------------------------------------------------ bulk mode
    # As in MXNet (a thread-local BulkStatus), the bulk size belongs to the
    # thread that sets it: ops that thread dispatches are batched by it.
    def bulk_size(self):
        """This thread's bulk size."""
        return getattr(_tls, "bulk", 0)

    def set_bulk_size(self, size):
        """Set this thread's bulk size; returns its previous one."""
        prev = getattr(_tls, "bulk", 0)
        with self.lock:
            self.bulk_threads += (size > 1) - (prev > 1)
        _tls.bulk = size
        if size <= 1 and prev > 1:
            self.flush_bulk()
        return prev

    def _bulk_add(self, opr):
        with self.lock:
            batch = self.bulk_batch
            batch.append(opr)
            first = len(batch) == 1
            full = len(batch) >= getattr(_tls, "bulk", 0)
        if full:
            self.flush_bulk()
        elif first:
            from .loop import engine_loop
            engine_loop().call_soon(self.flush_bulk)

    def flush_bulk(self):
        with self.lock:
            batch, self.bulk_batch = self.bulk_batch, []
        if batch:
            self.cpu.submit_batch(batch)

    # ------------------------------------------------------------ segments
    def segment(self, limit=0, name=None):
        """``with engine.segment():`` - the ops this thread pushes inside run
        as bulk segments of at most ``limit`` ops (0: the whole block) - see
        ``segments.py``. Nested blocks join the outermost one."""
        return _SegmentScope(self, limit, name)

    def tracing(self) -> bool:
        """Whether this thread is inside ``trace()``."""
        seg = _tls.seg
        return seg is not None and seg.tracing

    def trace(self):
        """``with engine.trace() as t:`` - collect (never run) the ops this
        thread pushes inside; ``t.members`` lists them in push order. A wait
        inside raises ``TraceError``."""
        return _TraceScope()

    def flush_segment(self, seg=None):
        """Push this thread's open segment (its members so far) as one op."""
        if seg is None:
            seg = _tls.seg
            if seg is None:
                return
        members = seg.members
        if not members or seg.tracing:
            return
        seg.members = []
        # a ready segment of few small ops runs right here (holding the lock);
        # one of registry kernels may run on a plain pushing thread (push)
        inline = seg.inline     # True, CALLER or False
        if inline is True and len(members) > 32:
            inline = CALLER
        seg.inline = True
        writes = {}
        nbytes = 0
        for m in members:
            for v in m.writes:
                writes[v] = None
            nbytes += m.nbytes
        reads = {}
        for m in members:
            for v in m.reads:
                if v not in writes:
                    reads[v] = None
        if len(members) == 1 and self.prof is None:
            # a segment of one op costs more than the op: push the op itself
            # (the same Opr, which its caller may wait on)
            _tls.seg = None
            try:
                self._submit(members[0], inline, members[0].split, None)
            finally:
                _tls.seg = seg
            return
        runner = Runner(members, seg.origin, self)
        if len(members) == 1:
            # not the member's own name: a profile would count that op twice
            name = "%s[%s]" % (seg.name or "bulk", members[0].name)
        else:
            name = "%s[%d ops]" % (seg.name or "bulk", len(members))
        _tls.seg = None         # the segment op itself is pushed, not captured
        try:
            self.push(runner, tuple(reads), tuple(writes), name, nbytes, inline,
                      True, None, None, runner)
        finally:
            _tls.seg = seg

    # ---------------------------------------------------------------- waits
    def in_engine_thread(self) -> bool:
        return threading.get_ident() in self.threads or getattr(_tls, "in_kernel", False)

    def check_blocking(self, what: str):
        # called before pushing, so a blocking wrapper in a kernel raises even
        # when its value happens to be ready: the guard does not depend on timing
        if self.in_engine_thread():
            raise DeadlockError(
                "%s was called on an aiond engine thread (inside a kernel or on the "
                "engine's event loop), where it would wait for itself. Use "
                "`await arr.read()` in coroutines on the engine loop, and do not "
                "read arrays from inside a kernel." % what)

    def check_await(self, var, what: str):
        """Raise ``DeadlockError`` when a coroutine kernel awaits a read that
        can only run after the kernel itself finished: of a var it writes, or
        of a var it reads behind which a write is queued."""
        k = async_kernel.get()
        if k is None or k.done:
            return
        with self.lock:
            dead = var in k.writes or (var in k.reads and var.pending_write())
        if dead:
            raise DeadlockError(
                "%s of an array that the running async kernel %s writes (or "
                "that a write queued behind it is waiting for) would wait for "
                "the kernel itself: read it before pushing the kernel, or pass "
                "its value in" % (what, k.name))

    def wait_opr(self, opr, what: str):
        """Block the calling thread until ``opr`` has finished; run ready ops
        from the CPU queue meanwhile rather than sleep on a hand-off."""
        seg = _tls.seg
        if seg is not None:
            if seg.tracing:
                raise TraceError("%s while tracing" % what)
            self.flush_segment(seg)
        if opr.done:
            return
        self.check_blocking(what)
        if self.bulk_batch:
            self.flush_bulk()
        ev = threading.Event()
        with self.lock:
            if opr.done:
                return
            prev = opr.on_done

            def cb(o, prev=prev):
                if prev is not None:
                    prev(o)
                ev.set()
            opr.on_done = cb
        cpu = self.cpu
        t0 = _monotonic() if _get_running_loop() is not None else None
        while not ev.is_set():
            item = cpu.steal()
            if item is None:
                ev.wait()
            else:
                cpu.run_stolen(item)
        if t0 is not None:
            _loopblock.blocked(what, _monotonic() - t0, user_origin(2))

    def wait_all(self):
        """Block until every pushed op has finished; raise the first failure
        not yet reported (each failure is reported once)."""
        self.check_blocking("waitall()")
        seg = _tls.seg
        if seg is not None:
            if seg.tracing:
                raise TraceError("waitall() while tracing")
            self.flush_segment(seg)
        if self.bulk_batch:
            self.flush_bulk()
        cpu = self.cpu
        t0 = _monotonic() if _get_running_loop() is not None else None
        while True:
            with self.lock:
                if not self.pending:
                    break
            item = cpu.steal()
            if item is not None:
                cpu.run_stolen(item)
                continue
            with self.lock:
                if not self.pending:
                    break
                # woken when nothing is pending (not at every op's end, which
                # only took the GIL from the threads running the ops); the
                # timeout looks for work to steal now and then
                self.idle_waiters += 1
                try:
                    self.cv.wait(0.05)
                finally:
                    self.idle_waiters -= 1
        gpu = sys.modules.get("aiond.engine.gpu")
        if gpu is not None and gpu._executors:
            # GPU ops finish in the scheduler once enqueued: wait for the devices
            gpu.drain_all()
        if t0 is not None:
            _loopblock.blocked("waitall()", _monotonic() - t0, user_origin(2))
        self.raise_unreported("waitall()")

    def raise_unreported(self, what):
        with self.lock:
            fails = [f for f in self.failures.take() if not f.reported]
            for f in fails:
                f.reported = True
        if fails:
            err = fails[0].error(what)
            if len(fails) > 1:
                err.args = (err.args[0] + " (and %d more failed op(s))" % (len(fails) - 1),)
            raise err

    # ------------------------------------------------------- back-pressure
    def over_bound(self) -> bool:
        return self.pending > self.max_pending or self.bytes > self.max_bytes

    def _wake_room(self):
        """An op finished while someone waits for room (lock held)."""
        self.cv.notify_all()
        if self.room_waiters and not self.over_bound():
            waiters, self.room_waiters = self.room_waiters, []
            self.cv_waiters -= len(waiters)
            for loop, fut in waiters:
                try:
                    loop.call_soon_threadsafe(_set_room, fut)
                except RuntimeError:  # that loop closed: nobody waits
                    pass

    async def room(self):
        """Wait, without blocking the running event loop, until the pending
        bounds hold (``await mx.engine.room()``: the async producer's form of
        the back-pressure ``push`` applies to threads)."""
        import asyncio
        loop = asyncio.get_running_loop()
        while self.over_bound():
            with self.lock:
                if not self.over_bound():
                    return
                fut = loop.create_future()
                self.room_waiters.append((loop, fut))
                self.cv_waiters += 1
            await fut

    def _throttle(self):
        """Slow a producer down until the pending bound holds again."""
        if self.in_engine_thread():
            return
        aio = sys.modules.get("asyncio")
        if aio is not None and aio._get_running_loop() is not None:
            # a coroutine pushed: blocking here would freeze its whole loop.
            # It is held by ``await room()`` (reads await it) instead, and
            # blocked only past LOOP_SLACK times the bounds.
            if (self.pending <= LOOP_SLACK * self.max_pending
                    and self.bytes <= LOOP_SLACK * self.max_bytes):
                return
        cpu = self.cpu
        while self.pending > self.max_pending or self.bytes > self.max_bytes:
            item = cpu.steal()
            if item is not None:
                cpu.run_stolen(item)
                continue
            with self.lock:
                if self.pending <= self.max_pending and self.bytes <= self.max_bytes:
                    return
                self.cv_waiters += 1
                try:
                    self.cv.wait(0.05)
                finally:
                    self.cv_waiters -= 1

    # ---------------------------------------------------------------- naive
    def _push_naive(self, opr):
        with self.lock:
            wait = self._register(opr)
            if wait:
                opr.counted = True
                self.pending += 1
                self.bytes += opr.nbytes
        if wait:
            # earlier asynchronous work still holds a var: run ours right after
            opr.origin = user_origin(3)
            self.wait_opr(opr, "the naive engine")
        elif opr.executor is not None and hasattr(opr.executor, "run_naive"):
            opr.origin = user_origin(3)
            opr.executor.run_naive(opr)     # a device op: launched, then waited for
        else:
            # the threaded engine's ranges and one BLAS thread: its bits
            if opr.split is not None:
                opr.fn = self.cpu.serial(opr.split, opr.fn)
            if not _blas.ready():
                _blas.setup()
            bl = _blas.state
            if bl.dynamic:
                bl.enter()
                try:
                    self._run_inline(opr)
                finally:
                    bl.leave()
            else:
                self._run_inline(opr)
        fail = opr.failure
        if fail is not None and not fail.reported:
            raise fail.error("the naive engine, at push")
        return opr


class _SegmentScope:
    __slots__ = ("engine", "limit", "name")

    def __init__(self, engine, limit, name):
        self.engine, self.limit, self.name = engine, limit, name

    def __enter__(self):
        seg = _tls.seg
        if seg is not None:
            seg.depth += 1
        elif not self.engine.naive_depth:
            limit = self.limit
            if limit is None or limit <= 0:
                limit = 1 << 30
            seg = Builder(limit, self.name)
            seg.origin = user_origin(2)
            _tls.seg = seg
        return self

    def __exit__(self, *exc):
        seg = _tls.seg
        if seg is None:
            return
        seg.depth -= 1
        if seg.depth <= 0:
            try:
                self.engine.flush_segment(seg)
            finally:
                _tls.seg = None


class _TraceScope:
    __slots__ = ("builder", "prev")

    def __enter__(self):
        self.prev = _tls.seg
        self.builder = b = Builder(1 << 30, "trace", True)
        _tls.seg = b
        return b

    def __exit__(self, *exc):
        _tls.seg = self.prev


def _interrupted(fail):
    """Ctrl-C landed in a kernel this thread ran for the user: its outputs
    are poisoned like any failure's, and the interrupt goes on to stop the
    user's script (as it would have in a wait), told once, here."""
    fail.reported = True
    if fail.log is not None:
        fail.log.discard(fail)
        fail.log = None
    raise fail.exc


def _set_room(fut):
    if not fut.done():
        fut.set_result(None)
