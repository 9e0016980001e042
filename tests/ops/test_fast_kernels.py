"""The fast numpy paths of aiond/ops/_fast.py and the one-op gradients
built on them.

ReLU and Activation's gradient (``_backward_Activation``) are bit for bit
what the plain numpy formulas give, on the values where fast paths usually
go wrong (NaNs of both signs, signed zeros, infinities), across chunk
edges, dtypes and layouts; the gradient's own gradient (second order)
matches calculus. The channel sum behind convolution bias gradients
(``_backward_Convolution_bias``) and BatchNorm's statistics matches a
float64 sum."""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.ops import _fast

nd = mx.nd
SPECIALS = np.array([-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.5, -2.25])


def _values(n, dtype, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randn(n).astype(dtype)
    x[:len(SPECIALS)] = SPECIALS.astype(dtype)
    x[-len(SPECIALS):] = SPECIALS.astype(dtype)     # the last chunk's tail too
    return x


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.dtype("u%d" % a.dtype.itemsize))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("n", [10, 4095, 4096, _fast._CHUNK, _fast._CHUNK * 2 + 77])
def test_relu_into_is_bitwise_the_scalar_maximum(dtype, n):
    x = _values(n, dtype)
    want = np.maximum(x, x.dtype.type(0))
    out = np.empty_like(x)
    _fast.relu_into(np, x, out)
    assert np.array_equal(_bits(out), _bits(want))
    _fast.relu_into(np, x, x)               # in place
    assert np.array_equal(_bits(x), _bits(want))


def test_relu_into_on_strided_and_integer_inputs():
    x = _values(3 * 5000, "float32").reshape(3, 5000)
    v = x[:, ::2]
    out = np.empty(v.shape, np.float32)
    _fast.relu_into(np, v, out)
    assert np.array_equal(_bits(out), _bits(np.maximum(v, np.float32(0))))
    i = np.arange(-5000, 5000, dtype=np.int32)
    oi = np.empty_like(i)
    _fast.relu_into(np, i, oi)
    assert np.array_equal(oi, np.maximum(i, 0))


@pytest.mark.parametrize("op", ["Activation", "relu"])
def test_relu_ops_on_a_large_array_match_numpy(op):
    x = _values(300_000, "float32").reshape(300, 1000)
    y = nd.Activation(nd.array(x), act_type="relu") if op == "Activation" else nd.relu(nd.array(x))
    assert np.array_equal(_bits(y.asnumpy()), _bits(np.maximum(x, np.float32(0))))


def _composed_grad(t, g, y):
    """The formulas the gradient used to be built from, op by op (float rounding
    after each op, in the arrays' dtype)."""
    one = y.dtype.type(1)
    if t == "relu":     # MXNet's relu_grad: NaN where y is NaN, else y > 0
        return g * np.where(np.isnan(y), y, (y > 0).astype(y.dtype))
    if t == "sigmoid":
        return (g * y) * (one - y)
    return g * (one - y * y)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_backward_activation_equals_the_composed_formula_bitwise(act, dtype):
    n = 300_000                         # big enough to be split across workers
    x = _values(n, dtype, seed=1)
    g = _values(n, dtype, seed=2)[::-1].copy()
    y = nd.Activation(nd.array(x, dtype=dtype), act_type=act)
    got = nd._internal._backward_Activation(nd.array(g, dtype=dtype), y, act_type=act)
    with np.errstate(all="ignore"):
        want = _composed_grad(act, g, y.asnumpy())
    assert got.dtype == np.dtype(dtype)
    if act == "relu":       # times 0, 1 or NaN: no rounding; a zero's sign may differ
        np.testing.assert_array_equal(got.asnumpy(), want)
    else:
        assert np.array_equal(_bits(got.asnumpy()), _bits(want))


@pytest.mark.parametrize("form", ["Activation", "unary op"])
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_activation_gradient_through_autograd(act, form):
    x = np.linspace(-3, 3, 13).astype(np.float64)
    xa = nd.array(x, dtype="float64")
    xa.attach_grad()
    with mx.autograd.record():
        y = nd.Activation(xa, act_type=act) if form == "Activation" else getattr(nd, act)(xa)
    y.backward(nd.array(np.full(13, 0.5), dtype="float64"))
    if act == "relu":
        d = (x > 0).astype(np.float64)
    elif act == "sigmoid":
        s = 1 / (1 + np.exp(-x))
        d = s * (1 - s)
    else:
        d = 1 - np.tanh(x) ** 2
    np.testing.assert_allclose(xa.grad.asnumpy(), 0.5 * d, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("form", ["Activation", "unary op"])
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_second_order_gradient_of_activation(act, form):
    x = np.array([-1.7, -0.4, 0.3, 0.9, 2.2])
    xa = nd.array(x, dtype="float64")
    xa.attach_grad()
    with mx.autograd.record():
        y = nd.Activation(xa, act_type=act) if form == "Activation" else getattr(nd, act)(xa)
        (dx,) = mx.autograd.grad([y], [xa], create_graph=True)
        z = (dx * dx).sum()
    z.backward()
    if act == "relu":
        d1, d2 = (x > 0) * 1.0, np.zeros_like(x)
    elif act == "sigmoid":
        s = 1 / (1 + np.exp(-x))
        d1 = s * (1 - s)
        d2 = d1 * (1 - 2 * s)
    else:
        t = np.tanh(x)
        d1 = 1 - t * t
        d2 = -2 * t * d1
    np.testing.assert_allclose(dx.asnumpy(), d1, rtol=1e-12)
    np.testing.assert_allclose(xa.grad.asnumpy(), 2 * d1 * d2, rtol=1e-10, atol=1e-15)


def test_symbolic_activation_backward_uses_the_same_gradient():
    data = mx.sym.Variable("data")
    net = mx.sym.Activation(data, act_type="tanh")
    x = np.random.RandomState(3).randn(4, 6).astype(np.float32)
    ex = net.simple_bind(mx.cpu(), data=x.shape)
    ex.arg_dict["data"][:] = x
    ex.forward(is_train=True)
    head = np.random.RandomState(4).randn(4, 6).astype(np.float32)
    ex.backward(nd.array(head))
    y = np.tanh(x)
    want = head * (np.float32(1) - y * y)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_backward_activation_refuses_mismatched_shapes():
    with pytest.raises(mx.base.MXNetError, match=r"ograd has shape \(2, 3\) but the output"):
        nd._internal._backward_Activation(nd.ones((2, 3)), nd.ones((3, 2)), act_type="relu")


@pytest.mark.parametrize("shape", [(64, 20, 24, 24), (3, 5, 7), (2, 3, 4, 5, 6), (4, 6, 2, 3)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_channel_sum_matches_a_float64_sum(shape, dtype):
    a = np.random.RandomState(5).randn(*shape).astype(dtype)
    out = np.empty(shape[1], dtype)
    _fast.channel_sum(np, a, out)
    want = a.astype(np.float64).sum(axis=(0,) + tuple(range(2, a.ndim)))
    tol = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    scale = np.abs(a.astype(np.float64)).sum() / shape[1]
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=tol, atol=tol * scale)


def test_channel_sum_of_a_strided_view():
    a = np.random.RandomState(6).randn(4, 3, 40, 40).astype(np.float32)[:, :, ::2, ::2]
    out = np.empty(3, np.float32)
    _fast.channel_sum(np, a, out)
    np.testing.assert_allclose(out, a.sum(axis=(0, 2, 3)), rtol=1e-5)


@pytest.mark.parametrize("op,kernel", [("Convolution", (3,)), ("Convolution", (3, 3)),
                                       ("Convolution", (1, 2, 2)), ("Deconvolution", (3, 3))])
def test_convolution_bias_gradient(op, kernel):
    rs = np.random.RandomState(7)
    nd_ = len(kernel)
    x = nd.array(rs.randn(*((5, 3) + (8,) * nd_)))
    w = nd.array(rs.randn(*((3, 4) if op == "Deconvolution" else (4, 3)) + kernel))
    b = nd.zeros(4)
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = getattr(nd, op)(x, w, b, kernel=kernel, num_filter=4, no_bias=False)
    h = rs.randn(*y.shape).astype(np.float32)
    y.backward(nd.array(h))
    want = h.astype(np.float64).sum(axis=(0,) + tuple(range(2, h.ndim)))
    np.testing.assert_allclose(b.grad.asnumpy(), want, rtol=1e-5, atol=1e-4)


def test_bias_gradient_has_a_gradient_of_its_own():
    g = nd.array(np.random.RandomState(8).randn(2, 3, 4, 4))
    g.attach_grad()
    with mx.autograd.record():
        s = nd._internal._backward_Convolution_bias(g)
        z = (s * nd.array([1.0, 2.0, 3.0])).sum()
    z.backward()
    want = np.broadcast_to(np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1), (2, 3, 4, 4))
    np.testing.assert_array_equal(g.grad.asnumpy(), want)


def test_bias_gradient_refuses_arrays_without_spatial_axes():
    with pytest.raises(mx.base.MXNetError, match="ograd must be one"):
        nd._internal._backward_Convolution_bias(nd.ones((2, 3)))


def test_batchnorm_training_with_channel_sums_matches_float64():
    """BatchNorm's per-channel sums go through channel_sum once each plane
    has 16 cells or more: forward and backward against a float64 reference."""
    rs = np.random.RandomState(9)
    x = rs.randn(8, 4, 6, 6).astype(np.float32)
    head = rs.randn(8, 4, 6, 6).astype(np.float32)
    gamma = rs.rand(4).astype(np.float32) + 0.5
    beta = rs.randn(4).astype(np.float32)
    X, G, B = nd.array(x), nd.array(gamma), nd.array(beta)
    for a in (X, G, B):
        a.attach_grad()
    with mx.autograd.record():
        y = nd.BatchNorm(X, G, B, nd.zeros(4), nd.ones(4), fix_gamma=False, eps=1e-5)
    y.backward(nd.array(head))
    xd, hd = x.astype(np.float64), head.astype(np.float64)
    mu = xd.mean(axis=(0, 2, 3), keepdims=True)
    var = xd.var(axis=(0, 2, 3), keepdims=True)
    xhat = (xd - mu) / np.sqrt(var + 1e-5)
    g4 = gamma.astype(np.float64).reshape(1, 4, 1, 1)
    want_y = xhat * g4 + beta.reshape(1, 4, 1, 1)
    dxhat = hd * g4
    want_dx = (dxhat - dxhat.mean(axis=(0, 2, 3), keepdims=True)
               - xhat * (dxhat * xhat).mean(axis=(0, 2, 3), keepdims=True)) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(y.asnumpy(), want_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(X.grad.asnumpy(), want_dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(B.grad.asnumpy(), hd.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(G.grad.asnumpy(), (hd * xhat).sum(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-4)


# ---------------------------------------------------- sum into its output

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32"])
@pytest.mark.parametrize("shape,axis,keepdims,exclude", [
    ((128, 10), 0, False, False), ((128, 256), (0,), False, False), ((4, 5, 6), 1, True, False),
    ((4, 5, 6), (0, 2), False, False), ((4, 5, 6), 1, False, True), ((7,), None, False, False),
    ((3, 4, 5), None, True, False), ((3, 4, 5), -1, False, False)])
def test_sum_is_bitwise_numpys_sum(dtype, shape, axis, keepdims, exclude):
    """The direct reduction into the output (float sums whose output has
    numpy's result shape) and the general path give np.sum's values, bit
    for bit, NaNs and infinities included; integer sums wrap as MXNet's do
    in the input dtype."""
    rs = np.random.RandomState(1)
    if dtype.startswith("float"):
        a = (rs.randn(*shape) * 100).astype(dtype)
        a.reshape(-1)[:3] = [np.nan, np.inf, -0.0][:a.size]
    else:
        a = rs.randint(-100, 100, shape).astype(dtype)
    for src in (a, np.ascontiguousarray(a.transpose())):
        got = nd.sum(nd.array(src, dtype=dtype), axis=axis, keepdims=keepdims,
                     exclude=exclude).asnumpy()
        nd_ax = tuple(range(src.ndim)) if axis is None else (
            (axis,) if isinstance(axis, int) else axis)
        nd_ax = tuple(sorted(i % src.ndim for i in nd_ax))
        if exclude:
            nd_ax = tuple(i for i in range(src.ndim) if i not in nd_ax)
        want = np.sum(src, axis=nd_ax, keepdims=keepdims).astype(dtype)
        assert got.shape == (want.shape or (1,))
        np.testing.assert_array_equal(_bits(got.reshape(-1)), _bits(want.reshape(-1)))


# ---------------------------------------------------- the row maximum of softmax

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(128, 10), (31, 10), (32, 10), (1280, 10), (64, 64),
                                   (64, 65), (40, 1), (8, 16, 10)])
@pytest.mark.parametrize("values", ["normal", "specials"])
def test_last_axis_max_is_bitwise_numpys(dtype, shape, values):
    """Bit for bit np.max(x, axis=-1, keepdims=True), also where the two
    orders of comparison differ: rows whose maximum is a zero of either sign
    or a NaN of either sign."""
    rs = np.random.RandomState(sum(shape))
    if values == "normal":
        x = rs.randn(*shape).astype(dtype)
    else:
        x = rs.choice(SPECIALS, size=shape).astype(dtype)
        x.reshape(-1, shape[-1])[::3] = rs.choice([-0.0, 0.0, -1.0], size=shape[-1])
    got = _fast.last_axis_max(np, x)
    want = np.max(x, axis=-1, keepdims=True)
    assert got.shape == want.shape
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_logits_is_bitwise_the_formula(op):
    """softmax/log_softmax over a classifier's (batch, classes) logits, rows
    of zeros and NaNs included: exp(x - max) / sum, x - max - log(sum)."""
    rs = np.random.RandomState(3)
    x = (rs.randn(256, 10) * 4).astype(np.float32)
    x[5] = 0.0
    x[6, 3] = np.nan
    x[7] = -0.0
    with np.errstate(all="ignore"):
        z = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(z)
        s = np.sum(e, axis=-1, keepdims=True)
        want = z - np.log(s) if op == "log_softmax" else e / s
    got = getattr(nd, op)(nd.array(x), axis=-1).asnumpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("shape,keepdims", [((128, 10), False), ((64, 3, 10), True),
                                            ((31, 10), False), ((16, 100), False)])
def test_max_and_min_over_the_last_axis_are_bitwise_numpys(op, dtype, shape, keepdims):
    """nd.max/nd.min over a short last axis (the transposed-rows path) and
    over a long one, signed zeros and NaNs included: np.max/np.min's bits."""
    rs = np.random.RandomState(len(shape) + shape[-1])
    if dtype.startswith("float"):
        x = rs.choice(SPECIALS, size=shape).astype(dtype)
        x.reshape(-1, shape[-1])[1::2] = rs.randn(shape[-1]).astype(dtype)
    else:
        x = rs.randint(-50, 50, shape).astype(dtype)
    for axis in (-1, len(shape) - 1):
        got = getattr(nd, op)(nd.array(x, dtype=dtype), axis=axis, keepdims=keepdims).asnumpy()
        want = getattr(np, op)(x, axis=axis, keepdims=keepdims)
        assert got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want))
    assert _fast.last_axis_min(np, x).shape == shape[:-1] + (1,)


@pytest.mark.parametrize("form", ["Activation", "relu"])
def test_relu_gradient_passes_nan_through_as_mxnet(form):
    """MXNet's relu_grad is NaN at a NaN input (1 above 0, else 0)."""
    x = nd.array([[1.5, -1.0, np.nan], [0.0, 2.0, -3.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.Activation(x, act_type="relu") if form == "Activation" else nd.relu(x)
    y.backward(nd.full((2, 3), 2.0))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[2, 0, np.nan], [0, 2, 0]])
