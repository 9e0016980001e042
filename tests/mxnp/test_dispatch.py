"""NumPy's dispatch protocols on mx.np.ndarray (numpy_dispatch_protocol), the
NumPy fallbacks (mx.np.fallback), and mx.np.ndarray behaviours: 0-d arrays,
boolean keys, dtype spellings."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np
from aiond.base import MXNetError


def test_array_function_runs_mx_np():
    from aiond import numpy_dispatch_protocol as ndp
    x = onp.arange(6, dtype=onp.float32).reshape(2, 3)
    a = np.array(x)
    r = onp.mean(a, axis=0)
    assert isinstance(r, np.ndarray)
    onp.testing.assert_allclose(r.asnumpy(), x.mean(0))
    # the registered function is mx.np's own
    assert ndp._NUMPY_ARRAY_FUNCTION_DICT[onp.mean] is np.mean
    assert "mean" in ndp._NUMPY_ARRAY_FUNCTION_LIST and "add" in ndp._NUMPY_ARRAY_UFUNC_LIST
    r = onp.nan_to_num(np.array([onp.nan, 1.0]))
    assert isinstance(r, np.ndarray) and r.asnumpy().tolist() == [0.0, 1.0]
    assert onp.shares_memory(a[0], a[0]) and not onp.may_share_memory(a[0], a[1])


def test_array_ufunc_runs_mx_np():
    x = onp.array([[0.5, -1.0]], dtype=onp.float32)
    a = np.array(x)
    for fn in (onp.sin, onp.abs, onp.negative, onp.exp):
        r = fn(a)
        assert isinstance(r, np.ndarray) and r.dtype == onp.float32
        onp.testing.assert_allclose(r.asnumpy(), fn(x), rtol=1e-6)
    r = onp.add(a, 1)
    assert isinstance(r, np.ndarray) and r.asnumpy().tolist() == (x + 1).tolist()
    # NumPy names true_divide 'divide' and bitwise_not 'invert': still mx.np's
    assert isinstance(onp.true_divide(a, a), np.ndarray)
    i = np.array([1, 2], dtype="int32")
    assert onp.bitwise_not(i).asnumpy().tolist() == [-2, -3]
    out = np.zeros((1, 2))
    assert onp.multiply(a, 2, out=out) is out and out.asnumpy().tolist() == (x * 2).tolist()
    with pytest.raises(ValueError, match="exactly one"):
        a.__array_ufunc__(onp.add, "__call__", a, a, out=(out, out))
    assert a.__array_ufunc__(onp.add, "reduce", a) is NotImplemented


def test_fallback_to_numpy():
    x = onp.array([[1.0, 2.0], [3.0, 5.0]], dtype=onp.float32)
    a = np.array(x)
    r = onp.cov(a)          # not an mx.np function: NumPy on a copy
    assert isinstance(r, np.ndarray)
    onp.testing.assert_allclose(r.asnumpy(), onp.cov(x), rtol=1e-6)
    r = onp.float_power(a, 2)           # a ufunc mx.np lacks
    assert isinstance(r, np.ndarray) and r.asnumpy().tolist() == (x.astype(onp.float64) ** 2).tolist()
    # mx.np.fallback: NumPy's functions under mx.np, mx arrays in and out
    assert "heaviside" in np.fallback.__all__ and np.heaviside is onp.heaviside
    r = np.heaviside(a - 2, 0.5)
    assert isinstance(r, np.ndarray) and r.asnumpy().tolist() == onp.heaviside(x - 2, 0.5).tolist()
    q, rr = np.linalg.qr(a)
    assert isinstance(q, np.ndarray)
    onp.testing.assert_allclose((q.asnumpy() @ rr.asnumpy()), x, rtol=1e-5)
    # a NumPy fallback cannot be differentiated
    a.attach_grad()
    with mx.autograd.record():
        with pytest.raises(ValueError, match="autograd"):
            onp.cov(a)


def test_protocol_decorators():
    from aiond.numpy_dispatch_protocol import (with_array_function_protocol,
                                               with_array_ufunc_protocol)
    ran = []

    @with_array_function_protocol
    def ok():
        ran.append(1)
    ok()
    assert ran == [1]

    @with_array_ufunc_protocol
    def bad():
        raise KeyError("boom")
    with pytest.raises(RuntimeError, match="ufunc protocol failed"):
        bad()


def test_zero_d_arrays_and_format():
    a = np.array(onp.pi)
    assert a.shape == () and "{:0.3g}".format(a) == "3.14"
    assert np.isnan(np.array(onp.nan)).shape == ()
    with pytest.raises(TypeError):
        "{:30}".format(np.array([onp.pi]))


def test_boolean_keys():
    x = onp.arange(9, dtype=onp.int32).reshape(3, 3)
    a = np.array(x, dtype="int32")
    assert a[np.array(True, dtype=bool)].shape == (1, 3, 3)
    assert a[np.array(False, dtype=bool)].shape == (0, 3, 3)
    assert a[[True, False, True]].asnumpy().tolist() == x[[True, False, True]].tolist()
    with pytest.raises(IndexError):
        a[np.array([True, False], dtype=bool)]
    b = np.zeros((2, 3))
    b[:, None] = onp.ones((2, 1, 3))
    assert b.asnumpy().tolist() == onp.ones((2, 3)).tolist()
    b[None, 1] = np.array([5.0, 6.0, 7.0])
    assert b.asnumpy()[1].tolist() == [5.0, 6.0, 7.0]
    b[np.array(False, dtype=bool)] = 9
    assert b.asnumpy().max() == 7.0


def test_dtype_spellings():
    a = np.ones((2,))
    assert a.astype("int").dtype == onp.int64 and a.astype("float").dtype == onp.float64
    assert a.astype("l").dtype == onp.int64 and a.astype("<f4").dtype == onp.float32
    with pytest.raises(TypeError):
        a.astype("complex64")


def test_numpy_op_fallback_ops():
    from aiond.ndarray.numpy import _internal as npi
    from aiond.symbol.numpy import _internal as spi
    from aiond import numpy_op_fallback as fb
    x = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=onp.float32)
    r = npi.resize_fallback(np.array(x), new_shape=(3, 3))
    assert isinstance(r, np.ndarray) and r.asnumpy().tolist() == onp.resize(x, (3, 3)).tolist()
    u = npi.unravel_index_fallback(np.array([5.0, 7.0]), shape=(2, 4))
    assert u.asnumpy().tolist() == onp.array(onp.unravel_index([5, 7], (2, 4))).tolist()
    e = npi.empty_like_fallback(np.array(x), dtype="int32", order="C", subok=False, shape=None)
    assert e.shape == (2, 3) and e.dtype == onp.int32
    m = npi.mvn_fallback(np.zeros((3,)), np.eye(3), size=(4,))
    assert m.shape == (4, 3) and onp.isfinite(m.asnumpy()).all()
    with pytest.raises(MXNetError, match="same length"):
        npi.mvn_fallback(np.zeros((2,)), np.eye(3))
    s = spi.resize_fallback(mx.sym.var("x").as_np_ndarray(), new_shape=(4,))
    assert isinstance(s, mx.sym.np._Symbol)
    out = s.as_nd_ndarray().eval(x=mx.nd.array([1, 2, 3]))[0]
    assert out.asnumpy().tolist() == [1.0, 2.0, 3.0, 1.0]
    with pytest.raises(ValueError, match="Duplicate"):
        fb.register("resize_fallback")(fb.ResizeProp)
    # the _npi_* ops by their short names, on arrays and on symbols
    assert npi.sin(np.array([0.0])).asnumpy().tolist() == [0.0]
    assert spi.exp(mx.sym.var("y").as_np_ndarray()).tojson().count("_npi_exp") == 1
    with pytest.raises(AttributeError):
        npi.no_such_operator
