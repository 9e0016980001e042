"""The fused RNN operator (aiond/ops/rnn.py): forward and gradients against
literals computed with MXNet 1.9.1 itself (float32, 2 layers, bidirectional,
every mode, MXNet's flat parameter packing), BPTT against finite
differences in float64 (projection, state clipping, sequence lengths and
dropout included), and bad input raising at the call."""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import OpError, ShapeError
from aiond.ops import rnn as rnn_ops
from aiond.test_utils import check_numeric_gradient

nd = mx.nd
_G = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def psize(mode, L, D, C, H, P=None):
    """MXNet's GetRnnParamSize."""
    Pp, n = P or H, 0
    for layer in range(L):
        ci = C if layer == 0 else D * Pp
        n += D * (_G[mode] * H * (ci + Pp) + (Pp * H if P else 0))
    return n + L * D * 2 * _G[mode] * H


def det_inputs(mode, T, N, C, H, L, D, P=None):
    """Deterministic inputs, the same formulas the MXNet literals used."""
    Pp = P or H
    w = np.sin(np.arange(psize(mode, L, D, C, H, P)) * 0.7) * 0.4
    x = np.cos(np.arange(T * N * C) * 0.9).reshape(T, N, C)
    h0 = (np.sin(np.arange(L * D * N * Pp) * 1.1 + 0.3) * 0.3).reshape(L * D, N, Pp)
    c0 = (np.cos(np.arange(L * D * N * H) * 0.8) * 0.3).reshape(L * D, N, H)
    return [x, w, h0] + ([c0] if mode == "lstm" else [])


def close(got, want, tol=2e-5):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    np.testing.assert_allclose(got.reshape(-1), np.asarray(want, dtype=np.float64), rtol=tol,
                               atol=tol)


# MXNet 1.9.1: T=3, N=1, C=2, H=2, num_layers=2, bidirectional, state_outputs=True,
# heads cos(1.3 k); dp = (first 6, last 6 entries, sum |.|) of the parameters' gradient
MX = {
    "rnn_relu": dict(
        out=[0.559635, 0, 0, 0, 0, 0, 0, 0, 0.195903, 0, 0, 0.072599],
        hy=[0, 0, 0, 0.906958, 0.195903, 0, 0, 0],
        dx=[-0.120387, -0.181074, -0.0169569, 0.00045165, -0.015573, 0.00932628],
        dh0=[0, 0, 0.0257164, 0.00301958, -0.355027, -0.39025, -0.0644985, -0.0536487],
        dp=([0, 0, 0, 0, 0, 0], [0.907532, 0, 0, -0.162114, 0, -0.162114], 5.9088)),
    "rnn_tanh": dict(
        out=[0.52353, -0.378845, -0.307368, -0.142022, 0.423563, -0.650223, -0.546647, 0.253863,
             0.481038, -0.559416, -0.386227, 0.287774],
        hy=[-0.262613, -0.495654, -0.13017, 0.732984, 0.481038, -0.559416, -0.307368, -0.142022],
        dx=[0.143664, -0.0122881, -0.0217191, 0.165273, 0.158105, 0.650792],
        dh0=[-0.0732298, -0.061633, 0.188314, 0.0804366, -0.247019, -0.220609, -0.288175,
             -0.181942],
        dp=([-1.49118, -0.536859, -0.509423, -0.0633237, -0.725568, -1.11984],
            [0.687058, 1.88657, -0.934199, -3.96274, -0.934199, -3.96274], 42.6735)),
    "lstm": dict(
        out=[-0.222086, -0.133384, -0.085635, -0.258716, -0.256252, -0.154105, -0.0681773,
             -0.20083, -0.266323, -0.148827, -0.0394123, -0.0877236],
        hy=[0.170144, 0.195019, 0.0354436, 0.125408, -0.266323, -0.148827, -0.085635, -0.258716],
        cy=[0.339581, 0.401142, 0.0583912, 0.165422, -0.637319, -0.248617, -0.24805, -0.839858],
        dx=[-0.0116216, 0.164559, 0.0457222, 0.173077, 0.0556184, 0.147515],
        dh0=[-0.0522714, -0.0330004, -0.0382752, 0.00360199, -0.108364, -0.138577, -0.0972904,
             -0.100894],
        dc0=[0.214989, 0.115253, -0.0695987, -0.103749, 0.16217, 0.107355, 0.110399, -0.341057],
        dp=([-0.191982, -0.109691, 0.0198238, 0.0113319, -0.0899371, -0.0569906],
            [0.0145488, 0.230472, -0.114919, -1.12581, 0.0295293, 0.451336], 25.3786)),
    "gru": dict(
        out=[-0.0540651, -0.172917, -0.241069, -0.329281, 0.0616954, -0.19217, -0.222422,
             -0.204593, 0.0646022, -0.149131, -0.138295, 0.0298779],
        hy=[-0.206378, -0.312637, 0.0878518, 0.196939, 0.0646022, -0.149131, -0.241069,
            -0.329281],
        dx=[0.140498, 0.227139, -0.00431269, 0.105153, -0.0892026, 0.0440661],
        dh0=[0.344402, 0.147275, -0.00324679, -0.0639483, 0.808572, 1.34611, 0.219468,
             -0.692771],
        dp=([0.0177235, 0.00443438, -0.003987, 0.000415333, 0.0789398, 0.0279784],
            [-0.00470606, 0.121103, 0.0753496, -0.484521, -0.116381, -1.29396], 24.7404)),
}


@pytest.mark.parametrize("mode", sorted(MX))
def test_forward_and_gradients_match_mxnet(mode):
    want = MX[mode]
    xs = [nd.array(a) for a in det_inputs(mode, 3, 1, 2, 2, 2, 2)]
    for a in xs:
        a.attach_grad()
    with mx.autograd.record():
        outs = nd.RNN(*xs, state_size=2, num_layers=2, bidirectional=True, mode=mode,
                      state_outputs=True)
    assert len(outs) == (3 if mode == "lstm" else 2)
    assert outs[0].shape == (3, 1, 4) and outs[1].shape == (4, 1, 2)
    close(outs[0], want["out"])
    close(outs[1], want["hy"])
    if mode == "lstm":
        close(outs[2], want["cy"])
    heads = [nd.array(np.cos(np.arange(o.size) * 1.3).reshape(o.shape)) for o in outs]
    mx.autograd.backward(outs, heads)
    close(xs[0].grad, want["dx"])
    close(xs[2].grad, want["dh0"])
    if mode == "lstm":
        close(xs[3].grad, want["dc0"])
    dp = xs[1].grad.asnumpy()
    close(dp[:6], want["dp"][0])
    close(dp[-6:], want["dp"][1])
    assert abs(np.abs(dp).sum() - want["dp"][2]) < 1e-3


def test_lstm_projection_matches_mxnet():
    # MXNet 1.9.1 (CPU, inference): state_size=3, projection_size=2, 2 layers, bidirectional
    xs = [nd.array(a) for a in det_inputs("lstm", 3, 1, 2, 3, 2, 2, P=2)]
    assert xs[1].shape == (360,)
    out, hy, cy = nd.RNN(*xs, state_size=3, num_layers=2, bidirectional=True, mode="lstm",
                         state_outputs=True, projection_size=2)
    assert (out.shape, hy.shape, cy.shape) == ((3, 1, 4), (4, 1, 2), (4, 1, 3))
    close(out, [-0.0441661, 0.0187099, -0.0703211, 0.0423111, -0.102634, 0.0239002, -0.0614708,
                0.0252322, -0.136684, 0.0304577, -0.0473821, -0.00106988])
    close(hy, [0.0219459, -0.0801274, -0.0167736, 0.0357212, -0.136684, 0.0304577, -0.0703211,
               0.0423111])
    close(cy, [0.1871, 0.286092, 0.204203, 0.00378972, -0.174463, 0.0963221, -0.116376,
               -0.348091, -0.304599, 0.299863, 0.162536, -0.0356056])


def np_lstm_layer(x, wx, wh, bx, bh, h, c):
    """Reference for one unidirectional LSTM layer, gates i, f, g, o."""
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    H = h.shape[-1]
    ys = []
    for t in range(x.shape[0]):
        a = x[t] @ wx.T + bx + h @ wh.T + bh
        i, f, o = sig(a[:, :H]), sig(a[:, H:2 * H]), sig(a[:, 3 * H:])
        g = np.tanh(a[:, 2 * H:3 * H])
        c = f * c + i * g
        h = o * np.tanh(c)
        ys.append(h)
    return np.stack(ys), h, c


def test_parameter_packing_is_weights_then_biases():
    T, N, C, H = 4, 3, 5, 2
    rs = np.random.RandomState(0)
    x, h0, c0 = rs.randn(T, N, C), rs.randn(1, N, H), rs.randn(1, N, H)
    wx, wh, bx, bh = rs.randn(4 * H, C), rs.randn(4 * H, H), rs.randn(4 * H), rs.randn(4 * H)
    flat = np.concatenate([wx.ravel(), wh.ravel(), bx, bh])
    out, hy, cy = nd.RNN(nd.array(x, dtype="float64"), nd.array(flat, dtype="float64"),
                         nd.array(h0, dtype="float64"), nd.array(c0, dtype="float64"),
                         state_size=H, num_layers=1, mode="lstm", state_outputs=True)
    y, h, c = np_lstm_layer(x, wx, wh, bx, bh, h0[0], c0[0])
    np.testing.assert_allclose(out.asnumpy(), y, rtol=1e-12)
    np.testing.assert_allclose(hy.asnumpy()[0], h, rtol=1e-12)
    np.testing.assert_allclose(cy.asnumpy()[0], c, rtol=1e-12)


GRAD_CASES = [
    ("rnn_tanh", 2, True, {}),
    ("rnn_relu", 2, True, {}),
    ("lstm", 2, True, {}),
    ("gru", 2, True, {}),
    ("lstm", 2, True, {"projection_size": 2}),
    ("lstm", 1, False, {"lstm_state_clip_min": -0.3, "lstm_state_clip_max": 0.35}),
    ("gru", 2, True, {"use_sequence_length": True}),
    ("lstm", 2, True, {"projection_size": 2, "use_sequence_length": True}),
    ("rnn_tanh", 2, True, {"p": 0.4}),
]


@pytest.mark.parametrize("mode,L,bidir,extra", GRAD_CASES,
                         ids=["%s-%d-%s-%s" % (m, L, b, "-".join(sorted(e))) for m, L, b, e in
                              GRAD_CASES])
def test_gradients_against_finite_differences(mode, L, bidir, extra):
    T, N, C, H = 3, 2, 2, 3
    D = 2 if bidir else 1
    P = extra.get("projection_size")
    rs = np.random.RandomState(3)
    ins = [rs.uniform(-1, 1, (T, N, C)), rs.uniform(-0.6, 0.6, psize(mode, L, D, C, H, P)),
           rs.uniform(-0.5, 0.5, (L * D, N, P or H))]
    if mode == "lstm":
        ins.append(rs.uniform(-0.5, 0.5, (L * D, N, H)))
    kw = dict(state_size=H, num_layers=L, bidirectional=bidir, mode=mode, state_outputs=True,
              **extra)

    def f(*a):
        if "p" in extra:
            mx.random.seed(5)           # the same dropout masks in every evaluation
        if extra.get("use_sequence_length"):
            a = a + (nd.array([2, 3], dtype="int32"),)
        return nd.RNN(*a, **kw)
    check_numeric_gradient(f, ins, rtol=1e-4, atol=1e-6)


def _run(mode, xs, **kw):
    return nd.RNN(*[nd.array(a, dtype="float64") for a in xs], mode=mode, state_outputs=True,
                  **kw)


@pytest.mark.parametrize("mode", ["gru", "lstm"])
def test_sequence_length_equals_running_each_sequence_alone(mode):
    T, N, C, H, L = 5, 3, 2, 3, 2
    rs = np.random.RandomState(1)
    xs = [rs.randn(T, N, C), rs.randn(psize(mode, L, 2, C, H)) * 0.5, rs.randn(2 * L, N, H)]
    if mode == "lstm":
        xs.append(rs.randn(2 * L, N, H))
    lengths = [5, 2, 0]
    res = _run(mode, xs + [np.array(lengths)], state_size=H, num_layers=L, bidirectional=True,
               use_sequence_length=True)
    out = res[0].asnumpy()
    for b, n in enumerate(lengths):
        if n == 0:          # nothing runs: zeros out, the states pass through
            np.testing.assert_array_equal(out[:, b], 0)
            np.testing.assert_allclose(res[1].asnumpy()[:, b], xs[2][:, b])
            continue
        one = [xs[0][:n, b:b + 1], xs[1]] + [s[:, b:b + 1] for s in xs[2:]]
        ref = _run(mode, one, state_size=H, num_layers=L, bidirectional=True)
        np.testing.assert_allclose(out[:n, b:b + 1], ref[0].asnumpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(out[n:, b], 0)
        for k in range(1, len(res)):
            np.testing.assert_allclose(res[k].asnumpy()[:, b:b + 1], ref[k].asnumpy(),
                                       rtol=1e-12, atol=1e-12)


def test_lstm_state_clipping_bounds_the_cell():
    xs = [a * 4 for a in det_inputs("lstm", 3, 1, 2, 2, 1, 1)]
    out, hy, cy = _run("lstm", xs, state_size=2, num_layers=1, lstm_state_clip_min=-0.2,
                       lstm_state_clip_max=0.1)
    free = _run("lstm", xs, state_size=2, num_layers=1)
    c = cy.asnumpy()
    assert c.min() >= -0.2 and c.max() <= 0.1
    assert not np.allclose(free[2].asnumpy(), c)


def test_dropout_between_layers_only_when_training():
    xs = [nd.array(a) for a in det_inputs("rnn_tanh", 3, 4, 2, 8, 2, 1)]
    kw = dict(state_size=8, num_layers=2, mode="rnn_tanh", p=0.5)
    base = nd.RNN(*xs, state_size=8, num_layers=2, mode="rnn_tanh").asnumpy()
    np.testing.assert_array_equal(nd.RNN(*xs, **kw).asnumpy(), base)       # predict mode
    with mx.autograd.train_mode():
        a = nd.RNN(*xs, **kw).asnumpy()
    assert not np.allclose(a, base)
    one = dict(kw, num_layers=1)                    # no layer below the last: nothing dropped
    xs1 = [nd.array(v) for v in det_inputs("rnn_tanh", 3, 4, 2, 8, 1, 1)]
    with mx.autograd.train_mode():
        np.testing.assert_array_equal(nd.RNN(*xs1, **one).asnumpy(),
                                      nd.RNN(*xs1, state_size=8, num_layers=1,
                                             mode="rnn_tanh").asnumpy())


def test_outputs_visible_and_dtypes():
    xs = [nd.array(a) for a in det_inputs("gru", 3, 2, 2, 2, 1, 1)]
    y = nd.RNN(*xs, state_size=2, num_layers=1, mode="gru")
    assert isinstance(y, nd.NDArray) and y.shape == (3, 2, 2)
    assert len(nd.RNN(*xs, state_size=2, num_layers=1, mode="gru", state_outputs=True)) == 2
    h = [nd.array(a, dtype="float16") for a in det_inputs("lstm", 3, 2, 2, 2, 1, 1)]
    y16 = nd.RNN(*h, state_size=2, num_layers=1, mode="lstm")
    y32 = nd.RNN(*[a.astype("float32") for a in h], state_size=2, num_layers=1, mode="lstm")
    assert y16.dtype == np.float16
    np.testing.assert_allclose(y16.asnumpy(), y32.asnumpy(), atol=2e-3)


def test_param_shapes_helper():
    attrs = mx.ops.get("RNN").parse(dict(state_size=3, num_layers=2, mode="lstm",
                                         bidirectional=True, projection_size=2))
    assert rnn_ops.param_shapes(attrs, (5, 4, 7)) == {
        "parameters": (psize("lstm", 2, 2, 7, 3, 2),), "state": (4, 4, 2),
        "state_cell": (4, 4, 3), "sequence_length": (4,)}


def _bad(**kw):
    base = dict(state_size=2, num_layers=1, mode="lstm")
    base.update(kw)
    return base


x0 = nd.zeros((3, 2, 4))
p0 = nd.zeros((psize("lstm", 1, 1, 4, 2),))
s0 = nd.zeros((1, 2, 2))
BAD = [
    ("mode", lambda: nd.RNN(x0, p0, s0, s0, **_bad(mode="elman")), OpError, "RNN: mode='elman'"),
    ("missing-cell", lambda: nd.RNN(x0, p0, s0, **_bad()), OpError,
     r"RNN: expects 4 inputs .*state_cell.* got 3"),
    ("data-2d", lambda: nd.RNN(nd.zeros((3, 4)), p0, s0, s0, **_bad()), ShapeError,
     "RNN: data must be 3-D"),
    ("params", lambda: nd.RNN(x0, nd.zeros((7,)), s0, s0, **_bad()), ShapeError,
     r"RNN: parameters has shape \(7,\) but expected \(64,\)"),
    ("state", lambda: nd.RNN(x0, p0, nd.zeros((2, 2, 2)), s0, **_bad()), ShapeError,
     r"RNN: state has shape \(2, 2, 2\) but expected \(1, 2, 2\)"),
    ("dtype", lambda: nd.RNN(x0, p0, s0, s0.astype("float64"), **_bad()), OpError,
     "RNN: state_cell has dtype float64"),
    ("p", lambda: nd.RNN(x0, p0, s0, s0, **_bad(p=1.0)), OpError, r"RNN: p=1.0 is out of range"),
    ("proj-gru", lambda: nd.RNN(x0, p0, s0, **_bad(mode="gru", projection_size=1)), OpError,
     "RNN: projection_size is only supported with mode='lstm'"),
    ("proj-big", lambda: nd.RNN(x0, p0, s0, s0, **_bad(projection_size=3)), OpError,
     r"RNN: projection_size=3 must be in \[1, state_size=2\]"),
    ("clip-one", lambda: nd.RNN(x0, p0, s0, s0, **_bad(lstm_state_clip_min=0.0)), OpError,
     "RNN: lstm_state_clip_min and lstm_state_clip_max must be given together"),
    ("seq-len", lambda: nd.RNN(x0, p0, s0, s0, nd.zeros((3,)), **_bad(use_sequence_length=True)),
     ShapeError, r"RNN: sequence_length has shape \(3,\) but expected \(2,\)"),
    ("int-data", lambda: nd.RNN(x0.astype("int32"), p0, s0, s0, **_bad()), OpError,
     "RNN: only supports floating point data"),
]


@pytest.mark.parametrize("name,call,exc,match", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_at_the_call(name, call, exc, match):
    with pytest.raises(exc, match=match):
        call()
