"""MXNet 1.9.1's random image augmentations (src/operator/image/image_random-inl.h):
``_image_random_flip_left_right``/``_top_bottom``, ``_image_random_brightness``,
``_contrast``, ``_saturation``, ``_hue``, ``_color_jitter``, ``_image_adjust_lighting``
and ``_image_random_lighting`` (``mx.nd.image``, ``mx.sym.image``, ``npx.image``).

Images are (H, W, C) with C = 1 or 3 (RGB); each op draws its factor from the
context's generator once per call, as MXNet does. Results keep the input dtype;
integer images are rounded and saturated to their range (MXNet's saturate_cast).
Saturation blends with the full grey value 0.299 R + 0.587 G + 0.114 B (MXNet's
loop keeps only the blue term, a bug aiond does not copy).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .registry import Param, host_kernels, p_float, register

_GREY = np.array([0.299, 0.587, 0.114], dtype=np.float32)
# AlexNet's PCA lighting: eigenvectors scaled by eigenvalues (rows R, G, B)
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)


def _image_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("an image op takes 1 input, got %d" % len(shapes))
    s = tuple(shapes[0])
    if len(s) != 3 or s[2] not in (1, 3):
        raise ShapeError("input must be an image of shape (height, width, channels) with "
                         "1 or 3 channels, got %s" % fmt(s))
    return (s,), (dtypes[0],)


def _store(out, val):
    """MXNet's saturate_cast: integer images are rounded and clipped."""
    if out.dtype.kind in "iub":
        info = np.iinfo(out.dtype) if out.dtype.kind != "b" else None
        val = np.rint(val)
        if info is not None:
            val = np.clip(val, info.min, info.max)
    out[...] = val.astype(out.dtype, copy=False)


def _u(rng, lo, hi):
    return float(rng.gen.uniform(lo, hi))


def _brightness(x, alpha):
    return x * np.float32(alpha)


def _contrast(x, alpha):
    grey = (x @ _GREY) if x.shape[2] == 3 else x[..., 0]
    return x * np.float32(alpha) + np.float32((1 - alpha) * grey.mean())


def _saturation(x, alpha):
    if x.shape[2] == 1:
        return x
    grey = (x @ _GREY)[..., None]
    return grey * np.float32(1 - alpha) + x * np.float32(alpha)


def _hue(x, alpha):
    if x.shape[2] == 1:
        return x
    # RGB -> HLS -> rotate hue by alpha * 360 degrees -> RGB (OpenCV's formulas)
    r, g, b = (x[..., i] / np.float32(255) for i in range(3))
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    l = (vmax + vmin) * 0.5
    chroma = diff > np.finfo(np.float32).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(l < 0.5, diff / (vmax + vmin), diff / (2.0 - vmax - vmin))
        d60 = 60.0 / diff
        h = np.where(vmax == r, (g - b) * d60,
                     np.where(vmax == g, (b - r) * d60 + 120.0, (r - g) * d60 + 240.0))
    h = np.where(h < 0, h + 360.0, h)
    s = np.where(chroma, s, 0.0)
    h = np.where(chroma, h, 0.0) + alpha * 360.0
    p2 = np.where(l <= 0.5, l * (1 + s), l + s - l * s)
    p1 = 2 * l - p2
    hh = np.mod(h / 60.0, 6.0)
    sector = np.minimum(hh.astype(np.int64), 5)
    f = hh - sector
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (1 - f), p1 + (p2 - p1) * f], axis=-1)
    # which table entry is (b, g, r) in each 60-degree sector
    sect = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])
    idx = sect[sector]
    bgr = np.take_along_axis(tab, idx, axis=-1)
    rgb = np.where((s != 0)[..., None], bgr[..., ::-1], l[..., None])
    return rgb.astype(np.float32) * np.float32(255)


def _lighting(x, alpha):
    if x.shape[2] == 1:
        return x
    return x + (_EIG @ np.asarray(alpha, dtype=np.float32)).astype(np.float32)


_ENHANCE = [Param("min_factor", p_float, doc="Minimum factor."),
            Param("max_factor", p_float, doc="Maximum factor.")]


def _check_enhance(op, attrs):
    if attrs["min_factor"] < 0 or attrs["max_factor"] < 0:
        raise OpError("%s: min_factor and max_factor must be >= 0, got %r and %r"
                      % (op.name, attrs["min_factor"], attrs["max_factor"]))


def _enhance(name, fn):
    def kernel(xp, data, out, rng, min_factor, max_factor):
        alpha = _u(rng, min_factor, max_factor)
        _store(out, fn(np.asarray(data, dtype=np.float32), alpha))
    kernel.__name__ = "_image_random_" + name
    kernel.__doc__ = ("image.random_%s(data, min_factor, max_factor): %s scaled by a factor "
                      "drawn from U[min_factor, max_factor)" % (name, name))
    register("_image_random_" + name, params=_ENHANCE, infer=_image_rule, needs_rng=True,
             attr_check=_check_enhance, aliases=("_npx__image_random_" + name,))(kernel)


for _n, _f in (("brightness", _brightness), ("contrast", _contrast),
               ("saturation", _saturation), ("hue", _hue)):
    _enhance(_n, _f)


@register("_image_random_color_jitter", infer=_image_rule, needs_rng=True,
          aliases=("_npx__image_random_color_jitter",), params=[
              Param("brightness", p_float, doc="How much to jitter brightness."),
              Param("contrast", p_float, doc="How much to jitter contrast."),
              Param("saturation", p_float, doc="How much to jitter saturation."),
              Param("hue", p_float, doc="How much to jitter hue.")])
def _image_random_color_jitter(xp, data, out, rng, brightness, contrast, saturation, hue):
    """image.random_color_jitter(data, brightness, contrast, saturation, hue): the four
    jitters in a random order, each factor 1 + U(-v, v) (hue: U(-v, v)); a zero
    amount skips that jitter."""
    x = np.asarray(data, dtype=np.float32)
    for k in rng.gen.permutation(4):
        if k == 0 and brightness > 0:
            x = _brightness(x, 1.0 + _u(rng, -brightness, brightness))
        elif k == 1 and contrast > 0:
            x = _contrast(x, 1.0 + _u(rng, -contrast, contrast))
        elif k == 2 and saturation > 0:
            x = _saturation(x, 1.0 + _u(rng, -saturation, saturation))
        elif k == 3 and hue > 0:
            x = _hue(x, _u(rng, -hue, hue))
        if out.dtype.kind in "iu":      # each stage saturates, as MXNet writes each one out
            x = np.clip(np.rint(x), *(np.iinfo(out.dtype).min, np.iinfo(out.dtype).max))
    _store(out, x)


def _p_floats(v):
    from .registry import _lit
    v = _lit(v)
    if isinstance(v, (int, float)):
        return (float(v),)
    return tuple(float(a) for a in v)


def _check_alpha(op, attrs):
    if len(attrs["alpha"]) != 3:
        raise OpError("%s: alpha must hold 3 values (R, G, B), got %r"
                      % (op.name, attrs["alpha"]))


@register("_image_adjust_lighting", infer=_image_rule, attr_check=_check_alpha,
          aliases=("_npx__image_adjust_lighting",),
          params=[Param("alpha", _p_floats, doc="The lighting alphas for the R, G, B channels.")])
def _image_adjust_lighting(xp, data, out, alpha):
    """image.adjust_lighting(data, alpha): AlexNet-style PCA lighting, adding
    eig @ alpha to every pixel's RGB."""
    _store(out, _lighting(np.asarray(data, dtype=np.float32), alpha))


@register("_image_random_lighting", infer=_image_rule, needs_rng=True,
          aliases=("_npx__image_random_lighting",),
          params=[Param("alpha_std", p_float, 0.05, "Level of the lighting noise.")])
def _image_random_lighting(xp, data, out, rng, alpha_std=0.05):
    """image.random_lighting(data, alpha_std=0.05): adjust_lighting with alpha drawn
    from N(0, alpha_std**2) per channel."""
    alpha = rng.gen.normal(0.0, alpha_std, size=3)
    _store(out, _lighting(np.asarray(data, dtype=np.float32), alpha))


def _random_flip(axis):
    def kernel(xp, data, out, rng):
        if rng.gen.random() < 0.5:
            out[...] = np.flip(data, axis=axis)
        else:
            out[...] = data
    return kernel


register("_image_random_flip_left_right", infer=_image_rule, needs_rng=True,
         aliases=("_npx__image_random_flip_left_right",))(_random_flip(1))
register("_image_random_flip_top_bottom", infer=_image_rule, needs_rng=True,
         aliases=("_npx__image_random_flip_top_bottom",))(_random_flip(0))

host_kernels("_image_random_brightness", "_image_random_contrast", "_image_random_saturation",
             "_image_random_hue", "_image_random_color_jitter", "_image_adjust_lighting",
             "_image_random_lighting", "_image_random_flip_left_right",
             "_image_random_flip_top_bottom")
