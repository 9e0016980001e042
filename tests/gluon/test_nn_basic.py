"""gluon.nn basic layers and activations against numpy."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import nn

RS = np.random.RandomState(0)


def _run(layer, x, hybrid):
    if hybrid:
        layer.hybridize()
    return layer(nd.array(x)).asnumpy()


@pytest.mark.parametrize("hybrid", [False, True])
def test_dense(hybrid):
    x = RS.randn(4, 3, 2).astype(np.float32)
    d = nn.Dense(5, activation="relu", weight_initializer=mx.init.Normal(1.0),
                 bias_initializer=mx.init.Constant(0.5))
    d.initialize()
    y = _run(d, x, hybrid)
    w, b = d.weight.data().asnumpy(), d.bias.data().asnumpy()
    assert w.shape == (5, 6)
    np.testing.assert_allclose(y, np.maximum(x.reshape(4, 6).dot(w.T) + b, 0), rtol=1e-5,
                               atol=1e-6)
    d2 = nn.Dense(5, flatten=False, use_bias=False, in_units=2)
    d2.initialize()
    assert d2.bias is None and list(d2.params.keys()) == [d2.prefix + "weight"]
    y2 = _run(d2, x, hybrid)
    np.testing.assert_allclose(y2, x.dot(d2.weight.data().asnumpy().T), rtol=1e-5, atol=1e-6)
    assert repr(d2) == "Dense(2 -> 5, linear)"


@pytest.mark.parametrize("hybrid", [False, True])
def test_activations(hybrid):
    x = RS.randn(3, 4).astype(np.float32)
    sig = 1 / (1 + np.exp(-x))
    cases = [
        (nn.Activation("relu"), np.maximum(x, 0)),
        (nn.Activation("sigmoid"), sig),
        (nn.Activation("tanh"), np.tanh(x)),
        (nn.Activation("softrelu"), np.log1p(np.exp(x))),
        (nn.LeakyReLU(0.1), np.where(x > 0, x, 0.1 * x)),
        (nn.ELU(0.5), np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
        (nn.SELU(), 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
        (nn.Swish(2.0), x / (1 + np.exp(-2 * x))),
    ]
    for layer, expected in cases:
        np.testing.assert_allclose(_run(layer, x, hybrid), expected, rtol=1e-5, atol=1e-6,
                                   err_msg=repr(layer))
    from math import erf
    gelu = nn.GELU()
    np.testing.assert_allclose(_run(gelu, x, hybrid),
                               0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2))), rtol=1e-4,
                               atol=1e-5)
    p = nn.PReLU(in_channels=1)
    p.initialize()
    np.testing.assert_allclose(_run(p, x, hybrid), np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    assert repr(nn.Activation("relu")) == "Activation(relu)"


@pytest.mark.parametrize("hybrid", [False, True])
def test_dropout(hybrid):
    x = np.ones((200, 50), np.float32)
    d = nn.Dropout(0.5)
    if hybrid:
        d.hybridize()
    np.testing.assert_array_equal(d(nd.array(x)).asnumpy(), x)    # predict: identity
    with autograd.record():
        y = d(nd.array(x)).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    da = nn.Dropout(0.5, axes=(1,))
    with autograd.record():
        ya = da(nd.array(x)).asnumpy()
    assert (ya == ya[:, :1]).all()      # one mask value per row
    assert repr(d) == "Dropout(p = 0.5, axes=())"
    z = nn.Dropout(0.0)
    with autograd.record():
        np.testing.assert_array_equal(z(nd.array(x)).asnumpy(), x)


@pytest.mark.parametrize("hybrid", [False, True])
def test_batchnorm_training_and_running_stats(hybrid):
    x = RS.randn(6, 3, 2).astype(np.float32) * 2 + 1
    bn = nn.BatchNorm(momentum=0.8, epsilon=1e-5)
    bn.initialize()
    if hybrid:
        bn.hybridize()
    xa = nd.array(x)
    xa.attach_grad()
    with autograd.record():
        y = bn(xa)
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2))
    ref = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    y.backward()            # MXNet's CPU build updates the running stats in backward
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.2 * mean, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), 0.8 + 0.2 * var, rtol=1e-4)
    assert bn.running_mean.grad_req == "null" and bn.gamma.grad_req == "write"
    pred = bn(xa).asnumpy()
    rm, rv = bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()
    np.testing.assert_allclose(pred, (x - rm[None, :, None]) / np.sqrt(rv[None, :, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)
    assert bn.gamma.shape == (3,)
    assert repr(bn).endswith("use_global_stats=False, in_channels=3)")
    bn2 = nn.BatchNorm(axis=-1, scale=False, center=False, in_channels=2)
    assert bn2.gamma.grad_req == "null" and bn2.beta.grad_req == "null"
    bn2.initialize()
    with autograd.record():
        y2 = bn2(nd.array(x)).asnumpy()
    m2, v2 = x.mean(axis=(0, 1)), x.var(axis=(0, 1))
    np.testing.assert_allclose(y2, (x - m2) / np.sqrt(v2 + 1e-5), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybrid", [False, True])
def test_layernorm_instancenorm_groupnorm(hybrid):
    x = RS.randn(2, 3, 4).astype(np.float32)
    ln = nn.LayerNorm()
    ln.initialize()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(_run(ln, x, hybrid), ref, rtol=1e-4, atol=1e-5)
    assert ln.gamma.shape == (4,)
    inn = nn.InstanceNorm(in_channels=3, center=True, beta_initializer=mx.init.Constant(1.0))
    inn.initialize()
    ref = (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5) + 1
    np.testing.assert_allclose(_run(inn, x, hybrid), ref, rtol=1e-4, atol=1e-5)
    inn2 = nn.InstanceNorm(axis=2)
    inn2.initialize()
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(_run(inn2, x, hybrid), ref, rtol=1e-4, atol=1e-5)
    assert inn2.gamma.shape == (4,)
    gn = nn.GroupNorm(num_groups=1)
    gn.initialize()
    xm = x.reshape(2, -1)
    ref = ((xm - xm.mean(1, keepdims=True)) / np.sqrt(xm.var(1, keepdims=True) + 1e-5))
    np.testing.assert_allclose(_run(gn, x, hybrid), ref.reshape(x.shape), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybrid", [False, True])
def test_embedding_flatten_lambdas(hybrid):
    emb = nn.Embedding(10, 4)
    emb.initialize()
    idx = np.array([[1, 2], [9, 0]], np.float32)
    out = _run(emb, idx, hybrid)
    w = emb.weight.data().asnumpy()
    np.testing.assert_array_equal(out, w[idx.astype(int)])
    assert repr(emb) == "Embedding(10 -> 4, float32)"
    xa = nd.array(idx)
    with autograd.record():
        y = emb(xa).sum()
    y.backward()
    g = np.zeros((10, 4), np.float32)
    for i in idx.astype(int).ravel():
        g[i] += 1
    np.testing.assert_array_equal(emb.weight.grad().asnumpy(), g)
    x = RS.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_array_equal(_run(nn.Flatten(), x, hybrid), x.reshape(2, 12))
    np.testing.assert_allclose(_run(nn.HybridLambda("tanh"), x, hybrid), np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(_run(nn.HybridLambda(lambda F, a: F.relu(a) + 1), x, hybrid),
                               np.maximum(x, 0) + 1)
    np.testing.assert_allclose(nn.Lambda("exp")(nd.array(x)).asnumpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(nn.Lambda(lambda a: a * 3)(nd.array(x)).asnumpy(), x * 3)
    with pytest.raises(ValueError):
        nn.Lambda(3)


def test_sequential_mlp_trains_imperative():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(8, activation="relu"), nn.Dense(1))
    net.initialize(mx.init.Xavier())
    rs = np.random.RandomState(5)
    x = rs.randn(64, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    tr = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    l2 = gluon.loss.L2Loss()
    losses = []
    for _ in range(30):
        with autograd.record():
            loss = l2(net(nd.array(x)), nd.array(y))
        loss.backward()
        tr.step(64)
        losses.append(loss.mean().asscalar())
    assert losses[-1] < losses[0] * 0.5
