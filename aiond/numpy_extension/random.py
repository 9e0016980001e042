"""``npx.random``: seeding."""
from __future__ import annotations

from ..random import seed  # noqa: F401

__all__ = ["seed"]


from ..numpy import _front as _front  # noqa: E402
_front.populate(_front.ND, "npx.random", globals(), __name__)
