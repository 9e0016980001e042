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
                         power, subtract, true_divide, split_v2, histogram)
from . import random  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from . import contrib  # noqa: E402,F401
from . import image  # noqa: E402,F401
from . import _fluent  # noqa: E402,F401
from . import sparse  # noqa: E402,F401
from .sparse import cast_storage  # noqa: E402,F401  (storage-aware: dense in, sparse out)
from .cached_op import CachedOp  # noqa: E402,F401
from .dlpack import from_dlpack, to_dlpack_for_read, to_dlpack_for_write  # noqa: E402,F401
from ._ndarray_names import _DTYPE_MX_TO_NP, _DTYPE_NP_TO_MX, _GRAD_REQ_MAP  # noqa: E402,F401
from . import register, utils  # noqa: E402,F401  (issue 31: mx.nd.register, mx.nd.utils)

_LAZY = {"numpy": "numpy", "np": "numpy", "numpy_extension": "numpy_extension",
         "npx": "numpy_extension"}


def __getattr__(name):
    # mx.nd.np / mx.nd.npx load the NumPy front end, which is built on this package
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError("module 'aiond.ndarray' has no attribute %r" % name)
    import importlib
    mod = importlib.import_module("%s.%s" % (__name__, sub))
    globals()[name] = mod
    return mod
