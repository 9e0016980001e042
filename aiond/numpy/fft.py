"""``mx.np.fft``: NumPy's discrete Fourier transforms on mx.np arrays."""
from __future__ import annotations

from . import _front

__all__ = []
_front.populate(_front.ND, "np.fft", globals(), __name__)
