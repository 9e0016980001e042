"""``mx.library``: MXNet's loader of compiled extension libraries.

MXNet 1.9.1's ``mx.library.load(path)`` ``dlopen``s a ``.so``/``.dll``
built against MXNet's C extension API (``lib_api.h``) and registers the
custom operators, partitioners and graph passes it contains. aiond runs no
MXNet C runtime, so such a library has nothing to register into:
``load`` checks the path as MXNet does, then raises an ``MXNetError`` that
says so. Write the operator in Python instead (``mx.operator.CustomOp``,
or an op in ``aiond/ops``)."""
from __future__ import annotations

import os

from .base import MXNetError

__all__ = ["load"]


def load(path, verbose=True):
    """Refuse to load the compiled MXNet extension library ``path`` (after
    MXNet's own checks of the path): aiond cannot run compiled MXNet
    extensions."""
    if not os.path.exists(path):
        raise MXNetError("load path %s does NOT exist" % path)
    if not os.path.isabs(path):
        raise MXNetError("load path %s is not an absolute path" % path)
    _, ext = os.path.splitext(path)
    if ext not in ('.so', '.dll'):
        raise MXNetError("load path %s is NOT a library file" % path)
    raise MXNetError(
        "mx.library.load(%r): aiond cannot load compiled MXNet extension libraries (they "
        "register C++ operators through MXNet's C extension API, which aiond does not have); "
        "write the operator as an mx.operator.CustomOp in Python instead" % path)
