"""MXNet 1.9.1's module layout of the ONNX importer
(``mxnet.contrib.onnx.onnx2mx.import_model`` / ``import_to_gluon`` /
``import_onnx.GraphProto``), for code that imports it from there."""
from . import import_onnx, import_model, import_to_gluon  # noqa: F401
