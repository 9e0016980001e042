"""``mx.gluon.data``: datasets, samplers and the DataLoader (MXNet 1.9.1)."""
from .dataset import *  # noqa: F401,F403
from .dataset import __all__ as _dataset_all
from .sampler import *  # noqa: F401,F403
from .sampler import __all__ as _sampler_all
from .dist_sampler import SplitSampler  # noqa: F401
from .dataloader import *  # noqa: F401,F403
from .dataloader import __all__ as _dataloader_all
from . import vision  # noqa: F401

__all__ = _dataset_all + _sampler_all + _dataloader_all + ["SplitSampler", "vision"]
