"""``mx.gluon.contrib.nn`` (MXNet 1.9.1's contrib layers): Concurrent,
HybridConcurrent, Identity, SyncBatchNorm and PixelShuffle1D/2D/3D against
numpy, imperative and hybridized."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import aiond as mx
from aiond.gluon import nn
from aiond.gluon.contrib import nn as cnn

nd = mx.nd
RNG = np.random.RandomState(2)


@pytest.mark.parametrize("hybrid", [False, True])
def test_concurrent_and_identity(hybrid):
    cls = cnn.HybridConcurrent if hybrid else cnn.Concurrent
    net = cls(axis=1)
    with net.name_scope():
        net.add(nn.Dense(3, use_bias=False))
        net.add(cnn.Identity())
        net.add(nn.Dense(2, use_bias=False))
    net.initialize(mx.init.One())
    if hybrid:
        net.hybridize()
    x = RNG.rand(4, 5).astype(np.float32)
    y = net(nd.array(x)).asnumpy()
    s = x.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, np.concatenate([np.repeat(s, 3, 1), x, np.repeat(s, 2, 1)],
                                                 axis=1), rtol=1e-5)
    assert mx.gluon.contrib.nn.Identity()(nd.array(x)).asnumpy().tolist() == x.tolist()


@pytest.mark.parametrize("hybrid", [False, True])
def test_pixel_shuffle(hybrid):
    x1 = RNG.rand(2, 6, 5).astype(np.float32)
    x2 = RNG.rand(2, 12, 3, 4).astype(np.float32)
    x3 = RNG.rand(1, 16, 2, 3, 2).astype(np.float32)
    layers = [cnn.PixelShuffle1D(3), cnn.PixelShuffle2D((2, 3)), cnn.PixelShuffle3D(2)]
    for l in layers:
        if hybrid:
            l.hybridize()
    y1 = layers[0](nd.array(x1)).asnumpy()
    y2 = layers[1](nd.array(x2)).asnumpy()
    y3 = layers[2](nd.array(x3)).asnumpy()
    # out[n, c, w*f + i] = in[n, c*f + i, w]
    np.testing.assert_array_equal(
        y1, x1.reshape(2, 2, 3, 5).transpose(0, 1, 3, 2).reshape(2, 2, 15))
    np.testing.assert_array_equal(
        y2, x2.reshape(2, 2, 2, 3, 3, 4).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 12))
    np.testing.assert_array_equal(
        y3, x3.reshape(1, 2, 2, 2, 2, 2, 3, 2).transpose(0, 1, 5, 2, 6, 3, 7, 4)
        .reshape(1, 2, 4, 6, 4))
    assert repr(layers[1]) == "PixelShuffle2D((2, 3))"


@pytest.mark.parametrize("hybrid", [False, True])
def test_sync_batch_norm_layer_matches_batch_norm(hybrid):
    x = RNG.rand(4, 3, 5, 5).astype(np.float32)
    results = []
    for make in (lambda: cnn.SyncBatchNorm(in_channels=3, num_devices=1),
                 lambda: nn.BatchNorm(in_channels=3)):
        layer = make()
        layer.initialize()
        if hybrid:
            layer.hybridize()
        a = nd.array(x)
        a.attach_grad()
        with mx.autograd.record():
            y = layer(a)
        y.backward()
        results.append((y.asnumpy(), a.grad.asnumpy(), layer.running_mean.data().asnumpy(),
                        layer(nd.array(x)).asnumpy()))
    for u, v in zip(*results):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    assert sorted(cnn.SyncBatchNorm(num_devices=1).collect_params().keys())[0].endswith("beta")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cnn.SyncBatchNorm()
    assert any("num_devices" in str(x.message) for x in w)


def test_gluon_contrib_namespace():
    assert mx.gluon.contrib.nn.HybridConcurrent is cnn.HybridConcurrent
    assert mx.gluon.contrib.data.IntervalSampler is mx.gluon.data.sampler.IntervalSampler
    assert cnn.SparseEmbedding is mx.gluon.contrib.nn.basic_layers.SparseEmbedding   # issue 31
