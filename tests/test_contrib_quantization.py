"""mx.contrib.quantization and the int8 ops: values checked against MXNet
1.9.1 (numbers recorded from its CPU build) and numpy; quantized models
against their FP32 originals."""
import json

import numpy as np
import pytest

import aiond as mx
from aiond import gluon
from aiond.contrib import quantization as q


def test_quantize_v2_and_requantize_match_mxnet():
    out, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([-1, 0.5, 2]), out_type="int8")
    assert out.dtype == np.int8 and out.asnumpy().tolist() == [-64, 32, 127]
    assert (lo.asscalar(), hi.asscalar()) == (-2.0, 2.0)
    out, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([0, 0.5, 2]), out_type="auto",
                                            min_calib_range=0., max_calib_range=1.)
    assert out.dtype == np.uint8 and out.asnumpy().tolist() == [0, 128, 255]
    assert (lo.asscalar(), hi.asscalar()) == (0.0, 1.0)
    out, lo, hi = mx.nd.contrib.requantize(mx.nd.array([-1000000, 20000000, 5], dtype="int32"),
                                           mx.nd.array([-10.]), mx.nd.array([10.]))
    assert out.dtype == np.int8 and out.asnumpy().tolist() == [-6, 127, 0]
    np.testing.assert_allclose(hi.asnumpy(), [0.09313226], rtol=1e-6)
    out, lo, hi = mx.nd.contrib.requantize(mx.nd.array([-1000000, 20000000, 5], dtype="int32"),
                                           mx.nd.array([-10.]), mx.nd.array([10.]),
                                           min_calib_range=-0.05, max_calib_range=0.05)
    assert out.asnumpy().tolist() == [-12, 127, 0] and hi.asscalar() == pytest.approx(0.05)
    with pytest.raises(mx.base.MXNetError, match="int32"):
        mx.nd.contrib.requantize(mx.nd.ones(3), mx.nd.array([-1.]), mx.nd.array([1.]))


def test_calibrate_entropy_matches_mxnet():
    rs = np.random.RandomState(0)
    # (bins, num_quantized_bins, data) -> MXNet 1.9.1's threshold
    cases = [(1001, 255, rs.randn(1000), 2.7844365), (8001, 255, rs.randn(20000) * 3, 11.229122),
             (101, 15, np.abs(rs.randn(500)), 2.901216)]
    for bins, nq, data, want in cases:
        m = np.abs(data).max()
        h = np.histogram(data, bins=bins, range=(-m, m))
        t, d = mx.nd.contrib.calibrate_entropy(mx.nd.array(h[0]), mx.nd.array(h[1]),
                                               num_quantized_bins=nq)
        assert t.shape == (1,) and d.shape == (1,)
        np.testing.assert_allclose(t.asnumpy(), [want], rtol=1e-6)
        assert 0 < d.asscalar() < 0.1
    with pytest.raises(mx.base.MXNetError, match="num_quantized_bins"):
        mx.nd.contrib.calibrate_entropy(mx.nd.ones(31), mx.nd.arange(32))


def _q(x):
    r = np.abs(x).max()
    return np.sign(x) * np.minimum(np.abs(x) * (127 / r) + 0.5, 127) // 1, r


def test_quantized_fully_connected_and_conv_int32_exact():
    rs = np.random.RandomState(1)
    x, w, b = rs.randn(4, 6).astype("f"), rs.randn(5, 6).astype("f"), rs.randn(5).astype("f")
    outs = [mx.nd.contrib.quantize_v2(mx.nd.array(a), out_type="int8") for a in (x, w, b)]
    (qx, xl, xh), (qw, wl, wh), (qb, bl, bh) = outs
    y, lo, hi = mx.nd.contrib.quantized_fully_connected(
        qx, qw, qb, xl, xh, wl, wh, bl, bh, num_hidden=5)
    assert y.dtype == np.int32
    unit = (np.abs(x).max() / 127) * (np.abs(w).max() / 127)
    ib = np.rint(qb.asnumpy() * (np.abs(b).max() / 127) / unit)
    want = qx.asnumpy().astype(np.int64) @ qw.asnumpy().astype(np.int64).T + ib
    np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_allclose(hi.asnumpy(), [unit * (2 ** 31 - 1)], rtol=1e-5)
    # the int32 result stands for the float product
    np.testing.assert_allclose(y.asnumpy() * unit, x @ w.T + b, atol=0.1)
    xc = rs.randn(2, 3, 5, 5).astype("f")
    wc = rs.randn(4, 3, 3, 3).astype("f")
    (qx, xl, xh), (qw, wl, wh) = (mx.nd.contrib.quantize_v2(mx.nd.array(a)) for a in (xc, wc))
    yc, lo, hi = mx.nd.contrib.quantized_conv(qx, qw, xl, xh, wl, wh, kernel=(3, 3),
                                              num_filter=4, no_bias=True)
    ref = mx.nd.Convolution(mx.nd.array(qx.asnumpy().astype("f")),
                            mx.nd.array(qw.asnumpy().astype("f")), kernel=(3, 3),
                            num_filter=4, no_bias=True).asnumpy()
    np.testing.assert_array_equal(yc.asnumpy(), ref.astype(np.int64))
    with pytest.raises(mx.base.MXNetError, match="int8"):
        mx.nd.contrib.quantized_fully_connected(mx.nd.ones((4, 6)), qw, wl, wh, wl, wh,
                                                num_hidden=5, no_bias=True)


def _convnet():
    d = mx.sym.var("data")
    net = mx.sym.Convolution(d, num_filter=8, kernel=(3, 3), pad=(1, 1), name="conv1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    net = mx.sym.flatten(net, name="flat")
    net = mx.sym.FullyConnected(net, num_hidden=16, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.FullyConnected(net, num_hidden=4, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _run(sym, params, X):
    e = sym.simple_bind(mx.cpu(), data=X.shape, softmax_label=(X.shape[0],), grad_req="null")
    for k, v in params.items():
        if k in e.arg_dict:
            e.arg_dict[k][:] = v
    e.arg_dict["data"][:] = X
    return e.forward()[0].asnumpy()


# MXNet 1.9.1's quantize_model(..., quantize_mode='full') graph for _convnet
_MX_OPS = ["_contrib_quantize_v2", "_contrib_quantized_conv", "_contrib_requantize",
           "_contrib_quantized_act", "_contrib_quantized_pooling", "_contrib_quantized_flatten",
           "_contrib_quantized_fully_connected", "_contrib_requantize", "_contrib_quantized_act",
           "_contrib_quantized_fully_connected", "_contrib_requantize", "_contrib_dequantize",
           "SoftmaxOutput"]
_MX_NAMES = ["data_quantize", "quantized_conv1", "requantize_conv1", "quantized_relu1",
             "quantized_pool1", "quantized_flat", "quantized_fc1", "requantize_fc1",
             "quantized_relu2", "quantized_fc2", "requantize_fc2", "fc2_dequantize", "softmax"]


@pytest.mark.parametrize("calib_mode", ["none", "naive", "entropy"])
def test_quantize_model_graph_and_accuracy(calib_mode):
    rs = np.random.RandomState(0)
    net = _convnet()
    shapes = dict(zip(net.list_arguments(), net.infer_shape(data=(16, 3, 8, 8))[0]))
    args = {k: mx.nd.array(rs.randn(*s) * 0.3) for k, s in shapes.items()
            if k not in ("data", "softmax_label")}
    X = rs.randn(64, 3, 8, 8).astype("float32")
    it = mx.io.NDArrayIter(X, np.zeros(64), batch_size=16)
    qsym, qargs, qaux = q.quantize_model(net, args, {}, ctx=mx.cpu(), calib_mode=calib_mode,
                                         calib_data=it, quantize_mode="full")
    nodes = [n for n in json.loads(qsym.tojson())["nodes"] if n["op"] != "null"]
    assert [n["op"] for n in nodes] == _MX_OPS
    assert [n["name"] for n in nodes] == _MX_NAMES
    calibrated = [n["name"] for n in nodes if "min_calib_range" in n.get("attrs", {})]
    if calib_mode == "none":
        assert calibrated == []
    else:
        assert calibrated == ["data_quantize", "requantize_conv1", "requantize_fc1",
                              "requantize_fc2"]
    assert qargs["conv1_weight_quantize"].dtype == np.int8
    w = args["fc1_weight"].asnumpy()
    np.testing.assert_allclose(qargs["fc1_weight_quantize"].asnumpy() * (np.abs(w).max() / 127),
                               w, atol=np.abs(w).max() / 127)
    ref, out = _run(net, args, X), _run(qsym, qargs, X)
    assert np.abs(out - ref).max() < 0.1
    assert (out.argmax(1) == ref.argmax(1)).mean() >= 0.95


def test_quantize_model_smart_mode_and_exclusions():
    net = _convnet()
    qsym, _, _ = q.quantize_model(net, {}, {}, calib_mode="none", quantize_mode="smart",
                                  excluded_sym_names=["fc2"])
    ops = [n["op"] for n in json.loads(qsym.tojson())["nodes"] if n["op"] != "null"]
    # relu2 sits between quantized fc1 and float fc2: smart mode leaves it in float
    assert ops[-4:] == ["_contrib_dequantize", "Activation", "FullyConnected", "SoftmaxOutput"]
    qsym, _, _ = q.quantize_model(net, {}, {}, calib_mode="none",
                                  excluded_op_names=["Convolution"])
    ops = [n["op"] for n in json.loads(qsym.tojson())["nodes"] if n["op"] != "null"]
    assert ops[:3] == ["Convolution", "Activation", "Pooling"]
    with pytest.raises(ValueError, match="quantized_dtype"):
        q.quantize_model(net, {}, {}, calib_mode="none", quantized_dtype="int4")
    with pytest.raises(ValueError, match="calib_data must be provided"):
        q.quantize_model(net, {}, {}, calib_mode="naive")
    with pytest.raises(ValueError, match="excluded_sym_names"):
        q.quantize_model(net, {}, {}, calib_mode="none", excluded_sym_names="fc1")


def test_quantize_graph_calib_graph():
    rs = np.random.RandomState(2)
    net = _convnet()
    shapes = dict(zip(net.list_arguments(), net.infer_shape(data=(8, 3, 8, 8))[0]))
    args = {k: mx.nd.array(rs.randn(*s) * 0.3) for k, s in shapes.items()
            if k not in ("data", "softmax_label")}
    qsym, qargs, aux, collector = q.quantize_graph(net, args, {}, calib_mode="naive")
    assert set(collector.include_layer) == {"data", "conv1_output", "fc1_output", "fc2_output"}
    X = rs.randn(8, 3, 8, 8).astype("f")
    e = net.simple_bind(mx.cpu(), data=X.shape, grad_req="null")
    for k, v in args.items():
        e.arg_dict[k][:] = v
    e.arg_dict["data"][:] = X
    e.set_monitor_callback(collector.collect, monitor_all=True)
    e.forward()
    assert collector.min_max_dict["data"] == (X.min(), X.max())
    qsym2, qargs2, _ = q.calib_graph(qsym, args, {}, collector, calib_mode="naive")
    attrs = {n["name"]: n.get("attrs", {}) for n in json.loads(qsym2.tojson())["nodes"]}
    assert float(attrs["data_quantize"]["max_calib_range"]) == pytest.approx(X.max())
    with pytest.raises(ValueError, match="naive or entropy"):
        q.calib_graph(qsym, args, {}, collector, calib_mode="none")


def test_combine_histogram():
    rs = np.random.RandomState(3)
    a, b = rs.randn(100), rs.randn(100) * 3
    th = np.abs(a).max()
    hist, edges = np.histogram(a, bins=11, range=(-th, th))
    old = (hist, edges, a.min(), a.max(), th)
    same = q.combine_histogram(old, a * 0.5, (a * 0.5).min(), (a * 0.5).max(), th / 2)
    assert same[4] == th and same[0].sum() == 200
    new_th = np.abs(b).max()
    h2, e2, mn, mxv, t2 = q.combine_histogram(old, b, b.min(), b.max(), new_th)
    assert t2 >= new_th and len(h2) % 2 == 1 and h2.sum() == 200
    assert (mn, mxv) == (min(a.min(), b.min()), max(a.max(), b.max()))


def test_quantize_net_v2_gluon():
    mx.random.seed(4)
    rs = np.random.RandomState(4)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, activation="relu"), gluon.nn.MaxPool2D(),
            gluon.nn.Flatten(), gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    X = mx.nd.array(rs.randn(64, 3, 8, 8))
    ref = net(X).asnumpy()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(X, mx.nd.zeros(64)), batch_size=16)
    for mode in ("none", "naive"):
        kw = (dict(calib_mode=mode, calib_data=loader) if mode != "none" else
              dict(data_shapes=[mx.io.DataDesc("data", (16, 3, 8, 8))]))
        qnet = q.quantize_net_v2(net, ctx=mx.cpu(), **kw)
        assert isinstance(qnet, gluon.SymbolBlock)
        out = qnet(X).asnumpy()
        assert np.abs(out - ref).max() < 0.05 * np.abs(ref).max() + 0.05
        assert (out.argmax(1) == ref.argmax(1)).mean() >= 0.9
    with pytest.raises(ValueError, match="data_shapes"):
        q.quantize_net(net)
