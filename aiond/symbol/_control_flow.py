"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control flow as
one graph node holding its body (MXNet 1.9.1's symbol/contrib.py).

Building: the user's function runs once on fresh variables inside an
``AttrScope(__subgraph_name__=...)``, so every node it makes is marked as
part of the body. The body is then cut where it reads anything made
outside (a variable, another node's output): each such edge is replaced by
a variable named after the entry (``fc1_output``, ``x``), and the outside
entry becomes an input of the control-flow node. The node keeps the body
as a subgraph (``_Node.subgraphs``), written to JSON as MXNet writes it.

Running (``invoke_hook``): the body graph is pushed op by op on NDArrays,
step after step, with the same ``invoke`` every graph uses, so autograd
records the body's ops and gradients need no rule of their own; the loop
condition and ``cond``'s predicate are read on the calling thread.
Shapes (``infer`` and a partial rule): the body's shapes are inferred from
the node's inputs, both ways, as for any graph.
"""
from __future__ import annotations

import copy
import weakref

import numpy as np

from .. import attribute as _attribute
from ..base import MXNetError, OpError
from ..ndarray import _invoke
from ..ndarray._control_flow import LoopInputError
from ..ops import control_flow as _cf
from ..ops import registry as _reg
from . import _partial
from ._partial import merge as _pmerge
from .symbol import Symbol, _Node, create, dfs

__all__ = ["foreach", "while_loop", "cond"]

_SUB = "__subgraph_name__"


# ------------------------------------------------------------------ building


def _flatten(args, what):
    if isinstance(args, Symbol):
        n = len(args._outputs)
        return [args], (n if n > 1 else 0)
    if not isinstance(args, (list, tuple)):
        raise LoopInputError("%s must be a Symbol or a (nested) list of Symbols, but got %r of "
                             "type %s" % (what, args, type(args).__name__))
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, what)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        r, args = _regroup(args, f)
        ret.append(r)
    return ret, args


def _single(sym, what):
    if not isinstance(sym, Symbol):
        raise LoopInputError("%s must be Symbols, got %s" % (what, type(sym).__name__))
    if len(sym._outputs) != 1:
        raise LoopInputError("%s must be single-output Symbols; %s has %d outputs (index it, "
                         "e.g. sym[0])" % (what, sym.name, len(sym._outputs)))
    return sym._outputs[0]


def _uniq_name(sym):
    """The name of the body's variable standing for ``sym`` (MXNet's
    ``<name>-<output index>``)."""
    node, idx, _ = sym._outputs[0]
    return "%s-%d" % (node.name, idx)


def _unique_subgraph_name(name):
    attrs = _attribute.current()._attr
    outer = attrs.get(_SUB, "")
    if outer:
        name = outer + "$" + name
    names = _attribute.AttrScope._subgraph_names
    names[name] += 1
    return name + str(names[name] - 1)


def _in_body(node, name):
    return node.attrs.get(_SUB, "") == name


def _make_graph(outputs, name, avoid=()):
    """The body's outputs as one graph whose heads are nodes of the body:
    an output that is a variable, made outside, or in ``avoid`` (already
    an output) goes through an ``identity`` made inside the scope."""
    from . import identity
    inputs = set(Symbol._from([_single(o, "the body's outputs") for o in outputs])
                 .list_inputs()) if outputs else set()
    heads, seen = [], set(avoid)
    for o in outputs:
        e = o._outputs[0]
        if e[0].op is None and e[0].name in inputs or not _in_body(e[0], name) \
                or (id(e[0]), e[1]) in seen:
            e = identity(o)._outputs[0]
        seen.add((id(e[0]), e[1]))
        heads.append(e)
    return heads


def _cut(heads, name):
    """Replace each edge from a body node to a node outside the body by a
    variable named after the entry; returns [(variable name, outside entry)]."""
    if not heads or not _in_body(heads[0][0], name):
        return []
    cut = {}
    for n in dfs(heads):
        if not _in_body(n, name):
            continue
        for j, e in enumerate(n.inputs):
            src = e[0]
            if _in_body(src, name):
                continue
            k = (id(src), e[1])
            if k not in cut:
                cut[k] = (_Node(None, src.output_name(e[1])), e)
            n.inputs[j] = (cut[k][0], 0, 0)
    return [(v.name, e) for v, e in cut.values()]


def _graph_inputs(heads):
    """name -> variable node of a cut body; its names must be unique."""
    names = [n for n in dfs(heads) if n.op is None]
    byname = {}
    for n in names:
        if n.name in byname and byname[n.name] is not n:
            raise MXNetError("The inputs of the subgraph don't have unique names: %s"
                             % [m.name for m in names])
        byname[n.name] = n
    return byname


def _outer_entry(name, node, cut):
    """The entry outside the body feeding the body's variable ``name``."""
    e = cut.get(name)
    if e is not None:
        return e
    # a variable made inside the body (a parameter created there): the node's
    # input is a copy of it, as MXNet's deepcopy of the input symbol
    c = _Node(None, node.name, dict(node.attrs))
    return (c, 0, 0)


def _node(op, hint, inputs, params, subgraphs):
    """A Symbol of control-flow ``op`` on entries ``inputs`` with bodies ``subgraphs``."""
    syms = [Symbol._from([e]) for e in inputs]
    params = dict(params, num_args=len(inputs) + len(subgraphs))
    out = create(op, hint, syms, None, params)
    node = out._outputs[0][0]
    node.subgraphs = [list(g) for g in subgraphs]
    node._params = None
    return out


def _locs(locs):
    return [int(i) for i in locs]       # written as MXNet writes them: "[0, 1]"


def foreach(body, data, init_states, name="foreach"):
    """Run ``out, states = body(data[i], states)`` over ``data`` on axis 0 as one
    ``_foreach`` node; returns (the per-step outputs stacked on axis 0, the final
    states), in the nesting ``body`` returned them.

    ``data`` is a Symbol or a (nested) list of Symbols; ``init_states`` a Symbol or
    a (nested) list of Symbols. Symbols ``body`` reads from outside become inputs
    of the node.

    >>> step = lambda data, states: (data + states[0], [states[0] * 2])
    >>> outs, states = mx.sym.contrib.foreach(step, mx.sym.var('data'), [mx.sym.var('s')])
    """
    flat_data, data_fmt = _flatten(data, "foreach input")
    flat_states, state_fmt = _flatten(init_states, "foreach states")
    if not flat_data:
        raise ValueError("foreach: data must hold at least one Symbol")
    for s in flat_data:
        _single(s, "foreach data")
    for s in flat_states:
        _single(s, "foreach states")
    name = _unique_subgraph_name(name)
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_states]
    with _attribute.AttrScope(**{_SUB: name}):
        from .symbol import var
        in_eles, _ = _regroup([var(n) for n in data_names], data_fmt)
        states, _ = _regroup([var(n) for n in state_names], copy.deepcopy(state_fmt))
        res = body(in_eles, states)
        if not isinstance(res, (list, tuple)) or len(res) != 2:
            raise ValueError("foreach: body must return (outputs, states)")
        sym_out, out_fmt = _flatten(res[0], "foreach output")
        sym_states, new_fmt = _flatten(res[1], "foreach loop_vars")
        if new_fmt != state_fmt:
            raise LoopInputError("foreach: the body returned states in another format than "
                                 "init_states (%s vs %s)" % (new_fmt, state_fmt))
        heads = _make_graph(sym_out, name)
        heads += _make_graph(sym_states, name, [(id(e[0]), e[1]) for e in heads])
    cut = dict(_cut(heads, name))
    byname = _graph_inputs(heads)
    sub_names = [n.name for n in dfs(heads) if n.op is None]
    ins = [s._outputs[0] for s in flat_data] + [s._outputs[0] for s in flat_states]
    data_locs, state_locs, remain_locs = [], [], []
    for dn in data_names:
        if dn not in sub_names:
            raise LoopInputError("foreach: the data arrays have to be used in the loop body")
        data_locs.append(sub_names.index(dn))
    for sn in state_names:
        if sn not in sub_names:
            raise LoopInputError("foreach: the state arrays have to be used in the loop body")
        state_locs.append(sub_names.index(sn))
    for i, nm in enumerate(sub_names):
        if nm in data_names or nm in state_names:
            continue
        ins.append(_outer_entry(nm, byname[nm], cut))
        remain_locs.append(i)
    num_out = len(sym_out)
    ret = _node(_cf.FOREACH, "_foreach", ins, {
        "num_outputs": len(heads), "num_out_data": num_out,
        "in_state_locs": _locs(state_locs), "in_data_locs": _locs(data_locs),
        "remain_locs": _locs(remain_locs)}, [heads])
    outs, _ = _regroup([ret[i] for i in range(num_out)], out_fmt)
    states, _ = _regroup([ret[num_out + i] for i in range(len(sym_states))], state_fmt)
    return outs, states


def _union_inputs(graphs, var_entries):
    """The node's inputs for several cut bodies, each outside entry once;
    per body the input index of each of its variables (``list_inputs`` order)."""
    inputs, index, locs = [], {}, []
    for heads, cut in graphs:
        byname = _graph_inputs(heads)
        mine = []
        for n in [m for m in dfs(heads) if m.op is None]:
            e = var_entries.get(n.name)
            if e is not None:
                # a loop variable's input changes every step; a body that also
                # reads the same entry from outside reads it unchanged, so the
                # two are different inputs
                k = ("loop var", n.name)
            else:
                e = cut.get(n.name)
                if e is None:
                    e = _outer_entry(n.name, byname[n.name], cut)
                    k = ("inner", n.name)
                else:
                    k = (id(e[0]), e[1])
            if k not in index:
                index[k] = len(inputs)
                inputs.append(e)
            mine.append(index[k])
        locs.append(mine)
    return inputs, locs


def _scalar_int(v, what):
    if hasattr(v, "asscalar"):
        v = v.asscalar()
    try:
        return int(v)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert %s to python int" % what) from None


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``step_output, loop_vars = func(*loop_vars)`` while ``cond(*loop_vars)``
    holds, at most ``max_iterations`` times, as one ``_while_loop`` node.
    Returns (each step output stacked on axis 0, ``max_iterations`` rows of which
    the ones after the last step are zeros, the final loop variables).

    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> outs, final = mx.sym.contrib.while_loop(cond, func, [mx.sym.var('i'), mx.sym.var('s')],
    ...                                         max_iterations=10)
    """
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar_int(max_iterations, "max_iteration")
    if max_iterations < 0:
        raise ValueError("max_iterations must be >= 0, got %d" % max_iterations)
    flat_vars, var_fmt = _flatten(loop_vars, "while loop_vars")
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")
    for s in flat_vars:
        _single(s, "loop_vars")
    var_names = [_uniq_name(s) for s in flat_vars]

    def subgraph(fn, sub_name):
        sub_name = _unique_subgraph_name(sub_name)
        with _attribute.AttrScope(**{_SUB: sub_name}):
            from .symbol import var
            new_vars, _ = _regroup([var(n) for n in var_names], var_fmt)
            outputs, states, out_fmt = fn(new_vars)
            heads = _make_graph(outputs, sub_name)
            heads += _make_graph(states, sub_name, [(id(e[0]), e[1]) for e in heads])
        return heads, dict(_cut(heads, sub_name)), len(outputs), out_fmt

    def cond_fn(vs):
        r = cond(*vs)
        if not isinstance(r, Symbol):
            raise ValueError("Return of cond must be a Symbol")
        return [r], [], None

    def func_fn(vs):
        res = func(*vs)
        if not isinstance(res, (list, tuple)) or len(res) != 2:
            raise ValueError("while_loop: func must return (step_output, new_loop_vars)")
        step_output, new_vars = res
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        if isinstance(step_output, tuple):
            step_output = list(step_output)
        if isinstance(new_vars, tuple):
            new_vars = list(new_vars)
        step_output, out_fmt = _flatten(step_output, "while output")
        new_vars, _ = _flatten(new_vars, "while loop_vars")
        if len(new_vars) != len(flat_vars):
            raise ValueError("The number of loop_vars should be consistent during the loop: "
                             "%d given, func returned %d" % (len(flat_vars), len(new_vars)))
        return step_output, new_vars, out_fmt

    cond_heads, cond_cut, _, _ = subgraph(cond_fn, name + "_cond")
    if len(cond_heads) != 1:
        raise ValueError("cond must return a single Symbol")
    func_heads, func_cut, num_out_data, out_fmt = subgraph(func_fn, name + "_func")
    entries = {n: s._outputs[0] for n, s in zip(var_names, flat_vars)}
    inputs, (cond_locs, func_locs) = _union_inputs(
        [(cond_heads, cond_cut), (func_heads, func_cut)], entries)
    func_names = [n.name for n in dfs(func_heads) if n.op is None]
    var_locs = []
    for i, vn in enumerate(var_names, 1):
        if vn not in func_names:
            raise LoopInputError("The %d-th loop_var doesn't involve into the computation"
                                   % i)
        var_locs.append(func_names.index(vn))
    num_outputs = len(func_heads)
    ret = _node(_cf.WHILE_LOOP, "_while_loop", inputs, {
        "num_outputs": num_outputs, "num_out_data": num_out_data,
        "max_iterations": max_iterations, "cond_input_locs": _locs(cond_locs),
        "func_input_locs": _locs(func_locs), "func_var_locs": _locs(var_locs)},
        [cond_heads, func_heads])
    outputs = [ret[i] for i in range(num_out_data)]
    if out_fmt is not None:
        outputs, _ = _regroup(outputs, out_fmt)
    final, _ = _regroup([ret[i] for i in range(num_out_data, num_outputs)], var_fmt)
    return outputs, final


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` if ``pred`` (a one-element Symbol) is true, else
    ``else_func()``, as one ``_cond`` node; both branches must give the same number
    of outputs (and shapes). Returns them in the nesting the branches use.

    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> out = mx.sym.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: (a - 5) * (b - 5))
    """
    _single(pred, "pred")

    def subgraph(fn, sub_name):
        sub_name = _unique_subgraph_name(sub_name)
        with _attribute.AttrScope(**{_SUB: sub_name}):
            outputs, fmt = _flatten(fn(), "cond outputs")
            heads = _make_graph(outputs, sub_name)
        return heads, dict(_cut(heads, sub_name)), fmt

    pred_heads, pred_cut, _ = subgraph(lambda: pred, name + "_pred")
    then_heads, then_cut, then_fmt = subgraph(then_func, name + "_then")
    else_heads, else_cut, _ = subgraph(else_func, name + "_else")
    if len(then_heads) != len(else_heads):
        raise ValueError("Number of outputs differs between then-branch and else-branch")
    inputs, (c_locs, t_locs, e_locs) = _union_inputs(
        [(pred_heads, pred_cut), (then_heads, then_cut), (else_heads, else_cut)], {})
    n = len(then_heads)
    ret = _node(_cf.COND, "_cond", inputs, {
        "num_outputs": n, "cond_input_locs": _locs(c_locs),
        "then_input_locs": _locs(t_locs), "else_input_locs": _locs(e_locs)},
        [pred_heads, then_heads, else_heads])
    outputs, _ = _regroup([ret[i] for i in range(n)], then_fmt)
    return outputs


# ------------------------------------------------------------------ shapes


def _sub_infer(heads, shapes, dtypes, need_dtypes):
    """Inference over one body from what is known of its inputs (by position
    in ``list_inputs`` order); (input shapes, output shapes, input dtypes,
    output dtypes)."""
    from ._infer import infer
    sym = Symbol._from(heads)
    names = sym.list_inputs()
    feed_s = {names[i]: tuple(s) for i, s in shapes.items() if s is not None}
    feed_d = {names[i]: d for i, d in dtypes.items() if d is not None}
    inf = infer(sym, feed_s, feed_d, need_dtypes=need_dtypes)
    byname = {n.name: n for n in inf.order if n.op is None}
    ins = [inf.shapes.get((id(byname[nm]), 0)) for nm in names]
    ind = [inf.dtypes.get((id(byname[nm]), 0)) for nm in names]
    return ins, [inf.shape_of(e) for e in heads], ind, [inf.dtype_of(e) for e in heads]


def _m(a, b):
    m = _pmerge(a, b)
    return a if m is False else m


def _slice_shape(s):
    """The shape of ``x[i]`` for ``x`` of shape ``s``: MXNet 1.x has no 0-d
    arrays, so a 1-D array's slices are (1,) unless NumPy shapes are on."""
    from .. import util
    rest = tuple(s[1:])
    return rest if rest or util.is_np_shape() else (1,)


def _same_state(what, i, before, after):
    """A loop state keeps its shape from step to step."""
    if before is not None and after is not None and _pmerge(before, after) is False:
        raise OpError("%s: the body changes the shape of %s %d from %s to %s; a loop state "
                      "must keep its shape" % (what[0], what[1], i, tuple(before), tuple(after)))


def _lead(n, s):
    return None if s is None else (n,) + tuple(s)


def _foreach_shapes(p, ins, outs, dtypes, need_dtypes):
    heads = p["subgraphs"][0]
    dl, sl, rl = p["in_data_locs"], p["in_state_locs"], p["remain_locs"]
    nd_, ns_, nod = len(dl), len(sl), p["num_out_data"]
    shapes, dts = {}, {}
    n_iter = -1
    for i, loc in enumerate(dl):
        s = ins[i]
        if s is not None:
            if len(s) == 0:
                raise OpError("foreach: data input %d is a scalar; it is sliced on axis 0" % i)
            if n_iter < 0:
                n_iter = s[0]
            shapes[loc] = _slice_shape(s)
        dts[loc] = dtypes[i]
    for i, loc in enumerate(sl):
        shapes[loc] = _m(ins[nd_ + i], outs[nod + i])
        dts[loc] = dtypes[nd_ + i]
    for i, loc in enumerate(rl):
        shapes[loc] = ins[nd_ + ns_ + i]
        dts[loc] = dtypes[nd_ + ns_ + i]
    sin, sout, sind, soutd = _sub_infer(heads, shapes, dts, need_dtypes)
    new_ins = [None] * len(ins)
    for i, loc in enumerate(dl):
        whole = _lead(n_iter, sin[loc])
        if whole is not None and ins[i] is not None and len(ins[i]) == 1:
            whole = whole[:1]           # a 1-D array's slices are (1,) (see _slice_shape)
        new_ins[i] = _m(ins[i], whole)
    for i, loc in enumerate(sl):
        _same_state(("foreach", "state"), i, _m(ins[nd_ + i], sin[loc]), sout[nod + i])
        new_ins[nd_ + i] = _m(_m(ins[nd_ + i], sin[loc]), sout[nod + i])
    for i, loc in enumerate(rl):
        new_ins[nd_ + ns_ + i] = _m(ins[nd_ + ns_ + i], sin[loc])
    new_outs = [_lead(n_iter, s) for s in sout[:nod]]
    new_outs += [_m(sout[nod + i], new_ins[nd_ + i]) for i in range(ns_)]
    return new_ins, new_outs, soutd


def _while_shapes(p, ins, outs, dtypes, need_dtypes):
    cond_heads, func_heads = p["subgraphs"]
    cl, fl, vl = p["cond_input_locs"], p["func_input_locs"], p["func_var_locs"]
    nod, mx_it = p["num_out_data"], p["max_iterations"]
    known = list(ins)
    for k, v in enumerate(vl):          # a loop variable keeps its shape
        if nod + k < len(outs):
            known[fl[v]] = _m(known[fl[v]], outs[nod + k])
    fin, fout, _, foutd = _sub_infer(func_heads, {j: known[l] for j, l in enumerate(fl)},
                                     {j: dtypes[l] for j, l in enumerate(fl)}, need_dtypes)
    for j, l in enumerate(fl):
        known[l] = _m(known[l], fin[j])
    for k, v in enumerate(vl):
        _same_state(("while_loop", "loop_var"), k, known[fl[v]], fout[nod + k])
        known[fl[v]] = _m(known[fl[v]], fout[nod + k])
    cin, _, _, _ = _sub_infer(cond_heads, {j: known[l] for j, l in enumerate(cl)},
                              {j: dtypes[l] for j, l in enumerate(cl)}, False)
    for j, l in enumerate(cl):
        known[l] = _m(known[l], cin[j])
    new_outs = [_lead(mx_it, s) for s in fout[:nod]]
    new_outs += [known[fl[v]] for v in vl]
    return known, new_outs, foutd


def _cond_shapes(p, ins, outs, dtypes, need_dtypes):
    pred_heads, then_heads, else_heads = p["subgraphs"]
    known = list(ins)
    res_outs, res_d = list(outs), None
    for heads, locs in ((then_heads, p["then_input_locs"]), (else_heads, p["else_input_locs"]),
                        (pred_heads, p["cond_input_locs"])):
        sin, sout, _, soutd = _sub_infer(heads, {j: known[l] for j, l in enumerate(locs)},
                                         {j: dtypes[l] for j, l in enumerate(locs)},
                                         need_dtypes and heads is not pred_heads)
        for j, l in enumerate(locs):
            known[l] = _m(known[l], sin[j])
        if heads is not pred_heads:
            for i, s in enumerate(sout):
                m = _pmerge(res_outs[i], s)
                if m is False:
                    raise OpError("cond: output %d of the then-branch has shape %s but the "
                                  "else-branch gives %s" % (i, res_outs[i], s))
                res_outs[i] = m
            if res_d is None:
                res_d = soutd
            else:
                res_d = [a if a is not None else b for a, b in zip(res_d, soutd)]
    return known, res_outs, res_d


_SHAPES = {"_foreach": _foreach_shapes, "_while_loop": _while_shapes, "_cond": _cond_shapes}


def _partial_rule(name):
    fn = _SHAPES[name]

    def rule(p, ins, outs):
        outs = list(outs) + [None] * (p["num_outputs"] - len(outs))
        try:
            new_ins, new_outs, _ = fn(p, list(ins), outs, [None] * len(ins), False)
        except MXNetError:
            return ins, outs            # the full rule reports it, naming the node
        return new_ins, new_outs
    return rule


def _types_rule(name):
    fn = _SHAPES[name]

    def infer_types(attrs, dtypes):
        """Output dtypes from the input dtypes alone (None where unknown)."""
        n = attrs["num_outputs"]
        n_in = len(dtypes)
        try:
            _, _, odtypes = fn(attrs, [None] * n_in, [None] * n, list(dtypes), True)
        except MXNetError:
            return [None] * n         # the full rule reports it once shapes are known
        return list(odtypes or [None] * n)
    return infer_types


def _infer_rule(name):
    fn = _SHAPES[name]

    def infer(attrs, shapes, dtypes):
        if "subgraphs" not in attrs:
            raise OpError("%s needs its subgraphs: build it with mx.sym.contrib" % name)
        n = attrs["num_outputs"]
        _, oshapes, odtypes = fn(attrs, [tuple(s) for s in shapes], [None] * n,
                                 list(dtypes), True)
        for i, s in enumerate(oshapes):
            if s is None or any(d < 0 for d in s):
                raise OpError("%s: cannot infer the shape of output %d from the inputs %s"
                              % (name, i, ", ".join(str(tuple(x)) for x in shapes)))
        odtypes = [np.dtype(d) if d is not None else np.dtype(np.float32)
                   for d in (odtypes or [None] * n)]
        return [tuple(int(d) for d in s) for s in oshapes], odtypes
    return infer


# ------------------------------------------------------------------ running


_plans = weakref.WeakKeyDictionary()


def _plan(heads):
    """The executor plan of a body, made once per body."""
    from .executor import Plan
    key = heads[0][0]
    hit = _plans.get(key)
    if hit is not None and hit[0] == [(id(e[0]), e[1]) for e in heads]:
        return hit[1]
    sym = Symbol._from(heads)
    pos = {nm: i for i, nm in enumerate(sym.list_inputs())}
    plan = Plan(sym)
    plan.cf_args = [pos[nm] for nm in plan.arg_names]
    plan.cf_auxs = [pos[nm] for nm in plan.aux_names]
    _plans[key] = ([(id(e[0]), e[1]) for e in heads], plan)
    return plan


def _run(heads, feed, ctx):
    """Push the body ``heads`` on ``feed`` (NDArrays in ``list_inputs`` order)."""
    plan = _plan(heads)
    return plan.run([feed[i] for i in plan.cf_args], [feed[i] for i in plan.cf_auxs], ctx)


def _truth(x, what):
    if x.size != 1:
        raise MXNetError("%s must be a single value, got an array of shape %s" % (what, x.shape))
    return bool(x.asscalar())


def _finish(op, results, inputs, out):
    """Results as ``invoke`` returns them; an input passed through is copied
    (an output never aliases an input), ``out`` receives them when given."""
    copy_op = _reg.get("_copy")
    ids = {id(x) for x in inputs}
    res = [(_invoke.invoke(copy_op, [r], {}) if id(r) in ids else r) for r in results]
    if out is not None:
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != len(res):
            raise OpError("%s: out= has %d array(s) but the op has %d output(s)"
                          % (op.name, len(outs), len(res)))
        for r, o in zip(res, outs):
            _invoke.invoke(copy_op, [r], {}, o)
        res = outs
    return res[0] if len(res) == 1 else res


def _ctx_of(inputs, ctx):
    return inputs[0].context if inputs else ctx


def _need_subgraphs(op, attrs):
    subs = attrs.get("subgraphs")
    if not subs or len(subs) != op.n_subgraphs:
        raise OpError("%s needs its %d subgraph(s); build it with mx.sym.contrib (it cannot be "
                      "called on NDArrays directly: use mx.nd.contrib)" % (op.name, op.n_subgraphs))
    return subs


def _foreach_run(op, inputs, attrs, out, ctx):
    from .. import ndarray as nd
    (heads,) = _need_subgraphs(op, attrs)
    ctx = _ctx_of(inputs, ctx)
    dl, sl, rl = attrs["in_data_locs"], attrs["in_state_locs"], attrs["remain_locs"]
    nd_, ns_, nod = len(dl), len(sl), attrs["num_out_data"]
    data = inputs[:nd_]
    states = list(inputs[nd_:nd_ + ns_])
    feed = [None] * (nd_ + ns_ + len(rl))
    for k, loc in enumerate(rl):
        feed[loc] = inputs[nd_ + ns_ + k]
    n = data[0].shape[0]
    if n == 0:
        raise MXNetError("foreach: the data has no slices on axis 0 (shape %s)" % (data[0].shape,))
    steps = []
    shapes = [_slice_shape(d.shape) for d in data]
    for i in range(n):
        for k, loc in enumerate(dl):
            x = data[k][i]
            feed[loc] = x if x.shape == shapes[k] else x.reshape(shapes[k])
        for k, loc in enumerate(sl):
            feed[loc] = states[k]
        res = _run(heads, feed, ctx)
        steps.append(res[:nod])
        states = res[nod:]
    outs = [nd.stack(*[s[j] for s in steps], axis=0) for j in range(nod)]
    return _finish(op, outs + list(states), inputs, out)


def _while_run(op, inputs, attrs, out, ctx):
    from .. import ndarray as nd
    cond_heads, func_heads = _need_subgraphs(op, attrs)
    ctx = _ctx_of(inputs, ctx)
    cl, fl, vl = attrs["cond_input_locs"], attrs["func_input_locs"], attrs["func_var_locs"]
    nod, mx_it = attrs["num_out_data"], attrs["max_iterations"]
    cur = list(inputs)
    steps = []
    while len(steps) < mx_it and \
            _truth(_run(cond_heads, [cur[l] for l in cl], ctx)[0], "while_loop's cond"):
        res = _run(func_heads, [cur[l] for l in fl], ctx)
        steps.append(res[:nod])
        for k, v in enumerate(vl):
            cur[fl[v]] = res[nod + k]
    if steps:
        oshapes = [(mx_it,) + x.shape for x in steps[0]]
        odtypes = [x.dtype for x in steps[0]]
    elif nod:
        oshapes, odtypes = op.infer(attrs, [x.shape for x in inputs], [x.dtype for x in inputs])
    outs = []
    for j in range(nod):
        rows = [s[j].expand_dims(0) for s in steps]
        if len(steps) < mx_it:
            # the rows after the last step: MXNet leaves them undefined; zeros here
            rows.append(nd.zeros((mx_it - len(steps),) + tuple(oshapes[j][1:]), ctx=ctx,
                                 dtype=odtypes[j]))
        outs.append(nd.concat(*rows, dim=0) if len(rows) > 1 else rows[0])
    return _finish(op, outs + [cur[fl[v]] for v in vl], inputs, out)


def _cond_run(op, inputs, attrs, out, ctx):
    pred_heads, then_heads, else_heads = _need_subgraphs(op, attrs)
    ctx = _ctx_of(inputs, ctx)
    pred = _run(pred_heads, [inputs[l] for l in attrs["cond_input_locs"]], ctx)[0]
    if _truth(pred, "cond's pred"):
        res = _run(then_heads, [inputs[l] for l in attrs["then_input_locs"]], ctx)
    else:
        res = _run(else_heads, [inputs[l] for l in attrs["else_input_locs"]], ctx)
    return _finish(op, res, inputs, out)


_RUN = {"_foreach": _foreach_run, "_while_loop": _while_run, "_cond": _cond_run}


def _make_grad(op):
    run = _RUN[op.name]

    def grad(F, attrs, inputs, outputs, ograds):
        """The node's gradient, by running it again under autograd. (A node run
        by ``invoke`` records its body's ops, not itself, so autograd never
        needs this rule; it answers bind's differentiability check and any
        caller that asks the op for its gradient.)"""
        from .. import autograd
        xs = [x.copy() for x in inputs]
        for x in xs:
            x.attach_grad()
        with autograd.record():
            outs = run(op, xs, attrs, None, None)
        outs = outs if isinstance(outs, list) else [outs]
        pairs = [(o, g) for o, g in zip(outs, ograds) if g is not None]
        if pairs:
            autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return [x.grad for x in xs]
    return grad


def _hook(op, inputs, attrs, out, ctx):
    return _RUN[op.name](op, inputs, attrs, out, ctx)


_cf.ControlFlowEntry.invoke_hook = staticmethod(_hook)
for _op in (_cf.FOREACH, _cf.WHILE_LOOP, _cf.COND):
    _op.infer = _infer_rule(_op.name)
    _op.infer_types = _types_rule(_op.name)
    _op.grad = _make_grad(_op)
    _partial.RULES[_op.name] = _partial_rule(_op.name)
