"""Compiled plans: a traced sequence of op calls replayed as ONE engine op.

MXNet's CachedOp with ``static_alloc``/``static_shape`` plans a graph once
per input shape and runs it without per-op bookkeeping. aiond's form: run
the graph once with ``engine.trace()`` on *placeholders* (arrays of the
right shape and dtype that are never computed), which collects every op
that would have been pushed - shape rules, attrs and all - without running
any. ``Plan`` turns those calls into a list of kernel steps over buffer
slots; ``Plan.push(inputs)`` then pushes one engine op that runs every
kernel in order on a worker and returns the output arrays at once.

Per call this costs one push, a handful of fresh handles and no shape rule,
tape entry or lock per op; on the worker, a loop of kernel calls.

A plan reads its inputs' vars and writes its outputs' vars (and the vars of
inputs that a step writes in place, such as BatchNorm's running stats or a
gradient buffer with ``grad_req='add'``), so it orders with other work
like any op. A kernel error fails the whole call: every output is poisoned
with an error naming the step's operator and the user's line.
"""
from __future__ import annotations

import collections
import math

import numpy as np

from .. import engine as _engine_mod
from ..engine.scheduler import CALLER
from ..engine.segments import TraceError
from ..engine.var import Failure, user_origin
from ..engine.storage import Storage
from ..engine.cpu import SPLIT_MIN
from . import _invoke as _inv
from ._invoke import ROWS_SPLIT_MIN, _Call, data_of
from ..ops.onednn import kept_scope as _kept_scope

__all__ = ["Plan", "PlanCache", "placeholder", "TraceError", "trace", "enabled"]


def enabled():
    """``AIOND_FUSE_GRAPHS=0`` turns plans off: hybridized graphs, executors
    and gradient rules then push their ops one by one."""
    import os
    return os.environ.get("AIOND_FUSE_GRAPHS", "1").strip().lower() not in ("0", "false", "off")

_engine = _engine_mod.get()
_np = np
_MAX_WORKSPACES = 4       # sets of intermediate buffers a plan keeps for reuse
_INLINE_STEPS = 16
_MAX_KEPT_BYTES = 256 << 20  # a plan keeps at most this much in idle workspaces
_prod = math.prod


def placeholder(shape, dtype, ctx):
    """A handle of ``shape``/``dtype`` whose storage is never allocated."""
    from ._invoke import new_array
    return new_array(tuple(shape), np.dtype(dtype), ctx)


def trace(fn, *args):
    """Run ``fn(*args)`` collecting the ops it pushes; returns
    ``(result, members, inline)`` (inline: every op was small enough to run
    on the pushing thread). Raises ``TraceError`` if ``fn`` waited for a
    value or pushed work that is not a registry op."""
    with _engine.trace() as t:
        out = fn(*args)
    for m in t.members:
        if type(m.fn) is not _Call:
            raise TraceError("%s is not a plain operator call" % m.name)
    return out, t.members, t.inline


class _Step:
    __slots__ = ("kernel", "attrs", "ins", "outs", "rng", "name", "fresh", "rows", "host", "op",
                 "whole", "writes")

    def __init__(self, kernel, attrs, ins, outs, rng, name, fresh):
        self.op = None          # the registry op (replay() pushes it again)
        # the input slots when every input is a whole slot (no view to make)
        self.whole = None if any(r[1] is not None or r[2] is not None for r in ins) \
            else tuple(r[0] for r in ins)
        self.kernel, self.attrs, self.ins, self.outs = kernel, attrs, ins, outs
        self.rng, self.name, self.fresh = rng, name, fresh
        # rows(xp, ins, out, attrs) -> (n, run(lo, hi)): a step big enough to
        # share between workers when one is idle (as invoke's split ops)
        self.rows = None
        self.host = False       # a numpy-only kernel (op.host_kernel): on a GPU, run on the host
        self.writes = ()        # input slots the op writes in place (its call's declared writes)


def _rows_of(call):
    op = call.op
    if len(call.outs) != 1 or call.rng is not None:
        return None
    in_shapes = [h._shape for h in call.ins]
    out_shape = call.outs[0]._shape
    if op.rows is not None and callable(op.inline):
        if op.inline(call.attrs, in_shapes, [out_shape]) >= ROWS_SPLIT_MIN:
            return op.rows
        return None
    if op.elemwise:
        n = _prod(out_shape)
        if n >= SPLIT_MIN and all(s == out_shape for s in in_shapes):
            return _elemwise_rows(op.kernel)
    return None


def _elemwise_rows(kernel):
    def rows(xp, ins, out, attrs):
        fo = out.reshape(-1)
        fi = [a.reshape(-1) for a in ins]

        def run(lo, hi):
            kernel(xp, *[a[lo:hi] for a in fi], out=fo[lo:hi], **attrs)
        return fo.size, run
    return rows


def handle(st, shape, off=None):
    """A fresh NDArray handle over Storage ``st`` (``off``: a flat view's start)."""
    cls = _inv._NDArray         # set once ndarray.py has loaded
    h = cls.__new__(cls)
    h._st = st
    h._shape = shape
    h._dtype = st.dtype
    h._off = off
    h._ag = None
    return h


def _ref(h, slot_of):
    """(slot, off, shape) of handle ``h``; off/shape None for a whole slot."""
    st = h._st
    s = slot_of[id(st)]
    if not h._off and h._shape == st.shape:
        return (s, None, None)
    return (s, h._off, h._shape)


# forward identities: MXNet runs them in place; a plan drops them and lets the
# producer write where the identity would have copied to
_IDENTITIES = frozenset(("BlockGrad", "make_loss"))


def _elide_identities(steps, outputs, nin, shapes):
    if not any(st.name in _IDENTITIES for st in steps):
        return steps
    readers = collections.Counter(r[0] for st in steps for r in st.ins)
    readers.update(r[0] for r in outputs)
    # no step before the identity may touch its destination: the producer
    # writes it earlier than the identity would have
    first = {}
    for i, st in enumerate(steps):
        for r in st.ins + st.outs:
            first.setdefault(r[0], i)
    producer = {}
    for st in steps:
        for s in st.fresh:
            producer[s] = st
    kept = []
    for i, st in enumerate(steps):
        if st.name in _IDENTITIES and len(st.ins) == 1 and len(st.outs) == 1:
            (s_in, off_i, _), (s_out, off_o, _) = st.ins[0], st.outs[0]
            src = producer.get(s_in)
            if (src is not None and s_in >= nin and readers[s_in] == 1 and first[s_out] == i
                    and off_i is None and off_o is None and shapes[s_in] == shapes[s_out]
                    and all(r[0] != s_in or r[1] is None for r in src.outs)):
                src.outs = tuple((s_out, None, None) if r[0] == s_in else r for r in src.outs)
                src.fresh = tuple(x for x in src.fresh if x != s_in) + tuple(
                    x for x in st.fresh if x == s_out)
                if s_out in st.fresh:
                    producer[s_out] = src
                continue
        kept.append(st)
    return kept


class Plan:
    """Replays traced op calls ``members`` as one engine op.

    ``inputs``: the placeholder handles the caller will bind to real arrays
    (in order); ``outputs``: the handles to return. Any other array the
    calls read (a constant made before the trace) is kept and read as is.
    """

    def __init__(self, members, inputs, outputs, name="plan", inline=False, partial=False,
                 fuse=False):
        """``fuse``: inference on the CPU; Convolution + BatchNorm (+ ReLU)
        steps may run as one (``_plan_fuse``), and runs of oneDNN steps as
        one chain keeping oneDNN's layouts between them (``_plan_chain``)."""
        self.name = name
        slot_of = {}
        shapes = []             # per slot: (shape, dtype) of its buffer
        keep = []               # per slot: an external Storage read as is, or None
        for h in inputs:
            st = h._st
            if id(st) in slot_of:
                raise TraceError("plan inputs share a buffer")
            slot_of[id(st)] = len(shapes)
            shapes.append((st.shape, st.dtype))
            keep.append(None)
        self.nin = len(inputs)
        written = set()
        steps = []

        def new_slot(st, kept):
            slot_of[id(st)] = len(shapes)
            shapes.append((st.shape, st.dtype))
            keep.append(kept)
            return slot_of[id(st)]
        for m in members:
            call = m.fn
            ins = []
            for h in call.ins:
                if id(h._st) not in slot_of:
                    new_slot(h._st, h._st)      # made before the trace: read as is
                ins.append(_ref(h, slot_of))
            outs = []
            fresh = []
            for h in call.outs:
                if id(h._st) not in slot_of:
                    fresh.append(new_slot(h._st, None))
                else:
                    written.add(slot_of[id(h._st)])
                outs.append(_ref(h, slot_of))
            step = _Step(call.op.kernel, call.attrs, tuple(ins), tuple(outs),
                         call.rng is not None, call.op.name, tuple(fresh))
            step.op = call.op
            step.rows = _rows_of(call)
            step.host = call.op.host_kernel
            steps.append(step)
        # ops that update inputs in place (BatchNorm's running stats): their
        # kernels write buffers the op call only lists among its inputs
        slot_of_var = {id(h._st.var): k for k, h in enumerate(inputs)}
        for m, step in zip(members, steps):
            ks = tuple(k for k in (slot_of_var.get(id(v)) for v in m.writes) if k is not None)
            step.writes = ks
            written.update(ks)
        if fuse:
            from . import _plan_fuse
            steps, written = _plan_fuse.fuse(steps, [_ref(h, slot_of) for h in outputs],
                                             written, shapes)
            # runs of oneDNN steps exchange blocked layouts (``_plan_chain``)
            from . import _plan_chain
            steps, written = _plan_chain.chain(steps, [_ref(h, slot_of) for h in outputs],
                                               written, shapes)
        for s in written:
            if keep[s] is not None:
                raise TraceError("a step writes an array made outside the graph")
        self.steps = steps
        # small steps only, and few: run on the pushing thread when ready
        # (as invoke runs a tiny op), which holds the engine's lock meanwhile
        if inline is True and len(steps) <= _INLINE_STEPS:
            self.inline = True
        else:
            # bigger plans run on a plain pushing thread when ready (see
            # Engine.push), unless a step's kernel waits for other ops
            self.inline = CALLER if all(m.fn.op.caller for m in members) else False
        self.shapes = shapes
        self.keep = keep
        self.nslots = len(shapes)
        self.written_inputs = sorted(s for s in written if s < self.nin)
        self.outputs = [_ref(h, slot_of) for h in outputs]
        self.steps = steps = _elide_identities(steps, self.outputs, self.nin, shapes)
        self._out_uses = collections.Counter(s for s, _, _ in self.outputs)
        self.out_slots = out_slots = list(self._out_uses)
        nin = self.nin
        # what push() needs per call, worked out once: the fresh output
        # buffers, which outputs may be computed in a caller's array, and
        # the vars of the arrays read as they are
        self._fresh_outs = [(s, shapes[s][0], shapes[s][1]) for s in out_slots if s >= nin]
        self._target_slot = [s if (s >= nin and off is None and shape is None
                                   and self._out_uses[s] == 1) else -1
                             for s, off, shape in self.outputs]
        self._keep_vars = [st.var for st in keep if st is not None]
        self.has_rng = any(st.rng for st in steps)
        # intermediate buffers: allocated on a plan's first runs, then reused
        # (one set per run in flight, so concurrent calls never share one)
        self.workspaces = []
        # a failing step poisons only what depends on it (the other outputs
        # are written), as the ops would have run one by one: for callers
        # that replace op-by-op work whose failures users see per array
        self.partial = partial
        self.nbytes = sum(int(np.prod(shapes[s][0], dtype=np.int64)) * shapes[s][1].itemsize
                          for s in out_slots if s >= self.nin)
        self._plan_memory()

    def _plan_memory(self):
        """MXNet's memory planning, simply: an intermediate's buffer goes
        back to a free list after the last step that reads it, and a later
        intermediate of the same byte size takes it. ``self.phys[s]`` is the
        buffer of slot ``s``; ``self.phys_bytes`` their sizes."""
        stores = set(self.out_slots)
        last = {}
        for i, st in enumerate(self.steps):
            for s, _, _ in st.ins:
                last[s] = i
            for s, _, _ in st.outs:
                last[s] = i
        free = {}
        freed = set()
        phys = {}
        sizes = []
        for i, st in enumerate(self.steps):
            for s in st.fresh:
                if s in stores:
                    continue
                shape, dt = self.shapes[s]
                nb = max(1, _prod(shape) * dt.itemsize)
                lst = free.get(nb)
                if lst:
                    phys[s] = lst.pop()
                    freed.discard(phys[s])
                else:
                    phys[s] = len(sizes)
                    sizes.append(nb)
            # buffers whose last reader is this step are free for later steps
            for s in [r[0] for r in st.outs] + [r[0] for r in st.ins]:
                p = phys.get(s)
                if p is not None and last.get(s) == i and p not in freed:
                    freed.add(p)
                    free.setdefault(sizes[p], []).append(p)
        self.phys = phys
        self.phys_bytes = sizes
        # a oneDNN chain keeps its inner values in scratch of its own
        self.workspace_bytes = sum(sizes) + sum(
            st.attrs["chain"].nbytes for st in self.steps if st.op is None and "chain" in st.attrs)

    def __repr__(self):
        return "<Plan %s: %d steps>" % (self.name, len(self.steps))

    def replay(self, inputs):
        """Push this plan's steps op by op on NDArrays ``inputs`` (whole
        arrays, as the placeholders were); returns the outputs. Inside
        ``trace()`` the steps become members of the plan being traced: a
        hybridized graph's backward joins the backward of the tape around it
        with the same kernels, attributes and order. Raises ``TraceError``
        for what it cannot push again as it ran (a random step, one in the
        other training mode, one writing into an array it did not make)."""
        if len(inputs) != self.nin:
            raise TraceError("plan %s takes %d inputs, got %d" % (self.name, self.nin, len(inputs)))
        bufs = list(inputs) + [None] * (self.nslots - self.nin)
        for s, st in enumerate(self.keep):
            if st is not None:
                bufs[s] = handle(st, st.shape)

        def ref(r):
            s, off, shape = r
            h = bufs[s]
            if h is None:
                raise TraceError("plan %s reads a slot before it is written" % self.name)
            if off is None and shape is None:
                return h
            return handle(h._st, h._shape if shape is None else shape, (h._off or 0) + (off or 0))
        training = _inv.hooks.is_training()
        for step in self.steps:
            op = step.op
            if op is None:
                raise TraceError("%s is a fused step" % step.name)
            if step.rng or op.needs_rng:
                raise TraceError("%s draws random numbers" % step.name)
            attrs = step.attrs
            if op.train_aware and attrs.get("_train", False) != training:
                raise TraceError("%s ran in the other training mode" % step.name)
            ins = [ref(r) for r in step.ins]
            if len(step.fresh) != len(step.outs) or any(r[1] is not None or r[2] is not None
                                                        for r in step.outs):
                raise TraceError("%s writes into an array it did not make" % step.name)
            got = _inv.invoke(op, ins, attrs)
            got = got if isinstance(got, (list, tuple)) else [got]
            if len(got) != len(step.outs):
                raise TraceError("%s returned %d outputs, the plan has %d"
                                 % (step.name, len(got), len(step.outs)))
            for r, h in zip(step.outs, got):
                bufs[r[0]] = h
        return [ref(r) for r in self.outputs]

    def push(self, inputs, ctx, targets=None):
        """Push one op running the plan on NDArrays ``inputs``; returns the
        output NDArrays (fresh handles; an output that is an input slot is
        the input's buffer, as the op call would have returned it).
        ``targets`` (per output, an NDArray or None) asks for outputs to be
        computed in those arrays' buffers; an output comes back as its
        target itself when that was possible (same shape and dtype, whole
        buffers, an output of its own)."""
        nin = self.nin
        if len(inputs) != nin:
            raise TraceError("plan %s takes %d inputs, got %d" % (self.name, nin, len(inputs)))
        gpu = ctx.device_typeid == 2
        if gpu:
            from ._gpu import GPUStorage as store_cls
        else:
            store_cls = Storage
        into = {}
        given = None
        if targets is not None:
            given = {}
            slots = self._target_slot
            shapes = self.shapes
            for k, t in enumerate(targets):
                s = slots[k]
                if t is None or s < 0:
                    continue
                tst = t._st
                if (t._off or t._shape != tst.shape or tst.shape != shapes[s][0]
                        or tst.dtype != shapes[s][1] or tst.ctx is not ctx or t._sparse):
                    continue
                given[s] = tst
                into[k] = t
        stores = {}
        for s, shape, dt in self._fresh_outs:
            st = given.get(s) if given else None
            stores[s] = st if st is not None else store_cls(shape, dt, ctx)
        outs = []
        for k, (s, off, shape) in enumerate(self.outputs):
            if k in into:
                outs.append(into[k])
                continue
            if s < nin:
                # the ref is relative to the input as the graph saw it (a whole
                # placeholder); the caller's array may itself be a view
                src = inputs[s]
                if shape is None:
                    h = handle(src._st, src._shape, src._off)
                else:
                    h = handle(src._st, shape, (src._off or 0) + off)
            else:
                st = stores[s]
                h = handle(st, st.shape if shape is None else shape, off)
            outs.append(h)
        written = self.written_inputs
        reads = {}
        writes = {}
        for i, x in enumerate(inputs):
            v = x._st.var
            if i in written:
                writes[v] = None
            else:
                reads[v] = None
        for v in self._keep_vars:
            reads[v] = None
        for st in stores.values():
            writes[st.var] = None
        rng = None
        if self.has_rng:
            from ..ops.random import rng_state
            rng = rng_state(ctx)
            writes[rng.var] = None
        rw = bool(written)
        for v in writes:
            if reads.pop(v, 0) is None:
                rw = True
        if gpu:
            # one launch of every step on the device's compute stream
            from ._gpu import plan_work
            work, ex = plan_work(self, list(inputs), stores, rng, ctx)
            _engine.push(work, tuple(reads), tuple(writes), self.name, self.nbytes, False, rw,
                         None, ex)
            return outs
        if self.partial:
            run = _PartialRun(self, list(inputs), stores, rng, user_origin(2), writes)
            _engine.push(run, tuple(reads), tuple(writes), self.name, self.nbytes, self.inline,
                         rw, None, None, run)
            if _engine.naive_depth and run.vfail:
                # the naive engine reports a failed op at its push, as MXNet's
                for f in run.vfail.values():
                    if f is not None and not f.reported:
                        raise f.error("the naive engine, at push")
            return outs
        run = _Run(self, list(inputs), stores, rng)
        _engine.push(run, tuple(reads), tuple(writes), self.name, self.nbytes, self.inline, rw)
        return outs


class _Run:
    """One pushed execution of a plan (the engine op's kernel)."""
    __slots__ = ("plan", "inputs", "stores", "rng")

    def __init__(self, plan, inputs, stores, rng):
        self.plan, self.inputs, self.stores, self.rng = plan, inputs, stores, rng

    def __call__(self):
        return self.run(_np, _engine.cpu)

    def run(self, xp, cpu, failed=None):
        """Every step's kernel with ``xp`` (numpy, or CuPy on a device's
        stream); ``cpu``: the CPU executor to split big steps over, or None.
        ``failed`` (slot -> Failure): a step's error is recorded there for
        the slots it writes, and steps reading such slots are skipped,
        instead of the first error ending the run."""
        plan = self.plan
        bufs = [None] * plan.nslots
        for i, h in enumerate(self.inputs):
            a = h._st.arr
            if a is None or h._off is not None or h._shape != h._st.shape:
                a = data_of(h)
            bufs[i] = a
        shapes = plan.shapes
        for s, st in enumerate(plan.keep):
            if st is not None:
                bufs[s] = st.get()
        stores = self.stores
        empty = xp.empty
        rng = self.rng
        try:
            ws = plan.workspaces.pop()
        except IndexError:
            # raw buffers by physical index, and the typed views of them made
            # so far (a workspace serves one run at a time; reusing its views
            # saves making them again at every step of every run)
            ws = ([None] * len(plan.phys_bytes), {})
        raws, views = ws
        phys = plan.phys
        prof = _engine.prof if cpu is not None else None
        step = None
        # kernels may keep what they derive from an input (oneDNN's reordered
        # weights) while its variable's version holds; not the inputs this
        # plan writes, whose version moves only when the run ends
        handles = self.inputs
        if plan.written_inputs:
            handles = [None if i in plan.written_inputs else h for i, h in enumerate(handles)]
        wscope = _kept_scope(bufs, handles)
        wscope.__enter__()
        try:
            for step in plan.steps:
                if failed:
                    fail = _failed_input(step, failed)
                    if fail is not None:
                        for s, _, _ in step.outs:
                            failed[s] = fail
                        continue
                if prof is not None:
                    t0 = prof.now_us()
                for s in step.fresh:
                    st = stores.get(s)
                    if st is not None:
                        bufs[s] = st.get()
                        continue
                    v = views.get(s)
                    if v is None:
                        p = phys[s]
                        raw = raws[p]
                        if raw is None:
                            raw = raws[p] = empty(plan.phys_bytes[p], _np.uint8)
                        shape, dt = shapes[s]
                        v = views[s] = raw[:_prod(shape) * dt.itemsize].view(dt).reshape(shape)
                    bufs[s] = v
                whole = step.whole
                if whole is not None:
                    ins = [bufs[s] for s in whole]
                else:
                    ins = [bufs[s] if off is None and shape is None else _view(bufs[s], off, shape)
                           for s, off, shape in step.ins]
                outs = step.outs
                if len(outs) == 1:
                    s, off, shape = outs[0]
                    out = bufs[s] if off is None and shape is None else _view(bufs[s], off, shape)
                else:
                    out = [bufs[s] if off is None and shape is None else _view(bufs[s], off, shape)
                           for s, off, shape in outs]
                if step.host and xp is not _np:
                    from ._gpu import run_on_host
                    run_on_host(step.kernel, xp, None, ins, out, rng if step.rng else None,
                                step.attrs)
                else:
                    try:
                        if step.rng:
                            step.kernel(xp, *ins, out=out, rng=rng, **step.attrs)
                        elif step.rows is not None and cpu is not None:
                            n, run = step.rows(xp, ins, out, step.attrs)
                            if run is None:
                                step.kernel(xp, *ins, out=out, **step.attrs)
                            else:
                                cpu.run_ranges(n, run)
                        else:
                            step.kernel(xp, *ins, out=out, **step.attrs)
                    except Exception as e:  # noqa: BLE001
                        if failed is None:
                            raise           # named below, fails the whole op
                        # poisons what this step writes; the others run on
                        fail = Failure("%s (in %s)" % (step.name, plan.name), self.origin, e)
                        _engine.failures.append(fail)
                        for s, _, _ in step.outs:
                            failed[s] = fail
                if prof is not None:
                    # each step of the plan is a span of its own in the trace
                    prof.duration(step.name, "plan step", t0, prof.now_us(), "operator")
        except Exception as e:  # noqa: BLE001 - name the step, not the plan
            if step is not None:
                try:
                    e.aiond_op = "%s (in %s)" % (step.name, plan.name)
                except AttributeError:  # an exception type without a __dict__
                    pass
            raise
        finally:
            wscope.__exit__()
            self.inputs = None      # the op is done with them: free what the user dropped
            if (len(plan.workspaces) < _MAX_WORKSPACES
                    and plan.workspace_bytes * (len(plan.workspaces) + 1) <= _MAX_KEPT_BYTES):
                plan.workspaces.append(ws)


def _failed_input(step, failed):
    for s, _, _ in step.ins:
        f = failed.get(s)
        if f is not None:
            return f
    return None


class _PartialRun(_Run):
    """A plan run whose failures poison per output, in the engine's bulk
    protocol (``vfail``, as a segment's ``Runner``): a step that fails, or
    reads an input or a slot that failed, writes nothing, and every output
    slot it would have written carries its failure; the rest run."""
    __slots__ = ("origin", "writes", "vfail", "members")

    def __init__(self, plan, inputs, stores, rng, origin, writes):
        _Run.__init__(self, plan, inputs, stores, rng)
        self.origin, self.writes = origin, writes
        self.vfail = None
        self.members = ()       # (the bulk protocol's: none to mark done)

    def __call__(self):
        plan = self.plan
        failed = {}
        inputs = self.inputs
        for i, h in enumerate(inputs):
            exc = h._st.var.exc
            if exc is not None:
                failed[i] = exc
        for s, st in enumerate(plan.keep):
            if st is not None and st.var.exc is not None:
                failed[s] = st.var.exc
        self.run(_np, _engine.cpu, failed)
        vf = {}
        if failed:
            slot_var = {st.var: s for s, st in self.stores.items()}
            for i in plan.written_inputs:
                slot_var[inputs[i]._st.var] = i
            for v in self.writes:
                s = slot_var.get(v)
                vf[v] = failed.get(s) if s is not None else None
        self.vfail = vf


def _view(a, off, shape):
    flat = a.reshape(-1)
    if off is None:
        off = 0
    n = 1
    for d in shape:
        n *= d
    return flat[off:off + n].reshape(shape)


class PlanCache:
    """Compiled plans by key (a graph's signatures, gradient rules, whole
    tapes), bounded in entries and in the bytes of workspace their plans
    may keep; past either bound the oldest entries go first. ``size(value)``
    gives an entry's bytes; a value may be False (cached: "cannot be
    planned", which holds nothing)."""

    def __init__(self, max_entries, max_bytes, size):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.size = size
        self.nbytes = 0
        self._d = {}

    def get(self, key):
        return self._d.get(key)

    def put(self, key, value):
        d = self._d
        old = d.pop(key, None)
        if old:
            self.nbytes -= self.size(old)
        n = self.size(value) if value else 0
        while d and (len(d) >= self.max_entries or self.nbytes + n > self.max_bytes):
            v = d.pop(next(iter(d)))
            if v:
                self.nbytes -= self.size(v)
        d[key] = value
        self.nbytes += n

    def clear(self):
        self._d.clear()
        self.nbytes = 0

    def values(self):
        return self._d.values()

    def __len__(self):
        return len(self._d)

    def __contains__(self, key):
        return key in self._d

