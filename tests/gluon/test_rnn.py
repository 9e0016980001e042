"""gluon.rnn: fused RNN/LSTM/GRU layers against MXNet 1.9.1 literals, the
fused operator, the cells' unroll and numpy; cells; deferred input size;
MXNet-saved parameter files; a tiny language model that trains."""
import os

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import nn, rnn

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "data", "zoo")
RS = np.random.RandomState(0)


def _set_params(layer):
    """Deterministic parameters (as the script that made the literals)."""
    for j, (_, p) in enumerate(sorted(layer.collect_params().items())):
        n = int(np.prod(p.shape))
        p.set_data(nd.array((np.sin(np.arange(n) * 0.37 + j) * 0.5).reshape(p.shape)))


T, N, C = 3, 2, 2

# MXNet 1.9.1 (CPU): layer(x, states) with _set_params, x = cos(0.61 k) and
# states = 0.3 sin(0.9 k + 0.2) (k the flat index); output, new states
MX_CASES = [
    ("RNN", {"hidden_size": 2, "num_layers": 2, "activation": "tanh", "bidirectional": True},
     [-0.801658, -0.27537, 0.3751128, 0.5262867, -0.01931055, 0.02653977, 0.5386784,
      0.06630884, 0.8392497, 0.3287458, 0.4294936, -0.6707851, 0.6188451, 0.1385282,
      0.6727754, -0.3078305, -0.5489426, -0.1717789, 0.4551199, -0.2918752, -0.7116376,
      -0.1340901, 0.667318, 0.5018582],
     [[0.7987238, 0.7130862, 0.8278223, 0.5628351, -0.4508651, -0.666625, 0.3031321,
       -0.3140555, -0.5489426, -0.1717789, -0.7116376, -0.1340901, 0.3751128, 0.5262867,
       0.5386784, 0.06630884]]),
    ("RNN", {"hidden_size": 2, "activation": "relu", "layout": "NTC"},
     [0.588485, 0.05418336, 0.782058, 0.8515406, 1.259748, 1.905657, 0.5917646, 1.115718,
      1.182619, 0.9637781, 1.390748, 0.8738465],
     [[1.259748, 1.905657, 1.390748, 0.8738465]]),
    ("LSTM", {"hidden_size": 2, "num_layers": 2, "bidirectional": True},
     [0.1382848, 0.1733236, 0.2358018, 0.1977278, 0.005676454, 0.01857582, 0.264103,
      0.2076795, 0.08140571, 0.1702943, 0.1912463, 0.1847168, -0.008422052, 0.07769269,
      0.23794, 0.1880108, 0.08118256, 0.1729473, 0.0985118, 0.09316228, 0.05062252,
      0.133439, 0.1623131, 0.1352786],
     [[0.1767731, 0.08989511, 0.1932775, 0.1258016, -0.06952965, -0.08069706, -0.1452608,
       -0.147554, 0.08118256, 0.1729473, 0.05062252, 0.133439, 0.2358018, 0.1977278,
       0.264103, 0.2076795],
      [0.3089817, 0.1723145, 0.2858165, 0.1997522, -0.2052586, -0.3675396, -0.4450733,
       -0.4461548, 0.1355835, 0.3088947, 0.08646625, 0.2341006, 0.5117683, 0.4244755,
       0.573383, 0.4844729]]),
    ("LSTM", {"hidden_size": 3, "projection_size": 2},
     [0.05063434, -0.009551577, -0.02874488, 0.02424164, -0.06356351, -0.05310516,
      -0.09918394, -0.01518679, -0.01411554, 0.001625234, -0.01615301, 0.02035637],
     [[-0.01411554, 0.001625234, -0.01615301, 0.02035637],
      [-0.05682252, -0.03619865, 0.002667814, 0.01581572, -0.08048163, -0.1182501]]),
    ("GRU", {"hidden_size": 2, "num_layers": 2, "bidirectional": True},
     [0.2718671, 0.3669347, 0.2056032, 0.307111, 0.02427824, 0.09424109, 0.2497002,
      0.3710749, 0.1379831, 0.3444133, 0.1263152, 0.3442804, -0.00482737, 0.2012023,
      0.223579, 0.3283951, 0.2232263, 0.3976513, 0.0185235, 0.05611416, 0.307408, 0.372624,
      0.1819878, 0.157178],
     [[0.05446058, 0.1388627, 0.07343248, 0.169196, -0.117187, -0.3957224, -0.3683839,
       -0.4491439, 0.2232263, 0.3976513, 0.307408, 0.372624, 0.2056032, 0.307111, 0.2497002,
       0.3710749]]),
]


def _case_inputs(layer, kw):
    shp = (T, N, C) if kw.get("layout", "TNC") == "TNC" else (N, T, C)
    x = nd.array(np.cos(np.arange(T * N * C) * 0.61).reshape(shp))
    st = [nd.array(np.sin(np.arange(s.size) * 0.9 + 0.2).reshape(s.shape) * 0.3)
          for s in layer.begin_state(N)]
    return x, st


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("case", range(len(MX_CASES)))
def test_layer_vs_mxnet_literals(case, hybrid):
    cls, kw, want_out, want_states = MX_CASES[case]
    layer = getattr(rnn, cls)(input_size=C, **kw)
    layer.initialize()
    _set_params(layer)
    if hybrid:
        layer.hybridize()
    x, st = _case_inputs(layer, kw)
    out, new = layer(x, st)
    np.testing.assert_allclose(out.asnumpy().ravel(), want_out, rtol=1e-5, atol=1e-6)
    assert len(new) == len(want_states)
    for s, w in zip(new, want_states):
        np.testing.assert_allclose(s.asnumpy().ravel(), w, rtol=1e-5, atol=1e-6)


def test_lstm_gradients_vs_mxnet_literals():
    layer = rnn.LSTM(2, num_layers=2, bidirectional=True, input_size=C)
    layer.initialize()
    _set_params(layer)
    x = nd.array(np.cos(np.arange(T * N * C) * 0.61).reshape(T, N, C))
    x.attach_grad()
    with autograd.record():
        out = layer(x)
        (out * out).sum().backward()
    np.testing.assert_allclose(
        x.grad.asnumpy().ravel(),
        [-0.003455883, 0.00147714, -0.002680602, 0.002206816, -0.004700408, -0.0003979767,
         -0.004719138, -0.0003692447, -0.005922591, -0.001142874, -0.005382507,
         0.0002585498], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(
        layer.l0_i2h_weight.grad().asnumpy().ravel(),
        [0.0007622313, 0.0009308649, 0.006379553, 0.006176787, 0.002942403, 0.004239163,
         -0.001194018, -0.001446328, 0.03374023, 0.02692722, 0.002135848, 0.001366553,
         -0.0001622159, 0.002406102, 0.003138985, 0.003228942], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(
        layer.r1_h2h_bias.grad().asnumpy().ravel(),
        [0.1902401, 0.08583795, 0.0845771, 0.04673469, 0.7215123, 0.5734566, 0.2588337,
         0.1400505], rtol=1e-4, atol=1e-7)


def test_param_names_and_shapes():
    lstm = rnn.LSTM(5, 2, bidirectional=True)
    names = [k[len(lstm.prefix):] for k in lstm.collect_params().keys()]
    assert lstm.prefix == "lstm0_" or lstm.prefix.startswith("lstm")
    assert names == ["%s%d_%s_%s" % (d, l, g, t) for l in range(2) for d in "lr"
                     for g, t in (("i2h", "weight"), ("h2h", "weight"), ("i2h", "bias"),
                                  ("h2h", "bias"))]
    assert lstm.l0_i2h_weight.shape == (20, 0)       # deferred input size
    assert lstm.l1_i2h_weight.shape == (20, 10)
    p = rnn.LSTM(4, projection_size=2, input_size=3)
    shapes = {k[len(p.prefix):]: v.shape for k, v in p.collect_params().items()}
    assert shapes == {"l0_i2h_weight": (16, 3), "l0_h2h_weight": (16, 2),
                      "l0_i2h_bias": (16,), "l0_h2h_bias": (16,), "l0_h2r_weight": (2, 4)}
    g = rnn.GRU(3, input_size=2)
    assert g.l0_i2h_weight.shape == (9, 2) and g.l0_h2h_weight.shape == (9, 3)
    assert repr(rnn.LSTM(4, 2, dropout=0.3, bidirectional=True, input_size=5)) == \
        "LSTM(5 -> 4, TNC, num_layers=2, dropout=0.3, bidirectional)"
    assert repr(rnn.GRU(3, layout="NTC")) == "GRU(None -> 3, NTC)"


def _pack(layer):
    """The fused operator's flat parameter vector, in MXNet's order."""
    L, D = layer._num_layers, layer._dir
    gs = ["i2h", "h2h"] + (["h2r"] if layer._projection_size else [])
    parts = [getattr(layer, "%s%d_%s_weight" % (d, l, g)).data().asnumpy().ravel()
             for l in range(L) for d in "lr"[:D] for g in gs]
    parts += [getattr(layer, "%s%d_%s_bias" % (d, l, g)).data().asnumpy().ravel()
              for l in range(L) for d in "lr"[:D] for g in ("i2h", "h2h")]
    return nd.array(np.concatenate(parts))


@pytest.mark.parametrize("mode,cls,kw", [
    ("lstm", rnn.LSTM, {"num_layers": 2, "bidirectional": True}),
    ("gru", rnn.GRU, {"num_layers": 2}),
    ("rnn_tanh", rnn.RNN, {"activation": "tanh", "bidirectional": True}),
    ("lstm", rnn.LSTM, {"projection_size": 2}),
])
def test_layer_vs_fused_op(mode, cls, kw):
    H = 3
    layer = cls(H, input_size=4, **kw)
    layer.initialize(mx.init.Uniform(0.5))
    x = nd.array(RS.randn(5, 2, 4))
    states = [nd.array(RS.randn(*s.shape)) for s in layer.begin_state(2)]
    out, new = layer(x, states)
    ref = nd.RNN(x, _pack(layer), *states, state_size=H, num_layers=layer._num_layers,
                 bidirectional=layer._dir == 2, mode=mode, state_outputs=True,
                 projection_size=kw.get("projection_size"))
    for a, b in zip([out] + list(new), ref):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-6)


def _np_lstm(x, wi, wh, bi, bh, h, c):
    """One-direction LSTM over (T, N, C) x in numpy (gates i, f, g, o)."""
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    H = h.shape[1]
    ys = []
    for t in range(x.shape[0]):
        a = x[t] @ wi.T + bi + h @ wh.T + bh
        i, f, g, o = sig(a[:, :H]), sig(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), \
            sig(a[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        ys.append(h)
    return np.stack(ys), h, c


def test_lstm_vs_numpy_and_layouts():
    layer = rnn.LSTM(3, input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    x = RS.randn(4, 2, 2).astype(np.float32)
    y = layer(nd.array(x))                              # no states: output only
    assert isinstance(y, nd.NDArray) and y.shape == (4, 2, 3)
    p = {k[len(layer.prefix):]: v.data().asnumpy() for k, v in layer.collect_params().items()}
    ref, _, _ = _np_lstm(x, p["l0_i2h_weight"], p["l0_h2h_weight"], p["l0_i2h_bias"],
                         p["l0_h2h_bias"], np.zeros((2, 3)), np.zeros((2, 3)))
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    ntc = rnn.LSTM(3, input_size=2, layout="NTC", params=layer.collect_params())
    y2 = ntc(nd.array(x.transpose(1, 0, 2)))
    np.testing.assert_allclose(y2.asnumpy().transpose(1, 0, 2), y.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("cls", [rnn.LSTM, rnn.GRU, rnn.RNN])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_vs_cells_unroll(cls, bidirectional):
    layer = cls(4, num_layers=2, layout="NTC", bidirectional=bidirectional, input_size=3)
    layer.initialize(mx.init.Uniform(0.5))
    x = nd.array(RS.randn(2, 5, 3))
    y = layer(x)
    stack = layer._unfuse()         # cells sharing the layer's parameters
    yc, states = stack.unroll(5, x, layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(yc.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    stack.hybridize()
    yh, _ = stack.unroll(5, x, layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(yh.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    # the layer's final states are the cells' final states (layer by layer, l then r)
    _, lstates = layer(x, layer.begin_state(2))
    nstate = len(layer.state_info())
    for k in range(nstate):
        cell_states = np.stack([s.asnumpy() for s in states[k::nstate]])
        np.testing.assert_allclose(lstates[k].asnumpy(), cell_states, rtol=1e-5, atol=1e-6)


def test_cells_explicit_weights_and_steps():
    layer = rnn.GRU(3, input_size=2)
    layer.initialize(mx.init.Uniform(0.5))
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    for g in ("i2h", "h2h"):
        for t in ("weight", "bias"):
            getattr(cell, "%s_%s" % (g, t)).set_data(
                getattr(layer, "l0_%s_%s" % (g, t)).data())
    x = nd.array(RS.randn(4, 2, 2))
    y, (hn,) = layer(x, layer.begin_state(2))
    h = [nd.zeros((2, 3))]
    for t in range(4):
        o, h = cell(x[t], h)
        np.testing.assert_allclose(o.asnumpy(), y[t].asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h[0].asnumpy(), hn[0].asnumpy(), rtol=1e-5, atol=1e-6)
    assert [s["shape"] for s in cell.state_info(7)] == [(7, 3)]
    assert [s.shape for s in rnn.LSTMCell(5).begin_state(batch_size=4)] == [(4, 5), (4, 5)]
    assert repr(rnn.LSTMCell(4, input_size=2)) == "LSTMCell(2 -> 16)"
    assert repr(rnn.RNNCell(3, "relu")) == "RNNCell(None -> 3, relu)"


def test_sequence_length_layer_vs_cells_valid_length():
    layer = rnn.LSTM(3, input_size=2, use_sequence_length=True)
    layer.initialize(mx.init.Uniform(0.5))
    x = nd.array(RS.randn(5, 3, 2))
    vl = nd.array([5, 2, 3])
    y, (h, c) = layer(x, layer.begin_state(3), vl)
    cell = layer._unfuse()
    yc, (hc, cc) = cell.unroll(5, x, layout="TNC", merge_outputs=True, valid_length=vl)
    np.testing.assert_allclose(y.asnumpy(), yc.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.asnumpy()[0], hc.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy()[0], cc.asnumpy(), rtol=1e-5, atol=1e-6)
    assert np.all(y.asnumpy()[2:, 1] == 0)


def test_modifier_and_sequential_cells():
    x = nd.array(RS.randn(2, 4, 3))
    seq = rnn.SequentialRNNCell()
    with seq.name_scope():
        seq.add(rnn.LSTMCell(3))
        seq.add(rnn.DropoutCell(0.5))
        seq.add(rnn.ResidualCell(rnn.GRUCell(3)))
    seq.initialize()
    names = [k[len(seq.prefix):] for k in seq.collect_params().keys()]
    assert names == ["lstm0_i2h_weight", "lstm0_h2h_weight", "lstm0_i2h_bias", "lstm0_h2h_bias",
                     "gru0_i2h_weight", "gru0_h2h_weight", "gru0_i2h_bias", "gru0_h2h_bias"]
    outs, states = seq.unroll(4, x, layout="NTC", merge_outputs=False)
    assert len(outs) == 4 and outs[0].shape == (2, 3) and [s.shape for s in states] == [(2, 3)] * 3
    # predict mode: dropout is the identity, residual adds the GRU's input
    lstm_out, _ = seq[0].unroll(4, x, layout="NTC", merge_outputs=True)
    gru = rnn.GRUCell(3, params=seq[2].base_cell.params)    # the base cell's parameters
    gru_out, _ = gru.unroll(4, lstm_out, layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(nd.stack(*outs, axis=1).asnumpy(),
                               (gru_out + lstm_out).asnumpy(), rtol=1e-5, atol=1e-6)
    with autograd.record():
        dropped, _ = rnn.DropoutCell(0.5).unroll(4, x, layout="NTC", merge_outputs=True)
    assert (dropped.asnumpy() == 0).any()
    z = rnn.ZoneoutCell(rnn.RNNCell(3), 0.5, 0.5)
    z.initialize()
    zo, _ = z.unroll(4, x, layout="NTC", merge_outputs=True)     # predict: base cell
    zb, _ = rnn.RNNCell(3, params=z.base_cell.params).unroll(4, x, layout="NTC",
                                                            merge_outputs=True)
    np.testing.assert_allclose(zo.asnumpy(), zb.asnumpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        rnn.BidirectionalCell(rnn.LSTMCell(2), rnn.LSTMCell(2))(x[:, 0], [])


def test_hybridize_states_and_batch_sizes():
    layer = rnn.GRU(3, layout="NTC")
    layer.initialize()
    x = nd.array(RS.randn(2, 4, 5))
    y0 = layer(x).asnumpy()                      # deferred input size from x
    assert layer.l0_i2h_weight.shape == (9, 5)
    layer.hybridize()
    np.testing.assert_allclose(layer(x).asnumpy(), y0, rtol=1e-6)
    out, st = layer(x, layer.begin_state(2))     # with states: (output, states)
    np.testing.assert_allclose(out.asnumpy(), y0, rtol=1e-6)
    assert st[0].shape == (1, 2, 3)
    assert layer(nd.array(RS.randn(3, 4, 5))).shape == (3, 4, 3)
    bad = rnn.GRU(3, input_size=5)
    bad.initialize()
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        bad(nd.array(RS.randn(4, 2, 5)), [nd.zeros((1, 3, 3))])


class _LM(gluon.HybridBlock):
    def __init__(self, vocab, **kwargs):
        super(_LM, self).__init__(**kwargs)
        with self.name_scope():
            self.emb = nn.Embedding(vocab, 8)
            self.lstm = rnn.LSTM(16, num_layers=2, layout="NTC")     # input size deferred
            self.out = nn.Dense(vocab, flatten=False)

    def hybrid_forward(self, F, x):
        return self.out(self.lstm(self.emb(x)))


def test_tiny_language_model_trains():
    seq = np.tile(np.arange(12), 6)
    X = nd.array(np.stack([seq[i:i + 8] for i in range(6)]))
    Y = nd.array(np.stack([seq[i + 1:i + 9] for i in range(6)]))
    losses = {}
    for hybrid in (False, True):
        mx.random.seed(1)
        net = _LM(12)
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.02})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        hist = []
        for _ in range(15):
            with autograd.record():
                loss = loss_fn(net(X), Y).mean()
            loss.backward()
            trainer.step(1)
            hist.append(float(loss.asscalar()))
        assert net.lstm.l0_i2h_weight.shape == (64, 8)
        assert hist[-1] < 0.6 * hist[0], hist
        losses[hybrid] = hist
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-4)
    # a hybridized parent builds the zero states from the input: any batch size
    assert net(X[:2]).shape == (2, 8, 12)


def test_mxnet_saved_params_load_and_roundtrip(tmp_path):
    io = nd.load(os.path.join(ZOO, "lstm_bi_io.nd"))
    layer = rnn.LSTM(2, bidirectional=True)                   # input size from the file
    layer.load_parameters(os.path.join(ZOO, "lstm_bi.params"))
    assert layer.l0_i2h_weight.shape == (8, 2)
    y, (hn, cn) = layer(io["x"], [io["h0"], io["c0"]])
    for a, b in ((y, "y"), (hn, "hn"), (cn, "cn")):
        np.testing.assert_allclose(a.asnumpy(), io[b].asnumpy(), rtol=1e-5, atol=1e-6)
    f = str(tmp_path / "lstm.params")
    layer.save_parameters(f)
    assert sorted(nd.load(f)) == sorted(nd.load(os.path.join(ZOO, "lstm_bi.params")))
    assert "_unfused.0.l_cell.i2h_weight" in nd.load(f)
    again = rnn.LSTM(2, bidirectional=True, input_size=2)
    again.load_parameters(f)
    np.testing.assert_allclose(again(io["x"], [io["h0"], io["c0"]])[0].asnumpy(),
                               y.asnumpy(), rtol=1e-6)
