"""gluon.loss: every loss against MXNet 1.9.1's values and gradients
(literals from the MXNet venv, same inputs), imperative and hybridized."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd

L = gluon.loss
RS = np.random.RandomState(0)
PRED = RS.randn(4, 5).astype(np.float32)
LAB_SPARSE = np.array([0, 4, 2, 1], np.float32)
LAB_DENSE = np.abs(RS.randn(4, 5)).astype(np.float32)
LAB_DENSE /= LAB_DENSE.sum(1, keepdims=True)
SIGN = np.array([1, -1, 1, -1], np.float32)
BINL = RS.randint(0, 2, (4, 5)).astype(np.float32)
SW = RS.rand(4, 1).astype(np.float32)
SIGN2 = np.tile(SIGN[:, None], (1, 5))


def _cases():
    return [
        ("L1", L.L1Loss(), [PRED, LAB_DENSE]),
        ("L2", L.L2Loss(), [PRED, LAB_DENSE]),
        ("L2w", L.L2Loss(weight=2.), [PRED, LAB_DENSE, SW]),
        ("SCE", L.SoftmaxCELoss(), [PRED, LAB_SPARSE]),
        ("SCEw", L.SoftmaxCELoss(), [PRED, LAB_SPARSE, SW]),
        ("SCEdense", L.SoftmaxCELoss(sparse_label=False), [PRED, LAB_DENSE]),
        ("SCElogits", L.SoftmaxCELoss(from_logits=True), [PRED, LAB_SPARSE]),
        ("SCEaxis0", L.SoftmaxCELoss(axis=0), [PRED, np.array([0, 1, 2, 3, 0], np.float32)]),
        ("SBCE", L.SigmoidBCELoss(), [PRED, BINL]),
        ("SBCEpos", L.SigmoidBCELoss(), [PRED, BINL, None, np.full((5,), 2., np.float32)]),
        ("SBCEsig", L.SigmoidBCELoss(from_sigmoid=True), [1 / (1 + np.exp(-PRED)), BINL]),
        ("KL", L.KLDivLoss(), [np.log(LAB_DENSE), LAB_DENSE[::-1].copy()]),
        ("KLlogits", L.KLDivLoss(from_logits=False), [PRED, LAB_DENSE]),
        ("Huber", L.HuberLoss(rho=0.5), [PRED, LAB_DENSE]),
        ("Hinge", L.HingeLoss(), [PRED, SIGN2]),
        ("SqHinge", L.SquaredHingeLoss(), [PRED, SIGN2]),
        ("Logistic", L.LogisticLoss(), [PRED, SIGN2]),
        ("LogisticBin", L.LogisticLoss(label_format="binary"), [PRED, BINL]),
        ("Triplet", L.TripletLoss(), [PRED, LAB_DENSE, BINL]),
        ("Cosine", L.CosineEmbeddingLoss(margin=0.1), [PRED, LAB_DENSE, SIGN]),
        ("Poisson", L.PoissonNLLLoss(), [PRED, BINL]),
    ]


# name: (output shape, output, first 6 entries of d(loss)/d(input 0)), from MXNet 1.9.1
MXNET = {
    'L1': ((4,), [1.25028, 0.58927, 0.54762, 0.62359],
        [0.2, 0.2, 0.2, 0.2, 0.2, -0.2]),
    'L2': ((4,), [0.97553, 0.27727, 0.24057, 0.25941],
        [0.28072, 0.06158, 0.17134, 0.42722, 0.30942, -0.25748]),
    'L2w': ((4,), [0.9098, 0.13554, 0.07649, 0.05727],
        [0.26181, 0.05743, 0.15979, 0.39844, 0.28857, -0.12587]),
    'SCE': ((4,), [1.48878, 1.41901, 1.56769, 0.64117],
        [-0.77435, 0.05769, 0.10289, 0.36351, 0.25026, 0.06039]),
    'SCEw': ((4,), [0.69423, 0.34684, 0.24922, 0.07077],
        [-0.36109, 0.0269, 0.04798, 0.16951, 0.1167, 0.01476]),
    'SCEdense': ((4,), [1.62735, 2.03455, 1.89046, 1.67569],
        [-0.13479, -0.03459, -0.01915, 0.25873, -0.0702, -0.24974]),
    'SCElogits': ((4,), [-1.76405, -0.4106, -0.76104, -1.49408],
        [-1.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    'SCEaxis0': ((1,), [1.15639],
        [-0.06681, 0.02329, 0.08219, 0.14689, -0.07009, 0.00859]),
    'SBCE': ((4,), [1.04796, 0.78607, 0.5225, 0.87655],
        [0.17074, -0.08025, -0.05463, 0.18077, -0.02676, 0.05469]),
    'SBCEpos': ((4,), [1.24309, 0.94041, 0.74028, 0.87655],
        [0.17074, -0.16051, -0.10926, 0.18077, -0.05353, 0.05469]),
    'SBCEsig': ((4,), [1.04796, 0.78607, 0.5225, 0.87655],
        [1.36721, -0.33404, -0.27516, 2.08035, -0.2309, 0.27527]),
    'KL': ((4,), [0.73272, 0.71448, 0.75565, 0.85196],
        [-0.04769, -0.37524, -0.36673, -0.11814, -0.0922, -0.04132]),
    'KLlogits': ((4,), [0.18189, 0.7686, 0.6286, 0.32277],
        [-0.13479, -0.03459, -0.01915, 0.25873, -0.0702, -0.24974]),
    'Huber': ((4,), [1.00766, 0.39175, 0.33536, 0.40136],
        [0.2, 0.12315, 0.2, 0.2, 0.2, -0.2]),
    'Hinge': ((4,), [0.12422, 1.02577, 0.50588, 1.21631],
        [0.0, -0.2, -0.2, 0.0, 0.0, 0.2]),
    'SqHinge': ((4,), [0.07205, 1.46351, 0.3741, 2.07527],
        [0.0, -0.23994, -0.0085, 0.0, 0.0, 0.00909]),
    'Logistic': ((4,), [0.24698, 0.7558, 0.46935, 0.87655],
        [-0.02926, -0.08025, -0.05463, -0.01923, -0.02676, 0.05469]),
    'LogisticBin': ((4,), [1.04796, 0.78607, 0.5225, 0.87655],
        [0.17074, -0.08025, -0.05463, 0.18077, -0.02676, 0.05469]),
    'Triplet': ((4,), [1.50894, 0.41006, 2.79742, 0.38093],
        [-0.72088, 1.81544, 1.75591, -0.20956, 1.35909, -0.62027]),
    'Cosine': ((4, 1), [0.11864, 0.0, 0.5704, 0.36804],
        [-0.07339, -0.02235, 0.00154, 0.09822, -0.04455, 0.0]),
    'Poisson': ((1,), [2.25323],
        [0.2918, 0.0246, 0.08305, 0.47009, 0.27362, 0.01882]),
}


_MISSING_IN_FALLBACK = ("pick", "where", "reshape_like", "_sparse_softmax_cross_entropy")


@pytest.fixture(params=["ops", "fallback"])
def op_mode(request, monkeypatch):
    """'ops': the registry's pick/where/reshape_like; 'fallback': the
    equivalents the losses build when those operators are missing."""
    if request.param == "fallback":
        orig = L._has_op
        monkeypatch.setattr(L, "_has_op",
                            lambda F, name: name not in _MISSING_IN_FALLBACK and orig(F, name))
    return request.param


@pytest.mark.parametrize("hybrid", [False, True])
def test_losses_match_mxnet(hybrid, op_mode):
    for name, loss, args in _cases():
        if hybrid:
            loss.hybridize()
        arrs = [None if a is None else nd.array(a) for a in args]
        arrs[0].attach_grad()
        with autograd.record():
            out = loss(*arrs)
        out.backward()
        shape, vals, grads = MXNET[name]
        assert out.shape == shape, name
        np.testing.assert_allclose(out.asnumpy().ravel(), vals, rtol=1e-4, atol=2e-5,
                                   err_msg=name)
        np.testing.assert_allclose(arrs[0].grad.asnumpy().ravel()[:6], grads, rtol=1e-4,
                                   atol=2e-5, err_msg=name)


def test_softmax_ce_against_numpy_int_labels_and_gradient():
    x = RS.randn(6, 4).astype(np.float32)
    y = np.array([0, 3, 1, 2, 2, 0], np.int32)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    xa = nd.array(x)
    xa.attach_grad()
    ce = L.SoftmaxCrossEntropyLoss()
    with autograd.record():
        out = ce(xa, nd.array(y, dtype="int32"))
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), -np.log(p[np.arange(6), y]), rtol=1e-5)
    onehot = np.eye(4, dtype=np.float32)[y]
    np.testing.assert_allclose(xa.grad.asnumpy(), p - onehot, rtol=1e-5, atol=1e-6)


def test_batch_axis_and_weights():
    x = RS.randn(3, 4, 2).astype(np.float32)
    t = RS.randn(3, 4, 2).astype(np.float32)
    l1 = L.L1Loss(weight=3.0, batch_axis=1)
    np.testing.assert_allclose(l1(nd.array(x), nd.array(t)).asnumpy(),
                               3 * np.abs(x - t).mean(axis=(0, 2)), rtol=1e-5)
    l2 = L.L2Loss()
    sw = np.array([[[1.0]], [[0.0]], [[2.0]]], np.float32)
    np.testing.assert_allclose(l2(nd.array(x), nd.array(t), nd.array(sw)).asnumpy(),
                               (0.5 * (x - t) ** 2 * sw).mean(axis=(1, 2)), rtol=1e-5)
    with pytest.raises(AssertionError, match="weight must be a number"):
        L.L1Loss(weight="a")(nd.array(x), nd.array(t))
    assert repr(L.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"


def test_hybridized_loss_traces_once_per_input_shape(op_mode):
    ce = L.SoftmaxCELoss()
    ce.hybridize()
    traces = []
    orig = L.SoftmaxCrossEntropyLoss.hybrid_forward

    def counting(self, F, *args, **kwargs):
        if F is mx.sym:
            traces.append(1)
        return orig(self, F, *args, **kwargs)
    L.SoftmaxCrossEntropyLoss.hybrid_forward = counting
    try:
        for n in (4, 4, 2, 4, 2):
            x = nd.array(RS.randn(n, 3))
            out = ce(x, nd.array(RS.randint(0, 3, n)))
            assert out.shape == (n,)
    finally:
        L.SoftmaxCrossEntropyLoss.hybrid_forward = orig
    # the fallback's graph depends on the batch size: one graph per size, reused
    assert len(traces) == (1 if op_mode == "ops" else 2)


def test_loss_on_another_context():
    ctx = mx.cpu(1)
    x = nd.array(PRED, ctx=ctx)
    for loss, args in [(L.SoftmaxCELoss(), [x, nd.array(LAB_SPARSE, ctx=ctx)]),
                       (L.CosineEmbeddingLoss(), [x, x, nd.array(SIGN, ctx=ctx)])]:
        out = loss(*args)
        assert out.context == ctx
        out.asnumpy()
