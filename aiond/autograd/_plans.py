"""Gradient rules and whole tapes replayed as plans: one op per recorded
node in backward, or one op for the whole backward of a tape.

A gradient rule (``grad(F, attrs, inputs, outputs, out_grads)``) pushes a
few ``F`` ops (a FullyConnected's: two ``dot``s, a ``sum``, reshapes);
imperative backward pays each op's Python - argument parsing, shape rule,
handles - on every step. The ops a rule pushes depend only on the op, its
attributes, the shapes and dtypes involved and which inputs need a
gradient, so the rule is traced once per such key on placeholders
(``ndarray/_plan.py``) and replayed as one op after that; the values are
those of the same kernels in the same order.

Rules that cannot be traced (they read a value, push work of their own,
take sparse arrays) run as before; so do nodes recorded for
``create_graph`` (their gradient ops must be recorded themselves).
"""
from __future__ import annotations

from .. import engine as _engine_mod
from ..engine.scheduler import _tls as _sched_tls
from ..ndarray._plan import Plan, PlanCache, TraceError, enabled, placeholder, trace
from ..util import is_np_shape
from ._tape import Entry, Leaf, set_recording_flag, state
from ._walk import add_grad, apply_rule, key_of, walk, write_grad

_engine = _engine_mod.get()

__all__ = ["rule_via_plan"]

_MAX = 4096
_MAX_RULE_BYTES = 256 << 20     # workspaces the cached rule plans may keep, together


def _entry_bytes(entry):
    return entry[0].workspace_bytes


_plans = PlanCache(_MAX, _MAX_RULE_BYTES, _entry_bytes)
_enabled = [enabled()]      # read once (per process), as MXNet reads its variables


def refresh():
    """Read ``AIOND_FUSE_GRAPHS`` again and forget the cached plans."""
    _enabled[0] = enabled()
    _tapes.max_bytes = _MAX_TAPE_BYTES
    _plans.clear()
    _tapes.clear()


def _key(node, ins, outs, ograds, need, training, ctx):
    attrs = node.attrs
    try:
        akey = tuple(sorted(attrs.items())) if attrs else ()
        k = (node.op, node.op.grad, akey, tuple((x._shape, x._dtype) for x in ins),
             tuple((y._shape, y._dtype) for y in outs),
             tuple((g._shape, g._dtype) for g in ograds), need, training, ctx,
             is_np_shape())
        hash(k)
    except TypeError:       # an attribute value that is not hashable
        return None
    return k


def rule_via_plan(F, node, ograds, need, training, targets=None):
    """The input gradients of ``node`` (a list with None where no gradient
    flows), from its rule's cached plan; None when the rule cannot be
    planned. ``targets[i]``: an array to compute input ``i``'s gradient in
    (see ``Plan.push``)."""
    if _engine.tracing() or not _enabled[0]:
        return None         # a graph being traced takes the rule's own ops
    ins, outs = node.inputs, node.outputs
    for a in ins:
        if a._sparse:
            return None
    for a in ograds:
        if a._sparse:
            return None
    ctx = ins[0]._st.ctx if ins else outs[0]._st.ctx
    key = _key(node, ins, outs, ograds, need, training, ctx)
    if key is None:
        return None
    entry = _plans.get(key)
    if entry is None:
        entry = _build(F, node, ins, outs, ograds, need, ctx)
        _plans.put(key, entry)
    if entry is False:
        return None
    plan, mask = entry
    tg = None
    if targets is not None:
        tg = [t for t, m in zip(targets, mask) if m]
    got = plan.push(list(ins) + list(outs) + list(ograds), ctx, targets=tg)
    res = []
    k = 0
    for m in mask:
        if m:
            res.append(got[k])
            k += 1
        else:
            res.append(None)
    return res


def _build(F, node, ins, outs, ograds, need, ctx):
    pi = [placeholder(x._shape, x._dtype, ctx) for x in ins]
    po = [placeholder(y._shape, y._dtype, ctx) for y in outs]
    pg = [placeholder(g._shape, g._dtype, ctx) for g in ograds]
    rule = node.op.grad

    def run():
        return apply_rule(rule, F, node.attrs, pi, po, pg, need)
    try:
        igrads, members, inline = trace(run)
    except TraceError:
        return False
    except Exception:  # noqa: BLE001 - the rule raises the same on the real arrays
        return False
    if not isinstance(igrads, (list, tuple)):
        igrads = [igrads]
    mask = tuple(g is not None for g in igrads)
    real = [g for g in igrads if g is not None]
    try:
        plan = Plan(members, pi + po + pg, real, "backward_" + node.op.name, inline)
    except Exception:  # noqa: BLE001 - not a list of arrays the ops made: run it as is
        return False
    return plan, mask


# ------------------------------------------------------------ whole tapes
# An imperative training step records the same tape every iteration: the
# same ops, attributes, shapes and wiring, on new arrays. Its whole backward
# (head gradients, every node's rule, the sums where gradients meet, the
# writes into the leaves' .grad) is then traced once per tape signature and
# replayed as ONE op, instead of a rule plan per node. The kernels are the
# same ones, in the same order, so the values are bit for bit those of the
# node-by-node walk, which still runs every tape this cannot take (custom
# Functions, hybridized blocks, sparse arrays, device arrays, gradients
# asked for with variables=, create_graph). grad_req 'add' accumulates in
# the plan, in place, as the walk's `grad += g` does.

_MAX_TAPES = 256
_MAX_TAPE_BYTES = 512 << 20     # workspaces the cached tape plans may keep, together
# (variable-length loops make a tape per length)
_tapes = PlanCache(_MAX_TAPES, _MAX_TAPE_BYTES, _entry_bytes)


class _NoPlan(Exception):
    pass


def _signature(heads, head_grads, order, training):
    """(key, wiring, context) of a tape - the wiring: the arrays the plan
    reads and their index by (buffer, offset, shape), the leaves and their
    index, each node's index; raises ``_NoPlan`` when the tape is not one
    this path takes. (Run at every imperative backward: kept tight.)"""
    bind = []
    index = {}
    buffers = set()
    index_get = index.get

    def b(a):
        if a is None or a._sparse:
            raise _NoPlan
        st = a._st
        k = (id(st), a._off, a._shape)
        i = index_get(k)
        if i is None:
            if id(st) in buffers:
                raise _NoPlan       # two different views of one buffer
            buffers.add(id(st))
            i = index[k] = len(bind)
            bind.append(a)
        return i
    node_ix = {}
    for i, n in enumerate(order):
        node_ix[id(n)] = i
    leaves, leaf_ix = [], {}
    parts = []
    for n in order:
        edges = []
        for e in n.edges:
            if type(e) is Entry:
                edges.append((node_ix[id(e.node)], e.index))
            elif e is None:
                edges.append(None)
            elif isinstance(e, Leaf):
                j = leaf_ix.get(id(e))
                if j is None:
                    if e.grad is not None and e.grad._sparse:
                        raise _NoPlan
                    j = leaf_ix[id(e)] = len(leaves)
                    leaves.append(e)
                edges.append(-1 - j)
            else:
                raise _NoPlan
        op = n.op
        if n.freed:
            raise _NoPlan
        if op is None:
            # a hybridized graph: its compiled backward (one per graph
            # signature) on its inputs and the intermediates its forward saved
            saved = n.fn.saved
            if saved is None:
                raise _NoPlan
            parts.append((n.fn.comp, tuple([b(x) for x in n.inputs]),
                          tuple([b(y) for y in n.outputs]), tuple([b(x) for x in saved]),
                          tuple(edges)))
            continue
        if op.grad is None:
            raise _NoPlan
        # attrs come from the op's parser, in its parameters' order
        attrs = n.attrs
        parts.append((op, op.grad, tuple(attrs.items()) if attrs else (),
                      tuple([b(x) for x in n.inputs]), tuple([b(y) for y in n.outputs]),
                      tuple(edges)))
    for h, g in zip(heads, head_grads):
        ag = h._ag
        if type(ag) is not Entry:
            raise _NoPlan
        parts.append((node_ix[id(ag.node)], ag.index, b(h), None if g is None else b(g)))
    for leaf in leaves:
        g = leaf.grad
        if g is not None and id(g._st) in buffers:
            raise _NoPlan           # a gradient buffer that the backward also reads
        if leaf.req == "add" and g is not None:
            # accumulated in place: the plan reads and writes the buffer
            parts.append(("add", b(g)))
        else:
            parts.append((leaf.req, None if g is None else (g._shape, g._dtype)))
    parts.append(tuple([(a._shape, a._dtype) for a in bind]))
    ctx = bind[0]._st.ctx
    parts.append((training, ctx, is_np_shape()))
    return tuple(parts), (bind, index, leaves, leaf_ix, node_ix), ctx


def tape_via_plan(F, heads, head_grads, order, retain_graph, training):
    """Run the backward of the tape ``order`` (reverse topological, from
    ``heads``) as one cached plan that writes the leaves' gradients.
    Returns False, having done nothing, when the tape is not one it takes."""
    if not order or not _enabled[0] or _sched_tls.seg is not None:
        return False        # (an open segment or trace takes the ops one by one)
    for n in order:
        if n.fn is not None and not getattr(n.fn, "fused", False):
            return False    # a custom Function: walked node by node
    try:
        key, wiring, ctx = _signature(heads, head_grads, order, training)
        entry = _tapes.get(key)     # (tuples do not cache their hash: one lookup)
    except (_NoPlan, TypeError):    # TypeError: an attribute value is not hashable
        return False
    if ctx.device_typeid == 2:
        return False        # device plans fail as a whole: keep per-node errors there
    if entry is None:
        entry = _build_tape(F, heads, head_grads, order, wiring, ctx, training)
        _tapes.put(key, entry)
    if entry is False:
        return False
    plan, written, added = entry
    bind, leaves = wiring[0], wiring[2]
    targets = [leaves[j].grad for j in written]
    got = plan.push(bind, ctx, targets=targets)
    for j in added:
        leaves[j].fresh = True
    for j, g in zip(written, got):
        leaf = leaves[j]
        leaf.fresh = True       # the Trainer's stale-gradient check reads this
        if g is not leaf.grad:  # (not computed in place)
            write_grad(leaf, g)
    for leaf in leaves:
        if leaf.req == "null":
            leaf.grad = None    # MXNet: a 'null' variable a backward reached has no grad
    if not retain_graph:
        for n in order:
            n.freed = True
            if n.fn is not None:
                n.fn.release()      # a hybridized graph's saved intermediates
    return True


def _build_tape(F, heads, head_grads, order, wiring, ctx, training):
    """The tape's backward traced into one plan: the walk of ``_walk.walk``
    on placeholders of the arrays it reads, then the leaves' gradients as
    the plan's outputs ('add' ones summed into their buffers in place)."""
    bind, index, leaves, leaf_ix, node_ix = wiring
    ph = [placeholder(a._shape, a._dtype, ctx) for a in bind]

    def p(a):
        return ph[index[(id(a._st), a._off, a._shape)]]
    added = []

    def rule(n, ins, outs, ograds):
        if n.op is None:
            return n.fn.replay_entry(ograds, ins, [p(x) for x in n.fn.saved])
        return apply_rule(n.op.grad, F, n.attrs, ins, outs, ograds,
                          [e is not None for e in n.edges])

    def run():
        grads = {}
        for h, g in zip(heads, head_grads):
            k = key_of(h._ag)
            g = F.ones_like(p(h)) if g is None else p(g)
            add_grad(grads, k, g)
        walk(order, grads, rule, val=p)
        written, outs = [], []
        for j, leaf in enumerate(leaves):
            g = grads.get(id(leaf))
            if g is None or leaf.req == "null" or leaf.grad is None:
                continue
            if g._sparse:
                raise _NoPlan
            if leaf.req == "add":
                write_grad(leaf, g, p(leaf.grad))   # in place into .grad's buffer
                added.append(j)
                continue
            written.append(j)
            outs.append(g)
        return written, outs
    prev = (state.recording, state.training)
    set_recording_flag(False)
    state.training = bool(training)
    try:
        (written, outs), members, inline = trace(run)
        if not outs and not added:
            return False
        plan = Plan(members, ph, outs, "backward", inline, partial=True)
    except Exception:  # noqa: BLE001 - the node-by-node walk raises it properly
        return False
    finally:
        set_recording_flag(prev[0])
        state.training = prev[1]
    return plan, tuple(written), tuple(added)
