"""mx.nd.sparse: CSRNDArray / RowSparseNDArray (MXNet 1.9.1 semantics),
checked against numpy / scipy.sparse values."""
import asyncio
import pickle

import numpy as np
import pytest
import scipy.sparse as spsp

import aiond as mx
from aiond.base import MXNetError, NotSupportedForSparseNDArray

DENSE = np.array([[0, 1, 0], [0, 0, 0], [2, 0, 3], [0, 0, 0]], dtype=np.float32)


def rsp():
    return mx.nd.array(DENSE).tostype("row_sparse")


def csr():
    return mx.nd.array(DENSE).tostype("csr")


# ------------------------------------------------------------ creation / parts

def test_tostype_parts_and_round_trip():
    r, c = rsp(), csr()
    assert isinstance(r, mx.nd.sparse.RowSparseNDArray) and r.stype == "row_sparse"
    assert isinstance(c, mx.nd.sparse.CSRNDArray) and c.stype == "csr"
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(r.data.asnumpy(), DENSE[[0, 2]])
    np.testing.assert_array_equal(c.indptr.asnumpy(), [0, 1, 1, 3, 3])
    np.testing.assert_array_equal(c.indices.asnumpy(), [1, 0, 2])
    np.testing.assert_array_equal(c.data.asnumpy(), [1, 2, 3])
    assert r.indices.dtype == np.int64 and c.indptr.dtype == np.int64
    for x in (r, c):
        np.testing.assert_array_equal(x.asnumpy(), DENSE)
        d = x.tostype("default")
        assert type(d) is mx.nd.NDArray and d.stype == "default"
        np.testing.assert_array_equal(d.asnumpy(), DENSE)
    assert repr(r) == "\n<RowSparseNDArray 4x3 @cpu(0)>"


def test_unsupported_casts_and_shapes():
    with pytest.raises(ValueError):
        rsp().tostype("csr")
    with pytest.raises(ValueError):
        csr().tostype("row_sparse")
    with pytest.raises(ValueError):
        mx.nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(NotSupportedForSparseNDArray):
        rsp().reshape((3, 4))


def test_csr_matrix_forms():
    data, indices, indptr = [1., 2., 3.], [1, 0, 2], [0, 1, 1, 3, 3]
    a = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=(4, 3))
    np.testing.assert_array_equal(a.asnumpy(), DENSE)
    b = mx.nd.sparse.csr_matrix(([1., 2., 3.], ([0, 2, 2], [1, 0, 2])), shape=(4, 3))
    np.testing.assert_array_equal(b.asnumpy(), DENSE)
    c = mx.nd.sparse.csr_matrix(spsp.csr_matrix(DENSE))
    np.testing.assert_array_equal(c.asnumpy(), DENSE)
    d = mx.nd.sparse.csr_matrix(DENSE)
    assert d.stype == "csr" and (d.asnumpy() == DENSE).all()
    e = mx.nd.sparse.csr_matrix((2, 5))
    assert e.shape == (2, 5) and not e.asnumpy().any()
    m = a.asscipy()
    assert isinstance(m, spsp.csr_matrix) and (m.toarray() == DENSE).all()
    f = mx.nd.array(spsp.csr_matrix(DENSE), dtype="float64")
    assert f.stype == "csr" and f.dtype == np.float64
    with pytest.raises(ValueError):
        mx.nd.sparse.csr_matrix(DENSE, shape=(2, 2))


def test_row_sparse_array_forms():
    a = mx.nd.sparse.row_sparse_array(([[1., 2.], [3., 4.]], [1, 3]), shape=(5, 2))
    want = np.zeros((5, 2), np.float32)
    want[[1, 3]] = [[1, 2], [3, 4]]
    np.testing.assert_array_equal(a.asnumpy(), want)
    b = mx.nd.sparse.row_sparse_array(([[1., 2.]], [2]))     # shape from the last index
    assert b.shape == (3, 2)
    z = mx.nd.sparse.row_sparse_array((4, 2))
    assert z.stype == "row_sparse" and z.indices.shape == (0,)
    assert mx.nd.zeros((4, 2), stype="row_sparse").data.shape == (0, 2)
    assert mx.nd.empty((2, 2), stype="csr").stype == "csr"
    c = mx.nd.array(a, ctx=mx.cpu(1))
    assert c.stype == "row_sparse" and c.context == mx.cpu(1)
    np.testing.assert_array_equal(c.asnumpy(), want)


def test_copyto_astype_contexts():
    r = rsp()
    other = r.copyto(mx.cpu(2))
    assert other.stype == "row_sparse" and other.context == mx.cpu(2)
    dense = mx.nd.zeros(DENSE.shape)
    r.copyto(dense)
    np.testing.assert_array_equal(dense.asnumpy(), DENSE)
    target = mx.nd.zeros(DENSE.shape, stype="row_sparse")
    mx.nd.array(DENSE * 2).copyto(target)
    np.testing.assert_array_equal(target.asnumpy(), DENSE * 2)
    with pytest.raises(TypeError):
        r.copyto(mx.nd.zeros(DENSE.shape, stype="csr"))
    h = r.astype("float64")
    assert h.stype == "row_sparse" and h.dtype == np.float64
    np.testing.assert_array_equal(h.asnumpy(), DENSE)


def test_check_format():
    rsp().check_format()
    csr().check_format()
    bad = mx.nd.sparse.csr_matrix(([1., 2.], [2, 1], [0, 2]), shape=(1, 3))
    with pytest.raises(MXNetError):
        bad.check_format()


# ------------------------------------------------------------------- ops

def test_row_sparse_arithmetic_keeps_storage():
    a, b = rsp(), mx.nd.sparse.row_sparse_array(([[1., 1., 1.]], [3]), shape=(4, 3))
    s = a + b
    assert s.stype == "row_sparse"
    np.testing.assert_array_equal(s.indices.asnumpy(), [0, 2, 3])
    np.testing.assert_array_equal(s.asnumpy(), DENSE + b.asnumpy())
    d = a - b
    assert d.stype == "row_sparse" and (d.asnumpy() == DENSE - b.asnumpy()).all()
    m = a * mx.nd.ones(DENSE.shape) * 3
    assert m.stype == "row_sparse" and (m.asnumpy() == DENSE * 3).all()
    # no sparse kernel: the dense fallback gives a dense result
    p = a + 1
    assert p.stype == "default" and (p.asnumpy() == DENSE + 1).all()
    e = mx.nd.exp(a)
    assert e.stype == "default" and np.allclose(e.asnumpy(), np.exp(DENSE))
    q = mx.nd.sqrt(a)
    assert q.stype == "row_sparse" and np.allclose(q.asnumpy(), np.sqrt(DENSE))
    a += b
    assert a.stype == "row_sparse" and (a.asnumpy() == s.asnumpy()).all()


def test_dot_with_csr():
    c = csr()
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = mx.nd.dot(c, mx.nd.array(w))
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), DENSE @ w)
    v = np.arange(8, dtype=np.float32).reshape(4, 2)
    t = mx.nd.dot(c, mx.nd.array(v), transpose_a=True)
    assert t.stype == "row_sparse"
    np.testing.assert_allclose(t.asnumpy(), DENSE.T @ v)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    r = mx.nd.dot(mx.nd.array(x), c)
    assert r.stype == "csr"
    np.testing.assert_allclose(r.asnumpy(), x @ DENSE)
    s = mx.nd.sparse.dot(c, rsp().T.tostype("row_sparse"))
    np.testing.assert_allclose(s.asnumpy(), DENSE @ DENSE.T)


def test_csr_row_slicing():
    c = csr()
    np.testing.assert_array_equal(c[2].asnumpy(), DENSE[2:3])
    part = c[1:3]
    assert part.stype == "csr" and (part.asnumpy() == DENSE[1:3]).all()
    assert c[:] is c
    np.testing.assert_array_equal(c[-1].asnumpy(), DENSE[3:4])


def test_retain_square_sum_and_setitem():
    r = rsp()
    kept = mx.nd.sparse.retain(r, mx.nd.array([2, 3]))
    assert kept.stype == "row_sparse"
    np.testing.assert_array_equal(kept.indices.asnumpy(), [2])
    np.testing.assert_array_equal(r.retain(mx.nd.array([0])).asnumpy(), DENSE * [[1], [0], [0], [0]])
    sq = mx.nd._internal._square_sum(r, axis=1, keepdims=True)
    assert sq.stype == "row_sparse"
    np.testing.assert_allclose(sq.asnumpy(), (DENSE ** 2).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(mx.nd._internal._square_sum(r, axis=0).asnumpy(),
                               (DENSE ** 2).sum(axis=0))
    r[:] = 2
    assert (r.asnumpy() == 2).all() and r.indices.shape == (4,)
    with pytest.warns(RuntimeWarning, match="not efficient"):
        r[:] = DENSE
    np.testing.assert_array_equal(r.asnumpy(), DENSE)
    c = csr()
    with pytest.raises(ValueError):
        c[:] = 1


# ------------------------------------------------------- engine / autograd

def test_engine_orders_sparse_writes_and_reads():
    r = mx.nd.zeros(DENSE.shape, stype="row_sparse")
    big = mx.nd.array(DENSE)
    for k in range(1, 6):
        (big * k).copyto(r)
        doubled = r * 2          # reads the value written just before
        assert doubled.stype == "row_sparse"
        np.testing.assert_array_equal(doubled.asnumpy(), DENSE * k * 2)

    async def read():
        return await r.read()
    np.testing.assert_array_equal(asyncio.run(read()), DENSE * 5)


def test_autograd_to_sparse_variables():
    w = rsp()
    w.attach_grad()
    assert w.grad.stype == "row_sparse"
    with mx.autograd.record():
        y = (mx.nd.exp(w) * 2).sum()
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * np.exp(DENSE), rtol=1e-6)
    x = mx.nd.ones((4, 3))
    x.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        e = mx.nd.Embedding(mx.nd.array([0, 2, 2]), x, input_dim=4, output_dim=3,
                            sparse_grad=True)
    e.backward()
    assert x.grad.stype == "row_sparse"
    np.testing.assert_array_equal(x.grad.indices.asnumpy(), [0, 2])
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [1, 0, 2, 0])


def test_dot_gradient_through_csr():
    c = csr()
    w = mx.nd.ones((3, 2))
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(c, w)
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), DENSE.T @ np.ones((4, 2)))


# --------------------------------------------------------------- files

def test_save_load_and_pickle(tmp_path):
    path = str(tmp_path / "s.params")
    mx.nd.save(path, {"r": rsp(), "c": csr(), "d": mx.nd.array(DENSE)})
    got = mx.nd.load(path)
    assert got["r"].stype == "row_sparse" and got["c"].stype == "csr"
    assert got["d"].stype == "default"
    for v in got.values():
        np.testing.assert_array_equal(v.asnumpy(), DENSE)
    p = pickle.loads(pickle.dumps(csr()))
    assert p.stype == "csr" and (p.asnumpy() == DENSE).all()


def test_save_is_byte_identical_to_mxnet(tmp_path):
    import pathlib
    data = pathlib.Path(__file__).resolve().parent.parent / "data" / "mxnet_files"
    path = str(tmp_path / "rsp.nd")
    mx.nd.save(path, {"rsp": mx.nd.sparse.row_sparse_array(
        (np.arange(6, dtype="float32").reshape(2, 3), [1, 3]), shape=(5, 3))})
    assert open(path, "rb").read() == (data / "sparse_rsp.nd").read_bytes()
    path = str(tmp_path / "csr.nd")
    mx.nd.save(path, [mx.nd.sparse.csr_matrix(
        (np.array([1, 2, 3], "float32"), np.array([0, 2, 1]), np.array([0, 2, 2, 3])),
        shape=(3, 4))])
    assert open(path, "rb").read() == (data / "sparse_csr.nd").read_bytes()
    loaded = mx.nd.load(str(data / "sparse_csr.nd"))[0]
    assert loaded.stype == "csr"
    np.testing.assert_array_equal(loaded.asnumpy(), [[1, 0, 2, 0], [0, 0, 0, 0], [0, 3, 0, 0]])


def test_scalar_ops_storage_rules():
    y = mx.nd.ones((3, 4)).tostype("csr")
    assert (1 == y).stype == "csr" and (0 == y).stype == "default"
    assert (y > 0).stype == "csr" and (y + 0).stype == "csr" and (y + 1).stype == "default"
    np.testing.assert_array_equal((0 == y).asnumpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal((1 == y).asnumpy(), np.ones((3, 4)))


def test_take_getnnz_slice_axis_on_csr():
    c = csr()
    t = mx.nd.take(c, mx.nd.array([2, 0, 5]), mode="wrap")
    assert t.stype == "csr"
    np.testing.assert_array_equal(t.asnumpy(), DENSE[[2, 0, 1]])
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(c).asnumpy(), [3])
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(c, axis=1).asnumpy(), [1, 0, 2, 0])
    np.testing.assert_array_equal(mx.nd.contrib.getnnz(c, axis=0).asnumpy(), [1, 1, 1])
    s = mx.nd.slice_axis(c, axis=0, begin=1, end=3)
    assert s.stype == "csr" and (s.asnumpy() == DENSE[1:3]).all()


def test_ndarray_iter_over_csr():
    it = mx.io.NDArrayIter(csr(), mx.nd.arange(4), batch_size=2, last_batch_handle="discard",
                           shuffle=True)
    seen = 0
    for batch in it:
        assert batch.data[0].stype == "csr"
        rows = batch.label[0].asnumpy().astype(int)
        np.testing.assert_array_equal(batch.data[0].asnumpy(), DENSE[rows])
        seen += 1
    assert seen == 2
    with pytest.raises(NotImplementedError):
        mx.io.NDArrayIter(csr(), batch_size=3)


def test_sparse_buffers_count_in_the_pending_bytes_bound():
    csr = mx.nd.sparse.csr_matrix((np.ones(3, "float32"), np.array([0, 2, 1]),
                                   np.array([0, 2, 3])), shape=(2, 3))
    rsp = mx.nd.sparse.row_sparse_array((np.ones((1, 3), "float32"), np.array([1])),
                                        shape=(2, 3))
    # a pending op that reads sparse inputs: their buffers are counted, not an AttributeError
    out = (csr.tostype("default") + rsp.tostype("default")).asnumpy()
    np.testing.assert_array_equal(out, [[1, 0, 1], [1, 2, 1]])
    assert mx.nd.sqrt(csr).stype == "csr" and mx.nd.sqrt(csr).asnumpy().shape == (2, 3)


def test_sparse_values_report_their_bytes():
    from aiond.ops.sparse import CSR, RSP
    c = CSR(np.ones(3, "float32"), np.zeros(3, "int64"), np.zeros(3, "int64"))
    r = RSP(np.ones((2, 4), "float64"), np.zeros(2, "int64"))
    assert c.nbytes == 12 + 24 + 24 and r.nbytes == 64 + 16


def test_loading_a_small_sparse_file_with_a_huge_dense_shape_stays_small(tmp_path):
    # issue 15, item 7: a few KB of row_sparse data declaring a (131072, 1024)
    # dense shape must not cost 512 MB at load: it loads sparse
    r = mx.nd.sparse.row_sparse_array((np.ones((1, 1024), "float32"), np.array([5])),
                                      shape=(131072, 1024))
    f = str(tmp_path / "rsp.nd")
    mx.nd.save(f, [r])
    import os
    assert os.path.getsize(f) < 8192
    x = mx.nd.load(f)[0]
    assert x.stype == "row_sparse" and x.shape == (131072, 1024)
    assert x.data.shape == (1, 1024) and x.indices.asnumpy().tolist() == [5]
    # a row index past the dense shape is a corrupt file, refused at load
    data = bytearray(open(f, "rb").read())
    pos = data.rfind(np.array([5], dtype=np.int64).tobytes())
    data[pos:pos + 8] = np.array([1 << 40], dtype=np.int64).tobytes()
    with pytest.raises(mx.MXNetError):
        mx.nd.load_frombuffer(bytes(data))
