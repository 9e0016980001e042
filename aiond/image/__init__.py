# Licensed to the Apache Software Foundation (ASF) under the Apache License,
# Version 2.0; ported from MXNet 1.9.1's python/mxnet/image/__init__.py.
"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping,
augmenters, ``ImageIter`` and the detection iterator/augmenters, as in
MXNet 1.9.1."""
from . import image  # noqa: F401
from .image import recordio  # noqa: F401  (mx.image.recordio, as MXNet's star import exports it)
from .image import *  # noqa: F401,F403
from .image import (imread, imresize, imdecode, scale_down, copyMakeBorder,  # noqa: F401
                    resize_short, fixed_crop, random_crop, center_crop, color_normalize,
                    random_size_crop, imrotate, random_rotate, ImageIter)
from . import detection  # noqa: F401
from . import detection as det  # noqa: F401
from .detection import *  # noqa: F401,F403
from .detection import ImageDetIter, CreateDetAugmenter  # noqa: F401
