"""``mx.contrib.onnx``: ONNX models into aiond (MXNet 1.9.1's importer API).

``import_model(file)`` gives ``(sym, arg_params, aux_params)``,
``import_to_gluon(file, ctx)`` a ``gluon.SymbolBlock`` with its parameters
loaded, ``get_model_metadata(file)`` the graph's inputs and outputs;
``export_model`` is ``mx.onnx.export_model``. The ``onnx`` package is
imported only when one of these is called.
"""
from __future__ import annotations

from ._graph import OnnxImportError, UnsupportedOnnxOperator

__all__ = ["import_model", "import_to_gluon", "get_model_metadata", "export_model",
           "OnnxImportError", "UnsupportedOnnxOperator"]


def import_model(model_file):
    """Imports the ONNX model file (a path, its bytes, or an ``onnx.ModelProto``)
    into an aiond Symbol and its parameters.

    Returns ``(sym, arg_params, aux_params)``: dicts of ``str`` to NDArray
    keyed by the ONNX initializers' names (BatchNormalization's mean and
    variance are auxiliary states). An operator aiond cannot translate raises
    :class:`UnsupportedOnnxOperator` naming it and its node; a file that is
    not an ONNX model raises ``MXNetError``.
    """
    from ._graph import GraphImporter, load_onnx
    return GraphImporter(load_onnx(model_file)).run()


def get_model_metadata(model_file):
    """The name and shape of the model's input and output tensors, as MXNet
    gives them::

        {'input_tensor_data': [(name, shape, onnx elem_type), ...],
         'output_tensor_data': [(name, shape), ...]}

    Initializers are not inputs; an unknown (named) dimension is 0.
    """
    from ._graph import graph_metadata, load_onnx
    return graph_metadata(load_onnx(model_file).graph)


def import_to_gluon(model_file, ctx=None):
    """The ONNX model as a ``gluon.SymbolBlock`` whose parameters are loaded
    on ``ctx`` (a Context or a list of them; default: the current one). Its
    inputs are the graph's inputs in order."""
    from ._graph import GraphImporter, graph_metadata, load_onnx
    model = load_onnx(model_file)
    sym, arg_params, aux_params = GraphImporter(model).run()
    names = [name for name, _, _ in graph_metadata(model.graph)["input_tensor_data"]]
    return _to_gluon(sym, arg_params, aux_params, names, ctx)


def _to_gluon(sym, arg_params, aux_params, input_names, ctx):
    from ... import symbol
    from ...gluon import SymbolBlock
    args = set(sym.list_arguments())
    net = SymbolBlock(outputs=sym, inputs=[symbol.var(n) for n in input_names if n in args])
    params = net.collect_params()
    for name, arr in list(arg_params.items()) + list(aux_params.items()):
        if name in params:
            params[name].shape = arr.shape
            if params[name].dtype != arr.dtype:     # e.g. int64 indices of a Gather
                params[name].cast(arr.dtype)
            params[name]._load_init(arr, ctx=ctx)
    return net


from . import onnx2mx  # noqa: E402,F401  (MXNet's layout: onnx2mx.import_onnx.GraphProto)


def __getattr__(name):
    # export is the other helper's package (mx.onnx): looked up when used
    if name == "export_model":
        from ...onnx import export_model
        return export_model
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
