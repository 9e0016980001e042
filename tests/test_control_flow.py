"""Control flow: mx.nd.contrib / mx.sym.contrib foreach, while_loop and cond
(MXNet 1.9.1 semantics), imperative and symbolic, checked against numpy."""
import json

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon
from aiond.base import MXNetError


def _rand(*shape):
    return np.random.uniform(-1, 1, shape).astype(np.float32)


# ------------------------------------------------------------------ imperative


def test_nd_foreach_values_and_grads():
    x, s0, w = _rand(4, 3), _rand(3), _rand(3)
    X, S, W = mx.nd.array(x), mx.nd.array(s0), mx.nd.array(w)
    for a in (X, S, W):
        a.attach_grad()

    def step(d, states):
        out = d * 2 + states[0] * W
        return out, [out + states[0]]

    with autograd.record():
        outs, states = mx.nd.contrib.foreach(step, X, [S])
        loss = (outs * outs).sum() + states[0].sum()
    loss.backward()
    # numpy: forward, then the gradient by reverse accumulation
    s, outs_np, ss = s0, [], [s0]
    for i in range(4):
        o = x[i] * 2 + s * w
        outs_np.append(o)
        s = o + s
        ss.append(s)
    np.testing.assert_allclose(outs.asnumpy(), np.stack(outs_np), rtol=1e-5)
    np.testing.assert_allclose(states[0].asnumpy(), s, rtol=1e-5)
    gs = np.ones(3, np.float32)           # d loss / d s_final
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for i in reversed(range(4)):
        go = 2 * outs_np[i] + gs          # out feeds the loss and the next state
        gx[i] = 2 * go
        gw += go * ss[i]
        gs = go * w + gs
    np.testing.assert_allclose(X.grad.asnumpy(), gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(W.grad.asnumpy(), gw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(S.grad.asnumpy(), gs, rtol=1e-4, atol=1e-5)


def test_nd_foreach_nested_formats():
    data = [mx.nd.array(_rand(2, 3)), mx.nd.array(_rand(2, 3))]
    outs, states = mx.nd.contrib.foreach(
        lambda d, st: ([d[0] + d[1], d[0]], [st[0] + 1, [st[1][0] * 2]]),
        data, [mx.nd.zeros(3), [mx.nd.ones(3)]])
    assert isinstance(outs, list) and len(outs) == 2 and outs[0].shape == (2, 3)
    np.testing.assert_allclose(outs[0].asnumpy(), data[0].asnumpy() + data[1].asnumpy())
    assert isinstance(states[1], list)
    np.testing.assert_allclose(states[0].asnumpy(), np.full(3, 2.0))
    np.testing.assert_allclose(states[1][0].asnumpy(), np.full(3, 4.0))


def test_nd_while_loop_pads_and_returns_final_vars():
    outs, (i, s) = mx.nd.contrib.while_loop(
        cond=lambda i, s: i <= 5,
        func=lambda i, s: ([i + s], [i + 1, s + i]),
        loop_vars=(mx.nd.array([0], dtype="int64"), mx.nd.array([1], dtype="int64")),
        max_iterations=10)
    assert outs[0].shape == (10, 1) and outs[0].dtype == np.int64
    np.testing.assert_array_equal(outs[0].asnumpy()[:6, 0], [1, 2, 4, 7, 11, 16])
    np.testing.assert_array_equal(outs[0].asnumpy()[6:, 0], 0)
    assert i.asscalar() == 6 and s.asscalar() == 16
    # a single NDArray as loop_vars comes back as a single NDArray
    outs, v = mx.nd.contrib.while_loop(lambda v: v < 3, lambda v: (None, v + 1),
                                       mx.nd.array([0]), max_iterations=10)
    assert outs == [] and isinstance(v, mx.nd.NDArray) and v.asscalar() == 3


def test_nd_while_loop_grad():
    a = mx.nd.array([1.5])
    a.attach_grad()
    with autograd.record():
        _, (i, x) = mx.nd.contrib.while_loop(lambda i, x: i < 3,
                                             lambda i, x: (None, (i + 1, x * a)),
                                             (mx.nd.array([0]), mx.nd.array([2.0])),
                                             max_iterations=5)
    x.backward()
    assert x.asscalar() == pytest.approx(2 * 1.5 ** 3)
    assert a.grad.asscalar() == pytest.approx(2 * 3 * 1.5 ** 2)


def test_nd_cond_branches_and_grad():
    a, b = mx.nd.array([1.0]), mx.nd.array([2.0])
    a.attach_grad()
    with autograd.record():
        out = mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    out.backward()
    assert out.asscalar() == 42 and a.grad.asscalar() == 7
    out = mx.nd.contrib.cond(a * b > 5, lambda: a + 5, lambda: [a - 5, b])
    assert isinstance(out, list) and out[0].asscalar() == -4


def test_nd_errors():
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda v: v < 3, lambda v: (None, v), [mx.nd.zeros(1)])
    with pytest.raises(ValueError, match="single value"):
        mx.nd.contrib.cond(mx.nd.ones(2), lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="length of loop_vars"):
        mx.nd.contrib.while_loop(lambda a, b: a < 3, lambda a, b: (None, [a + 1]),
                                 [mx.nd.zeros(1), mx.nd.zeros(1)], max_iterations=3)
    with pytest.raises(ValueError, match="same length on axis 0"):
        mx.nd.contrib.foreach(lambda d, s: (d[0], s), [mx.nd.zeros((2, 1)), mx.nd.zeros((3, 1))],
                              [])
    with pytest.raises(ValueError, match="NDArray"):
        mx.nd.contrib.foreach(lambda d, s: (d, s), np.zeros((2, 2)), [])


# ------------------------------------------------------------------ symbolic


def _bind(sym, args, grads=True):
    agrad = {k: mx.nd.zeros(v.shape) for k, v in args.items()} if grads else None
    return sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()}, args_grad=agrad)


def test_sym_foreach_matches_imperative_and_numpy():
    x, s0, f = _rand(3, 2), _rand(2), _rand(2)
    step = lambda d, st, fr: (d * 2 + st[0] * fr, [d + st[0]])    # noqa: E731
    fv = mx.sym.var("f")
    outs, states = mx.sym.contrib.foreach(lambda d, st: step(d, st, fv), mx.sym.var("x"),
                                          [mx.sym.var("s")])
    g = mx.sym.Group([outs * 3] + states)
    assert g.list_arguments() == ["x", "s", "f"]
    assert g.infer_shape(x=(3, 2), s=(2,), f=(2,))[1] == [(3, 2), (2,)]
    exe = _bind(g, {"x": x, "s": s0, "f": f})
    og = [mx.nd.array(_rand(3, 2)), mx.nd.array(_rand(2))]
    res = exe.forward(is_train=True)
    exe.backward(og)
    s, ref = s0, []
    for i in range(3):
        ref.append(x[i] * 2 + s * f)
        s = x[i] + s
    np.testing.assert_allclose(res[0].asnumpy(), np.stack(ref) * 3, rtol=1e-5)
    np.testing.assert_allclose(res[1].asnumpy(), s, rtol=1e-5)
    # the same loop imperatively under autograd gives the same gradients
    X, S, F = mx.nd.array(x), mx.nd.array(s0), mx.nd.array(f)
    for a in (X, S, F):
        a.attach_grad()
    with autograd.record():
        o, st = mx.nd.contrib.foreach(lambda d, st: step(d, st, F), X, [S])
        o = o * 3
    autograd.backward([o, st[0]], og)
    for name, a in (("x", X), ("s", S), ("f", F)):
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), a.grad.asnumpy(), rtol=1e-4,
                                   atol=1e-5)


def test_sym_foreach_free_expression_is_cut():
    # a free variable computed outside the body becomes an input of the node
    a, b = mx.sym.var("a"), mx.sym.var("b")
    free = a + b
    outs, _ = mx.sym.contrib.foreach(lambda d, st: (d * free, st), mx.sym.var("x"), [])
    node = json.loads(outs.tojson())["nodes"][-1]
    assert node["op"] == "_foreach" and node["attrs"]["remain_locs"] == "[1]"
    sub = node["subgraphs"][0]
    # as MXNet 1.9.1 cuts it: the outside sum is read through a variable named after it
    assert [n["name"] for n in sub["nodes"]][:2] == ["x-0", free.name + "_output"]
    assert [n["op"] for n in sub["nodes"]] == ["null", "null", "elemwise_mul"]
    assert outs.list_arguments() == ["x", "a", "b"]
    x, av, bv = _rand(2, 3), _rand(3), _rand(3)
    exe = _bind(outs, {"x": x, "a": av, "b": bv}, grads=False)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), x * (av + bv), rtol=1e-5)


def test_sym_json_round_trip_runs():
    outs, states = mx.sym.contrib.foreach(lambda d, st: (d + st[0], [st[0] * 2]),
                                          mx.sym.var("x"), [mx.sym.var("s")])
    g = mx.sym.Group([outs] + states)
    js = g.tojson()
    g2 = mx.sym.load_json(js)
    assert g2.tojson() == js
    x, s = _rand(4, 2), _rand(2)
    r1 = _bind(g, {"x": x, "s": s}, False).forward()
    r2 = _bind(g2, {"x": x, "s": s}, False).forward()
    for a, b in zip(r1, r2):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy())
    np.testing.assert_allclose(r1[1].asnumpy(), s * 16, rtol=1e-5)


# the graph MXNet 1.9.1 writes for
#   foreach(lambda x, st: (x * 2 + st[0] + f, [x + st[0]]), d, [s])
_MXNET_JSON = """{"nodes": [{"op": "null", "name": "d", "inputs": []},
 {"op": "null", "name": "s", "inputs": []}, {"op": "null", "name": "f", "inputs": []},
 {"op": "_foreach", "name": "_foreach0", "attrs": {"in_data_locs": "[0]",
  "in_state_locs": "[1]", "num_args": "4", "num_out_data": "1", "num_outputs": "2",
  "remain_locs": "[2]"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
  "subgraphs": [{"nodes": [
   {"op": "null", "name": "d-0", "attrs": {"__subgraph_name__": "foreach0"}, "inputs": []},
   {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"__subgraph_name__": "foreach0",
    "scalar": "2"}, "inputs": [[0, 0, 0]]},
   {"op": "null", "name": "s-0", "attrs": {"__subgraph_name__": "foreach0"}, "inputs": []},
   {"op": "elemwise_add", "name": "_plus0", "attrs": {"__subgraph_name__": "foreach0"},
    "inputs": [[1, 0, 0], [2, 0, 0]]},
   {"op": "null", "name": "f", "inputs": []},
   {"op": "elemwise_add", "name": "_plus1", "attrs": {"__subgraph_name__": "foreach0"},
    "inputs": [[3, 0, 0], [4, 0, 0]]},
   {"op": "elemwise_add", "name": "_plus2", "attrs": {"__subgraph_name__": "foreach0"},
    "inputs": [[0, 0, 0], [2, 0, 0]]}],
   "arg_nodes": [0, 2, 4], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
   "heads": [[5, 0, 0], [6, 0, 0]]}]}],
 "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 5], "heads": [[3, 0, 0], [3, 1, 0]],
 "attrs": {"mxnet_version": ["int", 10901]}}"""


def test_loads_mxnet_written_graph():
    g = mx.sym.load_json(_MXNET_JSON)
    assert g.list_outputs() == ["_foreach0_output0", "_foreach0_output1"]
    d, s, f = _rand(3, 2), _rand(2), _rand(2)
    res = _bind(g, {"d": d, "s": s, "f": f}, False).forward()
    ref, st = [], s
    for i in range(3):
        ref.append(d[i] * 2 + st + f)
        st = d[i] + st
    np.testing.assert_allclose(res[0].asnumpy(), np.stack(ref), rtol=1e-5)
    np.testing.assert_allclose(res[1].asnumpy(), st, rtol=1e-5)
    # written back the way MXNet writes it
    assert json.loads(g.tojson()) == json.loads(_MXNET_JSON)


def test_sym_while_loop_values_padding_and_grads():
    w = mx.sym.var("w")
    outs, (i, x) = mx.sym.contrib.while_loop(
        cond=lambda i, x: i < 3,
        func=lambda i, x: ([x * w], [i + 1, x * w]),
        loop_vars=[mx.sym.var("i"), mx.sym.var("x")], max_iterations=5)
    g = mx.sym.Group(outs + [i, x])
    assert g.infer_shape(i=(1,), x=(2,), w=(2,))[1] == [(5, 2), (1,), (2,)]
    xv, wv = _rand(2), _rand(2)
    exe = g.bind(mx.cpu(), {"i": mx.nd.zeros(1), "x": mx.nd.array(xv), "w": mx.nd.array(wv)},
                 args_grad={"x": mx.nd.zeros(2), "w": mx.nd.zeros(2)})
    res = exe.forward(is_train=True)
    rows = [xv * wv, xv * wv ** 2, xv * wv ** 3]
    np.testing.assert_allclose(res[0].asnumpy()[:3], np.stack(rows), rtol=1e-5)
    np.testing.assert_array_equal(res[0].asnumpy()[3:], 0)
    assert res[1].asscalar() == 3
    np.testing.assert_allclose(res[2].asnumpy(), xv * wv ** 3, rtol=1e-5)
    exe.backward([mx.nd.zeros((5, 2)), mx.nd.zeros(1), mx.nd.ones(2)])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), wv ** 3, rtol=1e-4)
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), 3 * xv * wv ** 2, rtol=1e-4)


def test_sym_cond_both_branches_and_grads():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.contrib.cond((a * b).sum() < 0, lambda: a * b, lambda: a + b * 3)
    assert isinstance(out, mx.sym.Symbol) and out.list_arguments() == ["a", "b"]
    for av, bv in ((np.array([1., 2.]), np.array([-1., -2.])),
                   (np.array([1., 2.]), np.array([1., 2.]))):
        exe = _bind(out, {"a": av, "b": bv})
        r = exe.forward(is_train=True)[0].asnumpy()
        exe.backward([mx.nd.ones(2)])
        if (av * bv).sum() < 0:
            np.testing.assert_allclose(r, av * bv)
            np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), bv)
            np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), av)
        else:
            np.testing.assert_allclose(r, av + bv * 3)
            np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), 1)
            np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), 3)


def test_sym_partial_shapes_unknown_batch():
    data = mx.sym.var("data", shape=(0, 3, 4))
    outs, _ = mx.sym.contrib.foreach(lambda d, st: (d + st[0], [st[0] * 2]), data,
                                     [mx.sym.var("state")])
    args, out, _ = outs.infer_shape_partial()
    assert out[0] == (0, 3, 4) and args[1] == (3, 4)


def test_sym_errors():
    x, s = mx.sym.var("x"), mx.sym.var("s")
    with pytest.raises(AssertionError, match="state arrays have to be used"):
        mx.sym.contrib.foreach(lambda d, st: (d, [d]), x, [s])
    with pytest.raises(ValueError, match="max_iterations"):
        mx.sym.contrib.while_loop(lambda v: v < 1, lambda v: (None, v + 1), [x])
    with pytest.raises(ValueError, match="loop_var doesn't involve"):
        mx.sym.contrib.while_loop(lambda a, b: a < 1, lambda a, b: (None, [a + 1, a]), [x, s],
                                  max_iterations=2)
    with pytest.raises(ValueError, match="Number of outputs differs"):
        mx.sym.contrib.cond(x < 1, lambda: x, lambda: [x, s])
    with pytest.raises(ValueError, match="Return of cond must be a Symbol"):
        mx.sym.contrib.while_loop(lambda v: True, lambda v: (None, v + 1), [x], max_iterations=2)
    with pytest.raises(MXNetError, match="subgraph"):
        mx.nd._internal._foreach(mx.nd.ones(2), num_outputs=1, num_out_data=1,
                                 in_data_locs=[0],
                                 in_state_locs=[], remain_locs=[])


# ------------------------------------------------------------------ gluon


class _Scan(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.dense = gluon.nn.Dense(3, in_units=3)

    def hybrid_forward(self, F, x, s):
        out, states = F.contrib.foreach(lambda d, st: (self.dense(d) + st[0],
                                                       [self.dense(d) * st[0]]), x, [s])
        flag = F.contrib.cond(states[0].sum() > 0, lambda: states[0] * 2, lambda: states[0] * 3)
        _, (k, t) = F.contrib.while_loop(lambda k, t: k < 2, lambda k, t: (None, (k + 1, t + flag)),
                                         [F.sum(s) * 0, s], max_iterations=4)
        return out, t


def test_gluon_hybridized_matches_and_exports(tmp_path):
    x, s = mx.nd.array(_rand(4, 2, 3)), mx.nd.array(_rand(2, 3))
    net = _Scan(prefix="scan_")
    net.initialize()
    with autograd.record():
        o1, t1 = net(x, s)
        (o1.sum() + t1.sum()).backward()
    g1 = net.dense.weight.grad().asnumpy().copy()
    net.hybridize()
    with autograd.record():
        o2, t2 = net(x, s)
        (o2.sum() + t2.sum()).backward()
    np.testing.assert_allclose(o1.asnumpy(), o2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t1.asnumpy(), t2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g1, net.dense.weight.grad().asnumpy(), rtol=1e-4, atol=1e-5)
    prefix = str(tmp_path / "scan")
    net.export(prefix)
    loaded = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data0", "data1"],
                                       prefix + "-0000.params")
    o3, t3 = loaded(x, s)
    np.testing.assert_allclose(o1.asnumpy(), o3.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t1.asnumpy(), t3.asnumpy(), rtol=1e-5, atol=1e-6)


def test_grad_rule_matches_executor():
    # the op's own gradient rule (bind's differentiability check relies on it)
    from aiond.ops import registry
    outs, states = mx.sym.contrib.foreach(lambda d, st: (d * st[0], [st[0] + d]),
                                          mx.sym.var("x"), [mx.sym.var("s")])
    g = mx.sym.Group([outs] + states)
    node = g._outputs[0][0]
    x, s = _rand(3, 2), _rand(2)
    og = [mx.nd.array(_rand(3, 2)), mx.nd.array(_rand(2))]
    exe = _bind(g, {"x": x, "s": s})
    res = exe.forward(is_train=True)
    exe.backward(og)
    op = registry.get("_foreach")
    grads = op.grad(mx.nd, node.params, [mx.nd.array(x), mx.nd.array(s)], res, og)
    np.testing.assert_allclose(grads[0].asnumpy(), exe.grad_dict["x"].asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(grads[1].asnumpy(), exe.grad_dict["s"].asnumpy(), rtol=1e-5)


def test_bad_inputs_are_assertion_errors_as_in_mxnet():
    # MXNet asserts these; code written for it catches AssertionError
    with pytest.raises(AssertionError, match="must be a Symbol"):
        mx.sym.contrib.foreach(lambda d, st: (d, st), mx.sym.var("x"), [1.0])
    with pytest.raises(AssertionError, match="another format"):
        mx.sym.contrib.foreach(lambda d, st: (d, st[0] + d), mx.sym.var("x"), [mx.sym.var("s")])
    with pytest.raises(AssertionError, match="must be an NDArray"):
        mx.nd.contrib.foreach(lambda d, st: (d, st), mx.nd.ones((2, 2)), ["s"])


def test_sym_foreach_over_1d_data_slices_are_1_element():
    # MXNet 1.x has no 0-d arrays: a 1-D array's slices are (1,), in both versions
    x, s = np.arange(3, dtype=np.float32), _rand(1)
    outs, states = mx.sym.contrib.foreach(lambda d, st: ([d[0] * st[0]], [st[0] * 2]),
                                          [mx.sym.var("x")], [mx.sym.var("s")])
    g = mx.sym.Group(outs + states)
    assert g.infer_shape(x=(3,), s=(1,))[1] == [(3, 1), (1,)]
    res = _bind(g, {"x": x, "s": s}, False).forward()
    np.testing.assert_allclose(res[0].asnumpy()[:, 0], x * s[0] * np.array([1, 2, 4]), rtol=1e-6)
    imp, _ = mx.nd.contrib.foreach(lambda d, st: ([d[0] * st[0]], [st[0] * 2]),
                                   [mx.nd.array(x)], [mx.nd.array(s)])
    np.testing.assert_allclose(imp[0].asnumpy(), res[0].asnumpy())


def test_infer_type_without_shapes_gives_each_output_its_body_dtype():
    outs, st = mx.sym.contrib.foreach(lambda d, s: (d * 2, [s[0] + 1]), mx.sym.var("x"),
                                      [mx.sym.var("s")])
    _, out_types, _ = mx.sym.Group([outs] + st).infer_type(x="float16", s="int32")
    assert out_types == [np.float16, np.int32]
    c = mx.sym.contrib.cond(mx.sym.var("p"), lambda: mx.sym.var("a") * 2,
                            lambda: mx.sym.var("a") * 3)
    assert c.infer_type(p="float32", a="float64")[1] == [np.float64]


def test_state_that_changes_shape_is_an_error():
    outs, st = mx.sym.contrib.foreach(lambda d, s: (d, [mx.sym.concat(s[0], s[0], dim=0)]),
                                      mx.sym.var("x"), [mx.sym.var("s")])
    with pytest.raises(MXNetError, match="changes the shape of state 0 from \\(2,\\) to \\(4,\\)"):
        mx.sym.Group([outs] + st).infer_shape(x=(3, 2), s=(2,))
    _, v = mx.sym.contrib.while_loop(lambda v: v.sum() < 9, lambda v: (None, [v.tile(2)]),
                                     [mx.sym.var("v")], max_iterations=3)
    with pytest.raises(MXNetError, match="changes the shape of loop_var 0"):
        v[0].infer_shape(v=(2,))
