"""``mx.gluon.contrib.estimator``: MXNet 1.9.1's high-level training loop.

``Estimator`` runs fit/evaluate over Gluon ``DataLoader``s and drives event
handlers (``event_handler``) at train/epoch/batch begin and end; the per-batch
forward/backward lives in a replaceable ``BatchProcessor``."""
from . import estimator  # noqa: F401
from . import event_handler  # noqa: F401
from . import batch_processor  # noqa: F401
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
from .batch_processor import *  # noqa: F401,F403
