"""The random image augmentations (mx.nd.image / npx.image random_*,
adjust_lighting) against NumPy formulas and colorsys."""
import colorsys

import numpy as onp
import pytest

import aiond as mx
from aiond import npx

_RS = onp.random.RandomState(0)
IMG = _RS.randint(0, 256, (4, 5, 3)).astype(onp.uint8)
GREY = onp.array([0.299, 0.587, 0.114])


def _sat(v):
    return onp.clip(onp.rint(v), 0, 255).astype(onp.uint8)


def test_fixed_factor_enhancements():
    img = mx.nd.array(IMG, dtype="uint8")
    x = IMG.astype(onp.float64)
    out = mx.nd.image.random_brightness(img, 1.3, 1.3).asnumpy()
    onp.testing.assert_allclose(out, _sat(x * 1.3), atol=1)
    out = mx.nd.image.random_contrast(img, 0.5, 0.5).asnumpy()
    onp.testing.assert_allclose(out, _sat(x * 0.5 + 0.5 * (x @ GREY).mean()), atol=1)
    f = mx.nd.image.random_brightness(mx.nd.array(x, dtype="float32"), 2, 2).asnumpy()
    onp.testing.assert_allclose(f, x * 2, rtol=1e-6)      # float images are not saturated
    alpha = (0.1, -0.2, 0.3)
    eig = onp.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                     [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                     [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]])
    out = mx.nd.image.adjust_lighting(img, alpha=alpha).asnumpy()
    onp.testing.assert_allclose(out, _sat(x + eig @ onp.array(alpha)), atol=1)


def test_hue_matches_colorsys():
    x = IMG.astype(onp.float32)
    out = mx.nd.image.random_hue(mx.nd.array(x), 0.2, 0.2).asnumpy()
    ref = onp.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            h, l, s = colorsys.rgb_to_hls(*(x[i, j] / 255))
            ref[i, j] = onp.array(colorsys.hls_to_rgb((h + 0.2) % 1.0, l, s)) * 255
    onp.testing.assert_allclose(out, ref, atol=1e-2)


def test_random_draws_and_flips():
    img = mx.nd.array(IMG, dtype="uint8")
    seen = set()
    for _ in range(20):
        out = mx.nd.image.random_flip_left_right(img).asnumpy()
        assert (out == IMG).all() or (out == IMG[:, ::-1]).all()
        seen.add((out == IMG).all())
    assert seen == {True, False}
    out = mx.nd.image.random_flip_top_bottom(img).asnumpy()
    assert (out == IMG).all() or (out == IMG[::-1]).all()
    b = mx.nd.image.random_brightness(mx.nd.array(IMG, dtype="float32"), 0.5, 1.5).asnumpy()
    ratio = b / onp.maximum(IMG, 1)
    assert 0.5 <= ratio[IMG > 0].min() and ratio[IMG > 0].max() < 1.5
    assert onp.ptp(ratio[IMG > 0]) < 1e-5          # one factor per call
    jit = mx.nd.image.random_color_jitter(img, 0.1, 0.1, 0.1, 0.1)
    assert jit.shape == IMG.shape and jit.dtype == onp.uint8
    lit = mx.nd.image.random_lighting(mx.nd.array(IMG, dtype="float32"), alpha_std=0.0)
    onp.testing.assert_allclose(lit.asnumpy(), IMG)
    n = npx.image.random_contrast(mx.nd.array(IMG).as_np_ndarray(), 1.0, 1.0)
    assert isinstance(n, mx.np.ndarray)
    s = mx.sym.image.random_hue(mx.sym.var("d"), 0, 0.1)
    assert s.list_arguments() == ["d"]


def test_errors():
    with pytest.raises(mx.base.MXNetError, match="channel"):
        mx.nd.image.random_brightness(mx.nd.ones((2, 2, 4)), 0.5, 1.5)
    with pytest.raises(ValueError, match="min_factor"):
        mx.nd.image.random_contrast(mx.nd.ones((2, 2, 3)), -1, 1)
    with pytest.raises(mx.base.MXNetError, match="alpha"):
        mx.nd.image.adjust_lighting(mx.nd.ones((2, 2, 3)), alpha=(0.1, 0.2))
