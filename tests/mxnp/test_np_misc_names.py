"""mx.np names beyond the operators: product/sometrue, genfromtxt,
set_printoptions and ndarray.reshape_view, as MXNet 1.9.1 has them."""
import io

import numpy as onp
import pytest

import aiond as mx
from aiond import np


def test_product_and_sometrue_are_prod_and_any():
    a = np.array([[1, 2], [3, 4]])
    onp.testing.assert_array_equal(np.product(a, axis=0).asnumpy(), [3, 8])
    assert bool(np.sometrue(np.array([0, 0, 1])))
    assert not bool(np.sometrue(np.zeros(3)))
    x = mx.sym.var("x").as_np_ndarray()
    y = mx.sym.np.product(x, axis=1).as_nd_ndarray()
    onp.testing.assert_array_equal(y.eval(x=mx.nd.array([[2, 3], [4, 5]]))[0].asnumpy(), [6, 20])


def test_genfromtxt_reads_text_into_an_array():
    a = np.genfromtxt(io.StringIO("1,2\n3,4"), delimiter=",")
    assert isinstance(a, np.ndarray) and a.dtype == onp.float64
    onp.testing.assert_array_equal(a.asnumpy(), [[1, 2], [3, 4]])
    assert mx.np.io.genfromtxt is np.genfromtxt


def test_set_printoptions_takes_precision_and_threshold_only():
    old = onp.get_printoptions()
    try:
        np.set_printoptions(precision=3)
        assert "1.123" in str(np.array([1.123456])) and "1.1234" not in str(np.array([1.123456]))
        with pytest.raises(NotImplementedError):
            np.set_printoptions(linewidth=10)
    finally:
        onp.set_printoptions(**old)


def test_reshape_view_shares_the_buffer():
    a = np.arange(6)
    v = a.reshape_view((2, 3))
    assert v.shape == (2, 3)
    v[0, 0] = 7
    assert float(a[0]) == 7
