"""Concurrent inference calls of one plan, run as one batch.

A server's coroutines each call ``net(x)`` for one request. When the
workers are busy, those calls queue up as separate ops, each running the
same plan on a few rows. A ``Coalescer`` lets a call join the op that the
same plan already has ready in the queue, if that op has not started: the
op then runs every joined call's rows through the plan at once (one matrix
product instead of one per call, through plans for 1, 2, 4, ... calls) and
hands each call its own rows of the outputs (views of the batch's buffer).
A read of a call's output taken before the batch ends is answered by the
batch itself, without a read op per call.

Nothing waits for a batch to fill: a call joins only an op that is ready
and waiting for a worker anyway, so a lone request, or a server whose
workers keep up, runs exactly as before. Only graphs whose every step
treats the rows of the batch axis (axis 0 of the input) independently are
batched: the analysis below is an allow-list of operators and attributes;
any other step, a random one, or a step that writes an input in place
(other than BatchNorm's gamma, which every call sets to 1 alike) keeps the
graph unbatched. A batch holds at most ``MAX_BATCH_BYTES`` of one call's
buffers times its calls, and at most ``MAX_MEMBERS`` calls.

Joining is safe when the call would have seen the same state as the op it
joins: its own input and output buffers are free, and nothing has been
pushed on the shared arrays (the parameters) since the op was (a weight
update pushed in between must be seen by the later call). ``Engine.join``
checks both under the engine's lock.

Rows computed in a batch can differ from a lone call's in the last bits
(a matrix product sums in another order); ``hybridize(coalesce=False)``
turns batching off for a block, ``AIOND_COALESCE=0`` for all. A batch size
met for the first time compiles its plan on the calling loop (once per
power of two).
"""
from __future__ import annotations

import os
from asyncio import _get_running_loop

import numpy as np

from .. import engine as _engine_mod
from ..engine.scheduler import _tls
from ..engine.storage import Storage
from ._invoke import data_of
from .ndarray import loop_future
from ._plan import _Run, handle

__all__ = ["Coalescer", "enabled", "rowwise"]

_engine = _engine_mod.get()
MAX_MEMBERS = 64
MAX_BATCH_BYTES = 64 << 20     # a batch's intermediates and outputs, at most


def enabled():
    return os.environ.get("AIOND_COALESCE", "1").strip().lower() not in ("0", "false", "off")


# ----------------------------------------------------------- the analysis
def _axis_ok(axis, ndim):
    """``axis`` (an int, a tuple, or None for all) spares the batch axis."""
    if axis is None:
        return False
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if not axes:
        return False
    return all((a % ndim if ndim else a) != 0 for a in axes)


def _only_first(batched, ndims, attrs):
    return batched[0] and not any(batched[1:])


def _all(batched, ndims, attrs):
    return all(batched)


def _axis_attr(name, default):
    def rule(batched, ndims, attrs):
        return all(batched) and _axis_ok(attrs.get(name, default), ndims[0])
    return rule


def _reduce(batched, ndims, attrs):
    return (all(batched) and not attrs.get("exclude", False)
            and _axis_ok(attrs.get("axis"), ndims[0]))


def _reshape(batched, ndims, attrs):
    shape = tuple(attrs.get("shape") or ())
    return (all(batched) and not attrs.get("reverse", False) and len(shape) > 0
            and shape[0] == 0)


def _transpose(batched, ndims, attrs):
    axes = tuple(attrs.get("axes") or ())
    return all(batched) and len(axes) > 0 and axes[0] == 0


def _leaky(batched, ndims, attrs):
    return batched[0] and not any(batched[1:]) and attrs.get("act_type") != "rrelu"


def _dot(batched, ndims, attrs):
    return (batched[0] and not any(batched[1:]) and not attrs.get("transpose_a", False)
            and ndims[0] >= 2)


# operator -> rule(batched inputs, input ndims, attrs): rows stay independent
_RULES = {
    "FullyConnected": _only_first, "Convolution": _only_first,
    "Deconvolution": _only_first, "Embedding": _only_first,
    "BatchNorm": _only_first, "InstanceNorm": _only_first, "LayerNorm": _axis_attr("axis", -1),
    "GroupNorm": _only_first, "L2Normalization": _only_first, "LRN": _all,
    "Pooling": _all, "Activation": _all, "LeakyReLU": _leaky, "Dropout": _all,
    "Flatten": _all, "flatten": _all, "Reshape": _reshape, "reshape": _reshape,
    "softmax": _axis_attr("axis", -1), "log_softmax": _axis_attr("axis", -1),
    "SoftmaxActivation": _all,
    "expand_dims": _axis_attr("axis", 0), "transpose": _transpose,
    "Concat": _axis_attr("dim", 1), "concat": _axis_attr("dim", 1),
    "SliceChannel": _axis_attr("axis", 1), "split": _axis_attr("axis", 1),
    "slice_axis": _axis_attr("axis", 0),
    "sum": _reduce, "mean": _reduce, "max": _reduce, "min": _reduce, "prod": _reduce,
    "nansum": _reduce, "norm": _reduce,
    "argmax": _axis_attr("axis", None), "argmin": _axis_attr("axis", None),
    "dot": _dot, "batch_dot": _all, "UpSampling": _all,
}


def _broadcast(batched, shapes, out_ndim):
    # a batched operand brings the batch axis; the others must broadcast
    # along it: fewer dimensions than the output, or 1 on its axis 0
    if not any(batched):
        return True
    for b, s in zip(batched, shapes):
        if not b and len(s) >= out_ndim and s[0] != 1:
            return False
    return True


def rowwise(plan, pos):
    """Whether every row of ``plan``'s input ``pos`` (axis 0) flows through
    the plan alone, into the same rows of every output."""
    memo = plan.__dict__.setdefault("_rowwise", {})
    ok = memo.get(pos)
    if ok is None:
        ok = memo[pos] = _rowwise(plan, pos)
    return ok


def _rowwise(plan, pos):
    from ..ops import registry
    if plan.has_rng:
        return False
    # the one input an inference step writes: BatchNorm's gamma, set to 1
    # (fix_gamma) by every call alike
    gammas = {st.ins[1][0] for st in plan.steps if st.name == "BatchNorm"}
    if pos in plan.written_inputs or not set(plan.written_inputs) <= gammas:
        return False
    shapes = plan.shapes
    rows = shapes[pos][0][0] if shapes[pos][0] else None
    if not rows:
        return False
    batched = [False] * plan.nslots
    batched[pos] = True
    for st in plan.steps:
        ins = [batched[s] for s, _, _ in st.ins]
        outs = st.outs
        if not any(ins):
            continue
        for (s, off, shape), b in zip(st.ins, ins):
            # a view of a batched buffer must keep its rows whole
            if b and (off not in (None, 0) or (shape is not None and (
                    not shape or shape[0] != shapes[s][0][0]))):
                return False
        in_shapes = [shapes[s][0] if shape is None else shape for s, _, shape in st.ins]
        ndims = [len(s) for s in in_shapes]
        chain = st.attrs.get("chain") if st.op is None else None
        if chain is not None:
            # a oneDNN chain (``_plan_chain``): every op in it keeps samples
            # apart; its activations carry the rows, its parameters do not
            acts = set(chain.acts)
            if not all(b == (k in acts) for k, b in enumerate(ins)):
                return False
            for s, off, shape in outs:
                if off not in (None, 0) or shapes[s][0][0] != rows:
                    return False
                batched[s] = True
            continue
        try:
            op = registry.get(st.name)
        except Exception:  # noqa: BLE001 - not a registry operator
            return False
        rule = _RULES.get(op.name)
        if rule is not None:
            ok = rule(ins, ndims, st.attrs)
        elif op.name.startswith("broadcast_") or op.name.startswith("_npi_"):
            ok = _broadcast(ins, in_shapes, max(ndims))
        elif op.elemwise:
            ok = all(ins)
        else:
            ok = False
        if not ok:
            return False
        if op.name == "BatchNorm":
            outs = outs[:1]     # the others: the statistics used (the moving ones)
        for s, off, shape in outs:
            out_shape = shapes[s][0] if shape is None else shape
            if off not in (None, 0) or not out_shape or out_shape[0] != rows:
                return False
            batched[s] = True
    for s, off, shape in plan.outputs:
        if (s < plan.nin or off is not None or shape is not None or not batched[s]
                or plan._out_uses[s] != 1 or shapes[s][0][0] != rows):
            return False
    return True


# ----------------------------------------------------------- the batches
class _Member:
    """One call in a batch: its input, its output buffers, and the reads of
    its outputs that the batch answers itself (no read op per call)."""
    __slots__ = ("x", "stores", "group")

    def __init__(self, x, stores):
        self.x, self.stores = x, stores
        self.group = None

    def read(self, arr):
        """``await arr.read()`` of one of this call's outputs, answered by the
        batch at its end: a future, or None (then read() pushes a read op)."""
        lf = loop_future()
        if lf is None:
            return None
        g = self.group
        with _engine.lock:
            # only while the batch still holds the output and nothing was
            # pushed on it since (a later write must not be seen, an earlier
            # one is the batch itself)
            opr = g.opr if g is not None else None
            if (opr is None or opr.done or g.answered
                    or arr._st.var.queue is not None):
                return None
            if g.readers is None:
                # answered when the op is done: also when it never ran (an
                # input was poisoned) and its kernel could not answer
                g.readers = []
                prev = opr.on_done

                def on_done(o, prev=prev):
                    o.on_done = None        # (it refers to the group, the group to o)
                    if prev is not None:
                        prev(o)
                    g.deliver(o)
                opr.on_done = on_done
            g.readers.append((arr, lf[0], lf[1], _Answer()))
        return lf[0]


class _Answer:
    __slots__ = ("failure", "result")

    def __init__(self):
        self.failure = self.result = None


class _Group:
    """The kernel of one pushed op: the requests that joined it, run as
    batches of the plans for 1, 2, 4, ... requests."""
    __slots__ = ("co", "args", "members", "closed", "opr", "shared", "answered", "readers")

    def __init__(self, co, args, first):
        self.co, self.args, self.members, self.closed = co, args, [first], False
        self.opr = self.shared = self.readers = None
        self.answered = False
        first.group = self

    def __call__(self):
        with _engine.lock:
            self.closed = True      # joins end here (Engine.join holds the lock)
        members = self.members
        co = self.co
        ok = False
        try:
            i = 0
            while i < len(members):
                n = 1 << (len(members) - i).bit_length() - 1
                co.run(co.plans[n], self.args, members[i:i + n])
                i += n
            ok = True
        finally:
            self._answer(members, ok)
            self.args = self.members = None

    def _answer(self, members, ok):
        """Copy the outputs that attached reads asked for, while the op still
        holds them; ``deliver`` hands them over once the op is done."""
        with _engine.lock:
            self.answered = True        # no more attached reads
            readers = self.readers or ()
        for m in members:
            for st in m.stores.values():
                st.var.reader = None
        if ok:
            for arr, _, _, answer in readers:
                answer.result = np.array(data_of(arr), copy=True)

    def deliver(self, opr):
        by_inbox = {}       # (every reader's loop, usually one)
        for _, fut, inbox, answer in self.readers:
            answer.failure = opr.failure
            pairs = by_inbox.get(inbox)
            if pairs is None:
                pairs = by_inbox[inbox] = []
            pairs.append((fut, answer))
        for inbox, pairs in by_inbox.items():
            inbox.put_many(pairs)
        self.readers = None


class _Once:
    """A group's kernel as pushed: it lets go of the group once run. The op
    keeps its kernel and the group its op, and a server makes thousands of
    these a second: as a reference cycle each, with every member's buffers
    and vars, they were left to the cyclic collector, whose full passes
    stalled the event loop for ~20 ms."""
    __slots__ = ("group",)

    def __init__(self, group):
        self.group = group

    def __call__(self):
        g, self.group = self.group, None
        g()


class Coalescer:
    """Batches calls of ``plan`` (input ``pos`` carries the rows) that
    arrive while such a call waits in the queue. ``compile(shape)``: the
    same graph's plan for input ``pos`` of ``shape`` (None if it cannot)."""

    def __init__(self, plan, pos, ctx, compile):
        self.plans = {1: plan}
        self.ctx = ctx
        # a batch of n calls needs n times one call's buffers: a big model
        # (a conv net's activations) batches fewer calls
        per_call = plan.workspace_bytes + plan.nbytes
        self.max_members = max(1, min(MAX_MEMBERS, MAX_BATCH_BYTES // max(1, per_call)))
        self.pos = pos
        self.compile = compile
        self.group = None       # the last group pushed (complete: opr and shared set)
        self.broken = False
        out = plan.outputs
        self.out_slots = [s for s, _, _ in out]

    def _plan_for(self, n):
        plan = self.plans.get(n)
        if plan is None and not self.broken:
            base = self.plans[1]
            shape = base.shapes[self.pos][0]
            plan = self.compile((shape[0] * n,) + tuple(shape[1:]))
            if plan is None or len(plan.outputs) != len(base.outputs) or any(
                    plan.shapes[s][0] != (base.shapes[b][0][0] * n,) + base.shapes[b][0][1:]
                    for (s, _, _), (b, _, _) in zip(plan.outputs, base.outputs)):
                self.broken = True
                return None
            self.plans[n] = plan
        return plan

    def call(self, args, ctx):
        """Push (or join) one call from an event loop; returns its output
        NDArrays, or None when the caller must push the plan itself."""
        x = args[self.pos]
        if (x._off is not None or x._shape != x._st.shape or _engine.naive_depth
                or _tls.seg is not None or _get_running_loop() is None):
            # a view (its rows are not its buffer's), the naive engine, a
            # bulk segment, or a plain thread (which runs a ready op itself)
            return None
        base = self.plans[1]
        stores = {s: Storage(shape, dt, ctx) for s, shape, dt in base._fresh_outs}
        outs = [handle(stores[s], stores[s].shape) for s in self.out_slots]
        member = _Member(x, stores)
        g = self.group
        # read without the lock: a group that ran meanwhile has no members
        members = g.members if g is not None else None
        if members is not None and not g.closed and len(members) < self.max_members:
            n = len(members) + 1
            if (n & (n - 1)) or self._plan_for(n) is not None:
                plans = self.plans

                def admit():
                    # (another thread's call may have joined since n was taken:
                    # every batch size its rows split into needs its plan)
                    if g.closed:        # it ran (or runs): its members may be gone
                        return False
                    m = len(g.members) + 1
                    if m > self.max_members or g.args[self.pos] is x or any(
                            m >> b & 1 and (1 << b) not in plans for b in range(m.bit_length())):
                        return False
                    for a, b in zip(g.args, args):
                        if a is not b and b is not x:
                            return False
                    g.members.append(member)
                    member.group = g
                    for st in stores.values():
                        st.var.reader = member.read
                    return True
                if _engine.join(g.opr, (x._st.var,), tuple(st.var for st in stores.values()),
                                g.shared, admit):
                    return outs
        g = _Group(self, list(args), member)
        written = base.written_inputs
        reads = dict.fromkeys([a._st.var for i, a in enumerate(args) if i not in written]
                              + list(base._keep_vars))
        writes = dict.fromkeys([args[i]._st.var for i in written]
                               + [st.var for st in stores.values()])
        for v in writes:
            reads.pop(v, None)
        xv = x._st.var
        g.shared = tuple(v for v in list(reads) + [args[i]._st.var for i in written]
                         if v is not xv)
        for st in stores.values():
            st.var.reader = member.read
        g.opr = _engine.push(_Once(g), tuple(reads), tuple(writes), base.name, base.nbytes,
                             False, bool(written))
        self.group = g
        return outs

    def run(self, plan, args, members):
        """Run ``plan`` on the rows of ``members`` stacked; each member gets
        its own rows of every output."""
        pos = self.pos
        if len(members) == 1:
            m = members[0]
            inputs = list(args)
            inputs[pos] = m.x
            _Run(plan, inputs, m.stores, None).run(np, _engine.cpu)
            return
        xs = [data_of(m.x) for m in members]
        st = Storage((sum(a.shape[0] for a in xs),) + xs[0].shape[1:], xs[0].dtype, self.ctx)
        st.set(np.concatenate(xs))
        inputs = list(args)
        inputs[pos] = handle(st, st.shape)
        # fresh, unpooled outputs: each member's output becomes a view of
        # its rows (the buffer lives while one of them does)
        stores = {}
        for s, shape, dt in plan._fresh_outs:
            stores[s] = Storage(shape, dt, self.ctx)
            stores[s].set(np.empty(shape, dt))
        _Run(plan, inputs, stores, None).run(np, _engine.cpu)
        base = self.plans[1]
        for (s, _, _), (b, _, _) in zip(plan.outputs, base.outputs):
            whole = stores[s].arr
            k = base.shapes[b][0][0]
            for j, m in enumerate(members):
                m.stores[b].set(whole[j * k:(j + 1) * k])
