"""``export_model`` and ``get_operator_support``: MXNet 1.9.1's mx.onnx API."""
from __future__ import annotations

import logging

import numpy as np

from ...base import MXNetError
from . import _registry


def _require_onnx():
    from ..._extras import install_hint
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ImportError("ONNX export needs the onnx package: " + install_hint("onnx")) from None
    return onnx


def _default_opset(onnx):
    return onnx.defs.onnx_opset_version()


def get_operator_support(opset_version=None):
    """The sorted list of MXNet operators that export to ONNX at ``opset_version``
    (default: the newest opset of the installed onnx package)."""
    onnx = _require_onnx()
    if opset_version is None:
        opset_version = _default_opset(onnx)
    _registry.load_translations()
    return _registry.supported(int(opset_version))


def _load(sym, params):
    from ... import ndarray as nd
    from ... import symbol
    if isinstance(sym, str):
        sym = symbol.load(sym)
    if isinstance(params, str):
        path, params = params, nd.load(params)
        if isinstance(params, list):
            # a file saved from a list holds no names; an empty one has no parameters
            if params:
                raise MXNetError("export_model: %s holds unnamed arrays; expected a dict of "
                                 "parameters saved by HybridBlock.export or mx.nd.save" % path)
            params = {}
    return sym, params


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path='model.onnx', verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None, large_model=False, opset_version=None):
    """Export an MXNet model to an ONNX file.

    Parameters
    ----------
    sym : str or Symbol
        The ``-symbol.json`` file path or the Symbol.
    params : str or dict or list of two dicts
        The ``.params`` file path, a dict of arg and aux parameters (``arg:``/``aux:``
        prefixes allowed), or ``[arg_params, aux_params]``.
    in_shapes : list of tuple
        The shapes of the model's data inputs (the inputs that are not parameters),
        in the order of ``sym.list_inputs()``.
    in_types : dtype or list of dtypes
        Their dtypes (one for all, or one per input).
    onnx_file_path : str
        Where the ONNX model is written.
    verbose : bool
        Log each node as it is converted.
    dynamic : bool
        Make the input and output shapes dynamic: every dimension unknown, or as
        given by ``dynamic_input_shapes`` (``None`` for a dynamic dimension).
    dynamic_input_shapes : list of tuple
        The input shapes with ``None`` where a dimension is dynamic (needs ``dynamic=True``).
    run_shape_inference : bool
        Run ONNX shape inference and store the inferred intermediate shapes.
    input_type, input_shape :
        Older names of ``in_types`` and ``in_shapes``.
    large_model : bool
        Store the weights beside the ``.onnx`` file as external data (for models
        over protobuf's 2 GB limit).
    opset_version : int
        The ONNX opset to target (default: the newest of the installed onnx package).

    Returns
    -------
    str
        ``onnx_file_path``.
    """
    onnx = _require_onnx()
    from ... import symbol
    from ._graph import build_graph

    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise MXNetError("export_model: in_shapes (the shapes of the model's inputs) is required")
    in_shapes = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    in_types = [np.dtype(t) for t in in_types]

    if isinstance(sym, str) and isinstance(params, str):
        logging.info("Converting json and weight file to sym and params")
        sym, params = _load(sym, params)
    elif isinstance(sym, symbol.Symbol) and isinstance(params, dict):
        pass
    elif isinstance(sym, symbol.Symbol) and isinstance(params, (list, tuple)) and len(params) == 2:
        merged = {}
        merged.update(params[0])
        merged.update(params[1])
        params = merged
    else:
        raise ValueError("Input sym and params should either be files or objects")

    if opset_version is None:
        opset_version = _default_opset(onnx)
    opset_version = int(opset_version)
    if opset_version < _registry.MIN_OPSET:
        raise MXNetError("export_model: opset_version %d is not supported; the exporter "
                         "targets opset %d and newer" % (opset_version, _registry.MIN_OPSET))
    graph = build_graph(sym, params, in_shapes, in_types, opset_version, dynamic=dynamic,
                        dynamic_input_shapes=dynamic_input_shapes, verbose=verbose)
    model = onnx.helper.make_model(
        graph, producer_name="aiond", opset_imports=[onnx.helper.make_opsetid("", opset_version)])
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception:  # a failed inference keeps the exported model, as MXNet does
            logging.info("Shape inference failed, original export is kept.")
    if large_model:
        import os
        onnx.save_model(model, onnx_file_path, save_as_external_data=True,
                        all_tensors_to_one_file=True, size_threshold=0,
                        location=os.path.basename(onnx_file_path) + ".data")
    else:
        with open(onnx_file_path, "wb") as f:
            f.write(model.SerializeToString())
    logging.info("Input shape of the model %s ", in_shapes)
    logging.info("Exported ONNX file %s saved to disk", onnx_file_path)
    return onnx_file_path
