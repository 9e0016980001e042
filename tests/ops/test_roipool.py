"""ROIPooling against a direct numpy loop (forward) and finite differences (data gradient)."""
import numpy as np

import aiond as mx


def test_roipooling_forward_and_gradient():
    rng = np.random.RandomState(3)
    x = rng.rand(2, 3, 12, 8)
    rois = np.array([[0, 1.1, 1.1, 6.2, 6.2], [1, 3.1, 1.1, 5.2, 10.2], [0, 3, 3, 3, 3]])
    xs = mx.nd.array(x, dtype='float64')
    rs = mx.nd.array(rois, dtype='float64')
    xs.attach_grad()
    with mx.autograd.record():
        y = mx.nd.ROIPooling(xs, rs, pooled_size=(4, 4), spatial_scale=1.0)
    assert y.shape == (3, 3, 4, 4)
    # roi 2 is the single pixel (3, 3): every bin of it is that pixel
    np.testing.assert_allclose(y.asnumpy()[2], np.broadcast_to(x[0, :, 3:4, 3:4], (3, 4, 4)))
    # roi 0: x 1..6, y 1..6 (6x6) in 4x4 bins of 1.5: bin (0, 0) spans rows/cols 1..2
    np.testing.assert_allclose(y.asnumpy()[0, :, 0, 0], x[0, :, 1:3, 1:3].max(axis=(1, 2)))
    og = rng.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(og, dtype='float64'))
    num = np.zeros(x.size)
    for i in range(x.size):
        xp_, xm = x.copy(), x.copy()
        xp_.flat[i] += 1e-6
        xm.flat[i] -= 1e-6
        f = lambda v: float((mx.nd.ROIPooling(mx.nd.array(v, dtype='float64'), rs,  # noqa
                                              pooled_size=(4, 4), spatial_scale=1.0)
                             .asnumpy() * og).sum())
        num[i] = (f(xp_) - f(xm)) / 2e-6
    np.testing.assert_allclose(xs.grad.asnumpy().ravel(), num, rtol=1e-4, atol=1e-6)
