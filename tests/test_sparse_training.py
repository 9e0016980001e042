"""Training with sparse arrays: lazy optimizer updates, KVStore push/pull and
row_sparse_pull, row_sparse Gluon parameters, sparse symbols in a Module
(MXNet 1.9.1 semantics)."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

W = np.arange(1, 13, dtype=np.float32).reshape(4, 3)
G_ROWS = [1, 3]
G_DATA = np.full((2, 3), 0.5, dtype=np.float32)


def grad_rsp():
    return mx.nd.sparse.row_sparse_array((G_DATA, G_ROWS), shape=W.shape)


def dense_grad():
    g = np.zeros_like(W)
    g[G_ROWS] = G_DATA
    return g


# ---------------------------------------------------------- optimizer ops

@pytest.mark.parametrize("wstype", ["default", "row_sparse"])
def test_sgd_lazy_update_touches_only_gradient_rows(wstype):
    w = mx.nd.array(W).tostype(wstype)
    mx.nd.sgd_update(w, grad_rsp(), lr=0.1, wd=0.1, out=w)
    want = W.copy()
    want[G_ROWS] = (1 - 0.1 * 0.1) * W[G_ROWS] - 0.1 * G_DATA
    assert w.stype == wstype
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)


def test_sgd_std_update_decays_every_row():
    w = mx.nd.array(W)
    mx.nd.sgd_update(w, grad_rsp(), lr=0.1, wd=0.1, lazy_update=False, out=w)
    np.testing.assert_allclose(w.asnumpy(), (1 - 0.01) * W - 0.1 * dense_grad(), rtol=1e-6)


def test_adam_lazy_update_rows_and_states():
    w = mx.nd.array(W).tostype("row_sparse")
    mean = mx.nd.zeros(W.shape, stype="row_sparse")
    var = mx.nd.zeros(W.shape, stype="row_sparse")
    mx.nd.adam_update(w, grad_rsp(), mean, var, lr=0.01, out=w)
    # dense reference on the gradient's rows
    wr, gr = W[G_ROWS].copy(), G_DATA
    m = 0.1 * gr
    v = 0.001 * gr * gr
    wr -= 0.01 * m / (np.sqrt(v) + 1e-8)
    want = W.copy()
    want[G_ROWS] = wr
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy()[G_ROWS], m, rtol=1e-6)
    assert not mean.asnumpy()[[0, 2]].any()


def test_optimizer_objects_with_sparse_gradients():
    for name, kw in [("sgd", {"momentum": 0.9, "wd": 0.01}), ("adam", {}), ("ftrl", {}),
                     ("adagrad", {})]:
        opt = mx.optimizer.create(name, learning_rate=0.1, **kw)
        w = mx.nd.array(W).tostype("row_sparse")
        state = opt.create_state(0, w)
        opt.update(0, w, grad_rsp(), state)
        got = w.asnumpy()
        # lazy: the rows without gradient are untouched
        np.testing.assert_array_equal(got[[0, 2]], W[[0, 2]])
        assert (got[G_ROWS] != W[G_ROWS]).all(), name


def test_sparse_adagrad_update_refuses_weight_decay():
    w, h = mx.nd.array(W), mx.nd.zeros(W.shape)
    with pytest.raises(MXNetError, match="wd"):
        mx.nd.sparse.adagrad_update(w, grad_rsp(), h, lr=0.1, wd=0.1, out=w)


# ---------------------------------------------------------------- kvstore

def test_kvstore_sparse_push_pull_and_row_sparse_pull():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.zeros(W.shape, stype="row_sparse"))
    vals = [grad_rsp().copyto(mx.cpu(i)) for i in range(3)]
    kv.push("w", vals)
    out = mx.nd.zeros(W.shape)
    kv.pull("w", out=out)
    np.testing.assert_allclose(out.asnumpy(), 3 * dense_grad())
    rsp_out = mx.nd.ones(W.shape).tostype("row_sparse")
    kv.pull("w", out=rsp_out)                   # ignored: sparse outs need ignore_sparse=False
    assert (rsp_out.asnumpy() == 1).all()
    kv.pull("w", out=rsp_out, ignore_sparse=False)
    np.testing.assert_allclose(rsp_out.asnumpy(), 3 * dense_grad())
    outs = [mx.nd.zeros(W.shape, stype="row_sparse", ctx=mx.cpu(i)) for i in range(2)]
    kv.row_sparse_pull("w", out=outs, row_ids=[mx.nd.array([3]), mx.nd.array([0, 1])])
    want0 = np.zeros_like(W)
    want0[3] = 1.5
    want1 = np.zeros_like(W)
    want1[1] = 1.5
    np.testing.assert_allclose(outs[0].asnumpy(), want0)
    np.testing.assert_allclose(outs[1].asnumpy(), want1)
    with pytest.raises(MXNetError):
        kv.row_sparse_pull("w", out=mx.nd.zeros(W.shape), row_ids=mx.nd.array([1]))


def test_teststore_is_registered():
    kv = mx.kv.create("teststore")
    assert kv.type == "teststore" and not kv.is_capable("optimizer")
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 2
    kv.pushpull(0, [a, b])
    assert (a.asnumpy() == 3).all() and (b.asnumpy() == 3).all()


# ------------------------------------------------------------------ gluon

def test_row_sparse_parameter_with_trainer():
    p = mx.gluon.Parameter("emb", shape=(4, 3), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init="ones", ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    rows = mx.nd.array([0, 2])
    ws = p.list_row_sparse_data(rows)
    assert all(w.stype == "row_sparse" for w in ws)
    np.testing.assert_array_equal(ws[0].indices.asnumpy(), [0, 2])
    with mx.autograd.record():
        for w in ws:
            mx.nd.Embedding(mx.nd.array([0, 2], ctx=w.context), w, input_dim=4, output_dim=3,
                            sparse_grad=True).backward()
    assert p.grad(mx.cpu(0)).stype == "row_sparse"
    trainer.step(1)
    assert trainer._update_on_kvstore is True
    full = p.row_sparse_data(mx.nd.arange(0, 4)).asnumpy()
    # the store summed both copies' gradients (1 + 1 on rows 0 and 2) and updated
    np.testing.assert_allclose(full[[0, 2]], -1)
    np.testing.assert_allclose(full[[1, 3]], 1)
    with pytest.raises(RuntimeError):
        mx.gluon.Trainer([p], "sgd")           # one trainer per sparse parameter


def test_dense_parameter_with_sparse_gradient():
    p = mx.gluon.Parameter("w", shape=(4, 3), grad_stype="row_sparse")
    p.initialize(init="zeros", ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        for w in p.list_data():
            mx.nd.Embedding(mx.nd.array([1], ctx=w.context), w, input_dim=4, output_dim=3,
                            sparse_grad=True).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    for w in p.list_data():
        want = np.zeros((4, 3))
        want[1] = -2
        np.testing.assert_allclose(w.asnumpy(), want)


# ----------------------------------------------------------------- symbol

def test_module_with_sparse_symbols():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(5, 2), init=mx.init.Constant(2.0), stype="row_sparse")
    mod = mx.mod.Module(mx.sym.sparse.dot(x, w), label_names=None)
    mod.bind(data_shapes=[("data", (3, 5))])
    mod.init_params()
    weight = mod.get_params()[0]["weight"]
    assert weight.stype == "row_sparse" and (weight.asnumpy() == 2).all()
    data = mx.nd.array(np.eye(3, 5)).tostype("csr")
    mod.forward(mx.io.DataBatch([data]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.full((3, 2), 2.0))
