"""mx.sym: graph building, names, attributes, inference and JSON, checked
against what MXNet 1.9.1 reports for the same code (values recorded from
the MXNet venv; the JSON fixtures in data/ were written by MXNet itself,
see data/make_fixtures.py)."""
from __future__ import annotations

import copy
import inspect
import json
import pathlib
import pickle
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

DATA = pathlib.Path(__file__).resolve().parent / "data"
EXPECTED = json.loads((DATA / "expected.json").read_text())


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def perceptron():
    net = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = mx.sym.Activation(data=net, name="relu1", act_type="relu")
    net = mx.sym.FullyConnected(data=net, name="fc2", num_hidden=64)
    return mx.sym.SoftmaxOutput(data=net, name="out")


# ---------------------------------------------------------------- names


def test_seed_graph_arguments_and_outputs():
    net = perceptron()
    assert isinstance(net, mx.sym.Symbol) and mx.sym.Symbol is mx.symbol.Symbol
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "out_label"]
    assert net.list_outputs() == ["out_output"]
    assert net.list_auxiliary_states() == []
    assert net.name == "out" and repr(net) == "<Symbol out>"
    w = mx.sym.Variable("myweight")
    fc = mx.sym.FullyConnected(data=mx.sym.Variable("data"), weight=w, name="fc1", num_hidden=4)
    assert fc.list_arguments() == ["data", "myweight", "fc1_bias"]
    fc = mx.sym.FullyConnected(mx.sym.var("d1") + mx.sym.var("d2"), name="fc1", num_hidden=4)
    assert fc.list_arguments() == ["d1", "d2", "fc1_weight", "fc1_bias"]
    assert mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, no_bias=True,
                                 name="nb").list_arguments() == ["x", "nb_weight"]


# (expression, MXNet 1.9.1's node name, op in the JSON) in a fresh NameManager
AUTO_NAMES = [
    (lambda a, b: a + b, "_plus0", "elemwise_add"),
    (lambda a, b: a - b, "_minus0", "elemwise_sub"),
    (lambda a, b: a * b, "_mul0", "elemwise_mul"),
    (lambda a, b: a / b, "_div0", "elemwise_div"),
    (lambda a, b: a % b, "_mod0", "_mod"),
    (lambda a, b: a ** b, "_power0", "_power"),
    (lambda a, b: a + 1, "_plusscalar0", "_plus_scalar"),
    (lambda a, b: 1 + a, "_plusscalar0", "_plus_scalar"),
    (lambda a, b: a - 3, "_minusscalar0", "_minus_scalar"),
    (lambda a, b: 3 - a, "_rminusscalar0", "_rminus_scalar"),
    (lambda a, b: 2 * a, "_mulscalar0", "_mul_scalar"),
    (lambda a, b: a / 2, "_divscalar0", "_div_scalar"),
    (lambda a, b: 3 / a, "_rdivscalar0", "_rdiv_scalar"),
    (lambda a, b: a % 2, "_modscalar0", "_mod_scalar"),
    (lambda a, b: 3 % a, "_rmodscalar0", "_rmod_scalar"),
    (lambda a, b: a ** 2, "_powerscalar0", "_power_scalar"),
    (lambda a, b: 2 ** a, "_rpower_scalar0", "_rpower_scalar"),
    (lambda a, b: -a, "_mulscalar0", "_mul_scalar"),
    (lambda a, b: abs(a), "abs0", "abs"),
    (lambda a, b: a == b, "_equal0", "_equal"),
    (lambda a, b: a > b, "_greater0", "_greater"),
    (lambda a, b: a == 1, "_equal_scalar0", "_equal_scalar"),
    (lambda a, b: a <= 1, "_lesser_equal_scalar0", "_lesser_equal_scalar"),
    (lambda a, b: mx.sym.broadcast_add(a, b), "broadcast_add0", "broadcast_add"),
    (lambda a, b: mx.sym.broadcast_plus(a, b), "broadcast_plus0", "broadcast_add"),
    (lambda a, b: mx.sym.elemwise_add(a, b), "elemwise_add0", "elemwise_add"),
    (lambda a, b: mx.sym.maximum(a, 2), "_maximumscalar0", "_maximum_scalar"),
    (lambda a, b: mx.sym.pow(2, a), "_rpowerscalar0", "_rpower_scalar"),
    (lambda a, b: a.reshape((2, 3)), "reshape0", "Reshape"),
    (lambda a, b: mx.sym.Reshape(a, shape=(-1,)), "reshape0", "Reshape"),
    (lambda a, b: a.astype("float16"), "cast0", "Cast"),
    (lambda a, b: a.sum(axis=1), "sum0", "sum"),
    (lambda a, b: mx.sym.FullyConnected(a, num_hidden=3), "fullyconnected0", "FullyConnected"),
    (lambda a, b: mx.sym.Activation(a, act_type="relu"), "activation0", "Activation"),
    (lambda a, b: mx.sym.zeros((2, 3)), "_zeros0", "_zeros"),
]


@pytest.mark.parametrize("expr,name,op", AUTO_NAMES)
def test_auto_names_match_mxnet(expr, name, op):
    s = expr(mx.sym.var("a"), mx.sym.var("b"))
    assert s.name == name
    assert s.list_outputs() == [name + "_output"]
    assert json.loads(s.tojson())["nodes"][-1]["op"] == op


def test_name_counters_prefix_and_scopes():
    a = mx.sym.var("a")
    assert [(a + 1).name for _ in range(3)] == ["_plusscalar0", "_plusscalar1", "_plusscalar2"]
    with mx.name.NameManager():
        assert (a + 1).name == "_plusscalar0"
    assert (a + 1).name == "_plusscalar3"
    with mx.name.Prefix("mynet_"):
        fc = mx.sym.FullyConnected(a, num_hidden=10, name="fc1")
        s = a * 2
    assert fc.list_arguments() == ["a", "mynet_fc1_weight", "mynet_fc1_bias"]
    assert s.name == "mynet__mulscalar0"


def test_attributes_like_mxnet():
    v = mx.sym.Variable("v", shape=(2, 3), lr_mult=2.0, wd_mult=0.5, dtype="float16",
                        init="zeros", __foo__="bar")
    assert v.list_attr() == {"__shape__": "(2, 3)", "__lr_mult__": "2.0", "lr_mult": "2.0",
                             "__wd_mult__": "0.5", "wd_mult": "0.5", "__dtype__": "2",
                             "__init__": "zeros", "__foo__": "bar"}
    assert v.attr("lr_mult") == "2.0" and v.attr("nothing") is None
    with pytest.raises(ValueError):
        mx.sym.Variable("v", foo="bar")
    a = mx.sym.var("a")
    with mx.AttrScope(ctx_group="g1", lr_mult="0.1"):
        fc = mx.sym.FullyConnected(a, num_hidden=2, name="sc")
        w = mx.sym.Variable("w", attr={"mood": "calm"})
    hidden = {"__ctx_group__": "g1", "ctx_group": "g1", "__lr_mult__": "0.1", "lr_mult": "0.1"}
    assert fc.attr_dict() == {n: dict(hidden, num_hidden="2")
                              for n in ("sc_weight", "sc_bias", "sc")}
    assert w.list_attr() == dict(hidden, mood="calm")
    assert mx.attribute.AttrScope is mx.AttrScope
    q = mx.sym.Variable("q")
    q._set_attr(__x__="1", lr_mult="2")
    assert q.list_attr() == {"__x__": "1", "__lr_mult__": "2", "lr_mult": "2"}
    with pytest.raises(ValueError):
        q._set_attr(x=1)
    with pytest.raises(MXNetError, match="deprecated"):
        mx.sym.FullyConnected(q, num_hidden=2, weight_lr_mult="1")
    with pytest.raises(MXNetError, match="mood"):
        mx.sym.FullyConnected(q, num_hidden=2, attr={"mood": "x"})
    with pytest.raises(MXNetError, match="num_hidden"):
        mx.sym.FullyConnected(q)
    with pytest.raises(ValueError):
        mx.AttrScope(x=1)


def test_op_functions_are_real_functions():
    sig = inspect.signature(mx.sym.FullyConnected)
    assert list(sig.parameters)[:6] == ["data", "weight", "bias", "num_hidden", "no_bias",
                                        "flatten"]
    assert "name" in sig.parameters and "attr" in sig.parameters
    assert "FullyConnected" in mx.sym.FullyConnected.__doc__
    assert mx.sym.FullyConnected.__name__ == "FullyConnected"
    assert mx.sym._internal._plus_scalar.__name__ == "_plus_scalar"
    assert mx.sym._internal._Plus(mx.sym.var("a"), mx.sym.var("b")).name == "_plus0"
    assert mx.sym.random.uniform(shape=(2,)).name == "_random_uniform0"
    # positional parameters after the inputs, as MXNet's generated signature
    r = mx.sym.reshape(mx.sym.var("a"), (2, 3))
    assert r.list_attr() == {"shape": "(2, 3)"}
    assert mx.sym.sum(mx.sym.var("a"), axis=None).list_attr() == {"axis": "None"}
    assert mx.sym.Cast(mx.sym.var("a"), dtype=np.float16).list_attr() == {"dtype": "float16"}


def test_structure_internals_children_getitem_group():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fc = mx.sym.FullyConnected(a, num_hidden=3, name="fc")
    bn = mx.sym.BatchNorm(a, name="bn")
    g = mx.sym.Group([fc, bn, a + b])
    assert g.list_outputs() == ["fc_output", "bn_output", "_plus0_output"]
    assert g.list_arguments() == ["a", "fc_weight", "fc_bias", "bn_gamma", "bn_beta", "b"]
    assert g.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert g.list_inputs() == ["a", "fc_weight", "fc_bias", "bn_gamma", "bn_beta",
                               "bn_moving_mean", "bn_moving_var", "b"]
    assert g.name is None and len(g) == 3
    assert repr(g) == "<Symbol group [fc, bn, _plus0]>"
    assert g[1].name == "bn" and g["fc_output"].name == "fc" and g[-1].name == "_plus0"
    assert g[0:2].list_outputs() == ["fc_output", "bn_output"]
    assert [s.name for s in g] == ["fc", "bn", "_plus0"]
    with pytest.raises(IndexError):
        g[3]
    with pytest.raises(ValueError):
        g["nope"]
    assert bn.get_internals().list_outputs() == ["a", "bn_gamma", "bn_beta", "bn_moving_mean",
                                                 "bn_moving_var", "bn_output"]
    assert mx.sym.BatchNorm(a, output_mean_var=True, name="b2").list_outputs() == [
        "b2_output", "b2_mean", "b2_var"]
    assert mx.sym.Dropout(a, p=0.5, name="d").list_outputs() == ["d_output"]
    assert fc.get_children().list_outputs() == ["a", "fc_weight", "fc_bias"]
    assert a.get_children() is None
    internals = perceptron().get_internals()
    assert internals["fc1_output"].list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    with pytest.raises(TypeError):
        mx.sym.Group([fc, 1])


def test_composition_keeps_weight_names():
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=128)
    net2 = mx.sym.FullyConnected(mx.sym.Variable("data2"), name="net2", num_hidden=128)
    composed = net(data=net2, name="compose")
    assert composed.list_arguments() == ["data2", "net2_weight", "net2_bias", "fc1_weight",
                                         "fc1_bias"]
    assert composed.list_outputs() == ["compose_output"]
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert net.list_outputs() == ["fc1_output"]
    fc3 = mx.sym.FullyConnected(num_hidden=3, name="fc3")
    assert fc3.list_arguments() == ["fc3_data", "fc3_weight", "fc3_bias"]
    assert fc3(fc3_data=net).list_arguments() == ["data", "fc1_weight", "fc1_bias",
                                                  "fc3_weight", "fc3_bias"]
    with pytest.raises(MXNetError, match="foo"):
        net(foo=net2)
    with pytest.raises(MXNetError, match="kwargs"):
        net(net2)
    with pytest.raises(MXNetError, match="Candidate arguments"):
        mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, foo=net2)
    with pytest.raises(MXNetError, match="single value"):
        mx.sym.exp(mx.sym.Group([net, net2]))


def test_copy_deepcopy_pickle_are_independent():
    net = perceptron()
    for dup in (copy.copy(net), copy.deepcopy(net), pickle.loads(pickle.dumps(net)), net.copy()):
        assert dup.tojson() == net.tojson()
        dup._set_attr(__note__="changed")
        assert net.attr("__note__") is None
    assert pickle.loads(pickle.dumps(mx.sym.Symbol(None))).list_outputs() == []


def test_symbol_only_errors():
    a = mx.sym.var("a")
    for f in (a.asnumpy, a.wait_to_read, a.asscalar, lambda: bool(a)):
        with pytest.raises(mx.sym.NotImplementedForSymbol, match="only available in NDArray"):
            f()
    with pytest.raises(TypeError):
        a + "x"
    with pytest.raises(TypeError):
        a + mx.nd.ones(2)


# ---------------------------------------------------------------- inference


def test_infer_shape_complete_and_positional():
    net = perceptron()
    arg, out, aux = net.infer_shape(data=(8, 20))
    assert dict(zip(net.list_arguments(), arg)) == {
        "data": (8, 20), "fc1_weight": (128, 20), "fc1_bias": (128,), "fc2_weight": (64, 128),
        "fc2_bias": (64,), "out_label": (8,)}
    assert out == [(8, 64)] and aux == []
    assert net.infer_shape((8, 20)) == (arg, out, aux)
    d = (mx.sym.var("A") + mx.sym.var("B")) / 10 + 1
    assert d.infer_shape(A=(10,), B=(10,)) == ([(10,), (10,)], [(10,)], [])
    assert d.infer_shape(A=(10,)) == ([(10,), (10,)], [(10,)], [])   # elemwise partner
    assert (mx.sym.Variable("v", shape=(2, 3)) * 2).infer_shape() == ([(2, 3)], [(2, 3)], [])


def test_infer_shape_layers_like_mxnet():
    a = mx.sym.var("a")
    bn = mx.sym.BatchNorm(a, name="bn")
    assert bn.infer_shape(a=(2, 3, 4)) == ([(2, 3, 4), (3,), (3,)], [(2, 3, 4)], [(3,), (3,)])
    conv = mx.sym.Convolution(a, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    assert conv.infer_shape(a=(2, 3, 8, 8)) == (
        [(2, 3, 8, 8), (4, 3, 3, 3), (4,)], [(2, 4, 8, 8)], [])
    dc = mx.sym.Deconvolution(a, kernel=(2, 2), num_filter=4, stride=(2, 2), name="dc")
    assert dc.list_arguments() == ["a", "dc_weight"]
    assert dc.infer_shape(a=(2, 3, 8, 8)) == ([(2, 3, 8, 8), (3, 4, 2, 2)], [(2, 4, 16, 16)], [])
    assert mx.sym.LayerNorm(a, name="ln").infer_shape(a=(2, 5)) == (
        [(2, 5), (5,), (5,)], [(2, 5)], [])
    assert mx.sym.InstanceNorm(a, name="i").infer_shape(a=(2, 5, 3)) == (
        [(2, 5, 3), (5,), (5,)], [(2, 5, 3)], [])
    assert mx.sym.Embedding(a, input_dim=10, output_dim=4, name="e").infer_shape(a=(3, 2)) == (
        [(3, 2), (10, 4)], [(3, 2, 4)], [])
    assert mx.sym.LeakyReLU(a, act_type="prelu", name="p").infer_shape(a=(2, 3)) == (
        [(2, 3), (3,)], [(2, 3)], [])
    assert mx.sym.LinearRegressionOutput(a, name="l").infer_shape(a=(4, 1)) == (
        [(4, 1), (4,)], [(4, 1)], [])
    assert mx.sym.FullyConnected(a, num_hidden=3, flatten=False, name="f").infer_shape(
        a=(2, 4, 5)) == ([(2, 4, 5), (3, 5), (3,)], [(2, 4, 3)], [])
    assert mx.sym.zeros((2, 3)).infer_shape() == ([], [(2, 3)], [])


def test_infer_shape_incomplete_and_partial():
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=10, name="fc1")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert net.infer_shape() == (None, None, None)
    assert "Cannot decide shape" in str(w[0].message)
    # MXNet: the weight alone decides nothing (the layer needs data's shape)
    assert net.infer_shape_partial(fc1_weight=(10, 5)) == ([(), (10, 5), ()], [()], [])
    a, b = mx.sym.var("a"), mx.sym.var("b")
    assert (a + b).infer_shape_partial() == ([(), ()], [()], [])
    # 0 marks an unknown dim; what is known flows on, as in MXNet
    assert net.infer_shape_partial(data=(0, 3)) == ([(0, 3), (10, 3), (10,)], [(0, 10)], [])
    assert (a + b).infer_shape_partial(a=(0, 3), b=(2, 0)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    conv = mx.sym.Convolution(mx.sym.var("x", shape=(0, 3, 8, 8)), kernel=(3, 3), num_filter=2,
                              name="c")
    assert conv.infer_shape_partial() == ([(0, 3, 8, 8), (2, 3, 3, 3), (2,)], [(0, 2, 6, 6)], [])


def test_infer_shape_errors_name_node_and_shapes(capsys):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with pytest.raises(MXNetError) as e:
        (a + b).infer_shape(a=(2, 3), b=(3, 2))
    assert "_plus0" in str(e.value) and "(2, 3)" in str(e.value) and "(3, 2)" in str(e.value)
    assert "infer_shape error. Arguments:" in capsys.readouterr().out
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=10, name="fc1")
    with pytest.raises(MXNetError) as e:
        fc.infer_shape(data=(1, 100), fc1_weight=(1000, 100))
    msg = str(e.value)
    assert "fc1" in msg and "fc1_weight" in msg and "(1000, 100)" in msg and "(10, 100)" in msg
    with pytest.raises(MXNetError, match="not found"):
        a.infer_shape(b=(2,))
    with pytest.raises(TypeError):
        a.infer_shape(a=3)


def test_infer_type():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    assert (a + b).infer_type(a="float16") == ([np.float16, np.float16], [np.float16], [])
    with pytest.raises(MXNetError):
        (a + b).infer_type(a="float16", b="float32")
    fc = mx.sym.FullyConnected(a, num_hidden=3, name="fc")
    assert fc.infer_type(a="float64") == ([np.float64] * 3, [np.float64], [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fc.infer_type() == (None, None, None)
    assert fc.infer_type_partial() == ([None, None, None], [None], [])
    bn = mx.sym.BatchNorm(a, name="bn")
    assert bn.infer_type(a="float16") == ([np.float16, np.float32, np.float32], [np.float16],
                                          [np.float32, np.float32])
    emb = mx.sym.Embedding(a, input_dim=10, output_dim=4, name="e")
    assert emb.infer_type(a="int32") == ([np.int32, np.float32], [np.float32], [])
    assert (mx.sym.Variable("v", dtype="float16") * 2).infer_type() == (
        [np.float16], [np.float16], [])
    assert a.astype("float16").infer_type(a="float32") == ([np.float32], [np.float16], [])


# ---------------------------------------------------------------- JSON


# MXNet 1.9.1's tojson() of these graphs, byte for byte
MX_ABCD_JSON = (
    '{\n  "nodes": [\n    {\n      "op": "null", \n      "name": "A", \n      "inputs": []\n'
    '    }, \n    {\n      "op": "null", \n      "name": "B", \n      "inputs": []\n    }, \n'
    '    {\n      "op": "elemwise_add", \n      "name": "_plus0", \n'
    '      "inputs": [[0, 0, 0], [1, 0, 0]]\n    }, \n    {\n      "op": "_div_scalar", \n'
    '      "name": "_divscalar0", \n      "attrs": {"scalar": "10"}, \n'
    '      "inputs": [[2, 0, 0]]\n    }, \n    {\n      "op": "_plus_scalar", \n'
    '      "name": "_plusscalar0", \n      "attrs": {"scalar": "1"}, \n'
    '      "inputs": [[3, 0, 0]]\n    }\n  ], \n  "arg_nodes": [0, 1], \n'
    '  "node_row_ptr": [0, 1, 2, 3, 4, 5], \n  "heads": [[4, 0, 0]], \n'
    '  "attrs": {"mxnet_version": ["int", 10901]}\n}')


def test_tojson_is_mxnets_text():
    d = (mx.sym.Variable("A") + mx.sym.Variable("B")) / 10 + 1
    assert d.tojson() == MX_ABCD_JSON
    bn = json.loads(mx.sym.BatchNorm(mx.sym.Variable("data", shape=(2, 3), lr_mult=2.0),
                                     name="bn").tojson())
    assert bn["nodes"][0]["attrs"] == {"__lr_mult__": "2.0", "__shape__": "(2, 3)"}
    assert bn["nodes"][3]["attrs"] == {"__init__": '["zero", {}]'}
    assert bn["nodes"][4]["attrs"] == {"__init__": '["one", {}]'}
    # the aux inputs carry version 1 (mutated once), and BatchNorm has 3 outputs
    assert bn["nodes"][5]["inputs"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]
    assert bn["node_row_ptr"] == [0, 1, 2, 3, 4, 5, 8]
    assert bn["arg_nodes"] == [0, 1, 2, 3, 4]


def test_json_round_trip_aiond(tmp_path):
    net = mx.sym.Group([perceptron(), mx.sym.BatchNorm(mx.sym.var("x"), name="bn") * 2])
    text = net.tojson()
    again = mx.sym.load_json(text)
    assert again.tojson() == text
    assert again.list_arguments() == net.list_arguments()
    assert again.list_auxiliary_states() == net.list_auxiliary_states()
    net.save(str(tmp_path / "net-symbol.json"))
    assert mx.sym.load(str(tmp_path / "net-symbol.json")).tojson() == text
    # a loaded graph composes on: BatchNorm's aux version keeps counting
    bn2 = mx.sym.BatchNorm(mx.sym.var("y"), moving_mean=again.get_internals()["bn_moving_mean"],
                           name="bn2")
    assert json.loads(bn2.tojson())["nodes"][-1]["inputs"][3][2] == 2


@pytest.mark.parametrize("name", ["mlp", "convnet", "elemwise"])
def test_mxnet_written_json_loads_and_runs(name):
    path = DATA / ("%s-symbol.json" % name)
    sym = mx.sym.load(str(path))
    exp = EXPECTED[name]
    assert sym.list_arguments() == exp["arguments"]
    assert sym.list_outputs() == exp["outputs"]
    assert sym.list_auxiliary_states() == exp["aux"]
    text = path.read_text()
    if name == "convnet":
        # MXNet's MKL-DNN build gives max Pooling a hidden workspace output, which
        # shows in node_row_ptr only; everything else is the same text
        mine, theirs = json.loads(sym.tojson()), json.loads(text)
        mine.pop("node_row_ptr"), theirs.pop("node_row_ptr")
        assert mine == theirs
    else:
        assert sym.tojson() == text
    d = np.load(DATA / ("%s.npz" % name))
    args = {k[4:]: mx.nd.array(d[k]) for k in d.files if k.startswith("arg:")}
    aux = {k[4:]: mx.nd.array(d[k]) for k in d.files if k.startswith("aux:")}
    outs = sym.bind(mx.current_context(), args, aux_states=aux, grad_req="null").forward()
    assert len(outs) == len(exp["outputs"])
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), d["out:%d" % i], rtol=1e-5, atol=1e-6)


def test_legacy_json_is_upgraded_like_mxnet():
    sym = mx.sym.load(str(DATA / "legacy-0.8-symbol.json"))
    exp = EXPECTED["legacy-0.8"]
    assert sym.list_arguments() == exp["arguments"]
    assert sym.list_auxiliary_states() == exp["aux"] == ["bn0_moving_mean", "bn0_moving_var"]
    assert sym.attr_dict() == exp["attr_dict"]
    assert sym.tojson() == exp["upgraded_json"]


def test_load_json_errors():
    with pytest.raises(MXNetError, match="not valid JSON"):
        mx.sym.load_json("{nodes")
    bad = json.loads(MX_ABCD_JSON)
    bad["nodes"][2]["op"] = "NoSuchOp"
    with pytest.raises(MXNetError, match="NoSuchOp"):
        mx.sym.load_json(json.dumps(bad))
    bad = json.loads(MX_ABCD_JSON)
    bad["nodes"][2]["inputs"] = [[7, 0, 0]]
    with pytest.raises(MXNetError, match="node 7"):
        mx.sym.load_json(json.dumps(bad))
    with pytest.raises(TypeError):
        mx.sym.load_json(b"{}")


def test_eval_and_fluent_methods():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = (a * b + 1).eval(ctx=mx.current_context(), a=mx.nd.ones((2,)) * 3,
                           b=mx.nd.ones((2,)) * 2)
    assert isinstance(out, list) and out[0].asnumpy().tolist() == [7.0, 7.0]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = a.reshape((3, 2)).sum(axis=1).exp().astype("float64")
    r = s.eval(a=mx.nd.array(x))[0]
    assert r.dtype == np.float64
    np.testing.assert_allclose(r.asnumpy(), np.exp(x.reshape(3, 2).sum(axis=1)), rtol=1e-6)
    assert a.flatten().name == "flatten0" and a.expand_dims(axis=0).name == "expand_dims0"


def test_infer_shape_ignores_dtype_of_untyped_inputs():
    # a float64 weight (its __dtype__ attribute) with an input of unknown dtype:
    # shape inference assumes the known dtype rather than float32
    w = mx.sym.var("w", dtype="float64")
    s = mx.sym.FullyConnected(mx.sym.var("data"), w, num_hidden=3, no_bias=True)
    arg, out, _ = s.infer_shape(data=(2, 5))
    assert arg == [(2, 5), (3, 5)] and out == [(2, 3)]
