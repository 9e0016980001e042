"""``mx.image`` (MXNet 1.9.1's python/mxnet/image) and its ops:
``_cvimresize`` against per-pixel references of cv2.resize's sampling rules,
``_cvcopyMakeBorder`` against numpy.pad, decoding with Pillow (skipped
without it), crops/normalisation, augmenters, ImageIter and the Gluon image
datasets."""
from __future__ import annotations

import io
import math
import os

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError, OpError

nd = mx.nd
RNG = np.random.RandomState(5)


# ------------------------------------------------------------------- resize


def ref_linear(img, w, h):
    """cv2 INTER_LINEAR on half-pixel centres, replicated borders (float)."""
    H, W = img.shape[:2]
    out = np.zeros((h, w, img.shape[2]))

    def taps(d, n_in, n_out):
        f = (d + 0.5) * n_in / n_out - 0.5
        s = math.floor(f)
        t = f - s
        if s < 0:
            s, t = 0, 0.0
        if s >= n_in - 1:
            s, t = n_in - 1, 0.0
        return s, min(s + 1, n_in - 1), t
    for y in range(h):
        y0, y1, ty = taps(y, H, h)
        for x in range(w):
            x0, x1, tx = taps(x, W, w)
            out[y, x] = ((1 - ty) * ((1 - tx) * img[y0, x0] + tx * img[y0, x1])
                         + ty * ((1 - tx) * img[y1, x0] + tx * img[y1, x1]))
    return out


@pytest.mark.parametrize("shape,wh", [((6, 8, 3), (5, 9)), ((5, 5, 1), (10, 3)),
                                      ((7, 4, 3), (7, 4))])
def test_imresize_bilinear_float(shape, wh):
    img = RNG.rand(*shape).astype(np.float32)
    got = mx.image.imresize(nd.array(img), *wh, interp=1)
    assert got.shape == (wh[1], wh[0], shape[2]) and got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), ref_linear(img, *wh), rtol=1e-5, atol=1e-5)


def test_imresize_uint8_rounds_and_saturates():
    img = RNG.randint(0, 256, size=(9, 7, 3)).astype(np.uint8)
    got = mx.image.imresize(nd.array(img, dtype="uint8"), 4, 5).asnumpy()
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.clip(np.rint(ref_linear(img.astype(float), 4, 5)),
                                               0, 255).astype(np.uint8))


def test_imresize_nearest_and_area():
    img = RNG.randint(0, 256, size=(8, 12, 3)).astype(np.uint8)
    near = mx.image.imresize(nd.array(img, dtype="uint8"), 5, 3, interp=0).asnumpy()
    ys = [int(math.floor(y * 8 / 3)) for y in range(3)]
    xs = [int(math.floor(x * 12 / 5)) for x in range(5)]
    np.testing.assert_array_equal(near, img[ys][:, xs])
    # area, integer factor: block means
    area = mx.image.imresize(nd.array(img.astype(np.float32)), 6, 4, interp=3).asnumpy()
    np.testing.assert_allclose(area, img.reshape(4, 2, 6, 2, 3).mean(axis=(1, 3)), rtol=1e-5)
    # non-integer factor: overlap-weighted means preserve the overall mean
    area = mx.image.imresize(nd.array(img.astype(np.float64)), 5, 3, interp=3).asnumpy()
    np.testing.assert_allclose(area.mean(axis=(0, 1)), img.mean(axis=(0, 1)), rtol=1e-6)


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
def test_imresize_constant_image_stays_constant(interp):
    img = np.full((5, 6, 3), 77, dtype=np.uint8)
    for wh in ((11, 13), (3, 2)):
        got = mx.image.imresize(nd.array(img, dtype="uint8"), *wh, interp=interp).asnumpy()
        assert (got == 77).all()


def test_imresize_errors_and_symbol():
    with pytest.raises((OpError, MXNetError)):
        nd._internal._cvimresize(nd.zeros((4, 4)), w=2, h=2)
    with pytest.raises((OpError, MXNetError)):
        nd._internal._cvimresize(nd.zeros((4, 4, 3)), w=2, h=2, interp=7)
    s = mx.sym._internal._cvimresize(mx.sym.var("img"), w=5, h=7)
    assert s.infer_shape(img=(10, 10, 3))[1] == [(7, 5, 3)]


@pytest.mark.parametrize("btype,mode", [(1, "edge"), (2, "symmetric"), (3, "wrap"),
                                        (4, "reflect")])
def test_copy_make_border_modes(btype, mode):
    img = RNG.randint(0, 256, size=(5, 6, 3)).astype(np.uint8)
    got = mx.image.copyMakeBorder(nd.array(img, dtype="uint8"), 2, 1, 3, 2, type=btype)
    np.testing.assert_array_equal(got.asnumpy(),
                                  np.pad(img, ((2, 1), (3, 2), (0, 0)), mode=mode))


def test_copy_make_border_constant():
    img = np.ones((2, 2, 3), dtype=np.float32)
    got = mx.image.copyMakeBorder(nd.array(img), 1, 0, 0, 1, type=0, value=5).asnumpy()
    assert got.shape == (3, 3, 3)
    assert (got[0] == 5).all() and (got[:, 2] == 5).all() and (got[1:, :2] == 1).all()
    got = mx.image.copyMakeBorder(nd.array(img), 1, 0, 0, 0, values=(1, 2, 3)).asnumpy()
    np.testing.assert_array_equal(got[0, 0], [1, 2, 3])


# ------------------------------------------------------- crops and helpers


def test_scale_down_and_interp_method():
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert mx.image.scale_down((360, 1000), (480, 500)) == (360, 375)
    gi = mx.image.image._get_interp_method
    assert gi(9, (10, 10, 20, 20)) == 2 and gi(9, (20, 20, 10, 10)) == 3
    assert gi(9, (10, 20, 20, 10)) == 1 and gi(9) == 2 and gi(4) == 4
    assert 0 <= gi(10) <= 4
    with pytest.raises(ValueError):
        gi(7)


def test_resize_short_crops_and_normalize():
    img = nd.array(RNG.randint(0, 256, size=(40, 60, 3)), dtype="uint8")
    r = mx.image.resize_short(img, 20)
    assert r.shape == (20, 30, 3)
    r = mx.image.resize_short(nd.array(np.zeros((60, 40, 3)), dtype="uint8"), 20)
    assert r.shape == (30, 20, 3)
    c = mx.image.fixed_crop(img, 5, 7, 10, 12)
    np.testing.assert_array_equal(c.asnumpy(), img.asnumpy()[7:19, 5:15])
    c = mx.image.fixed_crop(img, 5, 7, 10, 12, size=(4, 6), interp=1)
    assert c.shape == (6, 4, 3)
    out, (x0, y0, w, h) = mx.image.center_crop(img, (20, 10))
    assert (x0, y0, w, h) == (20, 15, 20, 10) and out.shape == (10, 20, 3)
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[15:25, 20:40])
    out, (x0, y0, w, h) = mx.image.random_crop(img, (8, 9))
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[y0:y0 + 9, x0:x0 + 8])
    f = img.astype("float32")
    want = (f.asnumpy() - [1, 2, 3]) / [2, 2, 4]
    mean, std = nd.array([1.0, 2.0, 3.0]), nd.array([2.0, 2.0, 4.0])
    got = mx.image.color_normalize(f, mean, std)     # in place, as MXNet's
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(f.asnumpy(), want, rtol=1e-6)


def test_augmenters():
    img = nd.array(RNG.randint(0, 256, size=(32, 48, 3)), dtype="uint8").astype("float32")
    augs = mx.image.CreateAugmenter(data_shape=(3, 16, 16), resize=20, rand_crop=True,
                                    rand_mirror=True, mean=True, std=True, brightness=0.1,
                                    contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                    rand_gray=0.2)
    out = img
    for a in augs:
        out = a(out)
    assert out.shape == (16, 16, 3) and np.isfinite(out.asnumpy()).all()
    flip = mx.image.HorizontalFlipAug(1.0)(img)
    np.testing.assert_array_equal(flip.asnumpy(), img.asnumpy()[:, ::-1])
    assert mx.image.ForceResizeAug((10, 12))(img).shape == (12, 10, 3)
    assert mx.image.ForceResizeAug((10, 12)).dumps() == '["forceresizeaug", {"size": [10, 12], "interp": 2}]'


# ----------------------------------------------------------------- decoding


def _png_bytes(arr):
    PIL = pytest.importorskip("PIL.Image")
    buf = io.BytesIO()
    PIL.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def test_imdecode_png_roundtrip():
    arr = RNG.randint(0, 256, size=(7, 9, 3)).astype(np.uint8)
    data = _png_bytes(arr)
    img = mx.image.imdecode(data)
    assert img.dtype == np.uint8 and img.shape == (7, 9, 3)
    np.testing.assert_array_equal(img.asnumpy(), arr)
    np.testing.assert_array_equal(mx.image.imdecode(data, to_rgb=0).asnumpy(), arr[:, :, ::-1])
    np.testing.assert_array_equal(mx.img.imdecode(bytearray(data)).asnumpy(), arr)
    np.testing.assert_array_equal(
        mx.image.imdecode(nd.array(np.frombuffer(data, np.uint8), dtype="uint8")).asnumpy(), arr)
    gray = mx.image.imdecode(data, flag=0).asnumpy()
    assert gray.shape == (7, 9, 1)
    want = arr.astype(float) @ [0.299, 0.587, 0.114]
    assert np.abs(gray[..., 0] - want).max() <= 1
    out = nd.zeros((7, 9, 3), dtype="uint8")
    mx.image.imdecode(data, out=out)
    np.testing.assert_array_equal(out.asnumpy(), arr)


def test_imdecode_errors():
    pytest.importorskip("PIL.Image")
    with pytest.raises(MXNetError, match="Invalid image"):
        mx.image.imdecode(b"not an image")
    with pytest.raises(ValueError):
        mx.image.imdecode("a string")


def test_imread(tmp_path):
    arr = RNG.randint(0, 256, size=(5, 4, 3)).astype(np.uint8)
    p = tmp_path / "x.png"
    p.write_bytes(_png_bytes(arr))
    np.testing.assert_array_equal(mx.image.imread(str(p)).asnumpy(), arr)
    assert mx.image.imread(str(p), flag=0).shape == (5, 4, 1)


def _image_tree(root, n_per_class=2):
    arrays = {}
    for cls in ("cat", "dog"):
        os.makedirs(root / cls)
        for i in range(n_per_class):
            a = RNG.randint(0, 256, size=(6 + i, 5, 3)).astype(np.uint8)
            (root / cls / ("%d.png" % i)).write_bytes(_png_bytes(a))
            arrays[(cls, i)] = a
    (root / "notes.txt").write_text("not a class")
    return arrays


def test_image_folder_dataset(tmp_path):
    arrays = _image_tree(tmp_path)
    with pytest.warns(UserWarning):
        ds = mx.gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 4
    img, label = ds[3]
    assert label == 1
    np.testing.assert_array_equal(img.asnumpy(), arrays[("dog", 1)])
    ds = mx.gluon.data.vision.ImageFolderDataset(
        str(tmp_path), flag=0, transform=lambda d, l: (d.astype("float32") / 255, l))
    img, label = ds[0]
    assert img.shape == (6, 5, 1) and img.dtype == np.float32 and label == 0


def test_image_record_dataset_and_image_iter(tmp_path):
    arrays = [RNG.randint(0, 256, size=(8, 8, 3)).astype(np.uint8) for _ in range(5)]
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, a in enumerate(arrays):
        w.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 2), i, 0),
                                        _png_bytes(a)))
    w.close()
    ds = mx.gluon.data.vision.ImageRecordDataset(rec)
    assert len(ds) == 5
    img, label = ds[2]
    np.testing.assert_array_equal(img.asnumpy(), arrays[2])
    assert label == 0.0
    it = mx.image.ImageIter(batch_size=2, data_shape=(3, 8, 8), path_imgrec=rec,
                            path_imgidx=idx)
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 1
    np.testing.assert_array_equal(batches[0].data[0].asnumpy()[1],
                                  arrays[1].transpose(2, 0, 1).astype(np.float32))
    np.testing.assert_array_equal(batches[0].label[0].asnumpy(), [0, 1])
    # an image list with files on disk
    for i, a in enumerate(arrays[:3]):
        (tmp_path / ("%d.png" % i)).write_bytes(_png_bytes(a))
    it = mx.image.ImageIter(batch_size=3, data_shape=(3, 4, 4), path_root=str(tmp_path),
                            imglist=[[float(i), "%d.png" % i] for i in range(3)],
                            aug_list=mx.image.CreateAugmenter((3, 4, 4), resize=4))
    b = it.next()
    assert b.data[0].shape == (3, 3, 4, 4)
    np.testing.assert_array_equal(b.label[0].asnumpy(), [0, 1, 2])


# ------------------------------------------------------ mx.nd.image / sym.image


def test_nd_image_to_tensor_and_normalize():
    img = RNG.randint(0, 256, size=(4, 5, 3)).astype(np.uint8)
    t = nd.image.to_tensor(nd.array(img, dtype="uint8"))
    assert t.dtype == np.float32 and t.shape == (3, 4, 5)
    np.testing.assert_allclose(t.asnumpy(), img.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    b = nd.image.to_tensor(nd.array(np.stack([img, img]), dtype="uint8"))
    assert b.shape == (2, 3, 4, 5)
    n = nd.image.normalize(t, mean=(0.1, 0.2, 0.3), std=(0.5, 0.25, 2.0))
    want = (t.asnumpy() - np.array([0.1, 0.2, 0.3])[:, None, None]) / \
        np.array([0.5, 0.25, 2.0])[:, None, None]
    np.testing.assert_allclose(n.asnumpy(), want, rtol=1e-5)
    n = nd.image.normalize(b, mean=0.5, std=0.5)
    np.testing.assert_allclose(n.asnumpy(), (b.asnumpy() - 0.5) / 0.5, rtol=1e-6)
    with pytest.raises((OpError, MXNetError)):
        nd.image.normalize(t)                      # MXNet's 4-entry defaults vs 3 channels
    with pytest.raises((OpError, MXNetError)):
        nd.image.normalize(nd.zeros((2, 4, 4)), mean=0, std=1)   # 2 channels
    # gradients
    x = nd.array(RNG.rand(3, 2, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = nd.image.normalize(x, mean=(0, 0, 0), std=(1.0, 2.0, 4.0))
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy()[:, 0, 0], [1.0, 0.5, 0.25])
    f = nd.array(RNG.rand(2, 3, 3))
    f.attach_grad()
    with mx.autograd.record():
        y = nd.image.to_tensor(f)
    y.backward(nd.ones(y.shape))
    np.testing.assert_allclose(f.grad.asnumpy(), np.full((2, 3, 3), 1 / 255.0), rtol=1e-6)


def test_nd_image_flip_resize_crop():
    img = RNG.randint(0, 256, size=(6, 8, 3)).astype(np.uint8)
    x = nd.array(img, dtype="uint8")
    np.testing.assert_array_equal(nd.image.flip_left_right(x).asnumpy(), img[:, ::-1])
    np.testing.assert_array_equal(nd.image.flip_top_bottom(x).asnumpy(), img[::-1])
    assert nd.image.resize(x, size=(4, 3)).shape == (3, 4, 3)
    assert nd.image.resize(x, size=5).shape == (5, 5, 3)
    assert nd.image.resize(x, size=3, keep_ratio=True).shape == (3, 4, 3)
    np.testing.assert_array_equal(nd.image.resize(x, size=(4, 3), interp=1).asnumpy(),
                                  mx.image.imresize(x, 4, 3, interp=1).asnumpy())
    assert nd.image.resize(nd.array(np.stack([img] * 2), dtype="uint8"),
                           size=(4, 3)).shape == (2, 3, 4, 3)
    np.testing.assert_array_equal(nd.image.crop(x, x=1, y=2, width=3, height=4).asnumpy(),
                                  img[2:6, 1:4])
    with pytest.raises((OpError, MXNetError)):
        nd.image.crop(x, x=6, y=0, width=3, height=2)
    s = mx.sym.image.to_tensor(mx.sym.var("img"))
    assert s.infer_shape(img=(10, 12, 3))[1] == [(3, 10, 12)]
    s = mx.sym.image.normalize(s, mean=(0, 0, 0), std=(1, 1, 1))
    ex = s.bind(mx.cpu(), {"img": nd.array(img)})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), img.transpose(2, 0, 1) / 255.0,
                               rtol=1e-6)


# ------------------------------------------------------------ mx.image.det


def test_det_augmenters_move_boxes():
    img = nd.array(RNG.randint(0, 256, size=(20, 40, 3)), dtype="uint8")
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6], [1, 0.3, 0.0, 0.9, 1.0]])
    out, lab = mx.image.det.DetHorizontalFlipAug(1.0)(img, label.copy())
    np.testing.assert_array_equal(out.asnumpy(), img.asnumpy()[:, ::-1])
    np.testing.assert_allclose(lab[:, 1], 1 - label[:, 3])
    np.testing.assert_allclose(lab[:, 3], 1 - label[:, 1])
    out, lab = mx.image.det.DetBorrowAug(mx.image.ForceResizeAug((10, 5)))(img, label)
    assert out.shape == (5, 10, 3) and (lab == label).all()
    augs = mx.image.CreateDetAugmenter((3, 16, 16), rand_crop=0.5, rand_pad=0.5,
                                       rand_mirror=True, mean=True, std=True)
    for a in augs:
        img, label = a(img, label)
    assert img.shape == (16, 16, 3)
    assert label.shape[1] == 5 and (label[:, 1:] >= 0).all() and (label[:, 1:] <= 1).all()


def test_image_det_iter(tmp_path):
    arrays = [RNG.randint(0, 256, size=(12, 10, 3)).astype(np.uint8) for _ in range(3)]
    imglist = []
    for i, a in enumerate(arrays):
        (tmp_path / ("%d.png" % i)).write_bytes(_png_bytes(a))
        objs = [[i % 2, 0.1, 0.2, 0.6, 0.7]] * (i + 1)
        imglist.append([np.array([2, 5] + sum(objs, []), dtype=np.float32), "%d.png" % i])
    it = mx.image.ImageDetIter(batch_size=2, data_shape=(3, 12, 10), imglist=imglist,
                               path_root=str(tmp_path))
    assert it.provide_label[0][1] == (2, 3, 5)
    b = it.next()
    assert b.data[0].shape == (2, 3, 12, 10)
    np.testing.assert_array_equal(b.data[0].asnumpy()[0],
                                  arrays[0].transpose(2, 0, 1).astype(np.float32))
    lab = b.label[0].asnumpy()
    np.testing.assert_allclose(lab[0, 0], [0, 0.1, 0.2, 0.6, 0.7], rtol=1e-6)
    assert (lab[0, 1:] == -1).all() and (lab[1, :2, 0] == 1).all()
