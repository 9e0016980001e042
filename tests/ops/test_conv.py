"""Convolution, Deconvolution and Pooling: forward against naive numpy
references (clear loops on tiny shapes), gradients against finite
differences, a few values pasted from MXNet 1.9.1, and argument errors
raised at the call with the op and the argument named."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.test_utils import check_numeric_gradient

nd = mx.nd
RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def close(got, want, rtol=1e-5, atol=1e-5):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

# ------------------------------------------------------------ references


def ref_conv(x, w, b, stride, dilate, pad, groups):
    """Direct definition: out[n, f, o] = sum over (c, k) of
    xpad[n, c, o*stride + k*dilate] * w[f, c, k] (within f's group) + b[f]."""
    nd_ = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    F, Cg = w.shape[:2]
    k = w.shape[2:]
    dk = [(ki - 1) * di + 1 for ki, di in zip(k, dilate)]
    o = [(xp.shape[2 + i] - dk[i]) // stride[i] + 1 for i in range(nd_)]
    out = np.zeros((x.shape[0], F) + tuple(o), dtype=np.float64)
    Fg = F // groups
    for f in range(F):
        c0 = (f // Fg) * Cg
        for pos in np.ndindex(*o):
            win = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dk[i], dilate[i])
                        for i in range(nd_))
            patch = xp[(slice(None), slice(c0, c0 + Cg)) + win]
            out[(slice(None), f) + pos] = np.tensordot(patch, w[f], axes=nd_ + 1)
        if b is not None:
            out[:, f] += b[f]
    return out


def ref_deconv(x, w, b, stride, dilate, pad, adj, groups):
    """Transposed convolution by scattering: every input cell adds
    x * w[c, f, k] at full-output position i*stride + k*dilate; the output is
    the full result shifted by pad, with adj extra cells at the end."""
    nd_ = x.ndim - 2
    N, C = x.shape[:2]
    Fg = w.shape[1]
    k = w.shape[2:]
    L = x.shape[2:]
    dk = [(ki - 1) * di + 1 for ki, di in zip(k, dilate)]
    full = [stride[i] * (L[i] - 1) + dk[i] for i in range(nd_)]
    outL = [full[i] - 2 * pad[i] + adj[i] for i in range(nd_)]
    buf = np.zeros((N, Fg * groups) + tuple(f + a for f, a in zip(full, adj)), np.float64)
    Cg = C // groups
    for c in range(C):
        f0 = (c // Cg) * Fg
        for pos in np.ndindex(*L):
            for kk in np.ndindex(*k):
                tgt = tuple(pos[i] * stride[i] + kk[i] * dilate[i] for i in range(nd_))
                buf[(slice(None), slice(f0, f0 + Fg)) + tgt] += \
                    x[(slice(None), c) + pos][:, None] * w[(c, slice(None)) + kk][None, :]
    out = buf[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(pad, outL))]
    out = out.copy()
    if b is not None:
        out += b.reshape((1, -1) + (1,) * nd_)
    return out


def ref_pool(x, kernel, stride, pad, pool_type, convention="valid", count_include_pad=True,
             p_value=None):
    """Per output cell: the window [o*s - p, o*s - p + k) clipped to the data;
    avg divides by the window clipped to the padded input (MXNet's count)."""
    nd_ = x.ndim - 2
    L = x.shape[2:]
    o = []
    for i in range(nd_):
        n = L[i] + 2 * pad[i] - kernel[i]
        o.append(1 + (-(-n // stride[i]) if convention == "full" else n // stride[i]))
    out = np.zeros(x.shape[:2] + tuple(o))
    for pos in np.ndindex(*o):
        lo = [pos[i] * stride[i] - pad[i] for i in range(nd_)]
        hi = [min(lo[i] + kernel[i], L[i] + pad[i]) for i in range(nd_)]
        count = np.prod([h - l for l, h in zip(lo, hi)])
        clo = [max(v, 0) for v in lo]
        chi = [min(h, Li) for h, Li in zip(hi, L)]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(clo, chi))]
        win = win.reshape(x.shape[:2] + (-1,))
        if not count_include_pad:
            count = win.shape[-1]
        if pool_type == "max":
            v = win.max(-1)
        elif pool_type == "sum":
            v = win.sum(-1)
        elif pool_type == "avg":
            v = win.sum(-1) / count
        else:
            v = np.sum(win ** p_value, -1) ** (1.0 / p_value) if p_value != 3 else \
                np.cbrt(np.sum(win ** 3, -1))
        out[(slice(None), slice(None)) + pos] = v
    return out

# --------------------------------------------------------------- forward


CONV_CASES = [
    # data shape, kernel, num_filter, extra kwargs
    ((2, 3, 7, 6), (3, 3), 4, {}),
    ((2, 3, 7, 7), (3, 3), 4, {"stride": (2, 2), "pad": (1, 1)}),
    ((1, 2, 9, 8), (3, 2), 3, {"dilate": (2, 2), "pad": (2, 1)}),
    ((2, 4, 6, 6), (3, 3), 6, {"num_group": 2, "pad": (1, 1), "stride": (2, 1)}),
    ((2, 4, 5, 5), (3, 3), 4, {"num_group": 4, "pad": (1, 1)}),                # depthwise
    ((2, 3, 5, 5), (1, 1), 2, {}),
    ((2, 3, 5, 5), (1, 1), 2, {"stride": (2, 2)}),
    ((2, 3, 11), (3,), 4, {"stride": (2,), "pad": (1,)}),
    ((2, 2, 10), (2,), 2, {"dilate": (3,)}),
    ((1, 2, 5, 6, 4), (3, 3, 2), 2, {"pad": (1, 0, 1), "stride": (1, 2, 1)}),
    ((2, 3, 5, 5), (3, 3), 2, {"no_bias": True, "pad": (3, 3)}),
    ((2, 2, 6, 6), (2, 2), 3, {"stride": (3, 3), "pad": (1, 1)}),
]


@pytest.mark.parametrize("shape,kernel,nf,kw", CONV_CASES)
def test_convolution_forward(shape, kernel, nf, kw, ctx):
    g = kw.get("num_group", 1)
    x = rand(*shape)
    w = rand(nf, shape[1] // g, *kernel)
    b = None if kw.get("no_bias") else rand(nf)
    nd_ = len(kernel)
    want = ref_conv(x, w, b, kw.get("stride", (1,) * nd_), kw.get("dilate", (1,) * nd_),
                    kw.get("pad", (0,) * nd_), g)
    args = [nd.array(x), nd.array(w)] + ([] if b is None else [nd.array(b)])
    y = nd.Convolution(*args, kernel=kernel, num_filter=nf, **kw)
    close(y, want, 1e-4, 1e-4)


def test_convolution_defaults_signature_and_float64(ctx):
    x, w, b = rand(1, 2, 4, 4, dtype=np.float64), rand(3, 2, 3, 3, dtype=np.float64), rand(3)
    y = nd.Convolution(data=nd.array(x, dtype="float64"), weight=nd.array(w, dtype="float64"),
                       bias=nd.array(b, dtype="float64"), kernel=(3, 3), num_filter=3,
                       workspace=16, cudnn_tune="fastest", cudnn_off=True, layout="NCHW")
    assert y.dtype == np.float64 and y.shape == (1, 3, 2, 2)
    close(y, ref_conv(x, w, b, (1, 1), (1, 1), (0, 0), 1), 1e-12, 1e-12)
    # no_bias: bias left out, or passed as None
    for y in (nd.Convolution(nd.array(x), nd.array(w), kernel=(3, 3), num_filter=3, no_bias=True),
              nd.Convolution(nd.array(x), nd.array(w), None, kernel=(3, 3), num_filter=3,
                             no_bias=True)):
        close(y, ref_conv(x, w, None, (1, 1), (1, 1), (0, 0), 1), 1e-5, 1e-5)


def test_convolution_group_values_from_mxnet(ctx):
    x = nd.array(np.arange(16.).reshape(1, 4, 2, 2))
    w = nd.array(np.cos(np.arange(8.)).reshape(2, 2, 1, 2))
    y = nd.Convolution(x, w, kernel=(1, 2), num_filter=2, num_group=2, no_bias=True,
                       pad=(0, 1), stride=(1, 2))
    close(y, [[[[-3.959969997406006, -1.0807342529296875],
                [-4.859350204467773, 0.08697208762168884]],
               [[11.31612491607666, 6.59942102432251],
                [13.391253471374512, 7.212474346160889]]]], 1e-6, 1e-6)


def test_convolution_workspace_chunks_the_batch():
    # 1 MB of workspace holds the columns of one sample only: same result in chunks
    x, w, b = rand(5, 8, 20, 20), rand(4, 8, 3, 3), rand(4)
    X, W, B = nd.array(x), nd.array(w), nd.array(b)
    for a in (X, W, B):
        a.attach_grad()
    grads = []
    for ws in (1024, 1):
        with mx.autograd.record():
            y = nd.Convolution(X, W, B, kernel=(3, 3), num_filter=4, stride=(2, 2), workspace=ws)
        y.backward(nd.ones(y.shape))
        grads.append([y.asnumpy()] + [a.grad.asnumpy().copy() for a in (X, W, B)])
    for a, b_ in zip(*grads):
        np.testing.assert_allclose(a, b_, rtol=1e-5, atol=1e-5)


DECONV_CASES = [
    # data shape, kernel, num_filter, kwargs (pad/adj after target_shape resolution)
    ((2, 3, 4, 4), (3, 3), 2, {}),
    ((2, 3, 4, 5), (3, 3), 4, {"stride": (2, 2), "pad": (1, 1), "adj": (1, 1), "no_bias": False}),
    ((1, 4, 3, 3), (3, 2), 4, {"num_group": 2, "stride": (2, 1), "pad": (0, 1)}),
    ((2, 2, 5), (3,), 3, {"stride": (3,), "dilate": (2,), "pad": (1,), "adj": (2,)}),
    ((1, 2, 3, 2, 3), (2, 3, 2), 2, {"stride": (2, 1, 2), "no_bias": False}),
    ((1, 2, 6, 6), (3, 3), 2, {"pad": (3, 3)}),
    ((1, 2, 3, 3), (2, 2), 1, {"stride": (2, 2), "adj": (1, 1)}),
]


@pytest.mark.parametrize("shape,kernel,nf,kw", DECONV_CASES)
def test_deconvolution_forward(shape, kernel, nf, kw, ctx):
    g = kw.get("num_group", 1)
    nd_ = len(kernel)
    x, w = rand(*shape), rand(shape[1], nf // g, *kernel)
    b = None if kw.get("no_bias", True) else rand(nf)
    want = ref_deconv(x, w, b, kw.get("stride", (1,) * nd_), kw.get("dilate", (1,) * nd_),
                      kw.get("pad", (0,) * nd_), kw.get("adj", (0,) * nd_), g)
    args = [nd.array(x), nd.array(w)] + ([] if b is None else [nd.array(b)])
    close(nd.Deconvolution(*args, kernel=kernel, num_filter=nf, **kw), want, 1e-4, 1e-4)


def test_deconvolution_values_from_mxnet(ctx):
    # MXNet 1.9.1: no_bias defaults to True; target_shape overrides pad and adj
    x = nd.array(np.arange(8.).reshape(1, 2, 2, 2))
    w = nd.array(np.arange(18.).reshape(2, 1, 3, 3) * 0.1)
    rows = [[5.2, 11.9, 6.9, 7.5], [12.6, 28.2, 16.0, 17.6], [8.6, 18.7, 10.3, 11.3],
            [11.0, 24.1, 13.3, 14.3]]
    y = nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1), num_filter=1)
    close(y, [[rows]], 1e-5, 1e-5)
    y = nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2), pad=(1, 1), target_shape=(3, 4),
                         num_filter=1)
    close(y, [[rows[:3]]], 1e-5, 1e-5)


POOL_CASES = [
    ((2, 3, 6, 6), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 3, 7, 6), dict(kernel=(3, 2), stride=(2, 2), pooling_convention="full")),
    ((2, 3, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ((2, 3, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((2, 3, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((2, 3, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        pooling_convention="full")),
    ((2, 3, 5, 5), dict(kernel=(2, 2), pool_type="sum")),                       # stride 1
    ((2, 3, 6, 6), dict(kernel=(3, 3), pad=(1, 1), pool_type="lp", p_value=2)),
    ((2, 3, 6, 6), dict(kernel=(3, 3), stride=(2, 2), pool_type="lp", p_value=1)),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pad=(1,))),
    ((2, 3, 9), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg",
                     pooling_convention="full")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 2, 3), stride=(2, 1, 2), pad=(1, 0, 1), pool_type="avg")),
    ((1, 2, 4, 5, 6), dict(kernel=(2, 2, 3), stride=(2, 1, 2))),
]


@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_pooling_forward(shape, kw, ctx):
    x = rand(*shape)
    nd_ = len(kw["kernel"])
    want = ref_pool(x, kw["kernel"], kw.get("stride", (1,) * nd_), kw.get("pad", (0,) * nd_),
                    kw.get("pool_type", "max"), kw.get("pooling_convention", "valid"),
                    kw.get("count_include_pad", True), kw.get("p_value"))
    close(nd.Pooling(nd.array(x), **kw), want, 1e-5, 1e-5)


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 2)])
def test_global_pooling_ignores_kernel_stride_pad(pool_type, shape, ctx):
    x = rand(*shape)
    axes = tuple(range(2, len(shape)))
    want = {"max": x.max(axes, keepdims=True), "avg": x.mean(axes, keepdims=True),
            "sum": x.sum(axes, keepdims=True),
            "lp": np.sqrt((x * x).sum(axes, keepdims=True))}[pool_type]
    y = nd.Pooling(nd.array(x), kernel=(2,) * (len(shape) - 2), stride=(2,) * (len(shape) - 2),
                   global_pool=True, pool_type=pool_type, p_value=2)
    close(y, want, 1e-5, 1e-5)


def test_pooling_values_from_mxnet(ctx):
    x = nd.array(np.arange(36.).reshape(1, 1, 6, 6))
    y = nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                   pooling_convention="full")
    close(y, [[[[1.5555556, 3.3333333, 4.666667, 2.6666667],
                [8.333334, 14.0, 15.999999, 8.5],
                [16.333332, 26.0, 28.0, 14.5],
                [10.166666, 16.0, 17.0, 8.75]]]], 1e-6, 1e-5)
    y = nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                   count_include_pad=False)
    close(y, [[[[3.5, 5.0, 7.0], [12.5, 14.0, 16.0], [24.5, 26.0, 28.0]]]])
    y = nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max",
                   pooling_convention="full")
    close(y, [[[[7, 9, 11, 11], [19, 21, 23, 23], [31, 33, 35, 35], [31, 33, 35, 35]]]])
    # stride defaults to 1, pool_type to max
    assert nd.Pooling(x, kernel=(3, 3)).shape == (1, 1, 4, 4)


def test_max_pooling_gradient_goes_to_the_first_maximum(ctx):
    # MXNet: ties send the whole gradient to the first maximum of each window
    x = nd.array(np.array([[[[1, 1, 0, 2], [1, 0, 2, 2]]]], np.float32))
    x.attach_grad()
    with mx.autograd.record():
        y = nd.Pooling(x, kernel=(2, 2), stride=(1, 1))
    y.backward(nd.array([[[[1.0, 10.0, 100.0]]]]))
    close(x.grad, [[[[1, 0, 0, 100], [0, 0, 10, 0]]]])          # MXNet 1.9.1's values
    x = nd.full((1, 1, 2, 4), 3.0)
    x.attach_grad()
    with mx.autograd.record():
        y = nd.Pooling(x, kernel=(2, 2), stride=(1, 1))
    y.backward(nd.array([[[[1.0, 10.0, 100.0]]]]))
    close(x.grad, [[[[1, 10, 100, 0], [0, 0, 0, 0]]]])

# -------------------------------------------------------------- gradients


def _grad_check(fn, arrays, **kw):
    check_numeric_gradient(fn, [a.astype(np.float64) for a in arrays], rtol=1e-4, atol=1e-6,
                           **kw)


GRAD_CONV = [
    ((1, 2, 5, 5), (3, 3), 2, {"pad": (1, 1)}),
    ((1, 2, 6, 5), (3, 2), 2, {"stride": (2, 2), "pad": (1, 0)}),
    ((1, 2, 7, 7), (2, 2), 2, {"dilate": (2, 2)}),
    ((1, 4, 4, 4), (3, 3), 4, {"num_group": 2, "pad": (2, 2), "stride": (2, 1)}),
    ((2, 2, 7), (3,), 2, {"stride": (2,), "pad": (1,)}),
    ((1, 2, 3, 4, 3), (2, 2, 2), 2, {"pad": (1, 0, 1)}),
    ((1, 2, 4, 4), (3, 3), 3, {"no_bias": True}),
    ((1, 2, 4, 4), (2, 2), 2, {"pad": (2, 2)}),         # stride 1, pad > kernel - 1: col2im
]


@pytest.mark.parametrize("shape,kernel,nf,kw", GRAD_CONV)
def test_convolution_gradient(shape, kernel, nf, kw, ctx):
    g = kw.get("num_group", 1)
    arrays = [rand(*shape), rand(nf, shape[1] // g, *kernel)]
    if not kw.get("no_bias"):
        arrays.append(rand(nf))
    _grad_check(lambda *a: nd.Convolution(*a, kernel=kernel, num_filter=nf, **kw), arrays)


GRAD_DECONV = [
    ((1, 2, 3, 3), (3, 3), 2, {"stride": (2, 2), "pad": (1, 1), "adj": (1, 1), "no_bias": False}),
    ((1, 4, 3, 2), (2, 3), 4, {"num_group": 2, "dilate": (1, 2)}),
    ((2, 2, 4), (3,), 2, {"stride": (2,), "target_shape": (8,)}),
    ((1, 2, 2, 2, 2), (2, 2, 2), 2, {"stride": (2, 1, 1), "no_bias": False}),
]


@pytest.mark.parametrize("shape,kernel,nf,kw", GRAD_DECONV)
def test_deconvolution_gradient(shape, kernel, nf, kw, ctx):
    g = kw.get("num_group", 1)
    arrays = [rand(*shape), rand(shape[1], nf // g, *kernel)]
    if not kw.get("no_bias", True):
        arrays.append(rand(nf))
    _grad_check(lambda *a: nd.Deconvolution(*a, kernel=kernel, num_filter=nf, **kw), arrays)


GRAD_POOL = [
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ((1, 2, 5, 6), dict(kernel=(2, 3), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((1, 2, 5, 5), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False, pooling_convention="full")),
    ((1, 2, 4, 4), dict(kernel=(2, 2), pool_type="sum")),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=3)),
    ((2, 2, 7), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="avg")),
    ((1, 1, 3, 4, 3), dict(kernel=(2, 2, 2), stride=(1, 2, 1))),
    ((1, 2, 3, 4), dict(global_pool=True)),
    ((1, 2, 3, 4), dict(global_pool=True, pool_type="avg")),
    ((1, 2, 3, 4), dict(global_pool=True, pool_type="lp", p_value=2)),
]


@pytest.mark.parametrize("shape,kw", GRAD_POOL)
def test_pooling_gradient(shape, kw, ctx):
    # distinct, well-separated values keep max pooling differentiable
    x = (RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.1 + 0.5).astype(np.float64)
    if kw.get("pool_type") == "lp":
        x = np.abs(x) + 0.5
    _grad_check(lambda a: nd.Pooling(a, **kw), [x])

# ----------------------------------------------------------------- errors


def _x(*shape):
    return nd.ones(shape)


@pytest.mark.parametrize("call,match", [
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 2, 2), _x(4), kernel=(3, 3), num_filter=4),
     r"Convolution: weight has shape \(4, 2, 2, 2\) .* needs \(4, 2, 3, 3\)"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 7, 7), _x(4), kernel=(7, 7), num_filter=4),
     r"Convolution: kernel=\(7, 7\) .*padded input is only 5"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=4,
                            dilate=(3, 3)),
     r"Convolution: kernel=\(3, 3\) \(dilate=\(3, 3\)\) spans 7"),
    (lambda: nd.Convolution(_x(2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=4),
     r"Convolution: data must be 4-D \(NCHW\) for kernel=\(3, 3\), got shape \(2, 5, 5\)"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(5), kernel=(3, 3), num_filter=4),
     r"Convolution: bias has shape \(5,\)"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=4,
                            stride=2),
     r"Convolution: stride=\(2,\) must have as many dimensions as kernel=\(3, 3\)"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3, 3, 3),
                            num_filter=4),
     r"Convolution: kernel=\(3, 3, 3, 3\) must have 1, 2 or 3 dimensions"),
    (lambda: nd.Convolution(_x(1, 3, 5, 5), _x(4, 1, 3, 3), _x(4), kernel=(3, 3), num_filter=4,
                            num_group=2),
     r"Convolution: data has 3 channels .* num_group=2"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), kernel=(3, 3), num_filter=4),
     r"Convolution: takes 3 inputs \(data, weight, bias\) unless no_bias=True, got 2"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=4,
                            no_bias=True),
     r"Convolution: no_bias=True takes 2 inputs"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=4,
                            layout="NHWC"),
     r"Convolution: layout='NHWC' is not supported"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), _x(4, 2, 3, 3), _x(4), kernel=(3, 3), num_filter=0),
     r"Convolution: num_filter=0 must be >= 1"),
    (lambda: nd.Convolution(_x(1, 2, 5, 5), nd.ones((4, 2, 3, 3), dtype="float64"), _x(4),
                            kernel=(3, 3), num_filter=4),
     r"Convolution: weight has dtype float64 but data has float32"),
    (lambda: nd.Deconvolution(_x(1, 2, 5, 5), _x(2, 3, 3, 3), kernel=(3, 3), num_filter=3,
                              stride=(2, 2), adj=(2, 2)),
     r"Deconvolution: adj=2 on axis 0 must be smaller than stride=2"),
    (lambda: nd.Deconvolution(_x(1, 2, 5, 5), _x(2, 3, 3, 3), kernel=(3, 3), num_filter=3,
                              stride=(2, 2), target_shape=(12, 12)),
     r"Deconvolution: target_shape=\(12, 12\) is too big"),
    (lambda: nd.Deconvolution(_x(1, 2, 5, 5), _x(3, 2, 3, 3), kernel=(3, 3), num_filter=3),
     r"Deconvolution: weight has shape \(3, 2, 3, 3\) .* needs \(2, 3, 3, 3\)"),
    (lambda: nd.Deconvolution(_x(1, 2, 5, 5), _x(2, 3, 3, 3), _x(3), kernel=(3, 3),
                              num_filter=3),
     r"Deconvolution: no_bias=True takes 2 inputs"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(7, 7)),
     r"Pooling: kernel=\(7, 7\) is larger than the padded input"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5)), r"Pooling: kernel is required unless global_pool"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(2,)),
     r"Pooling: data must be 3-D \(NCW\) for kernel=\(2,\), got shape \(1, 2, 5, 5\)"),
    (lambda: nd.Pooling(_x(2, 5), global_pool=True), r"Pooling: data must be 3-D, 4-D or 5-D"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(2, 2), stride=(2,)),
     r"Pooling: stride=\(2,\) must have as many dimensions as kernel=\(2, 2\)"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(2, 2), pool_type="lp"),
     r"Pooling: pool_type='lp' needs p_value"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(2, 2), pooling_convention="same"),
     r"Pooling: Input data should be 3D"),
    (lambda: nd.Pooling(_x(1, 2, 5), kernel=(2,), pad=(1,), pooling_convention="same"),
     r"Same pooling convention disables the use of pad"),
    (lambda: nd.Pooling(nd.ones((1, 2, 5, 5), dtype="int32"), kernel=(2, 2)),
     r"Pooling: data dtype int32 is not supported"),
    (lambda: nd.Pooling(_x(1, 2, 5, 5), kernel=(2, 2), pool_type="median"),
     r"Pooling: pool_type='median' is not supported"),
])
def test_bad_arguments_raise_at_the_call(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


def test_gradient_ops_run_on_the_engine_and_chain():
    # conv -> pool -> sum, all through autograd, against the composed references
    x, w, b = rand(2, 2, 6, 6), rand(3, 2, 3, 3), rand(3)
    X, W, B = nd.array(x), nd.array(w), nd.array(b)
    for a in (X, W, B):
        a.attach_grad()
    with mx.autograd.record():
        y = nd.Pooling(nd.Convolution(X, W, B, kernel=(3, 3), num_filter=3, pad=(1, 1)),
                       kernel=(2, 2), stride=(2, 2), pool_type="avg")
        loss = nd.sum(y)
    loss.backward()
    # d(sum(avgpool2x2(conv)))/db = conv outputs per filter / 4 (each pooled once)
    close(B.grad, np.full(3, 2 * 36 / 4.0), 1e-5, 1e-5)
    want = ref_pool(ref_conv(x, w, b, (1, 1), (1, 1), (1, 1), 1), (2, 2), (2, 2), (0, 0), "avg")
    close(y, want, 1e-4, 1e-4)


def test_max_pooling_same_convention_1d(ctx):
    # MXNet: ceil(L / stride) outputs, the last window clipped to the input
    x = np.array([[[1., 5., 2., 4., 3.]]], dtype=np.float32)
    y = nd.Pooling(nd.array(x), kernel=(2,), stride=(2,), pool_type="max",
                   pooling_convention="same")
    assert y.asnumpy().tolist() == [[[5., 4., 3.]]]


def test_conv_backward_kernel_as_large_as_input():
    # MXNet's test_conv2d_16c uses a 224x224 kernel on 224x224 data: the data
    # gradient must not build (input x input)-sized columns
    from aiond import autograd
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.randn(2, 3, 40, 40))
    w = mx.nd.array(rng.randn(16, 3, 40, 40))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd.Convolution(x, w, kernel=(40, 40), num_filter=16, no_bias=True)
    dy = rng.randn(2, 16, 1, 1)
    y.backward(mx.nd.array(dy))
    np.testing.assert_allclose(y.asnumpy()[:, :, 0, 0],
                               np.einsum("ncij,fcij->nf", x.asnumpy(), w.asnumpy()), rtol=1e-4,
                               atol=1e-3)
    np.testing.assert_allclose(x.grad.asnumpy(),
                               np.einsum("nf,fcij->ncij", dy[:, :, 0, 0], w.asnumpy()),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.asnumpy(),
                               np.einsum("nf,ncij->fcij", dy[:, :, 0, 0], x.asnumpy()),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("nd_, kw", [
    (1, dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),
    (2, dict(kernel=(2, 3), stride=(2, 1), pad=(1, 1), pool_type="avg")),
    (2, dict(kernel=(3, 3), pool_type="max", pooling_convention="full")),
    (3, dict(kernel=(2, 2, 2), pool_type="sum")),
    (2, dict(global_pool=True, pool_type="max")),
    (1, dict(global_pool=True, pool_type="avg")),
])
def test_pooling_channel_last_layouts(nd_, kw, ctx):
    # MXNet 1.9.1 pools NWC / NHWC / NDHWC data on CPU too (pool.h *_nhwc_cpu kernels)
    from aiond import autograd
    last = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nd_]
    first = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[nd_]
    rng = np.random.RandomState(nd_)
    xf = rng.randn(*((2, 3) + (7, 6, 5)[:nd_])).astype(np.float32)
    xl = np.moveaxis(xf, 1, -1).copy()
    a, b = mx.nd.array(xf), mx.nd.array(xl)
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        yf = mx.nd.Pooling(a, layout=first, **kw)
        yl = mx.nd.Pooling(b, layout=last, **kw)
    g = rng.randn(*yf.shape).astype(np.float32)
    yf.backward(mx.nd.array(g))
    yl.backward(mx.nd.array(np.moveaxis(g, 1, -1).copy()))
    assert yl.shape == tuple(np.moveaxis(np.empty(yf.shape), 1, -1).shape)
    np.testing.assert_allclose(yl.asnumpy(), np.moveaxis(yf.asnumpy(), 1, -1), rtol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), np.moveaxis(a.grad.asnumpy(), 1, -1),
                               rtol=1e-6)
    s = mx.sym.Pooling(mx.sym.var("x"), layout=last, **kw)
    assert s.infer_shape(x=xl.shape)[1] == [yl.shape]
