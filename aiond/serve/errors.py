"""The errors of the serving layer (the tree is drawn in batcher.py's docstring)."""
from __future__ import annotations

from ..base import MXNetError

__all__ = ["ServeError", "Overloaded", "BatcherClosed", "DeadlineExceeded", "InvalidInput",
           "ModelError"]


class ServeError(MXNetError):
    """Base of the errors the serving layer raises."""


class Overloaded(ServeError):
    """The queue is full: try again in ``retry_after`` seconds."""

    def __init__(self, message, retry_after=1.0):
        super().__init__(message)
        self.retry_after = float(retry_after)


class BatcherClosed(Overloaded):
    """The batcher is shutting down and takes no new requests."""


class DeadlineExceeded(ServeError, TimeoutError):
    """The request's deadline passed before its result was ready."""


class InvalidInput(ServeError, ValueError):
    """The input does not fit the model (shape, dtype or type)."""


class ModelError(ServeError):
    """The model failed on this request; the original error is ``__cause__``."""
