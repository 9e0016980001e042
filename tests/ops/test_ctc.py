"""CTCLoss against Torch/WarpCTC reference values and a brute-force sum
over alignments; its gradient against finite differences."""
import itertools

import numpy as np
import pytest

import aiond as mx
from aiond.test_utils import check_numeric_gradient


def _brute_force(acts, label, blank):
    # -log sum over every path that collapses to label
    T, C = acts.shape
    p = np.exp(acts - acts.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        out, prev = [], None
        for c in path:
            if c != prev and c != blank:
                out.append(c)
            prev = c
        if out == list(label):
            total += np.prod([p[t, c] for t, c in enumerate(path)])
    return -np.log(total)


def test_ctc_loss_matches_torch_reference():
    acts = np.array([[[1.2, 3.4, 1.2, -0.1, -2.34], [1.2, 3.4, 1.2, -0.1, -2.34]],
                     [[0.1, 0.2, 0.3, 0.22, 0.123], [0.1, 0.2, 0.3, 0.22, 0.123]],
                     [[-15, -14, -13, -12, -11], [-15, -14, -13, -12, -11]]], dtype=np.float32)
    loss = mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array([[2, 3, 0], [2, 3, 0]]))
    np.testing.assert_allclose(loss.asnumpy(), [4.04789, 4.04789], rtol=1e-5)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_loss_brute_force_and_lengths(blank_label):
    rng = np.random.RandomState(0)
    acts = rng.normal(size=(4, 2, 3))
    if blank_label == "first":
        labels, pad, blank = np.array([[1, 2], [2, 0]]), 0, 0
    else:
        labels, pad, blank = np.array([[0, 1], [1, -1]]), -1, 2
    loss = mx.nd.CTCLoss(mx.nd.array(acts), mx.nd.array(labels), blank_label=blank_label)
    want = [_brute_force(acts[:, n], [c for c in labels[n] if c != pad], blank)
            for n in range(2)]
    np.testing.assert_allclose(loss.asnumpy(), want, rtol=1e-4)
    # data lengths: steps past a sequence's end are ignored (even NaN) and get no gradient
    acts2 = acts.copy()
    acts2[3, 1] = np.nan
    x = mx.nd.array(acts2)
    x.attach_grad()
    with mx.autograd.record():
        l2 = mx.contrib.nd.CTCLoss(x, mx.nd.array(labels), mx.nd.array([4, 3]),
                                   use_data_lengths=True, blank_label=blank_label)
    l2.backward()
    want1 = _brute_force(acts[:3, 1], [c for c in labels[1] if c != pad], blank)
    np.testing.assert_allclose(l2.asnumpy(), [want[0], want1], rtol=1e-4)
    assert np.all(x.grad.asnumpy()[3, 1] == 0) and np.all(np.isfinite(x.grad.asnumpy()))


def test_ctc_loss_numeric_gradient():
    acts = np.random.normal(size=(5, 2, 4))
    labels = np.array([[1, 2, 1], [3, 0, 0]])
    sym = mx.sym.contrib.ctc_loss(mx.sym.Variable("data"), mx.sym.Variable("label"))
    check_numeric_gradient(sym, [acts, labels], grad_nodes=["data"], rtol=0.05, atol=1e-3)
    assert sym.list_outputs() == [sym.name + "_output"]
