"""mx.np / mx.npx: NumPy semantics checked against numpy itself."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np, npx
from aiond.base import MXNetError


def test_creation_defaults_and_zero_dim():
    a = np.ones((2, 3))
    assert isinstance(a, np.ndarray) and isinstance(a, mx.nd.NDArray)
    assert a.dtype == onp.float32 and a.shape == (2, 3)
    assert np.zeros(()).shape == () and np.zeros(()).item() == 0.0
    assert np.zeros((0, 3)).asnumpy().shape == (0, 3)
    assert np.array([1, 2]).dtype == onp.float32
    assert np.array(onp.array([1, 2], dtype=onp.int64)).dtype == onp.int64
    assert np.full((2,), True).dtype == onp.bool_
    assert np.arange(5).asnumpy().tolist() == [0, 1, 2, 3, 4]
    assert np.eye(3, dtype="int32").asnumpy().tolist() == onp.eye(3, dtype=onp.int32).tolist()
    with pytest.raises(ValueError):
        np.array(mx.nd.ones((2,)))


def test_binary_promotion_and_comparisons():
    i = np.array([1, 2, 3], dtype="int32")
    f = np.array([0.5, 1.5, 2.5])
    assert (i + f).dtype == onp.float32
    assert (i / 2).dtype == onp.float32
    onp.testing.assert_allclose((i / 2).asnumpy(), [0.5, 1.0, 1.5])
    assert (i + 1).dtype == onp.int32 and (i + 1.5).dtype == onp.float32
    c = i > 1
    assert c.dtype == onp.bool_ and c.asnumpy().tolist() == [False, True, True]
    assert (2 - i).asnumpy().tolist() == [1, 0, -1]
    assert (2 < i).asnumpy().tolist() == [False, False, True]
    onp.testing.assert_allclose(np.power(f, 2).asnumpy(), f.asnumpy() ** 2)
    onp.testing.assert_allclose((f % 1).asnumpy(), onp.mod(f.asnumpy(), 1))


def test_reductions_give_0d():
    x = onp.arange(12, dtype=onp.float32).reshape(3, 4)
    a = np.array(x)
    assert a.sum().shape == () and a.sum().item() == x.sum()
    onp.testing.assert_allclose(np.mean(a, axis=1).asnumpy(), x.mean(axis=1))
    onp.testing.assert_allclose(a.max(axis=0, keepdims=True).asnumpy(), x.max(0, keepdims=True))
    onp.testing.assert_allclose(np.std(a, axis=0).asnumpy(), x.std(axis=0), rtol=1e-6)
    assert np.argmax(a).item() == 11 and np.argmax(a).dtype == onp.int64
    assert np.mean(np.array([1, 2], dtype="int32")).dtype == onp.float32


def test_reshape_numpy_rules():
    a = np.ones((10, 10))
    assert a.reshape((-1,)).shape == (100,)
    assert a.reshape(4, 25).shape == (4, 25)
    with pytest.raises(MXNetError):
        a.reshape((1,))
    with pytest.raises(MXNetError):
        np.reshape(a, (-1, 3))
    assert np.zeros((0, 4)).reshape((4, 0)).shape == (4, 0)


def test_indexing_drops_axes():
    x = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    a = np.array(x)
    assert a[1, 2].shape == () and a[1, 2].item() == 5.0
    assert a[1].shape == (3,)
    assert a[a > 2].asnumpy().tolist() == x[x > 2].tolist()
    a[0, 0] = 9
    a[1] = np.array([7, 7, 7])
    assert a.asnumpy().tolist() == [[9, 1, 2], [7, 7, 7]]


def test_autograd_through_np_ops():
    x = np.array([[1., 2.], [3., 4.]])
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward()
    assert isinstance(x.grad, np.ndarray)
    onp.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy())
    with mx.autograd.record():
        z = np.reshape(x, (4,)).mean()
    z.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.full((2, 2), 0.25))


def test_shape_functions_match_numpy():
    x = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
    a = np.array(x)
    onp.testing.assert_allclose(np.transpose(a).asnumpy(), x.T)
    onp.testing.assert_allclose(np.swapaxes(a, 0, 2).asnumpy(), onp.swapaxes(x, 0, 2))
    onp.testing.assert_allclose(np.concatenate([a, a], axis=2).asnumpy(),
                                onp.concatenate([x, x], axis=2))
    onp.testing.assert_allclose(np.stack([a, a], axis=1).asnumpy(), onp.stack([x, x], axis=1))
    onp.testing.assert_allclose(np.matmul(a, np.array(x.transpose(0, 2, 1))).asnumpy(),
                                onp.matmul(x, x.transpose(0, 2, 1)))
    onp.testing.assert_allclose(np.dot(a, np.ones((4,))).asnumpy(), x.dot(onp.ones(4)))
    assert [s.shape for s in np.split(a, 3, axis=1)] == [(2, 1, 4)] * 3
    onp.testing.assert_allclose(np.where(a > 5, a, 0).asnumpy(), onp.where(x > 5, x, 0))
    onp.testing.assert_allclose(np.tile(a, 2).asnumpy(), onp.tile(x, 2))
    onp.testing.assert_allclose(np.squeeze(np.ones((1, 3, 1))).asnumpy(), onp.ones(3))


def test_random_numpy_style():
    mx.random.seed(7)
    u = np.random.uniform(size=(1000,))
    v = u.asnumpy()
    assert u.dtype == onp.float32 and v.min() >= 0 and v.max() < 1
    assert np.random.uniform().shape == ()
    r = np.random.randint(3, 6, size=(50,))
    assert r.dtype == onp.int64 and set(r.asnumpy().tolist()) <= {3, 4, 5}
    n = np.random.normal(np.zeros((3,)), 1.0)
    assert n.shape == (3,)
    c = np.random.choice(4, size=(5,), replace=True)
    assert c.shape == (5,) and c.asnumpy().max() < 4
    for name in ("uniform", "normal", "randint", "choice"):
        with pytest.raises(TypeError):
            getattr(np.random, name)(shape=())
    mx.random.seed(3)
    a = np.random.normal(size=(4,)).asnumpy()
    mx.random.seed(3)
    assert (np.random.normal(size=(4,)).asnumpy() == a).all()


def test_views_and_npx():
    nd = mx.nd.ones((2, 2))
    a = nd.as_np_ndarray()
    a[0, 0] = 5
    assert nd.asnumpy()[0, 0] == 5
    assert type(a.as_nd_ndarray()) is mx.nd.NDArray
    assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert repr(np.array([1.5, 2])) == "array([1.5, 2. ])"
    onp.testing.assert_allclose(npx.relu(np.array([-1., 2.])).asnumpy(), [0., 2.])
    assert isinstance(npx.softmax(np.ones((2, 3))), np.ndarray)
    npx.set_np()
    try:
        assert npx.is_np_array() and mx.is_np_shape()
    finally:
        npx.reset_np()
    assert not npx.is_np_array()
