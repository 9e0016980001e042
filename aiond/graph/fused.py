"""A graph call run as one forward op and, when recorded, one backward op.

``FusedGraph(fn)`` wraps a function of NDArrays that pushes a fixed graph
of ops (``Program.run`` of a ``CachedOp`` or a bound Executor). Per input signature (shapes,
dtypes, context, training flag, which inputs need gradients) it traces
``fn`` once on placeholders into plans (``ndarray/_plan.py``):

* not recording: one forward plan;
* recording: a forward plan that also returns what the gradient rules
  read (the saved intermediates), and a backward plan traced from the same
  gradient rules ``backward()`` applies op by op. The call then puts ONE
  node on the tape (MXNet's ``_CachedOp``); its backward pushes the
  backward plan as one op.

Gradients are the op-by-op ones: the same rules run, on the same values,
in the same order. What a plan cannot express (an op on its own executor,
a read of a value while tracing, sparse arrays) makes ``__call__`` return
None and the caller runs ``fn`` op by op, as before.

As in MXNet, the backward of a fused call is not differentiable again
(``create_graph=True`` through it raises).
"""
from __future__ import annotations

from .. import autograd as _ag
from ..autograd import _tape
from ..base import MXNetError
from ..util import is_np_shape
from ..ndarray import _plan
from ..ndarray._plan import Plan, PlanCache, TraceError, enabled, handle, placeholder

__all__ = ["FusedGraph", "enabled", "live"]


MAX_GRAPH_BYTES = 1 << 30      # workspaces one graph's cached plans may keep, together


def _compiled_bytes(comp):
    return comp.fwd.workspace_bytes + (comp.bwd.workspace_bytes if comp.bwd is not None else 0)


class _Compiled:
    __slots__ = ("fwd", "bwd", "nheads", "need", "out_meta", "unread")

    def __init__(self, fwd, bwd, nheads, need, out_meta, unread=()):
        self.fwd, self.bwd, self.nheads, self.need = fwd, bwd, nheads, need
        self.out_meta = out_meta
        self.unread = unread    # per output: no gradient rule reads its head gradient


class FusedGraph:
    """See the module docstring. ``fn(list of NDArrays) -> list of NDArrays``."""

    def __init__(self, fn, name="graph", max_signatures=16, input_names=None):
        self.fn = fn
        self.name = name
        # per input signature: its plans (False: op by op); each kept plan
        # may hold its workspaces, so the bytes are bounded as well
        self.cache = PlanCache(max_signatures, MAX_GRAPH_BYTES, _compiled_bytes)
        self.input_names = input_names      # for errors: what each of ``args`` is

    def __call__(self, args, ctx):
        for a in args:
            if a._sparse:
                return None
            c = a._st.ctx
            if c is not ctx and c != ctx:
                self._wrong_context(args, ctx)
        recording = _tape.state.recording
        training = _tape.state.training
        need = ()
        if recording:
            need = tuple(_live(a._ag) is not None for a in args)
            if not any(need):
                need = ()
        comp = self.compiled(args, ctx, training, need)
        if comp is False:
            return None
        return self.run(comp, args, ctx)

    def run(self, comp, args, ctx):
        """Push the plans ``comp`` compiled for ``args`` (see ``compiled``)
        on ``args``; when it records, put the call's node on the tape."""
        outs = comp.fwd.push(args, ctx)
        if not comp.need:
            return outs
        heads = outs[:comp.nheads]
        saved = outs[comp.nheads:]
        _tape.attach(args, heads, [_live(a._ag) for a in args],
                     _Backward(self, comp, saved, ctx))
        return heads

    def inference_plan(self, args, ctx):
        """The forward plan that a call with ``args`` runs now, not recording
        (None when such a call runs the graph op by op)."""
        for a in args:
            c = a._st.ctx
            if a._sparse or (c is not ctx and c != ctx):
                return None
        comp = self.compiled(args, ctx, _tape.state.training, ())
        return None if comp is False else comp.fwd

    def forward_plan(self, args, ctx, training):
        """A new not-recording forward plan for ``args`` (placeholders of
        any shapes), outside the cache; raises when the graph cannot be
        compiled for them."""
        return self.compile(args, ctx, training, ()).fwd

    def _wrong_context(self, args, ctx):
        # a plan's kernels run on one device: an input elsewhere would reach
        # them as a foreign array and fail obscurely in the kernel, later
        names = self.input_names or ()
        for i, a in enumerate(args):
            if a._st.ctx != ctx:
                what = names[i] if i < len(names) else "input %d" % i
                raise MXNetError(
                    "%s: %s is on %s but the graph runs on %s; all its inputs must live on "
                    "one context (as MXNet's CachedOp requires): move it with "
                    ".as_in_context(%s)" % (self.name, what, a.context, ctx, ctx))

    def planned_bytes(self, args, ctx, training, need):
        """Bytes the plans of one call allocate besides ``args`` and the
        gradients' targets (what MXNet's ``Executor.debug_str`` reports as
        allocated); None when the graph runs op by op."""
        comp = self.compiled(args, ctx, training, need)
        if comp is False:
            return None
        n = comp.fwd.workspace_bytes + comp.fwd.nbytes     # nbytes: what backward reads
        return n + (comp.bwd.workspace_bytes if comp.bwd is not None else 0)

    def compiled(self, args, ctx, training, need):
        """The plans for this signature (``need``: per input, whether it
        needs a gradient; () when not recording), compiled on first use;
        False: the graph runs op by op. ``run`` pushes them."""
        # shape rules that read NumPy-shape semantics ran at trace time
        key = (tuple((a._shape, a._dtype) for a in args), ctx, training, need, is_np_shape())
        comp = self.cache.get(key)
        if comp is not None:
            return comp
        try:
            comp = self.compile(args, ctx, training, need)
        except TraceError:
            comp = False
        self.cache.put(key, comp)
        return comp

    def compile(self, args, ctx, training, need):
        """The plans for this signature, traced now (raises TraceError when
        a plan cannot express the graph)."""
        ph = [placeholder(a._shape, a._dtype, ctx) for a in args]
        if not need:
            with _ag.pause(train_mode=training):
                outs, members, inline = _plan.trace(self.fn, ph, ctx)
            outs = list(outs)
            # inference on the CPU: Convolution + BatchNorm (+ ReLU) steps may fuse
            fuse = not training and getattr(ctx, "device_type", "cpu") == "cpu"
            return _Compiled(Plan(members, ph, outs, self.name + "_forward", inline, fuse=fuse),
                             None, len(outs), (), None)
        for p, n in zip(ph, need):
            if n:
                p._ag = _tape.Leaf(None, "write")
        with _ag.record(train_mode=training):
            outs, fmembers, finline = _plan.trace(self.fn, ph, ctx)
        outs = list(outs)
        for o in outs:
            if o._ag is None:
                # an output no input reaches: op-by-op keeps MXNet's rules for it
                raise TraceError("an output does not depend on any input needing gradients")
        ograds = [placeholder(o._shape, o._dtype, ctx) for o in outs]
        variables = [p for p, n in zip(ph, need) if n]

        def bwd():
            return _ag.grad(outs, variables, ograds, retain_graph=True, train_mode=training)
        grads, bmembers, binline = _plan.trace(bwd)
        made_fwd = {}
        for m in fmembers:
            for h in m.fn.outs:
                made_fwd[id(h._st)] = h._st
        made_bwd = set()
        known = {id(h._st) for h in ograds} | {id(h._st) for h in ph}
        saved = {}
        for m in bmembers:
            for h in m.fn.ins:
                k = id(h._st)
                if k in made_fwd and k not in made_bwd and k not in known:
                    saved[k] = made_fwd[k]
            for h in m.fn.outs:
                made_bwd.add(id(h._st))
        saved_h = [handle(st, st.shape) for st in saved.values()]
        fwd = Plan(fmembers, ph, outs + saved_h, self.name + "_forward", finline)
        bwd_plan = Plan(bmembers, ograds + ph + saved_h, list(grads), self.name + "_backward",
                        binline)
        meta = [(o._shape, o._dtype) for o in outs]
        read = set()
        for m in bmembers:
            for h in m.fn.ins:
                read.add(id(h._st))
        for h in grads:
            read.add(id(h._st))
        unread = tuple(id(g._st) not in read for g in ograds)
        return _Compiled(fwd, bwd_plan, len(outs), need, meta, unread)


_live = live = _tape.live


class _Backward:
    """The tape node's gradient: the backward plan, pushed as one op."""
    __slots__ = ("graph", "comp", "saved", "ctx")
    fused = True

    def __init__(self, graph, comp, saved, ctx):
        self.graph, self.comp, self.saved, self.ctx = graph, comp, saved, ctx

    def _backward_entry(self, ograds, inputs, targets=None):
        comp = self.comp
        if _tape.state.recording:
            raise MXNetError(
                "%s: the backward of a hybridized graph cannot be differentiated again "
                "(create_graph=True), as in MXNet; call the block without hybridize() "
                "for higher-order gradients" % self.graph.name)
        og = []
        for g, (shape, dt), unread in zip(ograds, comp.out_meta, comp.unread):
            if unread:
                og.append(g)        # never read: any shape will do
                continue
            if g._shape != shape:
                raise MXNetError("%s: head gradient of shape %s for an output of shape %s"
                                 % (self.graph.name, g._shape, shape))
            if g._st.ctx != self.ctx:
                raise MXNetError("%s: the head gradient of output %d is on %s but the graph "
                                 "ran on %s; move it with .as_in_context(%s)"
                                 % (self.graph.name, len(og), g.context, self.ctx, self.ctx))
            if g._dtype != dt:
                from ..ndarray.ndarray import copy_into as _copy_into, empty
                c = empty(shape, ctx=self.ctx, dtype=dt)
                _copy_into(g, c)
                g = c
            og.append(g)
        tg = None
        if targets is not None:
            tg = [t for t, n in zip(targets, comp.need) if n]
        grads = comp.bwd.push(og + list(inputs) + self.saved, self.ctx, targets=tg)
        res = []
        k = 0
        for n in comp.need:
            if n:
                res.append(grads[k])
                k += 1
            else:
                res.append(None)
        return res

    def replay_entry(self, ograds, inputs, saved):
        """What ``_backward_entry`` computes, pushed op by op (``Plan.replay``)
        on ``inputs`` and the forward's ``saved`` arrays (placeholders, as the
        tape around this node is traced into one plan)."""
        comp = self.comp
        for g, (shape, dt), unread in zip(ograds, comp.out_meta, comp.unread):
            if not unread and (g._shape != shape or g._dtype != dt):
                raise TraceError("a head gradient of another shape or dtype")
        for a in inputs:
            if a._st.ctx != self.ctx:
                raise TraceError("the tape runs on another context")
        grads = iter(comp.bwd.replay(list(ograds) + list(inputs) + list(saved)))
        return [next(grads) if n else None for n in comp.need]

    def ignores_ograd(self, index):
        return self.comp.unread[index]

    def release(self):
        self.saved = None

