"""Sparse arrays on ``mx.gpu(i)`` (``_sparse_gpu``), on the CuPy double:
values in host memory, ops run by CPU workers after the device work they
depend on, dense device results ordered on the device by events."""
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.engine import gpu as _gpu

TIMEOUT = 10.0


def _dense(rs, shape, density=0.4):
    a = rs.rand(*shape).astype(np.float32)
    a[rs.rand(*shape) > density] = 0
    return a


def _csr_parts(a):
    rows, cols = np.nonzero(a)
    indptr = np.zeros(a.shape[0] + 1, np.int64)
    np.cumsum(np.count_nonzero(a, axis=1), out=indptr[1:])
    return a[rows, cols], cols.astype(np.int64), indptr


def test_csr_and_row_sparse_ops_on_a_gpu_match_numpy(fake_gpu):
    rs = np.random.RandomState(0)
    a = _dense(rs, (6, 5))
    w = rs.rand(5, 3).astype(np.float32)
    g = mx.gpu(0)
    csr = mx.nd.sparse.csr_matrix(_csr_parts(a), shape=a.shape, ctx=g)
    assert csr.stype == "csr" and csr.context == g
    np.testing.assert_array_equal(csr.asnumpy(), a)
    W = mx.nd.array(w, ctx=g)
    y = mx.nd.sparse.dot(csr, W)
    assert y.stype == "default" and y.context == g
    np.testing.assert_allclose(y.asnumpy(), a @ w, rtol=1e-5)
    yt = mx.nd.sparse.dot(csr, mx.nd.array(rs.rand(6, 2).astype(np.float32), ctx=g),
                          transpose_a=True)
    assert yt.shape == (5, 2) and yt.context == g
    # dense device array -> row_sparse -> retain -> add -> dense, all on gpu(0)
    d = _dense(rs, (7, 3), 0.5)
    d[[1, 4]] = 0
    D = mx.nd.array(d, ctx=g)
    rsp = D.tostype("row_sparse")
    assert rsp.stype == "row_sparse" and rsp.context == g
    np.testing.assert_array_equal(rsp.indices.asnumpy(), np.nonzero(d.any(axis=1))[0])
    kept = mx.nd.sparse.retain(rsp, mx.nd.array([0, 2, 4], ctx=g))
    want = np.zeros_like(d)
    want[[0, 2]] = d[[0, 2]]
    np.testing.assert_array_equal(kept.asnumpy(), want)
    both = mx.nd.sparse.add(rsp, kept)
    assert both.stype == "row_sparse" and both.context == g
    np.testing.assert_array_equal(both.asnumpy(), d + want)
    back = both.tostype("default")
    assert back.stype == "default" and back.context == g
    np.testing.assert_array_equal((back * 2).asnumpy(), 2 * (d + want))
    assert not fake_gpu.races


def test_copies_between_cpu_and_gpu_keep_the_storage_type(fake_gpu):
    rs = np.random.RandomState(1)
    a = _dense(rs, (4, 6))
    c = mx.nd.sparse.csr_matrix(_csr_parts(a), shape=a.shape)
    cg = c.copyto(mx.gpu(1))
    assert cg.stype == "csr" and cg.context == mx.gpu(1)
    back = cg.as_in_context(mx.cpu())
    assert back.stype == "csr" and back.context == mx.cpu()
    np.testing.assert_array_equal(back.asnumpy(), a)
    dense_gpu = mx.nd.zeros(a.shape, ctx=mx.gpu(1))
    cg.copyto(dense_gpu)                # sparse on the device -> a dense device array
    np.testing.assert_array_equal(dense_gpu.asnumpy(), a)
    np.testing.assert_array_equal(cg.data.asnumpy(), a[np.nonzero(a)])


def test_a_sparse_op_waits_for_device_work_without_blocking_the_pusher(fake_gpu):
    """The producer of a sparse op's dense input is still held on the device:
    the push returns at once, the op runs once the device got there, and a
    device op on the sparse op's dense output waits for it on the device."""
    if mx.engine.statistics().naive:
        pytest.skip("the naive engine runs every op at its push")
    g = mx.gpu(0)
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3), ctx=g)
    x.wait_to_read()
    ex = _gpu.executor(g)
    ev = threading.Event()
    ex.compute.block(ev)                # a long kernel: the stream stops here
    try:
        y = x * 2                       # queued behind it
        rsp = y.tostype("row_sparse")   # a CPU worker's op: returns now
        z = rsp.tostype("default") + 1  # dense on the device again
        rd = rsp._push_copy()
        assert not rd.done              # waits for the device, not on this thread
    finally:
        ev.set()
    want = np.arange(12, dtype=np.float32).reshape(4, 3) * 2
    np.testing.assert_array_equal(rsp.asnumpy(), want)
    np.testing.assert_array_equal(z.asnumpy(), want + 1)
    assert not fake_gpu.races


def test_a_failing_sparse_op_on_a_gpu_poisons_its_outputs(fake_gpu):
    g = mx.gpu(0)
    a = mx.nd.sparse.csr_matrix(_csr_parts(np.eye(3, dtype=np.float32)), shape=(3, 3), ctx=g)
    bad = mx.nd.array(np.ones((4, 2), np.float32), ctx=g)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.sparse.dot(a, bad).asnumpy()
    ok = mx.nd.sparse.dot(a, mx.nd.array(np.ones((3, 2), np.float32), ctx=g))
    np.testing.assert_array_equal(ok.asnumpy(), np.ones((3, 2)))


def test_embedding_with_sparse_grad_trains_on_a_gpu_as_on_the_cpu(fake_gpu):
    rs = np.random.RandomState(2)
    w0 = rs.rand(10, 4).astype(np.float32)
    idx = np.array([[1, 3, 3], [7, 1, 0]], np.float32)
    out = {}
    for ctx in (mx.cpu(), mx.gpu(0)):
        emb = mx.gluon.nn.Embedding(10, 4, sparse_grad=True)
        emb.initialize(ctx=ctx)
        emb.weight.set_data(mx.nd.array(w0))
        tr = mx.gluon.Trainer(emb.collect_params(), "sgd",
                              {"learning_rate": 0.5, "wd": 0.01, "lazy_update": True})
        x = mx.nd.array(idx, ctx=ctx)
        for _ in range(2):
            with mx.autograd.record():
                loss = (emb(x) ** 2).sum()
            loss.backward()
            assert emb.weight.grad(ctx).stype == "row_sparse"
            tr.step(1)
        out[ctx.device_type] = emb.weight.data(ctx).asnumpy()
    np.testing.assert_allclose(out["gpu"], out["cpu"], rtol=1e-6)
    untouched = [r for r in range(10) if r not in (0, 1, 3, 7)]
    np.testing.assert_array_equal(out["gpu"][untouched], w0[untouched])   # lazy: rows kept


def test_sparse_arrays_saved_from_a_gpu_load_back_onto_it(fake_gpu, tmp_path):
    """As MXNet's NDArray::Save/Load: the file records the GPU, and loading
    without ``ctx`` puts the array back there; CPU ones stay on the CPU."""
    rs = np.random.RandomState(3)
    a = _dense(rs, (5, 4))
    f = str(tmp_path / "sp.params")
    on_gpu = mx.nd.sparse.csr_matrix(_csr_parts(a), shape=a.shape, ctx=mx.gpu(1))
    on_cpu = mx.nd.array(a, ctx=mx.cpu()).tostype("row_sparse")
    mx.nd.save(f, {"g": on_gpu, "c": on_cpu})
    got = mx.nd.load(f)
    assert got["g"].stype == "csr" and got["g"].context == mx.gpu(1)
    assert got["c"].stype == "row_sparse" and got["c"].context == mx.cpu()
    np.testing.assert_array_equal(got["g"].asnumpy(), a)
    np.testing.assert_array_equal(got["c"].asnumpy(), a)
    forced = mx.nd.load(f, ctx=mx.cpu())
    assert forced["g"].context == mx.cpu()
