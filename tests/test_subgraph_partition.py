"""Graph partitioning (MXNet 1.9.1's subgraph API): the C API surface of
``mx.base`` with aiond meanings, ``Symbol.optimize_for`` with the
``default``/``default_v2`` backends, ``_CachedOp`` subgraph nodes, and
``HybridBlock.optimize_for``/``hybridize(backend=...)``. The partitioned
graphs were compared with MXNet 1.9.1's (same JSON)."""
import ctypes
import json

import numpy as np
import pytest

import aiond as mx
from aiond.base import SymbolHandle, _LIB, c_str, c_str_array, check_call, mx_uint
from aiond.symbol import Symbol


@pytest.fixture(autouse=True)
def _own_names():
    # node names start from 0 here and the global counters are left as found
    with mx.name.NameManager():
        yield


def _net8():
    # two nodes of the subgraph read one input; two outside nodes read one output
    data = mx.sym.Variable("data", shape=(1,))
    s0 = mx.sym.sin(data, name="sin0")
    s1 = mx.sym.sin(data, name="sin1")
    plus = mx.sym.elemwise_add(s0, s1, name="_plus0")
    return mx.sym.elemwise_sub(mx.sym.cos(plus, name="cos0"), mx.sym.cos(plus, name="cos1"),
                               name="_minus0")


def _summary(sym):
    def g(gr):
        return [[n["op"], n["name"], n["inputs"], [g(x) for x in n.get("subgraphs", [])]]
                for n in gr["nodes"]] + [gr["heads"]]
    return g(json.loads(sym.tojson()))


# MXNet 1.9.1's partitions of _net8 with ops (sin, elemwise_add) selected
_N8 = [("null", "data", [], []),
       ("_CachedOp", "_CachedOp0", [[0, 0, 0], [0, 0, 0]],
        [[("null", "data0", [], []), ("sin", "sin0", [[0, 0, 0]], []),
          ("null", "data1", [], []), ("sin", "sin1", [[2, 0, 0]], []),
          ("elemwise_add", "_plus0", [[1, 0, 0], [3, 0, 0]], []), [[4, 0, 0], [4, 0, 0]]]]),
       ("cos", "cos0", [[1, 0, 0]], []), ("cos", "cos1", [[1, 1, 0]], []),
       ("elemwise_sub", "_minus0", [[2, 0, 0], [3, 0, 0]], []), [[4, 0, 0]]]
_N8_DEDUP = [("null", "data", [], []),
             ("_CachedOp", "_CachedOp0", [[0, 0, 0]],
              [[("null", "data0", [], []), ("sin", "sin0", [[0, 0, 0]], []),
                ("sin", "sin1", [[0, 0, 0]], []),
                ("elemwise_add", "_plus0", [[1, 0, 0], [2, 0, 0]], []), [[3, 0, 0]]]]),
             ("cos", "cos0", [[1, 0, 0]], []), ("cos", "cos1", [[1, 0, 0]], []),
             ("elemwise_sub", "_minus0", [[2, 0, 0], [3, 0, 0]], []), [[4, 0, 0]]]


def _build(sym, backend, ops):
    out = SymbolHandle()
    check_call(_LIB.MXBuildSubgraphByOpNames(sym.handle, c_str(backend), mx_uint(len(ops)),
                                             c_str_array(ops), ctypes.byref(out)))
    return Symbol(out)


@pytest.fixture
def v2_ops():
    def set_ops(backend, ops):
        check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str(backend), mx_uint(len(ops)),
                                                       c_str_array(ops)))
        used.append(backend)
    used = []
    yield set_ops
    for b in used:
        check_call(_LIB.MXRemoveSubgraphPropertyOpNamesV2(c_str(b)))


def test_build_subgraph_by_op_names_matches_mxnet():
    sym = _net8()
    part = _build(sym, "default", ["sin", "elemwise_add"])
    assert _summary(part) == json.loads(json.dumps(_N8))
    assert part.list_inputs() == sym.list_inputs() == ["data"]
    assert _summary(sym)[1][0] == "sin"         # the original graph is unchanged
    x = mx.nd.array([0.7])
    a = sym.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy()
    b = part.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy()
    np.testing.assert_allclose(a, b)
    # no op names: a copy
    assert _summary(_build(sym, "default_v2", [])) == _summary(sym)


def test_optimize_for_dedup_and_roundtrip(v2_ops):
    v2_ops("default", ["sin", "elemwise_add"])
    sym = _net8()
    part = sym.optimize_for("default", {"data": mx.nd.array([0.3])}, {}, dedup_subgraph=True)
    assert _summary(part) == json.loads(json.dumps(_N8_DEDUP))
    back = mx.sym.load_json(part.tojson())
    assert back.tojson() == part.tojson()
    x = mx.nd.array([0.3])
    np.testing.assert_allclose(back.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy(),
                               sym.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy(),
                               rtol=1e-6)


def test_partitioned_graph_backward_and_aux_states(v2_ops):
    data, w = mx.sym.var("data"), mx.sym.var("w")
    h = mx.sym.FullyConnected(mx.sym.exp(data) * 2, weight=w, num_hidden=3, no_bias=True)
    out = mx.sym.BatchNorm(mx.sym.tanh(h) * mx.sym.sin(h), fix_gamma=False, name="bn")
    v2_ops("default_v2", ["exp", "_mul_scalar", "BatchNorm", "elemwise_mul", "sin", "tanh"])
    part = out.optimize_for("default_v2")
    assert [n for n in json.loads(part.tojson())["nodes"] if n["op"] == "_CachedOp"]
    assert part.list_arguments() == out.list_arguments()
    assert part.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    rs = np.random.RandomState(0)
    vals = {"data": rs.uniform(-1, 1, (4, 5)), "w": rs.uniform(-1, 1, (3, 5)),
            "bn_gamma": rs.uniform(0.5, 1, (3,)), "bn_beta": rs.uniform(-1, 1, (3,))}
    hg = mx.nd.array(rs.uniform(-1, 1, (4, 3)))
    res = []
    for s in (out, part):
        args = {k: mx.nd.array(v) for k, v in vals.items()}
        grads = {k: mx.nd.zeros(v.shape) for k, v in vals.items()}
        aux = {"bn_moving_mean": mx.nd.zeros((3,)), "bn_moving_var": mx.nd.ones((3,))}
        e = s.bind(mx.cpu(), args, args_grad=grads, aux_states=aux)
        e.forward(is_train=True)
        e.backward([hg])
        res.append((e.outputs[0].asnumpy(), {k: g.asnumpy() for k, g in grads.items()},
                    aux["bn_moving_mean"].asnumpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
    for k in vals:
        np.testing.assert_allclose(res[0][1][k], res[1][1][k], rtol=1e-4, atol=1e-5)
    # the moving statistics are updated through the subgraph node, as before
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-5, atol=1e-6)
    assert np.abs(res[1][2]).sum() > 0


def test_cached_op_from_subgraph_json():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sub = (a * b).tojson()
    y = mx.sym._internal._CachedOp(mx.sym.var("x"), mx.sym.var("y"), subgraph=sub) * 2
    assert y.list_arguments() == ["x", "y"]
    x1, y1 = mx.nd.array([1., 2.]), mx.nd.array([3., -4.])
    gx, gy = mx.nd.zeros(2), mx.nd.zeros(2)
    e = y.bind(mx.cpu(), {"x": x1, "y": y1}, args_grad={"x": gx, "y": gy})
    e.forward(is_train=True)
    e.backward(mx.nd.ones(2))
    assert e.outputs[0].asnumpy().tolist() == [6., -16.]
    assert gx.asnumpy().tolist() == [6., -8.] and gy.asnumpy().tolist() == [2., 4.]
    with pytest.raises(mx.base.MXNetError, match="not a symbol's JSON"):
        mx.sym._internal._CachedOp(mx.sym.var("x"), subgraph="{not json").list_arguments()


def test_fusion_backends_keep_the_graph_and_bad_backend():
    sym = _net8()
    assert sym.optimize_for("ONEDNN").tojson() == sym.tojson()
    assert sym.optimize_for("MKLDNN").tojson() == sym.tojson()
    with pytest.raises(mx.base.MXNetError, match="Cannot find subgraph backend nope"):
        sym.optimize_for("nope")
    with pytest.raises(TypeError, match="args must be a dict"):
        sym.optimize_for("default", [mx.nd.ones(1)])


def test_c_api_handles_and_errors():
    sym = _net8()
    h = sym.handle
    assert isinstance(h, SymbolHandle) and h.value == sym.handle.value
    assert Symbol(h).tojson() == sym.tojson()
    n = mx_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    check_call(_LIB.MXSymbolListArguments(h, ctypes.byref(n), ctypes.byref(names)))
    assert [names[i] for i in range(n.value)] == [b"data"]
    out = SymbolHandle()
    check_call(_LIB.MXSymbolCreateFromJSON(c_str(sym.tojson()), ctypes.byref(out)))
    assert Symbol(out).list_outputs() == sym.list_outputs()
    check_call(_LIB.MXSymbolFree(out))
    with pytest.raises(mx.base.MXNetError, match="names no live aiond object"):
        Symbol(out)
    with pytest.raises(mx.base.MXNetError, match="Cannot find subgraph backend nope"):
        check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str("nope"), mx_uint(1),
                                                       c_str_array(["sin"])))
    with pytest.raises(mx.base.MXNetError, match="null handle"):
        check_call(_LIB.MXSymbolListArguments(SymbolHandle(), ctypes.byref(n),
                                              ctypes.byref(names)))
    assert not hasattr(_LIB, "MXEnginePushAsync")
    with pytest.raises(mx.base.MXNetError, match="_LIB.MXNDArrayCreate has no aiond meaning"):
        _LIB.MXNDArrayCreate


def _dense_net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(8, activation="relu"), mx.gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def test_hybridize_backend_and_block_optimize_for(v2_ops, tmp_path):
    v2_ops("default", ["FullyConnected"])
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (2, 5)))
    net = _dense_net()
    ref = net(x).asnumpy()
    net.hybridize(backend="default")
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    ops = [n["op"] for n in json.loads(net._cached_graph[1].tojson())["nodes"]]
    assert ops.count("_CachedOp") == 2 and "FullyConnected" not in ops
    net.save_parameters(str(tmp_path / "w.params"))
    net2 = _dense_net()
    net2.load_parameters(str(tmp_path / "w.params"))
    net2.optimize_for(x, backend="default")
    net2.export(str(tmp_path / "part"))
    saved = json.loads((tmp_path / "part-symbol.json").read_text())
    assert [n["name"] for n in saved["nodes"] if n["op"] == "_CachedOp"] == \
        ["_CachedOp0", "_CachedOp1"]
    np.testing.assert_allclose(net2(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='Must specify "backend"'):
        _dense_net().optimize_for(x)


def test_partition_for_bind_follows_the_environment(monkeypatch):
    from aiond.symbol._subgraph import partition_for_bind
    sym = _net8()
    monkeypatch.delenv("MXNET_SUBGRAPH_BACKEND", raising=False)
    assert partition_for_bind(sym) is sym
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    check_call(_LIB.MXSetSubgraphPropertyOpNames(c_str("default"), mx_uint(2),
                                                 c_str_array(["sin", "elemwise_add"])))
    try:
        assert _summary(partition_for_bind(sym)) == json.loads(json.dumps(_N8))
    finally:
        check_call(_LIB.MXRemoveSubgraphPropertyOpNames(c_str("default")))
    assert _summary(partition_for_bind(sym)) == _summary(sym)    # no names: nothing grouped
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "NONE")
    assert partition_for_bind(sym) is sym


def test_owned_handles_go_with_their_handle_object():
    import gc
    from aiond import _c_api
    sym = _net8()
    out = SymbolHandle()
    check_call(_LIB.MXSymbolCopy(sym.handle, ctypes.byref(out)))
    key = out.value
    copy = Symbol(out)
    assert key in _c_api._table
    del out
    gc.collect()
    assert key not in _c_api._table
    assert copy.tojson() == sym.tojson()      # the Symbol made from it stays


def test_runtime_c_functions():
    v, n = ctypes.c_int(), ctypes.c_int()
    check_call(_LIB.MXGetVersion(ctypes.byref(v)))
    assert v.value == 10901
    check_call(_LIB.MXGetGPUCount(ctypes.byref(n)))
    assert n.value == mx.context.num_gpus()
    check_call(_LIB.MXRandomSeed(ctypes.c_int(7)))
    a = mx.nd.random.uniform(shape=(3,)).asnumpy()
    check_call(_LIB.MXRandomSeed(7))
    assert (mx.nd.random.uniform(shape=(3,)).asnumpy() == a).all()
    check_call(_LIB.MXNDArrayWaitAll())
    with pytest.raises(mx.base.MXNetError, match="ctypes.byref"):
        check_call(_LIB.MXGetVersion(v))


def test_bind_runs_the_graph_the_environment_partitions(monkeypatch):
    sym = _net8()
    x = mx.nd.array([0.3])
    want = sym.bind(mx.cpu(), {"data": x}).forward()[0].asnumpy()
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    check_call(_LIB.MXSetSubgraphPropertyOpNames(c_str("default"), mx_uint(2),
                                                 c_str_array(["sin", "elemwise_add"])))
    try:
        ex = sym.bind(mx.cpu(), {"data": x})
        ops = [n["op"] for n in json.loads(ex.get_optimized_symbol().tojson())["nodes"]]
        assert "_CachedOp" in ops and "sin" not in ops
        np.testing.assert_allclose(ex.forward()[0].asnumpy(), want, rtol=1e-6)
        backend = sym.get_backend_symbol("default")
        assert "_CachedOp" in [n["op"] for n in json.loads(backend.tojson())["nodes"]]
    finally:
        check_call(_LIB.MXRemoveSubgraphPropertyOpNames(c_str("default")))
