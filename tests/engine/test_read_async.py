"""``await arr.read()``: a fresh copy, exact dtype/shape, the writes pushed
before it and no later ones, any loop, and cancellation that cancels only
the wait."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.ndarray._invoke import data_of

from .gates import TIMEOUT, Gate, clean_engine, wait_done  # noqa: F401

pytestmark = pytest.mark.timeout(60)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 2 * TIMEOUT))


def setter(arr, value):
    def body():
        data_of(arr)[...] = value
    return body


async def started(gate):
    """Wait for a gate to start without blocking the running loop."""
    await asyncio.get_running_loop().run_in_executor(None, gate.wait_started)


# ------------------------------------------------------------ values
def test_read_returns_a_fresh_copy_every_time():
    a = mx.nd.array([1.0, 2.0, 3.0])

    async def main():
        r1 = await a.read()
        r1[:] = -1
        r2 = await a.read()
        assert r2 is not r1
        r2[0] = 100
        return await a.read()
    np.testing.assert_array_equal(run(main()), np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(a.asnumpy(), np.array([1, 2, 3], np.float32))
    n1 = a.asnumpy()
    n1[:] = 0
    np.testing.assert_array_equal(a.asnumpy(), np.array([1, 2, 3], np.float32))


def test_read_of_large_array_is_a_copy():
    a = mx.nd.ones((1 << 18,)) * 2

    async def main():
        r = await a.read()
        r[:] = 0
        return await a.read()
    assert float(run(main()).min()) == 2.0


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (3, 0, 2), (1,), (2, 3, 4)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64",
                                   "uint8", "int8"])
def test_read_dtype_and_shape_exact(shape, dtype):
    src = (np.arange(int(np.prod(shape))) % 7).astype(dtype).reshape(shape)
    a = mx.nd.array(src, dtype=dtype)
    b = a + 0 if src.size else a
    for arr in (a, b):
        got = run(arr.read())
        assert isinstance(got, np.ndarray)
        assert got.shape == shape and got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, src)
        nb = arr.asnumpy()
        assert nb.shape == shape and nb.dtype == np.dtype(dtype)


def test_read_of_views():
    a = mx.nd.array(np.arange(12).reshape(3, 4))

    async def main():
        return await asyncio.gather(a[1:3].read(), a[1].read(), a.reshape((4, 3)).read(),
                                    a[:, 2].read())
    r1, r2, r3, r4 = run(main())
    full = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(r1, full[1:3])
    np.testing.assert_array_equal(r2, full[1])
    np.testing.assert_array_equal(r3, full.reshape(4, 3))
    np.testing.assert_array_equal(r4, full[:, 2])


def test_read_under_uvloop():
    uvloop = pytest.importorskip("uvloop")
    a = mx.nd.ones((4,))
    big = mx.nd.ones((1 << 18,))

    async def main():
        assert "uvloop" in type(asyncio.get_running_loop()).__module__
        b = a * 3
        c = big + 1
        g = Gate("w", body=setter(a, 5.0), mode="async")
        try:
            g.push(writes=[a])
            t = asyncio.ensure_future(a.read())
            await asyncio.sleep(0)
            assert not t.done()
        finally:
            g.open()
        return await asyncio.gather(b.read(), c[0:2].read(), t)
    loop = uvloop.new_event_loop()
    try:
        rb, rc, ra = loop.run_until_complete(asyncio.wait_for(main(), TIMEOUT))
    finally:
        loop.close()
    np.testing.assert_array_equal(rb, np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(rc, np.full(2, 2.0, np.float32))
    np.testing.assert_array_equal(ra, np.full(4, 5.0, np.float32))


def test_read_sees_exactly_the_writes_pushed_before_it():
    a = mx.nd.zeros((3,))

    async def main():
        g = Gate("w1", body=setter(a, 1.0))
        try:
            g.push(writes=[a])
            t = asyncio.ensure_future(a.read())
            await asyncio.sleep(0)          # the task runs: its read is pushed
            a[:] = 2                        # pushed after the read
            b = a
            b += 10
            await started(g)
            assert not t.done()
        finally:
            g.open()
        first = await t
        return first, await a.read()
    first, last = run(main())
    np.testing.assert_array_equal(first, np.ones(3, np.float32))
    np.testing.assert_array_equal(last, np.full(3, 12.0, np.float32))


def test_read_is_ordered_at_the_call():
    a = mx.nd.zeros((3,))

    async def main():
        pending = a.read()          # the call: must see a == 0
        a[:] = 5
        return await pending
    np.testing.assert_array_equal(run(main()), np.zeros(3, np.float32))


def test_reads_called_before_later_writes_behind_a_gate():
    a = mx.nd.zeros((3,))

    async def main():
        g = Gate("w1", body=setter(a, 1.0))
        try:
            g.push(writes=[a])
            first = [a.read() for _ in range(3)]     # not awaited yet
            a[:] = 5
            second = a.read()
            b = a
            b += 1
            await started(g)
        finally:
            g.open()
        return await asyncio.gather(*first), await second, await a.read()
    first, second, last = run(main())
    for r in first:
        np.testing.assert_array_equal(r, np.ones(3, np.float32))
    np.testing.assert_array_equal(second, np.full(3, 5.0, np.float32))
    np.testing.assert_array_equal(last, np.full(3, 6.0, np.float32))


def test_read_called_outside_a_loop_awaited_later():
    a = mx.nd.full((2,), 3.0)
    coro = a.read()                 # plain code: pushed now, awaited below
    a[:] = 4
    np.testing.assert_array_equal(asyncio.run(coro), np.full(2, 3.0, np.float32))


def test_read_in_async_kernel_on_engine_loop():
    a = mx.nd.full((3,), 4.0)
    b = mx.nd.zeros((3,))

    async def kernel():
        v = await a.read()
        data_of(b)[...] = v * 2
    mx.engine.push(kernel, reads=[], writes=[b], name="akern", executor="async")
    np.testing.assert_array_equal(b.asnumpy(), np.full(3, 8.0, np.float32))


def test_read_from_loop_in_another_thread_while_main_blocks():
    a = mx.nd.zeros((2,))
    g = Gate("w", body=setter(a, 3.0))
    out = {}

    def other():
        async def main():
            out["v"] = await a.read()
        asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    try:
        g.push(writes=[a])
        t = threading.Thread(target=other, daemon=True)
        t.start()
        g.wait_started()
    finally:
        g.open()
    np.testing.assert_array_equal(a.asnumpy(), np.full(2, 3.0, np.float32))
    t.join(TIMEOUT)
    assert not t.is_alive()
    np.testing.assert_array_equal(out["v"], np.full(2, 3.0, np.float32))


# ------------------------------------------------------------ cancellation
@pytest.mark.parametrize("mode", ["thread", "async"])
def test_cancelled_read_leaves_array_intact(mode):
    x = mx.nd.zeros((4,))

    async def main():
        g = Gate("w", body=setter(x, 6.0), mode=mode)
        try:
            g.push(writes=[x])
            y = x + 1
            t = asyncio.ensure_future(x.read())
            ty = asyncio.ensure_future(y.read())
            await asyncio.sleep(0)
            await started(g)
            t.cancel()
            ty.cancel()
            with pytest.raises(asyncio.CancelledError):
                await t
            with pytest.raises(asyncio.CancelledError):
                await ty
            assert not g.passed.is_set()
        finally:
            g.open()
        return await x.read(), await y.read(), y
    rx, ry, y = run(main())
    np.testing.assert_array_equal(rx, np.full(4, 6.0, np.float32))
    np.testing.assert_array_equal(ry, np.full(4, 7.0, np.float32))
    np.testing.assert_array_equal(x.asnumpy(), np.full(4, 6.0, np.float32))
    np.testing.assert_array_equal(y.asnumpy(), np.full(4, 7.0, np.float32))
    mx.nd.waitall()


def test_wait_for_timeout_cancels_only_the_wait():
    x = mx.nd.zeros((2,))

    async def main():
        g = Gate("w", body=setter(x, 1.5), mode="async")
        try:
            g.push(writes=[x])
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(x.read(), 0.01)     # the gate is closed
        finally:
            g.open()
        return await x.read()
    np.testing.assert_array_equal(run(main()), np.full(2, 1.5, np.float32))


def test_cancelling_many_readers_does_not_break_the_others():
    x = mx.nd.zeros((3,))

    async def main():
        g = Gate("w", body=setter(x, 9.0))
        try:
            g.push(writes=[x])
            tasks = [asyncio.ensure_future(x.read()) for _ in range(200)]
            await asyncio.sleep(0)
            await started(g)
            for t in tasks[::2]:
                t.cancel()
        finally:
            g.open()
        return await asyncio.gather(*tasks, return_exceptions=True)
    results = run(main())
    for i, r in enumerate(results):
        if i % 2 == 0:
            assert isinstance(r, asyncio.CancelledError)
        else:
            np.testing.assert_array_equal(r, np.full(3, 9.0, np.float32))
    np.testing.assert_array_equal(x.asnumpy(), np.full(3, 9.0, np.float32))


def test_loop_closed_while_read_pending_does_not_break_engine():
    x = mx.nd.zeros((3,))
    g = Gate("w", body=setter(x, 2.0))

    async def main():
        t = asyncio.ensure_future(x.read())  # left pending: asyncio.run cancels it
        t._log_destroy_pending = False
        await asyncio.sleep(0)
    try:
        g.push(writes=[x])
        g.wait_started()
        asyncio.run(main())
    finally:
        g.open()
    wait_done(g.opr)
    np.testing.assert_array_equal(x.asnumpy(), np.full(3, 2.0, np.float32))
    mx.nd.waitall()
    # every worker is still alive and running ops
    n = mx.engine.statistics().workers
    ys = [mx.nd.ones((1 << 18,)) * k for k in range(2 * n)]
    assert [float(y[0:1].asscalar()) for y in ys] == [float(k) for k in range(2 * n)]


def test_reader_loop_stopped_without_cancel_does_not_break_engine():
    """A loop that is stopped and closed with a read still armed (no
    cancellation) must not make the completing worker raise."""
    x = mx.nd.zeros((3,))
    g = Gate("w", body=setter(x, 4.0))
    loop = asyncio.new_event_loop()
    try:
        g.push(writes=[x])
        g.wait_started()
        loop.run_until_complete(_start_read(x))
        loop.close()
    finally:
        g.open()
    wait_done(g.opr)
    np.testing.assert_array_equal(x.asnumpy(), np.full(3, 4.0, np.float32))
    n = mx.engine.statistics().workers
    ys = [mx.nd.ones((1 << 18,)) + k for k in range(2 * n)]
    assert [float(y[0:1].asscalar()) for y in ys] == [1.0 + k for k in range(2 * n)]


async def _start_read(x):
    t = asyncio.ensure_future(x.read())
    t._log_destroy_pending = False          # left pending on purpose
    await asyncio.sleep(0)


def test_event_loops_that_read_are_not_kept_alive():
    # the per-loop inbox that resolves reads holds its loop weakly
    import gc
    import weakref
    from aiond.ndarray import ndarray as _ndmod
    refs = []
    x = mx.nd.ones((3,))
    for _ in range(5):
        loop = asyncio.new_event_loop()
        gate = threading.Event()
        mx.engine.push(lambda: gate.wait(10), (), (x,), name="gate")

        async def read():
            r = x.read()                # pending behind the gate: goes through the inbox
            gate.set()
            return await r
        np.testing.assert_array_equal(loop.run_until_complete(read()), np.ones(3))
        loop.close()
        refs.append(weakref.ref(loop))
        del loop
    gc.collect()
    assert all(r() is None for r in refs)
    assert not any(r() in _ndmod._inboxes for r in refs)


def test_inbox_puts_from_many_threads_resolve_every_future_once():
    # single puts and a batch's put_many racing the loop's drain
    from aiond.ndarray.ndarray import _Inbox

    class Done:
        failure = None

        def __init__(self, v):
            self.result = v

    async def main():
        loop = asyncio.get_running_loop()
        inbox = _Inbox(loop)
        futs = [[loop.create_future() for _ in range(100)] for _ in range(4)]

        def pusher(k):
            fs = futs[k]
            for i in range(0, 100, 10):
                if (i // 10) % 2:
                    inbox.put_many([(f, Done((k, i + j))) for j, f in enumerate(fs[i:i + 10])])
                else:
                    for j, f in enumerate(fs[i:i + 10]):
                        inbox.put(f, Done((k, i + j)))
        ts = [threading.Thread(target=pusher, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        got = await asyncio.wait_for(asyncio.gather(*[f for fs in futs for f in fs]), 30)
        for t in ts:
            t.join()
        inbox.put_many([])              # nothing to hand over: no wake-up, no error
        return got
    got = asyncio.run(main())
    assert got == [(k, i) for k in range(4) for i in range(100)]
