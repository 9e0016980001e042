"""``CachedOp``: a Symbol's graph compiled once for calls on NDArrays (the
engine of a hybridized HybridBlock and of ``mx.nd.CachedOp``).

It is a ``Program`` over the graph's variables (``sym.list_inputs()``
order) and, where plans can express the graph, a ``FusedGraph`` that runs
a call as one forward op and one backward tape node; a call that cannot be
fused runs the program op by op, recorded by autograd as the imperative
path would be, so gradients are the same either way.
"""
from __future__ import annotations

from .. import autograd
from ..base import MXNetError
from ..ndarray import NDArray
from .fused import FusedGraph, enabled
from .ir import dfs
from .program import Program

__all__ = ["CachedOp"]


class CachedOp:
    """A Symbol compiled for replay: call it with the NDArrays of the
    graph's inputs (``sym.list_inputs()`` order); returns the list of
    output NDArrays. ``flags``: MXNet's CachedOp flags (``inline_limit``,
    ``forward_bulk_size``, ...)."""

    def __init__(self, sym, flags=()):
        self.flags = dict(flags)
        outputs = sym._outputs
        order = dfs(outputs)
        prog = self.program = Program(outputs, [n for n in order if n.op is None],
                                      what="hybridized graph", order=order)
        prog.forward_bulk_size = self.flags.get("forward_bulk_size")
        self.input_names = prog.input_names
        self.num_inputs = prog.num_inputs
        self.steps = prog.steps
        # zeros(shape=(0, H)) & co: MXNet 1.x infers the 0 dims from the inputs
        # (the Symbol's shape inference does it, per input shapes)
        self._init_shapes = sym._init_shape_steps(order, prog.steps)
        self._inline_limit = int(self.flags.get("inline_limit", 2))
        self.fused = None
        if enabled() and self.steps:
            self.fused = FusedGraph(self.replay, _graph_name(order))

    @property
    def _fused(self):
        return self.fused

    def __call__(self, *args, ctx=None):
        if len(args) != self.num_inputs:
            raise MXNetError("CachedOp: expected %d inputs (%s), got %d"
                             % (self.num_inputs, ", ".join(self.input_names), len(args)))
        if ctx is None:
            for a in args:
                if isinstance(a, NDArray):
                    ctx = a.context
                    break
        fused = self.fused
        if fused is not None and ctx is not None and self.fusable(args):
            out = fused(args, ctx)
            if out is not None:
                return out
        return self.replay(args, ctx)

    def inference_plan(self, args, ctx):
        """The one plan a not-recording call with ``args`` pushes (None when
        it pushes the graph op by op)."""
        if self.fused is None or autograd.is_recording() or not self.fusable(args):
            return None
        return self.fused.inference_plan(args, ctx)

    def fusable(self, args):
        """Whether a call on ``args`` may run as the fused graph."""
        for a in args:
            if not isinstance(a, NDArray):
                return False
        # MXNet records graphs of at most inline_limit ops op by op (inlined)
        return not (autograd.is_recording() and len(self.steps) <= self._inline_limit)

    def replay(self, args, ctx):
        """Push the graph's ops one by one (as bulk segments)."""
        steps = None
        if self._init_shapes:
            steps = self._init_shapes.steps_for(self.input_names, args)
        return self.program.run(args, ctx, steps=steps)


def _graph_name(order):
    for n in order:
        if n.op is not None:
            return n.name.rsplit("_", 1)[0] if "_" in n.name else n.name
    return "graph"
