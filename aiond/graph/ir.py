"""The graph IR every graph consumer shares: the node type, nnvm's post-order
walk, parameter parsing, MXNet's dtype codes and the argument errors.

A node is a variable (``op is None``) or one registry op with its attributes
kept as MXNet keeps them: a dict of strings (``{'num_hidden': '128'}``),
parsed by the op's parameter parsers when needed. A graph is a list of
output entries ``(node, index, version)``; nodes are shared between graphs.
Graph order is nnvm's: a post-order depth-first walk from the outputs, so
argument lists and the JSON node order match MXNet.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, OpError

__all__ = ["Node", "dfs", "parse_params", "entry_key", "aux_ids", "copy_graph",
           "without_amp_casts", "input_names", "ArgumentError", "UnknownArgumentError",
           "DTYPE_NP_TO_MX", "DTYPE_MX_TO_NP", "HIDDEN_KEYS"]


class ArgumentError(MXNetError, ValueError):
    """Bad arguments (MXNet raises ValueError for these)."""


class UnknownArgumentError(MXNetError, TypeError):
    """Unknown argument names (MXNet raises TypeError/ValueError for these)."""


# MXNet's hidden attribute keys: ``lr_mult=...`` on an op becomes ``__lr_mult__``
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
HIDDEN_DUNDER = {"__%s__" % k: k for k in HIDDEN_KEYS}

from ..base import DTYPE_MX_TO_NP, DTYPE_NP_TO_MX  # noqa: E402  (graph files' __dtype__ codes)
STYPES = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


# ------------------------------------------------------------ op inputs


# MXNet-only tuning parameters with no effect on results: accepted and kept
# in the attributes (and the JSON), never passed to aiond kernels
IGNORED_PARAMS = frozenset(("workspace", "cudnn_tune", "cudnn_off"))


# ------------------------------------------------------------ op inputs


def no_bias(p):
    return ("bias",) if p.get("no_bias") else ()


def _seq_len(p):
    return () if p.get("use_sequence_length") else ("sequence_length",)


def _rnn(p):
    drop = () if p.get("mode") == "lstm" else ("state_cell",)
    return drop + _seq_len(p)


def _ctc(p):
    drop = () if p.get("use_data_lengths") else ("data_lengths",)
    return drop + (() if p.get("use_label_lengths") else ("label_lengths",))


# op name -> params -> names of inputs the op does not take with these params
OPTIONAL_INPUTS = {
    "FullyConnected": no_bias,
    "Convolution": no_bias,
    "Deconvolution": no_bias,
    "LeakyReLU": lambda p: () if p.get("act_type") == "prelu" else ("gamma",),
    "RNN": _rnn,
    "SequenceMask": _seq_len,
    "SequenceLast": _seq_len,
    "SequenceReverse": _seq_len,
    "softmax": lambda p: () if p.get("use_length") else ("length",),
    "CTCLoss": _ctc,
    "ctc_loss": _ctc,
    "_histogram": lambda p: ("bins",) if p.get("bin_cnt") is not None else (),
    "_contrib_BilinearResize2D": lambda p: () if p.get("mode") == "like" else ("like",),
    "_contrib_DeformableConvolution": no_bias,
}


def input_names(op, params, n_inputs=None):
    """The input names of ``op`` with parsed ``params`` (MXNet's FListInputNames)."""
    dyn = getattr(op, "input_names_for", None)
    if dyn is not None:         # Custom: the prop's arguments and auxiliary states
        return dyn(params)
    names = [n for n in op.inputs if not n.startswith("*")]
    drop = OPTIONAL_INPUTS.get(op.name)
    if drop is not None:
        gone = drop(params)
        if gone:
            names = [n for n in names if n not in gone]
    if op.name == "UpSampling" and params.get("sample_type") == "bilinear":
        return ["data", "weight"]       # upsampling.cc's ListArguments
    if op.variadic:
        var = next((n[1:] for n in op.inputs if n.startswith("*")), "arg")
        k = (n_inputs or 0) - len(names)
        names = names + ["%s%d" % (var, i) for i in range(max(k, 0))]
    return names


# ops without FListInputNames in MXNet 1.9.1: its monitor callbacks name their
# inputs "input0", "input1", ... (the executor's monitor_all=True)
NO_INPUT_NAMES = frozenset(("Activation", "SoftmaxActivation"))


# ------------------------------------------------------------------ nodes


class Node:
    """One graph node: a variable (``op is None``) or an op application."""
    __slots__ = ("op", "name", "attrs", "inputs", "version", "_params", "subgraphs",
                 "__weakref__")

    def __init__(self, op, name, attrs=None, inputs=None):
        self.op = op
        self.name = name
        self.attrs = {} if attrs is None else attrs     # MXNet's attrs.dict: str -> str
        self.inputs = [] if inputs is None else inputs  # [(node, index, version)]
        self.version = 0                                # variables: times mutated
        self._params = None
        # control-flow ops (_foreach, _while_loop, _cond): their bodies, each a
        # list of output entries; the op sees them as params['subgraphs']
        self.subgraphs = None

    @property
    def is_var(self):
        return self.op is None

    @property
    def params(self) -> dict:
        """The op's parsed parameters (defaults filled, hidden keys left out)."""
        p = self._params
        if p is None:
            p = parse_params(self.op, self.attrs, self.name, strict=False)
            if self.subgraphs is not None:
                p["subgraphs"] = self.subgraphs
            self._params = p
        return p

    def num_outputs(self) -> int:
        if self.op is None:
            return 1
        n = self.op.num_outputs
        return int(n(self.params)) if callable(n) else int(n)

    def num_visible(self) -> int:
        if self.op is None:
            return 1
        f = self.op.num_visible
        return int(f(self.params)) if f is not None else self.num_outputs()

    def output_name(self, i) -> str:
        if self.op is None:
            return self.name
        names = self.op.output_names
        dyn = getattr(self.op, "output_names_for", None)
        if dyn is not None:     # Custom: the prop's list_outputs()
            names = dyn(self.params)
        if len(names) > i and (len(names) > 1 or self.num_outputs() == 1):
            out = names[i]
        else:
            out = "output" if self.num_outputs() == 1 else "output%d" % i
        return "%s_%s" % (self.name, out) if self.name else out

    def input_names(self):
        return input_names(self.op, self.params, len(self.inputs))

    def aux_positions(self):
        """Indices of inputs that are auxiliary states (mutated by the op)."""
        op = self.op
        dyn = getattr(op, "aux_names_for", None)
        if dyn is not None:     # Custom: the prop's list_auxiliary_states()
            n = len(self.input_names()) - len(dyn(self.params))
            return tuple(range(n, len(self.inputs)))
        if op is None or not (op.aux or op.mutates):
            return ()
        if not op.aux:          # e.g. optimizer ops: MXNet's FMutateInputs by index
            return tuple(i for i in op.mutated(len(self.inputs)) if i < len(self.inputs))
        aux = op.aux
        return tuple(i for i, nm in enumerate(self.input_names()) if nm in aux)

    def __repr__(self):
        return "<node %s %s>" % (self.op.name if self.op else "null", self.name)


def parse_params(op, attrs, node_name=None, strict=True) -> dict:
    """Parse a node's string attributes with the op's parameter parsers.

    Hidden (``__x__``) keys are not parameters. Unknown keys raise when
    ``strict`` (creating a symbol, as MXNet's parser does); graphs loaded
    from files keep them and parse the rest (MXNet-only tuning knobs such as
    ``workspace`` or ``cudnn_tune`` need no aiond counterpart)."""
    kw = {}
    for k, v in attrs.items():
        if k.startswith("__") and k.endswith("__"):
            continue
        if k not in op.pindex and not getattr(op, "open_params", False):
            if strict and not op.free_attrs and k not in IGNORED_PARAMS:
                raise MXNetError(
                    "Cannot find argument '%s' of operator %s%s. Possible arguments: %s"
                    % (k, op.name, " (node %s)" % node_name if node_name else "",
                       ", ".join(p.name for p in op.params) or "none"))
            continue
        kw[k] = v
    try:
        return op.parse(kw)
    except OpError as e:
        where = "operator %s" % (node_name or op.name)
        raise MXNetError("Error in %s: %s" % (where, e)) from None


def entry_key(entry):
    return (id(entry[0]), entry[1])


def dfs(outputs):
    """Nodes reachable from ``outputs`` in nnvm's post-order DFS."""
    order, seen = [], set()
    for head in outputs:
        h = head[0]
        if id(h) in seen:
            continue
        seen.add(id(h))
        stack = [(h, 0)]
        while stack:
            node, i = stack[-1]
            if i < len(node.inputs):
                stack[-1] = (node, i + 1)
                child = node.inputs[i][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def aux_ids(order):
    ids = set()
    for n in order:
        if n.op is not None:
            for i in n.aux_positions():
                ids.add(id(n.inputs[i][0]))
    return ids


def copy_graph(outputs):
    """Deep copy of the graph under ``outputs``; returns the new output entries."""
    memo = {}
    for n in dfs(outputs):
        c = Node(n.op, n.name, dict(n.attrs),
                  [(memo[id(e[0])], e[1], e[2]) for e in n.inputs])
        c.version = n.version
        c._params = n._params
        c.subgraphs = n.subgraphs
        memo[id(n)] = c
    return [(memo[id(e[0])], e[1], e[2]) for e in outputs]


# ------------------------------------------------------- attribute strings


_AMP_CASTS = ("amp_cast", "amp_multicast")


def without_amp_casts(outputs):
    """The graph under ``outputs`` with each AMP cast node replaced by its
    inputs (MXNet's RemoveAmpCast pass); the graph itself is unchanged."""
    order = dfs(outputs)
    if not any(n.op is not None and n.op.name in _AMP_CASTS for n in order):
        return outputs
    memo, skip = {}, {}

    def entry(e):
        n, i, v = e
        if id(n) in skip:
            return skip[id(n)][i]
        return (memo[id(n)], i, v)

    for n in order:
        if n.op is not None and n.op.name in _AMP_CASTS:
            skip[id(n)] = [entry(e) for e in n.inputs]
            continue
        c = Node(n.op, n.name, dict(n.attrs), [entry(e) for e in n.inputs])
        c.version = n.version
        c._params = n._params
        c.subgraphs = n.subgraphs
        memo[id(n)] = c
    return [entry(e) for e in outputs]


def attr_str(k, v):
    if k == "dtype" and v is not None and not isinstance(v, str):
        dt = np.dtype(v)
        return dt.names[0] if dt.names else dt.name
    return str(plain(v))


def plain(v):
    """Python scalars for numpy ones, so ``str`` writes ``(0, 1)`` as MXNet
    (built on numpy 1.x) does, never ``(np.int64(0), ...)``."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def hidden_key(key):
    """MXNet's hidden-key rule for attributes given at op creation."""
    for k in HIDDEN_KEYS:
        pos = key.rfind(k)
        if pos == 0 and len(key) == len(k):
            return "__%s__" % k
        if pos > 0 and pos == len(key) - len(k) and not key.startswith("__"):
            raise MXNetError(
                "setting variable attributes with %s is deprecated. please instead use\n"
                "w = Variable(%s=...)\nsym = YourSymbolName(%s=w)" % (key, k, key[:pos - 1]))
    return key


def unknown_argument(func, keys, candidates):
    bad = [k for k in keys if k not in candidates]
    lines = "".join("\n\t[%d]%s" % (i, c) for i, c in enumerate(candidates))
    return UnknownArgumentError("%sKeyword argument name %s not found.\nCandidate arguments:%s\n"
                     % (func, bad[0] if bad else "?", lines))
