"""The communication thread of the distributed stores.

One thread owns every MPI call of the process (MPI is initialised on it, so
``MPI_THREAD_FUNNELED`` is all that is asked of the library). Stores hand it
*jobs*, numbered at push time on the caller's thread; the thread starts them
strictly in that order, one at a time, so every rank posts its collectives in
the same order whatever order the engine found their inputs ready in. A job
is a generator: it posts non-blocking requests (``Iallreduce``, ...) and
yields them; the thread tests them. MPI over shared memory moves data only
while a process polls, so for ``AIOND_DIST_SPIN_US`` (default 5000) the
thread polls with ``sched_yield`` between polls (a compute thread that wants
the core gets it); a peer still late after that is waited for with sleeps of
growing length (up to 1 ms), and an idle thread sleeps on a condition. The
engine's event loop and workers never wait on MPI.

A job that waits longer than ``AIOND_DIST_TIMEOUT`` seconds (default 600)
fails with an error saying which collective and which key were stuck; as a
collective cannot be cancelled, the communicator is then *broken* and every
later job fails at once with the same cause. A warning goes to stderr once a
job has waited ``AIOND_DIST_WARN`` seconds (default 60).

Without an MPI launcher in the environment (``mpiexec`` sets ``PMI_RANK``,
Open MPI ``OMPI_COMM_WORLD_RANK``, ...) the process is one worker and
``SelfComm`` completes every collective locally: mpi4py is not even
imported. ``AIOND_DIST_MPI=1`` forces MPI (an MPI singleton).
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import time

import numpy as np

from .._extras import install_hint
from ..base import MXNetError
from ..engine.executor import Executor

__all__ = ["DistError", "DistTimeoutError", "get_comm_thread", "env_float"]

_LAUNCHER_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                  "MPI_LOCALRANKID", "MV2_COMM_WORLD_RANK")


class DistError(MXNetError):
    """A collective of a distributed kvstore failed or was refused."""


class DistTimeoutError(DistError, TimeoutError):
    """A collective did not complete within ``AIOND_DIST_TIMEOUT`` seconds."""


def env_float(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return float(v)
    except ValueError:
        raise MXNetError("%s must be a number, got %r" % (name, v)) from None


def _launched_by_mpi():
    if os.environ.get("AIOND_DIST_MPI", "") not in ("", "0"):
        return True
    return any(v in os.environ for v in _LAUNCHER_VARS)


# --------------------------------------------------------------- backends
class _DoneRequest:
    """What SelfComm's operations return: already complete."""
    __slots__ = ()

    @staticmethod
    def Test():
        return True


_DONE = _DoneRequest()


class SelfComm:
    """One worker, no MPI: every collective is a local copy."""
    rank = 0
    size = 1
    name = "self"

    def iallreduce(self, send, recv):
        if send is not recv:
            np.copyto(recv, send)
        return [_DONE]

    def iallreduce_max(self, send, recv):
        return self.iallreduce(send, recv)

    def iallgather(self, send, recv):
        np.copyto(recv.reshape(-1)[:send.size], send.reshape(-1))
        return [_DONE]

    def ibcast(self, buf, root=0):
        return [_DONE]

    def ibarrier(self):
        return [_DONE]

    @staticmethod
    def test(reqs):
        return True

    def abort(self, code):
        pass

    def finalize(self):
        pass


class MPIComm:
    """COMM_WORLD (a duplicate of it, so user collectives never mix with ours)."""
    name = "mpi"

    def __init__(self):
        import mpi4py
        mpi4py.rc.initialize = False    # initialised here, on the comm thread
        mpi4py.rc.finalize = False      # finalised by the comm thread at exit
        from mpi4py import MPI
        self.MPI = MPI
        if MPI.Is_initialized():
            # the user initialised MPI first: our thread calls MPI alongside theirs
            level = MPI.Query_thread()
            if level < MPI.THREAD_SERIALIZED:
                raise DistError("MPI was initialised with thread level %d; aiond's "
                                "distributed kvstore calls MPI from its communication "
                                "thread and needs MPI_THREAD_SERIALIZED or more "
                                "(MPI_THREAD_MULTIPLE if your code calls MPI too)" % level)
            self.owned = False
        else:
            MPI.Init_thread(MPI.THREAD_FUNNELED)
            self.owned = True
        self.comm = MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    @staticmethod
    def _buf(a):
        return a        # mpi4py maps numpy's buffer format to the MPI datatype

    def iallreduce(self, send, recv):
        MPI = self.MPI
        if send is recv or (send.__array_interface__["data"][0]
                            == recv.__array_interface__["data"][0]):
            return [self.comm.Iallreduce(MPI.IN_PLACE, self._buf(recv), MPI.SUM)]
        return [self.comm.Iallreduce(self._buf(send), self._buf(recv), MPI.SUM)]

    def iallreduce_max(self, send, recv):
        return [self.comm.Iallreduce(self._buf(send), self._buf(recv), self.MPI.MAX)]

    def iallgather(self, send, recv):
        return [self.comm.Iallgather(self._buf(send), self._buf(recv))]

    def ibcast(self, buf, root=0):
        return [self.comm.Ibcast(self._buf(buf), root=root)]

    def ibarrier(self):
        return [self.comm.Ibarrier()]

    def test(self, reqs):
        Request = self.MPI.Request
        if len(reqs) == 1 or all(type(r) is Request for r in reqs):
            r = reqs[0]
            if len(reqs) > 1:
                return Request.Testall(reqs)
            return r.Test() if isinstance(r, Request) else r.probe()
        return all(r.Test() if isinstance(r, Request) else r.probe() for r in reqs)

    def p2p(self):
        """A communicator of its own for dist_async's messages."""
        if getattr(self, "_p2p", None) is None:
            self._p2p = self.comm.Dup()
        return self._p2p

    def abort(self, code):
        self.MPI.COMM_WORLD.Abort(code)

    def finalize(self):
        if self.owned and not self.MPI.Is_finalized():
            self.comm.Free()
            self.MPI.Finalize()


# ----------------------------------------------------------- the thread
class Job:
    """One unit of communication: ``steps()`` is a generator yielding lists
    of requests to complete before it goes on. ``desc`` names it in errors
    (the op and its keys)."""
    __slots__ = ("seq", "desc", "steps", "opr", "event", "exc", "started", "poisoned",
                 "timeout", "inputs")

    def __init__(self, desc, steps, timeout=None, inputs=()):
        self.timeout = timeout
        self.inputs = inputs        # the vars of the values it sends
        self.seq = -1
        self.desc = desc
        self.steps = steps
        self.opr = None
        self.event = None
        self.exc = None
        self.started = 0.0
        self.poisoned = None

    def __call__(self):
        """Run synchronously (the naive engine calls an op's fn inline; the
        op then declares no reads, so that an input from a failed op still
        takes part in the collective the other ranks wait for)."""
        self.poisoned = next((v.exc for v in self.inputs if v.exc is not None), None)
        self.event = threading.Event()
        get_comm_thread().ready(self)
        self.event.wait()
        if self.poisoned is not None:
            raise self.poisoned.exc
        if self.exc is not None:
            raise self.exc


_TRACK = 2 << 40        # the profiler's track id of the comm thread's jobs


def _profiler():
    from ..engine import get as _get_engine
    return _get_engine().prof


class CommThread:
    """Owns the communicator and runs jobs in sequence-number order."""

    def __init__(self):
        self.cv = threading.Condition(threading.Lock())
        self.next_push = 0          # the seq the next job gets
        self.next_run = 0           # the seq the thread starts next
        self.waiting = {}           # seq -> ready job not yet started
        self.broken = None          # the error that made the communicator unusable
        self.stopping = False
        self.comm = None
        self.services = []          # called while idle or waiting (dist_async's server)
        self.current = None         # the job running (its steps read .poisoned)
        self.timeout = env_float("AIOND_DIST_TIMEOUT", 600.0)
        self.warn_after = env_float("AIOND_DIST_WARN", 60.0)
        self.spin = env_float("AIOND_DIST_SPIN_US", 5000.0) * 1e-6
        self.stats = collections.Counter()
        started = threading.Event()
        init_err = []

        def main():
            try:
                self.comm = MPIComm() if _launched_by_mpi() else SelfComm()
            except BaseException as e:  # noqa: BLE001 - reported to the creator
                init_err.append(e)
                started.set()
                return
            started.set()
            self._loop()

        self.thread = threading.Thread(target=main, name="aiond-dist-comm", daemon=True)
        self.thread.start()
        started.wait()
        if init_err:
            e = init_err[0]
            if isinstance(e, ImportError):
                raise DistError("distributed kvstores under mpiexec need mpi4py and an MPI "
                                "library: %s (%s)" % (install_hint("dist"), e)) from e
            raise DistError("could not initialise MPI: %s: %s" % (type(e).__name__, e)) from e
        import atexit
        atexit.register(self.shutdown)

    @property
    def rank(self):
        return self.comm.rank

    @property
    def size(self):
        return self.comm.size

    def number(self, job):
        """Give ``job`` its place in the order (on the pushing thread)."""
        with self.cv:
            job.seq = self.next_push
            self.next_push += 1
        return job

    def ready(self, job):
        """``job`` may start once every earlier job has finished."""
        with self.cv:
            self.waiting[job.seq] = job
            if job.seq == self.next_run:
                self.cv.notify()

    def run(self, desc, steps, timeout=None):
        """Number a job, run it, wait for it (for blocking calls like _barrier)."""
        job = self.number(Job(desc, steps, timeout))
        job()

    # --------------------------------------------------------------- loop
    def _loop(self):
        cv = self.cv
        idle = 2e-5
        while True:
            job = None
            with cv:
                if self.next_run in self.waiting:
                    job = self.waiting.pop(self.next_run)
                    self.next_run += 1
                elif self.stopping:
                    break
                elif not self.services:
                    cv.wait()
                    continue
                else:
                    # a server answers peers between jobs: poll with a back-off
                    cv.wait(idle)
            if job is not None:
                self._run(job)
                idle = 2e-5
            elif self._serve():
                idle = 2e-5
            else:
                idle = min(idle * 2, 1e-3)
        try:
            if self.broken is None:
                self.comm.finalize()
        except Exception:  # noqa: BLE001 - nothing left to report to
            pass

    def add_service(self, fn):
        """Have the thread call ``fn()`` (on the thread, returning whether it
        did any work) whenever it is idle or waiting: dist_async's server."""
        with self.cv:
            self.services.append(fn)
            self.cv.notify()

    def _serve(self):
        did = False
        for fn in self.services:
            try:
                did = fn() or did
            except Exception as e:  # noqa: BLE001 - a bad request must not stop the thread
                print("aiond: the kvstore server on rank %d failed to answer a request: "
                      "%s: %s" % (self.rank, type(e).__name__, e), file=sys.stderr, flush=True)
        return did

    def _run(self, job):
        exc = self.broken
        prof = _profiler()
        t0 = prof.now_us() if prof is not None else 0.0
        if exc is None:
            job.started = time.monotonic()
            self.current = job
            try:
                gen = job.steps()
                for reqs in gen:
                    if reqs:
                        self._complete(job, reqs)
            except DistTimeoutError as e:
                exc = e
                self.broken = e
            except BaseException as e:  # noqa: BLE001 - the op fails with it
                exc = e
                if not isinstance(e, DistError) or getattr(e, "fatal", False):
                    self.broken = e
        else:
            exc = DistError("the distributed kvstore is unusable after an earlier failure "
                            "(%s); %s was not run" % (exc, job.desc))
        self.stats["jobs"] += 1
        if prof is not None:
            name = job.opr.name if job.opr is not None else job.desc
            prof.device_span(_TRACK | self.rank, "MPI communication (rank %d)" % self.rank,
                             name, t0, prof.now_us())
        self._finish(job, exc)

    def _complete(self, job, reqs):
        """Wait for ``reqs``: spin briefly, then sleep with a growing back-off;
        a job pushed meanwhile wakes the thread (and changes nothing: jobs run
        one at a time), time-outs raise."""
        test = self.comm.test
        if test(reqs):
            return
        # MPI over shared memory progresses only while someone polls: poll,
        # giving the core away between polls, for AIOND_DIST_SPIN_US; a peer
        # that is still late by then is waited for with sleeps
        spin_end = time.perf_counter() + self.spin
        yield_ = os.sched_yield
        serve = self._serve if self.services else None
        while time.perf_counter() < spin_end:
            yield_()
            if serve is not None:
                serve()
            if test(reqs):
                self.stats["polled"] += 1
                return
        delay = 2e-5
        warned = False
        cv = self.cv
        while True:
            with cv:
                cv.wait(delay)
            if serve is not None and serve():
                delay = 2e-5
            if test(reqs):
                self.stats["slept"] += 1
                return
            delay = min(delay * 2, 1e-3)
            waited = time.monotonic() - job.started
            if not warned and waited > self.warn_after:
                warned = True
                print("aiond: rank %d has waited %.0f s for %s; a peer rank may be slow, "
                      "dead or hung (AIOND_DIST_TIMEOUT=%g)" % (self.rank, waited, job.desc,
                                                                 self.timeout),
                      file=sys.stderr, flush=True)
            limit = self.timeout if job.timeout is None else job.timeout
            if waited > limit:
                raise DistTimeoutError(
                    "rank %d of %d: %s did not complete within %g s (AIOND_DIST_TIMEOUT); "
                    "a peer rank is dead, hung, or issued different collectives"
                    % (self.rank, self.size, job.desc, limit))

    def _finish(self, job, exc):
        if job.event is not None:       # run synchronously (naive engine, barrier)
            job.exc = exc
            job.event.set()
            return
        opr = job.opr
        from ..engine import get as _get_engine
        from ..engine.var import Failure
        engine = _get_engine()
        fail = job.poisoned             # this rank's failed input: its own cause
        if exc is not None and fail is None:
            fail = Failure(opr.name, opr.origin, exc)
            engine.failures.append(fail)
        engine.dispatch_all(engine.finish(opr, fail))

    def shutdown(self):
        """At exit: run the jobs already pushed (the peers wait for them),
        then finalise MPI."""
        deadline = time.monotonic() + min(self.timeout, 600.0)
        with self.cv:
            while self.next_run < self.next_push and self.broken is None \
                    and time.monotonic() < deadline:
                self.cv.wait(0.05)
            self.stopping = True
            self.cv.notify()
        if self.broken is None:
            self.thread.join(timeout=30)


class CommExecutor(Executor):
    """The engine executor of communication ops: a ready op's job is queued
    for the comm thread, which finishes the op when the job is done. An op
    whose inputs are poisoned still runs its collective (the other ranks
    are waiting for it) on whatever its inputs hold, and is then finished
    with the poison.

    An op's ``fn`` is its job: the executor times itself (the comm thread
    records each job's span on a track of its own while the profiler runs),
    so the engine does not wrap it. ``claim`` (called right after the push)
    still matches a job to an op whose ``fn`` is something else, and may
    come before or after the engine submits the op."""
    times_itself = True

    def __init__(self, thread):
        self.thread = thread
        self.lock = threading.Lock()
        self.jobs = {}          # opr -> job, pushed but not yet submitted
        self.early = set()      # oprs submitted before their claim

    def submit(self, opr):
        job = opr.fn
        if not isinstance(job, Job):
            with self.lock:
                job = self.jobs.pop(opr, None)
                if job is None:
                    self.early.add(opr)
                    return
        self._ready(opr, job)

    def claim(self, opr, job):
        if opr.fn is job:
            return
        with self.lock:
            if opr in self.early:
                self.early.discard(opr)
            else:
                self.jobs[opr] = job
                return
        self._ready(opr, job)

    def _ready(self, opr, job):
        job.opr = opr
        # poisoned by what it sends, not by what it overwrites (an in-place
        # value is among the op's writes, the store's copy is only written)
        job.poisoned = next((v.exc for v in job.inputs if v.exc is not None), None)
        self.thread.ready(job)


_thread = None
_thread_lock = threading.Lock()


def get_comm_thread() -> CommThread:
    global _thread
    if _thread is None:
        with _thread_lock:
            if _thread is None:
                _thread = CommThread()
    return _thread
