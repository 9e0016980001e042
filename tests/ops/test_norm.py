"""BatchNorm, LayerNorm and InstanceNorm: forward against numpy formulas,
BatchNorm's training behaviour (moving statistics, modes, fix_gamma, the
mean / inverse-std outputs) against values computed with MXNet 1.9.1,
gradients against finite differences, and argument errors at the call."""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.test_utils import check_numeric_gradient

nd = mx.nd
RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def close(got, want, rtol=1e-5, atol=1e-6):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

# ------------------------------------------------------------- BatchNorm
# the inputs of the MXNet runs whose results are pasted below
X = (np.sin(np.arange(48) * 0.7) * 2 + (np.arange(48) % 5) * 0.3).reshape(4, 3, 2, 2)
HEAD = np.cos(np.arange(48) * 1.3).reshape(4, 3, 2, 2)
GAMMA, BETA = [0.5, 2.0, 1.5], [0.1, -0.2, 0.3]
MM, MV = [0.1, 0.2, 0.3], [1.0, 2.0, 0.5]


def bn_run(train=True, backward_train=True, **kw):
    """Record BatchNorm(output_mean_var=True) in ``train`` mode and backprop HEAD."""
    x, g, b = nd.array(X), nd.array(GAMMA), nd.array(BETA)
    mm, mv = nd.array(MM), nd.array(MV)
    for a in (x, g, b):
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        y, mean, var = nd.BatchNorm(x, g, b, mm, mv, output_mean_var=True, **kw)
    after_forward = (mm.asnumpy().copy(), mv.asnumpy().copy())
    y.backward(nd.array(HEAD), train_mode=backward_train)
    return dict(y=y.asnumpy(), mean=mean.asnumpy(), var=var.asnumpy(), mm=mm.asnumpy(),
                mv=mv.asnumpy(), fwd_mm=after_forward[0], fwd_mv=after_forward[1],
                gx=x.grad.asnumpy(), gg=g.grad.asnumpy(), gb=b.grad.asnumpy(),
                gamma=g.asnumpy())


GB_MXNET = [-0.17847144603729248, -0.11842155456542969, 0.06750617921352386]
BATCH_MEAN = [0.9232677221298218, 0.33402758836746216, 0.7051093578338623]
BATCH_INVSTD = [0.6363165974617004, 0.6435338258743286, 0.8441522121429443]


def test_batchnorm_training_step_matches_mxnet(ctx):
    r = bn_run(fix_gamma=False)
    # a forward alone leaves the moving stats alone: MXNet's CPU op updates them in backward
    close(r["fwd_mm"], MM)
    close(r["fwd_mv"], MV)
    close(r["mm"], [0.1823267936706543, 0.21340276300907135, 0.3405109643936157])
    close(r["mv"], [1.1468753814697266, 2.0413668155670166, 0.5902326107025146])
    # output_mean_var: the batch mean and 1/sqrt(var + eps) (MXNet's "var" output)
    close(r["mean"], BATCH_MEAN)
    close(r["var"], BATCH_INVSTD)
    close(r["y"][0, :, 0, 0], [-0.19374528527259827, 1.7768698930740356, -1.0518794059753418])
    close(r["gx"][0, :, 0, 0], [0.2779252529144287, 0.1834254264831543, -0.8604307770729065])
    close(r["gx"][3, :, 1, 1], [0.38372939825057983, 1.4177651405334473, 0.047499556094408035])
    close(r["gg"], [-3.747750759124756, 5.396875858306885, -2.0295169353485107])
    close(r["gb"], GB_MXNET)
    # numpy formula of the training forward
    x = X.astype(np.float32)
    mu, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    b4 = lambda v: np.asarray(v, np.float32).reshape(1, 3, 1, 1)  # noqa: E731
    close(r["y"], (x - b4(mu)) / np.sqrt(b4(var) + 1e-3) * b4(GAMMA) + b4(BETA), 1e-5, 1e-5)


def test_batchnorm_momentum_and_eps(ctx):
    r = bn_run(fix_gamma=False, momentum=0.5, eps=0.1)
    close(r["mm"], [0.5116338729858398, 0.2670137882232666, 0.5025546550750732])
    close(r["mv"], [1.7343764305114746, 2.2068333625793457, 0.9511627554893494])
    close(r["var"], [0.623934268951416, 0.630733847618103, 0.8158643841743469])
    close(r["gg"], [-3.6748218536376953, 5.2895307540893555, -1.9615070819854736])


def test_batchnorm_fix_gamma_default(ctx):
    r = bn_run()
    close(r["y"][0, :, 0, 0], [-0.48749056458473206, 0.7884349822998047, -0.6012529134750366])
    close(r["gg"], [0, 0, 0])                   # gamma treated as 1, zero gradient
    close(r["gb"], GB_MXNET)
    close(r["gx"][0, :, 0, 0], [0.5558505058288574, 0.09171271324157715, -0.5736205577850342])
    close(r["mm"], [0.1823267936706543, 0.21340276300907135, 0.3405109643936157])
    close(r["gamma"], [1, 1, 1])  # MXNet overwrites gamma with ones on forward; so does aiond


PREDICT_Y0 = [0.050024982541799545, 2.1611127853393555, -1.1040420532226562]
PREDICT_INVSTD = [0.9995003938674927, 0.7069301009178162, 1.4128015041351318]
PREDICT_GG = [-6.033671855926514, 5.9173150062561035, -3.3580315113067627]


@pytest.mark.parametrize("case", ["predict", "global_stats"])
def test_batchnorm_uses_moving_stats(case, ctx):
    kw = dict(fix_gamma=False)
    if case == "predict":
        r = bn_run(train=False, backward_train=False, **kw)
    else:
        r = bn_run(use_global_stats=True, **kw)
    close(r["y"][0, :, 0, 0], PREDICT_Y0)
    close(r["mean"], MM)
    close(r["var"], PREDICT_INVSTD)
    close(r["mm"], MM)          # no update
    close(r["mv"], MV)
    close(r["gx"][0, :, 0, 0], [0.49975019693374634, 0.6624171137809753, -1.188839077949524])
    close(r["gx"][3, :, 1, 1], [0.4533100426197052, 1.126690149307251, -0.3398381471633911])
    close(r["gg"], PREDICT_GG)
    close(r["gb"], GB_MXNET)
    b4 = lambda v: np.asarray(v, np.float32).reshape(1, 3, 1, 1)  # noqa: E731
    close(r["y"], (X - b4(MM)) / np.sqrt(b4(MV) + 1e-3) * b4(GAMMA) + b4(BETA), 1e-5, 1e-5)


def test_batchnorm_backward_mode_is_the_backward_calls_as_in_mxnet():
    # a predict-mode forward differentiated by the default backward(train_mode=True)
    # gets MXNet's training-formula gradient (moving stats in place of batch stats)
    r = bn_run(train=False, fix_gamma=False)
    close(r["y"][0, :, 0, 0], PREDICT_Y0)
    close(r["gx"][0, :, 0, 0], [0.4864882528781891, 0.05557915195822716, -1.6140990257263184])
    close(r["gx"][3, :, 1, 1], [0.9777621030807495, 1.5938141345977783, 1.0917582511901855])
    close(r["gg"], PREDICT_GG)
    close(r["mm"], MM)
    close(r["mv"], MV, 1e-6)


def test_batchnorm_train_mode_without_recording_and_plain_calls():
    x = nd.array(X)
    mm, mv = nd.array(MM), nd.array(MV)
    with mx.autograd.train_mode():
        y = nd.BatchNorm(x, nd.array(GAMMA), nd.array(BETA), mm, mv)
    x32 = X.astype(np.float32)
    mu, var = x32.mean((0, 2, 3)), x32.var((0, 2, 3))
    close(y, (x32 - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-3)
          + np.reshape(BETA, (1, 3, 1, 1)), 1e-5, 1e-5)
    close(mm, MM)               # no backward, no update (MXNet CPU)
    # outside any scope: predict mode, one visible output
    y = nd.BatchNorm(x, nd.array(GAMMA), nd.array(BETA), mm, mv, fix_gamma=False)
    assert isinstance(y, nd.NDArray)
    close(y[0, :, 0, 0], PREDICT_Y0)


def test_batchnorm_two_steps_accumulate(ctx):
    x, g, b = nd.array(X), nd.array(GAMMA), nd.array(BETA)
    mm, mv = nd.zeros((3,)), nd.ones((3,))
    x.attach_grad()
    xs = X.astype(np.float32)
    want_m, want_v = np.zeros(3), np.ones(3)
    for step in range(2):
        with mx.autograd.record():
            y = nd.BatchNorm(x * (step + 1.0), g, b, mm, mv, momentum=0.8)
        y.backward()
        xb = xs * (step + 1)
        want_m = want_m * 0.8 + xb.mean((0, 2, 3)) * 0.2
        want_v = want_v * 0.8 + xb.var((0, 2, 3)) * 0.2
    close(mm, want_m, 1e-5, 1e-6)
    close(mv, want_v, 1e-5, 1e-6)


@pytest.mark.parametrize("shape,axis", [((5, 3), 1), ((4, 2, 3), -1), ((2, 3, 4, 2), 2),
                                        ((6,), 0)])
def test_batchnorm_axis_forward(shape, axis, ctx):
    x = rand(*shape)
    C = shape[axis]
    g, b, m, v = rand(C), rand(C), rand(C), np.abs(rand(C)) + 0.5
    bs = [1] * len(shape)
    bs[axis] = C
    red = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    with mx.autograd.train_mode():
        y = nd.BatchNorm(nd.array(x), nd.array(g), nd.array(b), nd.array(m), nd.array(v),
                         axis=axis, fix_gamma=False)
    mu, var = x.mean(red).reshape(bs), x.var(red).reshape(bs)
    close(y, (x - mu) / np.sqrt(var + 1e-3) * g.reshape(bs) + b.reshape(bs), 1e-4, 1e-5)
    y = nd.BatchNorm(nd.array(x), nd.array(g), nd.array(b), nd.array(m), nd.array(v),
                     axis=axis, fix_gamma=False)
    close(y, (x - m.reshape(bs)) / np.sqrt(v.reshape(bs) + 1e-3) * g.reshape(bs) + b.reshape(bs),
          1e-4, 1e-5)


def test_batchnorm_float16_data_with_float32_params(ctx):
    x = rand(4, 3, 2, dtype=np.float16)
    outs = nd.BatchNorm(nd.array(x, dtype="float16"), nd.ones((3,)), nd.zeros((3,)),
                        nd.zeros((3,)), nd.ones((3,)), output_mean_var=True)
    assert [o.dtype for o in outs] == [np.float16, np.float32, np.float32]
    close(outs[0], x / np.sqrt(1 + 1e-3), 2e-3, 2e-3)


@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(fix_gamma=False, axis=-1),
                                dict(fix_gamma=True, eps=0.01)])
def test_batchnorm_gradient_training(kw, ctx):
    C = 3
    shape = (4, 3, 3) if kw.get("axis") != -1 else (4, 2, 3)
    mm, mv = nd.zeros((C,), dtype="float64"), nd.ones((C,), dtype="float64")

    def f(x, g, b):
        return nd.BatchNorm(x, g, b, mm, mv, **kw)
    check_numeric_gradient(f, [rand(*shape, dtype=np.float64), rand(C, dtype=np.float64) + 2,
                               rand(C, dtype=np.float64)], rtol=1e-4, atol=1e-6)


def test_batchnorm_gradient_global_stats(ctx):
    mm = nd.array(rand(3), dtype="float64")
    mv = nd.array(np.abs(rand(3)) + 0.5, dtype="float64")

    def f(x, g, b):
        return nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, use_global_stats=True)
    check_numeric_gradient(f, [rand(2, 3, 4, dtype=np.float64), rand(3, dtype=np.float64),
                               rand(3, dtype=np.float64)], rtol=1e-4, atol=1e-6)

# ------------------------------------------------------------- LayerNorm


XL = np.sin(np.arange(12.) * 0.9).reshape(2, 2, 3)


def test_layernorm_values_from_mxnet(ctx):
    y, mean, std = nd.LayerNorm(nd.array(XL), nd.array([1.0, 0.5, 2.0]), nd.array([0.0, 0.1, -0.1]),
                                output_mean_var=True)
    close(y, [[[-1.389877200126648, 0.33444681763648987, 1.7419673204421997],
               [1.3096950054168701, 0.0035953298211097717, -2.3337714672088623]],
              [[-1.2280325889587402, 0.10331621766090393, 2.3428006172180176],
               [1.1266002655029297, 0.1884968876838684, -2.707188129425049]]])
    close(mean, [[[0.5857248306274414], [-0.3308902084827423]],
                 [[0.012572407722473145], [0.30815747380256653]]])
    close(std, [[[0.42142200469970703], [0.5789669156074524]],      # sqrt(var + eps)
                [[0.6395081877708435], [0.5873709917068481]]])


@pytest.mark.parametrize("shape,axis,eps", [((3, 5), -1, 1e-5), ((2, 3, 4), 1, 1e-3),
                                            ((2, 3, 4), 0, 0.1), ((7,), 0, 1e-5)])
def test_layernorm_forward(shape, axis, eps, ctx):
    x = rand(*shape)
    C = shape[axis]
    g, b = rand(C), rand(C)
    bs = [1] * len(shape)
    bs[axis] = C
    y = nd.LayerNorm(nd.array(x), nd.array(g), nd.array(b), axis=axis, eps=eps)
    mu, var = x.mean(axis, keepdims=True), x.var(axis, keepdims=True)
    close(y, (x - mu) / np.sqrt(var + eps) * g.reshape(bs) + b.reshape(bs), 1e-4, 1e-5)


@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 2), 0)])
def test_layernorm_gradient(shape, axis, ctx):
    C = shape[axis]
    check_numeric_gradient(lambda x, g, b: nd.LayerNorm(x, g, b, axis=axis),
                           [rand(*shape, dtype=np.float64), rand(C, dtype=np.float64),
                            rand(C, dtype=np.float64)], rtol=1e-4, atol=1e-6)

# ---------------------------------------------------------- InstanceNorm


def test_instancenorm_values_from_mxnet(ctx):
    y = nd.InstanceNorm(nd.array(XL), nd.array([1.0, 0.5]), nd.array([0.0, 0.1]))
    close(y, [[[-1.3860194683074951, 0.46759214997291565, 0.9184274077415466],
               [0.7538827061653137, 0.0037373974919319153, -0.4576200544834137]],
              [[-1.2265489101409912, 0.0066244155168533325, 1.2199244499206543],
               [0.6624937057495117, 0.18837018311023712, -0.5508639812469482]]])


@pytest.mark.parametrize("shape,eps", [((2, 3, 5), 1e-3), ((2, 2, 3, 4), 0.1),
                                       ((1, 2, 2, 2, 3), 1e-3)])
def test_instancenorm_forward_and_gradient(shape, eps, ctx):
    x, g, b = rand(*shape), rand(shape[1]), rand(shape[1])
    axes = tuple(range(2, len(shape)))
    bs = (1, shape[1]) + (1,) * (len(shape) - 2)
    y = nd.InstanceNorm(nd.array(x), nd.array(g), nd.array(b), eps=eps)
    mu, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    close(y, (x - mu) / np.sqrt(var + eps) * g.reshape(bs) + b.reshape(bs), 1e-4, 1e-5)
    check_numeric_gradient(lambda x_, g_, b_: nd.InstanceNorm(x_, g_, b_, eps=eps),
                           [a.astype(np.float64) for a in (x, g, b)], rtol=1e-4, atol=1e-6)

# ----------------------------------------------------------------- errors


def _o(*shape):
    return nd.ones(shape)


@pytest.mark.parametrize("call,match", [
    (lambda: nd.BatchNorm(_o(2, 3, 4), _o(4), _o(3), _o(3), _o(3)),
     r"BatchNorm: gamma has shape \(4,\) but data \(2, 3, 4\) with axis=1 needs \(3,\)"),
    (lambda: nd.BatchNorm(_o(2, 3, 4), _o(3), _o(3), _o(3), _o(2)),
     r"BatchNorm: moving_var has shape \(2,\)"),
    (lambda: nd.BatchNorm(_o(2, 3), _o(3), _o(3), _o(3), _o(3), axis=2),
     r"BatchNorm: axis=2 is out of range"),
    (lambda: nd.BatchNorm(nd.ones((2, 3), dtype="float64"), _o(3), _o(3), _o(3), _o(3)),
     r"BatchNorm: gamma has dtype float32 but data has float64"),
    (lambda: nd.BatchNorm(nd.ones((2, 3), dtype="int32"), _o(3), _o(3), _o(3), _o(3)),
     r"BatchNorm: data dtype int32 is not supported"),
    (lambda: nd.LayerNorm(_o(2, 3, 4), _o(3), _o(3)),
     r"LayerNorm: gamma has shape \(3,\) but data \(2, 3, 4\) with axis=-1 needs \(4,\)"),
    (lambda: nd.InstanceNorm(_o(2, 3), _o(3), _o(3)),
     r"InstanceNorm: data must have at least 3 dimensions"),
    (lambda: nd.InstanceNorm(_o(2, 3, 4), _o(4), _o(4)),
     r"InstanceNorm: gamma has shape \(4,\)"),
    (lambda: nd.BatchNorm(_o(2, 3), _o(3), _o(3), _o(3), _o(3), momentum="fast"),
     r"BatchNorm: argument momentum='fast' is invalid"),
])
def test_bad_arguments_raise_at_the_call(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


def test_visible_outputs():
    args = [_o(2, 3, 4), _o(3), _o(3), _o(3), _o(3)]
    assert isinstance(nd.BatchNorm(*args), nd.NDArray)
    assert [o.shape for o in nd.BatchNorm(*args, output_mean_var=True)] == [(2, 3, 4), (3,), (3,)]
    assert [o.shape for o in nd.LayerNorm(_o(2, 3, 4), _o(4), _o(4), output_mean_var=True)] == \
        [(2, 3, 4), (2, 3, 1), (2, 3, 1)]
    assert isinstance(nd.InstanceNorm(_o(2, 3, 4), _o(3), _o(3)), nd.NDArray)


@pytest.mark.parametrize("train", [False, True])
def test_batchnorm_fix_gamma_writes_ones_into_gamma_like_mxnet(train):
    x = mx.nd.array(np.random.uniform(size=(4, 3, 2, 2)))
    g = mx.nd.array([2., 3., 4.])
    g2 = mx.nd.array([2., 3., 4.])
    b, mm, mv = mx.nd.zeros(3), mx.nd.zeros(3), mx.nd.ones(3)
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=True)
        mx.nd.BatchNorm(x, g2, b, mm, mv, fix_gamma=False)
    np.testing.assert_array_equal(g.asnumpy(), [1, 1, 1])      # MXNet 1.9.1: [1. 1. 1.]
    np.testing.assert_array_equal(g2.asnumpy(), [2, 3, 4])     # untouched without fix_gamma


def test_batchnorm_v1_is_batchnorm():
    # MXNet 1.x keeps the legacy BatchNorm_v1 (same math on NCHW data)
    x = mx.nd.array(np.random.RandomState(0).rand(2, 3, 4, 4))
    g, b = mx.nd.array([1.0, 2.0, 0.5]), mx.nd.array([0.0, 1.0, -1.0])
    mm, mv = mx.nd.zeros(3), mx.nd.ones(3)
    y1 = mx.nd.BatchNorm_v1(x, g, b, mm, mv, fix_gamma=False, use_global_stats=True)
    y2 = mx.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, use_global_stats=True)
    np.testing.assert_allclose(y1.asnumpy(), y2.asnumpy(), rtol=1e-6)
    s = mx.sym.BatchNorm_v1(mx.sym.var("data"), name="bn")
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


@pytest.mark.parametrize("piece", [None, 64])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_batchnorm_training_is_bitwise_its_formula(dtype, piece, monkeypatch):
    """The kernels build x - mean in the output (forward) and gradient
    (backward) buffers and finish in place; the result must be the plain
    formula's, op for op, in the working dtype (float32 for float16 data,
    rounded once at the end). The numpy kernels' arithmetic: on the CPU
    whatever the test run's default context, and without oneDNN (whose
    float32 kernel sums in its own order; tests/test_onednn.py). ``piece``:
    the backward's (g - mean(g)) made a few samples at a time in a reused
    buffer (``norm._PIECE`` bytes, as for large batches), the same bits."""
    from aiond.ops import norm
    from aiond.ops._fast import channel_sum
    monkeypatch.setenv("AIOND_ONEDNN", "0")
    if piece is not None:
        monkeypatch.setattr(norm, "_PIECE", piece)
    rs = np.random.RandomState(12)
    x = rs.randn(6, 3, 5, 7).astype(dtype)
    head = rs.randn(6, 3, 5, 7).astype(dtype)
    gamma = (rs.rand(3) + 0.5).astype(dtype)
    beta = rs.randn(3).astype(dtype)
    with mx.cpu():
        X, G, B = (nd.array(a, dtype=dtype) for a in (x, gamma, beta))
        for a in (X, G, B):
            a.attach_grad()
        with mx.autograd.record():
            y = nd.BatchNorm(X, G, B, nd.zeros(3, dtype=dtype), nd.ones(3, dtype=dtype),
                             fix_gamma=False, eps=1e-3)
        y.backward(nd.array(head, dtype=dtype))
    acc = np.float64 if dtype == "float64" else np.float32
    m = 6 * 35
    x3 = x.reshape(6, 3, 35).astype(acc)
    g3 = head.reshape(6, 3, 35).astype(acc)
    mean = channel_sum(np, x3) / m
    xc = x3 - mean.reshape(1, 3, 1)
    var = np.einsum("acb,acb->c", xc, xc) / m
    invstd = 1.0 / np.sqrt(var + 1e-3)
    scale = invstd * gamma.astype(acc)
    want_y = (xc * scale.reshape(1, 3, 1)).astype(dtype) + beta.reshape(1, 3, 1)
    # the backward reads the mean and inverse std the forward saved (in the data's dtype)
    mu, istd = mean.astype(dtype).astype(acc), invstd.astype(dtype).astype(acc)
    xc = x3 - mu.reshape(1, 3, 1)
    sum_g = channel_sum(np, g3)
    dotp = np.einsum("acb,acb->c", xc, g3)
    iw = (istd * gamma.astype(acc)).reshape(1, 3, 1)
    k = (dotp * istd * istd / m).reshape(1, 3, 1)
    want_dx = ((g3 - (sum_g / m).reshape(1, 3, 1) - xc * k) * iw).astype(dtype)
    bits = "u%d" % np.dtype(dtype).itemsize
    assert np.array_equal(y.asnumpy().reshape(6, 3, 35).view(bits), want_y.view(bits))
    assert np.array_equal(X.grad.asnumpy().reshape(6, 3, 35).view(bits), want_dx.view(bits))


@pytest.mark.parametrize("fix_gamma", [False, True])
def test_batchnorm_split_by_channels_matches_whole(fix_gamma, monkeypatch):
    """A BatchNorm of ``norm.SPLIT_MIN`` elements or more runs as channel
    ranges shared with idle workers (forward, and the numpy backward below
    oneDNN's size): the same values as the whole op and the float64 formula,
    an odd channel count splitting unevenly."""
    from aiond.ops import norm
    monkeypatch.setenv("AIOND_ONEDNN", "0")
    rs = np.random.RandomState(3)
    shape = (2, 37, 120, 120)
    assert np.prod(shape) >= norm.SPLIT_MIN
    x = (rs.randn(*shape) * 2 + 0.5).astype("f4")
    head = rs.randn(*shape).astype("f4")
    gamma, beta = (rs.rand(37) + 0.5).astype("f4"), rs.randn(37).astype("f4")

    def run(split_min):
        monkeypatch.setattr(norm, "SPLIT_MIN", split_min)
        with mx.cpu():
            X, G, B = nd.array(x), nd.array(gamma), nd.array(beta)
            for a in (X, G, B):
                a.attach_grad()
            mm, mv = nd.zeros(37), nd.ones(37)
            with mx.autograd.record():
                y = nd.BatchNorm(X, G, B, mm, mv, fix_gamma=fix_gamma, eps=1e-5,
                                 momentum=0.8)
            y.backward(nd.array(head))
            return [a.asnumpy() for a in (y, X.grad, G.grad, B.grad, mm, mv)]
    ranges = []
    fwd = norm._bn_batch_fwd

    def counted(xp, x3, *a):
        ranges.append(x3.shape[1])
        return fwd(xp, x3, *a)
    monkeypatch.setattr(norm, "_bn_batch_fwd", counted)
    split = run(norm.SPLIT_MIN)
    from aiond.engine import get
    assert sum(ranges) == 37 and len(ranges) == min(get().cpu.nworkers, 37), ranges
    whole = run(1 << 60)
    for i, (s, w) in enumerate(zip(split, whole)):
        np.testing.assert_allclose(s, w, rtol=1e-5, atol=1e-5, err_msg="output %d" % i)
    x3 = x.reshape(2, 37, -1).astype("f8")
    mean = x3.mean(axis=(0, 2))
    var = x3.var(axis=(0, 2))
    g = np.ones(37) if fix_gamma else gamma.astype("f8")
    want_y = (x3 - mean[:, None]) / np.sqrt(var[:, None] + 1e-5) * g[:, None] + beta[:, None]
    np.testing.assert_allclose(split[0].reshape(2, 37, -1), want_y, rtol=1e-4, atol=1e-4)
    h3 = head.reshape(2, 37, -1).astype("f8")
    xh = (x3 - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)
    want_dx = (g / np.sqrt(var + 1e-5))[:, None] * (
        h3 - h3.mean(axis=(0, 2))[:, None] - xh * (h3 * xh).mean(axis=(0, 2))[:, None])
    np.testing.assert_allclose(split[1].reshape(2, 37, -1), want_dx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(split[3], h3.sum(axis=(0, 2)), rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(split[4], 0.2 * mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(split[5], 0.8 + 0.2 * var, rtol=1e-4, atol=1e-6)
