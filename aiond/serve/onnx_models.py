"""``.onnx`` model files served on aiond's engine.

The file is imported with ``mx.contrib.onnx``'s importer (axis 0 of every
input taken as the batch axis, whatever size the file fixes there) and runs
as an :class:`~aiond.serve.models.ExecutorModel`, batched like any other
model. In a repository folder an ONNX model is ``<name>.onnx`` (version 1)
or ``<prefix>-NNNN.onnx`` (one file per version); ``"symbol"`` in the config
may name the file. Without ``"inputs"`` in the config the file's own graph
inputs (names, element types, shapes after the batch axis) are served.
"""
from __future__ import annotations

import glob
import os
import re

import numpy as np

__all__ = ["load_onnx_model", "onnx_versions", "onnx_input_specs", "onnx_output_specs"]


def load_onnx_model(path, input_name=None, ctx=None, batch_axis=True):
    """A callable model (one batch per input, in the graph's order or
    ``input_name``'s) from an ONNX file."""
    from ..context import cpu
    from ..contrib.onnx._graph import GraphImporter, graph_metadata, load_onnx
    from .models import ExecutorModel
    model = load_onnx(path)
    sym, args, aux = GraphImporter(model, dynamic_batch=batch_axis).run()
    meta = graph_metadata(model.graph)
    if input_name is None:
        names = [n for n, _, _ in meta["input_tensor_data"] if n in sym.list_arguments()]
        input_name = names if len(names) != 1 else names[0]
    em = ExecutorModel(sym, args, aux, data_name=input_name, ctx=ctx or cpu())
    em.outputs = [n for n, _ in meta["output_tensor_data"]]
    em.onnx_output_types = [o.type.tensor_type.elem_type for o in model.graph.output]
    return em


def onnx_versions(folder, named=None):
    """{version: path} of the folder's ONNX model, or None when the folder
    holds an MXNet export instead (``named``: the config's ``symbol``)."""
    from .repository import ModelConfigError
    if named is not None:
        if not named.endswith(".onnx"):
            return None
        path = os.path.join(folder, named)
        if not os.path.exists(path):
            raise ModelConfigError("%s does not exist" % path)
        m = re.match(r".*-(\d+)\.onnx$", named)
        return {str(int(m.group(1))) if m else "1": path}
    if glob.glob(os.path.join(glob.escape(folder), "*-symbol.json")):
        return None
    files = sorted(glob.glob(os.path.join(glob.escape(folder), "*.onnx")))
    if not files:
        return None
    versioned = {}
    for p in files:
        m = re.match(r"(.*)-(\d+)\.onnx$", os.path.basename(p))
        if m:
            versioned.setdefault(m.group(1), {})[str(int(m.group(2)))] = p
    if len(files) == 1 and not versioned:
        return {"1": files[0]}
    if len(versioned) == 1 and sum(len(v) for v in versioned.values()) == len(files):
        return next(iter(versioned.values()))
    raise ModelConfigError("%s holds several ONNX models (%s): keep one, give versions as "
                           "<prefix>-NNNN.onnx, or name it with \"symbol\" in the config"
                           % (folder, ", ".join(os.path.basename(p) for p in files)))


def _datatype(elem_type):
    from ..contrib.onnx._graph import np_dtype
    from .protocol import datatype_of
    dt = np_dtype(elem_type) if elem_type else np.dtype(np.float32)
    return "FP32" if dt == np.bool_ else datatype_of(dt)   # aiond computes masks as 0/1


def onnx_input_specs(path, max_batch_size):
    """The served inputs of an ONNX file: its graph inputs, less the batch axis."""
    from ..contrib.onnx._graph import graph_metadata, load_onnx
    from .protocol import TensorSpec
    meta = graph_metadata(load_onnx(path).graph)
    specs = []
    for name, shape, elem in meta["input_tensor_data"]:
        dims = [d if d > 0 else -1 for d in shape]
        specs.append(TensorSpec(name, _datatype(elem), dims[1:] if max_batch_size else dims))
    return specs


def onnx_output_specs(model, inputs, max_batch_size):
    """The served outputs: the graph's output names and element types, shapes
    inferred from the inputs'."""
    from .protocol import TensorSpec
    from .repository import _infer_outputs
    specs = _infer_outputs(model, inputs, model.outputs, max_batch_size)
    return [TensorSpec(s.name, _datatype(t), s.shape)
            for s, t in zip(specs, model.onnx_output_types)]
