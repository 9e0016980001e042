"""``mx.onnx``: export MXNet models (a Symbol and its parameters) to ONNX.

MXNet 1.9.1's ``mxnet.onnx`` API: ``export_model`` and ``get_operator_support``.
The ``onnx`` package (the ``onnx`` extra: ``pip install -e '.[onnx]'`` in aiond's source folder) is imported only when these
are called, so ``import aiond`` never needs it.
"""
from . import mx2onnx
from .mx2onnx import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support", "mx2onnx"]
