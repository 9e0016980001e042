"""Where an op runs: a ready op whose estimated work is small runs inline on
the pushing thread; matmul-like ops are estimated by MACs, not by size."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx


def _where(fn):
    """Where ``fn``'s op ran: 'inline' (the small-op rule), 'caller' (a ready
    op a plain pushing thread ran itself) or 'worker'."""
    before = mx.engine.statistics()
    out = fn()
    out.wait_to_read()
    after = mx.engine.statistics()
    # wait_to_read of a finished array is itself inline: count the caller and
    # the workers first
    if after.ops_caller > before.ops_caller:
        return "caller"
    if after.ops_pushed > before.ops_pushed:
        return "worker"
    assert after.ops_inline > before.ops_inline
    return "inline"


def test_small_matmul_like_ops_run_inline_large_ones_do_not():
    a = mx.nd.array(np.random.rand(8, 32))
    w = mx.nd.array(np.random.rand(16, 32))
    b = mx.nd.zeros((16,))
    mx.nd.waitall()
    assert _where(lambda: mx.nd.FullyConnected(a, w, b, num_hidden=16)) == "inline"
    assert _where(lambda: mx.nd.dot(a, w, transpose_b=True)) == "inline"
    # 96x96 matmul: ~27 k elements, but ~885 k MACs: not the inline rule's; a
    # plain thread runs it itself when it is ready (as a serial loop would)
    big = mx.nd.array(np.random.rand(96, 96))
    mx.nd.waitall()
    assert _where(lambda: mx.nd.dot(big, big)) == "caller"
    x = mx.nd.array(np.random.rand(1, 16, 32, 32))
    k = mx.nd.array(np.random.rand(16, 16, 3, 3))
    mx.nd.waitall()
    conv = lambda: mx.nd.Convolution(x, k, kernel=(3, 3), num_filter=16, no_bias=True)  # noqa: E731
    assert _where(conv) == "caller"
    np.testing.assert_allclose(mx.nd.dot(big, big).asnumpy(), big.asnumpy() @ big.asnumpy(), rtol=1e-5)

    # pushed from a coroutine, the same ops go to a worker: the event loop
    # must never run a kernel that is not tiny
    async def on_loop():
        return _where(lambda: mx.nd.dot(big, big)), _where(conv), \
            _where(lambda: mx.nd.dot(a, w, transpose_b=True))
    assert asyncio.run(on_loop()) == ("worker", "worker", "inline")


def test_a_big_ready_op_from_a_plain_thread_runs_there_and_a_waiting_one_does_not():
    """A ready op runs on the plain thread that pushed it; one that waits
    behind another op is queued as always (push never blocks on it)."""
    big = mx.nd.array(np.random.rand(96, 96))
    mx.nd.waitall()
    ev = threading.Event()
    eng = mx.engine._engine
    gate = eng.push(lambda: ev.wait(10), (), (big._st.var,), "gate")
    s0 = mx.engine.statistics()
    c = mx.nd.dot(big, big)           # waits for the gate: queued, returns at once
    s1 = mx.engine.statistics()
    assert gate.done is False and not c._st.var.version
    assert (s1.ops_caller, s1.ops_pushed) == (s0.ops_caller, s0.ops_pushed + 1)
    ev.set()
    np.testing.assert_allclose(c.asnumpy(), big.asnumpy() @ big.asnumpy(), rtol=1e-5)
    s0 = mx.engine.statistics()
    d = mx.nd.dot(big, big)           # ready: this thread runs it before push returns
    s1 = mx.engine.statistics()
    assert (s1.ops_caller, s1.ops_pushed, s1.pending_ops) == (s0.ops_caller + 1, s0.ops_pushed, 0)
    np.testing.assert_allclose(d.asnumpy(), c.asnumpy())


def test_a_failing_op_run_by_the_pushing_thread_poisons_and_raises_at_read():
    """Run at push or on a worker, a kernel's error surfaces at the read,
    naming the op and the user's line; the engine goes on."""
    bad = mx.nd.array(-np.eye(64))    # not positive definite: Cholesky fails in the kernel
    mx.nd.waitall()
    s0 = mx.engine.statistics()
    L = mx.nd.linalg.potrf(bad)
    assert mx.engine.statistics().ops_caller == s0.ops_caller + 1
    later = L + 1                     # reads the poisoned output: poisoned too
    with pytest.raises(mx.MXNetError, match="potrf") as ei:
        later.asnumpy()
    assert "test_inline_cost.py" in str(ei.value)
    good = mx.nd.linalg.potrf(mx.nd.array(np.eye(64) * 4))
    np.testing.assert_allclose(good.asnumpy(), np.eye(64) * 2)


def test_whole_array_assignment_fast_path_keeps_semantics():
    a = mx.nd.zeros((3, 4))
    a[:] = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(a.asnumpy(), np.arange(12).reshape(3, 4))
    a[:] = 7
    assert (a.asnumpy() == 7).all()
    a[:] = mx.nd.ones((4,))           # broadcast
    assert (a.asnumpy() == 1).all()


def test_large_matmuls_split_by_rows_give_numpy_results(split_ranges):
    """Big dot/FullyConnected (from 64 M multiply-adds) pushed from a
    coroutine run on a worker as one row range per worker (when nothing else
    is queued); from a plain thread its ranges are shared with idle workers.
    Every transpose combination must be exact either way."""
    rng = np.random.RandomState(3)
    a = rng.rand(331, 784).astype(np.float32)       # odd row count: uneven chunks
    w = rng.rand(300, 784).astype(np.float32)
    b = rng.rand(300).astype(np.float32)
    A, W, B = mx.nd.array(a), mx.nd.array(w), mx.nd.array(b)
    mx.nd.waitall()
    cases = [(lambda: mx.nd.FullyConnected(A, W, B, num_hidden=300), a @ w.T + b),
             (lambda: mx.nd.dot(A, W, transpose_b=True), a @ w.T),
             (lambda: mx.nd.dot(W, A, transpose_b=True), w @ a.T),
             (lambda: mx.nd.dot(A, A, transpose_a=True), a.T @ a)]
    for fn, want in cases:
        np.testing.assert_allclose(fn().asnumpy(), want, rtol=1e-4)

    ranges = split_ranges
    cpu = ranges.cpu

    async def on_loop():
        for fn, want in cases:
            ranges.idle()
            got = await fn().read()
            np.testing.assert_allclose(got, want, rtol=1e-4)
            if cpu.nworkers > 1:
                assert len(ranges) == cpu.nworkers and sum(ranges) == want.shape[0]
    asyncio.run(on_loop())