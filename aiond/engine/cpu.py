"""The CPU executor: a pool of worker threads running ready ops over numpy.

* Workers are sized to the cores (``AIOND_CPU_WORKERS``); every engine
  thread runs kernels with one BLAS thread (``blas.py``): a large op is
  split into ranges that the pushing thread and idle workers take from one
  list, and nothing waits for a range no thread has started.
* A worker that finishes an op runs one newly ready successor itself (no
  queue hop for a dependent chain) and queues the rest.
* Large elementwise kernels are split into one flat range per worker.
* A thread blocked in a wait may ``steal`` queued ops and run them itself.
* On Linux, once an event loop awaits the engine's results, the workers
  run under ``SCHED_BATCH`` (``AIOND_WORKER_SCHED``) and the loop's thread
  takes a short time slice (``AIOND_LOOP_SLICE_US``), so that the loop,
  waking from ``epoll_wait``, gets a core before them instead of waiting
  out their time slice (``ossched.py``); while processes at a lower
  priority use the cores, the workers take the normal policy back, or
  such a process could hold a woken worker off its core until the next
  scheduler tick. A plain training loop keeps the normal policy: there a
  worker woken for half of a split op must not wait behind the BLAS
  threads of the thread that pushed it.
"""
from __future__ import annotations

import collections
import os
import queue
import threading

from . import blas, ossched
from .executor import Executor
from .var import Failure

__all__ = ["CPUExecutor"]

SPLIT_MIN = 1 << 18     # elements; below this a hand-off costs more than it saves


class _Batch:
    """Several ready ops handed over as one work item (bulk mode)."""
    __slots__ = ("oprs",)

    def __init__(self, oprs):
        self.oprs = oprs


class _Chunk:
    """One flat range ``[lo, hi)`` of a split op."""
    __slots__ = ("job", "lo", "hi")

    def __init__(self, job, lo, hi):
        self.job, self.lo, self.hi = job, lo, hi


_CHUNK = object()    # wake-up token: a chunk waits in ``_chunks``


class _SplitJob:
    __slots__ = ("opr", "run", "left", "fail", "lock", "event")

    def __init__(self, opr, run, parts):
        self.opr, self.run, self.left = opr, run, parts
        self.fail = None
        self.lock = threading.Lock()
        self.event = None       # set when a running op waits for its chunks


class CPUExecutor(Executor):
    """Runs CPU ops for one ``Engine`` on ``nworkers`` daemon threads."""

    def __init__(self, engine, nworkers: int):
        self.engine = engine
        self.nworkers = max(1, int(nworkers))
        self._q = queue.SimpleQueue()
        # chunks of split ops jump the queue: an op's output stays allocated
        # until its last chunk runs, so chunks must not wait behind new ops
        self._chunks = collections.deque()
        self._started = False
        self._start_lock = threading.Lock()
        self.busy = 0
        # read here: a bad value raises at import
        mode, self._batch_policy = ossched.worker_policy()
        self._loop_slice = ossched.loop_slice_ns()
        self._sliced = set()                # native ids of loop threads given a short slice
        # the policy the workers should run under (None: the normal one);
        # each worker compares it with its own before taking an item
        self.policy = self._batch_policy if mode == "batch" else None
        self._auto = mode == "auto" and self._batch_policy is not None
        self._normal = getattr(os, "SCHED_OTHER", None)
        # under 'auto' once serving: a neighbour at a lower priority sends
        # the workers back to the normal policy (``ossched.NicedLoad``)
        self._niced = None
        self.native_ids = []                # the workers' OS thread ids

    # ------------------------------------------------------------ lifecycle
    def _start(self):
        with self._start_lock:
            if self._started:
                return
            # before any engine thread runs a kernel: BLAS one thread each
            blas.setup()
            for i in range(self.nworkers):
                t = threading.Thread(target=self._work, name="aiond-cpu-%d" % i, daemon=True)
                t.start()
            self._started = True

    def _work(self):
        self.engine.threads.add(threading.get_ident())
        self.native_ids.append(threading.get_native_id())
        mine = self.policy
        ossched.set_policy(mine)
        get = self._q.get
        bl = blas.state
        while True:
            item = get()
            niced = self._niced
            if niced is not None and niced.due():
                self.policy = self._normal if niced.update() else self._batch_policy
            if self.policy != mine:
                mine = self.policy
                ossched.set_policy(mine)
            self.busy += 1
            bl.enter()
            try:
                self._run(item)
            finally:
                bl.leave()
                self.busy -= 1

    def serving(self):
        """An event loop on this thread awaits results: under 'auto', the
        workers take ``SCHED_BATCH`` from their next item on, and this thread
        takes a short time slice (``ossched``), once."""
        if self._auto:
            self._auto = False
            self.policy = self._batch_policy
            self._niced = ossched.NicedLoad()
        if self._loop_slice:
            tid = threading.get_native_id()
            if tid not in self._sliced:
                self._sliced.add(tid)
                ossched.short_slice(self._loop_slice)

    # ------------------------------------------------------------ interface
    def submit(self, opr):
        if not self._started:
            self._start()
        self._q.put(opr)

    def submit_batch(self, oprs):
        if not self._started:
            self._start()
        self._q.put(_Batch(oprs))

    def steal(self):
        if not self._started:
            return None
        try:
            return self._chunks.popleft()
        except IndexError:
            pass
        try:
            item = self._q.get_nowait()
        except queue.Empty:
            return None
        return None if item is _CHUNK else item

    def run_stolen(self, item):
        from .scheduler import _tls
        prev = getattr(_tls, "in_kernel", False)
        _tls.in_kernel = True
        bl = blas.state
        bl.enter()
        try:
            self._run(item)
        finally:
            bl.leave()
            _tls.in_kernel = prev

    # ------------------------------------------------------------ running
    def _run(self, item):
        if item is _CHUNK:
            try:
                item = self._chunks.popleft()
            except IndexError:
                return
        t = type(item)
        if t is _Chunk:
            self._run_chunk(item)
            return
        if t is _Batch:
            for opr in item.oprs:
                self._run_chain(opr)
            return
        self._run_chain(item)

    def _run_chain(self, opr):
        engine = self.engine
        while opr is not None:
            ready = engine.execute(opr)
            opr = None
            if ready:
                # keep one CPU successor on this thread, hand the rest over;
                # tiny ones (reads of a result, say) run here at once
                for r in ready:
                    if r.tiny:
                        more = engine.execute(r)
                        if more:
                            ready.extend(more)
                    elif opr is None and r.executor is None:
                        opr = r
                    else:
                        engine._dispatch(r)

    def idle(self) -> bool:
        """Whether another worker could take a chunk now."""
        return self.nworkers > 1 and self._started and self.busy < self.nworkers \
            and self._q.empty()

    def run_parallel(self, opr):
        """Run the split-able op ``opr`` by ranges across idle workers from
        inside a running op (a bulk segment's member), returning when every
        range has run; a range's error is raised here."""
        n, run = opr.split()[:2]
        if run is None:
            return opr.fn()
        self.run_ranges(n, run)
        return None

    def run_ranges(self, n, run):
        """Run ``run(lo, hi)`` over ``[0, n)`` in one range per worker, idle
        workers taking ranges; returns when all ran (raising a range's error).

        The ranges are the same whoever runs them, busy workers or idle: a
        GEMM by rows sums in another order than the whole GEMM, and a result
        must not depend on what else the machine was doing."""
        bounds = self._bounds(n)
        if len(bounds) < 2:
            run(0, n)
            return None
        if not self.idle():
            for lo, hi in bounds:
                run(lo, hi)
            return None
        job = _SplitJob(None, run, len(bounds))
        job.event = threading.Event()
        chunks = self._chunks
        for lo, hi in bounds[1:]:
            chunks.append(_Chunk(job, lo, hi))
            self._q.put(_CHUNK)
        self._run_chunk(_Chunk(job, *bounds[0]))
        while not job.event.is_set():
            try:
                c = chunks.popleft()
            except IndexError:
                job.event.wait()
                break
            self._run_chunk(c)
        if job.fail is not None:
            raise job.fail

    def serial(self, split, fn):
        """``fn`` as the ranges of ``split`` run one after another here (an
        op that could not be shared out computes what its split would)."""
        def by_ranges():
            n, run = split()[:2]
            if run is None:
                return fn()
            for lo, hi in self._bounds(n):
                run(lo, hi)
            return None
        return by_ranges

    def _bounds(self, n):
        parts = self.nworkers
        step = -(-n // parts)
        if n >= SPLIT_MIN:
            step = -(-step // 64) * 64   # elementwise: chunk edges on cache lines
        return [(lo, min(n, lo + step)) for lo in range(0, n, step)]

    def can_split(self, opr) -> bool:
        # only when a worker would otherwise idle: queued independent ops
        # already fill the cores, and chunks would only add hand-offs
        return self.nworkers > 1 and self._started and self._q.empty()

    def run_split(self, opr):
        """Run ``opr`` as one chunk per worker; the last chunk finishes it."""
        n, run = opr.split()[:2]
        if run is None:
            # not worth splitting after all: run whole here
            fail = None
            try:
                opr.result = opr.fn()
            except BaseException as e:  # noqa: BLE001
                fail = Failure(opr.name, opr.origin, e)
                self.engine.failures.append(fail)
            self.engine.dispatch_all(self.engine.finish(opr, fail) or ())
            return
        bounds = self._bounds(n)
        job = _SplitJob(opr, run, len(bounds))
        chunks = self._chunks
        for lo, hi in bounds[1:]:
            chunks.append(_Chunk(job, lo, hi))
            self._q.put(_CHUNK)
        self._run_chunk(_Chunk(job, *bounds[0]))
        # run what no idle worker took (our own chunks or others')
        while True:
            try:
                c = chunks.popleft()
            except IndexError:
                return
            self._run_chunk(c)

    def _run_chunk(self, chunk):
        job = chunk.job
        try:
            job.run(chunk.lo, chunk.hi)
        except BaseException as e:  # noqa: BLE001
            with job.lock:
                if job.fail is None:
                    job.fail = e if job.opr is None else Failure(job.opr.name, job.opr.origin, e)
        with job.lock:
            job.left -= 1
            last = job.left == 0
        if last and job.event is not None:
            job.run = None
            chunk.job = None
            job.event.set()
            return
        if last:
            # the closure holds views of the buffers: drop it before the op's
            # storage may die, or the pool must refuse the buffer
            job.run = None
            chunk.job = None
            if job.fail is not None:
                self.engine.failures.append(job.fail)
            self.engine.dispatch_all(self.engine.finish(job.opr, job.fail) or ())

