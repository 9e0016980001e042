"""Errors raised by aiond, and a few helpers shared by every layer.

The exception tree::

    MXNetError (RuntimeError)          anything that went wrong inside aiond
     ├── EngineError                   misuse of the engine itself
     │    └── DeadlockError            a blocking wait on an engine thread
     └── OpError                       an op failed (at push or when it ran)
          └── ShapeError (also ValueError)   shapes that do not fit the op

``MXNetError`` keeps MXNet's name so ``except mx.base.MXNetError`` in MXNet
code keeps working. When an op fails while it runs, the error raised at the
read carries the original exception as ``__cause__``.
"""
from __future__ import annotations

__all__ = ["MXNetError", "EngineError", "DeadlockError", "OpError", "ShapeError",
           "string_types", "numeric_types", "integer_types"]

import numbers

import numpy as _np


class MXNetError(RuntimeError):
    """Default error of aiond, named as in MXNet."""


class EngineError(MXNetError):
    """The engine was used in a way it cannot honour."""


class DeadlockError(EngineError):
    """A blocking wait was called where it could never return."""


class OpError(MXNetError):
    """An operator rejected its arguments or failed while running."""


class ShapeError(OpError, ValueError):
    """Input shapes do not fit the operator."""


string_types = (str,)
numeric_types = (float, int, _np.generic, numbers.Number)
integer_types = (int, _np.integer)
