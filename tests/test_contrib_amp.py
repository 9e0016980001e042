"""mx.contrib.amp: op lists, graph conversion (structures checked against
MXNet 1.9.1's convert_symbol), dynamic loss scaling, and a float16 training
loop under amp.init (in a subprocess: init patches mx.nd/mx.sym for good)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import aiond as mx
from aiond import gluon
from aiond.contrib import amp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ops(s):
    nodes = json.loads(s.tojson(remove_amp_cast=False))["nodes"]
    return [(n["op"], n["name"], n.get("attrs", {}).get("dtype", ""),
             tuple(i[0] for i in n["inputs"])) for n in nodes]


def test_lists_hold_only_present_ops_and_are_disjoint():
    for key in ("float16", "bfloat16"):
        lp, f32 = amp.list_lp16_ops(key), amp.list_fp32_ops(key)
        both, wide = amp.list_lp16_fp32_ops(key), amp.list_widest_type_cast(key)
        cond = [c[0] for c in amp.list_conditional_fp32_ops(key)]
        allnames = lp + f32 + both + wide + cond
        assert len(allnames) == len(set(allnames))
        for n in allnames:
            assert amp.amp.locate(n, mx.nd)[1] is not None
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution", "FullyConnected", "RNN"]
    assert amp.list_lp16_ops(np.float16) is amp.lists.symbol_fp16.FP16_FUNCS
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    assert "exp" in amp.list_fp32_ops("float16") and "elemwise_add" in amp.list_widest_type_cast("float16")
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16")["BatchNorm"][1] == "gamma"
    assert amp.list_loss_output_functions("float16")[0] == "SoftmaxOutput"
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("float16")
    with pytest.raises(AssertionError):
        amp.list_lp16_ops("float64")


def test_convert_symbol_structure_as_mxnet():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    res = mx.sym.FullyConnected(x, y, num_hidden=10, no_bias=True, name="fc") + mx.sym.sin(y, name="sin")
    got = _ops(amp.convert_symbol(res, target_dtype_ops=["FullyConnected"], fp32_ops=["sin"]))
    # MXNet 1.9.1 (tojson(remove_amp_cast=False)) gives this graph
    assert [(o, d, i) for o, _, d, i in got] == [
        ("null", "", ()), ("amp_cast", "float16", (0,)), ("null", "", ()),
        ("amp_cast", "float16", (2,)), ("FullyConnected", "", (1, 3)),
        ("amp_cast", "float32", (4,)), ("sin", "", (2,)), ("elemwise_add", "", (5, 6))]
    assert got[1][1] == "x_amp_cast_float16" and got[5][1] == "fc_output_amp_cast_float32"
    fc = mx.sym.FullyConnected(x, y, num_hidden=10, no_bias=True, name="fc")
    cond = amp.convert_symbol(fc, target_dtype_ops=[], fp32_ops=["sin"],
                              conditional_fp32_ops=[("FullyConnected", "no_bias", ["True"])])
    assert [o for o, _, d, _ in _ops(cond)] == ["null", "amp_cast", "null", "amp_cast", "FullyConnected"]
    plain = amp.convert_symbol(fc, target_dtype_ops=[], fp32_ops=["sin"],
                               conditional_fp32_ops=[("FullyConnected", "no_bias", ["False"])])
    assert [o for o, _, _, _ in _ops(plain)] == ["null", "null", "FullyConnected", "amp_cast"]
    for bad in [dict(target_dtype_ops=["FullyConnected"], fp32_ops=["elemwise_add"]),
                dict(target_dtype_ops=["FullyConnected"], fp32_ops=["FullyConnected"]),
                dict(target_dtype_ops=["Activation"], fp32_ops=["Activation"],
                     conditional_fp32_ops=[("Activation", "act_type", ["selu"])])]:
        with pytest.raises(AssertionError):
            amp.convert_symbol(res, **bad)
    with pytest.raises(TypeError, match="bfloat16"):
        amp.convert_symbol(res, target_dtype="bfloat16")


def _convnet():
    d = mx.sym.var("data")
    net = mx.sym.Convolution(d, num_filter=4, kernel=(3, 3), name="conv")
    net = mx.sym.BatchNorm(net, name="bn")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.flatten(net, name="flat")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.softmax(net, name="sm")


def test_convert_symbol_params_and_widest():
    net = _convnet()
    c = amp.convert_symbol(net, data_names=["data"])
    ops = [o for o, _, _, _ in _ops(c)]
    assert ops.count("amp_cast") == 6          # data, conv w/b, fc w/b, fc output
    assert c.attr_dict()["conv_weight"]["__dtype__"] == "0"
    c2 = amp.convert_symbol(net, data_names=["data"], cast_optional_params=True)
    assert [o for o, _, _, _ in _ops(c2)].count("amp_cast") == 2
    assert c2.attr_dict()["conv_weight"]["__dtype__"] == "2"      # float16
    assert c2.attr_dict()["bn_gamma"]["__dtype__"] == "0"
    c3 = amp.convert_symbol(net, data_names=["data"], excluded_sym_names=["fc2"])
    names = [n for _, n, _, _ in _ops(c3)]
    assert "flat_output_amp_cast_float32" in names and "fc2_weight_amp_cast_float16" not in names
    # widest: a float32 (exp) and a float16 (FullyConnected) input meet in float32
    x, w = mx.sym.var("x"), mx.sym.var("w")
    e = mx.sym.elemwise_add(mx.sym.exp(x, name="e"),
                            mx.sym.FullyConnected(x, w, num_hidden=3, no_bias=True, name="f"))
    got = _ops(amp.convert_symbol(e))
    assert got[-2][0] == "amp_cast" and got[-2][2] == "float32" and got[-1][0] == "elemwise_add"
    # unknown input types: one amp_multicast
    m = amp.convert_symbol(mx.sym.elemwise_add(x, w), target_dtype_ops=[], fp32_ops=[])
    assert "amp_multicast" in [o for o, _, _, _ in _ops(m)]


def test_convert_model_and_hybrid_block_values():
    mx.random.seed(3)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 8, 8))
    ref = net(x).asnumpy()
    with pytest.raises(AssertionError):
        amp.convert_hybrid_block(net.collect_params(), ctx=mx.cpu())
    for cop in (False, True):
        b = amp.convert_hybrid_block(net, ctx=mx.cpu(), cast_optional_params=cop)
        y = b(x)
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-2, atol=2e-3)
        dt = {k.split("_", 1)[1]: p.dtype for k, p in b.collect_params().items()}
        assert dt["weight"] == (np.float16 if cop else np.float32)
        assert dt["running_mean"] == np.float32
    sym = net(mx.sym.var("data"))
    params = {k: p.data() for k, p in net.collect_params().items()}
    aux = {k: v for k, v in params.items() if "running" in k}
    args = {k: v for k, v in params.items() if k not in aux}
    s2, a2, x2 = amp.convert_model(sym, dict(args), dict(aux), cast_optional_params=True)
    conv_w = net[0].weight.name         # names depend on the blocks made before
    bn_gamma = net[1].gamma.name
    assert a2[conv_w].dtype == np.float16 and a2[bn_gamma].dtype == np.float32
    out = s2.bind(mx.cpu(), dict(a2, data=x), aux_states=x2).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=2e-2, atol=2e-3)
    with pytest.raises(AssertionError):
        amp.convert_model(sym, [], aux)


def test_loss_scaler_dynamics():
    p = gluon.Parameter("w", shape=(3,))
    p.initialize()
    ls = amp.loss_scaler.LossScaler()
    assert ls.loss_scale == 2. ** 16
    p.grad()[:] = 1.0
    assert ls.has_overflow([p]) is False
    p.grad()[:] = np.array([1, np.inf, 0], dtype=np.float32)
    assert ls.has_overflow([p]) is True
    assert ls.loss_scale == 2. ** 16           # the halving applies from the next check
    p.grad()[:] = 1.0
    assert ls.has_overflow([p]) is False and ls.loss_scale == 2. ** 15
    ls._scale_seq_len = 2
    ls.has_overflow([p])
    assert ls.has_overflow([p]) is False and ls._next_loss_scale == 2. ** 16


def test_init_trainer_requires_init_and_trainer():
    if amp.amp._amp_initialized:
        pytest.skip("amp already initialized in this process")
    d = gluon.nn.Dense(2, in_units=2)
    d.initialize()
    tr = gluon.Trainer(d.collect_params(), "sgd")
    with pytest.raises(AssertionError, match="amp.init"):
        amp.init_trainer(tr)
    with pytest.raises(AssertionError, match="init_trainer"):
        with amp.scale_loss(mx.nd.ones(1), tr):
            pass


_TRAIN = textwrap.dedent("""
    import numpy as np, aiond as mx
    from aiond import gluon, autograd
    from aiond.contrib import amp
    amp.init()
    assert amp.amp._amp_initialized
    a = mx.nd.ones((2, 3))
    y = mx.nd.FullyConnected(a, mx.nd.ones((4, 3)), num_hidden=4, no_bias=True)
    assert y.dtype == np.float16, y.dtype
    assert mx.nd.exp(y).dtype == np.float32
    assert mx.nd.elemwise_add(y, mx.nd.ones((2, 4))).dtype == np.float32
    assert mx.nd.broadcast_add(y, y).dtype == np.float16
    assert mx.nd.Activation(y, act_type='softrelu').dtype == np.float32
    assert mx.nd.Activation(y, act_type='relu').dtype == np.float16
    s = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
    assert s.name == 'fc' and s.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    nodes = __import__('json').loads(s.tojson(remove_amp_cast=False))['nodes']
    assert [n['op'] for n in nodes].count('amp_cast') == 3
    mx.random.seed(0); rs = np.random.RandomState(0)
    X = rs.randn(256, 10).astype('float32'); Y = (X @ rs.randn(10, 3)).argmax(1)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(32, activation='relu'), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    tr = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(tr)
    lossf = gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for hyb in (False, True):
        if hyb:
            net.hybridize()
        for ep in range(4):
            tot = 0.0
            for i in range(0, 256, 32):
                d, l = mx.nd.array(X[i:i+32]), mx.nd.array(Y[i:i+32])
                with autograd.record():
                    out = net(d)
                    loss = lossf(out, l)
                    with amp.scale_loss(loss, tr) as sl:
                        autograd.backward(sl)
                tr.step(32)
                tot += float(loss.mean().asscalar())
            losses.append(tot / 8)
            assert out.dtype == np.float16
    assert all(np.isfinite(losses)), losses
    assert losses[-1] < 0.6 * losses[0], losses
    assert tr._amp_loss_scaler.loss_scale < 2 ** 16     # early overflows halved it
    for p in net.collect_params().values():
        assert p.data().dtype == np.float32
    # unscale: gradients divided by the loss scale now, scale 1 for the step
    with autograd.record():
        loss = lossf(net(mx.nd.array(X[:32])), mx.nd.array(Y[:32]))
        with amp.scale_loss(loss, tr) as sl:
            autograd.backward(sl)
    w = net[0].weight
    g_scaled = w.grad().asnumpy().copy()
    amp.unscale(tr)
    np.testing.assert_allclose(w.grad().asnumpy(), g_scaled / tr._amp_loss_scaler.loss_scale,
                               rtol=1e-5)
    assert tr._scale == 1.0
    print('OK')
""")


def test_float16_training_loop_under_amp_init():
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", _TRAIN], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout[-2000:] + r.stderr[-4000:]


def test_tojson_drops_amp_casts_unless_asked_to_keep_them():
    import json
    x = mx.sym.var("x")
    z = mx.sym.relu(mx.sym.amp_cast(x, dtype="float16"))
    a, b = mx.sym.amp_multicast(z, x, num_outputs=2)
    out = a + b
    ops = [n["op"] for n in json.loads(out.tojson())["nodes"]]
    assert ops == ["null", "relu", "elemwise_add"]
    kept = [n["op"] for n in json.loads(out.tojson(remove_amp_cast=False))["nodes"]]
    assert "amp_cast" in kept and "amp_multicast" in kept
    back = mx.sym.load_json(out.tojson())
    np.testing.assert_allclose(back.eval(x=mx.nd.array([-1.0, 2.0]))[0].asnumpy(), [-1.0, 4.0])
