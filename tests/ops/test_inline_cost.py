"""Where an op runs: a ready op whose estimated work is small runs inline on
the pushing thread; matmul-like ops are estimated by MACs, not by size."""
import numpy as np

import aiond as mx


def _ran_inline(fn):
    before = mx.engine.statistics()
    out = fn()
    out.wait_to_read()
    after = mx.engine.statistics()
    # ops_pushed counts what went to the workers (wait_to_read is inline itself)
    return after.ops_pushed == before.ops_pushed


def test_small_matmul_like_ops_run_inline_large_ones_do_not():
    a = mx.nd.array(np.random.rand(8, 32))
    w = mx.nd.array(np.random.rand(16, 32))
    b = mx.nd.zeros((16,))
    mx.nd.waitall()
    assert _ran_inline(lambda: mx.nd.FullyConnected(a, w, b, num_hidden=16))
    assert _ran_inline(lambda: mx.nd.dot(a, w, transpose_b=True))
    # 96x96 matmul: ~27 k elements, but ~885 k MACs: a worker's job
    big = mx.nd.array(np.random.rand(96, 96))
    mx.nd.waitall()
    assert not _ran_inline(lambda: mx.nd.dot(big, big))
    x = mx.nd.array(np.random.rand(1, 16, 32, 32))
    k = mx.nd.array(np.random.rand(16, 16, 3, 3))
    mx.nd.waitall()
    assert not _ran_inline(lambda: mx.nd.Convolution(x, k, kernel=(3, 3), num_filter=16, no_bias=True))
    np.testing.assert_allclose(mx.nd.dot(big, big).asnumpy(), big.asnumpy() @ big.asnumpy(), rtol=1e-5)


def test_whole_array_assignment_fast_path_keeps_semantics():
    a = mx.nd.zeros((3, 4))
    a[:] = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(a.asnumpy(), np.arange(12).reshape(3, 4))
    a[:] = 7
    assert (a.asnumpy() == 7).all()
    a[:] = mx.nd.ones((4,))           # broadcast
    assert (a.asnumpy() == 1).all()


def test_large_matmuls_split_by_rows_give_numpy_results():
    """Big dot/FullyConnected run as one row range per worker (when nothing
    else is queued): every transpose combination must still be exact."""
    rng = np.random.RandomState(3)
    a = rng.rand(130, 784).astype(np.float32)       # odd row count: uneven chunks
    w = rng.rand(256, 784).astype(np.float32)
    b = rng.rand(256).astype(np.float32)
    A, W, B = mx.nd.array(a), mx.nd.array(w), mx.nd.array(b)
    mx.nd.waitall()
    np.testing.assert_allclose(mx.nd.FullyConnected(A, W, B, num_hidden=256).asnumpy(),
                               a @ w.T + b, rtol=1e-4)
    np.testing.assert_allclose(mx.nd.dot(A, W, transpose_b=True).asnumpy(), a @ w.T, rtol=1e-4)
    np.testing.assert_allclose(mx.nd.dot(W, A, transpose_b=True).asnumpy(), w @ a.T, rtol=1e-4)
    np.testing.assert_allclose(mx.nd.dot(A, A, transpose_a=True).asnumpy(), a.T @ a, rtol=1e-4)
