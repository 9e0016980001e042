"""Ready ops a plain thread pushes run on that thread (``push(inline=CALLER)``):
the var rules, errors and BLAS width must hold however many threads do it."""
import asyncio
import os
import threading
import time

import numpy as np
import pytest

import aiond as mx
from aiond.engine import blas
from aiond.ops.registry import get as get_op


def _chain(x0, w, steps):
    x = x0
    for _ in range(steps):
        x = mx.nd.tanh(mx.nd.dot(x, w))
    return x


def _np_chain(x0, w, steps):
    x = x0
    for _ in range(steps):
        x = np.tanh(x @ w)
    return x


def test_many_threads_and_coroutines_push_serial_chains_at_once():
    rng = np.random.RandomState(0)
    w = (rng.rand(96, 96).astype(np.float32) - 0.5) / 8
    xs = [rng.rand(64, 96).astype(np.float32) for _ in range(12)]
    W = mx.nd.array(w)
    mx.nd.waitall()
    s0 = mx.engine.statistics()
    results = {}
    errors = []
    start = threading.Barrier(9)

    def thread_main(i):
        try:
            start.wait()
            results[i] = _chain(mx.nd.array(xs[i]), W, 20).asnumpy()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def loop_main():
        async def one(i):
            return i, await _chain(mx.nd.array(xs[i]), W, 20).read()

        async def main():
            start.wait()
            return await asyncio.gather(*(one(i) for i in range(8, 12)))
        try:
            results.update(dict(asyncio.run(main())))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=thread_main, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=loop_main))
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    for i in range(12):
        np.testing.assert_allclose(results[i], _np_chain(xs[i], w, 20), rtol=1e-4, atol=1e-5)
    s1 = mx.engine.statistics()
    assert s1.ops_caller > s0.ops_caller          # the plain threads ran theirs
    assert s1.ops_pushed > s0.ops_pushed          # the coroutines' went to workers
    assert s1.pending_ops == 0
    if blas.state.dynamic:
        _wait_workers_idle()
        assert blas.state.running == 0
        assert blas.state.cur == blas.state.rest                 # back at rest


def test_writes_after_a_caller_run_read_keep_push_order():
    """y reads x before the in-place update pushed after it: y sees old x,
    whether either op ran on this thread or on a worker."""
    rng = np.random.RandomState(1)
    a = rng.rand(128, 128).astype(np.float32)
    x = mx.nd.array(a)
    y = mx.nd.dot(x, x)
    x += 1
    z = mx.nd.dot(x, x)
    np.testing.assert_allclose(y.asnumpy(), a @ a, rtol=1e-4)
    np.testing.assert_allclose(z.asnumpy(), (a + 1) @ (a + 1), rtol=1e-4)
    # the same with the first read held back by a gated op on another var
    # that it also reads: everything after it queues in order
    ev = threading.Event()
    g = mx.nd.zeros((128, 128))
    mx.nd.waitall()
    mx.engine._engine.push(lambda: ev.wait(10), (), (g._st.var,), "gate")
    y2 = mx.nd.dot(x, x) + g          # the add waits for the gate
    x += 1                            # ready: x's only pending reader is the dot
    z2 = mx.nd.dot(x, x)
    ev.set()
    np.testing.assert_allclose(y2.asnumpy(), (a + 1) @ (a + 1), rtol=1e-4)
    np.testing.assert_allclose(z2.asnumpy(), (a + 2) @ (a + 2), rtol=1e-4)


def test_kernels_that_wait_for_other_ops_never_run_on_the_pushing_thread():
    assert get_op("_contrib_SyncBatchNorm").caller is False
    assert get_op("_backward__contrib_SyncBatchNorm").caller is False
    assert get_op("dot").caller


def _wait_workers_idle():
    # a worker counts as busy (and keeps BLAS narrow) until it has returned
    # from its item, which can be just after the result it made was read
    deadline = time.monotonic() + 10
    while (mx.engine.statistics().workers_busy or blas.state.running) \
            and time.monotonic() < deadline:
        time.sleep(0.001)


def _blas_threads():
    from threadpoolctl import threadpool_info
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def _started_dynamic_blas():
    a = mx.nd.array(np.random.rand(200, 200))
    mx.nd.waitall()

    async def on_loop():            # starts the workers, which pin BLAS
        await mx.nd.dot(a, a).read()
    asyncio.run(on_loop())
    if not blas.state.dynamic or blas.state.rest < 2:
        pytest.skip("BLAS is not OpenBLAS on pthreads with 2+ threads: its width never changes")
    _wait_workers_idle()
    return a


def test_blas_rests_at_its_own_width_and_is_one_thread_while_a_worker_runs():
    """The user's own numpy matmuls are not slowed by the engine once it is
    idle; while a worker runs a kernel, every BLAS call is one thread."""
    _started_dynamic_blas()
    rest = blas.state.rest
    # every OpenBLAS loaded (numpy's, and scipy's when loaded) follows
    assert _blas_threads() == {rest}
    ev, inside = threading.Event(), threading.Event()
    seen = []

    def gated():
        seen.append(_blas_threads())
        inside.set()
        ev.wait(10)
    g = mx.nd.zeros((2,))
    mx.engine._engine.push(gated, (), (g._st.var,), "gate")
    assert inside.wait(10)
    try:
        assert seen == [{1}]
        assert _blas_threads() == {1}      # for this thread's numpy too, meanwhile
        assert blas.state.running == 1
    finally:
        ev.set()
    g.wait_to_read()
    _wait_workers_idle()
    assert _blas_threads() == {rest}


def _blas_width():
    """The BLAS thread count a call made now would use."""
    if blas.state._get is not None:
        return blas.state._get()
    return min(_blas_threads())


@pytest.fixture
def gemm_widths(monkeypatch):
    """Records (thread name, BLAS width) at every matmul a kernel makes: the
    kernels call ``xp.matmul`` with numpy as ``xp``."""
    seen = []
    orig = np.matmul

    def matmul(*args, **kw):
        seen.append((threading.current_thread().name, _blas_width()))
        return orig(*args, **kw)
    monkeypatch.setattr(np, "matmul", matmul)
    return seen


def _idle_workers():
    cpu = mx.engine.get().cpu
    deadline = time.monotonic() + 10
    while (cpu.busy or not cpu._q.empty() or blas.state.running) \
            and time.monotonic() < deadline:
        time.sleep(0.001)


def test_a_gemm_runs_with_one_blas_thread_wherever_it_is_pushed_from(gemm_widths):
    """The threading policy (blas.py): a GEMM never uses BLAS's own helper
    threads, whoever pushes it: a plain thread that runs the ready op
    itself (its rows shared with an idle worker), an event loop (a worker
    runs it), an op that waits behind another (the worker that frees it).
    At rest BLAS is back at the width the user had."""
    rng = np.random.RandomState(3)
    a_np = rng.rand(512, 512).astype(np.float32)      # big enough to split (MATMUL_SPLIT_MACS)
    want = a_np @ a_np
    a = mx.nd.array(a_np)
    mx.nd.waitall()
    mx.engine.get().cpu._start()
    _idle_workers()
    rest = blas.state.rest
    main = threading.current_thread().name

    # a plain thread: the ready dot runs here, by ranges of rows
    s0 = mx.engine.statistics()
    np.testing.assert_allclose(mx.nd.dot(a, a).asnumpy(), want, rtol=1e-4)
    assert mx.engine.statistics().ops_caller == s0.ops_caller + 1
    assert gemm_widths and {w for _, w in gemm_widths} == {1}
    assert main in {t for t, _ in gemm_widths}
    if mx.engine.statistics().workers > 1:
        assert len(gemm_widths) >= 2            # split: a range per worker
    _idle_workers()
    assert _blas_width() == rest

    # an event loop: a worker runs it
    gemm_widths.clear()

    async def on_loop():
        return await mx.nd.dot(a, a).read()
    np.testing.assert_allclose(asyncio.run(on_loop()), want, rtol=1e-4)
    assert gemm_widths and {w for _, w in gemm_widths} == {1}
    assert main not in {t for t, _ in gemm_widths}

    # an op that waits behind a gated one: the worker that frees it runs it
    gemm_widths.clear()
    ev = threading.Event()
    g = mx.nd.zeros((512, 512))
    mx.nd.waitall()
    mx.engine._engine.push(lambda: ev.wait(10), (), (g._st.var,), "gate")
    y = mx.nd.dot(a + g, a)
    assert not gemm_widths                      # queued, not run
    ev.set()
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4)
    assert gemm_widths and {w for _, w in gemm_widths} == {1}
    _idle_workers()
    assert _blas_width() == rest


def test_a_hybridized_dense_layer_runs_its_gemms_with_one_blas_thread(gemm_widths):
    """A plan (a hybridized block's graph) run by a plain thread: its steps'
    GEMMs, split or not, are one BLAS thread each; forward and backward."""
    from aiond import autograd, gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(256, activation="relu", in_units=784), gluon.nn.Dense(10, in_units=256))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x_np = np.random.RandomState(4).rand(64, 784).astype(np.float32)
    x = mx.nd.array(x_np)
    with autograd.record():
        y = net(x)
    y.backward()
    mx.nd.waitall()
    w1, b1 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    w2, b2 = net[1].weight.data().asnumpy(), net[1].bias.data().asnumpy()
    want = np.maximum(x_np @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert gemm_widths and {w for _, w in gemm_widths} == {1}
    _idle_workers()
    assert _blas_width() == blas.state.rest


def test_the_users_threadpool_limits_still_work_once_the_workers_started():
    """threadpoolctl lets only the first Python thread that limits OpenBLAS
    through it do so again: the workers never use it, so the user's own
    limits keep working, and the engine rests at the user's width."""
    from threadpoolctl import threadpool_limits
    a = _started_dynamic_blas()
    rest = blas.state.rest
    want = a.asnumpy() @ a.asnumpy()

    async def on_loop():
        return await mx.nd.dot(a, a).read()
    with threadpool_limits(1, user_api="blas"):
        assert _blas_threads() == {1}
        np.testing.assert_allclose(asyncio.run(on_loop()), want, rtol=1e-4)   # a worker
        np.testing.assert_allclose(mx.nd.dot(a, a).asnumpy(), want, rtol=1e-4)  # a caller op
        _wait_workers_idle()
        assert _blas_threads() == {1}       # not widened back behind the user's back
        assert blas.state.rest == 1
    assert _blas_threads() == {rest}        # the user's limit undone by the user
    asyncio.run(on_loop())
    _wait_workers_idle()
    assert blas.state.rest == rest and _blas_threads() == {rest}


def test_a_ready_convolution_runs_on_the_pushing_thread_split_by_rows(monkeypatch):
    """Convolutions share their rows with idle workers; the result is the
    unsplit kernel's."""
    from aiond.engine import cpu as cpu_mod
    from aiond.engine.scheduler import CALLER
    assert get_op("Convolution").caller is CALLER
    rng = np.random.RandomState(2)
    x = mx.nd.array(rng.rand(8, 16, 32, 32).astype(np.float32))
    k = mx.nd.array(rng.rand(32, 16, 3, 3).astype(np.float32))
    with mx.engine.naive():
        want = mx.nd.Convolution(x, k, kernel=(3, 3), num_filter=32, no_bias=True).asnumpy()
    mx.nd.waitall()
    ran_on = []
    orig = cpu_mod.CPUExecutor._run_chunk

    def run_chunk(self, chunk):
        ran_on.append(threading.current_thread().name)
        return orig(self, chunk)
    monkeypatch.setattr(cpu_mod.CPUExecutor, "_run_chunk", run_chunk)
    cpu = mx.engine.get().cpu
    deadline = time.monotonic() + 10    # ranges are shared only with idle workers
    while (cpu.busy or not cpu._q.empty()) and time.monotonic() < deadline:
        time.sleep(0.001)
    s0 = mx.engine.statistics()
    got = mx.nd.Convolution(x, k, kernel=(3, 3), num_filter=32, no_bias=True)
    s1 = mx.engine.statistics()
    assert (s1.ops_caller, s1.ops_pushed) == (s0.ops_caller + 1, s0.ops_pushed)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    # the pushing thread ran ranges; with two or more workers they took
    # some or the pusher took them back (no hang either way)
    if mx.engine.statistics().workers > 1:
        assert len(ran_on) >= 2 and threading.current_thread().name in ran_on


def test_ctrl_c_in_a_kernel_the_pushing_thread_runs_stops_the_script():
    """KeyboardInterrupt raised inside a caller-run kernel reaches the user
    (it is not turned into a poisoned array surfacing later), the op's
    outputs are poisoned for later readers, and the engine goes on."""
    from aiond.engine.scheduler import CALLER
    eng = mx.engine._engine
    out = mx.nd.zeros((4,))
    mx.nd.waitall()

    def interrupted():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        eng.push(interrupted, (), (out._st.var,), "interrupted", 0, CALLER)
    with pytest.raises(mx.MXNetError, match="interrupted"):
        (out + 1).asnumpy()
    mx.nd.waitall()                  # reported once, at the interrupt: not again here
    np.testing.assert_array_equal((mx.nd.ones((4,)) * 2).asnumpy(), 2)


def test_ctrl_c_inside_a_segment_the_pushing_thread_runs():
    """The same inside a bulk segment: members before the interrupt are
    written, the interrupted one and those after it are poisoned."""
    eng = mx.engine._engine
    a, b, c = mx.nd.zeros((4,)), mx.nd.zeros((4,)), mx.nd.zeros((4,))
    mx.nd.waitall()

    def interrupted():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        with mx.engine.segment():
            a[:] = 1
            eng.push(interrupted, (), (b._st.var,), "interrupted", 0, True)
            c[:] = 3
    np.testing.assert_array_equal(a.asnumpy(), 1)
    for x in (b, c):
        with pytest.raises(mx.MXNetError, match="interrupted"):
            x.asnumpy()
    mx.nd.waitall()                  # told once, by the interrupt itself
    np.testing.assert_array_equal((mx.nd.ones((4,)) * 2).asnumpy(), 2)


def test_waitall_is_woken_when_nothing_is_pending_not_at_every_op(monkeypatch):
    """A thread in waitall() used to wake (and take the GIL) at every op's
    end; it now wakes when the last pending op ends (or, rarely, on its
    timeout to look for work)."""
    eng = mx.engine._engine
    a = mx.nd.zeros((100000,))       # kernels that let go of the GIL, as real ones do
    mx.nd.waitall()
    ev = threading.Event()
    waits = []
    orig = eng.cv.wait

    def counting_wait(timeout=None):
        waits.append(timeout)
        return orig(timeout)
    monkeypatch.setattr(eng.cv, "wait", counting_wait)

    started = threading.Event()

    async def push_chain():          # from a loop: every op goes to the workers
        eng.push(lambda: (started.set(), ev.wait(10)), (), (a._st.var,), "gate")
        for _ in range(200):
            mx.nd.sin(a, out=a)
            a.__iadd__(1)
    asyncio.run(push_chain())
    # the gate must hold a worker, not the waiter (which runs queued ops itself)
    assert started.wait(10)
    done = threading.Event()
    t = threading.Thread(target=lambda: (mx.nd.waitall(), done.set()))
    t.start()
    deadline = time.monotonic() + 10
    while not waits and time.monotonic() < deadline:
        time.sleep(0.001)            # until the waiter is asleep on the condition
    ev.set()
    t.join(30)
    assert done.is_set()
    want = np.zeros(100000, np.float32)
    for _ in range(200):
        want = np.sin(want) + np.float32(1)
    np.testing.assert_allclose(a.asnumpy(), want, rtol=1e-6)
    assert len(waits) < 40, len(waits)       # 400 ops ended meanwhile


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_with_blas_at_rest_and_a_free_lock():
    """A worker may be inside a kernel (BLAS narrow, the lock maybe held) at
    the moment another thread forks: the child has no such thread."""
    _started_dynamic_blas()
    held, release = threading.Event(), threading.Event()

    def engine_thread():            # as a worker mid-kernel, holding the lock
        blas.state.enter()
        with blas.state.lock:
            held.set()
            release.wait(10)
    t = threading.Thread(target=engine_thread)
    t.start()
    assert held.wait(10)
    try:
        pid = os.fork()
        if pid == 0:                # the child: report through the exit code
            code = 0
            try:
                ok = (blas.state.lock.acquire(timeout=5) and blas.state.running == 0
                      and _blas_threads() == {blas.state.rest})
                blas.state.lock.release()
                a = np.random.rand(64, 64).astype(np.float32)
                x = mx.nd.array(a)
                ok = ok and np.allclose(mx.nd.dot(x, x).asnumpy(), a @ a, rtol=1e-4)
                code = 0 if ok else 3
            except BaseException:  # noqa: BLE001 - any failure is a non-zero exit
                code = 4
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        t.join(10)
        blas.state.leave()
    _wait_workers_idle()
    assert blas.state.running == 0 and _blas_threads() == {blas.state.rest}


def test_a_split_gemm_gives_the_same_bits_whoever_runs_its_ranges():
    """A GEMM by row ranges sums in another order than the whole one, so
    the ranges are fixed by the shape: with idle workers, with every worker
    held in a kernel, from an event loop and in the naive engine alike."""
    rng = np.random.RandomState(5)
    a_np = rng.rand(256, 1024).astype(np.float32)
    b_np = rng.rand(1024, 512).astype(np.float32)
    a, b = mx.nd.array(a_np), mx.nd.array(b_np)
    mx.nd.waitall()
    cpu = mx.engine.get().cpu
    cpu._start()
    _idle_workers()
    idle = mx.nd.dot(a, b).asnumpy()
    np.testing.assert_allclose(idle, a_np @ b_np, rtol=1e-4)

    async def on_loop():
        return await mx.nd.dot(a, b).read()
    from_loop = asyncio.run(on_loop())
    with mx.engine.naive():
        naive = mx.nd.dot(a, b).asnumpy()
    ev = threading.Event()
    held = []
    gates = [mx.nd.zeros((2,)) for _ in range(cpu.nworkers)]
    mx.nd.waitall()
    started = threading.Semaphore(0)
    for g in gates:
        mx.engine._engine.push(lambda: (started.release(), ev.wait(10)), (), (g._st.var,), "gate")
    for _ in gates:
        held.append(started.acquire(timeout=10))
    try:
        assert all(held) and not cpu.idle()
        busy = mx.nd.dot(a, b).asnumpy()        # this thread runs every range
    finally:
        ev.set()
    mx.nd.waitall()
    np.testing.assert_array_equal(busy, idle)
    np.testing.assert_array_equal(from_loop, idle)
    np.testing.assert_array_equal(naive, idle)
