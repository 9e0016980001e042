"""Graph partitioning by subgraph backends: ``Symbol.optimize_for``,
``HybridBlock.optimize_for``/``hybridize(backend=...)`` and the C API's
``MXBuildSubgraphByOpNames``, with MXNet 1.9.1's semantics
(src/operator/subgraph/build_subgraph.cc).

A backend is a list of subgraph properties; a property selects groups of
connected nodes and replaces each group with one node holding the group as
its subgraph. aiond has the backends MXNet builds for every CPU:

- ``default`` and ``default_v2``: groups of the ops whose names were set by
  ``MXSetSubgraphPropertyOpNames[V2]``, each becoming a ``_CachedOp`` node
  named ``_CachedOp<i>`` (which runs the group as it ran before);
- ``ONEDNN``/``MKLDNN`` (and ``ONEDNN_QUANTIZE``/``MKLDNN_QUANTIZE``): the
  graph unchanged, as MXNet gives it when none of its fusion patterns match.
  aiond fuses below the graph instead: every CPU inference plan runs
  Convolution + BatchNorm (+ ReLU) as one step (``ndarray/_plan_fuse.py``),
  whichever backend was asked for, so the symbol keeps MXNet's op names.

The grouping is MXNet's: nodes are visited in topological order; from each
selected seed a breadth-first walk adds selected neighbours, and when the
group and the nodes outside it would form a cycle, the group drops the node
that closes it and tries again.
"""
from __future__ import annotations

from collections import OrderedDict, deque

from ..base import MXNetError
from ..ops import registry as _reg
from . import _subgraph_op  # noqa: F401  (installs _CachedOp's hooks)
from .symbol import Symbol, _copy_graph, _Node, dfs

__all__ = ["SubgraphProperty", "register_backend", "backend_properties", "partition",
           "optimize_for", "build_subgraph_by_op_names", "set_op_names", "remove_op_names",
           "set_op_names_v2", "remove_op_names_v2", "op_names_for_env", "partition_for_bind"]


class SubgraphProperty:
    """One partitioning rule of a backend: which nodes to group, and what
    node a group becomes. ``attrs`` holds MXNet's property attributes
    (``op_names`` for the default properties)."""

    def __init__(self, name, creates=True):
        self.name = name
        self.creates = creates
        self.attrs = {}

    def select(self, node):
        """Whether ``node`` may seed a group."""
        names = self.attrs.get("op_names")
        return bool(names) and node.op is not None and node.op.name in names

    def select_input(self, cur, node):
        return self.select(node)

    def select_output(self, cur, node):
        return self.select(node)

    def create_node(self, outputs, subgraph_id):
        """The node replacing a group whose outputs are ``outputs``."""
        node = _Node(_reg.get("_CachedOp"), "_CachedOp%d" % subgraph_id, {}, [])
        node.subgraphs = [list(outputs)]
        return node


class _Passthrough(SubgraphProperty):
    """A property that selects nothing (a fusion backend whose patterns
    aiond does not implement: the graph stays as it is)."""

    def select(self, node):
        return False


_BACKENDS: "OrderedDict[str, list]" = OrderedDict()
# MXSetSubgraphPropertyOpNames (v1): the op names bind uses for a backend
# picked by MXNET_SUBGRAPH_BACKEND
_ENV_OP_NAMES: dict = {}


def register_backend(name, properties):
    """Register backend ``name`` as a list of ``SubgraphProperty``."""
    _BACKENDS[name] = list(properties)


def backend_properties(name):
    props = _BACKENDS.get(name)
    if props is None:
        raise MXNetError("Cannot find subgraph backend %s; aiond has %s"
                         % (name, ", ".join(_BACKENDS)))
    return props


register_backend("default", [SubgraphProperty("default")])
register_backend("default_v2", [SubgraphProperty("default_v2")])
for _b in ("ONEDNN", "MKLDNN", "ONEDNN_QUANTIZE", "MKLDNN_QUANTIZE"):
    register_backend(_b, [_Passthrough(_b)])


def set_op_names(backend, op_names):
    """MXSetSubgraphPropertyOpNames: the op names bind groups when
    MXNET_SUBGRAPH_BACKEND names ``backend``."""
    _ENV_OP_NAMES[backend] = set(op_names)


def remove_op_names(backend):
    _ENV_OP_NAMES.pop(backend, None)


def op_names_for_env(backend):
    """The op names set for ``backend`` by ``MXSetSubgraphPropertyOpNames``."""
    return _ENV_OP_NAMES.get(backend)


def set_op_names_v2(backend, op_names):
    """MXSetSubgraphPropertyOpNamesV2: the op names every property of
    ``backend`` groups (in optimize_for and hybridize(backend=...))."""
    for p in backend_properties(backend):
        p.attrs["op_names"] = set(op_names)


def remove_op_names_v2(backend):
    for p in backend_properties(backend):
        p.attrs.pop("op_names", None)


# ------------------------------------------------------------------ the pass


class _Graph:
    """The graph being partitioned: nodes in topological order, each node's
    consumers, and the topological position of every input slot."""

    def __init__(self, heads):
        self.heads = heads
        self.order = dfs(heads)
        self.nid = {id(n): i for i, n in enumerate(self.order)}
        self.labels = [-1] * len(self.order)
        # id(node) -> OrderedDict id(consumer) -> (consumer, [input positions])
        self.consumers = {id(n): OrderedDict() for n in self.order}
        for n in self.order:
            for i, e in enumerate(n.inputs):
                d = self.consumers[id(e[0])]
                d.setdefault(id(n), (n, []))[1].append(i)
        self.slot_order = self._top_sort_slots()
        self._slot_nodes = {id(n): n for n in self.order}   # grows with the group nodes

    def _top_sort_slots(self):
        """nnvm's TopSortEntries: each input slot ``(id(node), i)`` and head
        ``('head', i)`` numbered in DFS order."""
        pos, visited = {}, set()
        for hi, e in enumerate(self.heads):
            node = e[0]
            if id(node) in visited:
                pos[("head", hi)] = len(pos)
                continue
            visited.add(id(node))
            stack = [[node, 0, ("head", hi)]]
            while stack:
                top = stack[-1]
                n, i, key = top
                if i == len(n.inputs):
                    pos[key] = len(pos)
                    stack.pop()
                    continue
                top[1] += 1
                src = n.inputs[i][0]
                if id(src) not in visited:
                    visited.add(id(src))
                    stack.append([src, 0, (id(n), i)])
                else:
                    pos[(id(n), i)] = len(pos)
        return pos

    def get(self, slot):
        if slot[0] == "head":
            return self.heads[slot[1]]
        return self._slot_nodes[slot[0]].inputs[slot[1]]

    def set(self, slot, entry):
        if slot[0] == "head":
            self.heads[slot[1]] = entry
        else:
            self._slot_nodes[slot[0]].inputs[slot[1]] = entry


def _label(g, prop, label, snid, excluded):
    """MXNet's LabelSubgraph: the group grown from seed ``snid`` (sorted node
    ids), or None after adding the node that closes a cycle to ``excluded``."""
    order, labels = g.order, g.labels
    labels[snid] = label
    queue, group = deque([snid]), []
    outside = OrderedDict()     # nid -> ([group nodes it feeds], [group nodes feeding it])
    while queue:
        cur = queue.popleft()
        group.append(cur)
        node = order[cur]
        for e in node.inputs:
            j = g.nid[id(e[0])]
            if labels[j] == -1 and j not in excluded and prop.select_input(node, order[j]):
                labels[j] = label
                queue.append(j)
            elif labels[j] == -1:
                outside.setdefault(j, ([], []))[0].append(cur)
        for cons, _ in g.consumers[id(node)].values():
            j = g.nid.get(id(cons))
            if j is None:
                continue
            if labels[j] == -1 and j not in excluded and prop.select_output(node, cons):
                labels[j] = label
                queue.append(j)
            elif labels[j] == -1:
                outside.setdefault(j, ([], []))[1].append(cur)
    in_group = {id(order[i]) for i in group}

    def is_ancestor(anc, desc):
        if anc == desc:
            return True
        stack, count, target = [order[desc]], 0, order[anc]
        while stack and count < len(order):
            count += 1
            top = stack.pop()
            if top is target:
                return True
            for e in top.inputs:
                if id(e[0]) not in in_group:
                    stack.append(e[0])
        return False

    keys = sorted(outside)
    drop = -1
    for a, i in enumerate(keys):
        feeds, fed_by = (sorted(x) for x in outside[i])
        if feeds and fed_by:
            drop = max(drop, feeds[-1], fed_by[-1])
        elif fed_by:
            for j in keys[a + 1:]:
                feeds_j = sorted(outside[j][0])
                if feeds_j and is_ancestor(i, j):
                    drop = max(drop, fed_by[-1], feeds_j[-1])
    if drop != -1:
        excluded.add(drop)
        for i in group:
            labels[i] = -1
        return None
    return sorted(group)


def _preselect(g, prop, label, snid):
    excluded = set()
    n_excluded = 0
    for _ in range(len(g.order) ** 2):
        group = _label(g, prop, label, snid, excluded)
        if group is not None:
            return group
        if len(excluded) == n_excluded:
            break
        n_excluded = len(excluded)
    # a cycle whatever is left out: the seed alone (MXNet logs this too)
    g.labels[snid] = label
    return [snid]


def _find_groups(g, prop):
    groups = []
    for i, node in enumerate(g.order):
        if g.labels[i] == -1 and node.op is not None and prop.select(node):
            groups.append(_preselect(g, prop, len(groups), i))
    return groups


def _create(g, prop, group, subgraph_id, dedup):
    """MXNet's CreateSubgraphNode: cut the group's inputs, make its node and
    point the group's consumers at that node's outputs."""
    label = g.labels[group[0]]
    members = {id(g.order[i]) for i in group}
    pos = g.slot_order
    in_slots = []
    for i in group:
        node = g.order[i]
        for k, e in enumerate(node.inputs):
            j = g.nid.get(id(e[0]))
            if j is None or g.labels[j] != label:
                in_slots.append((id(node), k))
    in_slots.sort(key=lambda s: pos[s])
    # cut: every input slot gets a new variable named after the entry it read
    orig, unique_orig, counts, shared = [], [], {}, {}
    for s in in_slots:
        e = g.get(s)
        orig.append(e)
        vname = e[0].output_name(e[1])
        if vname not in counts:
            counts[vname] = 0
            unique_orig.append(e)
            shared[vname] = (_Node(None, vname + "0"), 0, 0)
        else:
            counts[vname] += 1
        g.set(s, shared[vname] if dedup else
              (_Node(None, vname + str(counts[vname])), 0, 0))
    out_slots = []
    for i in group:
        for cons, idxs in g.consumers[id(g.order[i])].values():
            j = g.nid.get(id(cons))
            if j is None or g.labels[j] != label:
                out_slots.extend((id(cons), k) for k in idxs)
    for hi, e in enumerate(g.heads):
        j = g.nid.get(id(e[0]))
        if j is not None and g.labels[j] == label:
            out_slots.append(("head", hi))
    out_slots.sort(key=lambda s: pos[s])
    outputs = []
    for s in out_slots:
        e = g.get(s)
        if not dedup or not outputs or _key3(outputs[-1]) != _key3(e):
            outputs.append(e)
    node = prop.create_node(outputs, subgraph_id)
    node.inputs = list(unique_orig if dedup else orig)
    idx, prev = 0, None
    for n, s in enumerate(out_slots):
        if dedup:
            e = g.get(s)
            if n and _key3(prev) != _key3(e):
                idx += 1
            prev = e
            g.set(s, (node, idx, 0))
        else:
            g.set(s, (node, n, 0))
    g._slot_nodes[id(node)] = node
    for k, e in enumerate(node.inputs):
        if k < len(in_slots):
            pos[(id(node), k)] = pos[in_slots[k]]
        src = g.nid.get(id(e[0]))
        if src is not None:
            cons = g.consumers[id(e[0])]
            for m in list(cons):
                if m in members:
                    del cons[m]
            cons.setdefault(id(node), (node, []))[1].append(k)
    return node


def _key3(e):
    return (id(e[0]), e[1], e[2])


def partition(sym, prop, dedup=False):
    """``sym`` partitioned by one property (a new graph; ``sym`` unchanged)."""
    heads = _copy_graph(sym._outputs)
    g = _Graph(heads)
    groups = _find_groups(g, prop)
    if prop.creates:
        for i, group in enumerate(groups):
            _create(g, prop, group, i, dedup)
    return type(sym)._from(g.heads)


def _partition_with_names(sym, backend, op_names):
    """``sym`` partitioned by every property of ``backend`` selecting
    ``op_names`` (the properties' own names are restored afterwards)."""
    out = sym
    for prop in backend_properties(backend):
        saved = prop.attrs.get("op_names")
        prop.attrs["op_names"] = set(op_names)
        try:
            out = partition(out, prop)
        finally:
            if saved is None:
                prop.attrs.pop("op_names", None)
            else:
                prop.attrs["op_names"] = saved
    return out


def build_subgraph_by_op_names(sym, backend, op_names):
    """MXBuildSubgraphByOpNames: ``sym`` partitioned by each property of
    ``backend`` with ``op_names`` selected (no names: a copy of ``sym``)."""
    if not op_names:
        return sym.__copy__()
    return _partition_with_names(sym, backend, op_names)


def backend_symbol(sym, backend):
    """``sym`` partitioned by every property of ``backend`` with the op
    names ``MXSetSubgraphPropertyOpNames`` gave it (MXNet's
    ``MXGenBackendSubgraph``, ``Symbol.get_backend_symbol``)."""
    return _partition_with_names(sym, backend, _ENV_OP_NAMES.get(backend, ()))


def partition_for_bind(sym):
    """The graph MXNet's bind runs when the environment variable
    MXNET_SUBGRAPH_BACKEND names a backend: ``sym`` partitioned by its
    properties with the op names set by ``MXSetSubgraphPropertyOpNames``
    (none set: nothing is grouped). Unset or ``NONE``: ``sym`` itself.
    Executors run what it gives (``Executor.get_optimized_symbol`` shows
    it); partitioning never changes a graph's results."""
    import os
    name = os.environ.get("MXNET_SUBGRAPH_BACKEND", "")
    if not name or name == "NONE":
        return sym
    return backend_symbol(sym, name)


def _infer_from(sym, args, aux, shape_dict, type_dict):
    """Check what ``args``/``aux`` (and the dicts) say of the inputs against
    the graph, as MXOptimizeForBackend's inference pass does: a clear error
    for shapes or dtypes that do not fit."""
    shapes, dtypes = dict(shape_dict or {}), dict(type_dict or {})
    for d in (args, aux):
        for k, v in (d or {}).items():
            if v is not None and hasattr(v, "shape"):
                shapes[k] = tuple(v.shape)
                dtypes[k] = v.dtype
    names = set(sym.list_inputs())      # as MXNet, arrays the graph does not read are ignored
    shapes = {k: v for k, v in shapes.items() if k in names}
    dtypes = {k: v for k, v in dtypes.items() if k in names}
    if shapes or dtypes:
        sym.infer_shape_partial(**shapes)
        if dtypes:
            sym.infer_type_partial(**dtypes)


def optimize_for(sym, backend, args=None, aux=None, ctx=None, shape_dict=None, type_dict=None,
                 stype_dict=None, skip_infer=False, **kwargs):
    """``Symbol.optimize_for``: ``sym`` partitioned for ``backend``.

    ``args``/``aux`` (dicts of name to NDArray) give the inputs' shapes and
    dtypes to the partitioning pass; MXNet's backends may add arrays to them,
    aiond's add none. ``dedup_subgraph=True`` gives each subgraph one input
    per distinct outside entry and one output per distinct inner entry.
    ``ctx`` and ``stype_dict`` are accepted as MXNet's (no aiond backend
    depends on them); ``skip_infer=True`` skips checking the given shapes."""
    if not isinstance(backend, str):
        raise TypeError("optimize_for: backend must be a backend name (str), got %s"
                        % type(backend).__name__)
    if args is not None and not isinstance(args, dict):
        raise TypeError("optimize_for: args must be a dict of name to NDArray, got %s"
                        % type(args).__name__)
    if aux is not None and not isinstance(aux, dict):
        raise TypeError("optimize_for: aux must be a dict of name to NDArray, got %s"
                        % type(aux).__name__)
    props = backend_properties(backend)
    if not skip_infer and (args or aux or shape_dict or type_dict):
        _infer_from(sym, args, aux, shape_dict, type_dict)
    dedup = str(kwargs.get("dedup_subgraph", "")) == "True"
    out = sym
    for prop in props:
        out = partition(out, prop, dedup)
    if out is sym:
        out = sym.__copy__()
    return out



def _handle(self):
    """MXNet's ``Symbol.handle``: a ``SymbolHandle`` naming this symbol for
    ``_LIB`` calls (the same value while the symbol lives)."""
    from .._c_api import SymbolHandle, handle_for
    return SymbolHandle(handle_for(self))


# installed here so symbol.py needs no change for it (see the issue-31 notes)
Symbol.handle = property(_handle)
