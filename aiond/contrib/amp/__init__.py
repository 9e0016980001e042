"""Automatic mixed precision (``mx.contrib.amp``): see ``amp.py``."""
from . import lists  # noqa: F401
from . import loss_scaler  # noqa: F401
from . import amp  # noqa: F401
from .amp import *  # noqa: F401,F403
