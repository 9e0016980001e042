"""``mx.nd``: the NDArray API (MXNet 1.9.1 names)."""
from __future__ import annotations

import types as _types

from . import _namespace
from .ndarray import (NDArray, arange, array, concatenate, empty, eye, from_numpy, full,
                      linspace, ones, waitall, zeros)

_internal = _types.ModuleType("aiond.ndarray._internal")
# op functions and these names are made on first use: see populate_lazily
_namespace.populate_lazily(globals(), _internal.__dict__, {
    "random": (".random", None), "linalg": (".linalg", None), "contrib": (".contrib", None),
    "image": (".image", None), "sparse": (".sparse", None),
    "cast_storage": (".sparse", "cast_storage"),     # storage-aware: dense in, sparse out
    "CachedOp": (".cached_op", "CachedOp"), "from_dlpack": (".dlpack", "from_dlpack"),
    "to_dlpack_for_read": (".dlpack", "to_dlpack_for_read"),
    "to_dlpack_for_write": (".dlpack", "to_dlpack_for_write"),
    "io": (".io", None), "cached_op": (".cached_op", None), "dlpack": (".dlpack", None),
    "load": (".io", "load"), "load_frombuffer": (".io", "load_frombuffer"), "save": (".io", "save"),
    # mx.nd.np / mx.nd.npx: the NumPy front end, built on this package
    "numpy": (".numpy", None), "np": (".numpy", None),
    "numpy_extension": (".numpy_extension", None), "npx": (".numpy_extension", None),
    "register": (".register", None), "utils": (".utils", None),
    # MXNet's code tables (with its other names of mxnet.ndarray.ndarray)
    "_DTYPE_MX_TO_NP": ("._ndarray_names", "_DTYPE_MX_TO_NP"),
    "_DTYPE_NP_TO_MX": ("._ndarray_names", "_DTYPE_NP_TO_MX"),
    "_GRAD_REQ_MAP": ("._ndarray_names", "_GRAD_REQ_MAP")})

from ._functions import (add, divide, equal, greater, greater_equal, lesser,  # noqa: E402,F401
                         lesser_equal, logical_and, logical_or, logical_xor, maximum,
                         minimum, modulo, moveaxis, multiply, not_equal, onehot_encode,
                         power, subtract, true_divide, split_v2, histogram)
from . import _fluent  # noqa: E402,F401
from . import _ndarray_methods  # noqa: E402,F401  (depth_to_space, slice_assign, ...)
