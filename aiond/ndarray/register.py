"""``mx.nd.register``: in MXNet 1.9.1 the module that turns the C library's
operator registry into ``mx.nd`` functions; aiond builds them from its own
registry (``aiond.ops.registry``, ``aiond.ndarray._namespace``). It keeps
MXNet's public names: ``NDArrayBase``, the base type of every NDArray
(``isinstance(x, NDArrayBase)``), and the AdamW update functions."""
from __future__ import annotations

import abc

from .contrib_adamw import adamw_update, mp_adamw_update  # noqa: F401
from .ndarray import NDArray
from .sparse import BaseSparseNDArray

__all__ = ["NDArrayBase", "adamw_update", "mp_adamw_update"]


class NDArrayBase(abc.ABC):
    """The base type of NDArray and the sparse arrays. MXNet's holds a C
    handle; aiond's arrays have none, so this type is abstract: it cannot be
    built, and every aiond NDArray is an instance of it."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("%s is abstract in aiond (it has no C handles); create arrays with mx.nd.array(), mx.nd.zeros(), ..."
                        % cls.__name__)


NDArrayBase.register(NDArray)
NDArrayBase.register(BaseSparseNDArray)
