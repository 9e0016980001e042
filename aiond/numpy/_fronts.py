"""Every module of NumPy-interface front functions (see ``_front``): one
import line per family, so that ``_front.populate`` finds them all."""
from __future__ import annotations

from . import _f_binary  # noqa: F401  (add, subtract, ..., comparisons, logical_*)
from . import _f_index  # noqa: F401  (_getitem: a Symbol's basic indexing)
from . import _f_reduce  # noqa: F401  (sum, mean, std, argmax, cumsum, sort, unique, ...)
from . import _f_linalg  # noqa: F401  (dot, matmul, tensordot, einsum, np.linalg)
