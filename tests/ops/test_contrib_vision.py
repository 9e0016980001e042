"""MXNet 1.9.1's contrib vision ops against numpy references written as
direct loops over MXNet's CPU kernels (src/operator/contrib/
bilinear_resize.cc, adaptive_avg_pooling.cc, roi_align.cc,
sync_batch_norm-inl.h, tensor/amp_cast.h): BilinearResize2D,
AdaptiveAvgPooling2D, ROIAlign, SyncBatchNorm, amp_cast/amp_multicast,
through mx.nd.contrib, mx.sym.contrib and autograd."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.base import OpError

nd = mx.nd
RNG = np.random.RandomState(7)


# ----------------------------------------------------------------- references


def ref_bilinear(x, oh, ow, align_corners=True):
    """MXNet's SpatialUpSamplingBilinearUpdateOutput, one output pixel at a time."""
    N, C, H, W = x.shape
    out = np.zeros((N, C, oh, ow), dtype=np.float64)
    f32 = np.float32

    def scale(i, o):
        if o > 1:
            return f32(i - 1) / f32(o - 1) if align_corners else f32(i) / f32(o)
        return f32(0)

    def src(s, d):
        if align_corners:
            return f32(s * f32(d))
        r = f32(s * f32(d + 0.5) - f32(0.5))
        return f32(0) if r < 0 else r
    if (H, W) == (oh, ow):
        return x.astype(np.float64)
    rh, rw = scale(H, oh), scale(W, ow)
    for h2 in range(oh):
        h1r = src(rh, h2)
        h1 = int(h1r)
        h1p = 1 if h1 < H - 1 else 0
        hl = float(f32(h1r - h1))
        for w2 in range(ow):
            w1r = src(rw, w2)
            w1 = int(w1r)
            w1p = 1 if w1 < W - 1 else 0
            wl = float(f32(w1r - w1))
            out[:, :, h2, w2] = ((1 - hl) * ((1 - wl) * x[:, :, h1, w1] + wl * x[:, :, h1, w1 + w1p])
                                 + hl * ((1 - wl) * x[:, :, h1 + h1p, w1]
                                         + wl * x[:, :, h1 + h1p, w1 + w1p]))
    return out


def ref_adaptive(x, oh, ow):
    N, C, H, W = x.shape
    out = np.zeros((N, C, oh, ow))
    for i in range(oh):
        hs, he = int(math.floor(i * H / oh)), int(math.ceil((i + 1) * H / oh))
        for j in range(ow):
            ws, we = int(math.floor(j * W / ow)), int(math.ceil((j + 1) * W / ow))
            out[:, :, i, j] = x[:, :, hs:he, ws:we].mean(axis=(2, 3))
    return out


def ref_roi_align(x, rois, ph, pw, scale, ratio=-1, ps=False, aligned=False):
    """MXNet's ROIAlignForward: every sample point, bilinear, averaged."""
    N, C, H, W = x.shape
    co = C // (ph * pw) if ps else C
    out = np.zeros((rois.shape[0], co, ph, pw))
    f32 = np.float32

    def bil(img, y, xx):
        if y < -1.0 or y > H or xx < -1.0 or xx > W:
            return 0.0
        y, xx = max(y, f32(0)), max(xx, f32(0))
        yl, xl = int(y), int(xx)
        if yl >= H - 1:
            yh = yl = H - 1
            y = f32(yl)
        else:
            yh = yl + 1
        if xl >= W - 1:
            xh = xl = W - 1
            xx = f32(xl)
        else:
            xh = xl + 1
        ly, lx = float(y - yl), float(xx - xl)
        hy, hx = 1 - ly, 1 - lx
        return (hy * hx * img[yl, xl] + hy * lx * img[yl, xh] + ly * hx * img[yh, xl]
                + ly * lx * img[yh, xh])
    for n, r in enumerate(rois):
        b = int(r[0])
        if b < 0:
            continue
        off = f32(0.5) if aligned else f32(0)
        sw, sh = f32(r[1]) * f32(scale) - off, f32(r[2]) * f32(scale) - off
        ew, eh = f32(r[3]) * f32(scale) - off, f32(r[4]) * f32(scale) - off
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, f32(1)), max(rh, f32(1))
        bh, bw = f32(rh / ph), f32(rw / pw)
        gh = ratio if ratio > 0 else int(math.ceil(rh / ph))
        gw = ratio if ratio > 0 else int(math.ceil(rw / pw))
        for c in range(co):
            for i in range(ph):
                for j in range(pw):
                    cu = c * ph * pw + i * pw + j if ps else c
                    acc = 0.0
                    for iy in range(gh):
                        y = f32(sh + f32(i) * bh + f32(iy + 0.5) * bh / f32(gh))
                        for ix in range(gw):
                            xx = f32(sw + f32(j) * bw + f32(ix + 0.5) * bw / f32(gw))
                            acc += bil(x[b, cu], y, xx)
                    out[n, c, i, j] = acc / (gh * gw)
    return out


def numeric_grad(f, x, eps=1e-3):
    """Central differences of sum(f(x) * w) for a fixed random w (float64)."""
    y0 = f(x)
    w = np.random.RandomState(3).rand(*y0.shape)
    g = np.zeros_like(x, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp_, xm = x.copy(), x.copy()
        xp_[i] += eps
        xm[i] -= eps
        g[i] = ((f(xp_) * w).sum() - (f(xm) * w).sum()) / (2 * eps)
    return w, g


def autograd_grad(fn, x, w, argnum=0, others=()):
    a = nd.array(x, dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        y = fn(a, *others)
    y.backward(nd.array(w, dtype="float64"))
    return a.grad.asnumpy()


# ----------------------------------------------------------- BilinearResize2D


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("hw,ohw", [((5, 7), (9, 4)), ((4, 4), (8, 8)), ((6, 3), (1, 1)),
                                    ((3, 5), (3, 5)), ((7, 2), (3, 9))])
def test_bilinear_resize_matches_reference(align, hw, ohw):
    x = RNG.rand(2, 3, *hw).astype(np.float32)
    y = nd.contrib.BilinearResize2D(nd.array(x), height=ohw[0], width=ohw[1],
                                    align_corners=align)
    assert y.shape == (2, 3) + ohw and y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), ref_bilinear(x, *ohw, align), rtol=1e-5, atol=1e-6)


def test_bilinear_resize_modes():
    x = nd.array(RNG.rand(1, 2, 5, 6))
    like = nd.zeros((3, 1, 7, 4))
    assert nd.contrib.BilinearResize2D(x, like, mode="like").shape == (1, 2, 7, 4)
    assert nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=0.5).shape == (1, 2, 10, 3)
    # odd sizes: (n - 1) * scale + 1; even: n * scale
    assert nd.contrib.BilinearResize2D(x, scale_height=2.0, scale_width=2.0,
                                       mode="odd_scale").shape == (1, 2, 9, 12)
    assert nd.contrib.BilinearResize2D(x, mode="to_even_down").shape == (1, 2, 4, 6)
    assert nd.contrib.BilinearResize2D(x, mode="to_even_up").shape == (1, 2, 6, 6)
    assert nd.contrib.BilinearResize2D(x, mode="to_odd_down").shape == (1, 2, 5, 5)
    assert nd.contrib.BilinearResize2D(x, mode="to_odd_up").shape == (1, 2, 5, 7)
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.BilinearResize2D(nd.zeros((2, 3, 4)), height=2, width=2)
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.BilinearResize2D(x, mode="nope")


@pytest.mark.parametrize("align", [True, False])
def test_bilinear_resize_gradient(align):
    x = RNG.rand(1, 2, 3, 4)
    f = lambda a: ref_bilinear(a, 5, 3, align)  # noqa: E731
    w, g = numeric_grad(f, x)
    got = autograd_grad(lambda a: nd.contrib.BilinearResize2D(a, height=5, width=3,
                                                              align_corners=align), x, w)
    np.testing.assert_allclose(got, g, rtol=1e-5, atol=1e-7)


def test_bilinear_resize_symbol_like_is_not_an_argument():
    data = mx.sym.var("data")
    y = mx.sym.contrib.BilinearResize2D(data, height=6, width=8)
    assert y.list_arguments() == ["data"]
    _, outs, _ = y.infer_shape(data=(2, 3, 4, 4))
    assert outs == [(2, 3, 6, 8)]
    like = mx.sym.contrib.BilinearResize2D(data, mx.sym.var("ref"), mode="like")
    assert like.list_arguments() == ["data", "ref"]
    ex = y.bind(mx.cpu(), {"data": nd.array(RNG.rand(2, 3, 4, 4))})
    out = ex.forward()[0].asnumpy()
    np.testing.assert_allclose(out, ref_bilinear(ex.arg_dict["data"].asnumpy(), 6, 8),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------------- AdaptiveAvgPooling2D


@pytest.mark.parametrize("hw,osz", [((7, 5), (3, 2)), ((6, 6), 1), ((4, 9), (4, 9)),
                                    ((5, 5), (7, 3)), ((8, 8), ())])
def test_adaptive_avg_pooling(hw, osz):
    x = RNG.rand(2, 3, *hw).astype(np.float32)
    y = nd.contrib.AdaptiveAvgPooling2D(nd.array(x), output_size=osz)
    o = (1, 1) if osz == () else ((osz, osz) if isinstance(osz, int) else osz)
    assert y.shape == (2, 3) + tuple(o)
    np.testing.assert_allclose(y.asnumpy(), ref_adaptive(x, *o), rtol=1e-5, atol=1e-6)


def test_adaptive_avg_pooling_gradient_and_symbol():
    x = RNG.rand(1, 2, 5, 4)
    w, g = numeric_grad(lambda a: ref_adaptive(a, 3, 3), x)
    got = autograd_grad(lambda a: nd.contrib.AdaptiveAvgPooling2D(a, output_size=(3, 3)), x, w)
    np.testing.assert_allclose(got, g, rtol=1e-5, atol=1e-7)
    s = mx.sym.contrib.AdaptiveAvgPooling2D(mx.sym.var("data"), output_size=2)
    assert s.infer_shape(data=(1, 4, 9, 9))[1] == [(1, 4, 2, 2)]


# ------------------------------------------------------------------- ROIAlign


def _rois():
    return np.array([[0, 1.0, 1.5, 9.0, 7.0], [1, 0.0, 0.0, 3.0, 3.0],
                     [0, 4.2, 2.1, 15.5, 14.9], [1, -3.0, -2.0, 5.0, 4.0],
                     [-1, 1, 1, 5, 5]], dtype=np.float32)


@pytest.mark.parametrize("ratio,aligned", [(-1, False), (2, False), (2, True), (-1, True)])
def test_roi_align_matches_reference(ratio, aligned):
    x = RNG.rand(2, 3, 8, 10).astype(np.float32)
    rois = _rois()
    y = nd.contrib.ROIAlign(nd.array(x), nd.array(rois), pooled_size=(3, 2),
                            spatial_scale=0.5, sample_ratio=ratio, aligned=aligned)
    assert y.shape == (5, 3, 3, 2)
    ref = ref_roi_align(x, rois, 3, 2, 0.5, ratio, aligned=aligned)
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert not y.asnumpy()[4].any()          # negative batch index: zeros


def test_roi_align_position_sensitive():
    x = RNG.rand(1, 8, 6, 6).astype(np.float32)
    rois = np.array([[0, 0.5, 1.0, 5.0, 4.5], [0, 2, 2, 6, 6]], dtype=np.float32)
    y = nd.contrib.ROIAlign(nd.array(x), nd.array(rois), pooled_size=(2, 2), spatial_scale=1.0,
                            sample_ratio=2, position_sensitive=True)
    assert y.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(y.asnumpy(), ref_roi_align(x, rois, 2, 2, 1.0, 2, ps=True),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.ROIAlign(nd.zeros((1, 6, 4, 4)), nd.array(rois), pooled_size=(2, 2),
                            spatial_scale=1.0, position_sensitive=True)


def test_roi_align_gradient():
    x = RNG.rand(2, 2, 5, 6)
    rois = np.array([[0, 0.5, 1.0, 4.0, 3.5], [1, 1.2, 0.3, 5.6, 4.1]])
    f = lambda a: ref_roi_align(a, rois, 2, 2, 1.0, 2)  # noqa: E731
    w, g = numeric_grad(f, x)
    r = nd.array(rois, dtype="float64")
    r.attach_grad()
    a = nd.array(x, dtype="float64")
    a.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.ROIAlign(a, r, pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
    y.backward(nd.array(w, dtype="float64"))
    np.testing.assert_allclose(a.grad.asnumpy(), g, rtol=1e-5, atol=1e-7)
    assert not r.grad.asnumpy().any()


def test_roi_align_shape_errors():
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.ROIAlign(nd.zeros((1, 2, 4, 4)), nd.zeros((3, 4)), pooled_size=(2, 2),
                            spatial_scale=1.0)
    s = mx.sym.contrib.ROIAlign(mx.sym.var("data"), mx.sym.var("rois"), pooled_size=(7, 7),
                                spatial_scale=0.0625)
    assert s.infer_shape(data=(1, 256, 38, 50), rois=(128, 5))[1] == [(128, 256, 7, 7)]


# ------------------------------------------------------------- SyncBatchNorm


def test_sync_batch_norm_is_batch_norm_in_one_process():
    x = RNG.rand(4, 3, 5, 5).astype(np.float32)
    gamma, beta = RNG.rand(3).astype(np.float32), RNG.rand(3).astype(np.float32)
    outs = {}
    for op in ("sync", "bn"):
        mm, mv = nd.zeros(3), nd.ones(3)
        a = nd.array(x)
        a.attach_grad()
        g, b = nd.array(gamma), nd.array(beta)
        g.attach_grad()
        with mx.autograd.record():
            if op == "sync":
                y = nd.contrib.SyncBatchNorm(a, g, b, mm, mv, fix_gamma=False, eps=1e-5,
                                             ndev=1, key="k")
            else:
                y = nd.BatchNorm(a, g, b, mm, mv, fix_gamma=False, eps=1e-5)
        y.backward(nd.array(np.arange(y.size).reshape(y.shape) % 7))
        outs[op] = (y.asnumpy(), a.grad.asnumpy(), g.grad.asnumpy(), mm.asnumpy(), mv.asnumpy())
    for u, v in zip(outs["sync"], outs["bn"]):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    mean = x.mean(axis=(0, 2, 3))
    np.testing.assert_allclose(outs["sync"][3], 0.1 * mean, rtol=1e-5)
    # the visible mean/var outputs: batch mean and variance
    y, m, v = nd.contrib.SyncBatchNorm(nd.array(x), nd.array(gamma), nd.array(beta), nd.zeros(3),
                                       nd.ones(3), output_mean_var=True, key="k2")
    assert y.shape == x.shape and m.shape == (3,) and v.shape == (3,)
    with pytest.raises((OpError, MXNetError), match="key"):     # MXNet: key has no default
        nd.contrib.SyncBatchNorm(nd.array(x), nd.array(gamma), nd.array(beta), nd.zeros(3),
                                 nd.ones(3))


# -------------------------------------------------------------------- amp ops


def test_amp_cast_and_multicast_dtypes():
    a = nd.ones((2,), dtype="float32")
    h = nd.ones((2,), dtype="float16")
    i = nd.ones((2,), dtype="int32")
    d = nd.ones((2,), dtype="float64")
    assert nd.amp_cast(a, dtype="float16").dtype == np.float16
    assert nd.amp_cast(i, dtype="float16").dtype == np.int32
    assert nd.amp_cast(d, dtype="float16").dtype == np.float64
    o = nd.amp_multicast(h, a, i, num_outputs=3)
    assert [x.dtype for x in o] == [np.float32, np.float32, np.int32]
    o = nd.amp_multicast(h, h, num_outputs=2)
    assert [x.dtype for x in o] == [np.float16, np.float16]
    o = nd.amp_multicast(a, h, num_outputs=2, cast_narrow=True)
    assert [x.dtype for x in o] == [np.float16, np.float16]
    x = nd.array([1.5, 2.5], dtype="float16")
    x.attach_grad()
    with mx.autograd.record():
        y = nd.amp_multicast(x, a, num_outputs=2)[0]
    y.backward(nd.array([3.0, 4.0]))
    assert x.grad.dtype == np.float16
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 4.0])
    s = mx.sym.amp_multicast(mx.sym.var("a"), mx.sym.var("b"), num_outputs=2)
    assert len(s.list_outputs()) == 2
    ex = s.bind(mx.cpu(), {"a": nd.ones((2,), dtype="float16"), "b": nd.ones((2,))})
    assert [o.dtype for o in ex.forward()] == [np.float32, np.float32]


def test_like_ops_accept_and_ignore_extra_attributes():
    """MXNet registers zeros_like/ones_like without an attribute parser."""
    x = nd.array([1, 2, 3], dtype="int32")
    z = nd.zeros_like(x, dtype="int64")
    assert z.dtype == np.int32 and z.asnumpy().tolist() == [0, 0, 0]
    assert nd.ones_like(x, dtype="int64").asnumpy().tolist() == [1, 1, 1]
    s = mx.sym.zeros_like(mx.sym.var("a"), dtype="int64")
    assert s.infer_shape(a=(2, 2))[1] == [(2, 2)]


def test_like_ops_have_zero_gradients():
    """MXNet registers zeros_like/ones_like with MakeZeroGradNodes."""
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.zeros_like(x) * 3 + nd.ones_like(x) + x * 2
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]
    with mx.autograd.record():
        y = nd.zeros_like(x) + nd.ones_like(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 0.0]
