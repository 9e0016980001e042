"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control flow as
one graph node holding its body (MXNet 1.9.1's symbol/contrib.py).

Building: the user's function runs once on fresh variables inside an
``AttrScope(__subgraph_name__=...)``, so every node it makes is marked as
part of the body. The body is then cut where it reads anything made
outside (a variable, another node's output): each such edge is replaced by
a variable named after the entry (``fc1_output``, ``x``), and the outside
entry becomes an input of the control-flow node. The node keeps the body
as a subgraph (``_Node.subgraphs``), written to JSON as MXNet writes it.

How the nodes infer shapes and run is ``_control_flow_exec``.
"""
from __future__ import annotations

import copy

from .. import attribute as _attribute
from ..base import MXNetError
from ..ndarray._control_flow import LoopInputError
from ..ndarray._control_flow import regroup as _regroup
from ..ops import control_flow as _cf
from .symbol import Symbol, _Node, create, dfs
from . import _control_flow_exec  # noqa: F401  (how the nodes infer shapes and run)

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
