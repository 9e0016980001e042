"""``mx.np.linalg``: norms (more to come)."""
from __future__ import annotations

import numpy as _np

from ..base import integer_types
from . import _op

__all__ = ["norm"]

from .fallback_linalg import *  # noqa: E402,F401,F403  (NumPy's cond, lstsq, qr, ...)
from . import fallback_linalg as _fallback_linalg  # noqa: E402
__all__ += _fallback_linalg.__all__


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Frobenius/2-norm (default), or the 1-/inf-norms of vectors."""
    x = _op._arr(x)
    if ord is None or ord == "fro" or ord == 2 and (axis is None and x.ndim == 1 or
                                                   isinstance(axis, integer_types)):
        if ord == "fro" and axis is not None and isinstance(axis, integer_types):
            raise ValueError("Invalid norm order 'fro' for vectors")
        xf = x if x.dtype.kind == "f" else x.astype(_np.float32)
        return _op.sqrt(_op.sum(xf * xf, axis=axis, keepdims=keepdims))  # noqa: F821
    if ord == 1 and (axis is None and x.ndim == 1 or isinstance(axis, integer_types)):
        return _op.sum(_op.absolute(x), axis=axis, keepdims=keepdims)
    if ord in (_np.inf, "inf") and (axis is None and x.ndim == 1 or
                                   isinstance(axis, integer_types)):
        return _op.max(_op.absolute(x), axis=axis, keepdims=keepdims)
    raise NotImplementedError("norm: ord=%r with axis=%r is not supported" % (ord, axis))


from . import _front as _front  # noqa: E402
_front.populate(_front.ND, "np.linalg", globals(), __name__)
