"""Image transforms (MXNet 1.9.1 ``gluon.data.vision.transforms``).

Each transform is a callable taking an image as an NDArray (then it returns
an NDArray) or a numpy array (then it returns numpy). ``ToTensor``,
``Normalize`` and ``Cast`` on NDArrays are engine ops and return at once;
``Resize``, ``CenterCrop`` and the flips compute with numpy (no image
library): ``Resize`` supports nearest (0) and bilinear (1) interpolation,
bilinear matching OpenCV's (what MXNet uses) to within 1 on uint8.

All of them are plain module-level classes, so they pickle to DataLoader
worker processes. (In MXNet they are Gluon Blocks; ``hybridize()`` is
accepted and does nothing.)
"""
from __future__ import annotations

import numbers

import numpy as np

from .... import ndarray as nd
from ....ndarray import NDArray

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop",
           "RandomFlipLeftRight", "RandomFlipTopBottom"]


class _Transform:
    def __call__(self, x, *args):
        return self.forward(x, *args)

    def forward(self, x):
        raise NotImplementedError

    def hybridize(self, active=True, **kwargs):
        """Accepted for MXNet compatibility; transforms run as they are."""

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (k.lstrip("_"), v) for k, v in vars(self).items()))


def _numpy_apply(x, fn):
    """Apply a numpy function to an NDArray or numpy image."""
    if isinstance(x, NDArray):
        out = fn(x.asnumpy())
        return nd.array(out, ctx=x.context, dtype=out.dtype)
    return fn(np.asarray(x))


class Compose(_Transform):
    """Apply ``transforms`` in order.

    >>> t = Compose([Resize(300), CenterCrop(256), ToTensor()])
    """

    def __init__(self, transforms):
        self._transforms = [t for t in transforms if t is not None]

    def forward(self, x, *args):
        for t in self._transforms:
            x = t(x, *args) if args else t(x)
        return x

    def __len__(self):
        return len(self._transforms)

    def __getitem__(self, i):
        return self._transforms[i]


class Cast(_Transform):
    """Cast to ``dtype`` (default float32)."""

    def __init__(self, dtype="float32"):
        self._dtype = dtype

    def forward(self, x):
        if isinstance(x, NDArray):
            return x.astype(self._dtype)
        return np.asarray(x).astype(self._dtype)


def _check_image(shape, what):
    if len(shape) not in (3, 4):
        raise ValueError("%s: input image must have shape (height, width, channels) or "
                         "(N, height, width, channels), but got %s" % (what, tuple(shape)))


class ToTensor(_Transform):
    """(H x W x C) or (N x H x W x C) in [0, 255] -> float32 (C x H x W) or
    (N x C x H x W) divided by 255 (whatever the input dtype, as in MXNet)."""

    def forward(self, x):
        _check_image(x.shape, "ToTensor")
        axes = (2, 0, 1) if len(x.shape) == 3 else (0, 3, 1, 2)
        if isinstance(x, NDArray):
            return x.astype("float32").transpose(axes) / 255.0
        return np.transpose(np.asarray(x, dtype=np.float32), axes) / np.float32(255.0)


class Normalize(_Transform):
    """``(x[c] - mean[c]) / std[c]`` on (C x H x W) or (N x C x H x W) tensors;
    a scalar (or 1-element) mean or std applies to every channel."""

    def __init__(self, mean=0.0, std=1.0):
        self._mean = mean
        self._std = std

    def _param(self, v, channels, name, shape):
        a = np.asarray(v, dtype=np.float32).reshape(-1)
        if a.size not in (1, channels):
            raise ValueError("Normalize: invalid %s for input with shape %s: %s must have "
                             "either 1 or %d elements, but got %s"
                             % (name, tuple(shape), name, channels, list(a)))
        return a

    def forward(self, x):
        shape = x.shape
        if len(shape) not in (3, 4):
            raise ValueError("Normalize: input must have shape (C, H, W) or (N, C, H, W), "
                             "but got %s" % (tuple(shape),))
        c = shape[-3]
        bshape = (c, 1, 1) if len(shape) == 3 else (1, c, 1, 1)
        mean = np.broadcast_to(self._param(self._mean, c, "mean", shape), (c,)).reshape(bshape)
        std = np.broadcast_to(self._param(self._std, c, "std", shape), (c,)).reshape(bshape)
        if isinstance(x, NDArray):
            dt = np.dtype(x.dtype)
            xf = x if dt == np.float32 else x.astype("float32")
            out = (xf - nd.array(mean, ctx=x.context)) / nd.array(std, ctx=x.context)
            return out if dt == np.float32 else out.astype(dt)
        x = np.asarray(x)
        out = (x.astype(np.float32) - mean) / std
        return out.astype(x.dtype, copy=False)


# --------------------------------------------------------------- resizing
def _src_index(out_len, in_len, interp):
    """Source indices and weights along one axis, as OpenCV computes them."""
    scale = in_len / out_len
    d = np.arange(out_len, dtype=np.float64)
    if interp == 0:
        i0 = np.minimum(np.floor(d * scale).astype(np.int64), in_len - 1)
        return i0, i0, np.zeros(out_len)
    f = (d + 0.5) * scale - 0.5
    i0 = np.floor(f).astype(np.int64)
    w = f - i0
    low = i0 < 0
    i0[low], w[low] = 0, 0.0
    high = i0 >= in_len - 1
    i0[high], w[high] = in_len - 1, 0.0
    return i0, np.minimum(i0 + 1, in_len - 1), w


def _resize_np(img, w, h, interp):
    """Resize (..., H, W, C) to (..., h, w, C): 0 nearest, 1 bilinear."""
    if interp not in (0, 1):
        raise NotImplementedError("aiond's Resize supports interpolation 0 (nearest) and "
                                  "1 (bilinear), got %r" % (interp,))
    H, W = img.shape[-3], img.shape[-2]
    if (H, W) == (h, w):
        return img.copy()
    y0, y1, wy = _src_index(h, H, interp)
    x0, x1, wx = _src_index(w, W, interp)
    if interp == 0:
        return img[..., y0, :, :][..., x0, :]
    f = img.astype(np.float64)
    top = f[..., y0, :, :]
    bot = f[..., y1, :, :]
    wy = wy.reshape(-1, 1, 1)
    rows = top * (1.0 - wy) + bot * wy
    wx = wx.reshape(-1, 1)
    out = rows[..., x0, :] * (1.0 - wx) + rows[..., x1, :] * wx
    if np.issubdtype(img.dtype, np.integer):
        info = np.iinfo(img.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return out.astype(img.dtype)


class Resize(_Transform):
    """Resize (H x W x C) or (N x H x W x C) images to ``size``: an int
    (a square, or with ``keep_ratio`` the short edge) or ``(width, height)``."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        self._size = size
        self._keep = keep_ratio
        self._interpolation = interpolation

    def _out_size(self, h, w):
        size = self._size
        if isinstance(size, numbers.Integral):
            size = (size,)
        size = tuple(int(s) for s in size)
        if len(size) == 1:
            s = size[0]
            if not self._keep:
                return s, s
            if h > w:
                return s, h * s // w
            return w * s // h, s
        if len(size) != 2:
            raise ValueError("Resize: size must be an int or (width, height), got %r"
                             % (self._size,))
        return size

    def forward(self, x):
        _check_image(x.shape, "Resize")
        w, h = self._out_size(x.shape[-3], x.shape[-2])
        return _numpy_apply(x, lambda a: _resize_np(a, w, h, self._interpolation))


def _scale_down(src_size, size):
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


class CenterCrop(_Transform):
    """Crop the center of an (H x W x C) image to ``size`` (int or (width,
    height)); an image smaller than ``size`` is cropped to its aspect ratio
    and resized up, as MXNet's ``image.center_crop``."""

    def __init__(self, size, interpolation=1):
        if isinstance(size, numbers.Number):
            size = (size, size)
        self._size = tuple(int(s) for s in size)
        self._interpolation = interpolation

    def _crop(self, a):
        if a.ndim != 3:
            raise ValueError("CenterCrop: input must have shape (H, W, C), got %s"
                             % (a.shape,))
        h, w = a.shape[:2]
        new_w, new_h = _scale_down((w, h), self._size)
        x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
        out = a[y0:y0 + new_h, x0:x0 + new_w]
        if (new_w, new_h) != self._size:
            return _resize_np(out, self._size[0], self._size[1], self._interpolation)
        return out.copy()

    def forward(self, x):
        return _numpy_apply(x, self._crop)


class RandomFlipLeftRight(_Transform):
    """Flip an (H x W x C) image left-right with probability 0.5 (numpy's RNG)."""

    def forward(self, x):
        if np.random.random() < 0.5:
            return _numpy_apply(x, lambda a: a[..., :, ::-1, :].copy())
        return x


class RandomFlipTopBottom(_Transform):
    """Flip an (H x W x C) image top-bottom with probability 0.5 (numpy's RNG)."""

    def forward(self, x):
        if np.random.random() < 0.5:
            return _numpy_apply(x, lambda a: a[..., ::-1, :, :].copy())
        return x
