"""gluon.contrib of issue 31: the cnn deformable convolution blocks, the rnn
conv cells, LSTMPCell, VariationalDropoutCell, dynamic_unroll,
nn.SparseEmbedding and data.text's WikiText datasets (parsed from local
files; the download path is exercised with a local archive, no network).
Block results are checked against MXNet 1.9.1's (contrib31_blocks_mxnet191.npz,
made by contrib31_blocks_cases.py)."""
import os
import zipfile

import numpy as np
import pytest

import aiond as mx
from aiond.gluon.contrib import cnn, rnn

from . import contrib31_blocks_cases

HERE = os.path.dirname(os.path.abspath(__file__))


def test_blocks_match_mxnet():
    ref = np.load(os.path.join(HERE, "contrib31_blocks_mxnet191.npz"))
    ours = contrib31_blocks_cases.cases(mx)
    assert set(ours) == set(ref.files)
    for k, a in ours.items():
        assert a.shape == ref[k].shape, k
        np.testing.assert_allclose(a, ref[k], rtol=1e-4, atol=1e-4, err_msg=k)


def test_block_parameters_and_repr():
    m = cnn.ModulatedDeformableConvolution(6, kernel_size=3, padding=1, num_deformable_group=2,
                                           in_channels=4)
    shapes = {k[len(m.prefix):]: p.shape for k, p in m.collect_params().items()}
    # offsets and masks: 3 * 3 * 3 * num_deformable_group channels; weight's input axis deferred
    assert shapes == {"offset_weight": (54, 4, 3, 3), "offset_bias": (54,),
                      "deformable_conv_weight": (6, 0, 3, 3), "deformable_conv_bias": (6,)}
    assert m.name.startswith("modulated_deformable_conv")
    d = cnn.DeformableConvolution(4, kernel_size=(3, 3), use_bias=False, activation="relu")
    assert repr(d) == ("DeformableConvolution(None -> 4, kernel_size=(3, 3), stride=(1, 1), "
                       "bias=False, Activation(relu))")
    # offset weights start at zero: the block is then a plain convolution
    d.initialize()
    x = mx.nd.array(np.random.RandomState(0).rand(1, 2, 5, 5))
    y = d(x)
    w = d.deformable_conv_weight.data()
    ref = mx.nd.relu(mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True))
    np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="layout"):
        cnn.DeformableConvolution(4, kernel_size=3, layout="NCW")


def test_conv3d_cell_with_flat_depth_is_conv2d_cell():
    rs = np.random.RandomState(1)
    seq = rs.randn(2, 3, 2, 5, 5)                     # N T C H W
    c2 = rnn.Conv2DGRUCell((2, 5, 5), 3, i2h_kernel=3, h2h_kernel=3, i2h_pad=1)
    c3 = rnn.Conv3DGRUCell((2, 1, 5, 5), 3, i2h_kernel=(1, 3, 3), h2h_kernel=(1, 3, 3),
                           i2h_pad=(0, 1, 1))
    c2.initialize()
    c3.initialize()
    c2.unroll(3, mx.nd.array(seq), merge_outputs=True)
    c3.unroll(3, mx.nd.array(seq[:, :, :, None]), merge_outputs=True)
    for (_, p2), (_, p3) in zip(sorted(c2.collect_params().items()),
                                sorted(c3.collect_params().items())):
        v = rs.uniform(-0.5, 0.5, p2.shape)
        p2.set_data(mx.nd.array(v))
        p3.set_data(mx.nd.array(v.reshape(p3.shape)))
    o2, s2 = c2.unroll(3, mx.nd.array(seq), merge_outputs=True)
    o3, s3 = c3.unroll(3, mx.nd.array(seq[:, :, :, None]), merge_outputs=True)
    assert o3.shape == (2, 3, 3, 1, 5, 5)
    np.testing.assert_allclose(o3.asnumpy()[:, :, :, 0], o2.asnumpy(), rtol=1e-5, atol=1e-6)
    assert c3.state_info(4) == [{"shape": (4, 3, 1, 5, 5), "__layout__": "NCDHW"}]


def test_conv_cell_arguments_checked():
    with pytest.raises(ValueError, match="odd"):
        rnn.Conv2DLSTMCell((3, 8, 8), 4, i2h_kernel=3, h2h_kernel=2)
    with pytest.raises(ValueError, match="length 2"):
        rnn.Conv2DRNNCell((3, 8, 8), 4, i2h_kernel=(3, 3, 3), h2h_kernel=3)
    c = rnn.Conv1DLSTMCell((3, 10), 5, i2h_kernel=3, h2h_kernel=3)
    assert c.i2h_weight.shape == (20, 3, 3) and c.h2h_weight.shape == (20, 5, 3)
    assert c.state_info(2)[0]["shape"] == (2, 5, 8)
    assert repr(c) == "Conv1DLSTMCell(3 -> 20, tanh, NCW)"
    assert c.name.startswith("conv_lstm")


def test_variational_dropout_masks_shared_over_time():
    base = mx.gluon.rnn.RNNCell(8, activation="relu")
    cell = rnn.VariationalDropoutCell(base, drop_inputs=0.5, drop_states=0.5, drop_outputs=0.5)
    cell.initialize(mx.init.One())
    x = mx.nd.ones((2, 6, 8))
    with mx.autograd.train_mode():
        out, _ = cell.unroll(6, x, merge_outputs=True)
    zeros = out.asnumpy() == 0
    # the same output units are dropped at every step of a sequence
    assert zeros.any() and (zeros == zeros[:, :1]).all()
    assert cell.drop_inputs_mask is not None
    cell.reset()
    assert cell.drop_inputs_mask is None and cell.drop_outputs_mask is None
    # without state dropout unroll drops whole sequences at once (axes=(time,))
    cell2 = rnn.VariationalDropoutCell(mx.gluon.rnn.RNNCell(8, activation="relu"),
                                       drop_outputs=0.5)
    cell2.initialize(mx.init.One())
    with mx.autograd.train_mode():
        out2, _ = cell2.unroll(6, x, merge_outputs=True)
    z2 = out2.asnumpy() == 0
    assert z2.any() and (z2 == z2[:, :1]).all()
    # inference: no dropout
    out3, _ = cell2.unroll(6, x, merge_outputs=True)
    assert (out3.asnumpy() != 0).all()
    with pytest.raises(ValueError, match="BidirectionalCell"):
        rnn.VariationalDropoutCell(mx.gluon.rnn.BidirectionalCell(
            mx.gluon.rnn.RNNCell(2), mx.gluon.rnn.RNNCell(2)), drop_states=0.5)


def test_lstmp_cell_math():
    cell = rnn.LSTMPCell(4, 2, input_size=3)
    cell.initialize(mx.init.Uniform(0.5))
    rs = np.random.RandomState(2)
    x = rs.randn(5, 3)
    r0, c0 = rs.randn(5, 2), rs.randn(5, 4)
    out, (r, c) = cell(mx.nd.array(x), [mx.nd.array(r0), mx.nd.array(c0)])
    p = {k.split("_", 1)[1]: v.data().asnumpy() for k, v in cell.collect_params().items()}
    g = x @ p["i2h_weight"].T + p["i2h_bias"] + r0 @ p["h2h_weight"].T + p["h2h_bias"]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    i, f, t, o = np.split(g, 4, axis=1)
    c_ref = sig(f) * c0 + sig(i) * np.tanh(t)
    r_ref = (sig(o) * np.tanh(c_ref)) @ p["h2r_weight"].T
    np.testing.assert_allclose(c.asnumpy(), c_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), r_ref, rtol=1e-5, atol=1e-6)
    assert (r.asnumpy() == out.asnumpy()).all()
    assert cell.state_info(7) == [{"shape": (7, 2), "__layout__": "NC"},
                                  {"shape": (7, 4), "__layout__": "NC"}]


def test_dynamic_unroll_equals_unroll():
    cell = mx.gluon.rnn.LSTMCell(4)
    cell.initialize(mx.init.Uniform(0.3))
    x = mx.nd.array(np.random.RandomState(3).randn(5, 2, 3))     # TNC
    begin = cell.begin_state(batch_size=2)
    ref_out, ref_states = cell.unroll(5, x, begin, layout="TNC", merge_outputs=True)
    out, states = rnn.dynamic_unroll(cell, x, begin, layout="TNC")
    np.testing.assert_allclose(out.asnumpy(), ref_out.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    vl = mx.nd.array([2, 5])
    out, states = rnn.dynamic_unroll(cell, x, begin, layout="TNC", valid_length=vl)
    assert (out.asnumpy()[2:, 0] == 0).all()
    short, short_states = cell.unroll(2, x[:2, :1], [s[:1] for s in begin], layout="TNC",
                                      merge_outputs=True)
    np.testing.assert_allclose(states[0].asnumpy()[0], short_states[0].asnumpy()[0], rtol=1e-5)


def test_sparse_embedding():
    emb = mx.gluon.contrib.nn.SparseEmbedding(10, 3)
    emb.initialize()
    assert emb.weight._stype == "row_sparse" and emb.weight._grad_stype == "row_sparse"
    assert repr(emb) == "SparseEmbedding(10 -> 3, float32)"
    trainer = mx.gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 1.0})
    x = mx.nd.array([[1, 4], [4, 7]])
    with mx.autograd.record():
        y = emb(x)
    assert y.shape == (2, 2, 3)
    y.backward()
    g = emb.weight.grad()
    assert g.stype == "row_sparse"
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 4, 7])
    np.testing.assert_allclose(g.data.asnumpy(), [[1] * 3, [2] * 3, [1] * 3])
    before = emb.weight.row_sparse_data(mx.nd.arange(10)).asnumpy()
    trainer.step(1)
    after = emb.weight.row_sparse_data(mx.nd.arange(10)).asnumpy()
    np.testing.assert_allclose(before - after, [[0] * 3, [1] * 3, [0] * 3, [0] * 3, [2] * 3,
                                                [0] * 3, [0] * 3, [1] * 3, [0] * 3, [0] * 3],
                               rtol=1e-6, atol=1e-6)


CORPUS = (" = Valkyria = \n\n the game is a the game of war \n\n"
          " Senjou no Valkyria 3 : <unk> Chronicles \n the end \n")
# what MXNet 1.9.1's WikiText2(seq_len=4) gives for CORPUS
WANT_DATA = [[3, 4, 3, 1], [2, 5, 12, 10], [2, 5, 14, 15], [1, 9, 13, 4], [6, 7, 0, 8]]
WANT_LABEL = [[4, 3, 1, 2], [5, 12, 10, 2], [5, 14, 15, 1], [9, 13, 4, 6], [7, 0, 8, 1]]
WANT_VOCAB = ["<unk>", "<eos>", "the", "=", "Valkyria", "game", "3", ":", "Chronicles",
              "Senjou", "a", "end", "is", "no", "of", "war"]


def test_wikitext_parses_local_file(tmp_path, monkeypatch):
    from aiond.gluon.contrib.data import text
    (tmp_path / "wiki.train.tokens").write_text(CORPUS, encoding="utf8")
    monkeypatch.setattr(text, "check_sha1", lambda path, sha1: True)
    monkeypatch.setattr(text, "download", lambda *a, **k: pytest.fail("no download expected"))
    d = text.WikiText2(root=str(tmp_path), seq_len=4)
    assert len(d) == 5
    data, label = d[0]
    assert data.dtype == np.int32 and data.asnumpy().tolist() == WANT_DATA[0]
    assert d._data.asnumpy().tolist() == WANT_DATA
    assert d._label.asnumpy().tolist() == WANT_LABEL
    assert d.vocabulary.idx_to_token == WANT_VOCAB
    assert d.frequencies["the"] == 3 and d.frequencies["Valkyria"] == 2
    # a given vocabulary is used as is
    d2 = text.WikiText103(root=str(tmp_path), seq_len=2, vocab=d.vocabulary)
    assert d2.vocabulary is d.vocabulary and len(d2) == 11     # 22 tokens in pairs


def test_wikitext_fetches_and_unpacks_archive(tmp_path, monkeypatch):
    from aiond.gluon.contrib.data import text
    archive = tmp_path / "src" / "wikitext-2-v1.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("wikitext-2/wiki.valid.tokens", CORPUS)
    calls = []

    def fake_download(url, path=None, sha1_hash=None, **kw):
        calls.append((url, path, sha1_hash))
        return str(archive)
    monkeypatch.setattr(text, "download", fake_download)
    monkeypatch.setenv("MXNET_GLUON_REPO", "https://repo.example/")
    root = tmp_path / "root"
    d = text.WikiText2(root=str(root), segment="validation", seq_len=4)
    assert calls == [("https://repo.example/gluon/dataset/wikitext-2/wikitext-2-v1.zip",
                      str(root), "3c914d17d80b1459be871a5039ac23e752a53cbe")]
    assert (root / "wiki.valid.tokens").read_text(encoding="utf8") == CORPUS
    assert d._data.asnumpy().tolist() == WANT_DATA
    with pytest.raises(ValueError, match="segment"):
        text.WikiText2(root=str(root), segment="dev")


def test_contrib_data_modules():
    from aiond.gluon.contrib.data import IntervalSampler, sampler
    assert sampler.IntervalSampler is IntervalSampler
    assert list(IntervalSampler(7, interval=3)) == [0, 3, 6, 1, 4, 2, 5]


def test_conv_cell_symbol_unroll_infers_shapes():
    # begin states made from the inputs work for steps of any rank
    for cls, shape, out in ((rnn.Conv1DRNNCell, (1, 10, 50), (1, 100, 48)),
                            (rnn.Conv2DLSTMCell, (1, 10, 20, 50), (1, 100, 18, 48))):
        cell = cls(shape[1:], 100, 3, 3, prefix="rnn_")
        inputs = [mx.sym.Variable("rnn_t%d_data" % i) for i in range(3)]
        outputs, _ = cell.unroll(3, inputs)
        outputs = mx.sym.Group(outputs)
        _, outs, _ = outputs.infer_shape(**{"rnn_t%d_data" % i: shape for i in range(3)})
        assert outs == [out] * 3


def test_fused_bidirectional_layer_infer_shape():
    layer = mx.gluon.rnn.LSTM(16, num_layers=2, layout="TNC", bidirectional=True,
                              projection_size=4)
    layer.initialize()
    x = mx.nd.ones((3, 5, 8))
    layer.infer_shape(x, layer.begin_state(5))
    assert layer.l0_i2h_weight.shape == (64, 8) and layer.r0_i2h_weight.shape == (64, 8)
    assert layer.l1_i2h_weight.shape == (64, 8)       # 2 directions x projection 4
