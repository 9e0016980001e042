"""gluon.Trainer: SGD steps as MXNet 1.9.1, multi-context gradient
summation, stale gradients, states, and gluon.utils."""
import hashlib

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import nn, utils

W0 = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5) / 10
X = np.sin(np.arange(20, dtype=np.float32)).reshape(5, 4)
Y = np.array([0, 2, 1, 2, 0], dtype=np.float32)

# MXNet 1.9.1: Dense(3, in_units=4), weight W0, SoftmaxCELoss, 3 SGD steps
# (lr 0.1, momentum 0.9, wd 0.01, batch 5)
MX_LOSSES = [1.2014329433441162, 1.1697864532470703, 1.1127245426177979]
MX_WEIGHT = np.array([[-0.5456568, -0.37908748, -0.27539584, -0.23849122],
                      [-0.025624864, 0.002607206, -0.017269876, 0.024442982],
                      [0.12380434, 0.22732115, 0.44182464, 0.6615255]], np.float32)
MX_BIAS = np.array([0.027873967, -0.05352081, 0.02564627], np.float32)


def _net(ctx=None):
    net = nn.Dense(3, in_units=4)
    net.initialize(ctx=ctx)
    net.weight.set_data(nd.array(W0))
    return net


def test_sgd_steps_match_mxnet():
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd",
                       {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    ce = gluon.loss.SoftmaxCELoss()
    losses = []
    for _ in range(3):
        with autograd.record():
            loss = ce(net(nd.array(X)), nd.array(Y))
        loss.backward()
        tr.step(5)
        losses.append(float(loss.mean().asscalar()))
    np.testing.assert_allclose(losses, MX_LOSSES, rtol=1e-5)
    np.testing.assert_allclose(net.weight.data().asnumpy(), MX_WEIGHT, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.data().asnumpy(), MX_BIAS, rtol=1e-5, atol=1e-6)
    assert tr.learning_rate == 0.1
    tr.set_learning_rate(0.01)
    assert tr.learning_rate == 0.01 and tr.optimizer.lr == 0.01


def test_hybridized_training_reduces_loss_like_imperative():
    results = []
    for hybrid in (False, True):
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(8, activation="relu", in_units=4), nn.Dense(3, in_units=8))
        net.initialize(mx.init.Constant(0.1))
        net[0].weight.set_data(nd.array(np.linspace(-1, 1, 32).reshape(8, 4)))
        if hybrid:
            net.hybridize()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        ce = gluon.loss.SoftmaxCELoss()
        losses = []
        for _ in range(20):
            with autograd.record():
                loss = ce(net(nd.array(X)), nd.array(Y))
            loss.backward()
            tr.step(5)
            losses.append(loss.mean().asscalar())
        assert losses[-1] < 0.7 * losses[0]
        results.append(losses)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)


@pytest.mark.parametrize("update_on_kvstore", [None, False])
def test_multi_context_sums_gradients(update_on_kvstore):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net = _net(ctxs)
    ref = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                       update_on_kvstore=update_on_kvstore)
    tr_ref = gluon.Trainer(ref.collect_params(), "sgd", {"learning_rate": 0.1})
    ce = gluon.loss.SoftmaxCELoss()
    xs = utils.split_and_load(nd.array(np.concatenate([X, X[:3]])), ctxs, even_split=False)
    ys = utils.split_and_load(nd.array(np.concatenate([Y, Y[:3]])), ctxs, even_split=False)
    assert [x.shape[0] for x in xs] == [4, 4] and xs[1].context == mx.cpu(1)
    for _ in range(2):
        with autograd.record():
            losses = [ce(net(x), y) for x, y in zip(xs, ys)]
        autograd.backward(losses)
        tr.step(8)
        with autograd.record():
            loss = ce(ref(nd.array(np.concatenate([X, X[:3]]))),
                      nd.array(np.concatenate([Y, Y[:3]])))
        loss.backward()
        tr_ref.step(8)
    assert tr._kvstore is not None and tr._update_on_kvstore == (update_on_kvstore is None)
    for ctx in ctxs:
        np.testing.assert_allclose(net.weight.data(ctx).asnumpy(), ref.weight.data().asnumpy(),
                                   rtol=1e-5, atol=1e-6)
    if update_on_kvstore is False:
        # the summed gradient landed on both contexts
        np.testing.assert_allclose(net.weight.grad(mx.cpu(0)).asnumpy(),
                                   net.weight.grad(mx.cpu(1)).asnumpy())


def test_stale_gradient_detection():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(2, in_units=4), nn.Dense(2, in_units=4))
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        tr.step(1)                  # no backward at all yet
    with autograd.record():
        loss = net[0](nd.ones((1, 4))).sum()
    loss.backward()
    with pytest.raises(UserWarning, match="dense1_(weight|bias)`"):
        tr.step(1)
    w1 = net[1].weight.data().asnumpy().copy()
    w0 = net[0].weight.data().asnumpy().copy()
    with autograd.record():
        loss = net[0](nd.ones((1, 4))).sum()
    loss.backward()
    tr.step(1, ignore_stale_grad=True)
    np.testing.assert_array_equal(net[1].weight.data().asnumpy(), w1)   # skipped
    assert not np.allclose(net[0].weight.data().asnumpy(), w0)
    with pytest.raises(UserWarning):
        tr.step(1)                  # used gradients are stale again


def test_allreduce_update_and_states(tmp_path):
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01},
                       update_on_kvstore=False)
    ce = gluon.loss.SoftmaxCELoss()
    for _ in range(2):
        with autograd.record():
            loss = ce(net(nd.array(X)), nd.array(Y))
        loss.backward()
        tr.allreduce_grads()
        grads = [p.grad() for p in net.collect_params().values()]
        utils.clip_global_norm(grads, 0.1)
        tr.update(5)
    f = str(tmp_path / "trainer.states")
    tr.save_states(f)
    w = net.weight.data().asnumpy().copy()
    tr2 = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.5})
    tr2.load_states(f)
    assert tr2.learning_rate == 0.01
    assert tr2._updaters[0].states.keys() == tr._updaters[0].states.keys()
    np.testing.assert_array_equal(net.weight.data().asnumpy(), w)
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        gluon.Trainer(3, "sgd")


def test_utils_split_clip_sha1_download(tmp_path):
    x = nd.array(np.arange(10).reshape(5, 2))
    with pytest.raises(ValueError, match="cannot be evenly split"):
        utils.split_data(x, 2)
    parts = utils.split_data(x, 2, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]
    cols = utils.split_data(nd.array(np.arange(12).reshape(2, 6)), 3, batch_axis=1)
    np.testing.assert_array_equal(cols[1].asnumpy(), [[2, 3], [8, 9]])
    a, b = nd.array([3.0, 0.0]), nd.array([[4.0]])
    norm = utils.clip_global_norm([a, b], 1.0)
    assert abs(norm - 5.0) < 1e-6
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-5)
    np.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-5)
    f = tmp_path / "f.bin"
    f.write_bytes(b"aiond")
    assert utils.check_sha1(str(f), hashlib.sha1(b"aiond").hexdigest())
    # an existing file with the right hash is not fetched again
    assert utils.download("http://example.com/f.bin", path=str(f),
                          sha1_hash=hashlib.sha1(b"aiond").hexdigest()) == str(f)
