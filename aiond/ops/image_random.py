"""MXNet's random image augmentations as ops (``src/operator/image/
image_random-inl.h``): ``mx.nd.image``/``mx.sym.image`` random_flip_left_right,
random_flip_top_bottom, random_brightness, random_contrast, random_saturation,
random_hue, random_color_jitter, adjust_lighting and random_lighting, on
(H, W, C) images with C = 1 or 3 (the flips also take (N, H, W, C) batches,
flipped together).

Values are computed in float32 and written back as MXNet's saturate_cast
does: clamped to [0, 255] and truncated for uint8, plain casts otherwise.
Where MXNet's kernels have quirks their results show, aiond reproduces the
results (noted at the kernel). Random factors come from the context's
generator, one draw per call."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, host_kernels, p_float, p_int, register

_COEF = np.array([0.299, 0.587, 0.114], dtype=np.float32)
_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)


def _image_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) != 3:
        raise ShapeError("Input image must have shape (height, width, channels), but got %s"
                         % fmt(d))
    if d[-1] not in (1, 3):
        raise ShapeError("The last dimension of input image must be the channel dimension "
                         "with either 1 or 3 elements, but got input with shape %s" % fmt(d))
    return (d,), (dtypes[0],)


def _flip_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) not in (3, 4):
        raise ShapeError("Input image must have shape (height, width, channels) or "
                         "(N, height, width, channels), but got %s" % fmt(d))
    return (d,), (dtypes[0],)


def _store(out, val):
    if out.dtype == np.uint8:
        out[...] = np.clip(val, 0.0, 255.0).astype(np.uint8)
    else:
        out[...] = val.astype(out.dtype)


def _f32(x):
    return np.asarray(x).astype(np.float32)


def _brightness(x, alpha):
    return x * np.float32(alpha)


def _contrast(x, alpha):
    if x.shape[-1] > 1:
        gray = float(np.sum(x * _COEF, dtype=np.float32))
    else:
        gray = float(np.sum(x, dtype=np.float32))
    mean = gray / (x.shape[0] * x.shape[1])
    return x * np.float32(alpha) + np.float32((1 - alpha) * mean)


def _saturation(x, alpha):
    if x.shape[-1] == 1:
        return x
    # MXNet's kernel assigns (not adds) each channel's weighted value to its
    # "gray", so gray is 0.114 * blue; aiond gives the same results
    gray = x[..., 2:3] * _COEF[2] * np.float32(1 - alpha)
    return gray + x * np.float32(alpha)


def _rgb_to_hls(x):
    r, g, b = (x[..., i] / np.float32(255) for i in range(3))
    vmax = np.maximum(np.maximum(r, g), b)
    vmin = np.minimum(np.minimum(r, g), b)
    diff = vmax - vmin
    l = (vmax + vmin) * np.float32(0.5)
    big = diff > np.finfo(np.float32).eps
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(l < 0.5, diff / (vmax + vmin), diff / (np.float32(2) - vmax - vmin))
        d = np.float32(60) / diff
        h = np.where(vmax == r, (g - b) * d,
                     np.where(vmax == g, (b - r) * d + np.float32(120),
                              (r - g) * d + np.float32(240)))
    h = np.where(h < 0, h + np.float32(360), h)
    return np.where(big, h, 0).astype(np.float32), l, np.where(big, s, 0).astype(np.float32)


_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hls_to_rgb(h, l, s):
    p2 = np.where(l <= 0.5, l * (1 + s), l + s - l * s).astype(np.float32)
    p1 = 2 * l - p2
    h = np.mod(h / np.float32(60), np.float32(6))
    sector = np.minimum(h.astype(np.int64), 5)
    h = h - sector
    tab = np.stack([p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h], axis=-1)
    idx = _SECTORS[sector]                       # (..., 3): table entries for b, g, r
    bgr = np.take_along_axis(tab, idx, axis=-1)
    rgb = bgr[..., ::-1]
    gray = (s == 0)[..., None]
    rgb = np.where(gray, l[..., None], rgb)
    return rgb * np.float32(255)


def _hue(x, alpha):
    if x.shape[-1] == 1:
        return x
    h, l, s = _rgb_to_hls(x)
    return _hls_to_rgb(h + np.float32(alpha * 360.0), l, s).astype(np.float32)


def _lighting(x, alpha):
    if x.shape[-1] == 1:
        return x
    pca = _EIG @ np.asarray(alpha, dtype=np.float32)
    return x + pca.astype(np.float32)


def _uniform(rng, lo, hi):
    return float(np.float32(rng.gen.uniform(lo, hi)))


# ---------------------------------------------------------------- flips


@register("_image_random_flip_left_right", infer=_flip_rule, needs_rng=True)
def _image_random_flip_left_right(xp, data, out, rng):
    """random_flip_left_right(data): flip the width axis with probability 0.5."""
    out[...] = np.flip(data, axis=-2) if rng.gen.random() < 0.5 else data


@register("_image_random_flip_top_bottom", infer=_flip_rule, needs_rng=True)
def _image_random_flip_top_bottom(xp, data, out, rng):
    """random_flip_top_bottom(data): flip the height axis with probability 0.5."""
    out[...] = np.flip(data, axis=-3) if rng.gen.random() < 0.5 else data


# ------------------------------------------------------- color jitters

_ENHANCE = [Param("min_factor", p_float, None, "Minimum factor."),
            Param("max_factor", p_float, None, "Maximum factor.")]


def _enhance_check(op, attrs):
    for k in ("min_factor", "max_factor"):
        if attrs.get(k) is not None and attrs[k] < 0:
            raise ValueError("%s must be >= 0, got %r" % (k, attrs[k]))
    if attrs["min_factor"] > attrs["max_factor"]:
        raise ValueError("min_factor (%r) must not exceed max_factor (%r)"
                         % (attrs["min_factor"], attrs["max_factor"]))


def _enhance(name, fn, what):
    @register(name, params=_ENHANCE, infer=_image_rule, needs_rng=True,
              attr_check=_enhance_check)
    def kernel(xp, data, out, rng, min_factor, max_factor):
        _store(out, fn(_f32(data), _uniform(rng, min_factor, max_factor)))
    kernel.__doc__ = ("%s(data, min_factor, max_factor): %s by a factor drawn uniformly "
                      "from [min_factor, max_factor]." % (name[len("_image_"):], what))
    kernel.__name__ = name
    return kernel


_enhance("_image_random_brightness", _brightness, "scale every value")
_enhance("_image_random_contrast", _contrast,
         "blend with the mean gray level (0.299 R + 0.587 G + 0.114 B)")
_enhance("_image_random_saturation", _saturation, "blend each pixel with its gray level")
_enhance("_image_random_hue", _hue, "rotate the hue (in HLS) by factor * 360 degrees")


@register("_image_random_color_jitter", params=[
    Param("brightness", p_float, None, "How much to jitter brightness."),
    Param("contrast", p_float, None, "How much to jitter contrast."),
    Param("saturation", p_float, None, "How much to jitter saturation."),
    Param("hue", p_float, None, "How much to jitter hue.")],
    infer=_image_rule, needs_rng=True)
def _image_random_color_jitter(xp, data, out, rng, brightness, contrast, saturation, hue):
    """random_color_jitter(data, brightness, contrast, saturation, hue): the four
    jitters in a random order, each one whose amount is > 0: brightness,
    contrast and saturation by 1 + U(-amount, amount), hue by U(-hue, hue).
    Each step writes (and so rounds to) the output type, as MXNet does."""
    steps = [(brightness, _brightness, 1.0), (contrast, _contrast, 1.0),
             (saturation, _saturation, 1.0), (hue, _hue, 0.0)]
    order = rng.gen.permutation(4)
    x = _f32(data)
    done = False
    for i in order:
        amount, fn, base = steps[i]
        if amount > 0:
            _store(out, fn(x, base + _uniform(rng, -amount, amount)))
            x = _f32(out)
            done = True
    if not done:
        out[...] = data


def _lighting_rule(attrs, shapes, dtypes):
    r = _image_rule(attrs, shapes, dtypes)
    if "alpha" in attrs and len(attrs["alpha"]) != 3:
        raise ShapeError("alpha must hold 3 values (R, G, B), got %d" % len(attrs["alpha"]))
    return r


def _p_floats(v):
    from .registry import _lit
    v = _lit(v)
    if isinstance(v, (int, float)):
        return (float(v),)
    return tuple(float(a) for a in v)


@register("_image_adjust_lighting", params=[
    Param("alpha", _p_floats, None, "The lighting alphas for the R, G, B channels.")],
    infer=_lighting_rule)
def _image_adjust_lighting(xp, data, out, alpha):
    """adjust_lighting(data, alpha): AlexNet's PCA lighting noise: add
    eigvec * (eigval * alpha) (ImageNet's RGB eigen-decomposition) to each pixel."""
    _store(out, _lighting(_f32(data), alpha))


@register("_image_random_lighting", params=[
    Param("alpha_std", p_float, 0.05, "Level of the lighting noise.")],
    infer=_image_rule, needs_rng=True)
def _image_random_lighting(xp, data, out, rng, alpha_std=0.05):
    """random_lighting(data, alpha_std=0.05): adjust_lighting with alphas drawn
    from N(0, alpha_std**2)."""
    alpha = np.float32(rng.gen.normal(0.0, alpha_std, size=3))
    _store(out, _lighting(_f32(data), alpha))


_NAMES = ("_image_random_flip_left_right", "_image_random_flip_top_bottom",
          "_image_random_brightness", "_image_random_contrast", "_image_random_saturation",
          "_image_random_hue", "_image_random_color_jitter", "_image_adjust_lighting",
          "_image_random_lighting")
# augmentations sit in front of a network, never inside one: no gradients
set_grads({n: (lambda F, at, ins, outs, og: [None] * len(ins)) for n in _NAMES})
host_kernels(*_NAMES)


# ------------------------------------------------------- crop's gradient


@register("_backward_image_crop", inputs=("ograd", "data"), params=[
    Param("x", p_int, doc="Left boundary of the cropping area."),
    Param("y", p_int, doc="Top boundary of the cropping area."),
    Param("width", p_int, doc="Width of the cropping area."),
    Param("height", p_int, doc="Height of the cropping area.")],
    infer=lambda a, s, d: ((tuple(s[1]),), (d[1],)))
def _backward_image_crop(xp, ograd, data, out, x, y, width, height):
    """Gradient of image.crop: the output gradient inside the cropped area, 0 elsewhere."""
    out[...] = 0
    out[..., y:y + height, x:x + width, :] = ograd


set_grads({"_image_crop": lambda F, a, ins, outs, og: [F._internal._backward_image_crop(
    og[0], ins[0], x=a["x"], y=a["y"], width=a["width"], height=a["height"])]})
