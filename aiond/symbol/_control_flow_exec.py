"""How ``_foreach``, ``_while_loop`` and ``_cond`` nodes (built by
``_control_flow``) infer shapes and run.

Shapes (``infer``, a partial rule and ``infer_types``): the body's shapes
and dtypes are inferred from the node's inputs, both ways, as for any graph.
Running (``invoke_hook``): the body graph is pushed op by op on NDArrays,
step after step, with the same ``invoke`` every graph uses, so autograd
records the body's ops and gradients need no rule of their own; the loop
condition and ``cond``'s predicate are read on the calling thread.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..base import MXNetError, OpError
from ..ndarray import _invoke
from ..ops import control_flow as _cf
from ..ops import registry as _reg
from . import _partial
from ._partial import merge as _pmerge
from .symbol import Symbol

__all__ = []


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
    # a body runs inside its control-flow op's call: no bulk segment of its own
    return plan.run([feed[i] for i in plan.cf_args + plan.cf_auxs], ctx, scope=False)


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


_reg.set_invoke_hook(_cf.ControlFlowEntry, _hook)
for _op in (_cf.FOREACH, _cf.WHILE_LOOP, _cf.COND):
    _op.infer = _infer_rule(_op.name)
    _op.infer_types = _types_rule(_op.name)
    _op.grad = _make_grad(_op)
    _partial.RULES[_op.name] = _partial_rule(_op.name)
