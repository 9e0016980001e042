"""MXNet 1.x graph JSON (``prefix-symbol.json``), read and written.

The writer reproduces dmlc's JSONWriter byte for byte (MXNet 1.9.1's
``tojson()``): nodes in graph order ``{op, name, attrs, inputs}`` with
string attributes sorted by key, ``arg_nodes``, ``node_row_ptr``,
``heads`` and ``{"mxnet_version": ["int", 10901]}``. The reader takes that
format and older ones (``param``/``attr`` instead of ``attrs``, missing
versions, pre-0.9 files without auxiliary variables), applying MXNet's
upgrade passes (src/nnvm/legacy_json_util.cc). Nothing is executed.
"""
from __future__ import annotations

import ast
import json

from .. import util as _util
from ..base import MXNetError
from ..ops import registry as _reg
from . import _namespace as _ns
from ..graph.ir import HIDDEN_KEYS, Node as _Node, dfs, parse_params

__all__ = ["dumps", "loads", "MXNET_VERSION"]

MXNET_VERSION = 10901


class _Writer:
    """dmlc::JSONWriter: the same separators, indentation and line breaks."""

    def __init__(self):
        self.out = []
        self.multi = []
        self.count = []

    def _sep(self):
        if not self.multi or self.multi[-1]:
            self.out.append("\n" + " " * (2 * len(self.multi)))

    def begin(self, brace, multi):
        self.out.append(brace)
        self.multi.append(multi)
        self.count.append(0)

    def end(self, brace):
        multi = self.multi.pop()
        n = self.count.pop()
        if multi and n:
            self._sep()
        self.out.append(brace)

    def key(self, k):
        if self.count[-1]:
            self.out.append(", ")
        self._sep()
        self.count[-1] += 1
        self.out.append('"%s": ' % k)

    def item(self):
        if self.count[-1]:
            self.out.append(", ")
        self.count[-1] += 1
        self._sep()

    def string(self, s):
        self.out.append('"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r")
                        .replace("\n", "\\n").replace("\t", "\\t") + '"')

    def ints(self, values):
        self.begin("[", len(values) > 10)
        for v in values:
            self.item()
            self.out.append(str(int(v)))
        self.end("]")

    def entries(self, values):
        self.begin("[", len(values) > 10)
        for e in values:
            self.item()
            self.out.append("[%d, %d, %d]" % e)
        self.end("]")

    def strmap(self, d):
        self.begin("{", len(d) > 1)
        for k in sorted(d):
            self.key(k)
            self.string(d[k])
        self.end("}")


def dumps(outputs) -> str:
    """The graph JSON of the symbol with output entries ``outputs``."""
    w = _Writer()
    _write_graph(w, outputs, True)
    return "".join(w.out)


def _write_graph(w, outputs, top):
    """One graph object; a control-flow node's bodies are graphs nested in
    its ``subgraphs`` list (without the top level's version attrs), as in MXNet."""
    order = dfs(outputs)
    index = {id(n): i for i, n in enumerate(order)}
    w.begin("{", True)
    w.key("nodes")
    w.begin("[", True)
    row_ptr = [0]
    for n in order:
        w.item()
        w.begin("{", True)
        w.key("op")
        w.string("null" if n.op is None else n.op.name)
        w.key("name")
        w.string(n.name)
        if n.attrs:
            w.key("attrs")
            w.strmap({k: str(v) for k, v in n.attrs.items()})
        w.key("inputs")
        w.entries([(index[id(e[0])], e[1], e[2]) for e in n.inputs])
        if n.subgraphs:
            w.key("subgraphs")
            w.begin("[", True)
            for sub in n.subgraphs:
                w.item()
                _write_graph(w, sub, False)
            w.end("]")
        w.end("}")
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    w.end("]")
    w.key("arg_nodes")
    w.ints([i for i, n in enumerate(order) if n.op is None])
    w.key("node_row_ptr")
    w.ints(row_ptr)
    w.key("heads")
    w.entries([(index[id(e[0])], e[1], e[2]) for e in outputs])
    if top:
        w.key("attrs")
        w.begin("{", False)
        if _util.is_np_shape():
            # MXNet marks graphs saved with NumPy-shape semantics (0 = zero-size dim)
            w.key("is_np_shape")
            w.out.append('["int", 1]')
        w.key("mxnet_version")
        w.out.append('["int", %d]' % MXNET_VERSION)
        w.end("}")
    w.end("}")


# ------------------------------------------------------------------ reading


def _entry(nodes, e, where):
    if not isinstance(e, list) or not 2 <= len(e) <= 3 \
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in e):
        raise MXNetError("symbol JSON: %s has input entry %s; expected [node, output, version] "
                         "integers" % (where, _short(e)))
    nid, idx = e[0], e[1]
    ver = e[2] if len(e) > 2 else 0
    if not 0 <= nid < len(nodes):
        raise MXNetError("symbol JSON: %s refers to node %d, which is not defined before it"
                         % (where, nid))
    if idx < 0:
        raise MXNetError("symbol JSON: %s refers to output %d of node %d" % (where, idx, nid))
    return (nodes[nid], idx, ver)


def _short(x):
    r = repr(x)
    return r if len(r) <= 80 else r[:60] + "...(%d characters)" % len(r)


def _check_inputs(heads):
    """Each operator node has as many inputs as its op takes with its
    parameters (optional trailing inputs may be left out)."""
    for n in dfs(heads):
        if n.op is None or n.op.variadic:
            continue
        names = _ns.input_names(n.op, n.params)
        least = len(names) - sum(1 for x in names if x in n.op.optional)
        if not least <= len(n.inputs) <= len(names):
            raise MXNetError("symbol JSON: node %r (%s) has %d input(s); the operator takes "
                             "%s (%s)" % (n.name, n.op.name, len(n.inputs),
                                          len(names) if least == len(names)
                                          else "%d to %d" % (least, len(names)),
                                          ", ".join(names)))


def _check_outputs(heads):
    """Every entry names an output its node has (a bad index would otherwise
    surface as a KeyError at forward)."""
    for n in dfs(heads):
        for src, idx, _ in n.inputs:
            if idx >= src.num_outputs():
                raise MXNetError("symbol JSON: node %r reads output %d of node %r, which has %d"
                                 % (n.name, idx, src.name, src.num_outputs()))
    for src, idx, _ in heads:
        if idx >= src.num_outputs():
            raise MXNetError("symbol JSON: heads name output %d of node %r, which has %d"
                             % (idx, src.name, src.num_outputs()))


def _get_op(name, node_name):
    try:
        return _reg.get(name)
    except MXNetError:
        raise MXNetError("symbol JSON: operator %r (node %r) is not available in aiond"
                         % (name, node_name)) from None


def loads(text):
    """Output entries of the graph in MXNet JSON ``text``."""
    try:
        g = json.loads(text)
    except ValueError as e:
        raise MXNetError("symbol JSON: not valid JSON (%s)" % e) from None
    except RecursionError:
        raise MXNetError("symbol JSON: nested too deeply to be a graph") from None
    return _read_graph(g)


def _read_graph(g, parent_version=None):
    if not isinstance(g, dict) or "nodes" not in g or "heads" not in g:
        raise MXNetError("symbol JSON: expected an object with 'nodes' and 'heads'")
    if not isinstance(g["nodes"], list):
        raise MXNetError("symbol JSON: 'nodes' must be a list of node objects, got %s"
                         % type(g["nodes"]).__name__)
    if not isinstance(g["heads"], list) or not g["heads"]:
        raise MXNetError("symbol JSON: 'heads' must be a non-empty list of output entries")
    version = 800
    gattrs = g.get("attrs") or {}
    if not isinstance(gattrs, dict):
        raise MXNetError("symbol JSON: the graph's 'attrs' must be an object")
    v = gattrs.get("mxnet_version")
    if isinstance(v, list) and len(v) == 2 and isinstance(v[1], int):
        version = v[1]
    elif parent_version is not None:       # a subgraph: its graph's version
        version = parent_version
    nodes = []
    for i, nj in enumerate(g["nodes"]):
        if not isinstance(nj, dict):
            raise MXNetError("symbol JSON: node %d must be an object, got %s"
                             % (i, type(nj).__name__))
        name = nj.get("name", "")
        if not isinstance(name, str):
            raise MXNetError("symbol JSON: node %d has a name of type %s; expected a string"
                             % (i, type(name).__name__))
        where = "node %d (%s)" % (i, name)
        attrs = {}
        for key in ("param", "attr", "attrs"):
            d = nj.get(key)
            if d:
                if not isinstance(d, dict):
                    raise MXNetError("symbol JSON: %s has %r of type %s; expected an object "
                                     "of strings" % (where, key, type(d).__name__))
                for k, val in d.items():
                    if isinstance(val, (dict, list)):
                        raise MXNetError("symbol JSON: %s attribute %r is a %s; expected a "
                                         "string" % (where, k, type(val).__name__))
                    attrs[str(k)] = val if isinstance(val, str) else str(val)
        ins = nj.get("inputs", [])
        if not isinstance(ins, list):
            raise MXNetError("symbol JSON: %s has 'inputs' of type %s; expected a list"
                             % (where, type(ins).__name__))
        inputs = [_entry(nodes, e, where) for e in ins]
        opname = nj.get("op", "null")
        if not isinstance(opname, str):
            raise MXNetError("symbol JSON: %s has 'op' of type %s; expected a string"
                             % (where, type(opname).__name__))
        if opname == "null":
            node = _Node(None, name, attrs)
        else:
            node = _Node(_get_op(opname, name), name, attrs, inputs)
            subs = nj.get("subgraphs")
            if subs:
                if not isinstance(subs, list):
                    raise MXNetError("symbol JSON: %s has 'subgraphs' of type %s; expected a "
                                     "list of graphs" % (where, type(subs).__name__))
                node.subgraphs = [_read_graph(sg, version) for sg in subs]
        nodes.append(node)
    heads = [_entry(nodes, e, "heads") for e in g["heads"]]
    if version < MXNET_VERSION:
        _fix_hidden_keys(heads)
    for n in dfs(heads):
        if n.op is not None:
            n._params = None
            n.params            # parsed now, so a bad attribute fails the load
    if version < 900:
        _add_missing_inputs(heads)
    if version < 904:
        _set_var_attrs(heads)
    if version < 905:
        for n in dfs(heads):
            if n.op is not None and n.op.name in ("argmax", "argmin") \
                    and n.attrs.get("axis") == "-1":
                del n.attrs["axis"]
                n._params = None
    for n in dfs(heads):
        for src, _, ver in n.inputs:
            if src.op is None and ver > src.version:
                src.version = ver
    _check_inputs(heads)
    _check_outputs(heads)
    flag = gattrs.get("is_np_shape")
    if _util.is_np_shape() and not (isinstance(flag, list) and len(flag) == 2 and int(flag[1])):
        _shapes_to_numpy(heads)
    return heads


def _shapes_to_numpy(heads):
    """MXNet's ConvertShapeAttrToNumPyCompatible: loading a graph saved
    without NumPy-shape semantics while they are on, the variables' shapes
    are rewritten to them (0 -> -1 for an unknown dim; ``()`` -> None)."""
    for n in dfs(heads):
        s = n.attrs.get("__shape__") if n.op is None else None
        if s is None:
            continue
        try:
            v = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            continue
        if isinstance(v, int):
            v = (v,)
        if not isinstance(v, (list, tuple)):
            continue
        if not v:
            n.attrs["__shape__"] = "None"
        else:
            n.attrs["__shape__"] = str(tuple(int(d) if int(d) > 0 else -1 for d in v))


def _fix_hidden_keys(heads):
    """UpgradeJSON_FixParsing: ``lr_mult`` -> ``__lr_mult__``; ``weight_lr_mult``
    on an op moves to its ``weight`` variable."""
    for n in dfs(heads):
        moved = []
        for k in list(n.attrs):
            if k.startswith("__"):
                continue
            for h in HIDDEN_KEYS:
                pos = k.rfind(h)
                if pos == 0 or (pos > 0 and pos == len(k) - len(h)):
                    moved.append((k, n.attrs.pop(k), h, pos))
                    break
        for k, val, h, pos in moved:
            if pos == 0 and len(k) == len(h):
                n.attrs["__%s__" % h] = val
                continue
            done = False
            if pos > 1 and n.op is not None:
                names = _ns.input_names(n.op, parse_params(n.op, n.attrs, n.name, strict=False),
                                        len(n.inputs))
                arg = k[:pos - 1]
                if arg in names:
                    src = n.inputs[names.index(arg)][0]
                    if src.op is None:
                        src.attrs["__%s__" % h] = val
                        done = True
            if not done:
                n.attrs[k] = val


def _add_missing_inputs(heads):
    """UpgradeJSON_000800_000900: files before 0.9 did not store auxiliary variables."""
    for n in dfs(heads):
        if n.op is None or n.op.variadic:
            continue
        names = _ns.input_names(n.op, n.params)
        for nm in names[len(n.inputs):]:
            v = _Node(None, "%s_%s" % (n.name, nm) if n.name else nm, dict(n.attrs))
            n.inputs.append((v, 0, 0))


def _set_var_attrs(heads):
    """UpgradeJSON_000903_000904: initialiser attributes of auxiliary variables."""
    for n in dfs(heads):
        if n.op is None:
            continue
        fset = _ns.SET_INPUT_VAR_ATTRS.get(n.op.name)
        if fset is None:
            continue
        for i, (src, _, _) in enumerate(n.inputs):
            if src.op is None:
                fset(n.params, src, i)
