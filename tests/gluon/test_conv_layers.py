"""gluon.nn convolution, pooling and padding layers against numpy and the
operators; parameter names/shapes, deferred init, reprs (MXNet 1.9.1's),
hybridize and export."""
import itertools

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.base import MXNetError
from aiond.gluon import nn

RS = np.random.RandomState(0)


# ------------------------------------------------------------ numpy references

def _np_conv(x, w, b, stride, pad, dilate, groups):
    """Cross-correlation of x (N, C, *L) with w (F, C/g, *k), as MXNet."""
    nd_ = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    F, k = w.shape[0], w.shape[2:]
    out_sp = [(xp.shape[2 + i] - (k[i] - 1) * dilate[i] - 1) // stride[i] + 1
              for i in range(nd_)]
    y = np.zeros((x.shape[0], F) + tuple(out_sp))
    Cg, Fg = x.shape[1] // groups, F // groups
    for g in range(groups):
        xs = xp[:, g * Cg:(g + 1) * Cg]
        ws = w[g * Fg:(g + 1) * Fg]
        for off in itertools.product(*[range(ki) for ki in k]):
            sl = tuple(slice(off[i] * dilate[i], off[i] * dilate[i] + stride[i] * (out_sp[i] - 1)
                             + 1, stride[i]) for i in range(nd_))
            patch = xs[(slice(None), slice(None)) + sl]              # (N, Cg, *o)
            wk = ws[(slice(None), slice(None)) + off]                 # (Fg, Cg)
            y[:, g * Fg:(g + 1) * Fg] += np.einsum("nc...,fc->nf...", patch, wk)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nd_)
    return y


def _np_deconv(x, w, b, stride, pad, dilate, adj, groups):
    """Transposed convolution of x (N, C, *L) with w (C, F/g, *k)."""
    nd_ = x.ndim - 2
    C, Fg, k = w.shape[0], w.shape[1], w.shape[2:]
    L = x.shape[2:]
    full = [(L[i] - 1) * stride[i] + (k[i] - 1) * dilate[i] + 1 for i in range(nd_)]
    out = [full[i] - 2 * pad[i] + adj[i] for i in range(nd_)]
    y = np.zeros((x.shape[0], Fg * groups) + tuple(f + a for f, a in zip(full, adj)))
    Cg = C // groups
    for g in range(groups):
        for off in itertools.product(*[range(ki) for ki in k]):
            sl = tuple(slice(off[i] * dilate[i], off[i] * dilate[i] + stride[i] * (L[i] - 1) + 1,
                             stride[i]) for i in range(nd_))
            wk = w[(slice(g * Cg, (g + 1) * Cg), slice(None)) + off]       # (Cg, Fg)
            y[(slice(None), slice(g * Fg, (g + 1) * Fg)) + sl] += np.einsum(
                "nc...,cf->nf...", x[:, g * Cg:(g + 1) * Cg], wk)
    y = y[(slice(None), slice(None)) + tuple(slice(pad[i], pad[i] + out[i])
                                             for i in range(nd_))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd_)
    return y


def _np_pool(x, kernel, stride, pad, pool_type, ceil_mode=False, count_include_pad=True):
    nd_ = x.ndim - 2
    L = x.shape[2:]
    out = []
    for i in range(nd_):
        n = L[i] + 2 * pad[i] - kernel[i]
        out.append(1 + (-(-n // stride[i]) if ceil_mode else n // stride[i]))
    y = np.zeros(x.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        lo = [pos[i] * stride[i] - pad[i] for i in range(nd_)]
        hi = [lo[i] + kernel[i] for i in range(nd_)]
        real = tuple(slice(max(lo[i], 0), min(hi[i], L[i])) for i in range(nd_))
        win = x[(slice(None), slice(None)) + real]
        if pool_type == "max":
            y[(slice(None), slice(None)) + pos] = win.max(axis=tuple(range(2, 2 + nd_)))
        else:
            if count_include_pad:   # cells of the padded input (not the ceil extra)
                cnt = np.prod([min(hi[i], L[i] + pad[i]) - lo[i] for i in range(nd_)])
            else:
                cnt = np.prod([s.stop - s.start for s in real])
            y[(slice(None), slice(None)) + pos] = win.sum(axis=tuple(range(2, 2 + nd_))) / cnt
    return y


def _run(layer, x, hybrid):
    if hybrid:
        layer.hybridize()
    return layer(nd.array(x)).asnumpy()


# ------------------------------------------------------------------ tests

def test_names_shapes_and_deferred_init():
    c = nn.Conv2D(4, 3)
    assert c.prefix.startswith("conv") and sorted(k[len(c.prefix):] for k in c.params) == \
        ["bias", "weight"]
    assert c.weight.shape == (4, 0, 3, 3) and c.bias.shape == (4,)
    c.initialize()
    c(nd.ones((1, 6, 5, 5)))
    assert c.weight.shape == (4, 6, 3, 3)
    assert nn.Conv2D(6, 3, groups=3, in_channels=9).weight.shape == (6, 3, 3, 3)
    assert nn.Conv1D(2, 5, use_bias=False).bias is None
    assert nn.Conv3D(2, (1, 2, 3), in_channels=4).weight.shape == (2, 4, 1, 2, 3)
    t = nn.Conv2DTranspose(6, 3, groups=2, in_channels=4)
    assert t.weight.shape == (4, 3, 3, 3) and t._alias() == "conv"
    assert nn.Conv1DTranspose(5, 2).weight.shape == (0, 5, 2)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(3, 3), nn.MaxPool2D(), nn.Conv2DTranspose(2, 2), nn.AvgPool2D(),
                nn.GlobalAvgPool2D())
    assert [k[len(net.prefix):] for k in net.collect_params()] == \
        ["conv0_weight", "conv0_bias", "conv1_weight", "conv1_bias"]
    assert net[1].name.endswith("pool0") and net[3].name.endswith("pool1")
    # MXNet 1.9.1's reprs
    assert repr(nn.Conv2D(4, (3, 2), strides=2, padding=1, dilation=2, groups=2, use_bias=False,
                          activation="relu", in_channels=4)) == \
        "Conv2D(2 -> 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), " \
        "dilation=(2, 2), groups=2, bias=False, Activation(relu))"
    assert repr(nn.Conv2DTranspose(5, 3, strides=2, output_padding=1, in_channels=2)) == \
        "Conv2DTranspose(5 -> 2, kernel_size=(3, 3), stride=(2, 2))"
    assert repr(nn.MaxPool2D(3, 2, 1, ceil_mode=True)) == \
        "MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, " \
        "global_pool=False, pool_type=max, layout=NCHW)"
    assert repr(nn.GlobalAvgPool1D()) == \
        "GlobalAvgPool1D(size=(1,), stride=(1,), padding=(0,), ceil_mode=True, " \
        "global_pool=True, pool_type=avg, layout=NCW)"
    with pytest.raises(AssertionError):
        nn.Conv1D(2, 3, layout="NWC")
    with pytest.raises(AssertionError):
        nn.Conv2D(2, (3, 3, 3))


CONV_CASES = [
    (nn.Conv1D, dict(channels=3, kernel_size=2, strides=2, padding=1), (2, 4, 9)),
    (nn.Conv2D, dict(channels=4, kernel_size=(3, 2), strides=2, padding=1, dilation=2, groups=2,
                     activation="relu"), (2, 4, 9, 8)),
    (nn.Conv2D, dict(channels=6, kernel_size=3, groups=6, use_bias=False), (1, 6, 5, 5)),
    (nn.Conv3D, dict(channels=2, kernel_size=3, padding=(1, 0, 1)), (1, 2, 5, 4, 6)),
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_vs_numpy_and_op(case, hybrid):
    cls, kw, shape = CONV_CASES[case]
    layer = cls(weight_initializer=mx.init.Normal(0.5), bias_initializer=mx.init.Normal(0.5),
                **kw)
    layer.initialize()
    x = RS.randn(*shape).astype(np.float32)
    y = _run(layer, x, hybrid)
    w = layer.weight.data().asnumpy()
    b = layer.bias.data().asnumpy() if layer.bias is not None else None
    k = layer._kwargs
    ref = _np_conv(x, w, b, k["stride"], k["pad"], k["dilate"], k["num_group"])
    if kw.get("activation") == "relu":
        ref = np.maximum(ref, 0)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    args = [nd.array(x), layer.weight.data()] + ([layer.bias.data()] if b is not None else [])
    op = nd.Convolution(*args, **k)
    if kw.get("activation"):
        op = nd.relu(op)
    np.testing.assert_allclose(y, op.asnumpy(), rtol=1e-6, atol=1e-6)


DECONV_CASES = [
    (nn.Conv1DTranspose, dict(channels=4, kernel_size=3, strides=2, output_padding=1), (2, 3, 5)),
    (nn.Conv2DTranspose, dict(channels=4, kernel_size=3, strides=2, padding=1, output_padding=1,
                              groups=2, in_channels=4), (2, 4, 5, 6)),
    (nn.Conv2DTranspose, dict(channels=3, kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0)),
     (1, 2, 4, 3)),
    (nn.Conv3DTranspose, dict(channels=2, kernel_size=2, strides=2), (1, 3, 3, 2, 4)),
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("case", range(len(DECONV_CASES)))
def test_conv_transpose_vs_numpy_and_op(case, hybrid):
    cls, kw, shape = DECONV_CASES[case]
    layer = cls(weight_initializer=mx.init.Normal(0.5), bias_initializer=mx.init.Normal(0.5),
                **kw)
    layer.initialize()
    x = RS.randn(*shape).astype(np.float32)
    y = _run(layer, x, hybrid)
    w, b = layer.weight.data().asnumpy(), layer.bias.data().asnumpy()
    k = layer._kwargs
    ref = _np_deconv(x, w, b, k["stride"], k["pad"], k["dilate"], k["adj"], k["num_group"])
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    op = nd.Deconvolution(nd.array(x), layer.weight.data(), layer.bias.data(), **k)
    np.testing.assert_allclose(y, op.asnumpy(), rtol=1e-6, atol=1e-6)


POOL_CASES = [
    (nn.MaxPool1D, dict(pool_size=3, strides=2, padding=1, ceil_mode=True), (2, 3, 10)),
    (nn.MaxPool2D, dict(), (2, 3, 6, 7)),
    (nn.MaxPool2D, dict(pool_size=3, strides=2, padding=1, ceil_mode=True), (2, 3, 10, 9)),
    (nn.MaxPool3D, dict(pool_size=2, strides=(1, 2, 2)), (1, 2, 4, 5, 6)),
    (nn.AvgPool1D, dict(pool_size=3, strides=2, padding=1), (2, 3, 10)),
    (nn.AvgPool2D, dict(pool_size=3, strides=2, padding=1, ceil_mode=True,
                        count_include_pad=False), (2, 3, 10, 9)),
    (nn.AvgPool2D, dict(pool_size=(3, 2), strides=2, padding=1, ceil_mode=True), (1, 2, 8, 7)),
    (nn.AvgPool3D, dict(pool_size=2, strides=1, padding=1), (1, 2, 3, 4, 5)),
]


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_pooling_vs_numpy(case, hybrid):
    cls, kw, shape = POOL_CASES[case]
    layer = cls(**kw)
    x = RS.randn(*shape).astype(np.float32)
    y = _run(layer, x, hybrid)
    k = layer._kwargs
    ref = _np_pool(x, k["kernel"], k["stride"], k["pad"], k["pool_type"],
                   k["pooling_convention"] == "full", k.get("count_include_pad", True))
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)
    if "strides" not in kw:
        assert k["stride"] == k["kernel"]         # strides default to pool_size


@pytest.mark.parametrize("hybrid", [False, True])
def test_global_pooling_and_reflection_pad(hybrid):
    for nd_ in (1, 2, 3):
        x = RS.randn(*((2, 3) + (4, 5, 3)[:nd_])).astype(np.float32)
        axes = tuple(range(2, 2 + nd_))
        mx_ = getattr(nn, "GlobalMaxPool%dD" % nd_)()
        av = getattr(nn, "GlobalAvgPool%dD" % nd_)()
        np.testing.assert_allclose(_run(mx_, x, hybrid), x.max(axis=axes, keepdims=True))
        np.testing.assert_allclose(_run(av, x, hybrid), x.mean(axis=axes, keepdims=True),
                                   rtol=1e-6, atol=1e-7)
    x = RS.randn(2, 3, 5, 4).astype(np.float32)
    np.testing.assert_allclose(_run(nn.ReflectionPad2D(2), x, hybrid),
                               np.pad(x, [(0, 0), (0, 0), (2, 2), (2, 2)], mode="reflect"))
    pad = (0, 0, 0, 0, 1, 2, 3, 0)
    np.testing.assert_allclose(_run(nn.ReflectionPad2D(pad), x, hybrid),
                               np.pad(x, [(0, 0), (0, 0), (1, 2), (3, 0)], mode="reflect"))


def _small_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1, activation="relu"),
                nn.BatchNorm(),
                nn.MaxPool2D(2),
                nn.Conv2DTranspose(3, 2, strides=2),
                nn.AvgPool2D(3, 1, 1, count_include_pad=False),
                nn.Conv2D(5, 1, use_bias=False),
                nn.GlobalAvgPool2D(),
                nn.Dense(3))
    return net


def test_hybridize_gradients_and_training():
    x = nd.array(RS.randn(2, 3, 6, 6))
    outs, grads = [], []
    for hybrid in (False, True):
        mx.random.seed(3)
        net = _small_net()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        losses = []
        for _ in range(5):
            with autograd.record():
                loss = (net(x) ** 2).mean()
            loss.backward()
            if not losses:
                grads.append({k[len(net.prefix):]: v.grad().asnumpy()
                              for k, v in net.collect_params().items() if v.grad_req != "null"})
            trainer.step(2)
            losses.append(float(loss.asscalar()))
        assert losses[-1] < losses[0]
        outs.append(losses)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    assert grads[0].keys() == grads[1].keys() and "conv1_weight" in grads[0]
    for k in grads[0]:
        np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-4, atol=1e-6, err_msg=k)


def test_export_import(tmp_path):
    net = _small_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(RS.randn(1, 3, 6, 6))
    y = net(x).asnumpy()
    prefix = str(tmp_path / "convnet")
    net.export(prefix)
    sym = mx.sym.load(prefix + "-symbol.json")
    ops = [n for n in sym.get_internals().list_outputs() if n.endswith("_fwd_output")]
    assert any("conv0_fwd" in n for n in ops) and any("pool0_fwd" in n for n in ops)
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    np.testing.assert_allclose(back(x).asnumpy(), y, rtol=1e-5, atol=1e-6)


def test_channel_last_layout_is_refused_by_the_operator():
    c = nn.Conv2D(2, 3, layout="NHWC", in_channels=3)
    assert c.weight.shape == (2, 3, 3, 3)     # MXNet's OHWI weight: (F, kh, kw, C)
    c.initialize()
    with pytest.raises(MXNetError, match="NHWC"):
        c(nd.ones((1, 5, 5, 3))).asnumpy()
