"""``mx.np.random``: NumPy-style sampling (``size=``, 0-d results for
``size=None``, array parameters broadcast), as front functions
(``_f_random``) shared with ``mx.sym.np.random``. Draws come from the
context's generator inside the engine, so ``mx.random.seed`` (or
``npx.random.seed``) makes them reproducible."""
from __future__ import annotations

from . import _front as _front

__all__ = []
_front.populate(_front.ND, "np.random", globals(), __name__)
