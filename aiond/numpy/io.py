"""``mx.np.io``: reading arrays from text (NumPy's ``genfromtxt``)."""
from __future__ import annotations

import numpy as _onp

from ..context import current_context
from .multiarray import array

__all__ = ["genfromtxt"]


def genfromtxt(*args, **kwargs):
    """NumPy's ``genfromtxt`` (same arguments), as an ``mx.np.ndarray`` of the
    parsed dtype on ``ctx`` (a keyword beyond NumPy's; the current device by
    default)."""
    ctx = kwargs.pop("ctx", None) or current_context()
    ret = _onp.genfromtxt(*args, **kwargs)
    return array(ret, dtype=ret.dtype, ctx=ctx)
