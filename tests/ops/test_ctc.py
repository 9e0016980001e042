"""CTCLoss / ctc_loss against a brute-force sum over alignments, numeric
gradients and the reference values MXNet's own tests use."""
import itertools
import math

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.base import MXNetError


def _collapse(path, blank):
    out = []
    prev = None
    for p in path:
        if p != prev and p != blank:
            out.append(p)
        prev = p
    return out


def _brute(acts, labels, blank):
    """-log p(label | acts) for one sequence (T, A) by enumerating every path."""
    T, A = acts.shape
    y = np.exp(acts - acts.max(1, keepdims=True))
    y /= y.sum(1, keepdims=True)
    p = 0.0
    for path in itertools.product(range(A), repeat=T):
        if _collapse(path, blank) == list(labels):
            p += math.prod(y[t, path[t]] for t in range(T))
    return -math.log(p) if p > 0 else math.inf


def _np_loss(acts, labels, blank, T_b=None, L_b=None):
    T, B, A = acts.shape
    out = []
    for b in range(B):
        t = T if T_b is None else T_b[b]
        lab = list(labels[b])
        if L_b is not None:
            lab = lab[:L_b[b]]
        else:
            pad = 0 if blank == 0 else -1
            lab = lab[:lab.index(pad)] if pad in lab else lab
        out.append(_brute(acts[:t, b], lab, blank))
    return np.array(out)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_matches_brute_force(blank_label):
    rng = np.random.RandomState(0)
    T, B, A = 5, 3, 4
    acts = rng.randn(T, B, A).astype(np.float32)
    blank = 0 if blank_label == "first" else A - 1
    if blank_label == "first":
        labels = np.array([[1, 2, 0], [3, 3, 0], [2, 1, 2]], dtype=np.float32)
    else:
        labels = np.array([[0, 1, -1], [2, 2, -1], [1, 0, 1]], dtype=np.float32)
    loss = nd.ctc_loss(nd.array(acts), nd.array(labels), blank_label=blank_label)
    assert loss.shape == (B,) and loss.dtype == np.float32
    np.testing.assert_allclose(loss.asnumpy(), _np_loss(acts, labels.astype(int).tolist(), blank),
                               rtol=1e-5)


def test_ctc_lengths_and_layout_of_inputs():
    rng = np.random.RandomState(1)
    T, B, A = 6, 2, 4
    acts = rng.randn(T, B, A).astype(np.float32)
    labels = np.array([[1, 2, 2, 1], [3, 1, 1, 1]], dtype=np.float32)
    dl, ll = [5, 6], [2, 3]
    want = _np_loss(acts, labels.astype(int).tolist(), 0, dl, ll)
    got = nd.CTCLoss(nd.array(acts), nd.array(labels), nd.array(dl), nd.array(ll),
                     use_data_lengths=True, use_label_lengths=True)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    # only label lengths: the third input is label_lengths
    got = nd.ctc_loss(nd.array(acts), nd.array(labels), None, nd.array(ll),
                      use_label_lengths=True)
    np.testing.assert_allclose(got.asnumpy(), _np_loss(acts, labels.astype(int).tolist(), 0,
                                                      None, ll), rtol=1e-5)
    # only data lengths, garbage (NaN) past them is ignored
    acts2 = acts.copy()
    acts2[5, 0] = np.nan
    got = nd.ctc_loss(nd.array(acts2), nd.array([[1, 2, 0, 0], [3, 1, 0, 0]]), nd.array(dl),
                      use_data_lengths=True)
    np.testing.assert_allclose(got.asnumpy(),
                               _np_loss(acts, [[1, 2], [3, 1]], 0, dl, [2, 2]), rtol=1e-5)


def test_ctc_infeasible_label_costs_zero_like_warpctc():
    acts = nd.zeros((2, 1, 3))
    # 'aa' needs 3 steps (a blank between the repeats); only 2 are there
    assert nd.ctc_loss(acts, nd.array([[1, 1]])).asnumpy().tolist() == [0.0]
    assert np.isfinite(nd.ctc_loss(acts, nd.array([[1, 2]])).asnumpy()).all()


def test_ctc_reference_values():
    # values in MXNet 1.9.1's tests (from Torch's WarpCTC)
    acts = np.array([[[1.2, 3.4, 1.2, -0.1, -2.34], [1.2, 3.4, 1.2, -0.1, -2.34]],
                     [[0.1, 0.2, 0.3, 0.22, 0.123], [0.1, 0.2, 0.3, 0.22, 0.123]],
                     [[-15, -14, -13, -12, -11], [-15, -14, -13, -12, -11]]], dtype=np.float32)
    loss = nd.ctc_loss(nd.array(acts), nd.array([[2, 3, 0], [2, 3, 0]]))
    np.testing.assert_allclose(loss.asnumpy(), [4.04789, 4.04789], rtol=1e-5)
    gl = gluon.loss.CTCLoss()
    l2 = gl(nd.ones((2, 20, 4)), nd.array([[1, 0, -1, -1], [2, 1, 1, -1]]))
    np.testing.assert_allclose(l2.asnumpy(), [18.82820702, 16.50581741], rtol=1e-5)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_gradient_numeric(blank_label):
    rng = np.random.RandomState(2)
    T, B, A = 5, 2, 4
    acts = rng.randn(T, B, A)
    labels = np.array([[1, 2], [2, 2]]) - (blank_label == "last")
    dl = np.array([5, 4])
    x = nd.array(acts, dtype="float64")
    x.attach_grad()
    w = nd.array([1.0, 2.0], dtype="float64")
    with autograd.record():
        loss = nd.ctc_loss(x, nd.array(labels), nd.array(dl), use_data_lengths=True,
                           blank_label=blank_label)
        (loss * w).sum().backward()

    def f(a):
        return float((nd.ctc_loss(nd.array(a, dtype="float64"), nd.array(labels), nd.array(dl),
                                  use_data_lengths=True, blank_label=blank_label)
                      .asnumpy() * [1.0, 2.0]).sum())
    num = np.zeros_like(acts)
    eps = 1e-6
    for i in np.ndindex(*acts.shape):
        a1, a2 = acts.copy(), acts.copy()
        a1[i] += eps
        a2[i] -= eps
        num[i] = (f(a1) - f(a2)) / (2 * eps)
    np.testing.assert_allclose(x.grad.asnumpy(), num, atol=1e-6)
    assert (x.grad.asnumpy()[4, 1] == 0).all()          # past data length 4


def test_ctc_symbol_and_aliases():
    data, label = mx.sym.var("data"), mx.sym.var("label")
    s = mx.sym.ctc_loss(data, label)
    assert s.list_arguments() == ["data", "label"]
    assert len(s.list_outputs()) == 1
    _, out, _ = s.infer_shape(data=(7, 3, 5), label=(3, 4))
    assert out == [(3,)]
    s2 = mx.sym.CTCLoss(data, label, label_lengths=mx.sym.var("ll"), use_label_lengths=True)
    assert s2.list_arguments() == ["data", "label", "ll"]
    acts = np.random.RandomState(3).randn(4, 2, 3).astype(np.float32)
    exe = s.bind(mx.cpu(), {"data": nd.array(acts), "label": nd.array([[1, 2], [2, 0]])})
    got = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(got, _np_loss(acts, [[1, 2], [2]], 0, None, None), rtol=1e-5)
    np.testing.assert_allclose(nd.contrib.ctc_loss(nd.array(acts), nd.array([[1, 2], [2, 0]]))
                               .asnumpy(), got, rtol=1e-6)


def test_ctc_shape_errors():
    with pytest.raises(MXNetError, match="must be 3"):
        nd.ctc_loss(nd.zeros((2, 3)), nd.zeros((3, 1)))
    with pytest.raises(MXNetError, match="batch size"):
        nd.ctc_loss(nd.zeros((4, 2, 3)), nd.zeros((3, 1)))
    with pytest.raises(MXNetError, match="cannot exceed"):
        nd.ctc_loss(nd.zeros((2, 2, 3)), nd.zeros((2, 3)))
    with pytest.raises(MXNetError):
        nd.ctc_loss(nd.zeros((2, 2, 3)), nd.zeros((2, 1)), blank_label="middle")
