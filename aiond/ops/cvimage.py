"""MXNet 1.9.1's OpenCV-backed image ops (src/io/image_io.cc), computed with
numpy: ``_cvimresize`` and ``_cvcopyMakeBorder`` (``mx.image.imresize`` and
``mx.image.copyMakeBorder`` call them).

``_cvimresize`` follows ``cv::resize``'s sampling rules for every
interpolation MXNet passes to it (cv2's codes): 0 nearest
(``floor(dst * in/out)``), 1 bilinear, 2 bicubic (A = -0.75) and 4 Lanczos-4
on half-pixel centres with replicated borders, 3 area (box averaging when
shrinking both axes, OpenCV's area-linear rule otherwise). Integer images are rounded to nearest
and saturated like ``saturate_cast``; OpenCV's fixed-point uint8 arithmetic
can differ from this by one grey level on some pixels.

Decoding (``imdecode``/``imread``) has no op here: its output shape comes
from the encoded bytes, so ``mx.image`` decodes on the calling thread (as
MXNet does for anything but JPEG and PNG) with Pillow.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from ._common import _n_inputs
from .registry import Param, _lit, p_float, p_int, register


def _image_rule(attrs, shapes, dtypes, what):
    _n_inputs(shapes, ("src",))
    s = tuple(shapes[0])
    if len(s) != 3:
        raise OpError("%s needs an image of shape (height, width, channels), got %s"
                      % (what, s))
    return s


# ================================================================== resize


def _linear_taps(out_len, in_len, area_fx=False):
    scale = in_len / out_len
    d = np.arange(out_len, dtype=np.float64)
    if area_fx:                          # cv::resize INTER_AREA when enlarging
        sx = np.floor(d * scale)
        fx = (d + 1) - (sx + 1) / scale
        fx = np.where(fx <= 0, 0.0, fx - np.floor(fx))
    else:
        f = (d + 0.5) * scale - 0.5
        sx = np.floor(f)
        fx = f - sx
    sx = sx.astype(np.int64)
    low = sx < 0
    fx[low], sx[low] = 0.0, 0
    high = sx >= in_len - 1
    fx[high], sx[high] = 0.0, in_len - 1
    w = np.zeros((out_len, in_len))
    rows = np.arange(out_len)
    np.add.at(w, (rows, sx), 1.0 - fx)
    np.add.at(w, (rows, np.minimum(sx + 1, in_len - 1)), fx)
    return w


def _cubic_coeffs(x):
    a = -0.75
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    return np.stack([c0, c1, c2, 1.0 - c0 - c1 - c2], axis=1)


def _lanczos4_coeffs(x):
    s45, c45 = 0.70710678118654752440, 0.70710678118654752440
    cs = [(1, 0), (-s45, -c45), (0, 1), (s45, -c45), (-1, 0), (s45, c45), (0, -1), (-s45, c45)]
    out = np.empty((len(x), 8))
    for j, xi in enumerate(x):
        if xi < 1.1920929e-07:
            out[j] = 0.0
            out[j, 3] = 1.0
            continue
        y0 = -(xi + 3) * math.pi * 0.25
        s0, c0 = math.sin(y0), math.cos(y0)
        row = []
        for i in range(8):
            y = -(xi + 3 - i) * math.pi * 0.25
            row.append((cs[i][0] * s0 + cs[i][1] * c0) / (y * y))
        row = np.array(row)
        out[j] = row / row.sum()
    return out


def _kernel_taps(out_len, in_len, coeffs, left):
    scale = in_len / out_len
    f = (np.arange(out_len) + 0.5) * scale - 0.5
    sx = np.floor(f)
    fx = f - sx
    sx = sx.astype(np.int64)
    c = coeffs(fx)
    w = np.zeros((out_len, in_len))
    rows = np.arange(out_len)
    for k in range(c.shape[1]):
        np.add.at(w, (rows, np.clip(sx - left + k, 0, in_len - 1)), c[:, k])
    return w


def _area_taps(out_len, in_len):
    scale = in_len / out_len
    w = np.zeros((out_len, in_len))
    for dx in range(out_len):
        f1, f2 = dx * scale, (dx + 1) * scale
        lo, hi = int(math.floor(f1)), int(math.ceil(f2))
        for sx in range(lo, min(hi, in_len)):
            ov = min(f2, sx + 1) - max(f1, sx)
            if ov > 1e-12:
                w[dx, sx] = ov / scale
    return w


def _nearest_taps(out_len, in_len):
    sx = np.minimum(np.floor(np.arange(out_len) * (in_len / out_len)).astype(np.int64),
                    in_len - 1)
    w = np.zeros((out_len, in_len))
    w[np.arange(out_len), sx] = 1.0
    return w


def resize_weights(out_len, in_len, interp, area_mode=False):
    """The (out_len, in_len) matrix cv::resize applies along one axis."""
    if interp == 0:
        return _nearest_taps(out_len, in_len)
    if interp == 1:
        return _linear_taps(out_len, in_len)
    if interp == 2:
        return _kernel_taps(out_len, in_len, _cubic_coeffs, 1)
    if interp == 3:
        return _area_taps(out_len, in_len) if area_mode else \
            _linear_taps(out_len, in_len, area_fx=True)
    if interp == 4:
        return _kernel_taps(out_len, in_len, _lanczos4_coeffs, 3)
    raise OpError("interp=%d is not an OpenCV interpolation (0 nearest, 1 bilinear, 2 "
                  "bicubic, 3 area, 4 lanczos)" % interp)


def resize_image(img, w, h, interp, xp=np):
    """(H, W, C) image of ``xp`` (numpy or CuPy) -> (h, w, C), cv::resize's
    sampling: two small weight matrices made on the host, applied on the
    image's device."""
    ih, iw = img.shape[:2]
    if (ih, iw) == (h, w):
        return img.copy()
    area = interp == 3 and ih >= h and iw >= w
    wy = resize_weights(h, ih, interp, area)
    wx = resize_weights(w, iw, interp, area)
    ct = np.float32 if img.dtype == np.float32 else np.float64
    x = img.astype(ct, copy=False)
    # two BLAS products (einsum's generic loop is ~50x slower on large images)
    y = xp.tensordot(xp.asarray(wy.astype(ct)), x, axes=([1], [0]))        # (h, iw, C)
    y = xp.tensordot(xp.asarray(wx.astype(ct)), y, axes=([1], [1]))        # (w, h, C)
    y = y.transpose(1, 0, 2)
    if img.dtype.kind in "iub":
        info = np.iinfo(img.dtype)
        y = xp.clip(xp.rint(y), info.min, info.max)
    return y.astype(img.dtype)


def _resize_rule(attrs, shapes, dtypes):
    s = _image_rule(attrs, shapes, dtypes, "_cvimresize")
    if attrs["w"] < 1 or attrs["h"] < 1:
        raise OpError("_cvimresize needs w >= 1 and h >= 1, got w=%d, h=%d"
                      % (attrs["w"], attrs["h"]))
    if attrs["interp"] not in (0, 1, 2, 3, 4):
        raise OpError("_cvimresize: interp=%d is not an OpenCV interpolation (0 nearest, 1 "
                      "bilinear, 2 bicubic, 3 area, 4 lanczos)" % attrs["interp"])
    return ((attrs["h"], attrs["w"], s[2]),), (dtypes[0],)


@register("_cvimresize", inputs=("src",), infer=_resize_rule, inline=False, params=[
    Param("w", p_int, doc="Width of resized image."),
    Param("h", p_int, doc="Height of resized image."),
    Param("interp", p_int, 1, "Interpolation method (default=cv2.INTER_LINEAR)."),
])
def _cvimresize(xp, src, out, w, h, interp=1):
    """_cvimresize(src, w, h, interp=1): resize an (H, W, C) image like cv2.resize."""
    out[...] = resize_image(src, w, h, interp, xp)


# ================================================================ borders


def _p_floats(v):
    v = _lit(v)
    if v is None:
        return ()
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(float(x) for x in v)


# cv2.BORDER_CONSTANT, REPLICATE, REFLECT, WRAP, REFLECT_101; BORDER_ISOLATED (16)
# is a flag about ROIs of a larger image, meaningless for a whole array
_PAD_MODES = {1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}
_BORDER_ISOLATED = 16


def _border_rule(attrs, shapes, dtypes):
    s = _image_rule(attrs, shapes, dtypes, "_cvcopyMakeBorder")
    t, b, l, r = attrs["top"], attrs["bot"], attrs["left"], attrs["right"]
    if min(t, b, l, r) < 0:
        raise OpError("_cvcopyMakeBorder needs non-negative margins")
    if attrs["type"] & ~_BORDER_ISOLATED not in (0, 1, 2, 3, 4):
        raise OpError("_cvcopyMakeBorder: type=%d is not supported (0 constant, 1 replicate, "
                      "2 reflect, 3 wrap, 4 reflect_101)" % attrs["type"])
    return ((s[0] + t + b, s[1] + l + r, s[2]),), (dtypes[0],)


@register("_cvcopyMakeBorder", inputs=("src",), infer=_border_rule, params=[
    Param("top", p_int, doc="Top margin."), Param("bot", p_int, doc="Bottom margin."),
    Param("left", p_int, doc="Left margin."), Param("right", p_int, doc="Right margin."),
    Param("type", p_int, 0, "Filling type (default=cv2.BORDER_CONSTANT)."),
    Param("value", p_float, 0.0, "(Deprecated! Use ``values`` instead.) Fill with single "
          "value."),
    Param("values", _p_floats, (), "Fill with value(RGB[A] or gray), up to 4 channels."),
])
def _cvcopyMakeBorder(xp, src, out, top, bot, left, right, type=0, value=0.0, values=()):
    """_cvcopyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=()):
    pad an (H, W, C) image like cv2.copyMakeBorder."""
    pads = ((top, bot), (left, right), (0, 0))
    type &= ~_BORDER_ISOLATED
    if type == 0:
        c = src.shape[2]
        if values:
            fill = xp.asarray([values[i] if i < len(values) else 0.0 for i in range(c)])
        else:
            fill = xp.full((c,), value)
        out[...] = fill.astype(out.dtype) if out.dtype.kind == "f" else \
            xp.clip(xp.rint(fill), *_int_range(out.dtype)).astype(out.dtype)
        out[top:top + src.shape[0], left:left + src.shape[1]] = src
    else:
        out[...] = xp.pad(src, pads, mode=_PAD_MODES[type])


def _int_range(dt):
    info = np.iinfo(dt)
    return info.min, info.max
