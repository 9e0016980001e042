"""``mx.np`` (``mxnet.numpy``): NumPy-compatible arrays and functions on the engine.

    from aiond import np, npx
    npx.set_np()
    a = np.ones((2, 3))
    (a.sum(axis=0) * 2).asnumpy()      # array([4., 4., 4.], dtype=float32)

Arrays are :class:`ndarray` (an ``mx.nd.NDArray`` with NumPy semantics: 0-d
and zero-size shapes, dtype promotion, bool comparisons). Creation functions
default to float32, as MXNet's do.
"""
from __future__ import annotations

from .fallback import *  # noqa: F401,F403  (NumPy's own functions; mx.np's own override them)
from . import fallback, fallback_linalg  # noqa: F401
from . import random  # noqa: F401
from . import linalg  # noqa: F401
from . import fft  # noqa: F401
from . import io, arrayprint  # noqa: F401
from .io import genfromtxt  # noqa: F401
from .arrayprint import set_printoptions  # noqa: F401
from .multiarray import *  # noqa: F401,F403
from .multiarray import ndarray  # noqa: F401
from ._op import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
from . import _front as _front
from . import _dynamic  # noqa: F401,E402  (the DYNAMIC entries of value-shaped ops)

__all__ = [n for n in dir() if not n.startswith("_")]
_front.populate(_front.ND, "np", globals(), __name__)
