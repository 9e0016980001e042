"""SpatialTransformer: identity/zoom warps and finite-difference gradients."""
import numpy as np

import aiond as mx


def _stn(x, loc, target):
    return mx.nd.SpatialTransformer(mx.nd.array(x, dtype='float64'),
                                    mx.nd.array(loc, dtype='float64'), target_shape=target,
                                    transform_type='affine', sampler_type='bilinear')


def test_identity_and_zoom():
    x = np.random.RandomState(0).rand(2, 3, 9, 9)
    ident = np.array([[1, 0, 0, 0, 1, 0]] * 2, dtype=np.float64)
    np.testing.assert_allclose(_stn(x, ident, (9, 9)).asnumpy(), x, atol=1e-12)
    zoom = np.array([[0.5, 0, 0, 0, 0.5, 0]] * 2, dtype=np.float64)
    np.testing.assert_allclose(_stn(x, zoom, (5, 5)).asnumpy(), x[:, :, 2:7, 2:7], atol=1e-12)


def test_gradients_by_finite_differences():
    rng = np.random.RandomState(1)
    x = rng.rand(1, 2, 5, 6)
    loc = np.array([[0.8, 0.1, 0.05, -0.1, 0.9, 0.02]])
    og = rng.uniform(-1, 1, (1, 2, 4, 3))
    xs, ls = mx.nd.array(x, dtype='float64'), mx.nd.array(loc, dtype='float64')
    xs.attach_grad()
    ls.attach_grad()
    with mx.autograd.record():
        y = mx.nd.SpatialTransformer(xs, ls, target_shape=(4, 3), transform_type='affine',
                                     sampler_type='bilinear')
    y.backward(mx.nd.array(og, dtype='float64'))

    def f(xx, ll):
        return float((_stn(xx, ll, (4, 3)).asnumpy() * og).sum())
    for k, (val, grad) in enumerate(((x, xs.grad), (loc, ls.grad))):
        num = np.zeros(val.size)
        for i in range(val.size):
            up, dn = val.copy(), val.copy()
            up.flat[i] += 1e-7
            dn.flat[i] -= 1e-7
            num[i] = ((f(up, loc) - f(dn, loc)) if k == 0 else (f(x, up) - f(x, dn))) / 2e-7
        np.testing.assert_allclose(grad.asnumpy().ravel(), num, rtol=1e-4, atol=1e-6)
