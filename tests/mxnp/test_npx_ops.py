"""npx's deep-learning ops and npx.image as front functions: mx.npx, mx.nd.npx
and mx.sym.npx (hybridized blocks) agree with NumPy, return mx.np arrays, and
keep the legacy ops' gradients."""
import numpy as onp
import pytest

import aiond as mx
from aiond import autograd, gluon, np, npx


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


class _Fn(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, *args):
        return self._fn(F, *args)


def _both(fn, *args):
    """fn run imperatively and hybridized: the two results (as NumPy)."""
    outs = []
    for hyb in (False, True):
        net = _Fn(fn)
        if hyb:
            net.hybridize()
        res = net(*args)
        assert isinstance(res, np.ndarray)
        outs.append(res.asnumpy())
    return outs


def test_elementwise_and_special():
    x = onp.array([[-1.5, 0.25], [2.0, 0.0]], dtype=onp.float32)
    a = np.array(x)
    for imp, hyb in [_both(lambda F, v: F.npx.relu(v), a)]:
        onp.testing.assert_allclose(imp, onp.maximum(x, 0))
        onp.testing.assert_allclose(hyb, onp.maximum(x, 0))
    imp, hyb = _both(lambda F, v: F.npx.sigmoid(v), a)
    onp.testing.assert_allclose(imp, 1 / (1 + onp.exp(-x)), rtol=1e-6)
    onp.testing.assert_allclose(hyb, imp)
    import math
    imp, hyb = _both(lambda F, v: F.npx.erf(v), a)
    onp.testing.assert_allclose(imp, onp.vectorize(math.erf)(x), rtol=1e-5, atol=1e-6)
    pos = np.array([[0.5, 1.5], [2.5, 3.0]])
    onp.testing.assert_allclose(npx.gammaln(pos).asnumpy(),
                                onp.vectorize(math.lgamma)(pos.asnumpy()), rtol=1e-5)
    assert isinstance(mx.nd.npx.relu(a), np.ndarray)


def test_softmax_family_and_zero_size():
    x = onp.random.RandomState(0).randn(2, 3).astype(onp.float32)
    e = onp.exp(x - x.max(axis=-1, keepdims=True))
    want = e / e.sum(axis=-1, keepdims=True)
    imp, hyb = _both(lambda F, v: F.npx.softmax(v, axis=-1), np.array(x))
    onp.testing.assert_allclose(imp, want, rtol=1e-5)
    onp.testing.assert_allclose(hyb, want, rtol=1e-5)
    onp.testing.assert_allclose(npx.log_softmax(np.array(x)).asnumpy(), onp.log(want),
                                rtol=1e-5, atol=1e-6)
    z = np.zeros((3, 0, 4))
    z.attach_grad()
    with autograd.record():
        y = npx.softmax(z, axis=1)
    y.backward()
    assert y.shape == (3, 0, 4) and z.grad.shape == (3, 0, 4)


def test_slice_batch_dot_and_grads():
    x = onp.arange(2 * 5 * 4, dtype=onp.float32).reshape(2, 5, 4)
    a = np.array(x)
    for imp in _both(lambda F, v: F.npx.slice(v, begin=(None, 4, 1), end=(None, 0, None),
                                               step=(None, -2, 2)), a):
        onp.testing.assert_array_equal(imp, x[:, 4:0:-2, 1::2])
    a.attach_grad()
    with autograd.record():
        y = npx.slice(a, begin=(1,), end=(2,))
    y.backward()
    g = onp.zeros_like(x)
    g[1:2] = 1
    onp.testing.assert_array_equal(a.grad.asnumpy(), g)
    l, r = onp.ones((3, 2, 4), onp.float32), onp.arange(3 * 5 * 4, dtype=onp.float32).reshape(3, 5, 4)
    for out in _both(lambda F, p, q: F.npx.batch_dot(p, q, transpose_b=True), np.array(l),
                     np.array(r)):
        onp.testing.assert_allclose(out, onp.matmul(l, r.transpose(0, 2, 1)))
    with pytest.raises(mx.base.MXNetError):
        npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 5, 4)))


def test_layers():
    rs = onp.random.RandomState(1)
    x = rs.randn(4, 3).astype(onp.float32)
    w = rs.randn(5, 3).astype(onp.float32)
    b = rs.randn(5).astype(onp.float32)
    for out in _both(lambda F, d, ww, bb: F.npx.fully_connected(d, ww, bb, num_hidden=5),
                     np.array(x), np.array(w), np.array(b)):
        onp.testing.assert_allclose(out, x @ w.T + b, rtol=1e-5, atol=1e-5)
    out = npx.fully_connected(np.array(x), np.array(w), None, num_hidden=5, no_bias=True)
    onp.testing.assert_allclose(out.asnumpy(), x @ w.T, rtol=1e-5, atol=1e-5)
    gamma, beta = np.ones((3,)), np.zeros((3,))
    mean, var = np.zeros((3,)), np.ones((3,))
    out = npx.batch_norm(np.array(x), gamma, beta, mean, var, use_global_stats=True)
    onp.testing.assert_allclose(out.asnumpy(), x / onp.sqrt(1 + 1e-3), rtol=1e-5)
    with autograd.train_mode():
        y, m, s = npx.batch_norm(np.array(x), gamma, beta, mean, var, output_mean_var=True)
    onp.testing.assert_allclose(m.asnumpy(), x.mean(axis=0), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(npx.one_hot(np.array([0, 2]), 3).asnumpy(), onp.eye(3)[[0, 2]])
    onp.testing.assert_allclose(npx.pick(np.array(x), np.array([0, 2, 1, 0]), axis=1).asnumpy(),
                                x[onp.arange(4), [0, 2, 1, 0]])
    onp.testing.assert_array_equal(npx.shape_array(np.array(x)).asnumpy(), [4, 3])
    onp.testing.assert_array_equal(npx.batch_flatten(np.ones((2, 3, 4))).shape, (2, 12))
    onp.testing.assert_array_equal(npx.arange_like(np.ones((2, 3)), axis=1).asnumpy(), [0, 1, 2])
    with pytest.raises(TypeError):
        npx.fully_connected(num_hidden=5)


def test_constraint_check():
    ok = npx.constraint_check(np.ones((2, 3), dtype="bool"), "never")
    assert ok.shape == () and ok.dtype == onp.bool_ and bool(ok)
    with pytest.raises(ValueError, match="all positive"):
        npx.constraint_check(np.array([True, False], dtype="bool"), "all positive").asnumpy()
    net = _Fn(lambda F, v, c: v * F.npx.constraint_check(c, "bad mask"))
    net.hybridize()
    v = np.array([1.0, 2.0])
    onp.testing.assert_array_equal(net(v, np.array([True, True], dtype="bool")).asnumpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="bad mask"):
        net(v, np.array([True, False], dtype="bool")).asnumpy()
    with pytest.raises(mx.base.MXNetError):
        npx.constraint_check(np.ones((2,)), "not bool")


def test_nonzero():
    x = onp.array([[0, 3, 0], [4, 0, 5]], dtype=onp.float32)
    for out in _both(lambda F, v: F.npx.nonzero(v), np.array(x)):
        onp.testing.assert_array_equal(out, onp.stack(onp.nonzero(x), axis=-1))
    out = npx.nonzero(np.zeros((2, 2)))
    assert out.shape == (0, 2) and out.dtype == onp.int64


def test_image():
    img = onp.arange(4 * 6 * 3, dtype=onp.uint8).reshape(4, 6, 3)
    a = np.array(img, dtype="uint8")
    onp.testing.assert_array_equal(npx.image.flip_left_right(a).asnumpy(), img[:, ::-1])
    onp.testing.assert_array_equal(npx.image.flip_top_bottom(a).asnumpy(), img[::-1])
    t = npx.image.to_tensor(a)
    assert t.shape == (3, 4, 6) and t.dtype == onp.float32
    onp.testing.assert_allclose(t.asnumpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    n = npx.image.normalize(t, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
    onp.testing.assert_allclose(n.asnumpy(), (t.asnumpy() - 0.5) / 0.25, rtol=1e-5, atol=1e-6)
    onp.testing.assert_array_equal(npx.image.crop(a, 1, 2, 3, 2).asnumpy(), img[2:4, 1:4])
    assert npx.image.resize(a, (3, 2)).shape == (2, 3, 3)
    s = mx.sym.npx.image.flip_left_right(mx.sym.var("d").as_np_ndarray())
    assert isinstance(s, mx.sym.np._Symbol)
