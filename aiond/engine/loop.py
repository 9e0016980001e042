"""The runtime's own asyncio event loop (uvloop when installed), in a daemon
thread, started on first use.

It hosts what the engine does asynchronously rather than on a worker: ops
whose kernel is a coroutine (``AsyncExecutor``), the once-per-burst flush of
bulk batches, and (later) GPU completion callbacks. User coroutines never run
here; ``await arr.read()`` resolves on the caller's own loop.
"""
from __future__ import annotations

import asyncio
import threading

from .executor import Executor
from .scheduler import async_kernel
from .var import Failure

__all__ = ["EngineLoop", "AsyncExecutor", "engine_loop"]


class EngineLoop:
    def __init__(self, engine):
        self.engine = engine
        self._loop = None
        self._lock = threading.Lock()
        self.thread = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._start()
        return self._loop

    def _start(self):
        with self._lock:
            if self._loop is not None:
                return
            try:
                import uvloop
                loop = uvloop.new_event_loop()
            except ImportError:  # uvloop is optional (not on Windows)
                loop = asyncio.new_event_loop()
            started = threading.Event()

            def run():
                asyncio.set_event_loop(loop)
                self.engine.threads.add(threading.get_ident())
                loop.call_soon(started.set)
                loop.run_forever()

            t = threading.Thread(target=run, name="aiond-engine-loop", daemon=True)
            t.start()
            started.wait()
            self.thread = t
            self._loop = loop

    def call_soon(self, fn, *args):
        self.loop.call_soon_threadsafe(fn, *args)

    def run_coroutine(self, coro):
        """Schedule ``coro`` on the engine loop; returns a concurrent Future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)


class AsyncExecutor(Executor):
    """Runs ops whose ``fn`` returns an awaitable, on the engine loop.

    The op holds its vars until the awaitable finishes, so ordering is the
    same as for CPU ops; the loop stays free while it waits.
    """

    def __init__(self, engine, loop: EngineLoop):
        self.engine = engine
        self.eloop = loop

    def submit(self, opr):
        self.eloop.call_soon(self._start, opr)

    def _start(self, opr):
        engine = self.engine
        fail = engine._poisoned(opr)
        if fail is not None:
            engine.dispatch_all(engine.finish(opr, fail))
            return
        token = async_kernel.set(opr)   # the task inherits it: see check_await
        try:
            aw = opr.fn()
            task = asyncio.ensure_future(aw)
        except BaseException as e:  # noqa: BLE001
            self._done(opr, None, e)
            return
        finally:
            async_kernel.reset(token)
        task.add_done_callback(lambda t, o=opr: self._done(o, t, None))

    def _done(self, opr, task, exc):
        engine = self.engine
        if task is not None:
            if task.cancelled():
                exc = asyncio.CancelledError("async kernel %s was cancelled" % opr.name)
            else:
                exc = task.exception()
                if exc is None:
                    opr.result = task.result()
        fail = None
        if exc is not None:
            fail = Failure(opr.name, opr.origin, exc)
            engine.failures.append(fail)
        engine.dispatch_all(engine.finish(opr, fail))


_eloop = None


def engine_loop() -> EngineLoop:
    global _eloop
    if _eloop is None:
        from . import get
        _eloop = EngineLoop(get())
    return _eloop
