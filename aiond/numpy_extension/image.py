"""``npx.image``: image ops on mx.np arrays (MXNet's ``mx.npx.image``)."""
from __future__ import annotations

from ..numpy import _front

__all__ = []
_front.populate(_front.ND, "npx.image", globals(), __name__)
