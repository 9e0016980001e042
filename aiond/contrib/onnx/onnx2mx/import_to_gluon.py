"""``mxnet.contrib.onnx.onnx2mx.import_to_gluon``."""
from .. import import_to_gluon  # noqa: F401

__all__ = ["import_to_gluon"]
