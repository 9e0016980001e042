"""Crop and _rnn_param_concat (MXNet's legacy ops); expected values are numpy
slices, which MXNet 1.9.1 was checked to give on the same inputs."""
import numpy as np
import pytest

import aiond as mx


def _x():
    return np.random.RandomState(0).randn(2, 3, 7, 9).astype("float32")


def test_crop_to_h_w_at_offset_and_its_gradient():
    x = _x()
    a = mx.nd.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Crop(a, h_w=(3, 4), offset=(2, 3))
    y.backward(mx.nd.ones(y.shape) * 2)
    np.testing.assert_array_equal(y.asnumpy(), x[:, :, 2:5, 3:7])
    g = np.zeros_like(x)
    g[:, :, 2:5, 3:7] = 2
    np.testing.assert_array_equal(a.grad.asnumpy(), g)


def test_crop_like_centre_and_symbol_shapes():
    x = _x()
    like = mx.nd.zeros((1, 1, 4, 5))
    y = mx.nd.Crop(mx.nd.array(x), like, center_crop=True)
    np.testing.assert_array_equal(y.asnumpy(), x[:, :, 1:5, 2:7])
    s = mx.sym.Crop(mx.sym.var("a"), mx.sym.var("b"), num_args=2)
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3, 7, 9), b=(1, 1, 4, 5))[1] == [(2, 3, 4, 5)]
    ex = s.bind(mx.cpu(), {"a": mx.nd.array(x), "b": like})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), x[:, :, :4, :5])


def test_crop_bad_input():
    with pytest.raises(mx.base.MXNetError, match="h_w"):
        mx.nd.Crop(mx.nd.array(_x()), h_w=(8, 4)).wait_to_read()
    with pytest.raises(mx.base.MXNetError, match="4-d"):
        mx.nd.Crop(mx.nd.zeros((3, 7, 9)), h_w=(2, 2)).wait_to_read()
    with pytest.raises(mx.base.MXNetError, match="offset"):
        mx.nd.Crop(mx.nd.array(_x()), h_w=(3, 4), offset=(5, 0)).wait_to_read()


def test_rnn_param_concat_is_concat_with_its_gradient():
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0])
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        r = mx.nd._internal._rnn_param_concat(a, b, dim=0)
    r.backward(mx.nd.array([4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(r.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(a.grad.asnumpy(), [4, 5])
    np.testing.assert_array_equal(b.grad.asnumpy(), [6])
    s = mx.sym._internal._rnn_param_concat(mx.sym.var("p"), mx.sym.var("q"), dim=0)
    assert s.infer_shape(p=(2,), q=(5,))[1] == [(7,)]
