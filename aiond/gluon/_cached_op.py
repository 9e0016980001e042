"""The cached graph of a hybridized HybridBlock (MXNet's ``CachedOp``).

``hybridize()`` traces ``hybrid_forward(F=mx.sym, ...)`` once into a Symbol;
``CachedOp`` flattens that graph into a topologically ordered list of steps
``(op, attrs, input slots, output slots)`` and replays it on NDArrays with
``invoke``: no Python layer code runs per call, and autograd records each
op as it would record the imperative path, so gradients are the same.

While a graph is traced, ``tracing()`` tells layer code the shapes and
dtypes of the real inputs; ``shape_of``/``dtype_of`` answer for any
intermediate Symbol (used by losses that need a shape where MXNet used an
operator aiond lacks). A trace that asked is marked shape-dependent and is
re-traced for new input shapes.
"""
from __future__ import annotations

import threading

from .. import autograd
from .. import engine as _engine
from .._fused import FusedGraph, enabled
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray import _invoke
from ._init_shapes import InitShapes

__all__ = ["CachedOp", "tracing", "shape_of", "dtype_of", "ndim_of"]


class _TraceState(threading.local):
    stack = None


_state = _TraceState()


class _Trace:
    """Known input shapes/dtypes of the graph being traced."""

    def __init__(self, shapes, dtypes):
        self.shapes = dict(shapes)
        self.dtypes = dict(dtypes)
        self.shape_dependent = False

    def __enter__(self):
        if _state.stack is None:
            _state.stack = []
        _state.stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()


def tracing(shapes=None, dtypes=None):
    """``with tracing({'data': (2, 3)}, {'data': np.float32}) as t:`` while
    building a graph; ``t.shape_dependent`` tells whether layer code used a
    shape."""
    return _Trace(shapes or {}, dtypes or {})


def _current():
    st = _state.stack
    return st[-1] if st else None


def _full(s):
    return bool(s) and all(d > 0 for d in s)


def shape_of(x):
    """The shape of NDArray or Symbol ``x`` (a Symbol's is inferred from the
    inputs of the graph being traced, or its variables' ``__shape__``);
    None when unknown."""
    if isinstance(x, NDArray):
        return x.shape
    tr = _current()
    known = dict(tr.shapes) if tr is not None else {}
    try:
        args = set(x.list_arguments()) | set(x.list_auxiliary_states())
        _, out, _ = x.infer_shape_partial(**{k: v for k, v in known.items() if k in args})
    except MXNetError:
        return None
    if not out or not out[0] or not _full(tuple(out[0])):
        return None
    if tr is not None:
        tr.shape_dependent = True
    return tuple(out[0])


def ndim_of(x):
    s = shape_of(x)
    return None if s is None else len(s)


def dtype_of(x):
    """The dtype of NDArray or Symbol ``x``; None when unknown."""
    if isinstance(x, NDArray):
        return x.dtype
    tr = _current()
    known = dict(tr.dtypes) if tr is not None else {}
    try:
        args = set(x.list_arguments()) | set(x.list_auxiliary_states())
        _, out, _ = x.infer_type_partial(**{k: v for k, v in known.items() if k in args})
    except MXNetError:
        return None
    if not out or out[0] is None:
        return None
    return out[0]


# ------------------------------------------------------------------ CachedOp


class _Step:
    __slots__ = ("op", "attrs", "ins", "outs", "name", "has_ctx")

    def __init__(self, op, attrs, ins, outs, name, has_ctx):
        self.op, self.attrs, self.ins, self.outs = op, attrs, ins, outs
        self.name, self.has_ctx = name, has_ctx


class CachedOp:
    """A Symbol compiled for replay: call it with the NDArrays of the
    graph's inputs (``sym.list_inputs()`` order); returns the list of
    output NDArrays."""

    def __init__(self, sym, flags=()):
        from ..symbol.symbol import dfs
        self.flags = dict(flags)
        outputs = sym._outputs
        order = dfs(outputs)
        slot = {}
        self.input_names = []
        for n in order:
            if n.op is None:
                slot[(id(n), 0)] = len(slot)
                self.input_names.append(n.name)
        self.num_inputs = len(slot)
        self.steps = []
        for n in order:
            if n.op is None:
                continue
            ins = []
            for e in n.inputs:
                k = (id(e[0]), e[1])
                if k not in slot:
                    raise MXNetError("hybridized graph: node %s reads output %d of %s, which "
                                     "that operator does not return" % (n.name, e[1], e[0].name))
                ins.append(slot[k])
            outs = []
            for i in range(n.num_visible()):
                slot[(id(n), i)] = len(slot)
                outs.append(slot[(id(n), i)])
            attrs = dict(n.params)
            has_ctx = "ctx" in attrs
            if has_ctx:
                attrs["ctx"] = None
            attrs.update(n.op.graph_attrs or ())
            self.steps.append(_Step(n.op, attrs, tuple(ins), tuple(outs), n.name, has_ctx))
        self.nslots = len(slot)
        self.heads = [slot[(id(e[0]), e[1])] for e in outputs]
        # zeros(shape=(0, H)) & co: MXNet 1.x infers the 0 dims from the inputs
        self._init_shapes = InitShapes(sym, order, self.steps)
        self._inline_limit = int(self.flags.get("inline_limit", 2))
        self._fused = None
        if enabled() and self.steps:
            self._fused = FusedGraph(self._replay, _graph_name(order))

    def __call__(self, *args, ctx=None):
        if len(args) != self.num_inputs:
            raise MXNetError("CachedOp: expected %d inputs (%s), got %d"
                             % (self.num_inputs, ", ".join(self.input_names), len(args)))
        if ctx is None:
            for a in args:
                if isinstance(a, NDArray):
                    ctx = a.context
                    break
        fused = self._fused
        if fused is not None and ctx is not None and self._fusable(args):
            out = fused(args, ctx)
            if out is not None:
                return out
        return self._replay(args, ctx)

    def inference_plan(self, args, ctx):
        """The one plan a not-recording call with ``args`` pushes (None when
        it pushes the graph op by op)."""
        if self._fused is None or autograd.is_recording() or not self._fusable(args):
            return None
        return self._fused.inference_plan(args, ctx)

    def _fusable(self, args):
        for a in args:
            if not isinstance(a, NDArray):
                return False
        # MXNet records graphs of at most inline_limit ops op by op (inlined)
        return not (autograd.is_recording() and len(self.steps) <= self._inline_limit)

    def _replay(self, args, ctx):
        """Push the graph's ops one by one (as bulk segments)."""
        vals = [None] * self.nslots
        vals[:self.num_inputs] = args
        invoke = _invoke.invoke
        from ..ops.dynamic import DYNAMIC
        if _invoke.hooks.record is not None and autograd.is_recording():
            def scope():
                return _engine.bulk_scope("forward", "forward",
                                          self.flags.get("forward_bulk_size"))
        else:
            def scope():
                return _engine.bulk_scope("inference", "forward")
        steps = self.steps
        if self._init_shapes:
            steps = self._init_shapes.steps_for(self.input_names, args)
        i, n = 0, len(steps)
        while i < n:
            with scope():
                while i < n and steps[i].op.name not in DYNAMIC:
                    self._step(steps[i], vals, invoke, None, ctx)
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
                self._step(st, vals, invoke, DYNAMIC[st.op.name], ctx)
                i += 1
        return [vals[s] for s in self.heads]

    @staticmethod
    def _step(st, vals, invoke, dyn, ctx):
        ins = [vals[i] for i in st.ins]
        try:
            r = invoke(st.op, ins, st.attrs, None, ctx) if dyn is None else dyn(*ins, **st.attrs)
        except MXNetError as e:
            raise _renamed(e, "Error in operator %s (%s) of the hybridized graph: %s"
                           % (st.name, st.op.name, e)) from None
        if isinstance(r, (list, tuple)):
            for s, a in zip(st.outs, r):
                vals[s] = a
        else:
            vals[st.outs[0]] = r


def _graph_name(order):
    for n in order:
        if n.op is not None:
            return n.name.rsplit("_", 1)[0] if "_" in n.name else n.name
    return "graph"


def _renamed(e, msg):
    try:
        new = type(e)(msg)
    except Exception:  # noqa: BLE001 - an error class with another signature
        new = MXNetError(msg)
    new.__cause__ = e.__cause__
    return new.with_traceback(e.__traceback__)


def _install_symbol_hooks():
    # the NumPy front functions on Symbols may ask a traced input's shape/dtype
    from ..symbol.numpy._symbol import SYM
    SYM.shape_hook = shape_of
    SYM.dtype_hook = dtype_of


_install_symbol_hooks()
