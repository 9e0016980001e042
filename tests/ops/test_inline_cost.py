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
