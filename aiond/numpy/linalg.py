"""``mx.np.linalg``: the front functions of namespace ``np.linalg`` (norm,
svd, cholesky, inv, det, slogdet, solve, pinv, tensorinv, tensorsolve, eig,
eigh, eigvals, eigvalsh; see ``_f_linalg``) bound to arrays."""
from __future__ import annotations

__all__ = []

from . import _front as _front  # noqa: E402
_front.populate(_front.ND, "np.linalg", globals(), __name__)
