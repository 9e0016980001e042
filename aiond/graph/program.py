"""``Program``: a fixed graph flattened into steps, and the one loop that
runs it op by op.

Values live in slots: the graph's inputs first (in the order the caller
gives their variable nodes), then each op's visible outputs in graph order
(nnvm's post-order). Every way aiond runs a fixed graph goes through
``Program.run``: a bound Executor's forward, a CachedOp's call (a
hybridized block, ``mx.nd.CachedOp``) and the traces that compile either
into plans (``fused.py``). So they share its rules: ops run in bulk
segments (not while a monitor watches every op, as MXNet turns bulking off
then), an op whose output shape is a value (``boolean_mask``) runs outside
them once its inputs are computed, an output that an op writes alone goes
straight into the caller's array, and an operator's error names the node.
"""
from __future__ import annotations

from .. import autograd as _autograd
from .. import engine as _engine
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray import _invoke
from ..ndarray import contrib as _nd_contrib  # noqa: F401  (boolean_mask's DYNAMIC entry)
from .. import numpy as _mx_np  # noqa: F401  (np.unique's, npx.nonzero's ... DYNAMIC entries)
from ..ops import registry as _reg
from ..ops.dynamic import DYNAMIC
from .ir import NO_INPUT_NAMES, dfs, input_names

__all__ = ["Program", "Step"]

class Step:
    """One op of a program: its parsed attributes, input and output slots."""
    __slots__ = ("op", "attrs", "ins", "outs", "name", "node", "direct", "ctx")

    def __init__(self, op, attrs, ins, outs, name, node=None):
        self.op, self.attrs, self.ins, self.outs = op, attrs, ins, outs
        self.name = name
        self.node = node        # the graph node (for output names); None when unknown
        self.direct = None      # head index whose preallocated array this step writes
        self.ctx = None         # the context it runs on, when placed (group2ctx)

    @property
    def params(self):
        return self.attrs

    def with_attrs(self, attrs):
        """This step with other attributes (an init op's inferred shape)."""
        st = Step(self.op, attrs, self.ins, self.outs, self.name, self.node)
        st.direct, st.ctx = self.direct, self.ctx
        return st

    def out_names(self):
        node = self.node
        if node is None:
            return ["%s_output%d" % (self.name, i) for i in range(len(self.outs))]
        return [node.output_name(i) for i in range(len(self.outs))]

    def monitor_input_names(self):
        """MXNet's input names in monitor callbacks: the op's FListInputNames
        ("arg%d" for variadic ops), or "input%d" for ops without one."""
        n = len(self.ins)
        if self.op.name in NO_INPUT_NAMES:
            return ["input%d" % i for i in range(n)]
        if self.op.variadic:
            return ["arg%d" % i for i in range(n)]
        names = input_names(self.op, self.attrs, n)
        return names + ["input%d" % i for i in range(len(names), n)]


class Program:
    """The graph under ``outputs`` (output entries) over the variable nodes
    ``inputs``; ``placement`` (id(node) -> Context) places ops on devices,
    ``move(array, ctx)`` bringing each input of a placed op to its device;
    ``what`` names the graph in operator errors."""

    def __init__(self, outputs, inputs, placement=None, what="graph", order=None, move=None):
        if order is None:
            order = dfs(outputs)
        self.what = what
        self.input_names = [n.name for n in inputs]
        self.num_inputs = len(inputs)
        slot = {(id(n), 0): i for i, n in enumerate(inputs)}
        steps = []
        for n in order:
            if n.op is None:
                if (id(n), 0) not in slot:
                    raise MXNetError("%s: variable %s is not among its inputs" % (what, n.name))
                continue
            ins = []
            for e in n.inputs:
                k = (id(e[0]), e[1])
                if k not in slot:
                    raise MXNetError("%s: node %s reads output %d of %s, which that operator "
                                     "does not return" % (what, n.name, e[1], e[0].name))
                ins.append(slot[k])
            outs = []
            for i in range(n.num_visible()):
                slot[(id(n), i)] = len(slot)
                outs.append(slot[(id(n), i)])
            attrs = dict(n.params)
            if "ctx" in attrs:
                attrs["ctx"] = None     # the program's (or the step's placed) context
            attrs.update(n.op.graph_attrs or ())
            st = Step(n.op, attrs, tuple(ins), tuple(outs), n.name, n)
            if placement is not None:
                st.ctx = placement[id(n)]
            steps.append(st)
        self.steps = steps
        self.nslots = len(slot)
        self.heads = [slot[(id(e[0]), e[1])] for e in outputs]
        self.placed = placement is not None
        self.move = move
        self.forward_bulk_size = None   # a hybridize() bulk size for recorded calls
        by_slot = {s: st for st in steps for s in st.outs}
        seen = set()
        for h, s in enumerate(self.heads):
            st = by_slot.get(s)
            if s in seen or st is None:
                continue
            seen.add(s)
            if len(st.outs) == 1 and st.node.num_outputs() == 1:
                st.direct = h

    def run(self, args, ctx, outs=None, monitor=None, monitor_all=False, tape_names=None,
            scope=None, steps=None):
        """Push every op on ``args`` (one per input); returns the head arrays
        (``outs``, written in place, when given). ``monitor(name, array)``
        sees every op output; with ``monitor_all`` also each op's inputs,
        first by variable name (for graph inputs), then as ``<op>_<input>``
        (MXNet's monitor callback order). ``tape_names`` (a dict) gets each
        recorded step's tape node id -> op name. ``scope()`` opens a bulk
        segment (default: the forward one while recording, else the
        inference one; False: none, for a graph run inside another op);
        ``steps`` replaces the steps (same slots)."""
        vals = [None] * self.nslots
        vals[:self.num_inputs] = args
        steps = self.steps if steps is None else steps
        if monitor is not None or tape_names is not None or self.placed or scope is False:
            self._run_watched(steps, vals, ctx, outs, monitor, monitor_all, tape_names)
        else:
            self._run_bulk(steps, vals, ctx, outs, scope)
        res = [vals[s] for s in self.heads]
        if outs is not None:
            copy = _reg.get("_copy")
            for i, a in enumerate(res):
                if a is not outs[i] and outs[i] is not None:
                    _invoke.invoke(copy, [a], {}, outs[i])
                    res[i] = outs[i]
        return res

    def _run_bulk(self, steps, vals, ctx, outs, scope):
        if scope is None:
            if _invoke.hooks.record is not None and _autograd.is_recording():
                limit = self.forward_bulk_size

                def scope():
                    return _engine.bulk_scope("forward", "forward", limit)
            else:
                scope = _inference_scope
        i, n = 0, len(steps)
        while i < n:
            with scope():
                while i < n and steps[i].op.name not in DYNAMIC:
                    self._step(steps[i], vals, ctx, outs, None)
                    i += 1
            if i < n:
                # an op whose output shape is a value (boolean_mask's count):
                # outside any segment, once its inputs are computed, its own
                # entry reads that value and pushes it
                st = steps[i]
                if not _engine.get().tracing():
                    for s in st.ins:
                        if isinstance(vals[s], NDArray):
                            vals[s].wait_to_read()
                self._step(st, vals, ctx, outs, DYNAMIC[st.op.name])
                i += 1

    def _run_watched(self, steps, vals, ctx, outs, monitor, monitor_all, tape_names):
        nv = self.num_inputs
        for st in steps:
            ins = [vals[i] for i in st.ins]
            if st.ctx is not None:
                # a placed graph (group2ctx): inputs from other contexts are copied here
                ins = [self.move(x, st.ctx) for x in ins]
            if monitor is not None and monitor_all:
                for i, (s, nm) in enumerate(zip(st.ins, st.monitor_input_names())):
                    if s < nv:
                        monitor(self.input_names[s], ins[i])
                    monitor("%s_%s" % (st.name, nm), ins[i])
            self._step(st, vals, st.ctx or ctx, outs, DYNAMIC.get(st.op.name), ins)
            if monitor is not None:
                for s, nm in zip(st.outs, st.out_names()):
                    monitor(nm, vals[s])
            if tape_names is not None:
                # the tape node of this step, for the monitor's backward names
                ag = getattr(vals[st.outs[0]], "_ag", None)
                if ag is not None and hasattr(ag, "node"):
                    tape_names[id(ag.node)] = st.name

    def _step(self, st, vals, ctx, outs, dyn, ins=None):
        if ins is None:
            ins = [vals[i] for i in st.ins]
        o = outs[st.direct] if (outs is not None and st.direct is not None) else None
        try:
            if dyn is None:
                r = _invoke.invoke(st.op, ins, st.attrs, o, ctx)
            else:
                r = dyn(*ins, **st.attrs)
        except MXNetError as e:
            raise renamed(e, "Error in operator %s (%s) of the %s: %s"
                          % (st.name, st.op.name, self.what, e)) from None
        if isinstance(r, (list, tuple)):
            for s, a in zip(st.outs, r):
                vals[s] = a
        else:
            vals[st.outs[0]] = r


def _inference_scope():
    return _engine.bulk_scope("inference", "forward")


def renamed(e, msg):
    """``e`` (same class, cause and traceback) with message ``msg``."""
    try:
        new = type(e)(msg)
    except Exception:  # noqa: BLE001 - an error class with another signature
        new = MXNetError(msg)
    new.__cause__ = e.__cause__
    return new.with_traceback(e.__traceback__)
