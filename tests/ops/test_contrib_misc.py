"""softmin, amp_cast, all_finite, rcbrt, batch_take, moments, depth/space,
split_v2, histogram and the small contrib ops, against numpy."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmin_forward_backward():
    x = np.random.uniform(-2, 2, (3, 4)).astype(np.float32)
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.softmin(a, axis=1)
    np.testing.assert_allclose(y.asnumpy(), _softmax(-x, 1), rtol=1e-5)
    head = np.random.normal(size=x.shape).astype(np.float32)
    y.backward(mx.nd.array(head))
    s = _softmax(-x, 1)
    expect = -(s * (head - (head * s).sum(1, keepdims=True)))
    np.testing.assert_allclose(a.grad.asnumpy(), expect, rtol=1e-4, atol=1e-6)


def test_amp_cast_and_all_finite_and_rcbrt():
    x = mx.nd.array([1.0, 8.0])
    assert mx.nd.amp_cast(x, dtype="float16").dtype == np.float16
    assert mx.nd.amp_cast(x.astype("float64"), dtype="float16").dtype == np.float64
    assert mx.nd.all_finite(x).asnumpy().tolist() == [1.0]
    assert mx.nd.multi_all_finite(x, mx.nd.array([np.inf]), num_arrays=2).asnumpy()[0] == 0
    np.testing.assert_allclose(mx.nd.rcbrt(x).asnumpy(), [1.0, 0.5])


def test_batch_take_clips_and_index_copy_grads():
    a = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    assert mx.nd.batch_take(a, mx.nd.array([2, 7], dtype="int32")).asnumpy().tolist() == [3, 6]
    x = mx.nd.zeros((3, 2))
    t = mx.nd.array([[1, 2]])
    x.attach_grad()
    t.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.index_copy(x, mx.nd.array([1], dtype="int64"), t)
    out.backward()
    assert out.asnumpy().tolist() == [[0, 0], [1, 2], [0, 0]]
    assert x.grad.asnumpy().tolist() == [[1, 1], [0, 0], [1, 1]]
    assert t.grad.asnumpy().tolist() == [[1, 1]]


def test_moments_and_gradient():
    x = np.random.uniform(-1, 1, (3, 4, 5))
    m, v = mx.nd.moments(mx.nd.array(x, dtype="float64"), axes=(0, 2), keepdims=True)
    np.testing.assert_allclose(m.asnumpy(), x.mean(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(v.asnumpy(), x.var(axis=(0, 2), keepdims=True))
    d = mx.sym.Variable("data")
    mo = mx.sym.moments(d, axes=(1,))
    mx.test_utils.check_numeric_gradient(mo[0] + mo[1], [x], numeric_eps=1e-3,
                                         rtol=1e-2, atol=1e-4)


def test_depth_space_roundtrip_and_errors():
    x = np.arange(2 * 8 * 2 * 3, dtype=np.float32).reshape(2, 8, 2, 3)
    y = mx.nd.depth_to_space(mx.nd.array(x), 2)
    t = x.reshape(2, 2, 2, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(2, 2, 4, 6)
    np.testing.assert_array_equal(y.asnumpy(), t)
    np.testing.assert_array_equal(mx.nd.space_to_depth(y, 2).asnumpy(), x)
    with pytest.raises(MXNetError):
        mx.nd.depth_to_space(mx.nd.array(x), 3)
    with pytest.raises(MXNetError):
        mx.nd.space_to_depth(mx.nd.array(x), 0)


def test_split_v2_nd_and_sym():
    x = np.arange(12.0).reshape(3, 4)
    parts = mx.nd.split_v2(mx.nd.array(x), (1, 3), axis=1)
    for p, e in zip(parts, np.split(x, (1, 3), axis=1)):
        np.testing.assert_array_equal(p.asnumpy(), e)
    s = mx.sym.split_v2(mx.sym.Variable("data"), 3, axis=0, squeeze_axis=True)
    outs = s.eval(data=mx.nd.array(x))
    assert [o.shape for o in outs] == [(4,), (4,), (4,)]


def test_histogram_matches_numpy():
    x = np.random.normal(size=200)
    c, e = mx.nd.histogram(mx.nd.array(x, dtype="float64"), bins=5, range=(-2, 2))
    nc, ne = np.histogram(x, 5, range=(-2, 2))
    assert c.dtype == np.int64
    np.testing.assert_array_equal(c.asnumpy(), nc)
    np.testing.assert_allclose(e.asnumpy(), ne)
    b = mx.nd.array([-1.0, 0.0, 3.0], dtype="float64")
    c2, _ = mx.nd.histogram(mx.nd.array(x, dtype="float64"), bins=b)
    np.testing.assert_array_equal(c2.asnumpy(), np.histogram(x, b.asnumpy())[0])


def test_contrib_small_ops():
    x = np.random.normal(size=(2, 3, 4))
    np.testing.assert_allclose(mx.nd.contrib.div_sqrt_dim(mx.nd.array(x)).asnumpy(),
                               x / 2.0, rtol=1e-6)
    np.testing.assert_allclose(mx.nd.contrib.quadratic(mx.nd.array(x), a=2, b=3, c=1).asnumpy(),
                               2 * x * x + 3 * x + 1, rtol=1e-5, atol=1e-5)
    a = mx.nd.array(x)
    assert mx.nd.contrib.allclose(a, a).asnumpy() == 1
    assert mx.nd.contrib.allclose(a, a + 1).asnumpy() == 0
    ia = mx.nd.contrib.index_array(mx.nd.ones((2, 3)), axes=(1,))
    assert ia.dtype == np.int64 and ia.shape == (2, 3, 1)
    assert ia.asnumpy()[..., 0].tolist() == [[0, 1, 2], [0, 1, 2]]


def test_zeros_like_passes_a_zero_gradient():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2 + mx.nd.zeros_like(x) + mx.nd.ones_like(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]


def test_kernel_index_error_is_mxnet_error_and_index_error():
    # MXNet's error registry raises a kernel's IndexError as IndexError
    data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
    out = mx.nd.gather_nd(data, mx.nd.array([[0, 1, 0], [0, 1, 3]]))
    with pytest.raises(IndexError) as e:
        out.asnumpy()
    assert isinstance(e.value, MXNetError)


def test_symbol_attrs_with_numpy_ints():
    shape = tuple(np.array([3, 4]))
    s = mx.sym.ravel_multi_index(mx.sym.Variable("a"), shape=shape)
    assert s.list_attr()["shape"] == "(3, 4)"
    out = s.eval(a=mx.nd.array([[1, 2], [3, 0]]))[0]
    assert out.asnumpy().tolist() == [7, 8]
