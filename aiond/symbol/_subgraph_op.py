"""How a ``_CachedOp`` node (``aiond.ops.subgraph_op``) reads, infers and
runs its subgraph.

The subgraph's inputs (in ``list_inputs`` order) are the node's inputs, its
auxiliary states the node's auxiliary states (MXNet's FMutateInputs of
``_CachedOp``), its outputs the node's outputs. Running pushes the subgraph
op by op with the executor's plan, as a control-flow body runs, so autograd
records the subgraph's ops and gradients need no rule of their own.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

from ..base import MXNetError, OpError
from ..ops import registry as _reg
from ..ops import subgraph_op as _sg
from . import _control_flow_exec as _cfx
from . import _partial
from .symbol import Symbol

__all__ = ["subgraph_heads"]

_JSON_CACHE: "OrderedDict[str, list]" = OrderedDict()
_JSON_CACHE_MAX = 64


def subgraph_heads(attrs):
    """The output entries of a ``_CachedOp``'s subgraph: the node's
    ``subgraphs`` or its ``subgraph`` attribute (symbol JSON)."""
    subs = attrs.get("subgraphs")
    if subs:
        if len(subs) != 1:
            raise OpError("_CachedOp holds one subgraph, got %d" % len(subs))
        return subs[0]
    js = attrs.get("subgraph") or ""
    if not js:
        raise OpError("_CachedOp needs a subgraph: give subgraph=<a symbol's JSON> or build it "
                      "with Symbol.optimize_for")
    heads = _JSON_CACHE.get(js)
    if heads is None:
        from ._json import loads
        try:
            heads = loads(js)
        except MXNetError as e:
            raise OpError("_CachedOp: its subgraph attribute is not a symbol's JSON: %s"
                          % e) from None
        _JSON_CACHE[js] = heads
        while len(_JSON_CACHE) > _JSON_CACHE_MAX:
            _JSON_CACHE.popitem(last=False)
    return heads


class _InputName(str):
    """An input name of a ``_CachedOp`` node, marked when the subgraph uses
    that input as an auxiliary state (see ``subgraph_op._AuxNames``)."""
    __slots__ = ("is_aux",)


_names = weakref.WeakKeyDictionary()


def _io_names(heads):
    key = heads[0][0]
    sig = [(id(e[0]), e[1]) for e in heads]
    hit = _names.get(key)
    if hit is not None and hit[0] == sig:
        return hit[1]
    sym = Symbol._from(heads)
    _, _, auxs = sym._arg_aux_nodes()
    aux_ids = {id(n) for n in auxs}
    from .symbol import dfs
    ins = []
    for n in dfs(heads):
        if n.op is None:
            nm = _InputName(n.name)
            nm.is_aux = id(n) in aux_ids
            ins.append(nm)
    outs = sym.list_outputs()
    _names[key] = (sig, (ins, outs))
    return ins, outs


def _input_names(self, attrs):
    return list(_io_names(subgraph_heads(attrs))[0])


def _output_names(self, attrs):
    return [str(s) for s in _io_names(subgraph_heads(attrs))[1]]


def _sub_infer(heads, ins, outs, dtypes, need_dtypes):
    """Inference over the subgraph from what is known of its inputs (in
    ``list_inputs`` order) and of its outputs, both ways, as nnvm infers a
    subgraph op's shapes; (input shapes, output shapes, output dtypes)."""
    import numpy as np
    from .. import util as _util
    from . import _infer as _inf
    from .symbol import _key
    inf = _inf.Inference(Symbol._from(heads))
    S, D = inf.shapes, inf.dtypes
    np_shape = _util.is_np_shape()
    var_nodes = [n for n in inf.order if n.op is None]
    for n, s, d in zip(var_nodes, ins, dtypes):
        k = (id(n), 0)
        s = s if s is not None else _inf._var_shape_attr(n, np_shape)
        if s is not None:
            S[k] = tuple(s)
        d = d if d is not None else _inf._var_dtype_attr(n)
        if d is not None:
            D[k] = np.dtype(d)
    for e, s in zip(heads, outs):
        if s is not None:
            m = _cfx._m(S.get(_key(e)), tuple(s))
            if m is not None:
                S[_key(e)] = m
    ops = [n for n in inf.order if n.op is not None]
    done, before = set(), None
    while len(done) < len(ops):
        for sweep in (ops, ops[::-1]):
            for n in sweep:
                if id(n) not in done and _inf._infer_node(n, S, D, need_dtypes):
                    done.add(id(n))
        now = _inf._progress(S, D)
        if now == before:
            break
        before = now
    return ([S.get((id(n), 0)) for n in var_nodes], [inf.shape_of(e) for e in heads],
            [inf.dtype_of(e) for e in heads])


def _shapes(p, ins, outs, dtypes, need_dtypes):
    heads = subgraph_heads(p)
    sin, sout, soutd = _sub_infer(heads, ins, outs, dtypes, need_dtypes)
    new_ins = [_cfx._m(a, b) for a, b in zip(ins, sin)]
    new_outs = [_cfx._m(a, b) for a, b in zip(outs, sout)]
    return new_ins, new_outs, soutd


def _n_out(p):
    return len(subgraph_heads(p))


def _partial_rule(p, ins, outs):
    outs = list(outs) + [None] * (_n_out(p) - len(outs))
    try:
        new_ins, new_outs, _ = _shapes(p, list(ins), outs, [None] * len(ins), False)
    except MXNetError:
        return ins, outs
    return new_ins, new_outs


def _infer_types(attrs, dtypes):
    n = _n_out(attrs)
    try:
        _, _, odt = _shapes(attrs, [None] * len(dtypes), [None] * n, list(dtypes), True)
    except MXNetError:
        return [None] * n
    return list(odt or [None] * n)


def _infer(attrs, shapes, dtypes):
    import numpy as np
    n = _n_out(attrs)
    _, oshapes, odt = _shapes(attrs, [tuple(s) for s in shapes], [None] * n, list(dtypes), True)
    for i, s in enumerate(oshapes):
        if s is None or any(d < 0 for d in s):
            raise OpError("_CachedOp: cannot infer the shape of output %d from the inputs %s"
                          % (i, ", ".join(str(tuple(x)) for x in shapes)))
    odt = [np.dtype(d) if d is not None else np.dtype(np.float32) for d in (odt or [None] * n)]
    return [tuple(int(d) for d in s) for s in oshapes], odt


def _run(op, inputs, attrs, out, ctx):
    heads = subgraph_heads(attrs)
    n_in = len(_io_names(heads)[0])
    if len(inputs) != n_in:
        raise OpError("_CachedOp: its subgraph takes %d input(s), got %d" % (n_in, len(inputs)))
    res = _cfx._run(heads, list(inputs), _cfx._ctx_of(inputs, ctx))
    return _cfx._finish(op, res, inputs, out)


def _grad(F, attrs, inputs, outputs, ograds):
    """The node's gradient, by running its subgraph again under autograd (a
    node run by ``invoke`` records the subgraph's ops, so autograd itself
    never asks for this; bind's differentiability check does)."""
    from .. import autograd
    xs = [x.copy() for x in inputs]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = _run(_sg.CACHED_OP, xs, attrs, None, None)
    outs = outs if isinstance(outs, list) else [outs]
    pairs = [(o, g) for o, g in zip(outs, ograds) if g is not None]
    if pairs:
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    return [x.grad for x in xs]


_sg.SubgraphEntry.input_names_for = _input_names
_sg.SubgraphEntry.output_names_for = _output_names
_reg.set_invoke_hook(_sg.SubgraphEntry, _run)
_sg.CACHED_OP.subgraph_of = subgraph_heads
_sg.CACHED_OP.infer = _infer
_sg.CACHED_OP.infer_types = _infer_types
_sg.CACHED_OP.grad = _grad
_partial.RULES["_CachedOp"] = _partial_rule
