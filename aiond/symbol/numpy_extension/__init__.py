"""``mx.sym.npx`` (``mxnet.symbol.numpy_extension``): the deep-learning ops
of ``mx.npx`` on Symbols (the same front functions, building graph nodes)."""
from __future__ import annotations

import sys as _sys
import types as _types

from ...numpy import _front
from ...util import (is_np_array, is_np_shape, reset_np, set_np,  # noqa: F401
                     use_np, use_np_array, use_np_shape)
from ..numpy import _grouped
from ..numpy._symbol import SYM

__all__ = []


def _submodule(name, ns):
    mod = _types.ModuleType("%s.%s" % (__name__, name))
    mod.__all__ = []
    _front.populate(SYM, ns, mod.__dict__, mod.__name__, _grouped)
    _sys.modules.setdefault(mod.__name__, mod)
    return mod


_front.populate(SYM, "npx", globals(), __name__, _grouped)
random = _submodule("random", "npx.random")
image = _submodule("image", "npx.image")
