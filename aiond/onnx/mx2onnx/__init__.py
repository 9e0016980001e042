"""MXNet graph -> ONNX graph: the exporter behind ``mx.onnx.export_model``."""
from ._export_model import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
