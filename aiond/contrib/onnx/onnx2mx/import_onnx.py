"""``GraphProto``: MXNet 1.9.1's per-graph importer object (ONNX backends
written for MXNet drive it directly: ``GraphProto().from_onnx(graph, opset)``)."""
from __future__ import annotations

from .... import ndarray as nd  # noqa: F401  (as MXNet's module has them)
from .... import symbol  # noqa: F401

__all__ = ["GraphProto"]


class GraphProto:
    """Imports one ONNX GraphProto; keeps the last import's parameters and metadata."""

    def __init__(self):
        self.arg_dict = {}
        self.aux_dict = {}
        self.model_metadata = {}
        self.opset_version = 0

    def from_onnx(self, graph, opset_version):
        """``(sym, arg_params, aux_params)`` of an ``onnx.GraphProto`` at ``opset_version``."""
        from .._graph import GraphImporter, graph_metadata
        self.opset_version = opset_version
        self.model_metadata = graph_metadata(graph)
        sym, self.arg_dict, self.aux_dict = GraphImporter(
            None, graph=graph, opset_version=opset_version).run()
        return sym, self.arg_dict, self.aux_dict

    def get_graph_metadata(self, graph):
        """The graph's inputs (name, shape, elem type) and outputs (name, shape)."""
        from .._graph import graph_metadata
        return graph_metadata(graph)

    def graph_to_gluon(self, graph, ctx, opset_version):
        """The graph as a ``gluon.SymbolBlock`` with its parameters loaded on ``ctx``."""
        from .. import _to_gluon
        sym, arg_params, aux_params = self.from_onnx(graph, opset_version)
        names = [n for n, _, _ in self.get_graph_metadata(graph)["input_tensor_data"]]
        return _to_gluon(sym, arg_params, aux_params, names, ctx)
