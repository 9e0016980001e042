"""Common subexpression elimination, MXNet 1.9.1's executor pass
(src/executor/eliminate_common_expr_pass.cc), on by default and off with
``MXNET_ELIMINATE_COMMON_EXPR=0``.

Two op nodes with the same op, the same attributes and the same inputs
compute the same thing once - unless the op updates its inputs (BatchNorm's
moving statistics) or draws random numbers (Dropout, samplers). Repeated
until nothing changes; outputs that end up as one entry get ``_copy`` nodes
(``<name>_<k>_copy``) so each output stays its own array.
"""
from __future__ import annotations

import os

from ..ops import registry as _reg
from ..graph.ir import Node as _Node, dfs

__all__ = ["enabled", "eliminate_common_expr"]


def enabled():
    """MXNET_ELIMINATE_COMMON_EXPR (default on)."""
    v = os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip().lower()
    return v not in ("0", "false", "")


def _mergeable(n):
    op = n.op
    # a control-flow node is its bodies too, which its attrs do not show
    return op is not None and not op.mutates and not op.needs_rng and n.subgraphs is None


def _equal(n, m):
    return n.op is m.op and n.attrs == m.attrs and _mergeable(n)


def eliminate_common_expr(outputs):
    """The output entries of the optimized graph; ``outputs``' nodes must be
    a private copy (their inputs are rewritten in place)."""
    outputs = list(outputs)
    while True:
        groups = {}
        for n in dfs(outputs):
            if n.op is not None and n.inputs:
                key = tuple((id(e[0]), e[1]) for e in n.inputs)
                groups.setdefault(key, []).append(n)
        replace = {}
        for nodes in groups.values():
            done = set()
            for i, n in enumerate(nodes):
                if i in done or id(n) in replace:
                    continue
                for j in range(i + 1, len(nodes)):
                    if j not in done and _equal(n, nodes[j]):
                        done.add(j)
                        replace[id(nodes[j])] = n
        if not replace:
            break
        for n in dfs(outputs):
            n.inputs = [(replace.get(id(e[0]), e[0]),) + tuple(e[1:]) for e in n.inputs]
        outputs = [(replace.get(id(e[0]), e[0]),) + tuple(e[1:]) for e in outputs]
    # one array per output: repeated entries are copied
    seen = {}
    copy_op = _reg.get("_copy")
    for i, e in enumerate(outputs):
        key = (id(e[0]), e[1])
        k = seen.get(key)
        if k is None:
            seen[key] = 0
            continue
        seen[key] = k + 1
        node = _Node(copy_op, "%s_%d_copy" % (e[0].name, k), {}, [e])
        node._params = {}
        outputs[i] = (node, 0, 0)
    return outputs
