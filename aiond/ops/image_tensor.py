"""MXNet 1.9.1's ``_image_*`` ops (src/operator/image/): the ``mx.nd.image`` /
``mx.sym.image`` namespace that Gluon's vision transforms and GluonCV's
presets call: ``to_tensor``, ``flip_left_right``, ``flip_top_bottom``,
``resize`` (cv2's sampling rules, as ``_cvimresize``) and ``crop``
(``normalize`` is in image.py). Images are (H, W, C) or (N, H, W, C);
tensors (C, H, W) or (N, C, H, W).

Where MXNet's gradient is ill-formed (to_tensor's is a copy of the (C, H, W)
output gradient into the (H, W, C) input), aiond gives the true gradient
(the output gradient transposed back and divided by 255).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .cvimage import resize_image
from .registry import Param, _lit, p_bool, p_int, register

_F32 = np.dtype(np.float32)


def _p_ituple(v):
    v = _lit(v)
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(int(x) for x in v)


def _one(shapes, what):
    if len(shapes) != 1:
        raise OpError("%s takes 1 input, got %d" % (what, len(shapes)))
    return tuple(shapes[0])


def _image_nd(s, what, layout="(height, width, channels)"):
    if len(s) not in (3, 4):
        raise ShapeError("%s: input must have shape %s or (N, %s), got %s"
                         % (what, layout, layout[1:-1], fmt(s)))


# ================================================================= to_tensor


def _tt_rule(attrs, shapes, dtypes):
    s = _one(shapes, "to_tensor")
    _image_nd(s, "to_tensor")
    o = (s[2], s[0], s[1]) if len(s) == 3 else (s[0], s[3], s[1], s[2])
    return (o,), (_F32,)


@register("_image_to_tensor", infer=_tt_rule, aliases=("_npx__image_to_tensor",))
def _image_to_tensor(xp, data, out):
    """image.to_tensor(data): (H, W, C) or (N, H, W, C) in [0, 255] -> float32
    (C, H, W) or (N, C, H, W) in [0, 1]."""
    axes = (2, 0, 1) if data.ndim == 3 else (0, 3, 1, 2)
    xp.divide(xp.transpose(data, axes).astype(np.float32), np.float32(255.0), out=out)


# ==================================================================== flips


def _flip_rule(attrs, shapes, dtypes):
    s = _one(shapes, "flip")
    _image_nd(s, "flip")
    return (s,), (dtypes[0],)


@register("_image_flip_left_right", infer=_flip_rule, aliases=("_npx__image_flip_left_right",))
def _image_flip_left_right(xp, data, out):
    """image.flip_left_right(data): reverse the width axis of (N,) H, W, C images."""
    xp.copyto(out, xp.flip(data, axis=-2))


@register("_image_flip_top_bottom", infer=_flip_rule, aliases=("_npx__image_flip_top_bottom",))
def _image_flip_top_bottom(xp, data, out):
    """image.flip_top_bottom(data): reverse the height axis of (N,) H, W, C images."""
    xp.copyto(out, xp.flip(data, axis=-3))


# ============================================================= resize / crop


def _resize_hw(attrs, h, w):
    size = attrs["size"]
    if len(size) not in (1, 2):
        raise OpError("image.resize: size must have 1 or 2 elements (width, height), got %s"
                      % (size,))
    if len(size) == 1:
        if size[0] <= 0:
            raise OpError("image.resize: size should be greater than 0, got %d" % size[0])
        if not attrs["keep_ratio"]:
            return size[0], size[0]
        if h > w:
            return int(h * size[0] / w), size[0]
        return size[0], int(w * size[0] / h)
    if size[0] <= 0 or size[1] <= 0:
        raise OpError("image.resize: width and height must be > 0, got %s" % (size,))
    return size[1], size[0]


def _resize_rule(attrs, shapes, dtypes):
    s = _one(shapes, "resize")
    _image_nd(s, "resize")
    if attrs["interp"] not in (0, 1, 2, 3, 4):
        raise OpError("image.resize: interp=%d is not an OpenCV interpolation (0-4)"
                      % attrs["interp"])
    h, w = _resize_hw(attrs, s[-3], s[-2])
    return (s[:-3] + (h, w, s[-1]),), (dtypes[0],)


@register("_image_resize", infer=_resize_rule, inline=False, aliases=("_npx__image_resize",),
          params=[Param("size", _p_ituple, (), "Size of new image. Could be (width, height) or "
                        "(size)"),
                  Param("keep_ratio", p_bool, False, "Whether to resize the short edge or both "
                        "edges to `size`, if size is give as an integer."),
                  Param("interp", p_int, 1, "Interpolation method for resizing (cv2's codes).")])
def _image_resize(xp, data, out, size=(), keep_ratio=False, interp=1):
    """image.resize(data, size, keep_ratio=False, interp=1): resize (N,) H, W, C
    images like cv2.resize."""
    h, w = out.shape[-3], out.shape[-2]
    if data.ndim == 3:
        out[...] = resize_image(data, w, h, interp, xp)
    else:
        for i in range(data.shape[0]):
            out[i] = resize_image(data[i], w, h, interp, xp)


def _crop_rule(attrs, shapes, dtypes):
    s = _one(shapes, "crop")
    _image_nd(s, "crop")
    x, y, w, h = attrs["x"], attrs["y"], attrs["width"], attrs["height"]
    H, W = s[-3], s[-2]
    if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > W or y + h > H:
        raise OpError("image.crop: the area x=%d, y=%d, width=%d, height=%d is not inside "
                      "an image of height %d and width %d" % (x, y, w, h, H, W))
    return (s[:-3] + (h, w, s[-1]),), (dtypes[0],)


@register("_image_crop", infer=_crop_rule, aliases=("_npx__image_crop",), params=[
    Param("x", p_int, doc="Left boundary of the cropping area."),
    Param("y", p_int, doc="Top boundary of the cropping area."),
    Param("width", p_int, doc="Width of the cropping area."),
    Param("height", p_int, doc="Height of the cropping area."),
])
def _image_crop(xp, data, out, x, y, width, height):
    """image.crop(data, x, y, width, height): crop (N,) H, W, C images."""
    xp.copyto(out, data[..., y:y + height, x:x + width, :])


# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


@register("_backward_image_to_tensor", inputs=("ograd",),
          infer=lambda a, s, d: (((s[0][1], s[0][2], s[0][0]) if len(s[0]) == 3 else
                                  (s[0][0], s[0][2], s[0][3], s[0][1]),), (d[0],)))
def _backward_image_to_tensor(xp, ograd, out):
    """Gradient of image.to_tensor: the output gradient in the image layout, / 255."""
    axes = (1, 2, 0) if ograd.ndim == 3 else (0, 2, 3, 1)
    xp.divide(xp.transpose(ograd, axes), np.float32(255.0), out=out, casting="unsafe")


set_grads({
    "_image_to_tensor": lambda F, a, ins, outs, og: [
        F._internal._backward_image_to_tensor(og[0])],
    "_image_flip_left_right": lambda F, a, ins, outs, og: [F._internal._image_flip_left_right(
        og[0])],
    "_image_flip_top_bottom": lambda F, a, ins, outs, og: [F._internal._image_flip_top_bottom(
        og[0])],
})
