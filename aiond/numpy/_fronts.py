"""Every module of NumPy-interface front functions (see ``_front``): one
import line per family, so that ``_front.populate`` finds them all."""
from __future__ import annotations

from . import _f_binary  # noqa: F401  (add, subtract, ..., comparisons, logical_*)
from . import _f_index  # noqa: F401  (_getitem: a Symbol's basic indexing)
from . import _f_unary  # noqa: F401  (unary ufuncs, around, nan_to_num, clip, shares_memory)
from . import _f_random  # noqa: F401  (np.random, npx.random samplers)
from . import _f_npx  # noqa: F401  (npx, npx.image: MXNet's deep-learning ops)
from . import _f_creation  # noqa: F401  (zeros, ones, full, *_like, arange, linspace, eye, windows, ...)
from . import _f_shape  # noqa: F401  (reshape, transpose, concatenate, split, flip, pad, insert, where, take, ...)
from . import _f_reduce  # noqa: F401  (sum, mean, std, argmax, cumsum, sort, unique, ...)
from . import _f_linalg  # noqa: F401  (dot, matmul, tensordot, einsum, np.linalg)
