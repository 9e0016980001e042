"""``mx.np.linalg``: the front functions of namespace ``np.linalg`` (norm,
svd, cholesky, inv, det, slogdet, solve, pinv, tensorinv, tensorsolve, eig,
eigh, eigvals, eigvalsh; see ``_f_linalg``) bound to arrays."""
from __future__ import annotations

__all__ = []

from .fallback_linalg import *  # noqa: E402,F401,F403  (NumPy's functions MXNet serves on the host)
from . import fallback_linalg as _fallback_linalg  # noqa: E402
__all__ += _fallback_linalg.__all__

from . import _front as _front  # noqa: E402
_front.populate(_front.ND, "np.linalg", globals(), __name__)
