"""``autograd.get_symbol``: the graph autograd recorded, as a Symbol.

Names follow MXNet's imperative recorder: marked variables are ``var<i>``,
inputs that were not recorded (constants) ``null<i>``, op nodes
``node_<i>``; the numbers count within one call here (MXNet counts per
process).
"""
from __future__ import annotations

from ..base import MXNetError
from .. import autograd as _ag
from .symbol import Symbol, _Node, _attr_str, parse_params

__all__ = ["tape_to_symbol"]


def tape_to_symbol(x):
    """The Symbol computing ``x`` from the recorded graph."""
    head = x._ag
    if head is None:
        raise MXNetError("NDArray is not part of a computation graph. Did you forget to turn "
                         "on recording?")
    names = {"var": 0, "null": 0, "node_": 0}

    def new_name(kind):
        i = names[kind]
        names[kind] = i + 1
        return "%s%d" % (kind, i)

    leaves = {}
    nodes = {}

    def leaf(ag):
        n = leaves.get(id(ag))
        if n is None:
            n = leaves[id(ag)] = _Node(None, new_name("var"))
        return (n, 0, 0)

    def entry(e):
        """The symbol entry of an autograd edge (iteratively, deep graphs are fine)."""
        if isinstance(e, _ag._Leaf):
            return leaf(e)
        stack = [e.node]
        while stack:
            an = stack[-1]
            if id(an) in nodes:
                stack.pop()
                continue
            todo = [d.node for d in an.edges
                    if isinstance(d, _ag._Entry) and id(d.node) not in nodes]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            nodes[id(an)] = _op_node(an, new_name, leaf, nodes)
        return (nodes[id(e.node)], e.index, 0)

    return Symbol._from([entry(head)])


def _op_node(an, new_name, leaf, nodes):
    if an.op is None and getattr(an.fn, "fused", False):
        return _cached_op_node(an, new_name, leaf, nodes)
    if an.op is None:
        raise MXNetError("autograd.get_symbol: the graph holds a custom autograd.Function "
                         "(%s), which has no symbolic form" % an.name)
    op = an.op
    attrs = {}
    for k, v in (an.attrs or {}).items():
        if k in op.pindex and v is not None:
            attrs[k] = _attr_str(k, v)
    node = _Node(op, new_name("node_"), attrs, _edge_inputs(an, new_name, leaf, nodes))
    node._params = parse_params(op, attrs, node.name, strict=False)
    return node


def _edge_inputs(an, new_name, leaf, nodes):
    inputs = []
    for d in an.edges:
        if isinstance(d, _ag._Leaf):
            inputs.append(leaf(d))
        elif isinstance(d, _ag._Entry):
            inputs.append((nodes[id(d.node)], d.index, 0))
        else:
            inputs.append((_Node(None, new_name("null")), 0, 0))
    return inputs


_CACHED_OP = None


def _cached_op_node(an, new_name, leaf, nodes):
    """A hybridized call, recorded as one node: MXNet's ``_CachedOp``."""
    global _CACHED_OP
    if _CACHED_OP is None:
        from ..ops.registry import Op
        _CACHED_OP = Op("_CachedOp", None, None, ("data",), (), variadic=True, free_attrs=True)
    node = _Node(_CACHED_OP, new_name("node_"), {}, _edge_inputs(an, new_name, leaf, nodes))
    node._params = {}
    return node
