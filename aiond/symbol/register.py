"""``mx.sym.register``: in MXNet 1.9.1 the module that turns the C library's
operator registry into ``mx.sym`` functions; aiond builds them from its own
registry (``aiond.symbol._namespace``). It keeps MXNet's public names:
``SymbolBase``, the base type of every Symbol (``isinstance(s, SymbolBase)``),
and the AdamW update functions."""
from __future__ import annotations

import abc

from ._contrib_adamw import adamw_update, mp_adamw_update  # noqa: F401
from .symbol import Symbol

__all__ = ["SymbolBase", "adamw_update", "mp_adamw_update"]


class SymbolBase(abc.ABC):
    """The base type of Symbol. MXNet's holds a C handle; aiond's symbols
    are Python graphs, so this type is abstract: it cannot be built, and
    every aiond Symbol is an instance of it."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise TypeError("%s is abstract in aiond (it has no C handles); create symbols with mx.sym.var() and the mx.sym operators"
                        % cls.__name__)


SymbolBase.register(Symbol)
