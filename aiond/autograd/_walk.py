"""The one backward walk over the tape.

``walk`` visits the recorded nodes heads first, gives each the sum of the
gradients that reached its outputs, applies its gradient and passes the
input gradients on along its edges. The imperative backward runs it on the
recorded arrays (``_backward.py``); the tape plans (``_plans.py``) run the
same walk on placeholders while tracing, so a replayed backward computes
what the walk computes, in the same order, bit for bit.
"""
from __future__ import annotations

from .. import ndarray as _nd
from ..base import MXNetError
from ..ndarray.ndarray import copy_into as _copy_into
from ._tape import Entry

__all__ = ["topo", "walk", "key_of", "add_grad", "apply_rule", "write_grad"]


def key_of(ag):
    """The key of a tape place (an Entry or a Leaf) in a walk's gradients."""
    return (id(ag.node), ag.index) if type(ag) is Entry else id(ag)


def add_grad(grads, k, g):
    """Sum gradient ``g`` into ``grads[k]`` (heads given twice, edges that
    meet): the one place a walk accumulates."""
    prev = grads.get(k)
    grads[k] = g if prev is None else prev + g


def topo(heads):
    """Nodes reachable from heads, in reverse topological order (heads first)."""
    order, seen = [], set()
    stack = []
    for h in heads:
        if isinstance(h._ag, Entry):
            stack.append((h._ag.node, False))
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for e in node.edges:
            if isinstance(e, Entry) and id(e.node) not in seen:
                stack.append((e.node, False))
    order.reverse()
    return order


def walk(order, grads, rule, val=None, check=None, done=None):
    """Propagate ``grads`` (key_of(place) -> gradient, holding the heads'
    gradients) through the nodes ``order`` (from ``topo``); on return it
    holds the leaves' summed gradients. ``rule(node, ins, outs, ograds)``
    gives a node's input gradients (None where none flows); ``val(array)``
    maps the recorded arrays to the ones the gradients are computed on
    (default: themselves); ``check(node)`` runs before each node, ``done(node,
    igrads)`` after each node that a gradient reached. Returns the leaves
    the walk reached ({id(leaf): leaf})."""
    F = _nd
    reached = {}
    for node in order:
        if check is not None:
            check(node)
        n = len(node.outputs)
        ograds = [grads.pop((id(node), i), None) for i in range(n)]
        if all(g is None for g in ograds):
            continue
        outs = node.outputs if val is None else [val(y) for y in node.outputs]
        ograds = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, outs)]
        # gradient rules take dense output gradients (MXNet's storage fallback)
        ograds = [g.tostype("default") if g._sparse else g for g in ograds]
        ins = node.inputs if val is None else [val(x) for x in node.inputs]
        igrads = rule(node, ins, outs, ograds)
        if not isinstance(igrads, (list, tuple)):
            igrads = [igrads]
        if len(igrads) != len(node.edges):
            raise MXNetError("gradient of %s returned %d arrays for %d inputs"
                             % (node.name, len(igrads), len(node.edges)))
        if done is not None:
            done(node, igrads)
        for e, g in zip(node.edges, igrads):
            if e is None:
                continue
            if type(e) is Entry:
                if g is None:
                    continue
                k = (id(e.node), e.index)
            else:
                reached[id(e)] = e
                if g is None:
                    continue
                k = id(e)
            add_grad(grads, k, g)
    return reached


def apply_rule(rule, F, attrs, ins, outs, ograds, need):
    """A registry gradient rule's input gradients (``need``: per input,
    whether its gradient is wanted; passed to rules that take it)."""
    if getattr(rule, "takes_need", False):
        return rule(F, attrs, ins, outs, ograds, need=list(need))
    return rule(F, attrs, ins, outs, ograds)


def write_grad(leaf, g, dst=None):
    """Put gradient ``g`` into ``leaf.grad`` (or ``dst``, what stands for it
    in a traced plan) as its grad_req says."""
    dst = leaf.grad if dst is None else dst
    if leaf.req == "add":
        dst += g
    elif g.shape == dst.shape:
        _copy_into(g, dst)
    else:
        dst[:] = g
