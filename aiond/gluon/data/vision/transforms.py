"""Image transforms (MXNet 1.9.1 ``gluon.data.vision.transforms``).

Transforms are Gluon Blocks over NDArray images: the HybridBlocks (Cast,
ToTensor, Normalize, Resize, CropResize, the flips and color jitters) call
the ``image`` operators through ``F`` and so also run hybridized, inside
Symbol graphs; the others (CenterCrop, RandomResizedCrop, Rotate,
RandomRotation) call ``mx.image``'s functions. ``Compose`` chains them,
hybridizing runs of consecutive HybridBlocks; ``RandomApply`` applies a
transform with probability ``p``. Bad
images (wrong rank, channel count, sizes) raise MXNetError from the ops.
Blocks pickle, so they go to DataLoader worker processes. As before in
aiond, a numpy image may be given too: it goes through as an NDArray and
the result comes back as numpy.
"""
from __future__ import annotations

import random

import numpy as np

from ...block import Block, HybridBlock
from ...nn import Sequential, HybridSequential
from .... import image
from ....base import numeric_types
from ....util import is_np_array

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate",
           "RandomRotation", "RandomResizedCrop", "CropResize", "CenterCrop", "Resize",
           "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness",
           "RandomContrast", "RandomSaturation", "RandomHue", "RandomColorJitter",
           "RandomLighting", "RandomApply"]


def _image_ns(F):
    return F.npx if is_np_array() else F


class _NumpyIn(object):
    """numpy image in, numpy image out (the transform itself runs on NDArrays)."""

    def __call__(self, x, *args):
        if isinstance(x, np.ndarray):
            from .... import ndarray as nd
            out = super(_NumpyIn, self).__call__(nd.array(x, dtype=x.dtype), *args)
            return out.asnumpy() if isinstance(out, nd.NDArray) else out
        return super(_NumpyIn, self).__call__(x, *args)


class Compose(_NumpyIn, Sequential):
    """Sequentially composes multiple transforms; consecutive HybridBlocks are
    grouped into a hybridized HybridSequential.

    >>> transformer = transforms.Compose([transforms.Resize(300),
    ...                                   transforms.CenterCrop(256),
    ...                                   transforms.ToTensor()])
    """
    def __init__(self, transforms):
        super(Compose, self).__init__()
        hybrid = []
        for t in list(transforms) + [None]:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                block = HybridSequential()
                for h in hybrid:
                    block.add(h)
                block.hybridize()
                self.add(block)
            hybrid = []
            if t is not None:
                self.add(t)


class Cast(_NumpyIn, HybridBlock):
    """Cast inputs to a specific data type (default float32)."""
    def __init__(self, dtype='float32'):
        super(Cast, self).__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return _image_ns(F).cast(x, self._dtype)


class ToTensor(_NumpyIn, HybridBlock):
    """(H x W x C) or (N x H x W x C) images in [0, 255] to float32 (C x H x W)
    or (N x C x H x W) tensors in [0, 1)."""
    def __init__(self):
        super(ToTensor, self).__init__()

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.to_tensor(x)


class Normalize(_NumpyIn, HybridBlock):
    """Normalize a (C x H x W) or (N x C x H x W) tensor with mean and standard
    deviation per channel: ``(x[c] - mean[c]) / std[c]``."""
    def __init__(self, mean=0.0, std=1.0):
        super(Normalize, self).__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.normalize(x, self._mean, self._std)


def _float32_only(x):
    if x.dtype is not np.float32 and np.dtype(x.dtype) != np.float32:
        raise TypeError("This transformation only supports float32. "
                        "Consider calling it after ToTensor")


class Rotate(_NumpyIn, Block):
    """Rotate a (C x H x W) or (N x C x H x W) float32 tensor by
    ``rotation_degrees``, zooming in or out so that no padding shows or the
    whole image stays inside."""
    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super(Rotate, self).__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _float32_only(x)
        return image.imrotate(x, *self._args)


class RandomRotation(_NumpyIn, Block):
    """Rotate by an angle drawn from ``angle_limits`` (lower, upper), with
    probability ``rotate_with_proba``."""
    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super(RandomRotation, self).__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if rotate_with_proba < 0 or rotate_with_proba > 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _float32_only(x)
        return image.random_rotate(x, *self._args)


class RandomResizedCrop(_NumpyIn, Block):
    """Crop a random area (``scale`` of the image's area, aspect ratio in
    ``ratio``) of an (H x W x C) image and resize it to ``size``."""
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super(RandomResizedCrop, self).__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class CropResize(_NumpyIn, HybridBlock):
    """Crop the (width x height) area at (x, y) of (H x W x C) or
    (N x H x W x C) images, then resize it to ``size`` if given."""
    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super(CropResize, self).__init__()
        self._x = x
        self._y = y
        self._width = width
        self._height = height
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        F = _image_ns(F)
        out = F.image.crop(x, self._x, self._y, self._width, self._height)
        if self._size:
            interp = 1 if self._interpolation is None else self._interpolation
            out = F.image.resize(out, self._size, False, interp)
        return out


class CenterCrop(_NumpyIn, Block):
    """Crop the center of an (H x W x C) image to ``size`` (int or (W, H)),
    resizing up where the image is smaller."""
    def __init__(self, size, interpolation=1):
        super(CenterCrop, self).__init__()
        if isinstance(size, numeric_types):
            size = (size, size)
        self._args = (size, interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class Resize(_NumpyIn, HybridBlock):
    """Resize (H x W x C) or (N x H x W x C) images to ``size`` (int or (W, H);
    with ``keep_ratio`` an int sizes the short edge)."""
    def __init__(self, size, keep_ratio=False, interpolation=1):
        super(Resize, self).__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.resize(x, self._size, self._keep, self._interpolation)


class RandomFlipLeftRight(_NumpyIn, HybridBlock):
    """Flip images left-right with probability 0.5."""
    def __init__(self):
        super(RandomFlipLeftRight, self).__init__()

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_flip_left_right(x)


class RandomFlipTopBottom(_NumpyIn, HybridBlock):
    """Flip images top-bottom with probability 0.5."""
    def __init__(self):
        super(RandomFlipTopBottom, self).__init__()

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_flip_top_bottom(x)


class RandomBrightness(_NumpyIn, HybridBlock):
    """Scale an (H x W x C) image by a factor from
    [max(0, 1 - brightness), 1 + brightness]."""
    def __init__(self, brightness):
        super(RandomBrightness, self).__init__()
        self._args = (max(0, 1 - brightness), 1 + brightness)

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_brightness(x, *self._args)


class RandomContrast(_NumpyIn, HybridBlock):
    """Jitter contrast by a factor from [max(0, 1 - contrast), 1 + contrast]."""
    def __init__(self, contrast):
        super(RandomContrast, self).__init__()
        self._args = (max(0, 1 - contrast), 1 + contrast)

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_contrast(x, *self._args)


class RandomSaturation(_NumpyIn, HybridBlock):
    """Jitter saturation by a factor from [max(0, 1 - saturation), 1 + saturation]."""
    def __init__(self, saturation):
        super(RandomSaturation, self).__init__()
        self._args = (max(0, 1 - saturation), 1 + saturation)

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_saturation(x, *self._args)


class RandomHue(_NumpyIn, HybridBlock):
    """Rotate the hue by a factor from [max(0, 1 - hue), 1 + hue] (times 360
    degrees; MXNet's range, kept as is)."""
    def __init__(self, hue):
        super(RandomHue, self).__init__()
        self._args = (max(0, 1 - hue), 1 + hue)

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_hue(x, *self._args)


class RandomColorJitter(_NumpyIn, HybridBlock):
    """Randomly jitter brightness, contrast, saturation and hue, in a random order."""
    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super(RandomColorJitter, self).__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_color_jitter(x, *self._args)


class RandomLighting(_NumpyIn, HybridBlock):
    """Add AlexNet-style PCA-based noise of intensity ``alpha`` to an image."""
    def __init__(self, alpha):
        super(RandomLighting, self).__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return _image_ns(F).image.random_lighting(x, self._alpha)


class RandomApply(_NumpyIn, Sequential):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``)."""
    def __init__(self, transforms, p=0.5):
        super(RandomApply, self).__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)
