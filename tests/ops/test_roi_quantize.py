"""ROIAlign / RROIAlign against direct per-sample references; contrib
quantize / dequantize against MXNet's documented values."""
import numpy as np

import aiond as mx
from aiond.test_utils import check_numeric_gradient


def _bilinear(img, y, x):
    H, W = img.shape
    if y < -1 or y > H or x < -1 or x > W:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= H - 1:
        y0 = y1 = H - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= W - 1:
        x0 = x1 = W - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx * img[y0, x1]
            + ly * (1 - lx) * img[y1, x0] + ly * lx * img[y1, x1])


def test_roi_align_matches_reference_and_gradient():
    data = np.random.uniform(size=(2, 2, 8, 8))
    rois = np.array([[0, 1.0, 1.5, 6.0, 5.0], [1, 0.0, 0.0, 3.0, 7.5]])
    out = mx.nd.contrib.ROIAlign(mx.nd.array(data, dtype="float64"),
                                 mx.nd.array(rois, dtype="float64"), pooled_size=(2, 3),
                                 spatial_scale=1.0, sample_ratio=2).asnumpy()
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        bh, bw = max(y2 - y1, 1) / 2, max(x2 - x1, 1) / 3
        for c in range(2):
            for ph in range(2):
                for pw in range(3):
                    vals = [_bilinear(data[int(b), c], y1 + ph * bh + (iy + .5) * bh / 2,
                                      x1 + pw * bw + (ix + .5) * bw / 2)
                            for iy in range(2) for ix in range(2)]
                    np.testing.assert_allclose(out[r, c, ph, pw], np.mean(vals), rtol=1e-6)
    sym = mx.sym.contrib.ROIAlign(mx.sym.Variable("data"), mx.sym.Variable("rois"),
                                  pooled_size=(2, 2), spatial_scale=1.0)
    check_numeric_gradient(sym, [data, rois], grad_nodes={"data": "write", "rois": "null"},
                           numeric_eps=1e-4, rtol=1e-2, atol=1e-4, dtype=np.float64)


def test_rroi_align_zero_angle_is_axis_aligned():
    data = np.random.uniform(size=(1, 1, 10, 10)).astype(np.float32)
    rr = mx.nd.contrib.RROIAlign(mx.nd.array(data), mx.nd.array([[0, 5, 5, 4, 4, 0]]),
                                 pooled_size=(2, 2), spatial_scale=1.0, sampling_ratio=2)
    ra = mx.nd.contrib.ROIAlign(mx.nd.array(data), mx.nd.array([[0, 3, 3, 7, 7]]),
                                pooled_size=(2, 2), spatial_scale=1.0, sample_ratio=2)
    np.testing.assert_allclose(rr.asnumpy(), ra.asnumpy(), rtol=1e-5)


def test_quantize_dequantize():
    a = mx.nd.array([[0.1392, 0.5928], [0.6027, 0.8579]])
    q, lo, hi = mx.nd.contrib.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]), out_type="int8")
    assert q.dtype == np.int8 and q.asnumpy().tolist() == [[18, 75], [77, 109]]
    assert lo.asnumpy().tolist() == [-1.0] and hi.asnumpy().tolist() == [1.0]
    back = mx.nd.contrib.dequantize(q, lo, hi)
    np.testing.assert_allclose(back.asnumpy(), [[0.14173228, 0.5905512], [0.6062992, 0.8582677]],
                               rtol=1e-6)
    qu, lo, hi = mx.nd.contrib.quantize(a, mx.nd.array([0.0]), mx.nd.array([1.0]))
    assert qu.dtype == np.uint8 and qu.asnumpy().tolist() == [[35, 151], [154, 219]]
    np.testing.assert_allclose(mx.nd.contrib.dequantize(qu, lo, hi).asnumpy(), a.asnumpy(),
                               atol=1 / 255.)


def test_psroi_pooling_bins_and_gradient():
    data = np.random.rand(1, 2 * 2 * 2, 6, 6)
    rois = np.array([[0, 16.0, 16.0, 80.0, 64.0]])      # x1, y1, x2, y2 at scale 1/16
    out = mx.nd.contrib.PSROIPooling(mx.nd.array(data, dtype="float64"),
                                     mx.nd.array(rois, dtype="float64"), spatial_scale=0.0625,
                                     output_dim=2, pooled_size=2).asnumpy()
    # roi on the map: w from 1.0 to 5.0625, h from 1.0 to 4.0625; bins of 2.03 x 1.53
    hb = [(1, 3), (2, 5)]
    wb = [(1, 4), (3, 6)]
    for c in range(2):
        for ph in range(2):
            for pw in range(2):
                (h0, h1), (w0, w1) = hb[ph], wb[pw]
                ch = (c * 2 + ph) * 2 + pw
                np.testing.assert_allclose(out[0, c, ph, pw], data[0, ch, h0:h1, w0:w1].mean())
    sym = mx.sym.contrib.PSROIPooling(mx.sym.Variable("d"), mx.sym.Variable("r"),
                                      spatial_scale=0.0625, output_dim=2, pooled_size=2)
    check_numeric_gradient(sym, [data, rois], grad_nodes=["d"], rtol=1e-2, atol=1e-3,
                           dtype=np.float64)
