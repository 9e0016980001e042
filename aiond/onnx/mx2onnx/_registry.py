"""Translation functions from MXNet operators to ONNX nodes, by op name and opset.

A translation is registered for the lowest opset it is valid for; the exporter
picks, for a target opset, the newest registration at or below it (as MXNet's
``MXNetGraph.register`` does). A translation receives the graph builder and the
node (see ``_graph.Node``) and returns the ONNX tensor names of the node's outputs.
"""
from __future__ import annotations

MIN_OPSET = 12
_TABLE: dict = {}          # op name -> {opset: fn}


def register(*op_names, opset=MIN_OPSET):
    def wrap(fn):
        for name in op_names:
            _TABLE.setdefault(name, {})[opset] = fn
        return fn
    return wrap


def lookup(op_name, opset):
    versions = _TABLE.get(op_name)
    if not versions:
        return None
    usable = [v for v in versions if v <= opset]
    return versions[max(usable)] if usable else None


def supported(opset):
    return sorted(n for n, versions in _TABLE.items() if any(v <= opset for v in versions))


def load_translations():
    # imported for their registrations
    from . import _op_nn, _op_math, _op_tensor, _op_contrib  # noqa: F401
