"""mx.contrib.onnx on whole models: PyTorch exports (MLP, CNN with BatchNorm,
transformer encoder, LSTM+GRU, conv decoder with resize) when a Python with
torch is at hand, the same kinds of graphs built with onnx.helper always;
dynamic batch and sequence axes; metadata; clear errors for bad files and
unsupported operators."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import aiond as mx  # noqa: E402
from aiond.base import MXNetError  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from onnx_cases import I64, aiond_run, check, gluon_run, make, ort_run, torch_exports  # noqa: E402

N = helper.make_node
R = np.random.RandomState(3)


def rnd(*shape, scale=1.0):
    return (R.randn(*shape) * scale).astype(np.float32)


def i64(*v):
    return np.array(v, np.int64)


# ------------------------------------------------------------ PyTorch exports
TORCH_MODELS = ["mlp", "cnn", "transformer", "positions", "recurrent", "decoder"]


@pytest.fixture(scope="module")
def torch_dir(tmp_path_factory):
    """PyTorch's ONNX exports of torch_export.py's models."""
    return torch_exports(tmp_path_factory, "torch_export")


@pytest.mark.parametrize("name", TORCH_MODELS)
def test_pytorch_export(torch_dir, name):
    path = os.path.join(torch_dir, name + ".onnx")
    x = np.load(os.path.join(torch_dir, name + ".in.npy"))
    y = np.load(os.path.join(torch_dir, name + ".out.npy"))
    model = onnx.load(path)
    ref = check(model, {"input": x})
    np.testing.assert_allclose(ref[0], y, rtol=1e-4, atol=1e-5)
    # the batch axis is dynamic in the export: another batch size runs too
    x2 = np.concatenate([x, x[:1]])
    check(model, {"input": x2}, gluon=False)
    if name == "positions":     # and the sequence axis
        for n in (1, 4, 16):
            check(model, {"input": x2[:, :n]})
    sym, args, aux = mx.contrib.onnx.import_model(path)     # from the file path
    assert not set(args) & set(aux)


# ------------------------------------------------------- onnx.helper models
def cnn_model():
    nodes = [N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             N("BatchNormalization", ["c1", "g", "be", "m", "v"], ["bn"]),
             N("Relu", ["bn"], ["r1"]),
             N("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             N("Conv", ["p1", "w2"], ["c2"], strides=[2, 2], group=2),
             N("Clip", ["c2", "lo", "hi"], ["r2"]),
             N("GlobalAveragePool", ["r2"], ["gp"]),
             N("Flatten", ["gp"], ["f"]),
             N("Gemm", ["f", "fw", "fb"], ["z"], transB=1),
             N("Softmax", ["z"], ["y"], axis=-1)]
    inits = [("w1", rnd(8, 3, 3, 3, scale=0.3)), ("b1", rnd(8)), ("g", rnd(8)), ("be", rnd(8)),
             ("m", rnd(8, scale=0.3)), ("v", np.abs(rnd(8)) + 0.5),
             ("w2", rnd(8, 4, 3, 3, scale=0.3)), ("lo", np.array(0, np.float32)),
             ("hi", np.array(6, np.float32)), ("fw", rnd(5, 8)), ("fb", rnd(5))]
    return make(nodes, [("x", ["batch", 3, 16, 16])], [("y", ["batch", 5])], inits)


def attention_model(d=8, heads=2, vocab=30):
    """Token ids [batch, seq] -> embedding + self-attention + GELU MLP + LayerNorm,
    reshaping heads through Shape/Gather/Concat as exporters write it."""
    dh = d // heads
    nodes = [
        N("Gather", ["emb", "ids"], ["e"]),
        N("Shape", ["e"], ["s"]),
        N("Gather", ["s", "c0"], ["b"]), N("Gather", ["s", "c1"], ["t"]),
        N("Unsqueeze", ["b", "ax0"], ["bu"]), N("Unsqueeze", ["t", "ax0"], ["tu"]),
        N("Concat", ["bu", "tu", "hd"], ["split_shape"], axis=0),
        N("Concat", ["bu", "tu", "dd"], ["merge_shape"], axis=0),
    ]
    for p in "qkv":
        nodes += [N("MatMul", ["e", "w" + p], [p + "0"]),
                  N("Add", [p + "0", "b" + p], [p + "1"]),
                  N("Reshape", [p + "1", "split_shape"], [p + "2"]),
                  N("Transpose", [p + "2"], [p + "3"],
                    perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])]
    nodes += [
        N("MatMul", ["q3", "k3"], ["att0"]), N("Div", ["att0", "scale"], ["att1"]),
        N("Softmax", ["att1"], ["att"], axis=-1),
        N("MatMul", ["att", "v3"], ["ctx0"]), N("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        N("Reshape", ["ctx1", "merge_shape"], ["ctx"]),
        N("Add", ["ctx", "e"], ["h0"]),
        N("LayerNormalization", ["h0", "ln_g", "ln_b"], ["h1"], axis=-1),
        N("MatMul", ["h1", "w_ff"], ["f0"]),
        N("Div", ["f0", "sqrt2"], ["f1"]), N("Erf", ["f1"], ["f2"]),
        N("Add", ["f2", "one"], ["f3"]), N("Mul", ["f0", "f3"], ["f4"]),
        N("Mul", ["f4", "half"], ["f5"]),
        N("ReduceMean", ["f5", "ax1"], ["pooled"], keepdims=0),
        N("Slice", ["f5", "c0", "c1", "ax1"], ["first"]),
        N("Squeeze", ["first", "ax1"], ["cls"]),
        N("Concat", ["pooled", "cls"], ["y"], axis=-1),
    ]
    inits = [("emb", rnd(vocab, d)), ("c0", np.array(0, np.int64)),
             ("c1", np.array(1, np.int64)), ("ax0", i64(0)), ("ax1", i64(1)),
             ("hd", i64(heads, dh)), ("dd", i64(d)),
             ("scale", np.array(np.sqrt(dh), np.float32)),
             ("ln_g", rnd(d)), ("ln_b", rnd(d)), ("w_ff", rnd(d, 12)),
             ("sqrt2", np.array(np.sqrt(2), np.float32)), ("one", np.array(1, np.float32)),
             ("half", np.array(0.5, np.float32))]
    for p in "qkv":
        inits += [("w" + p, rnd(d, d, scale=0.5)), ("b" + p, rnd(d))]
    # Slice/Squeeze above need 1-d starts/ends: give them as such
    nodes[-3] = N("Slice", ["f5", "st", "en", "ax1"], ["first"])
    inits += [("st", i64(0)), ("en", i64(1))]
    return make(nodes, [("ids", ["batch", "seq"], I64)], [("y", ["batch", 24])], inits,
                opset=18)


def test_cnn_with_batchnorm_dynamic_batch():
    model = cnn_model()
    for n in (1, 3):
        check(model, {"x": rnd(n, 3, 16, 16)})
    sym, args, aux = mx.contrib.onnx.import_model(model.SerializeToString())
    assert sorted(aux) == ["m", "v"]            # BatchNorm's statistics are aux states
    assert {"w1", "b1", "g", "be", "w2", "fw", "fb"} <= set(args)
    assert not set(args) & set(aux)


@pytest.mark.parametrize("batch,seq", [(2, 5), (3, 7), (1, 1)])
def test_attention_block_dynamic_batch_and_sequence(batch, seq):
    ids = R.randint(0, 30, (batch, seq)).astype(np.int64)
    check(attention_model(), {"ids": ids})


def test_gluon_block_has_the_onnx_parameters():
    model = cnn_model()
    net = mx.contrib.onnx.import_to_gluon(model.SerializeToString(), ctx=mx.cpu())
    params = net.collect_params()
    assert "w1" in params and params["w1"].shape == (8, 3, 3, 3)
    np.testing.assert_array_equal(params["fb"].data().asnumpy(),
                                  onnx.numpy_helper.to_array(
                                      [t for t in model.graph.initializer
                                       if t.name == "fb"][0]))
    x = rnd(2, 3, 16, 16)
    net.hybridize()
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(),
                               ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-6)


def test_two_inputs_two_outputs_to_gluon():
    model = make([N("MatMul", ["a", "w"], ["p"]), N("Add", ["p", "b"], ["s"]),
                  N("Relu", ["s"], ["r"])],
                 [("a", ["n", 4]), ("b", ["n", 3])], [("s", ["n", 3]), ("r", ["n", 3])],
                 [("w", rnd(4, 3))])
    feeds = {"a": rnd(5, 4), "b": rnd(5, 3)}
    ref = ort_run(model, feeds)
    for got in (aiond_run(model, feeds), gluon_run(model, feeds)):
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------------ metadata
def test_metadata(tmp_path):
    path = str(tmp_path / "cnn.onnx")
    onnx.save(cnn_model(), path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    # as MXNet 1.9.1: inputs (name, shape, elem type), unknown dims as 0
    assert meta == {"input_tensor_data": [("x", (0, 3, 16, 16), 1)],
                    "output_tensor_data": [("y", (0, 5))]}
    meta = mx.contrib.onnx.get_model_metadata(attention_model().SerializeToString())
    assert meta["input_tensor_data"] == [("ids", (0, 0), I64)]


# -------------------------------------------------------------------- errors
def test_unsupported_operator_names_itself_and_the_node():
    model = make([N("Relu", ["x"], ["r"]), N("Col2Im", ["r", "s", "s"], ["y"],
                                             name="c2i_7")],
                 [("x", [1, 4, 4])], [("y", None)], inits=[("s", np.array([2, 2], np.int64))],
                 opset=18)
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator,
                       match=r"Col2Im.*node 'c2i_7'") as e:
        mx.contrib.onnx.import_model(model.SerializeToString())
    assert isinstance(e.value, MXNetError) and isinstance(e.value, NotImplementedError)


def test_custom_domain_operator_is_refused():
    model = make([N("MyOp", ["x"], ["y"], domain="com.example", name="mine")],
                 [("x", [2])], [("y", None)])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(mx.contrib.onnx.UnsupportedOnnxOperator, match="com.example.*'mine'"):
        mx.contrib.onnx.import_model(model.SerializeToString())


@pytest.mark.parametrize("data", [b"", b"not an onnx file at all \x00\xff\xfe",
                                  b"{\"nodes\": []}"])
def test_non_onnx_file_raises_mxnet_error(tmp_path, data):
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(MXNetError, match="ONNX"):
        mx.contrib.onnx.import_model(str(path))
    with pytest.raises(MXNetError, match="ONNX"):
        mx.contrib.onnx.get_model_metadata(str(path))


def test_truncated_file_raises_mxnet_error(tmp_path):
    data = cnn_model().SerializeToString()
    for cut in (7, len(data) // 3, len(data) // 2, len(data) - 5):
        path = tmp_path / ("cut%d.onnx" % cut)
        path.write_bytes(data[:cut])
        with pytest.raises(MXNetError):
            mx.contrib.onnx.import_model(str(path))


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        mx.contrib.onnx.import_model("/nonexistent/model.onnx")


def test_dynamic_shape_used_as_data():
    # a tensor filled to the (dynamic) batch size becomes a broadcast of the input's axis
    model = make([N("Shape", ["x"], ["s"]), N("ConstantOfShape", ["s"], ["z"]),
                  N("Add", ["x", "z"], ["y"])], [("x", ["n", 3])], [("y", None)])
    for n in (1, 4):
        check(model, {"x": rnd(n, 3)})
    # the shape's values themselves as data cannot be: a clear error
    model = make([N("Shape", ["x"], ["s"]), N("Cast", ["s"], ["sf"], to=1),
                  N("Add", ["x", "sf"], ["y"], name="add_s")],
                 [("x", ["n", 2])], [("y", None)])
    with pytest.raises(mx.contrib.onnx.OnnxImportError, match="dynamic.*'add_s'"):
        mx.contrib.onnx.import_model(model.SerializeToString())
    # with a fixed shape it folds and runs
    model = make([N("Shape", ["x"], ["s"]), N("Cast", ["s"], ["sf"], to=1),
                  N("Add", ["x", "sf"], ["y"])], [("x", [3, 2])], [("y", None)])
    check(model, {"x": rnd(3, 2)})


def test_import_aiond_does_not_import_onnx():
    code = "import sys, aiond; import aiond.contrib.onnx; print('onnx' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_export_model_is_mx_onnx_export_model():
    pytest.importorskip("aiond.onnx")
    import aiond.onnx
    assert mx.contrib.onnx.export_model is aiond.onnx.export_model


def test_mxnet_graphproto_backend_path():
    """MXNet's ONNX test backend drives GraphProto.from_onnx on the graph and
    binds the symbol with the inputs in list_inputs() order."""
    from aiond.contrib.onnx.onnx2mx.import_onnx import GraphProto
    model = cnn_model()
    x = rnd(2, 3, 16, 16)
    g = GraphProto()
    sym, args, aux = g.from_onnx(model.graph, 17)
    assert g.arg_dict is args and g.model_metadata["output_tensor_data"] == [("y", (0, 5))]
    data_names = [n for n in sym.list_inputs() if n not in args and n not in aux]
    assert data_names == ["x"]
    ex = sym.bind(mx.cpu(), args=dict(args, x=mx.nd.array(x)), aux_states=aux)
    np.testing.assert_allclose(ex.forward(is_train=False)[0].asnumpy(),
                               ort_run(model, {"x": x})[0], rtol=1e-4, atol=1e-6)
    net = GraphProto().graph_to_gluon(model.graph, mx.cpu(), 17)
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), ort_run(model, {"x": x})[0],
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["mxcnn", "mxmlp"])
def test_model_exported_by_mxnet_1_9_1(name):
    """Files written by real MXNet 1.9.1's export_model (data/mxnet_export.py):
    aiond's import gives MXNet's outputs (its initializers are also graph inputs)."""
    base = os.path.join(HERE, "data", name)
    x, y = np.load(base + ".in.npy"), np.load(base + ".out.npy")
    model = onnx.load(base + ".onnx")
    inp = mx.contrib.onnx.get_model_metadata(base + ".onnx")["input_tensor_data"]
    assert [i[0] for i in inp] == ["data"] and inp[0][1][1:] == x.shape[1:]
    for got in (aiond_run(model, {"data": x}), gluon_run(model, {"data": x})):
        np.testing.assert_allclose(got[0], y, rtol=1e-4, atol=1e-5)


def positions_model():
    """Position ids over a dynamic sequence, as exporters write them: Range
    up to Shape(ids)[1], and a position table Sliced to that length."""
    nodes = [N("Shape", ["ids"], ["s"]), N("Gather", ["s", "c1"], ["t"]),
             N("Range", ["z", "t", "one"], ["pos"]),
             N("Gather", ["emb", "pos"], ["pe"]),
             N("Unsqueeze", ["t", "ax0"], ["tu"]),
             N("Slice", ["table", "st", "tu", "ax1"], ["tab"]),
             N("Gather", ["emb", "ids"], ["te"]),
             N("Add", ["te", "pe"], ["h0"]), N("Add", ["h0", "tab"], ["h"]),
             N("ReduceMax", ["h"], ["y"], axes=[1], keepdims=0)]
    inits = [("c1", np.array(1, np.int64)), ("z", np.array(0, np.int64)),
             ("one", np.array(1, np.int64)), ("emb", rnd(20, 4)), ("ax0", i64(0)),
             ("table", rnd(1, 16, 4)), ("st", i64(0)), ("ax1", i64(1))]
    return make(nodes, [("ids", ["batch", "seq"], I64)], [("y", ["batch", 4])], inits,
                opset=13)


@pytest.mark.parametrize("batch,seq", [(2, 6), (1, 16), (3, 1)])
def test_positions_follow_the_dynamic_sequence_axis(batch, seq):
    check(positions_model(), {"ids": R.randint(0, 20, (batch, seq)).astype(np.int64)})


def mask_model():
    """An attention mask as exporters write it: ConstantOfShape of the
    input's (dynamic) shape, Expand of a [batch, 1, 1, seq] mask to
    [batch, 1, seq, seq] through Shape ops, Where to -inf."""
    nodes = [N("Shape", ["x"], ["s"]),                                   # [b, t, d]
             N("ConstantOfShape", ["s"], ["ones"],
               value=helper.make_tensor("v", 1, [1], [1.0])),
             N("Mul", ["x", "ones"], ["xo"]),
             N("Unsqueeze", ["m", "ax12"], ["m4"]),                      # [b, 1, 1, t]
             N("Gather", ["s", "c0"], ["b"]), N("Gather", ["s", "c1"], ["t"]),
             N("Unsqueeze", ["b", "ax0"], ["bu"]), N("Unsqueeze", ["t", "ax0"], ["tu"]),
             N("Concat", ["bu", "one", "tu", "tu"], ["es"], axis=0),
             N("Expand", ["m4", "es"], ["me"]),                          # [b, 1, t, t]
             N("Equal", ["me", "zero"], ["keep0"]),
             N("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
             N("MatMul", ["x", "xt"], ["sc0"]), N("Unsqueeze", ["sc0", "ax1"], ["sc"]),
             N("Where", ["keep0", "ninf", "sc"], ["masked"]),
             N("Softmax", ["masked"], ["att"], axis=-1),
             N("Squeeze", ["att", "ax1"], ["att3"]),
             N("MatMul", ["att3", "xo"], ["y"])]
    inits = [("ax12", i64(1, 2)), ("c0", np.array(0, np.int64)), ("c1", np.array(1, np.int64)),
             ("ax0", i64(0)), ("ax1", i64(1)), ("one", i64(1)),
             ("zero", np.array(0, np.float32)), ("ninf", np.array(-np.inf, np.float32))]
    return make(nodes, [("x", ["batch", "seq", 4]), ("m", ["batch", "seq"])],
                [("y", ["batch", "seq", 4])], inits, opset=13)


@pytest.mark.parametrize("batch,seq", [(2, 5), (1, 3), (3, 8)])
def test_attention_mask_over_dynamic_axes(batch, seq):
    m = (R.rand(batch, seq) > 0.3).astype(np.float32)
    m[:, 0] = 1
    check(mask_model(), {"x": rnd(batch, seq, 4), "m": m})
