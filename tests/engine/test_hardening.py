"""Regression tests for issue 15's engine defects: reported failures are not
kept, the push site is never lost, an async kernel reading its own output
raises, bulk size is per thread, async producers wait for room without
blocking their loop, and the pending-bytes bound counts what pending ops
keep alive."""
from __future__ import annotations

import asyncio
import gc
import threading
import time

import numpy as np
import pytest

import aiond as mx
from aiond.base import DeadlockError, MXNetError
from aiond.engine import scheduler as _sched

from .gates import TIMEOUT, Gate, clean_engine, wait_done  # noqa: F401


def _failures():
    return len(mx.engine.get().failures)


# ------------------------------------------------------ 1: no failure kept
def test_reported_failures_are_not_kept():
    base = _failures()
    for _ in range(50):
        bad = mx.nd.linalg.potrf(mx.nd.array(-np.eye(8)))
        with pytest.raises(MXNetError):
            bad.asnumpy()
    assert _failures() == base
    mx.nd.waitall()     # nothing left to report


def test_reported_failure_by_await_read_is_not_kept():
    base = _failures()

    async def main():
        bad = mx.nd.linalg.potrf(mx.nd.array(-np.eye(8)))
        with pytest.raises(MXNetError):
            await asyncio.wait_for(bad.read(), TIMEOUT)
    for _ in range(10):
        asyncio.run(main())
    assert _failures() == base


def test_unreported_failure_still_raised_by_waitall_once():
    bad = mx.nd.linalg.potrf(mx.nd.array(-np.eye(4)))
    with pytest.raises(MXNetError, match="potrf"):
        mx.nd.waitall()
    mx.nd.waitall()                      # reported once
    with pytest.raises(MXNetError):      # readers still fail
        bad.asnumpy()


def test_failed_request_arrays_are_freed():
    # what a failure holds (its traceback's frames and their arrays) dies with
    # the poisoned array once the reader was told
    import weakref
    frame = mx.nd.array(np.ones((16, 16)))
    ref = weakref.ref(frame._st)

    def kernel(x=frame):
        raise ValueError("boom")
    bad = mx.nd.zeros((1,))
    mx.engine.push(kernel, reads=[frame], writes=[bad], name="boom")
    with pytest.raises(MXNetError):
        bad.asnumpy()
    del frame, kernel, bad
    gc.collect()
    assert ref() is None


# ------------------------------------------------------ 3: push site
def test_push_site_recorded_before_the_op_can_run(monkeypatch):
    """The op may be granted by another thread the moment it is registered;
    its origin must already be there (formerly ``pushed at <unknown>:0``)."""
    ran = threading.Event()
    gate = Gate("g3")
    x = mx.nd.zeros((2,))
    gate.push(writes=[x])
    gate.wait_started()
    real = _sched.user_origin

    def slow_origin(depth=2):
        # open the gate now: if the op is registered already it runs and
        # fails before its origin is stored
        gate.open()
        ran.wait(0.5)
        return real(depth + 1)
    monkeypatch.setattr(_sched, "user_origin", slow_origin)

    def failing():
        ran.set()
        raise ValueError("fails")
    try:
        opr = mx.engine.push(failing, reads=[x], name="racer")
    finally:
        monkeypatch.setattr(_sched, "user_origin", real)
        gate.open()
    wait_done(opr)
    err = opr.failure.error("test")
    assert "test_hardening.py" in str(err), str(err)


# ------------------------------------------- 8: async kernel reads itself
def test_async_kernel_awaiting_its_own_output_raises():
    x = mx.nd.zeros((3,))

    async def kernel():
        return await x.read()
    opr = mx.engine.push(kernel, writes=[x], name="selfawait", executor="async")
    wait_done(opr)
    assert isinstance(opr.failure.exc, DeadlockError), repr(opr.failure.exc)
    with pytest.raises(MXNetError):
        x.asnumpy()
    y = mx.nd.ones((2,))                # the engine keeps working
    assert y.asnumpy().tolist() == [1, 1]


def test_async_kernel_awaiting_read_behind_queued_write_raises():
    x = mx.nd.ones((3,))
    out = mx.nd.zeros((1,))

    async def kernel():
        return await x.read()
    with Gate("g8") as g:
        g.push(writes=[out])
        opr = mx.engine.push(kernel, reads=[x], writes=[out], name="rd", executor="async")
        x += 1                          # a write on x queued behind the kernel
        g.open()
        wait_done(opr)
    assert isinstance(opr.failure.exc, DeadlockError)
    assert x.asnumpy().tolist() == [2, 2, 2]


def test_async_kernel_may_await_other_arrays():
    a = mx.nd.ones((3,)) * 5
    x = mx.nd.zeros((3,))

    async def kernel():
        return (await a.read()).sum()
    opr = mx.engine.push(kernel, reads=[a], writes=[x], name="ok", executor="async")
    wait_done(opr)
    assert opr.failure is None and opr.result == 15


# ----------------------------------------------------- 9: bulk per thread
def test_bulk_size_is_per_thread():
    inside = threading.Barrier(2)
    leave = threading.Barrier(2)
    seen = {}

    def worker(name, size):
        with mx.engine.bulk(size):
            inside.wait(TIMEOUT)
            seen[name] = mx.engine.set_bulk_size(size)   # own size, not the other's
            z = mx.nd.ones((4,)) + 1
            seen[name + "_val"] = z.asnumpy().tolist()
            leave.wait(TIMEOUT)
        seen[name + "_after"] = mx.engine.set_bulk_size(0)
    ts = [threading.Thread(target=worker, args=("a", 16)),
          threading.Thread(target=worker, args=("b", 4))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(TIMEOUT)
    assert seen["a"] == 16 and seen["b"] == 4
    assert seen["a_after"] == 0 and seen["b_after"] == 0
    assert seen["a_val"] == seen["b_val"] == [2, 2, 2, 2]
    assert mx.engine.set_bulk_size(0) == 0           # this thread never bulked
    assert mx.engine.get().bulk_threads == 0


# ---------------------------------------------- 10: async back-pressure
def test_async_producer_is_not_blocked_in_push_and_can_await_room():
    prev = mx.engine.set_limits(max_pending_ops=4)
    x = mx.nd.zeros((2,))
    g = Gate("g10")
    try:
        g.push(writes=[x])
        g.wait_started()

        async def main():
            loop = asyncio.get_running_loop()
            t0 = time.perf_counter()
            outs = [x + i for i in range(10)]       # 10 pending > 4: over the bound
            pushed = time.perf_counter() - t0
            assert mx.engine.get().over_bound()
            loop.call_later(0.1, g.open)
            await asyncio.wait_for(mx.engine.room(), TIMEOUT)
            assert not mx.engine.get().over_bound()
            return pushed, outs
        pushed, outs = asyncio.run(main())
        assert pushed < 0.09, pushed       # the gate opens only after 0.1 s
        assert outs[9].asnumpy().tolist() == [9, 9]
    finally:
        g.open()
        mx.engine.set_limits(*prev)


def test_async_read_waits_for_room():
    prev = mx.engine.set_limits(max_pending_ops=2)
    x = mx.nd.zeros((2,))
    g = Gate("g10b")
    try:
        g.push(writes=[x])
        g.wait_started()
        ready = mx.nd.ones((2,))

        async def main():
            asyncio.get_running_loop().call_later(0.1, g.open)
            _ = [x + i for i in range(5)]
            t0 = time.perf_counter()
            v = await asyncio.wait_for(ready.read(), TIMEOUT)
            return v, time.perf_counter() - t0
        v, waited = asyncio.run(main())
        assert v.tolist() == [1, 1]
        assert waited >= 0.05          # held until the engine had room
    finally:
        g.open()
        mx.engine.set_limits(*prev)


# ------------------------------------------------ 5: pending-bytes bound
def test_pending_bytes_count_host_inputs_kept_alive():
    frame = np.ones((1 << 20,), np.float32)              # 4 MiB
    x = mx.nd.zeros((1,))
    with Gate("g5") as g:
        g.push(writes=[x])
        g.wait_started()
        for _ in range(3):
            mx.engine.push(lambda: None, reads=[mx.nd.array(frame), x], name="use")
        held = mx.engine.statistics().bytes_held
        assert held >= 3 * frame.nbytes, held
    mx.nd.waitall()
    assert mx.engine.statistics().bytes_held == 0


def test_pending_bytes_count_intermediates():
    t = mx.nd.zeros((1 << 20,))
    g1, g2 = Gate("g5a"), Gate("g5b")
    gx = mx.nd.zeros((1,))
    try:
        g1.push(writes=[t])
        g2.push(writes=[gx])
        g1.wait_started()
        g2.wait_started()
        t2 = t * 2                                        # pending intermediate
        mx.engine.push(lambda: None, reads=[t2, gx], name="use")
        del t2
        g1.open()
        deadline = time.monotonic() + TIMEOUT
        while mx.engine.statistics().pending_ops > 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        # t*2 finished; its 4 MiB output lives on only for the pending "use"
        assert mx.engine.statistics().bytes_held >= 4 << 20
    finally:
        g1.open()
        g2.open()
    mx.nd.waitall()
    assert mx.engine.statistics().bytes_held == 0


@pytest.mark.slow
def test_bytes_bound_holds_for_host_created_inputs():
    frame = np.random.rand(1 << 20).astype(np.float32)   # 4 MiB
    prev = mx.engine.set_limits(max_pending_bytes=16 << 20)
    mx.engine.reset_peaks()
    try:
        outs = [mx.nd.topk(mx.nd.array(frame), k=1) for _ in range(40)]
        peak = mx.engine.statistics().peak_bytes_held
    finally:
        mx.engine.set_limits(*prev)
    assert peak <= (16 << 20) + 2 * frame.nbytes + (1 << 20), peak
    assert float(outs[-1].asnumpy()[0]) == float(np.argmax(frame))
