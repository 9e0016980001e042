"""``mx.numpy_dispatch_protocol`` (``mxnet.numpy_dispatch_protocol``): the
official NumPy functions and ufuncs that run their ``mx.np`` namesake on mx.np
arrays. The lists and the registration live in the numpy package
(``aiond.numpy._protocol``), which fills the tables when NumPy first meets an
mx.np array; importing this module fills them at once, as MXNet's does."""
from __future__ import annotations

from . import numpy as mx_np
from .numpy import _protocol

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol", "mx_np"]

with_array_function_protocol = _protocol.with_array_function_protocol
with_array_ufunc_protocol = _protocol.with_array_ufunc_protocol
_NUMPY_ARRAY_FUNCTION_LIST = _protocol._NUMPY_ARRAY_FUNCTION_LIST
_NUMPY_ARRAY_UFUNC_LIST = _protocol._NUMPY_ARRAY_UFUNC_LIST
_NUMPY_ARRAY_FUNCTION_DICT = _protocol._NUMPY_ARRAY_FUNCTION_DICT
_NUMPY_ARRAY_UFUNC_DICT = _protocol._NUMPY_ARRAY_UFUNC_DICT
_protocol.register_all()
