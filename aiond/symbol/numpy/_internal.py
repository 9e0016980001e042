"""``mx.sym.np._internal`` (MXNet's ``_npi`` for symbols): the registry's
``_npi_<name>`` ops as functions ``<name>`` building ``_Symbol`` graph
nodes; built on first use."""
from __future__ import annotations


def _np_symbol(res):
    from ._symbol import _Symbol
    return _Symbol._from(res._outputs)


def __getattr__(name):
    from ...numpy._front import npi_function
    from .._namespace import make_function
    return npi_function(globals(), __name__, name, make_function, _np_symbol)
