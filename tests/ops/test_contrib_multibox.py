"""SSD's MultiBoxPrior / MultiBoxTarget / MultiBoxDetection (mx.nd.contrib and
npx.multibox_*), against outputs recorded from MXNet 1.9.1 on the same inputs."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np, npx

ANCHORS = onp.array([[[0., 0., 0.5, 0.5], [-0.25, 0.125, 0.75, 0.375],
                      [0.5, 0., 1., 0.5], [0.25, 0.125, 1.25, 0.375],
                      [0., 0.5, 0.5, 1.], [-0.25, 0.625, 0.75, 0.875],
                      [0.5, 0.5, 1., 1.], [0.25, 0.625, 1.25, 0.875]]], onp.float32)
LABEL = onp.array([[[1, 0.1, 0.1, 0.45, 0.45], [0, 0.5, 0.55, 1.0, 0.95],
                    [-1, -1, -1, -1, -1]]], onp.float32)


def test_prior():
    a = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2)), sizes=(0.5,), ratios=(1, 4))
    onp.testing.assert_allclose(a.asnumpy(), ANCHORS, atol=1e-6)
    c = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((2, 3, 4, 5)), sizes=(0.9,), ratios=(1, 3),
                                    clip=True, steps=(0.2, 0.3), offsets=(0.2, 0.7))
    assert c.shape == (1, 40, 4) and c.asnumpy().min() >= 0 and c.asnumpy().max() <= 1
    onp.testing.assert_allclose(c.asnumpy()[0, 0], [0, 0, 0.57, 0.49], atol=1e-6)
    assert isinstance(npx.multibox_prior(np.zeros((1, 1, 3, 3)), sizes=(0.2, 0.1)), np.ndarray)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 3, 4)))


def test_target():
    cls_pred = mx.nd.array(onp.linspace(-1, 1, 24).reshape(1, 3, 8))
    loc_t, loc_m, cls_t = mx.nd.contrib.MultiBoxTarget(
        mx.nd.array(ANCHORS), mx.nd.array(LABEL), cls_pred, negative_mining_ratio=1)
    want_t = onp.zeros(32, onp.float32)
    want_t[:4] = [0.5, 0.5, -1.783375, -1.783375]
    want_t[27] = -1.115718
    onp.testing.assert_allclose(loc_t.asnumpy()[0], want_t, atol=1e-5)
    want_m = onp.zeros(32, onp.float32)
    want_m[:4] = want_m[24:28] = 1
    onp.testing.assert_array_equal(loc_m.asnumpy()[0], want_m)
    onp.testing.assert_array_equal(cls_t.asnumpy()[0], [2, 0, -1, 0, -1, -1, 1, -1])
    # without mining every unmatched anchor is a negative
    _, _, c = mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABEL), cls_pred)
    onp.testing.assert_array_equal(c.asnumpy()[0], [2, 0, 0, 0, 0, 0, 1, 0])
    outs = npx.multibox_target(np.array(ANCHORS), np.array(LABEL), np.array(cls_pred.asnumpy()))
    assert len(outs) == 3 and all(isinstance(o, np.ndarray) for o in outs)
    with pytest.raises(mx.base.MXNetError):
        mx.nd.contrib.MultiBoxTarget(mx.nd.array(ANCHORS), mx.nd.array(LABEL),
                                     mx.nd.zeros((1, 3, 7)))


def test_detection():
    cls_prob = mx.nd.array([[[0.1, 0.2, 0.9, 0.3], [0.8, 0.7, 0.05, 0.1],
                             [0.1, 0.1, 0.05, 0.6]]])
    anc = mx.nd.array([[[0.1, 0.1, 0.5, 0.5], [0.12, 0.12, 0.52, 0.52], [0.5, 0.5, 0.9, 0.9],
                        [0.11, 0.1, 0.5, 0.5]]])
    d = mx.nd.contrib.MultiBoxDetection(cls_prob, mx.nd.zeros((1, 16)), anc, nms_threshold=0.5)
    onp.testing.assert_allclose(d.asnumpy()[0], [[0, 0.8, 0.1, 0.1, 0.5, 0.5],
                                                 [-1, 0.7, 0.12, 0.12, 0.52, 0.52],
                                                 [1, 0.6, 0.11, 0.1, 0.5, 0.5],
                                                 [0, 0.05, 0.5, 0.5, 0.9, 0.9]], atol=1e-6)
    d = mx.nd.contrib.MultiBoxDetection(cls_prob, mx.nd.zeros((1, 16)), anc, nms_threshold=0.5,
                                        force_suppress=True)
    onp.testing.assert_array_equal(d.asnumpy()[0, :, 0], [0, -1, -1, 0])
    s = mx.sym.npx.multibox_detection(*(mx.sym.var(n).as_np_ndarray() for n in "cla"))
    assert s.list_arguments() == ["c", "l", "a"]
