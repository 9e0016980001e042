"""``mx.sym.np`` (``mxnet.symbol.numpy``): the NumPy interface on Symbols.

Every function is the ``mx.np`` front function of the same name, building
graph nodes instead of pushing ops, so ``F.np.<name>`` in a HybridBlock means
the same imperatively and hybridized::

    x = mx.sym.var('x').as_np_ndarray()
    y = mx.sym.np.sum(x * 2, axis=0)        # an _Symbol
    y.as_nd_ndarray().eval(x=mx.nd.ones((2, 3)))
"""
from __future__ import annotations

import builtins as _builtins
import sys as _sys
import types as _types

from ...numpy import _front
from ..symbol import Group as _Group
from ..symbol import Symbol as _Sym
from ._symbol import SYM, _Symbol

__all__ = ["_Symbol"]


def _grouped(fn):
    """A list of Symbols returned to the user becomes one grouped _Symbol,
    as MXNet's symbol functions return (a list of one stays a list: MXNet's
    split gives ``[sym]`` for one piece)."""
    def wrapper(*args, **kwargs):
        res = fn(*args, **kwargs)
        if isinstance(res, (list, tuple)) and len(res) > 1 and _builtins.all(
                isinstance(r, _Sym) for r in res):
            return _Group(list(res), _Symbol)
        return res
    for k in ("__name__", "__qualname__", "__doc__", "__module__", "__signature__"):
        if hasattr(fn, k):
            setattr(wrapper, k, getattr(fn, k))
    return wrapper


def _submodule(name, ns):
    mod = _types.ModuleType("%s.%s" % (__name__, name))
    mod.__all__ = []
    _front.populate(SYM, ns, mod.__dict__, mod.__name__, _grouped)
    _sys.modules.setdefault(mod.__name__, mod)
    return mod


_front.populate(SYM, "np", globals(), __name__, _grouped)
linalg = _submodule("linalg", "np.linalg")
random = _submodule("random", "np.random")
fft = _submodule("fft", "np.fft")
from . import _internal  # noqa: E402,F401  (MXNet's _npi: the _npi_* ops by their short names)
