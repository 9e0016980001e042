"""``npx.random``: seeding, and the samplers NumPy lacks (``bernoulli``,
``normal_n``, ``uniform_n``: front functions shared with ``mx.sym.npx.random``)."""
from __future__ import annotations

from ..random import seed as _seed

__all__ = ["seed"]


def seed(seed, ctx="all"):  # noqa: A002 - MXNet's argument name
    """Seed the generator of ``ctx`` (every device with ``'all'``), as ``mx.random.seed``."""
    _seed(seed, ctx)


from ..numpy import _front as _front  # noqa: E402
_front.populate(_front.ND, "npx.random", globals(), __name__)
