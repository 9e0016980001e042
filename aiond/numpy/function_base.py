"""``mxnet.numpy.function_base``: meshgrid (coordinate matrices), the ``mx.np`` front function."""
from __future__ import annotations

from . import _front, _fronts  # noqa: F401  (_fronts registers the front functions)

__all__ = ["meshgrid"]

meshgrid = _front.bind(_front.ND, _front.table("np")["meshgrid"], "meshgrid", "aiond.numpy")
