"""``mx.nd``: the NDArray API (MXNet 1.9.1 names)."""
from __future__ import annotations

import types as _types

from . import _namespace
from .io import load, load_frombuffer, save
from .ndarray import (NDArray, arange, array, concatenate, empty, eye, from_numpy, full,
                      linspace, ones, waitall, zeros)

_internal = _types.ModuleType("aiond.ndarray._internal")
_namespace.populate(globals(), _internal.__dict__)

from . import random  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import _fluent  # noqa: E402,F401
