"""A hybridized block's short call paths: repeating its last call on one
NDArray with the plans that call chose, without the general path's walk
(flatten, formats, parameter lookups, signature keys). They use only the
public methods of the block's ``CachedOp`` and ``FusedGraph``."""
from __future__ import annotations

from .. import autograd as _autograd
from ..graph.fused import live as _live
from ..ndarray import _coalesce
from ..ndarray._plan import placeholder as _placeholder
from ..util import is_np_shape as _is_np_shape
from ._formats import _np_outs, _regroup

__all__ = ["_fast_call", "_fast_record"]


class _Repeat:
    """What a hybridized block's short call paths check before repeating
    its last call on one NDArray: the same cached graph, input shape, dtype
    and context, recording state, training mode, NumPy-shape semantics and
    parameter arrays."""
    __slots__ = ("cop", "shape", "dtype", "ctx", "training", "np_shape", "params", "args",
                 "pos", "single")

    def _fill(self, blk, cargs, pos, training):
        x = cargs[pos]
        self.cop, self.pos = blk._cached_op, pos
        self.shape, self.dtype, self.ctx = x._shape, x._dtype, x._st.ctx
        self.training, self.np_shape = training, _is_np_shape()
        self.params = [(i, i._data) for is_arg, i in blk._cached_op_args if not is_arg]
        self.args = [None if is_arg else a for (is_arg, _), a in zip(blk._cached_op_args, cargs)]
        self.single = blk._out_format == 0

    def _args(self, blk, x, recording):
        """The call's arguments with ``x`` in place, or None if anything changed."""
        st = x._st
        c = st.ctx
        if (blk._cached_op is not self.cop or x._shape != self.shape
                or (c is not self.ctx and c != self.ctx) or x._dtype != self.dtype or x._sparse):
            return None
        ag = _autograd._state
        if (ag.recording is not recording or ag.training != self.training
                or _is_np_shape() != self.np_shape):
            return None
        for p, data in self.params:
            # parameters swap their arrays whole (initialize, reset_ctx, cast)
            if p._data is not data:
                return None
        args = list(self.args)
        args[self.pos] = x
        return args


class _FastCall(_Repeat):
    """A hybridized block's call on one NDArray, not recording, as its last
    such call ran: the checks that choose the cached graph's plan, without
    the general path's walk (flatten, formats, parameter lookups, signature
    keys). A server calls its model this way once per request, on the loop.
    ``None`` from a call: something changed, take the general path."""
    __slots__ = ("plan", "co")

    def __call__(self, blk, x):
        args = self._args(blk, x, False)
        if args is None:
            return None
        outs = None
        if self.co is not None:
            # a coroutine's call joins the same call waiting in the queue
            outs = self.co.call(args, self.ctx)
        if outs is None:
            outs = self.plan.push(args, self.ctx)
        if blk._np_out:
            outs = _np_outs(outs)
        return outs[0] if self.single else _regroup(outs, blk._out_format)


class _FastRecord(_Repeat):
    """A hybridized block's recorded call on one NDArray that needs no
    gradient itself (a training step's batch), as its last such call ran:
    the recording plans and tape node of ``FusedGraph``, without the general
    path's walk. ``None`` from a call: something changed, take that path."""
    __slots__ = ("graph", "comp")

    def __call__(self, blk, x):
        args = self._args(blk, x, True)
        if args is None:
            return None
        # which inputs need gradients picks the plans (the batch's own, or a
        # parameter's): the same as compiled
        for a, n in zip(args, self.comp.need):
            if (a._ag is not None and _live(a._ag) is not None) is not n:
                return None
        outs = self.graph.run(self.comp, args, self.ctx)
        if blk._np_out:
            outs = _np_outs(outs)
        return outs[0] if self.single else _regroup(outs, blk._out_format)


def _fast_record(blk, fmt, cargs, ctx):
    """The _FastRecord repeating a recorded call that pushed ``cargs``, or None."""
    if fmt != [0] or blk._in_format != [0] or blk._shape_dependent:
        return None
    pos = [k for k, (is_arg, _) in enumerate(blk._cached_op_args) if is_arg]
    cop = blk._cached_op
    graph = cop.fused
    if len(pos) != 1 or graph is None or not cop.fusable(cargs):
        return None
    need = tuple(a._ag is not None and _live(a._ag) is not None for a in cargs)
    if need[pos[0]] or not any(need):
        return None
    training = _autograd._state.training
    comp = graph.compiled(cargs, ctx, training, need)
    if comp is False:
        return None
    f = _FastRecord()
    f._fill(blk, cargs, pos[0], training)
    f.graph, f.comp = graph, comp
    return f


def _fast_call(blk, fmt, cargs, ctx):
    """The _FastCall repeating a call that pushed ``cargs``, or None."""
    if fmt != [0] or blk._in_format != [0] or blk._shape_dependent:
        return None
    pos = [k for k, (is_arg, _) in enumerate(blk._cached_op_args) if is_arg]
    if len(pos) != 1:
        return None
    plan = blk._cached_op.inference_plan(cargs, ctx)
    if plan is None:
        return None
    f = _FastCall()
    f._fill(blk, cargs, pos[0], _autograd._state.training)
    f.plan = plan
    f.co = None
    if _coalesce.enabled() and blk._coalesce_ok and not f.training and \
            f.ctx.device_typeid != 2 and \
            _coalesce.rowwise(plan, f.pos):
        f.co = _coalesce.Coalescer(plan, f.pos, f.ctx, _batch_compiler(blk, cargs, f.pos, ctx))
    return f


def _batch_compiler(blk, cargs, pos, ctx):
    """shape -> the block's inference plan for input ``pos`` of that shape."""
    fused = blk._cached_op.fused
    x = cargs[pos]
    others = list(cargs)
    training = _autograd._state.training

    def compile(shape):
        args = list(others)
        args[pos] = _placeholder(shape, x._dtype, ctx)
        try:
            return fused.forward_plan(args, ctx, training)
        except Exception:  # noqa: BLE001 - the graph cannot take this batch: unbatched
            return None
    return compile
