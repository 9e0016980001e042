"""Gluon under NumPy semantics (``npx.set_np()`` / ``@use_np``): parameters,
gradients, DataLoader batches and block results are mx.np arrays; training,
save/load and export/import work with them."""
import numpy as onp
import pytest

import aiond as mx
from aiond import autograd, gluon, np, npx
from aiond.gluon import nn
from aiond.util import use_np


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def test_use_np_block_parameters_are_np():
    @use_np
    class Block(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3, 2), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.npx.fully_connected(x, w, None, num_hidden=3, no_bias=True)

    for hyb in (False, True):
        net = Block()
        net.initialize(mx.init.Uniform())
        if hyb:
            net.hybridize()
        x = mx.nd.ones((4, 2)).as_np_ndarray()
        out = net(x)
        assert isinstance(out, np.ndarray)
        assert type(net.w.data()) is np.ndarray and type(net.w.grad()) is np.ndarray
        onp.testing.assert_allclose(out.asnumpy(), onp.ones((4, 2)) @ net.w.data().asnumpy().T,
                                    rtol=1e-6)
    # outside NumPy semantics the same block type still gets legacy arrays
    net = nn.Dense(2, in_units=2)
    net.initialize()
    assert type(net.weight.data()) is mx.nd.NDArray


def test_dataloader_and_training(np_mode):
    rs = onp.random.RandomState(0)
    X = rs.randn(200, 4).astype(onp.float32)
    w = onp.array([1.0, -2.0, 3.0, 0.5], onp.float32)
    y = (X @ w + 0.1).reshape(-1, 1)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(np.array(X), np.array(y)),
                                   batch_size=20, shuffle=True)
    xb, yb = next(iter(loader))
    assert type(xb) is np.ndarray and xb.shape == (20, 4)
    for hyb in (False, True):
        net = nn.HybridSequential()
        net.add(nn.Dense(1))
        net.initialize(mx.init.Normal(0.01))
        if hyb:
            net.hybridize()
        loss_fn = gluon.loss.L2Loss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        for _ in range(10):
            for xb, yb in loader:
                with autograd.record():
                    loss = loss_fn(net(xb), yb)
                loss.backward()
                trainer.step(xb.shape[0])
        assert type(loss) is np.ndarray and loss.shape == (20,)
        assert type(net[0].weight.grad()) is np.ndarray
        onp.testing.assert_allclose(net[0].weight.data().asnumpy().ravel(), w, atol=1e-2)
        onp.testing.assert_allclose(net[0].bias.data().asnumpy(), [0.1], atol=1e-2)


def test_save_load_export_import(np_mode, tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, activation="relu"), nn.Dense(2))
    net.initialize()
    x = np.array(onp.random.RandomState(1).randn(5, 4).astype(onp.float32))
    net.hybridize()
    want = net(x).asnumpy()
    f = str(tmp_path / "p.params")
    net.save_parameters(f)
    net2 = nn.HybridSequential()
    net2.add(nn.Dense(3, activation="relu"), nn.Dense(2))
    net2.load_parameters(f)
    assert type(net2[0].weight.data()) is np.ndarray
    onp.testing.assert_allclose(net2(x).asnumpy(), want, rtol=1e-6)
    prefix = str(tmp_path / "net")
    net.export(prefix)
    imported = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"],
                                         prefix + "-0000.params")
    out = imported(x)
    assert type(out) is np.ndarray
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_np_losses_and_metrics(np_mode):
    pred = np.array([[0.2, 0.8], [0.9, 0.1]])
    label = np.array([1, 0])
    out = gluon.loss.SoftmaxCrossEntropyLoss()(pred, label)
    assert type(out) is np.ndarray and out.shape == (2,)
    p = pred.asnumpy()
    e = onp.exp(p - p.max(axis=1, keepdims=True))
    want = -onp.log((e / e.sum(axis=1, keepdims=True))[[0, 1], [1, 0]])
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)
    l1 = gluon.loss.L1Loss()(np.ones((2, 3)), np.zeros((2, 3)))
    assert type(l1) is np.ndarray
    onp.testing.assert_allclose(l1.asnumpy(), [1.0, 1.0])
    acc = mx.metric.Accuracy()
    acc.update([label], [pred])
    assert acc.get() == ("accuracy", 1.0)
