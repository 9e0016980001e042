"""``mx.np.arrayprint``: how ``mx.np`` arrays print."""
from __future__ import annotations

import numpy as _onp

__all__ = ["set_printoptions"]


def set_printoptions(precision=None, threshold=None, **kwarg):
    """Digits of precision (default 8) and the element count past which
    arrays print summarised (default 1000), for ``mx.np`` arrays (they print
    through NumPy); MXNet supports only these two options."""
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions only supports parameters "
                                  "precision and threshold for now.")
    _onp.set_printoptions(precision=precision, threshold=threshold)
