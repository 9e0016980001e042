"""mx.nd's module-level arithmetic: array/array -> broadcast op, array/scalar
-> scalar op (either side), scalar/scalar -> Python, as MXNet's _ufunc_helper."""
import operator

import numpy as np
import pytest

import aiond as mx

A = np.array([[1., -2., 3.], [4., 5., -6.]], dtype=np.float32)
B = np.array([[2., 2., -1.]], dtype=np.float32)

CASES = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("true_divide", np.divide), ("maximum", np.maximum),
    ("minimum", np.minimum), ("power", lambda a, b: np.power(np.abs(a), b)),
    ("equal", np.equal), ("not_equal", np.not_equal), ("greater", np.greater),
    ("greater_equal", np.greater_equal), ("lesser", np.less), ("lesser_equal", np.less_equal),
    ("logical_and", np.logical_and), ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor), ("modulo", np.mod),
]


@pytest.mark.parametrize("name,ref", CASES)
def test_array_array_array_scalar_scalar_array(name, ref):
    fn = getattr(mx.nd, name)
    a = np.abs(A) if name == "power" else A
    want = ref(a, B).astype(np.float32)
    np.testing.assert_allclose(fn(mx.nd.array(a), mx.nd.array(B)).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(fn(mx.nd.array(a), 2.0).asnumpy(), ref(a, np.float32(2)).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(fn(3.0, mx.nd.array(np.abs(a) + 1)).asnumpy(),
                               ref(np.float32(3), np.abs(a) + 1).astype(np.float32), rtol=1e-6)


def test_scalar_scalar_is_python_and_bad_type_raises():
    assert mx.nd.add(2, 3) == 5 and mx.nd.maximum(2, 7) == 7 and mx.nd.greater(3, 1) == 1
    with pytest.raises(TypeError, match="not supported"):
        mx.nd.add(mx.nd.ones((2,)), np.ones(2))


def test_moveaxis_and_onehot_encode():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(mx.nd.moveaxis(mx.nd.array(x), 0, -1).asnumpy(), np.moveaxis(x, 0, -1))
    np.testing.assert_array_equal(mx.nd.moveaxis(mx.nd.array(x), [0, 1], [2, 0]).asnumpy(),
                                  np.moveaxis(x, [0, 1], [2, 0]))
    with pytest.raises(ValueError):
        mx.nd.moveaxis(mx.nd.array(x), 3, 0)
    out = mx.nd.zeros((3, 4))
    r = mx.nd.onehot_encode(mx.nd.array([1, 0, 3]), out)
    assert r is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4, dtype=np.float32)[[1, 0, 3]])
