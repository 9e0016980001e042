"""MXNet 1.9.1's bounding-box contrib ops (box_nms, box_iou,
bipartite_matching, box_encode, box_decode) and arange_like against plain
numpy references (greedy NMS written from the operator's documentation and
MXNet's kernels in src/operator/contrib/bounding_box*), through mx.nd.contrib,
mx.sym.contrib and autograd."""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError, OpError

nd = mx.nd
RNG = np.random.RandomState(11)


def ref_iou(a, b, center=False):
    if center:
        a = np.array([a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2])
        b = np.array([b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2])
    iw = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
    ih = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    inter = iw * ih
    if inter <= 0:
        return 0.0

    def area(x):
        w, h = x[2] - x[0], x[3] - x[1]
        return 0.0 if w < 0 or h < 0 else w * h
    return inter / (area(a) + area(b) - inter)


def ref_nms(data, overlap_thresh=0.5, valid_thresh=0.0, topk=-1, coord_start=2, score_index=1,
            id_index=-1, background_id=-1, force_suppress=False, in_format="corner",
            out_format="corner"):
    """Greedy NMS per batch, as box_nms documents it."""
    shape = data.shape
    W, N = shape[-1], shape[-2]
    d = data.reshape(-1, N, W)
    out = np.full(d.shape, -1.0, dtype=data.dtype)
    rec = np.full(d.shape[:2], -1.0)
    for b in range(d.shape[0]):
        cand = [i for i in range(N) if d[b, i, score_index] > valid_thresh
                and (id_index < 0 or d[b, i, id_index] != background_id)]
        cand.sort(key=lambda i: -d[b, i, score_index])        # stable: ties keep order
        if topk > 0:
            cand = cand[:topk]
        kept = []
        for i in cand:
            ok = True
            for j in kept:
                if id_index >= 0 and not force_suppress and \
                        int(d[b, i, id_index]) != int(d[b, j, id_index]):
                    continue
                if ref_iou(d[b, j, coord_start:coord_start + 4], d[b, i, coord_start:coord_start + 4],
                           in_format == "center") > overlap_thresh:
                    ok = False
                    break
            if ok:
                kept.append(i)
        for k, i in enumerate(kept):
            out[b, k] = d[b, i]
            rec[b, k] = b * N + i
            if in_format != out_format:
                c = out[b, k, coord_start:coord_start + 4].copy()
                if out_format == "center":
                    out[b, k, coord_start:coord_start + 4] = [(c[0] + c[2]) / 2, (c[1] + c[3]) / 2,
                                                              c[2] - c[0], c[3] - c[1]]
                else:
                    out[b, k, coord_start:coord_start + 4] = [c[0] - c[2] / 2, c[1] - c[3] / 2,
                                                              c[0] + c[2] / 2, c[1] + c[3] / 2]
    return out.reshape(shape), rec


def random_dets(B=2, N=30, W=6, classes=3):
    d = np.zeros((B, N, W), dtype=np.float32)
    d[..., 0] = RNG.randint(0, classes, size=(B, N))
    d[..., 1] = RNG.rand(B, N)
    xy = RNG.rand(B, N, 2) * 10
    wh = RNG.rand(B, N, 2) * 5 + 0.5
    d[..., 2:4] = xy
    d[..., 4:6] = xy + wh
    return d


def test_box_nms_documented_example():
    x = nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                  [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]])
    out = nd.contrib.box_nms(x, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,
                             force_suppress=True, in_format="corner", out_format="center")
    np.testing.assert_allclose(out.asnumpy(), [[2, 0.6, 0.6, 0.65, 0.2, 0.3],
                                               [0, 0.5, 0.15, 0.15, 0.1, 0.1],
                                               [-1, -1, -1, -1, -1, -1],
                                               [-1, -1, -1, -1, -1, -1]], rtol=1e-6)
    out = nd.contrib.box_nms(x, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,
                             force_suppress=False, in_format="corner", out_format="corner")
    np.testing.assert_allclose(out.asnumpy(), [[2, 0.6, 0.5, 0.5, 0.7, 0.8],
                                               [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                                               [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                                               [-1, -1, -1, -1, -1, -1]], rtol=1e-6)


@pytest.mark.parametrize("kw", [
    {}, {"id_index": 0}, {"id_index": 0, "force_suppress": True},
    {"topk": 7, "valid_thresh": 0.2}, {"id_index": 0, "background_id": 1},
    {"overlap_thresh": 0.2, "out_format": "center"}, {"overlap_thresh": 0.0}, {"topk": 0},
])
def test_box_nms_matches_reference(kw):
    d = random_dets()
    if kw.get("topk") == 0:
        np.testing.assert_array_equal(nd.contrib.box_nms(nd.array(d), topk=0).asnumpy(), d)
        return
    want, rec = ref_nms(d, **kw)
    got = nd.contrib.box_nms(nd.array(d), **kw)
    assert got.shape == d.shape
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)
    # the alias
    got2 = nd.contrib.box_non_maximum_suppression(nd.array(d), **kw)
    np.testing.assert_array_equal(got2.asnumpy(), got.asnumpy())


def test_box_nms_center_input_and_layouts():
    d = random_dets(B=1, N=12)
    c = d.copy()
    c[..., 2:4] = (d[..., 2:4] + d[..., 4:6]) / 2
    c[..., 4:6] = d[..., 4:6] - d[..., 2:4]
    want, _ = ref_nms(c, in_format="center", out_format="corner", overlap_thresh=0.3)
    got = nd.contrib.box_nms(nd.array(c), in_format="center", out_format="corner",
                             overlap_thresh=0.3)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)
    # other layouts: score first, coordinates at 1, 2-d and 4-d input
    e = np.concatenate([d[..., 1:2], d[..., 2:6]], axis=-1)[0]
    want, _ = ref_nms(e, coord_start=1, score_index=0)
    np.testing.assert_allclose(nd.contrib.box_nms(nd.array(e), coord_start=1, score_index=0)
                               .asnumpy(), want, rtol=1e-6)
    f = random_dets(B=6, N=5).reshape(2, 3, 5, 6)
    want, _ = ref_nms(f, id_index=0)
    np.testing.assert_allclose(nd.contrib.box_nms(nd.array(f), id_index=0).asnumpy(), want)


def test_box_nms_gradient_goes_back_to_the_kept_rows():
    d = random_dets(B=2, N=8)
    _, rec = ref_nms(d, overlap_thresh=0.3)
    x = nd.array(d)
    x.attach_grad()
    g = RNG.rand(*d.shape).astype(np.float32)
    with mx.autograd.record():
        y = nd.contrib.box_nms(x, overlap_thresh=0.3)
    y.backward(nd.array(g))
    want = np.zeros_like(d).reshape(-1, 6)
    for i, r in enumerate(rec.reshape(-1)):
        if r >= 0:
            want[int(r)] = g.reshape(-1, 6)[i]
    np.testing.assert_array_equal(x.grad.asnumpy(), want.reshape(d.shape))


def test_box_nms_shape_checks_and_symbol():
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.box_nms(nd.zeros((3, 4)))                     # width < 5
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.box_nms(nd.zeros((3, 6)), score_index=3)      # inside the coordinates
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.box_nms(nd.zeros((3, 5)), id_index=0)         # needs 6 with ids
    s = mx.sym.contrib.box_nms(mx.sym.var("data"), id_index=0)
    assert s.list_outputs() == ["box_nms0_output"]
    assert s.infer_shape(data=(2, 10, 6))[1] == [(2, 10, 6)]
    d = random_dets(B=1, N=9)
    ex = s.bind(mx.cpu(), {"data": nd.array(d)})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), ref_nms(d, id_index=0)[0], rtol=1e-6)


@pytest.mark.parametrize("fmt", ["corner", "center"])
def test_box_iou(fmt):
    a = RNG.rand(2, 3, 4).astype(np.float32) * 5
    b = RNG.rand(5, 4).astype(np.float32) * 5
    if fmt == "corner":
        a[..., 2:] += a[..., :2]
        b[..., 2:] += b[..., :2]
    got = nd.contrib.box_iou(nd.array(a), nd.array(b), format=fmt)
    assert got.shape == (2, 3, 5)
    want = np.array([[ref_iou(x, y, fmt == "center") for y in b] for x in a.reshape(-1, 4)])
    np.testing.assert_allclose(got.asnumpy().reshape(6, 5), want, rtol=1e-5, atol=1e-6)
    x = nd.array(a)
    x.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.box_iou(x, nd.array(b), format=fmt)
    y.backward()
    assert not x.grad.asnumpy().any()
    with pytest.raises((OpError, MXNetError)):
        nd.contrib.box_iou(nd.zeros((3, 5)), nd.zeros((2, 4)))


def test_bipartite_matching():
    x = nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]])
    r, c = nd.contrib.bipartite_matching(x, threshold=1e-12, is_ascend=False)
    assert r.asnumpy().tolist() == [1, -1, 0] and c.asnumpy().tolist() == [2, 0]
    # ascending: smallest first (0.1 matches; 0.2 and 0.3 are taken rows/cols),
    # and the pass stops at the first free pair over the threshold (0.4)
    r, c = nd.contrib.bipartite_matching(x, threshold=0.35, is_ascend=True)
    assert r.asnumpy().tolist() == [-1, 0, -1] and c.asnumpy().tolist() == [1, -1]
    # topk: MXNet's check is count > topk, so topk=1 keeps two matches
    r, c = nd.contrib.bipartite_matching(x, threshold=1e-12, topk=1)
    assert r.asnumpy().tolist() == [1, -1, 0]
    # batched, and the threshold stops the greedy pass
    s = np.stack([x.asnumpy(), x.asnumpy()[::-1]])
    r, c = nd.contrib.bipartite_matching(nd.array(s), threshold=0.45)
    assert r.shape == (2, 3) and c.shape == (2, 2)
    assert r.asnumpy().tolist() == [[1, -1, -1], [-1, -1, 1]]
    assert c.asnumpy().tolist() == [[-1, 0], [-1, 2]]


def test_box_encode_decode():
    B, N, M = 2, 6, 3
    anchors = RNG.rand(B, N, 4).astype(np.float32) * 4
    anchors[..., 2:] += anchors[..., :2] + 0.5
    refs = RNG.rand(B, M, 4).astype(np.float32) * 4
    refs[..., 2:] += refs[..., :2] + 0.5
    samples = RNG.choice([-1.0, 0.0, 1.0], size=(B, N)).astype(np.float32)
    matches = RNG.randint(0, M, size=(B, N)).astype(np.float32)
    means = np.array([0.1, 0.2, 0.0, -0.1], dtype=np.float32)
    stds = np.array([0.1, 0.1, 0.2, 0.2], dtype=np.float32)
    t, m = nd.contrib.box_encode(nd.array(samples), nd.array(matches), nd.array(anchors),
                                 nd.array(refs), nd.array(means), nd.array(stds))
    want = np.zeros((B, N, 4), np.float32)
    for b in range(B):
        for n in range(N):
            if samples[b, n] <= 0.5:
                continue
            r, a = refs[b, int(matches[b, n])], anchors[b, n]
            rw, rh, aw, ah = r[2] - r[0], r[3] - r[1], a[2] - a[0], a[3] - a[1]
            want[b, n] = [((r[0] + rw / 2 - a[0] - aw / 2) / aw - means[0]) / stds[0],
                          ((r[1] + rh / 2 - a[1] - ah / 2) / ah - means[1]) / stds[1],
                          (np.log(rw / aw) - means[2]) / stds[2],
                          (np.log(rh / ah) - means[3]) / stds[3]]
    np.testing.assert_allclose(t.asnumpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m.asnumpy(), np.repeat((samples > 0.5)[..., None], 4, -1))
    # decode (corner anchors) inverts encode for the positives (means 0)
    t2, _ = nd.contrib.box_encode(nd.array(samples), nd.array(matches), nd.array(anchors),
                                  nd.array(refs), nd.zeros(4), nd.array(stds))
    dec = nd.contrib.box_decode(t2[:1], nd.array(anchors[:1]), std0=0.1, std1=0.1, std2=0.2,
                                std3=0.2, format="corner").asnumpy()
    pos = samples[0] > 0.5
    np.testing.assert_allclose(dec[0][pos], refs[0][matches[0].astype(int)][pos], rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("fmt,clip", [("center", -1.0), ("corner", -1.0), ("center", 0.5)])
def test_box_decode(fmt, clip):
    x = RNG.randn(2, 5, 4).astype(np.float32)
    a = RNG.rand(1, 5, 4).astype(np.float32) * 3 + 1
    got = nd.contrib.box_decode(nd.array(x), nd.array(a), std0=0.1, std1=0.2, std2=0.3,
                                std3=0.4, clip=clip, format=fmt).asnumpy()
    ax, ay, aw, ah = a[0, :, 0], a[0, :, 1], a[0, :, 2], a[0, :, 3]
    if fmt == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw / 2, ay + ah / 2
    dw, dh = x[..., 2] * 0.3, x[..., 3] * 0.4
    if clip > 0:
        dw, dh = np.minimum(dw, clip), np.minimum(dh, clip)
    ox, oy = x[..., 0] * 0.1 * aw + ax, x[..., 1] * 0.2 * ah + ay
    ow, oh = np.exp(dw) * aw / 2, np.exp(dh) * ah / 2
    np.testing.assert_allclose(got, np.stack([ox - ow, oy - oh, ox + ow, oy + oh], -1),
                               rtol=1e-5, atol=1e-5)


def test_arange_like():
    x = nd.zeros((2, 3))
    np.testing.assert_array_equal(nd.contrib.arange_like(x).asnumpy(),
                                  np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(nd.contrib.arange_like(x, start=1, step=2, repeat=2,
                                                         axis=1).asnumpy(), [1, 1, 3])
    assert nd.contrib.arange_like(x.astype("int32"), axis=-2).dtype == np.int32
    s = mx.sym.contrib.arange_like(mx.sym.var("d"), axis=0)
    assert s.infer_shape(d=(4, 5))[1] == [(4,)]
