"""The pending bound, naive and bulk modes, statistics, and the deadlock guard."""
import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import aiond as mx
from aiond.base import DeadlockError, MXNetError
from aiond.ndarray._invoke import data_of

from .gates import TIMEOUT, Gate, clean_engine, wait_done, wait_for  # noqa: F401

pytestmark = pytest.mark.timeout(60)

HERE = os.path.basename(__file__)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MB = 1 << 20


def _line():
    return sys._getframe(1).f_lineno


def poll(cond, what, timeout=TIMEOUT):
    """Wait (bounded) for a condition another thread makes true."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        pause.wait(0.002)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def run_script(src, env=None, timeout=30):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(src)], cwd=REPO, env=e,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------ limits API
def test_set_limits_returns_previous_and_validates():
    prev = mx.engine.set_limits(max_pending_ops=123, max_pending_bytes=456789)
    try:
        s = mx.engine.statistics()
        assert (s.max_pending_ops, s.max_pending_bytes) == (123, 456789)
        assert mx.engine.set_limits() == (123, 456789)
        assert mx.engine.set_limits(max_pending_ops=7) == (123, 456789)
        assert mx.engine.statistics().max_pending_bytes == 456789
        with pytest.raises(ValueError):
            mx.engine.set_limits(max_pending_ops=0)
        with pytest.raises(ValueError):
            mx.engine.set_limits(max_pending_bytes=0)
    finally:
        mx.engine.set_limits(*prev)
    assert mx.engine.set_limits() == prev


# ------------------------------------------------------------ bounded
@pytest.mark.parametrize("nproducers", [1, 3])
def test_pending_ops_bound_holds_producer(nproducers):
    limit, n = 8, 200
    a = mx.nd.zeros((4,))
    done = [threading.Event() for _ in range(nproducers)]
    errors = []
    g = Gate("head", body=lambda: data_of(a).fill(0), mode="async")
    prev = mx.engine.set_limits(max_pending_ops=limit)
    try:
        g.push(writes=[a])
        mx.engine.reset_peaks()

        def produce(i):
            try:
                s = a
                for _ in range(n):
                    s += 1
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
            finally:
                done[i].set()
        ts = [threading.Thread(target=produce, args=(i,), daemon=True) for i in range(nproducers)]
        for t in ts:
            t.start()
        # the producers fill the bound and are then held at push
        poll(lambda: mx.engine.statistics().pending_ops > limit, "the bound to fill")
        g.wait_started()
        assert not any(d.is_set() for d in done), "a producer ran past the bound"
        s = mx.engine.statistics()
        assert s.pending_ops <= limit + nproducers
        assert s.peak_pending_ops <= limit + nproducers
    finally:
        g.open()
        try:
            for d in done:
                wait_for(d, "a producer to finish", 30)
        finally:
            mx.engine.set_limits(*prev)
    assert not errors, errors
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, float(n * nproducers), np.float32))
    s = mx.engine.statistics()
    assert s.peak_pending_ops <= limit + nproducers + 1, s
    assert s.pending_ops == 0


def test_pending_bytes_bound_holds_producer_and_memory_flat():
    limit = 32 * MB
    shape = (MB,)                              # 4 MB of float32
    a, b = mx.nd.ones(shape), mx.nd.full(shape, 2.0)
    mx.nd.waitall()
    g = Gate("head", mode="async")
    done = threading.Event()
    prev = mx.engine.set_limits(max_pending_bytes=limit)
    rss0 = rss_bytes()
    last = []
    try:
        g.push(writes=[a])
        mx.engine.reset_peaks()

        def produce():
            try:
                for _ in range(300):
                    c = a + b                  # never read
                last.append(c)
            finally:
                done.set()
        t = threading.Thread(target=produce, daemon=True)
        t.start()
        poll(lambda: mx.engine.statistics().bytes_held >= limit - 4 * MB, "the bound to fill")
        g.wait_started()
        assert not done.is_set(), "the producer ran past the byte bound"
        assert mx.engine.statistics().bytes_held <= limit + 4 * MB
    finally:
        g.open()
        try:
            wait_for(done, "the producer", 30)
        finally:
            mx.engine.set_limits(*prev)
    mx.nd.waitall()
    s = mx.engine.statistics()
    assert s.peak_bytes_held <= limit + 4 * MB, s
    assert s.bytes_held == 0
    grown = rss_bytes() - rss0
    assert grown < 200 * MB, "RSS grew by %d MB" % (grown // MB)
    np.testing.assert_array_equal(last[0][0:4].asnumpy(), np.full(4, 3.0, np.float32))


def test_unreading_producer_without_gate_keeps_memory_flat():
    limit = 32 * MB
    a, b = mx.nd.ones((MB,)), mx.nd.ones((MB,))
    mx.nd.waitall()
    prev = mx.engine.set_limits(max_pending_bytes=limit)
    try:
        rss0 = rss_bytes()
        mx.engine.reset_peaks()
        for _ in range(300):
            c = a + b
        peak = mx.engine.statistics().peak_bytes_held
        mx.nd.waitall()
    finally:
        mx.engine.set_limits(*prev)
    assert peak <= limit + 4 * MB
    assert rss_bytes() - rss0 < 200 * MB
    assert float(c[0:1].asscalar()) == 2.0


# ------------------------------------------------------------ naive
def test_naive_mode_raises_at_push_line():
    exc = ValueError("naive boom")

    def fail():
        raise exc
    a = mx.nd.zeros((3,))
    with mx.engine.naive():
        assert mx.engine.is_naive() and mx.engine.statistics().naive
        line = _line() + 2
        with pytest.raises(MXNetError) as ei:
            mx.engine.push(fail, writes=[a], name="naivefail")
        b = mx.nd.ones((3,)) * 4
        o = mx.engine.push(lambda: 5, reads=[b], name="quick")
        assert o.done and o.result == 5         # ran at push
    assert not mx.engine.is_naive()
    msg = str(ei.value)
    assert "naivefail" in msg and "%s:%d" % (HERE, line) in msg, msg
    assert ei.value.__cause__ is exc
    # the traceback goes through this test's push line
    assert any(e.lineno + 1 == line for e in ei.traceback if e.path.name == HERE)
    np.testing.assert_array_equal(b.asnumpy(), np.full(3, 4.0, np.float32))
    mx.nd.waitall()      # already reported at push


def test_naive_mode_waits_for_earlier_async_work():
    a = mx.nd.ones((1 << 18,))
    for _ in range(5):
        a = a + 1
    with mx.engine.naive():
        b = a * 2
        o = mx.engine.push(lambda: float(data_of(b)[0]), reads=[b], name="peek")
        assert o.done and o.result == 12.0


def test_env_naive_runs_script():
    r = run_script("""
        import numpy as np, aiond as mx
        from aiond.base import MXNetError
        assert mx.engine.is_naive() and mx.engine.statistics().naive
        a = mx.nd.ones((2, 3)); b = a; a += 1; b *= 3
        c = a.copyto(mx.cpu()); c *= 3
        big = mx.nd.ones((1 << 18,)) + 1
        assert (a.asnumpy() == 6).all() and (c.asnumpy() == 18).all()
        assert float(big.sum().asscalar()) == 2.0 * (1 << 18)
        def fail():
            raise ValueError("x")
        import sys
        line = sys._getframe().f_lineno + 2
        try:
            mx.engine.push(fail, writes=[a], name="envfail")
        except MXNetError as e:
            where = "<string>:%d" % line
            assert isinstance(e.__cause__, ValueError) and where in str(e), str(e)
        else:
            raise SystemExit("no error at push")
        mx.nd.waitall()
        print("OK")
    """, env={"AIOND_ENGINE": "naive"})
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stdout + r.stderr


def test_naive_mode_deadlock_guard():
    r = run_script("""
        import aiond as mx
        from aiond.base import MXNetError, DeadlockError
        x = mx.nd.zeros((3,))
        with mx.engine.naive():
            try:
                mx.engine.push(lambda: x.asnumpy(), writes=[x], name="selfread")
            except MXNetError as e:
                assert isinstance(e.__cause__, DeadlockError), repr(e.__cause__)
                print("OK")
    """, timeout=5)
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stdout + r.stderr


# ------------------------------------------------------------ bulk
def test_bulk_gives_correct_results():
    prev = mx.engine.set_bulk_size(0)
    mx.engine.set_bulk_size(prev)
    with mx.engine.bulk(4):
        assert mx.engine.set_bulk_size(4) == 4
        x = mx.nd.zeros((5,))
        big = mx.nd.zeros((1 << 18,))
        for i in range(23):
            x = x + 1
            big += 1
            if i == 10:
                np.testing.assert_array_equal(x.asnumpy(), np.full(5, 11.0, np.float32))
        y = x * 2
        oprs = [mx.engine.push(lambda i=i: i, reads=[y], name="b%d" % i) for i in range(3)]
        z = asyncio.run(asyncio.wait_for(y.read(), TIMEOUT))
        np.testing.assert_array_equal(z, np.full(5, 46.0, np.float32))
    assert mx.engine.set_bulk_size(prev) == prev
    for o in oprs:
        wait_done(o)
    assert [o.result for o in oprs] == [0, 1, 2]
    assert float(big[0:1].asscalar()) == 23.0
    np.testing.assert_array_equal(y.asnumpy(), np.full(5, 46.0, np.float32))


def test_bulk_partial_batch_is_flushed_for_async_read():
    with mx.engine.bulk(64):
        a = mx.nd.ones((1 << 18,)) * 3       # one op: a batch far from full

        async def main():
            return await a[0:2].read()
        r = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    np.testing.assert_array_equal(r, np.full(2, 3.0, np.float32))


def test_bulk_size_validation():
    with pytest.raises(ValueError):
        mx.engine.set_bulk_size(-1)


# ------------------------------------------------------------ statistics
def test_statistics_are_sane():
    mx.nd.waitall()
    s0 = mx.engine.statistics()
    assert s0.pending_ops == 0 and s0.bytes_held == 0
    assert s0.workers >= 1 and 0 <= s0.workers_busy <= s0.workers
    assert s0.peak_pending_ops >= 0 and s0.peak_bytes_held >= 0
    assert s0.max_pending_ops >= 1 and s0.max_pending_bytes >= 1
    assert s0.naive is False
    a = mx.nd.zeros((4,))
    g = Gate("g")
    try:
        g.push(writes=[a])
        g.wait_started()
        b = a + 1                     # small but not ready: counted, not inline
        big = mx.nd.zeros((1 << 16,))
        mx.engine.reset_peaks()
        s = mx.engine.statistics()
        assert s.pending_ops >= 2                  # the gate and b
        assert s.bytes_held >= 16                  # b's output
        assert s.workers_busy >= 1                 # the gate's worker
        assert s.peak_pending_ops >= s.pending_ops
        assert s.ops_pushed >= s0.ops_pushed + 2
    finally:
        g.open()
    np.testing.assert_array_equal(b.asnumpy(), np.ones(4, np.float32))
    big.wait_to_read()
    mx.nd.waitall()
    s1 = mx.engine.statistics()
    assert s1.pending_ops == 0 and s1.bytes_held == 0
    assert s1.ops_inline > s0.ops_inline
    c = mx.nd.ones((3,)) + 1                # small and ready: inline
    assert mx.engine.statistics().ops_inline > s1.ops_inline
    del c


def test_pool_reuses_freed_buffers():
    x = mx.nd.ones((MB,)) + 1
    x.wait_to_read()
    del x
    before = mx.engine.statistics()
    y = mx.nd.ones((MB,)) + 2
    y.wait_to_read()
    after = mx.engine.statistics()
    assert after.pool_hits > before.pool_hits
    assert float(y[0:1].asscalar()) == 3.0


# ------------------------------------------------------------ deadlock guard
@pytest.mark.parametrize("call", ["asnumpy", "wait_to_read", "waitall"])
def test_blocking_inside_kernel_raises_deadlock_error(call):
    x = mx.nd.zeros((3,))

    def kernel():
        if call == "waitall":
            mx.nd.waitall()
        else:
            getattr(x, call)()      # x is written by this very op: it can never be read
    opr = mx.engine.push(kernel, writes=[x], name="blocker")
    wait_done(opr)
    assert opr.failure is not None and isinstance(opr.failure.exc, DeadlockError)
    with pytest.raises(MXNetError) as ei:
        x.asnumpy()
    assert isinstance(ei.value.__cause__, DeadlockError)
    assert "blocker" in str(ei.value)
    # the engine is fine
    np.testing.assert_array_equal((mx.nd.ones((3,)) * 2).asnumpy(), np.full(3, 2.0, np.float32))


def test_blocking_in_async_kernel_on_engine_loop_raises():
    x = mx.nd.zeros((3,))
    y = mx.nd.zeros((3,))

    async def kernel():
        x.asnumpy()
    g = Gate("hold-x", mode="async")
    try:
        g.push(writes=[x])
        opr = mx.engine.push(kernel, writes=[y], name="aloop", executor="async")
        wait_done(opr)
    finally:
        g.open()
    assert isinstance(opr.failure.exc, DeadlockError)
    with pytest.raises(MXNetError) as ei:
        y.asnumpy()
    assert isinstance(ei.value.__cause__, DeadlockError)


def test_stolen_kernel_still_guarded():
    """A kernel run by a blocked user thread (work stealing) is guarded too."""
    n = mx.engine.statistics().workers
    gates = [Gate("busy%d" % i) for i in range(n)]
    x = mx.nd.zeros((3,))
    try:
        for g in gates:
            g.push(writes=[mx.nd.zeros((1,))])
        for g in gates:
            g.wait_started()                   # every worker is held
        mx.engine.push(lambda: x.wait_to_read(), writes=[x], name="stolen")
        with pytest.raises(MXNetError) as ei:
            x.wait_to_read()                   # runs "stolen" on this thread
        assert isinstance(ei.value.__cause__, DeadlockError)
    finally:
        for g in gates:
            g.open()


def test_blocking_calls_in_user_coroutine_work():
    a = mx.nd.ones((4,)) * 5
    big = mx.nd.ones((1 << 18,)) + 1

    async def main():
        v = a.asnumpy()
        big.wait_to_read()
        mx.nd.waitall()
        return v, await a.read(), float(big.sum().asscalar())
    v, r, s = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    np.testing.assert_array_equal(v, r)
    assert s == 2.0 * (1 << 18)


@pytest.mark.timeout(60)
def test_deadlock_guard_does_not_depend_on_readiness():
    """asnumpy() inside a kernel raises even when the array it reads is
    small and already computed (it would otherwise depend on timing)."""
    ready = mx.nd.ones((4,)) * 2
    ready.wait_to_read()
    out = mx.nd.zeros((1,))
    opr = mx.engine.push(lambda: ready.asnumpy(), reads=[ready], writes=[out])
    with pytest.raises(mx.base.MXNetError) as info:
        out.asnumpy()
    assert isinstance(info.value.__cause__, mx.base.DeadlockError)
    assert "asnumpy()" in str(info.value.__cause__)
    assert opr.done


@pytest.mark.timeout(60)
def test_forked_child_can_compute():
    """After os.fork() the child runs ops on fresh engine threads (MXNet
    stops and restarts its engine around fork)."""
    import os
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    big = mx.nd.ones((1 << 19,)) * 3          # engine threads are running now
    big.wait_to_read()
    pid = os.fork()
    if pid == 0:                               # child: must not hang
        try:
            y = (big + 1).sum().asscalar() + (mx.nd.ones((4,)) * 2).asnumpy().sum()
            os._exit(0 if y == 4 * (1 << 19) + 8 else 3)
        except BaseException:
            os._exit(4)
    import signal
    import time
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:      # a hung child must not outlive the test
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung at its first engine op")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
