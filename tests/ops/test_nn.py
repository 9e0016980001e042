"""Neural-network ops (aiond/ops/fc.py, activation.py, softmax.py, losses.py,
dropout.py, embedding.py, l2norm.py, upsampling.py): forward against small numpy
references, gradients against finite differences (float64) and, where
MXNet's gradient is not the derivative of its forward (loss heads, selu,
SoftmaxActivation), against MXNet's formula. Literal expected values marked
"MXNet 1.9.1" were computed with MXNet 1.9.1 itself (float32 unless noted).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import aiond as mx
from aiond.base import OpError, ShapeError
from aiond.test_utils import assert_almost_equal, check_numeric_gradient

nd = mx.nd
RNG = np.random.default_rng(7)


def A(x, dtype="float32"):
    return nd.array(np.asarray(x, dtype=dtype), dtype=dtype)


def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol)


def grads_of(fn, *arrays, head=None, dtype="float32"):
    """(output, [input grads]) of fn over NDArrays built from numpy arrays."""
    xs = [A(a, dtype) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    y.backward(None if head is None else A(head, dtype))
    return y.asnumpy(), [x.grad.asnumpy() for x in xs]


# ------------------------------------------------------- numpy references


def np_softmax(x, axis=-1, t=1.0):
    z = (x - x.max(axis=axis, keepdims=True)) / t
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1, t=1.0):
    z = (x - x.max(axis=axis, keepdims=True)) / t
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


_erf = np.vectorize(math.erf)


def np_gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def np_fc(x, w, b=None, flatten=True):
    x2 = x.reshape(x.shape[0], -1) if flatten else x
    y = x2 @ w.T
    return y if b is None else y + b.reshape(-1)


def np_l2(x, mode, eps=1e-10):
    if mode == "instance":
        n = np.sqrt((x.reshape(x.shape[0], -1) ** 2).sum(1) + eps)
        return x / n.reshape((-1,) + (1,) * (x.ndim - 1))
    axes = (1,) if mode == "channel" else tuple(range(2, x.ndim))
    return x / np.sqrt((x ** 2).sum(axis=axes, keepdims=True) + eps)


def np_upsample(x, s):
    return x.repeat(s, axis=2).repeat(s, axis=3)


def np_smooth_l1(x, sigma):
    b = sigma * sigma
    return np.where(np.abs(x) > 1 / b, np.abs(x) - 0.5 / b, 0.5 * x * x * b)


def np_onehot(label, k):
    return (np.arange(k)[None, :] == label.astype(np.int64)[:, None]).astype(np.float64)


# ------------------------------------------------------------- forward


X23 = RNG.standard_normal((2, 3))
X234 = RNG.standard_normal((2, 3, 4))
W43 = RNG.standard_normal((4, 3))
W412 = RNG.standard_normal((4, 12))
B4 = RNG.standard_normal(4)
ACT_X = np.array([-25.0, -2.0, -0.5, 0.0, 0.5, 3.0, 25.0])
LBL = np.array([2.0, 0.0])
UP = RNG.standard_normal((2, 2, 2, 3))

FORWARD = [
    # (id, fn over NDArrays, numpy reference, inputs)
    ("fc", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=4), np_fc, [X23, W43, B4]),
    ("fc_flatten", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=4), np_fc,
     [X234, W412, B4]),
    ("fc_no_flatten", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=4, flatten=False),
     lambda x, w, b: np_fc(x, w, b, flatten=False), [RNG.standard_normal((2, 5, 3)), W43, B4]),
    ("fc_no_bias", lambda x, w: nd.FullyConnected(x, w, num_hidden=4, no_bias=True), np_fc,
     [X23, W43]),
    ("fc_bias_column", lambda x, w, b: nd.FullyConnected(data=x, weight=w, bias=b, num_hidden=4),
     np_fc, [X23, W43, B4.reshape(4, 1)]),
    ("relu", lambda x: nd.Activation(x, act_type="relu"), lambda x: np.maximum(x, 0), [ACT_X]),
    ("sigmoid", lambda x: nd.Activation(x, act_type="sigmoid"), lambda x: 1 / (1 + np.exp(-x)),
     [ACT_X]),
    ("tanh", lambda x: nd.Activation(x, act_type="tanh"), np.tanh, [ACT_X]),
    ("softrelu", lambda x: nd.Activation(x, act_type="softrelu"),
     lambda x: np.where(x > 20, x, np.log1p(np.exp(x))), [ACT_X]),
    ("softsign", lambda x: nd.Activation(x, act_type="softsign"), lambda x: x / (1 + np.abs(x)),
     [ACT_X]),
    ("leaky", lambda x: nd.LeakyReLU(x), lambda x: np.where(x > 0, x, 0.25 * x), [ACT_X]),
    ("leaky_slope", lambda x: nd.LeakyReLU(x, act_type="leaky", slope=0.1),
     lambda x: np.where(x > 0, x, 0.1 * x), [ACT_X]),
    ("elu", lambda x: nd.LeakyReLU(x, act_type="elu", slope=0.3),
     lambda x: np.where(x > 0, x, 0.3 * np.expm1(x)), [ACT_X]),
    ("selu", lambda x: nd.LeakyReLU(x, act_type="selu"),
     lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)), [ACT_X]),
    ("gelu", lambda x: nd.LeakyReLU(x, act_type="gelu"), np_gelu, [ACT_X]),
    ("prelu", lambda x, g: nd.LeakyReLU(x, g, act_type="prelu"),
     lambda x, g: np.where(x > 0, x, x * g.reshape(1, 3, 1)), [X234, np.array([0.1, 0.2, 0.3])]),
    ("prelu_scalar_gamma", lambda x, g: nd.LeakyReLU(data=x, gamma=g, act_type="prelu"),
     lambda x, g: np.where(x > 0, x, x * g), [X23, np.array([0.5])]),
    ("softmax", lambda x: nd.softmax(x), np_softmax, [X234]),
    ("softmax_axis0", lambda x: nd.softmax(x, axis=0), lambda x: np_softmax(x, 0), [X234]),
    ("softmax_temperature", lambda x: nd.softmax(x, axis=1, temperature=3.0),
     lambda x: np_softmax(x, 1, 3.0), [X234]),
    ("log_softmax", lambda x: nd.log_softmax(x, axis=1), lambda x: np_log_softmax(x, 1), [X234]),
    ("log_softmax_temperature", lambda x: nd.log_softmax(x, temperature=0.5),
     lambda x: np_log_softmax(x, -1, 0.5), [X234]),
    ("softmax_activation", lambda x: nd.SoftmaxActivation(x), np_softmax, [X234]),
    ("softmax_activation_channel", lambda x: nd.SoftmaxActivation(x, mode="channel"),
     lambda x: np_softmax(x, 1), [X234]),
    ("softmax_output", lambda x, l: nd.SoftmaxOutput(x, l), lambda x, l: np_softmax(x),
     [X23, LBL]),
    ("softmax_output_flattens", lambda x, l: nd.SoftmaxOutput(x, l),
     lambda x, l: np_softmax(x.reshape(2, -1)).reshape(x.shape), [X234, np.zeros((2, 3))]),
    ("softmax_output_multi", lambda x, l: nd.SoftmaxOutput(x, l, multi_output=True),
     lambda x, l: np_softmax(x, 1), [X234, np.zeros((2, 4))]),
    ("softmax_output_preserve", lambda x, l: nd.SoftmaxOutput(x, l, preserve_shape=True),
     lambda x, l: np_softmax(x), [X234, np.zeros((2, 3))]),
    ("Softmax_alias", lambda x, l: nd.Softmax(x, l), lambda x, l: np_softmax(x), [X23, LBL]),
    ("linear_regression", lambda x, l: nd.LinearRegressionOutput(x, l), lambda x, l: x,
     [X23, X23 * 0]),
    ("mae_regression", lambda x, l: nd.MAERegressionOutput(x, l), lambda x, l: x, [X23, X23 * 0]),
    ("logistic_regression", lambda x, l: nd.LogisticRegressionOutput(x, l),
     lambda x, l: 1 / (1 + np.exp(-x)), [X23, X23 * 0]),
    ("embedding", lambda i, w: nd.Embedding(i, w, input_dim=4, output_dim=3),
     lambda i, w: w[np.clip(i.astype(np.int64), 0, 3)],
     [np.array([[0, 3], [9, -2], [1.7, 2]]), RNG.standard_normal((4, 3))]),
    ("block_grad", lambda x: nd.BlockGrad(x), lambda x: x, [X23]),
    ("stop_gradient", lambda x: nd.stop_gradient(x), lambda x: x, [X23]),
    ("make_loss", lambda x: nd.make_loss(x), lambda x: x, [X23]),
    ("MakeLoss", lambda x: nd.MakeLoss(x, grad_scale=3.0), lambda x: x, [X23]),
    ("smooth_l1", lambda x: nd.smooth_l1(x), lambda x: np_smooth_l1(x, 1.0), [ACT_X]),
    ("smooth_l1_sigma", lambda x: nd.smooth_l1(x, scalar=2.0), lambda x: np_smooth_l1(x, 2.0),
     [ACT_X / 4]),
    ("softmax_cross_entropy", lambda x, l: nd.softmax_cross_entropy(x, l),
     lambda x, l: np.array([-np.log(np_softmax(x)[np.arange(2), l.astype(int)]).sum()]),
     [X23, LBL]),
    ("l2_instance", lambda x: nd.L2Normalization(x), lambda x: np_l2(x, "instance"), [X234]),
    ("l2_channel", lambda x: nd.L2Normalization(x, mode="channel"), lambda x: np_l2(x, "channel"),
     [X234]),
    ("l2_spatial", lambda x: nd.L2Normalization(x, mode="spatial", eps=1e-3),
     lambda x: np_l2(x, "spatial", 1e-3), [RNG.standard_normal((2, 3, 2, 2))]),
    ("l2_1d", lambda x: nd.L2Normalization(x), lambda x: np_l2(x, "instance"), [B4]),
    ("upsampling", lambda x: nd.UpSampling(x, scale=2, sample_type="nearest"),
     lambda x: np_upsample(x, 2), [UP]),
    ("upsampling_concat", lambda a, b: nd.UpSampling(a, b, scale=3, sample_type="nearest"),
     lambda a, b: np.concatenate([np_upsample(a, 3), np_upsample(b, 6)], axis=1),
     [RNG.standard_normal((1, 2, 2, 2)), RNG.standard_normal((1, 1, 1, 1))]),
    ("upsampling_sum", lambda a, b: nd.UpSampling(a, b, scale=2, sample_type="nearest",
                                                  multi_input_mode="sum"),
     lambda a, b: np_upsample(a, 2) + b.repeat(4, 2).repeat(4, 3),
     [RNG.standard_normal((1, 2, 2, 2)), RNG.standard_normal((1, 2, 1, 1))]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn,ref,inputs", FORWARD, ids=[r[0] for r in FORWARD])
def test_forward_against_numpy(name, fn, ref, inputs, dtype, ctx):
    y = fn(*[A(a, dtype) for a in inputs])
    assert y.dtype == np.dtype(dtype)
    tol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-12)
    close(y, ref(*[np.asarray(a, dtype=dtype).astype(np.float64) for a in inputs]), *tol)


def test_fc_output_shapes():
    w = nd.ones((4, 3))
    assert nd.FullyConnected(nd.ones((2, 5, 3)), w, num_hidden=4, no_bias=True,
                             flatten=False).shape == (2, 5, 4)
    assert nd.FullyConnected(nd.ones((3,)), w, num_hidden=4, no_bias=True,
                             flatten=False).shape == (4,)
    assert nd.FullyConnected(nd.ones((7, 1)), nd.ones((4, 1)), num_hidden=4,
                             no_bias=True).shape == (7, 4)


def test_dtype_arguments():
    x = A([[1.0, 2.0, 3.0]], "float16")
    assert nd.softmax(x, dtype="float32").dtype == np.float32
    assert nd.log_softmax(A([[1.0, 2.0]]), dtype="float64").dtype == np.float64
    close(nd.softmax(x, dtype="float32"), np_softmax(np.array([[1.0, 2.0, 3.0]])), 1e-3, 1e-3)
    # Embedding's output takes the weight's dtype (its dtype argument does not override it)
    e = nd.Embedding(A([0, 1]), A(np.ones((3, 2)), "float64"), input_dim=3, output_dim=2,
                     dtype="float32")
    assert e.dtype == np.float64


def test_softmax_length(ctx):
    # MXNet 1.9.1: nd.softmax(x, length, use_length=True)
    x = A(np.arange(12.0).reshape(3, 4) / 3)
    y, (g,) = grads_of(lambda a: nd.softmax(a, A([2, 0, 4], "int32"), use_length=True),
                       np.arange(12.0).reshape(3, 4) / 3, head=np.arange(12.0).reshape(3, 4))
    close(y, [[0.41742977, 0.5825702, 0, 0], [0, 0, 0, 0],
              [0.14161041, 0.19763322, 0.27581939, 0.38493702]])
    close(g, [[-0.24318215, 0.24318217, 0, 0], [0, 0, 0, 0],
              [-0.26963803, -0.17867689, 0.026455699, 0.42185894]])
    y0 = nd.softmax(x, A([1, 2, 3, 0], "int32"), axis=0, use_length=True)
    close(y0.asnumpy().ravel()[:8], [1.0, 0.20860855, 0.052122474, 0, 0, 0.7913915, 0.19773534, 0])


def test_rrelu_predict_mode_returns_output_and_mask():
    # MXNet 1.9.1's nd.LeakyReLU(act_type='rrelu') returns [output, mask]
    out, mask = nd.LeakyReLU(A([-1.0, -0.5, 0.5, 2.0]), act_type="rrelu")
    close(out, [-0.2295, -0.11475, 0.5, 2.0])
    close(mask, [0.2295] * 4)
    with mx.autograd.train_mode():
        with pytest.raises(OpError, match="LeakyReLU: act_type='rrelu' in training mode"):
            nd.LeakyReLU(A([1.0]), act_type="rrelu")


def test_erf_helper_matches_math_erf():
    from aiond.ops.nn import erf
    xs = np.concatenate([np.linspace(-9, 9, 721), [0.0, 1.0, -1.0, 8.0, 40.0, -np.inf, np.inf]])
    np.testing.assert_allclose(erf(np, xs), _erf(xs), rtol=1e-15, atol=3e-16)
    assert np.isnan(erf(np, np.array([np.nan])))[0]


# ----------------------------------------------------------- gradients

G = RNG.standard_normal
AWAY = np.array([-1.3, -0.6, -0.2, 0.3, 0.7, 1.6])      # no kinks within eps of these

GRADIENTS = [
    ("fc", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=3), [G((2, 2)), G((3, 2)), G(3)]),
    ("fc_flatten", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=2),
     [G((2, 2, 2)), G((2, 4)), G(2)]),
    ("fc_no_flatten", lambda x, w: nd.FullyConnected(x, w, num_hidden=2, no_bias=True,
                                                     flatten=False), [G((2, 2, 3)), G((2, 3))]),
    ("fc_bias_column", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=2),
     [G((2, 3)), G((2, 3)), G((2, 1))]),
    ("relu", lambda x: nd.Activation(x, act_type="relu"), [AWAY]),
    ("sigmoid", lambda x: nd.Activation(x, act_type="sigmoid"), [AWAY]),
    ("tanh", lambda x: nd.Activation(x, act_type="tanh"), [AWAY]),
    ("softrelu", lambda x: nd.Activation(x, act_type="softrelu"), [AWAY]),
    ("softsign", lambda x: nd.Activation(x, act_type="softsign"), [AWAY]),
    ("leaky", lambda x: nd.LeakyReLU(x, slope=0.2), [AWAY]),
    ("elu", lambda x: nd.LeakyReLU(x, act_type="elu", slope=0.7), [AWAY]),
    ("gelu", lambda x: nd.LeakyReLU(x, act_type="gelu"), [AWAY * 2]),
    ("prelu", lambda x, g: nd.LeakyReLU(x, g, act_type="prelu"),
     [AWAY.reshape(1, 2, 3), np.array([0.3, -0.4])]),
    ("erf", lambda x: nd._internal._nn_erf(x), [AWAY * 2]),
    ("softmax", lambda x: nd.softmax(x), [G((2, 3))]),
    ("softmax_axis0_temperature", lambda x: nd.softmax(x, axis=0, temperature=2.0), [G((3, 2))]),
    ("log_softmax", lambda x: nd.log_softmax(x, temperature=0.7), [G((2, 3))]),
    ("softmax_activation_2d", lambda x: nd.SoftmaxActivation(x), [G((2, 3))]),
    ("softmax_activation_channel", lambda x: nd.SoftmaxActivation(x, mode="channel"),
     [G((1, 3, 2))]),
    ("softmax_cross_entropy", lambda x: nd.softmax_cross_entropy(x, A([2, 0], "float64")),
     [G((2, 3))]),
    ("smooth_l1", lambda x: nd.smooth_l1(x, scalar=1.5), [AWAY]),
    ("l2_instance", lambda x: nd.L2Normalization(x), [G((2, 3))]),
    ("l2_channel", lambda x: nd.L2Normalization(x, mode="channel"), [G((1, 3, 2))]),
    ("l2_spatial", lambda x: nd.L2Normalization(x, mode="spatial"), [G((1, 2, 3))]),
    ("upsampling", lambda x: nd.UpSampling(x, scale=2, sample_type="nearest"), [G((1, 1, 2, 2))]),
    ("upsampling_concat", lambda a, b: nd.UpSampling(a, b, scale=2, sample_type="nearest"),
     [G((1, 1, 2, 2)), G((1, 2, 1, 1))]),
    ("upsampling_sum", lambda a, b: nd.UpSampling(a, b, scale=2, sample_type="nearest",
                                                  multi_input_mode="sum"),
     [G((1, 1, 1, 2)), G((1, 1, 1, 2))]),
    ("embedding_weight", lambda w: nd.Embedding(A([[0, 2], [2, 1]], "float64"), w, input_dim=3,
                                                output_dim=2), [G((3, 2))]),
]


@pytest.mark.parametrize("name,fn,inputs", GRADIENTS, ids=[r[0] for r in GRADIENTS])
def test_gradient_against_finite_differences(name, fn, inputs, ctx):
    check_numeric_gradient(fn, inputs, numeric_eps=1e-5, rtol=1e-4, atol=1e-6)


def test_second_order_gradient_goes_through_engine_ops():
    x = A(AWAY, "float64")
    x.attach_grad()
    with mx.autograd.record():
        y = nd.LeakyReLU(x, act_type="gelu")
        (dx,) = mx.autograd.grad([y], [x], create_graph=True)
    dx.backward()
    a = AWAY
    pdf = np.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    close(x.grad, 2 * pdf - a * a * pdf, 1e-10, 1e-12)      # d2/dx2 gelu = pdf * (2 - x^2)


# --------------------------------- gradients that follow MXNet's own formula

MXNET_GRADS = [
    # (id, fn, inputs, head, expected output, expected grads) - all MXNet 1.9.1 values
    ("fc", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=4),
     [np.arange(6).reshape(2, 3) / 4, np.arange(12).reshape(4, 3) / 10 - 0.5,
      [0.1, 0.2, -0.3, 0.0]], np.arange(8).reshape(2, 4),
     [[-0.15, 0.175, -0.1, 0.425], [-1.05, -0.05, 0.35, 1.55]],
     [[[1.2, 1.8, 2.4], [0.4, 2.6, 4.8]],
      [[3, 4, 5], [3.75, 5.25, 6.75], [4.5, 6.5, 8.5], [5.25, 7.75, 10.25]], [4, 6, 8, 10]]),
    ("selu_uses_output", lambda x: nd.LeakyReLU(x, act_type="selu"), [[-1.0, -0.5, 0.5, 2.0]],
     None, [-1.11133074, -0.69175819, 0.52535051, 2.10140204],
     [[0.590423, 1.03126831, 1.05070102, 1.05070102]]),
    ("elu", lambda x: nd.LeakyReLU(x, act_type="elu", slope=0.3), [[-1.0, -0.5, 0.5, 2.0]], None,
     [-0.18963618, -0.11804081, 0.5, 2.0], [[0.11036384, 0.18195921, 1.0, 1.0]]),
    ("leaky_negative_slope", lambda x: nd.LeakyReLU(x, slope=-0.5), [[-1.0, -0.5, 0.5, 2.0]], None,
     [0.5, 0.25, 0.5, 2.0], [[1.0, 1.0, 1.0, 1.0]]),
    ("gelu", lambda x: nd.LeakyReLU(x, act_type="gelu"), [[-1.0, -0.5, 0.5, 2.0]], None,
     [-0.15865526, -0.15426877, 0.34573123, 1.9544997],
     [[-0.08331548, 0.13250488, 0.86749512, 1.08523178]]),
    ("sigmoid_edges", lambda x: nd.Activation(x, act_type="sigmoid"),
     [[-2.0, -0.5, 0.0, 0.5, 25.0]], None,
     [0.11920292, 0.37754065, 0.5, 0.62245935, 1.0],
     [[0.10499358, 0.23500371, 0.25, 0.23500371, 0.0]]),
    ("softrelu_edges", lambda x: nd.Activation(x, act_type="softrelu"),
     [[-2.0, -0.5, 0.0, 0.5, 25.0]], None, [0.12692809, 0.47407699, 0.69314724, 0.97407699, 25.0],
     [[0.11920292, 0.37754065, 0.5, 0.62245935, 1.0]]),
    ("softsign_edges", lambda x: nd.Activation(x, act_type="softsign"),
     [[-2.0, -0.5, 0.0, 0.5, 25.0]], None, [-0.6666667, -0.33333334, 0.0, 0.33333334, 0.96153843],
     [[0.11111111, 0.44444445, 1.0, 0.44444445, 0.00147929]]),
    ("softmax_temperature", lambda x: nd.softmax(x, temperature=2.0), [[[1, 2, 3.0], [0, -1, 2]]],
     [[1, -1, 2.0], [0.5, 0, -1]], None,
     [[[0.010053223, -0.29062095, 0.28056768], [0.11710562, 0.035967056, -0.1530727]]]),
    ("log_softmax_temperature", lambda x: nd.log_softmax(x, temperature=2.0),
     [[[1, 2, 3.0], [0, -1, 2]]], [[1, -1, 2.0], [0.5, 0, -1]], None,
     [[[0.3136763, -0.8071959, 0.4935196], [0.307806, 0.035061095, -0.34286708]]]),
    ("softmax_activation_instance_3d_grad_over_axis1",
     lambda x: nd.SoftmaxActivation(x),
     [[[[1.7640524, 0.40015721], [0.97873801, 2.2408931], [1.867558, -0.97727788]],
       [[0.95008844, -0.1513572], [-0.10321885, 0.41059852], [0.14404356, 1.4542735]]]],
     [[[0.7610377, 0.12167501], [0.44386324, 0.33367434], [1.4940791, -0.20515826]],
      [[0.3130677, -0.8540958], [-2.5529897, 0.6536186], [0.8644362, -0.742165]]],
     [[[0.7963921, 0.20360798], [0.22060312, 0.7793969], [0.9450511, 0.05494888]],
      [[0.7505309, 0.24946913], [0.37429908, 0.6257009], [0.21244839, 0.78755164]]],
     [[[[-1.0790677, -0.03092613], [-0.36887485, 0.0468486], [-0.58773094, -0.02630534]],
       [[0.63797706, -0.1161283], [-0.75459564, 0.65211344], [0.2977258, -0.27845538]]]]),
    ("softmax_cross_entropy", lambda x: nd.softmax_cross_entropy(x, A([2, 0, 1])),
     [[[1, 2, 3.0], [0, 0, 9], [1, -1, 0]]], [2.0], [11.815459],
     [[[0.18006115, 0.48945695, -0.66951811], [-1.9997532, 0.00024675872, 1.9995066],
       [1.3304818, -1.8199389, 0.48945692]]]),
    ("smooth_l1", lambda x: nd.smooth_l1(x, scalar=2.0),
     [[-3, -1, -0.3, -0.1, 0, 0.1, 0.25, 0.3, 1, 3]], None,
     [2.875, 0.875, 0.175, 0.02, 0.0, 0.02, 0.125, 0.175, 0.875, 2.875],
     [[-1, -1, -1, -0.4, 0, 0.4, 1, 1, 1, 1]]),
    ("embedding_scatter_add", lambda w: nd.Embedding(A([[0, 2], [2, 7]]), w, input_dim=3,
                                                     output_dim=2),
     [np.ones((3, 2))], np.arange(8).reshape(2, 2, 2), np.ones((2, 2, 2)),
     [[[0, 1], [0, 0], [12, 15]]]),
    ("upsampling_sum", lambda a, b: nd.UpSampling(a, b, scale=2, sample_type="nearest",
                                                  multi_input_mode="sum"),
     [np.arange(4).reshape(1, 1, 2, 2) * 10, [[[[5.0]]]]], np.arange(16).reshape(1, 1, 4, 4),
     [[[[5, 5, 15, 15], [5, 5, 15, 15], [25, 25, 35, 35], [25, 25, 35, 35]]]],
     [[[[[10, 18], [42, 50]]]], [[[[120]]]]]),
]


@pytest.mark.parametrize("name,fn,inputs,head,want,want_grads", MXNET_GRADS,
                         ids=[r[0] for r in MXNET_GRADS])
def test_against_mxnet_values(name, fn, inputs, head, want, want_grads, ctx):
    y, grads = grads_of(fn, *[np.asarray(a, dtype=np.float64) for a in inputs], head=head)
    if want is not None:
        close(y, want, 1e-5, 1e-6)
    for g, w in zip(grads, want_grads):
        close(g, w, 1e-5, 1e-6)


L2_X = np.arange(1, 25).reshape(2, 3, 4) / 7 - 1.5
L2_H = np.cos(np.arange(24)).reshape(2, 3, 4)


@pytest.mark.parametrize("mode,want_y,want_g", [
    # MXNet 1.9.1: first six elements of output and gradient
    ("instance", [-0.5190404, -0.46440461, -0.40976876, -0.35513291, -0.30049708, -0.24586125],
     [0.30433646, 0.13674723, -0.22082499, -0.43207017, -0.29521069, 0.071485288]),
    ("channel", [-0.857458, -0.882596, -0.90453404, -0.91242117, -0.49642304, -0.4672567],
     [0.35374349, 0.032117639, -0.41201976, -0.39929086, -0.57396585, 0.015273443]),
    ("spatial", [-0.58803523, -0.52613676, -0.46423832, -0.40233988, -0.66212219, -0.54173636],
     [0.36174342, 0.17009254, -0.23679532, -0.47790524, -0.74742401, 0.078189582]),
])
def test_l2_normalization_against_mxnet(mode, want_y, want_g, ctx):
    y, (g,) = grads_of(lambda x: nd.L2Normalization(x, mode=mode), L2_X, head=L2_H)
    close(y.reshape(-1)[:6], want_y)
    close(g.reshape(-1)[:6], want_g)


def test_block_grad_and_make_loss():
    x = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -3.0]])
    head = np.full((2, 3), 7.0)
    _, (g,) = grads_of(lambda a: nd.BlockGrad(a) + a, x)
    close(g, np.ones((2, 3)))
    _, (g,) = grads_of(lambda a: nd.stop_gradient(a) * a, x)
    close(g, x)
    _, (g,) = grads_of(lambda a: nd.make_loss(a * 2), x, head=head)    # head ignored
    close(g, np.full((2, 3), 2.0))
    for kw, want in [({}, 1.0), ({"grad_scale": 3.0}, 3.0), ({"normalization": "batch"}, 0.5),
                     ({"normalization": "valid"}, 1 / 3),          # 3 elements > 0
                     ({"normalization": "valid", "valid_thresh": 0.9}, 0.5),
                     ({"normalization": "valid", "valid_thresh": 5.0}, 1.0)]:
        _, (g,) = grads_of(lambda a: nd.MakeLoss(a, **kw), x, head=head)
        close(g, np.full((2, 3), want))


REG_D = np.array([[0.5, -1.0, 2.0], [1.0, 1.0, -3.0]])
REG_L = np.array([[1.0, -1.0, 0.0], [0.0, 2.0, -3.0]])


@pytest.mark.parametrize("op,want", [
    # MXNet 1.9.1, grad_scale=2: (out - label) * grad_scale / num_output, head ignored
    ("LinearRegressionOutput", [[-0.33333334, 0.0, 1.3333334], [0.6666667, -0.6666667, 0.0]]),
    ("LogisticRegressionOutput", [[-0.25169379, 0.84596097, 0.58719802],
                                  [0.4873724, -0.84596097, 2.0316174]]),
    ("MAERegressionOutput", [[-0.6666667, -0.6666667, 0.6666667], [0.6666667, -0.6666667,
                                                                    -0.6666667]]),
])
def test_regression_outputs(op, want, ctx):
    lab = A(REG_L)
    lab.attach_grad()
    _, (g,) = grads_of(lambda a: getattr(nd, op)(a, lab, grad_scale=2.0), REG_D,
                       head=np.full((2, 3), 7.0))
    close(g, want)
    assert not lab.grad.asnumpy().any()
    # a 1-D label for (n, 1) data: num_output is 1
    _, (g,) = grads_of(lambda a: nd.LinearRegressionOutput(a, A([0.0, 0.0])), [[1.0], [2.0]])
    close(g, [[1.0], [2.0]])


# --------------------------------------------------------- SoftmaxOutput

SO_X = np.array([[1, 2, 3, 4], [2, 2, 2, 2], [3, 3, 3, 3], [4, 4, 4, 1.0]])
SO_L = np.array([1, 0, 2, 3.0])


def so_reference(x, label, grad_scale=1.0, ignore_label=-1.0, use_ignore=False,
                 normalization="null", smooth_alpha=0.0, out_grad=False):
    p = np_softmax(x)
    k = x.shape[1]
    hot = np_onehot(label, k)
    target = hot * (1 - smooth_alpha) + (1 - hot) * (smooth_alpha / (k - 1)) if smooth_alpha \
        else hot
    g = p - target
    ignored = label.astype(int) == int(ignore_label)
    if use_ignore:
        g[ignored] = 0
    cnt = {"null": 1, "batch": len(label), "valid": max(int((~ignored).sum()), 1)}[normalization]
    g = g * grad_scale / cnt
    return g * p if out_grad else g


@pytest.mark.parametrize("kw", [
    {}, {"grad_scale": 2.0}, {"use_ignore": True, "ignore_label": 1},
    {"use_ignore": True, "ignore_label": 1, "normalization": "valid"},
    {"normalization": "batch"}, {"normalization": "valid"},
    {"normalization": "valid", "ignore_label": 2},        # valid counts even without use_ignore
    {"smooth_alpha": 0.1}, {"use_ignore": True, "ignore_label": 1, "smooth_alpha": 0.1},
    {"out_grad": True}, {"grad_scale": 0.5, "normalization": "batch", "use_ignore": True,
                         "ignore_label": 3},
], ids=repr)
def test_softmax_output_gradient(kw, ctx):
    lab = A(SO_L)
    lab.attach_grad()
    y, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, lab, **kw), SO_X,
                       head=np.full((4, 4), 7.0))                 # the head gradient is ignored
    close(y, np_softmax(SO_X))
    close(g, so_reference(SO_X, SO_L, **kw))
    assert not lab.grad.asnumpy().any()                           # no gradient for the label


def test_softmax_output_against_mxnet(ctx):
    # MXNet 1.9.1 gradients of SoftmaxOutput(SO_X, SO_L, ...)
    cases = [
        ({}, [[0.032058604, -0.91285568, 0.23688284, 0.64391428], [-0.75, 0.25, 0.25, 0.25],
              [0.25, 0.25, -0.75, 0.25], [0.32789174, 0.32789174, 0.32789174, -0.98367524]]),
        ({"out_grad": True}, [[0.001027754, -0.079550192, 0.056113478, 0.41462561],
                              [-0.1875, 0.0625, 0.0625, 0.0625], [0.0625, 0.0625, -0.1875, 0.0625],
                              [0.10751299, 0.10751299, 0.10751299, -0.01605827]]),
        ({"smooth_alpha": 0.1}, [[-0.001274731, -0.81285566, 0.2035495, 0.61058092],
                                 [-0.65, 0.21666667, 0.21666667, 0.21666667],
                                 [0.21666667, 0.21666667, -0.65, 0.21666667],
                                 [0.29455841, 0.29455841, 0.29455841, -0.88367522]]),
    ]
    for kw, want in cases:
        _, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, A(SO_L), **kw), SO_X)
        close(g, want)


def test_softmax_output_probability_label_ignores_normalization():
    # MXNet 1.9.1: label.shape == data.shape -> (out - label) * grad_scale
    lab = np.full((4, 4), 0.25)
    _, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, A(lab), normalization="batch",
                                                  grad_scale=3.0), SO_X)
    close(g, [[-0.65382421, -0.48856705, -0.039351493, 1.1817429], [0] * 4, [0] * 4,
              [0.23367521, 0.23367521, 0.23367521, -0.70102566]])


D3 = np.arange(24.0).reshape(2, 3, 4) / 10
L3 = np.array([[0, 1, 2, 1], [2, 2, 0, 1.0]])


@pytest.mark.parametrize("kw,scale", [
    ({}, 1 / 4),                                   # 'null' still divides by the spatial size
    ({"normalization": "batch"}, 1 / 4 / 2),
    ({"normalization": "valid", "use_ignore": True, "ignore_label": 2}, 1 / 5),
    ({"grad_scale": 3.0}, 3 / 4),
])
@pytest.mark.parametrize("label_shape", [(2, 4), (2, 1, 4)])
def test_softmax_output_multi_output(kw, scale, label_shape, ctx):
    y, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, A(L3.reshape(label_shape)),
                                                  multi_output=True, **kw), D3)
    p = np_softmax(D3, 1)
    hot = (np.arange(3)[None, :, None] == L3[:, None, :]).astype(float)
    want = (p - hot) * scale
    if kw.get("use_ignore"):
        want = want * (L3 != 2)[:, None, :]
    close(y, p)
    close(g, want)
    if kw == {}:   # MXNet 1.9.1 values
        close(g[0, :, 0], [-0.19700432, 0.079060264, 0.11794406])


def test_softmax_output_preserve_shape_and_flatten(ctx):
    lab = np.array([[0, 1, 2], [3, 3, 0.0]])
    y, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, A(lab), preserve_shape=True), D3)
    p = np_softmax(D3)
    close(g, p - (np.arange(4) == lab[..., None]))
    close(g[0, 0], [-0.78616178, 0.23632778, 0.26118261, 0.28865141])     # MXNet 1.9.1
    # default: softmax over data reshaped to (n, -1); only label.flat[:n] is used (MXNet)
    y, (g,) = grads_of(lambda a: nd.SoftmaxOutput(a, A(lab)), D3)
    p2 = np_softmax(D3.reshape(2, -1))
    want = p2 - np.eye(12)[[0, 1]]
    close(g, want.reshape(2, 3, 4))
    close(g[1, 0, :2], [0.045330007, -0.94990259])                        # MXNet 1.9.1


# --------------------------------------------------------------- Dropout


def test_dropout_is_identity_when_predicting(ctx):
    x = A(np.arange(1.0, 13.0).reshape(3, 4))
    close(nd.Dropout(x), x.asnumpy())
    with mx.autograd.predict_mode():
        close(nd.Dropout(x, p=0.9), x.asnumpy())
    x.attach_grad()
    with mx.autograd.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    y.backward(A(np.full((3, 4), 3.0)))
    close(y, x.asnumpy())
    close(x.grad, np.full((3, 4), 3.0))


@pytest.mark.parametrize("how", ["record", "train_mode", "always"])
def test_dropout_drops_in_training(how, ctx):
    x = A(np.ones((40, 50)))
    x.attach_grad()
    if how == "record":
        with mx.autograd.record():
            y = nd.Dropout(x, p=0.3)
        y.backward(A(np.full((40, 50), 2.0)))
        g = x.grad.asnumpy()
        np.testing.assert_allclose(g, 2.0 * y.asnumpy())       # gradient = head * mask
    elif how == "train_mode":
        with mx.autograd.train_mode():
            y = nd.Dropout(x, p=0.3)
    else:
        y = nd.Dropout(x, p=0.3, mode="always")                 # drops even when predicting
    v = y.asnumpy()
    assert np.isclose(v, 0).sum() + np.isclose(v, 1 / 0.7).sum() == v.size
    assert 0.2 < (v == 0).mean() < 0.4
    assert isinstance(y, nd.NDArray)                            # one visible output


def test_dropout_axes_share_the_mask_and_seed_repeats():
    x = A(np.ones((4, 3, 5)))
    with mx.autograd.train_mode():
        y = nd.Dropout(x, p=0.5, axes=(1,)).asnumpy()
        assert (y == y[:, :1, :]).all()
        assert set(np.unique(y)) <= {0.0, 2.0}
        mx.random.seed(11)
        a = nd.Dropout(x).asnumpy()
        mx.random.seed(11)
        b = nd.Dropout(x).asnumpy()
        np.testing.assert_array_equal(a, b)
        close(nd.Dropout(x, p=0.0), np.ones((4, 3, 5)))
        assert np.isnan(nd.Dropout(A([1.0, 2.0]), p=1.0).asnumpy()).all()   # as MXNet: 0 * inf


# --------------------------------------------------------------- errors

ERRORS = [
    ("fc_weight_shape", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 2)), nd.ones((4,)),
                                                  num_hidden=4),
     ShapeError, r"FullyConnected: weight has shape \(4, 2\) but expected \(4, 3\)"),
    ("fc_num_hidden_mismatch", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)),
                                                         num_hidden=5, no_bias=True),
     ShapeError, r"FullyConnected: weight .*\(num_hidden=5"),
    ("fc_bias_shape", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), nd.ones((3,)),
                                                num_hidden=4),
     ShapeError, r"FullyConnected: bias has shape \(3,\)"),
    ("fc_missing_num_hidden", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)),
                                                        nd.ones((4,))),
     OpError, "FullyConnected: required argument 'num_hidden' is missing"),
    ("fc_missing_bias", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), num_hidden=4),
     OpError, r"FullyConnected: expects 3 input\(s\) \(data, weight, bias\)"),
    ("fc_bias_with_no_bias", lambda: nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)),
                                                       nd.ones((4,)), num_hidden=4, no_bias=True),
     OpError, r"FullyConnected: expects 2 input\(s\) .* no_bias=True"),
    ("fc_dtypes", lambda: nd.FullyConnected(nd.ones((2, 3), dtype="float64"), nd.ones((4, 3)),
                                            num_hidden=4, no_bias=True),
     OpError, "FullyConnected: input 1 has dtype float32"),
    ("act_type_unknown", lambda: nd.Activation(nd.ones((2,)), act_type="foo"),
     OpError, "Activation: act_type='foo' is not supported"),
    ("act_type_missing", lambda: nd.Activation(nd.ones((2,))),
     OpError, "Activation: required argument 'act_type'"),
    ("act_int", lambda: nd.Activation(nd.ones((2,), dtype="int32"), act_type="relu"),
     OpError, "Activation: only supports floating point types, got int32"),
    ("leaky_type", lambda: nd.LeakyReLU(nd.ones((2,)), act_type="swish"),
     OpError, "LeakyReLU: act_type='swish'"),
    ("prelu_no_gamma", lambda: nd.LeakyReLU(nd.ones((2, 3)), act_type="prelu"),
     OpError, r"LeakyReLU: expects 2 input\(s\) \(data, gamma\)"),
    ("prelu_gamma_shape", lambda: nd.LeakyReLU(nd.ones((2, 3, 2)), nd.ones((3, 2)),
                                               act_type="prelu"),
     ShapeError, r"LeakyReLU: cannot broadcast gamma of shape \(3, 2\)"),
    ("leaky_with_gamma", lambda: nd.LeakyReLU(nd.ones((2, 3)), nd.ones((3,))),
     OpError, r"LeakyReLU: expects 1 input\(s\) \(data\)"),
    ("softmax_axis", lambda: nd.softmax(nd.ones((2, 3)), axis=2),
     OpError, "softmax: axis 2 exceeds the input dimension of 2"),
    ("log_softmax_length", lambda: nd.log_softmax(nd.ones((2, 3)), use_length=True),
     OpError, r"log_softmax: expects 2 input\(s\)"),
    ("softmax_activation_channel", lambda: nd.SoftmaxActivation(nd.ones((2, 3)), mode="channel"),
     ShapeError, "SoftmaxActivation: mode='channel' needs data with at least 3 dimensions"),
    ("softmax_output_label", lambda: nd.SoftmaxOutput(nd.ones((4, 4)), nd.ones((3,))),
     ShapeError, r"SoftmaxOutput: label has shape \(3,\) but expected \(4,\)"),
    ("softmax_output_label_dtype", lambda: nd.SoftmaxOutput(nd.ones((2, 3)),
                                                            nd.ones((2,), dtype="int32")),
     OpError, "SoftmaxOutput: input 1 has dtype int32"),
    ("regression_label", lambda: nd.LinearRegressionOutput(nd.ones((2, 3)), nd.ones((3, 2))),
     ShapeError, r"LinearRegressionOutput: label has shape \(3, 2\)"),
    ("dropout_p", lambda: nd.Dropout(nd.ones((2,)), p=1.5),
     OpError, "Dropout: p=1.5 is out of range"),
    ("dropout_axes", lambda: nd.Dropout(nd.ones((2,)), axes=(3,)),
     OpError, "Dropout: axes=.3,. is out of range"),
    ("embedding_weight", lambda: nd.Embedding(nd.ones((2,)), nd.ones((4, 2)), input_dim=3,
                                              output_dim=2),
     ShapeError, r"Embedding: weight has shape \(4, 2\) but expected \(3, 2\)"),
    ("embedding_missing_dim", lambda: nd.Embedding(nd.ones((2,)), nd.ones((3, 2)), input_dim=3),
     OpError, "Embedding: required argument 'output_dim'"),
    ("sce_data_ndim", lambda: nd.softmax_cross_entropy(nd.ones((3, 2, 1)), nd.ones((3,))),
     ShapeError, "softmax_cross_entropy: only accepts 2-D data"),
    ("sce_rows", lambda: nd.softmax_cross_entropy(nd.ones((3, 2)), nd.ones((2,))),
     ShapeError, "softmax_cross_entropy: data .* do not match"),
    ("l2_channel_2d", lambda: nd.L2Normalization(nd.ones((2, 3)), mode="channel"),
     ShapeError, "L2Normalization: mode='channel' needs data with at least 3 dimensions"),
    ("upsampling_bilinear", lambda: nd.UpSampling(nd.ones((1, 1, 2, 2)), nd.ones((1, 1, 3, 3)),
                                                  scale=2, sample_type="bilinear", num_filter=1),
     ShapeError, "UpSampling: weight has shape \\(1, 1, 3, 3\\) but data \\(1, 1, 2, 2\\) with scale=2 "
                 "needs \\(1, 1, 4, 4\\)"),
    ("upsampling_3d", lambda: nd.UpSampling(nd.ones((1, 2, 2)), scale=2, sample_type="nearest"),
     ShapeError, "UpSampling: input 0 has shape .* must be 4-D"),
    ("upsampling_divide", lambda: nd.UpSampling(nd.ones((1, 1, 2, 2)), nd.ones((1, 1, 3, 3)),
                                                scale=2, sample_type="nearest"),
     ShapeError, "UpSampling: input 1 of shape .* does not divide"),
    ("upsampling_uneven", lambda: nd.UpSampling(nd.ones((1, 1, 2, 4)), nd.ones((1, 1, 2, 2)),
                                                scale=2, sample_type="nearest"),
     ShapeError, "UpSampling: input 1 of shape .* needs scale 2 along y but 4 along x"),
    ("upsampling_no_type", lambda: nd.UpSampling(nd.ones((1, 1, 2, 2)), scale=2),
     OpError, "UpSampling: required argument 'sample_type'"),
]


@pytest.mark.parametrize("name,call,exc,match", ERRORS, ids=[r[0] for r in ERRORS])
def test_bad_input_raises_at_the_call(name, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_fully_connected_is_one_matmul():
    # a larger layer: checks the matmul path (and its gradient) against numpy
    x = RNG.standard_normal((64, 8, 4)).astype(np.float32)
    w = RNG.standard_normal((32, 32)).astype(np.float32)
    b = RNG.standard_normal(32).astype(np.float32)
    head = RNG.standard_normal((64, 32)).astype(np.float32)
    y, (gx, gw, gb) = grads_of(lambda a, c, d: nd.FullyConnected(a, c, d, num_hidden=32), x, w, b,
                               head=head)
    x2 = x.reshape(64, -1)
    assert_almost_equal(y, x2 @ w.T + b, rtol=1e-4, atol=1e-4)
    assert_almost_equal(gx, (head @ w).reshape(x.shape), rtol=1e-4, atol=1e-4)
    assert_almost_equal(gw, head.T @ x2, rtol=1e-4, atol=1e-4)
    assert_almost_equal(gb, head.sum(0), rtol=1e-4, atol=1e-4)


def test_embedding_weight_gradient_is_differentiable_in_the_head(ctx):
    w = A(np.ones((3, 2)))
    w.attach_grad()
    h = A(np.arange(8.0).reshape(2, 2, 2))
    h.attach_grad()
    c = np.arange(6.0).reshape(3, 2)
    with mx.autograd.record():
        y = nd.Embedding(A([[0, 2], [2, 1]]), w, input_dim=3, output_dim=2)
        (dw,) = mx.autograd.grad([y], [w], head_grads=[h], create_graph=True)
        z = nd.sum(dw * A(c))
    z.backward()
    close(h.grad, c[[[0, 2], [2, 1]]])          # d z / d head = C gathered at the indices


def test_softmax_float_length_accepted_like_mxnet():
    # MXNet 1.9.1 does not constrain length's dtype; the kernel truncates it
    y = nd.softmax(nd.array([[1., 2., 3.], [1., 1., 1.]]), nd.array([2., 3.]), use_length=True)
    e = np.exp([1., 2.]) / np.exp([1., 2.]).sum()
    np.testing.assert_allclose(y.asnumpy()[0], [e[0], e[1], 0], rtol=1e-5)
    np.testing.assert_allclose(y.asnumpy()[1], [1 / 3.] * 3, rtol=1e-5)
