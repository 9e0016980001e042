"""``mx.nd.np._internal`` (MXNet's ``_npi``): the registry's ``_npi_<name>``
ops as functions ``<name>`` on arrays, returning ``mx.np.ndarray``; built on
first use."""
from __future__ import annotations

import sys as _sys

from ...base import OpError as _OpError
from ...ops import registry as _reg


def _np_result(res):
    from ...numpy.multiarray import _as_np
    return _as_np(res)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name.endswith("_fallback") and "aiond.numpy_op_fallback" not in _sys.modules:
        # the NumPy-fallback Custom ops register themselves here on import
        from ... import numpy_op_fallback  # noqa: F401
        if name in globals():
            return globals()[name]
    try:
        op = _reg.get("_npi_" + name)
    except _OpError:
        raise AttributeError("module %r has no attribute %r (no operator _npi_%s)"
                             % (__name__, name, name)) from None
    from .._namespace import make_function
    legacy = make_function(op, name)

    def fn(*args, **kwargs):
        return _np_result(legacy(*args, **kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = legacy.__doc__
    fn.__module__ = __name__
    globals()[name] = fn
    return fn
