"""mx.nd.image / mx.sym.image random augmentations and the Block-based
gluon.data.vision.transforms; values recorded from MXNet 1.9.1 or computed
with numpy."""
import pickle

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.gluon.data.vision import transforms as T


def _img(dtype="float32"):
    rs = np.random.RandomState(0)
    x = rs.uniform(0, 255, (4, 5, 3)).astype("float32")
    return x.astype(dtype)


def test_brightness_contrast_lighting_numpy():
    x = _img()
    nx = mx.nd.array(x)
    out = mx.nd.image.random_brightness(nx, min_factor=0.7, max_factor=0.7).asnumpy()
    np.testing.assert_allclose(out, x * np.float32(0.7), rtol=1e-6)
    gray = (x * np.array([0.299, 0.587, 0.114], "f")).sum() / 20
    out = mx.nd.image.random_contrast(nx, min_factor=0.6, max_factor=0.6).asnumpy()
    np.testing.assert_allclose(out, x * 0.6 + 0.4 * gray, rtol=1e-5)
    eig = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
    out = mx.nd.image.adjust_lighting(nx, alpha=(0.1, -0.2, 0.3)).asnumpy()
    np.testing.assert_allclose(out, x + eig @ [0.1, -0.2, 0.3], rtol=1e-5)
    # uint8: clamped to [0, 255] and truncated (MXNet's saturate_cast)
    u = mx.nd.array(_img("uint8"), dtype="uint8")
    out = mx.nd.image.random_brightness(u, min_factor=3.0, max_factor=3.0).asnumpy()
    want = np.clip(_img("uint8").astype("f") * 3, 0, 255).astype("uint8")
    np.testing.assert_array_equal(out, want)


def test_saturation_hue_match_mxnet():
    u = mx.nd.array(_img("uint8"), dtype="uint8")
    # MXNet 1.9.1's outputs (first 12 values) for these inputs
    sat = mx.nd.image.random_saturation(u, min_factor=0.3, max_factor=0.3)
    assert sat.asnumpy().ravel()[:12].tolist() == [53, 66, 58, 54, 45, 62, 52, 87, 93, 39, 70, 50]
    hue = mx.nd.image.random_hue(u, min_factor=0.2, max_factor=0.2)
    assert hue.asnumpy().ravel()[:12].tolist() == [139, 159, 182, 164, 108, 122, 155, 111,
                                                   245, 96, 143, 201]
    hue = mx.nd.image.random_hue(mx.nd.array(_img()), min_factor=0.9, max_factor=0.9)
    np.testing.assert_allclose(hue.asnumpy().ravel()[:6],
                               [151.646, 182.373, 139.947, 108.032, 111.121, 164.703], atol=2e-3)
    light = mx.nd.image.adjust_lighting(u, alpha=(0.1, -0.2, 0.3))
    assert light.asnumpy().ravel()[:6].tolist() == [135, 178, 150, 134, 104, 161]
    # hue of a whole turn is the identity
    full = mx.nd.image.random_hue(mx.nd.array(_img()), min_factor=1.0, max_factor=1.0)
    np.testing.assert_allclose(full.asnumpy(), _img(), atol=1e-3)


def test_random_ops_draw_and_check():
    mx.random.seed(7)
    x = mx.nd.array(_img())
    outs = {tuple(mx.nd.image.random_brightness(x, min_factor=0.5, max_factor=1.5)
                  .asnumpy().ravel()[:1]) for _ in range(5)}
    assert len(outs) == 5
    flips = [mx.nd.image.random_flip_left_right(x).asnumpy() for _ in range(40)]
    n_flip = sum(np.array_equal(f, _img()[:, ::-1]) for f in flips)
    assert 5 < n_flip < 35 and all(np.array_equal(f, _img()) or np.array_equal(f, _img()[:, ::-1])
                                   for f in flips)
    flips = [mx.nd.image.random_flip_top_bottom(x).asnumpy() for _ in range(40)]
    assert 5 < sum(np.array_equal(f, _img()[::-1]) for f in flips) < 35
    j = mx.nd.image.random_color_jitter(x, brightness=0.3, contrast=0.3, saturation=0.3, hue=0.1)
    assert j.shape == x.shape and not np.allclose(j.asnumpy(), _img())
    same = mx.nd.image.random_color_jitter(x, brightness=0, contrast=0, saturation=0, hue=0)
    np.testing.assert_array_equal(same.asnumpy(), _img())
    lit = mx.nd.image.random_lighting(x, alpha_std=0.05).asnumpy() - _img()
    assert np.allclose(lit, lit[0, 0]) and np.abs(lit[0, 0]).max() > 0
    with pytest.raises(MXNetError, match="height, width, channels"):
        mx.nd.image.random_brightness(mx.nd.ones((2, 4, 5, 3)), min_factor=0.5, max_factor=1)
    with pytest.raises(MXNetError, match="1 or 3"):
        mx.nd.image.random_contrast(mx.nd.ones((4, 5, 4)), min_factor=0.5, max_factor=1)
    with pytest.raises(ValueError, match="min_factor"):
        mx.nd.image.random_hue(x, min_factor=-0.4, max_factor=0.5)
    s = mx.sym.image.random_saturation(mx.sym.var("d"), min_factor=1.0, max_factor=1.0)
    out = s.bind(mx.cpu(), {"d": x}).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), _img(), rtol=1e-6)


def test_crop_backward():
    d = mx.sym.var("data")
    s = mx.sym.image.crop(d, 1, 2, 2, 3)
    x = mx.nd.arange(60).reshape((5, 4, 3))
    e = s.bind(mx.cpu(), {"data": x}, args_grad={"data": mx.nd.zeros((5, 4, 3))})
    e.forward(is_train=True)
    e.backward(mx.nd.ones((3, 2, 3)))
    want = np.zeros((5, 4, 3))
    want[2:5, 1:3] = 1
    np.testing.assert_array_equal(e.grad_dict["data"].asnumpy(), want)


def test_transforms_are_blocks_and_hybridize():
    img = mx.nd.array(np.random.RandomState(1).uniform(0, 255, (20, 30, 3))).astype("uint8")
    t = T.Compose([T.Resize((16, 12)), T.CropResize(2, 1, 10, 8), T.ToTensor(),
                   T.Normalize(0.5, 0.25)])
    assert isinstance(t, mx.gluon.nn.Sequential) and len(t) == 1     # one hybridized group
    out = t(img)
    ref = mx.nd.image.resize(img, size=(16, 12))[1:9, 2:12].asnumpy().astype("f")
    np.testing.assert_allclose(out.asnumpy(), (ref.transpose(2, 0, 1) / 255 - 0.5) / 0.25,
                               rtol=1e-5, atol=1e-5)
    assert isinstance(T.Cast(), mx.gluon.HybridBlock) and T.Cast("float16")(img).dtype == np.float16
    for b in (T.RandomBrightness(0.2), T.RandomContrast(0.2), T.RandomSaturation(0.2),
              T.RandomHue(0.2), T.RandomColorJitter(0.1, 0.1, 0.1, 0.1), T.RandomLighting(0.1),
              T.RandomFlipLeftRight(), T.RandomFlipTopBottom()):
        assert isinstance(b, mx.gluon.HybridBlock)
        b.hybridize()
        assert b(img.astype("float32")).shape == img.shape
    assert T.RandomBrightness(2)._args == (0, 3)
    rrc = T.RandomResizedCrop(8)
    assert rrc(img).shape == (8, 8, 3)
    f = T.ToTensor()(img)
    assert T.Rotate(90)(f).shape == f.shape
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(90)(img)
    with pytest.raises(ValueError, match="ordered"):
        T.RandomRotation((10, -10))
    assert T.RandomRotation((-10, 10), rotate_with_proba=0.0)(img) is img
    np.random.seed(0)
    import random
    random.seed(0)
    applied = sum(T.RandomApply(T.Resize(5), 0.3)(img).shape[0] == 5 for _ in range(200))
    assert 30 < applied < 90
    with pytest.raises(MXNetError):
        T.CropResize(25, 0, 10, 10)(img)
    with pytest.raises(MXNetError):
        T.ToTensor()(mx.nd.ones((2, 2, 3, 4, 3)))
    back = pickle.loads(pickle.dumps(T.Compose([T.Resize(8), T.ToTensor()])))
    assert back(img).shape == (3, 8, 8)


def test_numpy_images_in_and_out():
    img = np.random.RandomState(2).randint(0, 256, (6, 8, 3)).astype(np.uint8)
    out = T.Compose([T.Resize((4, 3)), T.ToTensor()])(img)
    assert type(out) is np.ndarray and out.shape == (3, 3, 4) and out.dtype == np.float32
    ref = T.Compose([T.Resize((4, 3)), T.ToTensor()])(mx.nd.array(img, dtype="uint8"))
    np.testing.assert_allclose(out, ref.asnumpy())
    with pytest.raises(ValueError, match="either 1 or 3"):      # ShapeError: MXNetError too
        T.Normalize((0.5, 1), (0.5, 2))(mx.nd.ones((3, 2, 2)))
