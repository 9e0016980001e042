"""``mx.error``: MXNet's structured error classes and their registry
(``mx.error.register``, the same as ``mx.base.register_error``).

MXNet turns a C++ error message ``"ValueError: ..."`` into the Python class
registered under that name; aiond raises Python exceptions directly, and
the registry (``mx.base.error_types``) records the same names so code that
registers its own classes or looks them up keeps working."""
from __future__ import annotations

from .base import MXNetError, register_error

__all__ = ["MXNetError", "register", "InternalError"]

register = register_error


@register_error
class InternalError(MXNetError):
    """An error inside the runtime itself (not in the user's input)."""

    def __init__(self, msg):
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue in "
                    "https://github.com/apache/incubator-mxnet/issues/new/choose"
                    " to report it.")
        super(InternalError, self).__init__(msg)


register_error("ValueError", ValueError)
register_error("TypeError", TypeError)
register_error("AttributeError", AttributeError)
register_error("IndexError", IndexError)
register_error("NotImplementedError", NotImplementedError)
