"""``mx.nd``: the NDArray API (MXNet 1.9.1 names)."""
from __future__ import annotations

import types as _types

from . import _namespace
from .io import load, load_frombuffer, save
from .ndarray import (NDArray, arange, array, concatenate, empty, eye, from_numpy, full,
                      linspace, ones, waitall, zeros)

_internal = _types.ModuleType("aiond.ndarray._internal")
_namespace.populate(globals(), _internal.__dict__)

from ._functions import (add, divide, equal, greater, greater_equal, lesser,  # noqa: E402,F401
                         lesser_equal, logical_and, logical_or, logical_xor, maximum,
                         minimum, modulo, moveaxis, multiply, not_equal, onehot_encode,
                         power, subtract, true_divide)
from . import random  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import contrib  # noqa: E402,F401
from . import image  # noqa: E402,F401
from . import _fluent  # noqa: E402,F401
