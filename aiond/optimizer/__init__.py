"""``mx.optimizer``: weight update rules (MXNet 1.9.1 names and numbers)."""
from . import optimizer  # noqa: F401
from .optimizer import *  # noqa: F401,F403
from .optimizer import Optimizer, create, register  # noqa: F401
from .updater import Updater, get_updater  # noqa: F401
from . import contrib  # noqa: F401,E402  (mx.optimizer.contrib.GroupAdaGrad)

__all__ = optimizer.__all__ + ['Updater', 'get_updater', 'contrib']
