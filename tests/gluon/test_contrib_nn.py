"""gluon.contrib.nn: Concurrent / HybridConcurrent / Identity, SyncBatchNorm
(the _contrib_SyncBatchNorm op) and the pixel shuffles."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.base import MXNetError
from aiond.gluon import nn
from aiond.gluon.contrib import nn as cnn


@pytest.mark.parametrize("hybrid", [False, True])
def test_concurrent_concatenates_children(hybrid):
    net = cnn.HybridConcurrent(axis=1) if hybrid else cnn.Concurrent(axis=1)
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.Dense(2, in_units=4), cnn.Identity())
    net.initialize()
    if hybrid:
        net.hybridize()
    x = nd.array(np.random.RandomState(0).randn(5, 4))
    y = net(x)
    kids = list(net._children.values())
    want = np.concatenate([kids[0](x).asnumpy(), kids[1](x).asnumpy(), x.asnumpy()], axis=1)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5)
    assert y.shape == (5, 9)


def test_pixel_shuffle_shapes_and_values():
    x = nd.array(np.arange(1 * 8 * 3).reshape(1, 8, 3))
    y = cnn.PixelShuffle1D(2)(x).asnumpy()
    assert y.shape == (1, 4, 6)
    np.testing.assert_array_equal(y[0, 0], [0, 3, 1, 4, 2, 5])
    x2 = np.arange(12 * 3 * 5).reshape(1, 12, 3, 5).astype(np.float32)
    y2 = cnn.PixelShuffle2D((2, 3))(nd.array(x2)).asnumpy()
    want = x2.reshape(1, 2, 2, 3, 3, 5).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 6, 15)
    np.testing.assert_array_equal(y2, want)
    assert cnn.PixelShuffle3D((2, 3, 4))(nd.zeros((1, 48, 3, 5, 7))).shape == (1, 2, 6, 15, 28)
    x3 = np.random.RandomState(1).randn(1, 8, 2, 2, 2).astype(np.float32)
    y3 = cnn.PixelShuffle3D(2)(nd.array(x3)).asnumpy()
    want3 = x3.reshape(1, 1, 2, 2, 2, 2, 2, 2).transpose(0, 1, 5, 2, 6, 3, 7, 4).reshape(1, 1, 4, 4, 4)
    np.testing.assert_array_equal(y3, want3)


@pytest.mark.parametrize("shape", [(8, 3), (6, 3, 4), (4, 3, 2, 5)])
@pytest.mark.parametrize("scale", [True, False])
def test_sync_batchnorm_matches_batchnorm(shape, scale):
    rng = np.random.RandomState(2)
    x = rng.randn(*shape).astype(np.float32) * 2 + 1
    bn = nn.BatchNorm(in_channels=3, scale=scale)
    sbn = cnn.SyncBatchNorm(in_channels=3, num_devices=1, scale=scale)
    for b in (bn, sbn):
        b.initialize()
        if scale:
            b.gamma.set_data(nd.array([0.5, 1.5, 2.0]))
        b.beta.set_data(nd.array([0.1, -0.2, 0.3]))
    outs, grads = [], []
    for b in (bn, sbn):
        xi = nd.array(x)
        xi.attach_grad()
        with autograd.record():
            y = b(xi)
            (y * y * nd.arange(y.size).reshape(y.shape)).sum().backward()
        outs.append(y.asnumpy())
        grads.append((xi.grad.asnumpy(), b.beta.grad().asnumpy())
                     + ((b.gamma.grad().asnumpy(),) if scale else ()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
    for g1, g0 in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g1, g0, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(sbn.running_mean.data().asnumpy(),
                               bn.running_mean.data().asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sbn.running_var.data().asnumpy(),
                               bn.running_var.data().asnumpy(), rtol=1e-4, atol=1e-6)
    # prediction uses the moving statistics
    np.testing.assert_allclose(sbn(nd.array(x)).asnumpy(), bn(nd.array(x)).asnumpy(),
                               rtol=1e-4, atol=1e-5)


def test_sync_batchnorm_outputs_and_symbol():
    x = nd.array(np.random.RandomState(3).randn(4, 2, 3))
    g, b = nd.ones(2), nd.zeros(2)
    mm, mv = nd.zeros(2), nd.ones(2)
    with autograd.train_mode():
        y, mean, var = nd.contrib.SyncBatchNorm(x, g, b, mm, mv, key="k", output_mean_var=True,
                                                fix_gamma=False, eps=1e-5)
    xn = x.asnumpy()
    np.testing.assert_allclose(mean.asnumpy(), xn.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), xn.var(axis=(0, 2)), rtol=1e-4)
    s = mx.sym.contrib.SyncBatchNorm(mx.sym.var("data"), key="k", name="sbn")
    assert s.list_arguments() == ["data", "sbn_gamma", "sbn_beta"]
    assert s.list_auxiliary_states() == ["sbn_moving_mean", "sbn_moving_var"]
    net = cnn.SyncBatchNorm(num_devices=1)
    net.initialize()
    net.hybridize()
    assert net(nd.ones((2, 5, 3))).shape == (2, 5, 3)
    assert net.gamma.shape == (5,)


def test_sync_batchnorm_many_devices_is_refused():
    with pytest.raises(MXNetError, match="ndev=2 is not supported"):
        nd.contrib.SyncBatchNorm(nd.ones((2, 2)), nd.ones(2), nd.zeros(2), nd.zeros(2),
                                 nd.ones(2), key="k", ndev=2)
    assert "contrib" in dir(gluon)
