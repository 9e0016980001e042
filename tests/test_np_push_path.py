"""mx.np operators' direct push path (multiarray._bin / _inplace, np_ops'
kernels): same results, dtypes and errors as the front functions, NumPy's."""
import warnings

import numpy as np
import pytest

import aiond as mx


def _pair(dt1="float32", dt2="float32", s1=(2, 3), s2=(2, 3)):
    rs = np.random.RandomState(0)
    a = (rs.rand(*s1) * 10).astype(dt1)
    b = (rs.rand(*s2) * 10 + 1).astype(dt2)
    return a, b


@pytest.mark.parametrize("op", ["__add__", "__sub__", "__mul__", "__truediv__", "__mod__",
                                "__pow__", "__lt__", "__eq__"])
@pytest.mark.parametrize("dts", [("float32", "float32"), ("int32", "float32"),
                                 ("int64", "int64"), ("float16", "float64")])
def test_binary_arrays(op, dts):
    a, b = _pair(*dts)
    r = getattr(mx.np.array(a, dtype=a.dtype), op)(mx.np.array(b, dtype=b.dtype))
    assert type(r) is mx.np.ndarray
    ref = getattr(a, op)(b)
    if op == "__truediv__" and ref.dtype.kind == "f" and a.dtype.kind in "iu" \
            and b.dtype.kind in "iu":
        ref = ref.astype(np.float32)     # MXNet: integer true_divide gives float32
    elif a.dtype.kind != b.dtype.kind and ref.dtype.kind == "f":
        ref = ref.astype(a.dtype if a.dtype.kind == "f" else b.dtype)
    assert r.dtype == ref.dtype, (r.dtype, ref.dtype)
    np.testing.assert_allclose(r.asnumpy().astype(np.float64), ref.astype(np.float64),
                               rtol=2e-3)


def test_broadcast_and_shape_error():
    a, b = _pair(s1=(4, 1, 3), s2=(2, 3))
    r = mx.np.array(a) + mx.np.array(b)
    np.testing.assert_allclose(r.asnumpy(), a + b, rtol=1e-6)
    with pytest.raises(Exception, match="broadcast"):
        mx.np.ones((2, 3)) + mx.np.ones((4,))


@pytest.mark.parametrize("sc", [2, 2.5, -3])
def test_scalar_both_sides(sc):
    a, _ = _pair()
    x = mx.np.array(a)
    for got, ref in ((x + sc, a + np.float32(sc)), (sc + x, np.float32(sc) + a),
                     (x - sc, a - np.float32(sc)), (sc - x, np.float32(sc) - a),
                     (x * sc, a * np.float32(sc)), (x / sc, a / np.float32(sc)),
                     (sc / x, np.float32(sc) / a), (x ** 2, a ** 2), (x % sc, a % np.float32(sc))):
        assert type(got) is mx.np.ndarray and got.dtype == np.float32
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    i = mx.np.array([1, 2, 3], dtype="int32")
    assert (i + 1).dtype == np.int32 and (i + 1.5).dtype == np.float32
    np.testing.assert_allclose((i + 1.5).asnumpy(), [2.5, 3.5, 4.5])
    f16 = mx.np.array([1, 2], dtype="float16")
    assert (f16 * 3.0).dtype == np.float16


def test_float_errors_silent():
    x = mx.np.array([1.0, 0.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = (x / 0.0).asnumpy()
        r2 = (x / mx.np.zeros(3)).asnumpy()
        r3 = (mx.np.array([3e38], dtype="float32") * 10.0).asnumpy()
    assert np.isinf(r[0]) and np.isnan(r[1]) and np.isinf(r2[2]) and np.isinf(r3[0])


def test_inplace():
    a, b = _pair()
    x = mx.np.array(a)
    y = x
    x += mx.np.array(b)
    assert x is y
    np.testing.assert_allclose(x.asnumpy(), a + b, rtol=1e-6)
    x *= 2
    x -= 0.5
    x /= mx.np.array(b)
    np.testing.assert_allclose(x.asnumpy(), ((a + b) * 2 - 0.5) / b, rtol=1e-5)
    z = mx.np.array(a)
    z += mx.np.array(b[0])              # broadcasting rhs
    np.testing.assert_allclose(z.asnumpy(), a + b[0], rtol=1e-6)
    v = mx.np.array(a)
    view = v[0]
    v += 1.0
    np.testing.assert_allclose(view.asnumpy(), a[0] + 1, rtol=1e-6)


def test_inplace_dtype_and_shape_errors():
    i = mx.np.array([1, 2, 3], dtype="int32")
    with pytest.raises(TypeError, match="Cannot cast"):
        i += 1.5
    with pytest.raises(TypeError, match="Cannot cast"):
        i /= 2
    i += 2
    assert i.dtype == np.int32 and i.asnumpy().tolist() == [3, 4, 5]
    f = mx.np.ones((3,))
    with pytest.raises(Exception):
        f += mx.np.ones((2, 3))         # the result does not fit in f
    with pytest.raises(TypeError, match="Cannot cast"):
        i += mx.np.ones((3,))


def test_autograd_through_fast_path():
    a, b = _pair()
    x, y = mx.np.array(a), mx.np.array(b)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = (x * y + 2.0) / y - 1.0 * x
        s = z.sum()
    s.backward()
    # z = x + 2/y - x  -> dz/dx = 0, dz/dy = -2/y^2
    np.testing.assert_allclose(x.grad.asnumpy(), np.zeros_like(a), atol=1e-5)
    np.testing.assert_allclose(y.grad.asnumpy(), -2 / b ** 2, rtol=1e-4, atol=1e-5)
