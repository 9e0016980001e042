"""``mxnet.contrib.onnx.onnx2mx.import_model``: import_model, get_model_metadata."""
from .. import get_model_metadata, import_model  # noqa: F401

__all__ = ["import_model", "get_model_metadata"]
