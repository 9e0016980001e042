"""``mx.gluon.data.vision``: image datasets read from local files, and transforms."""
from .datasets import *  # noqa: F401,F403
from .datasets import __all__ as _datasets_all
from . import transforms  # noqa: F401
from .image_datasets import ImageRecordDataset, ImageFolderDataset  # noqa: F401

__all__ = _datasets_all + ["transforms", "ImageRecordDataset", "ImageFolderDataset"]
