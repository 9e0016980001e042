"""Calls of the issue-31 contrib operators, written against an ``mx`` module
so the same code runs on aiond and on MXNet 1.9.1. ``contrib31_mxnet191.npz``
holds what MXNet 1.9.1 returned (regenerate with MXNet's interpreter:
``python tests/ops/contrib31_cases.py tests/ops/contrib31_mxnet191.npz``).

MXNet's CPU build has no backward for ModulatedDeformableConvolution ("only
implemented in GPU"), so its cases are forward only; the test checks those
gradients numerically."""
import sys

import numpy as np


def _record(mx, res, name, f, inputs, kw, grad=True):
    arrs = [mx.nd.array(a) for a in inputs]
    if not grad:
        y = f(*arrs, **kw)
        res[name] = (y[0] if isinstance(y, (list, tuple)) else y).asnumpy()
        return
    for a in arrs:
        a.attach_grad()
    with mx.autograd.record():
        y = f(*arrs, **kw)
        if isinstance(y, (list, tuple)):
            y = y[0]
        w = mx.nd.array(np.linspace(-1, 1, y.size).reshape(y.shape))
        loss = (y * w).sum()
    loss.backward()
    res[name] = y.asnumpy()
    for i, a in enumerate(arrs):
        res["%s_g%d" % (name, i)] = a.grad.asnumpy()


def multibox(mx):
    rng = np.random.RandomState(0)
    res = {}
    x = mx.nd.zeros((2, 3, 4, 5))
    res["prior"] = mx.nd.contrib.MultiBoxPrior(x, sizes=(0.5, 0.25, 0.1), ratios=(1, 2, 0.5),
                                               clip=True).asnumpy()
    res["prior2"] = mx.nd.contrib.MultiBoxPrior(x, sizes=(0.3,), ratios=(1, 3), steps=(0.2, 0.25),
                                                offsets=(0.2, 0.7)).asnumpy()
    anchors = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 3, 4, 4)), sizes=(0.4, 0.2),
                                          ratios=(1, 2))
    A = anchors.shape[1]
    label = np.full((2, 4, 5), -1.0, np.float32)
    label[0, :2] = [[0, 0.1, 0.1, 0.5, 0.6], [2, 0.5, 0.4, 0.9, 0.95]]
    label[1, :3] = [[1, 0.0, 0.0, 0.3, 0.3], [1, 0.6, 0.6, 1.0, 1.0], [0, 0.2, 0.5, 0.6, 0.9]]
    cls_pred = rng.randn(2, 4, A).astype(np.float32)
    for name, kw in [("t1", {}), ("t2", dict(negative_mining_ratio=3, negative_mining_thresh=0.4)),
                     ("t3", dict(overlap_threshold=0.3, ignore_label=-2,
                                 variances=(0.2, 0.2, 0.1, 0.1)))]:
        o = mx.nd.contrib.MultiBoxTarget(anchors, mx.nd.array(label), mx.nd.array(cls_pred), **kw)
        for i, a in enumerate(o):
            res["%s_%d" % (name, i)] = a.asnumpy()
    cls_prob = mx.nd.softmax(mx.nd.array(rng.randn(2, 4, A).astype(np.float32) * 3), axis=1)
    loc = mx.nd.array(rng.randn(2, A * 4).astype(np.float32) * 0.5)
    for name, kw in [("d1", {}), ("d2", dict(force_suppress=True, nms_threshold=0.3, threshold=0.2)),
                     ("d3", dict(clip=False, nms_topk=5)), ("d4", dict(nms_threshold=0))]:
        res[name] = mx.nd.contrib.MultiBoxDetection(cls_prob, loc, anchors, **kw).asnumpy()
    # BatchNormWithReLU: outputs, gradients, moving statistics
    xx = mx.nd.array(rng.randn(2, 3, 4, 4).astype(np.float32))
    g, b = mx.nd.array(rng.rand(3) + 0.5), mx.nd.array(rng.randn(3))
    mm, mv = mx.nd.zeros(3), mx.nd.ones(3)
    for v in (xx, g, b):
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.BatchNormWithReLU(xx, g, b, mm, mv, fix_gamma=False)
        loss = (y * mx.nd.arange(96).reshape((2, 3, 4, 4))).sum()
    loss.backward()
    res["bnr_y"], res["bnr_dx"] = y.asnumpy(), xx.grad.asnumpy()
    res["bnr_dg"], res["bnr_db"] = g.grad.asnumpy(), b.grad.asnumpy()
    res["bnr_mm"], res["bnr_mv"] = mm.asnumpy(), mv.asnumpy()
    res["bnr_pred"] = mx.nd.contrib.BatchNormWithReLU(xx, g, b, mm, mv, fix_gamma=False).asnumpy()
    z = mx.nd.array(rng.randn(3, 4))
    z.attach_grad()
    with mx.autograd.record():
        w = mx.nd.contrib.gradientmultiplier(z, scalar=-2.5)
        loss = (w * w).sum()
    loss.backward()
    res["gm"] = z.grad.asnumpy()
    res["bgm"] = mx.nd.contrib.backward_gradientmultiplier(z, scalar=0.5).asnumpy()
    return res


def modulated_inputs():
    rng = np.random.RandomState(3)
    N, C, H, W = 2, 4, 5, 6
    x = rng.randn(N, C, H, W)
    cases = {}
    for name, kw, dg in [("m1", dict(kernel=(3, 3), num_filter=3, pad=(1, 1)), 1),
                         ("m2", dict(kernel=(3, 3), num_filter=4, stride=(2, 2), num_group=2,
                                     num_deformable_group=2, dilate=(1, 2)), 2),
                         ("m3", dict(kernel=(2, 2), num_filter=2, no_bias=True), 1)]:
        k, s = kw["kernel"], kw.get("stride", (1, 1))
        p, d = kw.get("pad", (0, 0)), kw.get("dilate", (1, 1))
        ho = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        wo = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        off = rng.randn(N, dg * 2 * k[0] * k[1], ho, wo) * 1.5
        mask = rng.rand(N, dg * k[0] * k[1], ho, wo)
        wt = rng.randn(kw["num_filter"], C // kw.get("num_group", 1), *k)
        ins = [x, off, mask, wt] + ([] if kw.get("no_bias") else [rng.randn(kw["num_filter"])])
        cases[name] = (ins, kw)
    return cases


def deformable(mx):
    res = {}
    for name, (ins, kw) in modulated_inputs().items():
        _record(mx, res, name, mx.nd.contrib.ModulatedDeformableConvolution, ins, kw, grad=False)
    rng = np.random.RandomState(4)
    D, G, P = 2, 3, 3
    data = rng.randn(2, D * G * G, 8, 9)
    rois = np.array([[0, 1, 2, 20, 25], [1, 0, 0, 31, 31], [0, 10.4, 3.6, 12, 30],
                     [1, -8, -4, 40, 50]])
    _record(mx, res, "p1", mx.nd.contrib.DeformablePSROIPooling, [data, rois, rng.randn(4, 2, 3, 3)],
            dict(spatial_scale=0.25, output_dim=D, group_size=G, pooled_size=P, sample_per_part=2,
                 trans_std=0.3))
    _record(mx, res, "p2", mx.nd.contrib.DeformablePSROIPooling, [data, rois],
            dict(spatial_scale=0.25, output_dim=D, group_size=G, pooled_size=P, sample_per_part=3,
                 no_trans=True))
    _record(mx, res, "p3", mx.nd.contrib.DeformablePSROIPooling, [data, rois, rng.randn(4, 4, 2, 2)],
            dict(spatial_scale=0.3, output_dim=D, group_size=G, pooled_size=P, part_size=2,
                 sample_per_part=2, trans_std=0.2))
    return res


def cases(mx):
    res = multibox(mx)
    res.update(deformable(mx))
    return res


if __name__ == "__main__":
    import mxnet
    np.savez_compressed(sys.argv[1], **cases(mxnet))
