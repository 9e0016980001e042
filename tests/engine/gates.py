"""Gate ops: force engine orderings with events, never with sleeps.

A ``Gate`` pushes an engine op that blocks (on a ``threading.Event``) until
``gate.open()``. While it is closed, every op ordered after it on the vars it
touches must not run; ops on other vars must. Tests open every gate in a
``finally`` (or use ``with Gate() as g:``), so a failing assertion never
leaves a worker blocked and never hangs the process.

``Recorder`` collects execution order from kernels running on any thread.
``clean_engine`` is an autouse fixture for the engine test modules: it drains
the engine and forgets unreported failures before and after each test, and
restores the limits and bulk size.
"""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

import aiond as mx

TIMEOUT = 10.0       # seconds any single wait in these tests may take


def wait_for(event: threading.Event, what: str = "event", timeout: float = TIMEOUT):
    assert event.wait(timeout), "timed out after %ss waiting for %s" % (timeout, what)


def wait_done(opr, timeout: float = TIMEOUT):
    """Wait for a low-level ``Opr`` without the engine's own blocking waits
    (they steal work; this only polls ``opr.done``, with a deadline)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    step = 0.0005
    while not opr.done:
        assert time.monotonic() < deadline, "timed out waiting for %r" % (opr,)
        pause.wait(step)
        step = min(step * 2, 0.01)
    return opr


class Recorder:
    """A thread-safe list of events in the order kernels recorded them."""

    def __init__(self):
        self._lock = threading.Lock()
        self.log = []

    def __call__(self, item):
        with self._lock:
            self.log.append(item)

    def snapshot(self):
        with self._lock:
            return list(self.log)

    def index(self, item):
        return self.snapshot().index(item)


class Gate:
    """An engine op that holds its vars until ``open()``.

    ``push(reads=, writes=)`` pushes the op; ``started`` is set once the
    kernel runs (it then holds its vars), ``passed`` once it returned.
    ``body`` (optional) runs after the gate opened, inside the kernel - use it
    to write a value into an array the gate writes. ``mode='async'`` pushes a
    coroutine kernel on the engine loop instead, so it blocks no CPU worker.
    """

    def __init__(self, name="gate", record=None, body=None, mode="thread"):
        self.name = name
        self.record = record
        self.body = body
        self.mode = mode
        self.started = threading.Event()
        self.passed = threading.Event()
        self._open = threading.Event()
        self._lock = threading.Lock()
        self._afut = None          # (loop, future) of an async gate waiting
        self.opr = None
        self._pusher = None

    # ------------------------------------------------------------ kernel
    def _enter(self):
        self.started.set()
        if self.record is not None:
            self.record(self.name + ":start")

    def _leave(self):
        try:
            if self.body is not None:
                return self.body()
        finally:
            if self.record is not None:
                self.record(self.name + ":end")
            self.passed.set()

    def _kernel(self):
        if threading.get_ident() == self._pusher:
            # the test thread stole its own gate while blocking on a read: it
            # would wait for itself. Fail fast instead (wait_started() first).
            raise RuntimeError("gate %s ran on the thread that pushed it" % self.name)
        self._enter()
        if not self._open.wait(60):
            raise TimeoutError("gate %s was never opened" % self.name)
        return self._leave()

    async def _akernel(self):
        self._enter()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            if not self._open.is_set():
                self._afut = (loop, fut)
            else:
                fut.set_result(None)
        await asyncio.wait_for(fut, 60)
        return self._leave()

    # ------------------------------------------------------------ control
    def push(self, reads=(), writes=()):
        self._pusher = threading.get_ident()
        if self.mode == "async":
            self.opr = mx.engine.push(self._akernel, reads=reads, writes=writes,
                                      name=self.name, executor="async")
        else:
            self.opr = mx.engine.push(self._kernel, reads=reads, writes=writes, name=self.name)
        return self.opr

    def open(self):
        with self._lock:
            self._open.set()
            af, self._afut = self._afut, None
        if af is not None:
            loop, fut = af

            def _set():
                if not fut.done():
                    fut.set_result(None)
            loop.call_soon_threadsafe(_set)

    @property
    def is_open(self):
        return self._open.is_set()

    def wait_started(self, timeout=TIMEOUT):
        wait_for(self.started, "gate %s to start" % self.name, timeout)

    def wait_passed(self, timeout=TIMEOUT):
        wait_for(self.passed, "gate %s to pass" % self.name, timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.open()
        return False


def marker(record, name, event=None):
    """A kernel that records ``name`` (and sets ``event``) when it runs."""
    def fn():
        record(name)
        if event is not None:
            event.set()
    return fn


def drain():
    """Wait for the engine to go idle and forget failures nobody reported."""
    try:
        mx.nd.waitall()
    except mx.base.MXNetError:
        pass


@pytest.fixture(autouse=True)
def clean_engine():
    drain()
    limits = mx.engine.set_limits()
    bulk = mx.engine.set_bulk_size(0)
    mx.engine.set_bulk_size(bulk)
    try:
        yield
    finally:
        drain()
        mx.engine.set_limits(*limits)
        mx.engine.set_bulk_size(bulk)
        drain()
