"""Names MXNet 1.9.1 keeps in ``mxnet.symbol.symbol`` that aiond defines in
``symbol._functions`` (``histogram``, ``split_v2``, ``Symbol.split_v2``),
and ``mx.sym.sparse._contrib_round_ste`` / ``_contrib_sign_ste``."""
from __future__ import annotations

from ..ops import registry as _reg
from . import _functions, sparse as _sparse, symbol as _sym_module
from ._namespace import make_function
from .symbol import Symbol


def _split_v2(self, *args, **kwargs):
    """Convenience fluent method for :py:func:`split_v2`."""
    return _functions.split_v2(self, *args, **kwargs)


_split_v2.__name__ = "split_v2"
_split_v2.__qualname__ = "Symbol.split_v2"
if not hasattr(Symbol, "split_v2"):
    Symbol.split_v2 = _split_v2
for _name in ("histogram", "split_v2"):
    if not hasattr(_sym_module, _name):
        setattr(_sym_module, _name, getattr(_functions, _name))
for _name in ("_contrib_round_ste", "_contrib_sign_ste"):
    if not hasattr(_sparse, _name):
        setattr(_sparse, _name, make_function(_reg.get(_name), _name))
