"""MXNet 1.9.1's ``_CachedOp`` as a graph node (src/imperative/cached_op.cc):
a node that holds a subgraph and runs it, which is what the ``default``
subgraph backends make of each group of selected ops.

The subgraph reaches the op either as the node's ``subgraphs`` (a graph
partitioned by ``optimize_for``, written to JSON under ``"subgraphs"``) or
as the ``subgraph`` attribute, the subgraph's JSON (MXNet's
``CachedOpConfig.subgraph``, what ``mx.sym._internal._CachedOp(*inputs,
subgraph=json)`` gives). Its inputs, outputs and auxiliary states are the
subgraph's own. Reading a subgraph, inferring its shapes and running it
needs the symbol layer: ``aiond.symbol._subgraph`` installs those hooks.
"""
from __future__ import annotations

from ..base import OpError
from .registry import _REGISTRY, Op, Param, p_bool, p_int, p_str

__all__ = ["SubgraphEntry", "CACHED_OP"]


class SubgraphEntry(Op):
    """A node running its subgraph; inputs and outputs are the subgraph's."""
    __slots__ = ("infer_types", "subgraph_of")

    def parse(self, kwargs):
        attrs = super().parse({k: v for k, v in kwargs.items() if k != "subgraphs"})
        if "subgraphs" in kwargs:
            attrs["subgraphs"] = kwargs["subgraphs"]
        return attrs

    # filled by aiond.symbol._subgraph (the subgraph is a Symbol graph)
    def input_names_for(self, attrs):
        raise OpError("_CachedOp reads its subgraph through aiond.symbol")

    def output_names_for(self, attrs):
        raise OpError("_CachedOp reads its subgraph through aiond.symbol")


class _AuxNames:
    """``op.aux`` of ``_CachedOp``: which input names are auxiliary states
    depends on the node's subgraph, so the names the op lists for a node
    carry that mark themselves (see ``aiond.symbol._subgraph``)."""
    __slots__ = ()

    def __bool__(self):
        return True

    def __contains__(self, name):
        return bool(getattr(name, "is_aux", False))

    def __iter__(self):
        return iter(())


def _unrun(*args, **kwargs):
    raise OpError("_CachedOp runs its subgraph through aiond.symbol")


def _no_rule(attrs, shapes, dtypes):
    raise OpError("_CachedOp infers shapes through aiond.symbol")


def _num_outputs(attrs):
    return len(CACHED_OP.subgraph_of(attrs))


def _no_subgraph(attrs):
    raise OpError("_CachedOp needs a subgraph: give subgraph=<a symbol's JSON> or build it "
                  "with Symbol.optimize_for")


_PARAMS = (
    Param("subgraph", p_str, "", "the subgraph as symbol JSON (empty: the node's subgraphs)"),
    Param("static_alloc", p_bool, False, "MXNet's memory-planning flag (accepted; aiond "
                                          "plans no separate memory)"),
    Param("static_shape", p_bool, False, "MXNet's memory-planning flag (accepted)"),
    Param("is_dynamic", p_bool, False, "whether the subgraph has ops of dynamic output shape"),
    Param("inline_limit", p_int, 2, "MXNet's inlining limit (accepted)"),
    Param("forward_bulk_size", p_int, 15, "MXNet's engine bulking size (accepted)"),
    Param("backward_bulk_size", p_int, 15, "MXNet's engine bulking size (accepted)"),
    Param("data_indices", p_str, "[]", "positions of the data inputs (hybridized blocks)"),
    Param("param_indices", p_str, "[]", "positions of the parameter inputs"),
)

CACHED_OP = SubgraphEntry("_CachedOp", _unrun, _no_rule, ("*data",), _PARAMS,
                          num_outputs=_num_outputs, inline=False, variadic=True,
                          doc="Run a subgraph as one node (MXNet's _CachedOp).")
CACHED_OP.infer_types = None
CACHED_OP.subgraph_of = _no_subgraph
CACHED_OP.aux = _AuxNames()
if "_CachedOp" in _REGISTRY:
    raise RuntimeError("op _CachedOp registered twice")
_REGISTRY["_CachedOp"] = CACHED_OP
