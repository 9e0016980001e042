"""``mx.np`` functions that are properties of arrays rather than operators
(``ndim``, ``size``). Every operator of ``mx.np`` is a front function
(``_f_*.py``, see ``_front``), shared with ``mx.sym.np``."""
from __future__ import annotations

import numpy as _np

from ..ndarray.ndarray import NDArray

__all__ = ["ndim", "size"]


def ndim(a):
    """Number of dimensions."""
    return a.ndim if isinstance(a, NDArray) else _np.ndim(a)


def size(a, axis=None):
    """Number of elements (along ``axis``)."""
    if axis is None:
        return a.size if isinstance(a, NDArray) else _np.size(a)
    return a.shape[axis]
