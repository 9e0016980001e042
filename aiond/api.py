"""``mx.api``: in MXNet 1.9.1, the namespace of C++ functions registered
through its packed-function FFI (``_init_api("mxnet.api")``), used by the
``mx.np`` front end. aiond calls its operators from Python directly, so no
FFI functions are registered here; the module exists because MXNet imports
it at top level."""
from __future__ import annotations

__all__ = []
