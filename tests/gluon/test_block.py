"""gluon.Block / HybridBlock / SymbolBlock: naming, parameters, save/load
(and compatibility with MXNet 1.9.1's files), hybridize, export/imports."""
import os
import subprocess
import textwrap

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import nn

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
MXNET_PY = os.path.join(os.path.dirname(os.path.dirname(HERE)), ".venvs", "mxnet", "bin",
                        "python")


class Model(gluon.Block):
    def __init__(self, **kwargs):
        super(Model, self).__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(5, activation="relu")
            self.dense1 = nn.Dense(2)

    def forward(self, x):
        return self.dense1(self.dense0(x))


class HybridModel(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridModel, self).__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(6, activation="tanh")
            self.bn = nn.BatchNorm()
            self.dense1 = nn.Dense(3)
            self.scale = self.params.get("scale", shape=(1,), init=mx.init.Constant(2.0))

    def hybrid_forward(self, F, x, scale):
        return F.broadcast_mul(self.dense1(self.bn(self.dense0(x))), scale) + 1


def _dense_bn_net():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(6, activation="tanh"))
        net.add(nn.BatchNorm())
        net.add(nn.Dense(3))
    return net


# ------------------------------------------------------------------ naming

def test_names_follow_mxnet_counters():
    with mx.name.NameManager():
        d0, d1 = nn.Dense(3), nn.Dense(3)
        assert (d0.name, d0.prefix, d1.name) == ("dense0", "dense0_", "dense1")
        assert list(d0.params.keys()) == ["dense0_weight", "dense0_bias"]
        assert nn.Activation("relu").name == "relu0"
        assert nn.BatchNorm().name == "batchnorm0"
        assert gluon.loss.L2Loss().name == "l2loss0"
        m = Model()
        assert m.name == "model0"
        assert list(m.collect_params().keys()) == [
            "model0_dense0_weight", "model0_dense0_bias", "model0_dense1_weight",
            "model0_dense1_bias"]
        assert m.dense0.act.prefix == "model0_dense0_relu_"
        seq = nn.HybridSequential(prefix="seq_")
        with seq.name_scope():
            seq.add(nn.Dense(2), nn.Dense(2), nn.BatchNorm())
        assert list(seq.collect_params().keys())[-4:] == [
            "seq_batchnorm0_gamma", "seq_batchnorm0_beta", "seq_batchnorm0_running_mean",
            "seq_batchnorm0_running_var"]
        assert seq[1].name == "seq_dense1"


def test_collect_params_select_and_registration():
    m = HybridModel(prefix="hm_")
    names = list(m.collect_params().keys())
    assert names[0] == "hm_scale" and "hm_batchnorm0_running_var" in names
    assert sorted(m.collect_params(".*weight|.*bias").keys()) == [
        "hm_dense0_bias", "hm_dense0_weight", "hm_dense1_bias", "hm_dense1_weight"]
    assert list(m._children) == ["dense0", "bn", "dense1"]
    with pytest.raises(TypeError, match="Changing attribute type"):
        m.dense0 = 3
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        m.other = Model()

    class Holder(gluon.Block):
        def __init__(self):
            super(Holder, self).__init__()
            self.layers = [nn.Dense(2)]

        def forward(self, x):
            return x
    with pytest.warns(UserWarning, match="unregistered container"):
        Holder().collect_params()


def test_sequential_len_getitem_slice_and_repr():
    net = nn.HybridSequential(prefix="s_")
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3), nn.Activation("relu"), nn.Dense(2, in_units=4))
    assert len(net) == 3 and isinstance(net[2], nn.Dense)
    sub = net[:2]
    assert isinstance(sub, nn.HybridSequential) and len(sub) == 2 and sub[0] is net[0]
    assert repr(net).splitlines()[1] == "  (0): Dense(3 -> 4, linear)"
    seq = nn.Sequential()
    seq.add(nn.Dense(2), nn.Dense(1))
    assert len(seq[1:]) == 1


# --------------------------------------------------------- save / load

def test_save_load_parameters_round_trip_and_names(tmp_path):
    m = HybridModel()
    m.initialize()
    x = nd.array(np.random.RandomState(1).randn(4, 5))
    y = m(x).asnumpy()
    f = str(tmp_path / "m.params")
    m.save_parameters(f)
    assert sorted(nd.load(f).keys()) == sorted([
        "scale", "dense0.weight", "dense0.bias", "bn.gamma", "bn.beta", "bn.running_mean",
        "bn.running_var", "dense1.weight", "dense1.bias"])
    m2 = HybridModel()
    m2.load_parameters(f)
    np.testing.assert_allclose(m2(x).asnumpy(), y, rtol=1e-6)


def test_load_parameters_missing_extra_and_legacy(tmp_path):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    f = str(tmp_path / "n.params")
    nd.save(f, {"0.weight": nd.ones((3, 2)), "0.bias": nd.ones((3,))})
    with pytest.raises(AssertionError, match="Parameter '1.weight' is missing in file"):
        net.load_parameters(f)
    net.load_parameters(f, allow_missing=True)
    np.testing.assert_array_equal(net[0].weight.data().asnumpy(), np.ones((3, 2)))
    nd.save(f, {"0.weight": nd.ones((3, 2)), "0.bias": nd.ones((3,)), "1.weight": nd.ones((1, 3)),
                "1.bias": nd.ones((1,)), "2.weight": nd.ones((1,))})
    with pytest.raises(ValueError, match="Parameter '2.weight' loaded from file .* is not present"):
        net.load_parameters(f)
    net.load_parameters(f, ignore_extra=True)
    nd.save(f, {"0.weight": nd.ones((3, 5)), "0.bias": nd.ones((3,)), "1.weight": nd.ones((1, 3)),
                "1.bias": nd.ones((1,))})
    with pytest.raises(AssertionError, match="shape incompatible expected \\(3, 2\\) vs saved"):
        net.load_parameters(f)
    # legacy files (collect_params().save with the prefix stripped)
    net.collect_params().save(f, strip_prefix=net.prefix)
    net2 = nn.HybridSequential(prefix=net.prefix)
    with net2.name_scope():
        net2.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net2.load_parameters(f)
    np.testing.assert_array_equal(net2[1].bias.data().asnumpy(), net[1].bias.data().asnumpy())


def test_mxnet_saved_parameters_load_and_match_mxnet_outputs():
    io = nd.load(os.path.join(DATA, "mx_dense_bn_io.nd"))
    net = _dense_bn_net()
    net.load_parameters(os.path.join(DATA, "mx_dense_bn.params"))
    np.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5, atol=1e-5)
    with autograd.record():
        y_train = net(io["x"])
    np.testing.assert_allclose(y_train.asnumpy(), io["y_train"].asnumpy(), rtol=1e-5, atol=1e-5)
    net.hybridize()
    np.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5, atol=1e-5)


def test_mxnet_exported_model_imports_and_runs():
    io = nd.load(os.path.join(DATA, "mx_dense_bn_io.nd"))
    sb = gluon.SymbolBlock.imports(os.path.join(DATA, "mx_dense_bn-symbol.json"), ["data"],
                                   os.path.join(DATA, "mx_dense_bn-0000.params"))
    np.testing.assert_allclose(sb(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5, atol=1e-5)
    assert "net_batchnorm0_running_var" in sb.collect_params().keys()


@pytest.mark.skipif(not os.path.exists(MXNET_PY), reason="no MXNet 1.9.1 venv")
def test_aiond_files_load_in_mxnet(tmp_path):
    net = _dense_bn_net()
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(3).randn(4, 5))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()         # moves the BatchNorm running statistics
    y = net(x)
    net.save_parameters(str(tmp_path / "a.params"))
    net.hybridize()
    net(x)
    net.export(str(tmp_path / "a"))
    nd.save(str(tmp_path / "io.nd"), {"x": x, "y": y})
    script = textwrap.dedent("""
        import sys, numpy as np
        from mxnet import gluon, nd
        d = sys.argv[1]
        io = nd.load(d + '/io.nd')
        net = gluon.nn.HybridSequential(prefix='net_')
        with net.name_scope():
            net.add(gluon.nn.Dense(6, activation='tanh'), gluon.nn.BatchNorm(),
                    gluon.nn.Dense(3))
        net.load_parameters(d + '/a.params')
        a = np.abs(net(io['x']).asnumpy() - io['y'].asnumpy()).max()
        sb = gluon.SymbolBlock.imports(d + '/a-symbol.json', ['data'], d + '/a-0000.params')
        b = np.abs(sb(io['x']).asnumpy() - io['y'].asnumpy()).max()
        print(a, b)
    """)
    out = subprocess.run([MXNET_PY, "-c", script, str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    a, b = map(float, out.stdout.split())
    assert a < 1e-5 and b < 1e-5


# ------------------------------------------------------------ hybridize

def _grads(net):
    return {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()
            if p.grad_req != "null"}


def test_hybridize_same_outputs_and_gradients_and_traces_once():
    x = nd.array(np.random.RandomState(0).randn(8, 5))
    net = HybridModel(prefix="h_")
    net.initialize(mx.init.Xavier())
    net(x)
    f_params = {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}

    def run():
        with autograd.record():
            y = net(x)
            loss = (y * y).sum()
        loss.backward()
        return y.asnumpy(), _grads(net), net.bn.running_mean.data().asnumpy().copy()

    y0, g0, rm0 = run()
    for k, p in net.collect_params().items():
        p.set_data(nd.array(f_params[k]))
    traces = []
    orig = HybridModel.hybrid_forward

    def counting(self, F, *args, **kwargs):
        if F is mx.sym:
            traces.append(1)
        return orig(self, F, *args, **kwargs)
    HybridModel.hybrid_forward = counting
    try:
        net.hybridize()
        y1, g1, rm1 = run()
        for _ in range(3):
            net(x)
        assert len(traces) == 1
        net(nd.ones((3, 5)))            # a new batch size needs no new trace here
        assert len(traces) == 1
        net.hybridize()                 # hybridize again: traced again
        net(x)
        assert len(traces) == 2
    finally:
        HybridModel.hybrid_forward = orig
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm1, rm0, rtol=1e-5, atol=1e-6)
    for k in g0:
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_hybridize_graph_names_and_symbol_forward():
    net = _dense_bn_net()
    net.initialize()
    out = net(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == [
        "data", "net_dense0_weight", "net_dense0_bias", "net_batchnorm0_gamma",
        "net_batchnorm0_beta", "net_dense1_weight", "net_dense1_bias"]
    assert out.list_auxiliary_states() == ["net_batchnorm0_running_mean",
                                           "net_batchnorm0_running_var"]
    internals = out.get_internals().list_outputs()
    assert "net_dense0_tanh_fwd_output" in internals and "net_dense1_fwd_output" in internals


def test_export_and_imports_round_trip(tmp_path):
    net = HybridModel(prefix="e_")
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(2).randn(4, 5))
    with pytest.raises(RuntimeError, match="hybridize"):
        net.export(str(tmp_path / "no"))
    net.hybridize()
    y = net(x).asnumpy()
    net.export(str(tmp_path / "m"), epoch=3)
    keys = set(nd.load(str(tmp_path / "m-0003.params")).keys())
    assert "arg:e_dense0_weight" in keys and "aux:e_batchnorm0_running_mean" in keys
    sb = gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"],
                                   str(tmp_path / "m-0003.params"))
    np.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-5, atol=1e-6)
    sb.hybridize()
    np.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-5, atol=1e-6)
    # SymbolBlock on Symbols composes the graph
    s = sb(mx.sym.var("data"))
    assert "e_dense1_weight" in s.list_arguments()


def test_symbol_block_feature_extraction_shares_params():
    net = _dense_bn_net()
    net.initialize()
    x = nd.ones((2, 5))
    net(x)
    data = mx.sym.var("data")
    internals = net(data).get_internals()
    feat = gluon.SymbolBlock(internals["net_dense0_tanh_fwd_output"], data,
                             params=net.collect_params())
    expected = nd.tanh(nd.FullyConnected(x, net[0].weight.data(), net[0].bias.data(),
                                         num_hidden=6))
    np.testing.assert_allclose(feat(x).asnumpy(), expected.asnumpy(), rtol=1e-6)


def test_deferred_init_from_first_input_and_shape_errors():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4), nn.Dense(2, in_units=7))
    net.initialize()
    assert net[0].weight.shape == (4, 0)
    with pytest.raises(Exception) as e:
        net(nd.ones((2, 5)))
    msg = str(e.value)
    assert "dense1" in msg and "(2, 7)" in msg and "(2, 4)" in msg
    net2 = nn.HybridSequential()
    with net2.name_scope():
        net2.add(nn.Dense(4, in_units=3))
    net2.initialize()
    for hyb in (False, True):
        net2.hybridize(hyb)
        with pytest.raises(mx.MXNetError) as e:
            net2(nd.ones((2, 5)))
        msg = str(e.value)
        assert "dense0" in msg and "(4, 3)" in msg and "(2, 5)" in msg, msg
    d = nn.Dense(3)
    d.initialize()
    d(nd.ones((2, 9)))
    assert d.weight.shape == (3, 9)


def test_hooks_apply_cast_summary(capsys):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    seen = []
    h1 = net[0].register_forward_pre_hook(lambda blk, inp: seen.append(("pre", inp[0].shape)))
    h2 = net[0].register_forward_hook(lambda blk, inp, out: seen.append(("post", out.shape)))
    net(nd.ones((4, 2)))
    assert seen == [("pre", (4, 2)), ("post", (4, 3))]
    h1.detach()
    h2.detach()
    net(nd.ones((4, 2)))
    assert len(seen) == 2
    names = []
    net.apply(lambda b: names.append(b.name))
    assert names[-1] == net.name and len(names) == 3
    net.summary(nd.ones((4, 2)))
    out = capsys.readouterr().out
    assert "Dense-1" in out and "Total params: 13" in out
    net.cast("float64")
    assert net[0].weight.data().dtype == np.float64
    assert net(nd.ones((1, 2), dtype="float64")).dtype == np.float64


def test_plain_block_hybridize_passthrough_and_multi_output():
    class Two(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return [x + 1, F.relu(x) * 2]

    class Outer(gluon.Block):
        def __init__(self):
            super(Outer, self).__init__()
            with self.name_scope():
                self.two = Two()

        def forward(self, x):
            return self.two(x)
    o = Outer()
    o.hybridize()
    assert o.two._active
    a, b = o(nd.array([-1.0, 2.0]))
    np.testing.assert_array_equal(a.asnumpy(), [0, 3])
    np.testing.assert_array_equal(b.asnumpy(), [0, 4])


def test_cast_before_deferred_init_infers_shapes_in_the_new_dtype():
    # MXNet's test_dtype: initialize(), cast('float64'), then the first forward
    # finishes deferred init; shape inference must not trip over the dtypes
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Dense(2))
    net.initialize()
    net.cast("float64")
    x = mx.nd.ones((2, 3, 8, 8), dtype="float64")
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.dtype == np.float64 and y.shape == (2, 2)
    assert net[0].weight.data().dtype == np.float64
    assert net[0].weight.shape == (4, 3, 3, 3)
