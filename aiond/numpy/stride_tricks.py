"""``mxnet.numpy.stride_tricks``: broadcast_arrays (arrays broadcast against each other), the ``mx.np`` front function."""
from __future__ import annotations

from . import _front, _fronts  # noqa: F401  (_fronts registers the front functions)

__all__ = ["broadcast_arrays"]

broadcast_arrays = _front.bind(_front.ND, _front.table("np")["broadcast_arrays"], "broadcast_arrays", "aiond.numpy")
