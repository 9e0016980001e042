"""mx.np's elementwise functions (unary math, predicates, rounding, bitwise,
lcm, ldexp, clip, nan_to_num): values and dtypes against NumPy, the same
front function on Symbols (a hybridized block), gradients, bad input."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np
from aiond.base import MXNetError
from aiond.gluon import HybridBlock


class _Fn(HybridBlock):
    def __init__(self, name, *args, **kwargs):
        super().__init__()
        self._name, self._args, self._kwargs = name, args, kwargs

    def hybrid_forward(self, F, *xs):
        return getattr(F.np, self._name)(*xs, *self._args, **self._kwargs)


def _both(name, *arrays, **kwargs):
    """(imperative result, hybridized result) of mx.np.<name>."""
    res = getattr(np, name)(*arrays, **kwargs)
    with mx.util.np_shape(True), mx.util.np_array(True):
        net = _Fn(name, **kwargs)
        net.hybridize()
        hyb = net(*arrays)
    return res, hyb


_X = onp.array([[0.3, -0.7, 0.5], [0.9, -0.2, 0.1]], dtype=onp.float32)
_UNARY = {
    "negative": _X, "absolute": _X, "sign": _X, "square": _X, "sqrt": abs(_X) + 0.1,
    "cbrt": _X, "reciprocal": _X + 2, "exp": _X, "expm1": _X, "log": abs(_X) + 0.1,
    "log2": abs(_X) + 0.1, "log10": abs(_X) + 0.1, "log1p": abs(_X), "sin": _X, "cos": _X,
    "tan": _X, "arcsin": _X, "arccos": _X, "arctan": _X, "sinh": _X, "cosh": _X, "tanh": _X,
    "arcsinh": _X, "arccosh": abs(_X) + 1.5, "arctanh": _X, "degrees": _X, "radians": _X,
    "rad2deg": _X, "deg2rad": _X, "floor": _X * 5, "ceil": _X * 5, "trunc": _X * 5,
    "fix": _X * 5,
}


@pytest.mark.parametrize("name", sorted(_UNARY))
def test_unary_values_nd_and_sym(name):
    x = _UNARY[name]
    expect = getattr(onp, name)(x)
    res, hyb = _both(name, np.array(x))
    assert isinstance(res, np.ndarray) and isinstance(hyb, np.ndarray)
    assert res.dtype == onp.float32 and hyb.dtype == onp.float32
    onp.testing.assert_allclose(res.asnumpy(), expect, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(hyb.asnumpy(), expect, rtol=1e-5, atol=1e-6)


_GRADS = {
    "exp": lambda x: onp.exp(x), "log": lambda x: 1 / x, "sqrt": lambda x: 0.5 / onp.sqrt(x),
    "sin": lambda x: onp.cos(x), "tanh": lambda x: 1 - onp.tanh(x) ** 2,
    "arcsin": lambda x: 1 / onp.sqrt(1 - x ** 2), "reciprocal": lambda x: -1 / x ** 2,
    "absolute": lambda x: onp.sign(x), "cbrt": lambda x: 1 / (3 * onp.cbrt(x) ** 2),
    "degrees": lambda x: onp.full(x.shape, 180 / onp.pi), "floor": lambda x: 0 * x,
}


@pytest.mark.parametrize("name", sorted(_GRADS))
@pytest.mark.parametrize("hybridize", [False, True])
def test_unary_gradients(name, hybridize):
    x = _UNARY[name]
    a = np.array(x)
    a.attach_grad()
    net = _Fn(name)
    if hybridize:
        net.hybridize()
    with mx.util.np_shape(True), mx.util.np_array(True):
        with mx.autograd.record():
            y = net(a)
        y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), _GRADS[name](x), rtol=1e-4, atol=1e-5)


def test_unary_dtype_rules():
    i = np.array([1, 4, 9], dtype="int32")
    # float math on integers gives float32; sign/abs/square/rounding keep the dtype
    assert np.sqrt(i).dtype == onp.float32
    onp.testing.assert_allclose(np.sqrt(i).asnumpy(), [1, 2, 3])
    for name in ("negative", "absolute", "sign", "square", "floor", "rint", "fix"):
        assert getattr(np, name)(i).dtype == onp.int32, name
    assert np.square(i).asnumpy().tolist() == [1, 16, 81]
    assert np.negative(np.array([True, False], dtype=bool)).dtype == onp.float32
    # a Python number gives NumPy's own scalar result
    assert np.sin(1.0) == onp.sin(1.0) and isinstance(np.exp(0), onp.floating)
    assert np.add(1, 2) == 3 and isinstance(np.add(1, 2), onp.integer)
    # MXNet's rint rounds halves down (its documented example)
    assert np.rint(np.array([-1.5, 1.5, 2.5])).asnumpy().tolist() == [-2.0, 1.0, 2.0]


def test_ufunc_keyword_checks():
    a = np.ones((2,))
    for kw in ({"where": False}, {"subok": False}, {"dtype": onp.int8}, {"casting": "safe"},
               {"order": "C"}):
        with pytest.raises(NotImplementedError):
            np.sin(a, **kw)
        with pytest.raises(NotImplementedError):
            np.add(a, a, **kw)
    for kw in ({"dtype": "abcdefg"}, {"casting": "mxnet"}, {"bogus": 1}):
        with pytest.raises(TypeError):
            np.exp(a, **kw)
    # the defaults are accepted
    assert np.exp(a, casting="same_kind", order="K", where=True).shape == (2,)
    with pytest.raises(TypeError, match="not supported"):
        np.sin("1.0")


def test_out_argument():
    a = np.array([1.0, 4.0])
    out = np.zeros((2,))
    r = np.sqrt(a, out=out)
    assert r is out and out.asnumpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="boolean"):
        np.isnan(a, out=np.zeros((2,)))


def test_predicates():
    x = onp.array([onp.nan, onp.inf, -onp.inf, 1.0, -0.0], dtype=onp.float16)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
        res, hyb = _both(name, np.array(x, dtype="float16"))
        assert res.dtype == onp.bool_ and hyb.dtype == onp.bool_
        assert res.asnumpy().tolist() == getattr(onp, name)(x).tolist(), name
        assert hyb.asnumpy().tolist() == getattr(onp, name)(x).tolist(), name
    i = np.array([1, 2], dtype="int32")
    assert np.isnan(i).asnumpy().tolist() == [False, False]
    assert np.isfinite(i).asnumpy().tolist() == [True, True]
    res, hyb = _both("logical_not", np.array([0.0, 2.0]))
    assert res.asnumpy().tolist() == [True, False] == hyb.asnumpy().tolist()


def test_bitwise_lcm_ldexp():
    a = onp.array([[-5, 3, 12]], dtype=onp.int32)
    b = onp.array([[6], [-4]], dtype=onp.int32)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "lcm"):
        res, hyb = _both(name, np.array(a, dtype="int32"), np.array(b, dtype="int32"))
        assert res.dtype == onp.int32 and res.shape == (2, 3)
        assert res.asnumpy().tolist() == getattr(onp, name)(a, b).tolist(), name
        assert hyb.asnumpy().tolist() == getattr(onp, name)(a, b).tolist(), name
        assert getattr(np, name)(np.array(a, dtype="int32"), 6).asnumpy().tolist() == \
            getattr(onp, name)(a, 6).tolist()
    x = np.array(a, dtype="int32")
    assert (x & 6).asnumpy().tolist() == (a & 6).tolist()
    assert (3 | x).asnumpy().tolist() == (3 | a).tolist()
    assert (~x).asnumpy().tolist() == (~a).tolist()
    assert np.bitwise_not(x).asnumpy().tolist() == np.invert(x).asnumpy().tolist()
    t = np.array([True, False], dtype=bool)
    assert (t ^ t).dtype == onp.bool_ and (~t).asnumpy().tolist() == [False, True]
    with pytest.raises(MXNetError, match="bitwise_and"):
        np.bitwise_and(np.ones((2,)), np.ones((2,)))
    with pytest.raises(MXNetError, match="lcm"):
        np.lcm(np.ones((2,)), np.ones((2,)))
    f = onp.array([1.5, -2.0, 3.0], dtype=onp.float32)
    e = onp.array([1, 2, -1], dtype=onp.int32)
    r = np.ldexp(np.array(f), np.array(e, dtype="int32"))
    assert r.dtype == onp.float32
    onp.testing.assert_allclose(r.asnumpy(), onp.ldexp(f, e))
    onp.testing.assert_allclose(np.ldexp(np.array(f), 3).asnumpy(), onp.ldexp(f, 3))
    onp.testing.assert_allclose(np.ldexp(2.0, np.array(f)).asnumpy(), 2.0 * 2 ** f)


def test_scalar_forms_and_their_gradients():
    x = onp.array([0.5, -1.5, 2.0], dtype=onp.float32)
    for name, s, fn in (("copysign", -1.0, onp.copysign), ("arctan2", 2.0, onp.arctan2),
                        ("hypot", 3.0, onp.hypot)):
        a = np.array(x)
        a.attach_grad()
        with mx.autograd.record():
            y = getattr(np, name)(a, s)
        y.backward()
        onp.testing.assert_allclose(y.asnumpy(), fn(x, s), rtol=1e-6)
        eps = 1e-3
        num = (fn(x.astype(onp.float64) + eps, s) - fn(x.astype(onp.float64) - eps, s)) / (2 * eps)
        onp.testing.assert_allclose(a.grad.asnumpy(), num, rtol=1e-3, atol=1e-4)
    onp.testing.assert_allclose(np.arctan2(1.0, np.array(x)).asnumpy(), onp.arctan2(1.0, x),
                                rtol=1e-6)


def test_binary_gradients_arctan2_copysign():
    x1 = onp.array([[0.5, -1.0], [2.0, 0.3]], dtype=onp.float32)
    x2 = onp.array([[1.5, 0.7]], dtype=onp.float32)
    for hybridize in (False, True):
        a, b = np.array(x1), np.array(x2)
        a.attach_grad()
        b.attach_grad()
        net = _Fn("arctan2")
        if hybridize:
            net.hybridize()
        with mx.util.np_shape(True), mx.util.np_array(True):
            with mx.autograd.record():
                y = net(a, b)
            y.backward()
        d = x1 ** 2 + x2 ** 2
        onp.testing.assert_allclose(a.grad.asnumpy(), x2 / d, rtol=1e-5)
        onp.testing.assert_allclose(b.grad.asnumpy(), (-x1 / d).sum(0, keepdims=True), rtol=1e-5)
    a, b = np.array(x1), np.array(-x2)
    a.attach_grad()
    with mx.autograd.record():
        y = np.copysign(a, b)
    y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.where(x1 * -x2 >= 0, 1.0, -1.0))


def test_around_round():
    x = onp.array([0.5, 1.5, 2.5, -0.5, 1234.5678, -0.125], dtype=onp.float64)
    for d in (-2, -1, 0, 1, 2):
        res, hyb = _both("around", np.array(x, dtype="float64"), decimals=d)
        onp.testing.assert_allclose(res.asnumpy(), onp.around(x, d))
        onp.testing.assert_allclose(hyb.asnumpy(), onp.around(x, d))
    i = onp.array([1250, 1350, -1250, 1260], dtype=onp.int32)
    r = np.round(np.array(i, dtype="int32"), -2)
    assert r.dtype == onp.int32 and r.asnumpy().tolist() == onp.around(i, -2).tolist()
    assert np.round_(np.array(i, dtype="int32"), 1).asnumpy().tolist() == i.tolist()
    assert np.array(x).round(1).asnumpy().tolist() == onp.around(x, 1).tolist()
    assert np.around(2.675, 2) == onp.around(2.675, 2)


def test_nan_to_num():
    x = onp.array([onp.nan, onp.inf, -onp.inf, -3.0, 2.0], dtype=onp.float32)
    res, hyb = _both("nan_to_num", np.array(x))
    onp.testing.assert_array_equal(res.asnumpy(), onp.nan_to_num(x))
    onp.testing.assert_array_equal(hyb.asnumpy(), onp.nan_to_num(x))
    r = np.nan_to_num(np.array(x), nan=1.0, posinf=10.0, neginf=-10.0)
    assert r.asnumpy().tolist() == [1.0, 10.0, -10.0, -3.0, 2.0]
    a = np.array(x)
    assert np.nan_to_num(a, copy=False) is a and a.asnumpy().tolist() == onp.nan_to_num(x).tolist()
    i = np.array([1, 2], dtype="int32")
    assert np.nan_to_num(i) is i
    g = np.array(x)
    g.attach_grad()
    with mx.autograd.record():
        y = np.nan_to_num(g) * 2
    y.backward()
    assert g.grad.asnumpy().tolist() == [0.0, 0.0, 0.0, 2.0, 2.0]


def test_clip():
    x = onp.array([[-2.0, 0.5], [3.0, 0.1]], dtype=onp.float32)
    for lo, hi in ((0.0, 1.0), (None, 0.2), (0.3, None)):
        onp.testing.assert_allclose(np.clip(np.array(x), lo, hi).asnumpy(), onp.clip(x, lo, hi))
        onp.testing.assert_allclose(np.array(x).clip(lo, hi).asnumpy(), onp.clip(x, lo, hi))

    class Clip(HybridBlock):
        def hybrid_forward(self, F, a):
            return a.clip(None, 0.2)
    net = Clip()
    net.hybridize()
    with mx.util.np_shape(True), mx.util.np_array(True):
        onp.testing.assert_allclose(net(np.array(x)).asnumpy(), onp.clip(x, None, 0.2))
    with pytest.raises(ValueError, match="either max or min"):
        np.clip(np.array(x), None, None)
    assert np.clip(0.7, 0.0, 0.5) == 0.5
    lo = np.array([[0.0], [1.0]])
    onp.testing.assert_allclose(np.clip(np.array(x), lo, 2.0).asnumpy(),
                                onp.clip(x, lo.asnumpy(), 2.0))
    a = np.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = np.clip(a, 0.0, 1.0)
    y.backward()
    assert a.grad.asnumpy().tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_shares_memory():
    x = np.zeros((4, 5))
    assert not np.shares_memory(x[0], x[1])
    assert np.may_share_memory(x[1:3], x[2])
    assert not np.shares_memory(x, np.zeros((4, 5)))
    assert not np.shares_memory(x, np.ones((5, 0)))
