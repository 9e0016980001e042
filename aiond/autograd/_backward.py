"""Imperative backward: ``backward()`` and ``grad()`` run the tape's walk
(``_walk.walk``) on the recorded arrays, each node's gradient from its rule
(a cached rule plan where one applies), or the whole tape as one cached
plan (``_plans.tape_via_plan``).

Gradient ops are ordinary engine ops, so backward returns at once and
``await x.grad.read()`` works; recorded again (``create_graph=True``) they
give higher-order gradients.
"""
from __future__ import annotations

from .. import engine as _engine
from .. import ndarray as _nd
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import view_of as _view
from . import _plans
from ._tape import Entry, Leaf, alias, set_recording_flag, state
from ._walk import add_grad, apply_rule, key_of, topo, walk, write_grad

__all__ = ["run_backward", "ignores_ograd"]


def ignores_ograd(h):
    """Whether no gradient rule reads ``h``'s head gradient: the op that made
    it is marked ``ignores_ograd`` (copies, as an executor makes into its
    output buffers, are looked through)."""
    ag = h._ag
    while isinstance(ag, Entry) and ag.node.op is not None and ag.node.op.name == "_copy":
        ag = ag.node.edges[0]
    if isinstance(ag, Entry) and getattr(ag.node.fn, "fused", False):
        return ag.node.fn.ignores_ograd(ag.index)
    if not isinstance(ag, Entry) or ag.node.op is None:
        return False
    return bool(getattr(ag.node.op.grad, "ignores_ograd", False))


def _parse_heads(heads, head_grads):
    if isinstance(heads, NDArray):
        heads = [heads]
    heads = list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError("backward: %d heads but %d head_grads" % (len(heads), len(head_grads)))
    for i, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and g.shape != h.shape:
            if (g.size == 0 and h.size == 0) or ignores_ograd(h):
                # no data either way, or an op whose gradient never reads its
                # output gradient: MXNet's executor neither copies nor checks it
                head_grads[i] = h.zeros_like().astype(g.dtype, copy=False)
                continue
            raise MXNetError("backward: head_grad of shape %s for a head of shape %s"
                             % (g.shape, h.shape))
        if g is not None and g.context != h.context and "gpu" in (
                g.context.device_type, h.context.device_type):
            raise MXNetError("backward: head gradient %d is on %s but its head is on %s; "
                             "move it with .as_in_context(%s)"
                             % (i, g.context, h.context, h.context))
    return heads, head_grads


def run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode,
                 into=None):
    """Backward from ``heads``: into the variables' ``.grad`` (``variables``
    None), else the list of the ``variables``' gradients. ``into`` (with
    ``variables``): an array per variable (or None) in which a gradient that
    one edge alone makes may be computed, in place of a new array (a bound
    executor's 'write' gradient buffers)."""
    F = _nd
    heads, head_grads = _parse_heads(heads, head_grads)
    for h in heads:
        if h._ag is None:
            raise MXNetError("backward: a head (shape %s) is not part of a recorded graph; "
                             "compute it inside autograd.record() from arrays that called "
                             "attach_grad()" % (h.shape,))
    order = None
    if variables is None and not create_graph:
        order = topo(heads)
        if _plans.tape_via_plan(F, heads, head_grads, order, retain_graph, train_mode):
            return None
    grads = {}          # key_of(entry or leaf) -> accumulated gradient
    leaves = {}
    scope = _engine.bulk_scope("backward", "backward")
    scope.__enter__()
    try:
        for h, g in zip(heads, head_grads):
            if g is None:
                g = F.ones_like(alias(h))
            ag = h._ag
            if isinstance(ag, Leaf):
                leaves[id(ag)] = ag
            add_grad(grads, key_of(ag), g)
    except BaseException:
        scope.__exit__(None, None, None)
        raise
    prev = (state.recording, state.training)
    set_recording_flag(create_graph)
    state.training = bool(train_mode)
    try:
        if order is None:
            order = topo(heads)
        # a leaf that gets its whole gradient from one node has it computed
        # in its grad buffer (MXNet's kWriteTo), with no copy after
        direct = None
        if not create_graph:
            if variables is None:
                direct = _direct_leaves(order, heads, _own_grad)
            elif into is not None:
                tg = {id(v._ag): t for v, t in zip(variables, into) if t is not None}
                if tg:
                    direct = _direct_leaves(order, heads, lambda leaf: tg.get(id(leaf)))
        rule = _node_rule(F, create_graph, direct)
        reached = walk(order, grads, rule, check=_check_live,
                       done=_after_node(retain_graph))
        for leaf in reached.values():
            if leaf.req == "null":
                leaf.grad = None    # MXNet: a 'null' variable a backward reached has no grad
        leaves.update(reached)
        if variables is not None:
            out = []
            for v in variables:
                g = grads.get(id(v._ag)) if isinstance(v._ag, Leaf) else None
                out.append(g if g is not None else F.zeros_like(alias(v)))
            return out
        set_recording_flag(prev[0])
        state.training = prev[1]
        for key, leaf in leaves.items():
            g = grads.get(key)
            if g is None or leaf.req == "null" or leaf.grad is None:
                continue
            leaf.fresh = True       # the Trainer's stale-gradient check reads this
            if g is leaf.grad:
                continue            # computed in place (see _direct_leaves)
            write_grad(leaf, g)
        return None
    finally:
        scope.__exit__(None, None, None)
        set_recording_flag(prev[0])
        state.training = prev[1]


def _check_live(node):
    if node.freed:
        raise MXNetError("backward: the graph through operator %s was already freed by "
                         "an earlier backward; pass retain_graph=True to the first "
                         "backward to differentiate twice" % node.name)


def _after_node(retain_graph):
    def done(node, igrads):
        if state.bwd_observer is not None:
            state.bwd_observer(node, igrads)        # a monitored executor's backward
        if not retain_graph:
            node.freed = True
            if getattr(node.fn, "fused", False):
                node.fn.release()
    return done


def _node_rule(F, create_graph, direct):
    """A node's input gradients on the recorded arrays."""
    def rule(node, ins, outs, ograds):
        if create_graph:
            # differentiate through inputs and outputs (rules like tanh's use
            # the output): give their aliases back their graph links
            ins = [_relink(x, e) for x, e in zip(node.inputs, node.edges)]
            outs = [_relink(y, Entry(node, i)) for i, y in enumerate(node.outputs)]
        targets = None
        if direct:
            targets = [direct.get(id(e)) if isinstance(e, Leaf) else None for e in node.edges]
        fn = node.fn
        if fn is not None:
            if getattr(fn, "fused", False):
                return fn._backward_entry(ograds, node.inputs, targets)
            return fn._backward_entry(ograds)
        op_rule = node.op.grad
        if op_rule is None:
            raise MXNetError(
                "operator %s is not differentiable (it has no gradient rule), but a "
                "gradient reaches it; wrap its input in BlockGrad/stop_gradient if no "
                "gradient should flow there" % node.name)
        need = tuple(e is not None for e in node.edges)
        igrads = None
        if not create_graph:
            igrads = _plans.rule_via_plan(F, node, ograds, need, state.training, targets)
        if igrads is None:
            igrads = apply_rule(op_rule, F, node.attrs, ins, outs, ograds, list(need))
        return igrads
    return rule


def _own_grad(leaf):
    return leaf.grad


def _direct_leaves(order, heads, target_of):
    """{id(leaf): target} for the leaves ('write', with a dense target)
    that exactly one edge of the graph reaches, and no head is: their whole
    gradient is computed in ``target_of(leaf)`` (MXNet's kWriteTo)."""
    uses = {}
    leaves = {}
    for node in order:
        for e in node.edges:
            if isinstance(e, Leaf):
                uses[id(e)] = uses.get(id(e), 0) + 1
                leaves[id(e)] = e
    for h in heads:
        uses.pop(id(h._ag), None)
    out = {}
    for k, n in uses.items():
        leaf = leaves[k]
        if n == 1 and leaf.req == "write":
            t = target_of(leaf)
            if t is not None and not t._sparse:
                out[k] = t
    return out


def _relink(x, edge):
    if edge is None:
        return x
    h = _view(x, x._shape, x._off)
    h._ag = edge
    return h
