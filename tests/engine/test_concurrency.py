"""Many threads and event loops pushing and reading at once: nothing lost,
nothing reordered, nothing hung."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx

from .gates import TIMEOUT, Gate, Recorder, clean_engine  # noqa: F401

pytestmark = pytest.mark.timeout(60)

NTHREADS = 16
NITER = 200


def run_threads(n, target):
    """Run ``target(i)`` on ``n`` threads started together; re-raise the
    first error; fail (rather than hang) if a thread does not finish."""
    barrier = threading.Barrier(n)
    errors = []
    results = [None] * n

    def run(i):
        try:
            barrier.wait(TIMEOUT)
            results[i] = target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(45)
        assert not t.is_alive(), "a pushing thread hung"
    if errors:
        raise errors[0]
    return results


def test_threads_inplace_increments_lose_nothing():
    shared = mx.nd.zeros((3,))
    mine = [mx.nd.zeros((2,)) for _ in range(NTHREADS)]

    def work(i):
        acc = mine[i]
        s = shared
        for _ in range(NITER):
            acc += 1
            s += 1
        return acc.asnumpy()
    results = run_threads(NTHREADS, work)
    for r in results:
        np.testing.assert_array_equal(r, np.full(2, NITER, np.float32))
    np.testing.assert_array_equal(shared.asnumpy(), np.full(3, NTHREADS * NITER, np.float32))
    assert mx.engine.statistics().pending_ops == 0


def test_threads_writes_keep_per_thread_push_order():
    """Each thread's writes to one shared var run in that thread's push order,
    and none is lost or duplicated."""
    shared = mx.nd.zeros((1,))
    rec = Recorder()

    def work(i):
        for k in range(NITER):
            mx.engine.push(lambda i=i, k=k: rec((i, k)), writes=[shared], name="w")
        shared.wait_to_read()
    run_threads(NTHREADS, work)
    log = rec.snapshot()
    assert len(log) == NTHREADS * NITER
    for i in range(NTHREADS):
        assert [k for (t, k) in log if t == i] == list(range(NITER))


def test_readers_see_monotonic_values_while_writers_increment():
    shared = mx.nd.zeros((4,))
    nwriters, nreaders = 8, 4

    def work(i):
        if i < nwriters:
            s = shared
            for _ in range(NITER):
                s += 1
            return None
        seen = []
        for _ in range(50):
            v = shared.asnumpy()
            assert (v == v[0]).all(), "a read saw a half-applied write: %s" % v
            seen.append(float(v[0]))
        return seen
    results = run_threads(nwriters + nreaders, work)
    for seen in results[nwriters:]:
        assert seen == sorted(seen), "a later read saw fewer writes: %s" % seen
        assert all(0 <= x <= nwriters * NITER for x in seen)
    np.testing.assert_array_equal(shared.asnumpy(), np.full(4, nwriters * NITER, np.float32))


def test_several_event_loops_in_threads():
    big = mx.nd.ones((1 << 18,))
    shared = mx.nd.zeros((2,))

    def work(i):
        async def one(j):
            x = mx.nd.full((5,), float(i))
            for _ in range(20):
                x = x + 1
            y = big * float(j)       # a large op on a worker
            s = shared
            s += 1
            vx, vy = await asyncio.gather(x.read(), y[0:3].read())
            return vx, vy

        async def main():
            return await asyncio.wait_for(asyncio.gather(*(one(j) for j in range(10))), TIMEOUT)
        return asyncio.run(main())
    results = run_threads(4, work)
    for i, res in enumerate(results):
        for j, (vx, vy) in enumerate(res):
            np.testing.assert_array_equal(vx, np.full(5, i + 20.0, np.float32))
            np.testing.assert_array_equal(vy, np.full(3, float(j), np.float32))
    np.testing.assert_array_equal(shared.asnumpy(), np.full(2, 40.0, np.float32))


@pytest.mark.parametrize("mode", ["thread", "async"])
def test_many_coroutines_await_the_same_array(mode):
    a = mx.nd.zeros((3,))

    async def main():
        g = Gate("w", mode=mode, body=lambda: None)
        try:
            g.push(writes=[a])
            a[:] = 7
            tasks = [asyncio.ensure_future(a.read()) for _ in range(200)]
            await asyncio.sleep(0)          # let every task push its read
            await asyncio.get_running_loop().run_in_executor(None, g.wait_started)
            assert not any(t.done() for t in tasks)
        finally:
            g.open()
        return await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT)
    results = asyncio.run(main())
    assert len(results) == 200
    assert len({id(r) for r in results}) == 200      # each its own copy
    for r in results:
        np.testing.assert_array_equal(r, np.full(3, 7.0, np.float32))


def test_mixed_small_and_large_ops_in_one_chain():
    n = 300000
    x = mx.nd.zeros((n,))
    small = mx.nd.zeros((4,))
    expect_x = np.zeros(n, np.float32)
    expect_small = np.zeros(4, np.float32)
    for i in range(50):
        if i % 2 == 0:
            x = x + 1                        # large: split across workers
            expect_x = expect_x + 1
        else:
            small = small + x[0:4]           # small: inline, reads a view of x
            expect_small = expect_small + expect_x[0:4]
            v = x[4:8]
            v += small                       # small in-place write into x
            expect_x[4:8] += expect_small
    got = x.asnumpy()
    np.testing.assert_array_equal(got, expect_x)
    np.testing.assert_array_equal(small.asnumpy(), expect_small)
    assert float((x * 1).sum().asscalar()) == pytest.approx(float(expect_x.sum()), rel=1e-6)


def test_large_chains_from_many_threads():
    n = 1 << 18

    def work(i):
        x = mx.nd.full((n,), float(i))
        for _ in range(10):
            x = x + 1
            x = x * 1
        return x[n - 3:n].asnumpy()
    results = run_threads(8, work)
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, np.full(3, i + 10.0, np.float32))
