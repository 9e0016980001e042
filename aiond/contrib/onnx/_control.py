"""ONNX ``Loop``, ``Scan`` and ``If`` on the data -> aiond symbols.

A loop whose trip count is known at import time (a constant ``M`` and a
condition that stays constant, what PyTorch exports for ``for i in
range(n)``; a Scan over a fixed-length sequence) is unrolled: the body is
translated once per iteration in the outer scope, so its nodes see every
outer value and fold what is constant (the iteration number included).
Otherwise:

- a Loop running as long as a dynamic input axis (``range(x.shape[0])``)
  with scan outputs is ``sym.contrib.foreach`` over that axis's positions;
- any other Loop is ``sym.contrib.while_loop`` when it has no scan outputs
  (MXNet's while_loop pads those to ``max_iterations`` rows, ONNX's have as
  many as the loop ran: such loops are refused);
- a Scan over a sequence whose length follows a dynamic input axis is
  ``sym.contrib.foreach``;
- an If whose condition is computed from the data is ``sym.contrib.cond``
  (``_ops_tensor._if`` inlines the branch of a constant one).

Values are 0-d in ONNX where aiond's legacy operators give (1,) (a 0-d
constant becomes a (1,) parameter): loop states are kept in the shape they
start with, and iteration numbers and the elements of 1-d sequences reach
the bodies 0-d.
"""
from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._graph import Const, OnnxImportError
from ._ops import op

_MAX_ITERS = 1024           # iterations a loop is unrolled to at most
_MAX_UNROLLED = 1 << 16     # body nodes translated for one unrolled loop, at most
_WHILE_CAP = 2 ** 31 - 1    # max_iterations of a while_loop with no bound known


def _graph_size(g):
    """Nodes of ``g``, those of its nodes' subgraphs included."""
    n = 0
    for node in g.node:
        n += 1
        for a in node.attribute:
            if a.HasField("g"):
                n += _graph_size(a.g)
            for sub in a.graphs:
                n += _graph_size(sub)
    return n


def _name(node):
    return node.name or (node.output[0] if node.output else "?")


def _call_body(imp, graph, bind):
    """The outputs of ``graph`` with its inputs bound to ``bind``, translated
    in the current scope; the body's own names are dropped afterwards (the
    next iteration gives them new values)."""
    if len(graph.input) != len(bind):
        imp.fail("the body graph takes %d inputs, the loop gives it %d"
                 % (len(graph.input), len(bind)))
    saved, outer = dict(imp.values), imp.node
    try:
        for i, v in zip(graph.input, bind):
            imp.values[i.name] = v
        return imp.inline(graph)
    except OnnxImportError as e:
        # say which loop's body the failing node is in
        raise type(e)("%s in the body of %s %r" % (e, outer.op_type, _name(outer))) from e
    finally:
        imp.values = saved
        imp.node = outer


def _stack(imp, rows, axis):
    """``rows`` (Symbols or Consts of one shape) stacked along a new ``axis``."""
    if all(isinstance(r, Const) for r in rows):
        a = np.stack([r.a for r in rows], axis=axis)
        if all(r.static for r in rows):
            return Const(a)
        return Const(a, np.stack([r.b for r in rows], axis=axis))
    syms = [r for r in rows if not isinstance(r, Const)]
    zero_d = _rank_of(imp, syms[0]) == 0
    # (a 0-d constant becomes a (1,) parameter: 0-d again beside 0-d values)
    return sym.stack(*[_scalar(imp.sym(r)) if zero_d and isinstance(r, Const) and
                       r.a.ndim == 0 else imp.sym(r) for r in rows], axis=axis)


def _keep_shape(imp, new, shapes):
    """A loop state ``new`` (a Symbol) in the shape its initial value has
    (``shapes``: that value's partial shapes), where the two differ only as
    () and (1,) do: 0-d constants become (1,) parameters, and a state
    must keep its shape in while_loop and foreach."""
    a = shapes[0]
    n = imp.partial_shapes(new)[0]
    if a is None or n is None or len(a) > 1 or len(n) > 1 or len(a) == len(n) or \
            (a and a[0] != 1) or (n and n[0] != 1):
        return new
    return _scalar(new) if not a else sym.reshape(new, shape=(1,))


def _truth(c):
    return bool(np.asarray(c.a).reshape(-1)[0])


def _known_cond(c):
    return c is None or (isinstance(c, Const) and c.static and c.a.size == 1)


def _rank_of(imp, v):
    a, _ = imp.partial_shapes(v)
    return None if a is None else len(a)


# ---------------------------------------------------------------------- If
def data_if(imp, node, c, at):
    """An If whose condition is computed from the data (PyTorch writes one for
    the short-circuit ``and`` of a while loop's condition): ``sym.contrib.cond``,
    both branches translated as its bodies (their outputs must agree in shape)."""
    pred = sym.reshape(imp.sym(c), shape=(1,))

    def branch(g):
        def fn():
            outs = _call_body(imp, g, [])
            if any(o is None for o in outs):
                imp.fail("a branch of If %r gives no value" % _name(node))
            # one value: (1,) in both branches (a 0-d constant becomes a (1,)
            # parameter, a 0-d value computed with one has that shape too)
            res = []
            for o in outs:
                o = imp.sym(o)
                a, b = imp.partial_shapes(o)
                if a is not None and b is not None and len(a) <= 1 and a == b and \
                        (len(a) == 0 or a[0] == 1):
                    o = sym.reshape(o, shape=(1,))
                res.append(o)
            return res
        return fn
    then_g, else_g = at["then_branch"], at["else_branch"]
    if len(then_g.output) != len(else_g.output):
        imp.fail("If's branches give %d and %d outputs" % (len(then_g.output),
                                                           len(else_g.output)))
    outs = sym.contrib.cond(pred, branch(then_g), branch(else_g), name="onnx_if")
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


# -------------------------------------------------------------------- Loop
@op("Loop")
def _loop(imp, node, ins, at):
    body = at["body"]
    m = ins[0] if len(ins) > 0 else None
    c = ins[1] if len(ins) > 1 else None
    carried = list(ins[2:])
    n_scan = len(body.output) - 1 - len(carried)
    if n_scan < 0 or len(body.input) != 2 + len(carried):
        imp.fail("Loop's body takes %d inputs and gives %d outputs for %d loop-carried "
                 "values (it must take 2 + N and give 1 + N + scan outputs)"
                 % (len(body.input), len(body.output), len(carried)))
    trip = dyn = None
    if isinstance(m, Const):
        if m.a.size != 1 or m.b.size != 1:
            imp.fail("Loop's trip count M must be a single value, got shape %s" % (m.a.shape,))
        if m.static:
            trip = max(int(m.a.reshape(-1)[0]), 0)
        else:
            # M follows a dynamic input axis (Shape -> Gather, as PyTorch's
            # exporter writes `for i in range(x.shape[0])`)
            dyn = imp.dim_ref(int(m.a.reshape(-1)[0]), int(m.b.reshape(-1)[0]))
            if dyn is None:
                imp.unsupported("Loop %r: its trip count changes with the model's dynamic "
                                "input axes but is no input axis's length" % _name(node))
    if (m is None or trip is not None) and _known_cond(c):
        if m is None and c is None:
            imp.unsupported("Loop %r has neither a trip count nor a condition: it runs "
                            "forever" % _name(node))
        got = _unroll_loop(imp, node, body, trip, c, carried, n_scan)
        if got is not None:
            return got
    if dyn is not None and n_scan and _known_cond(c) and (c is None or _truth(c)):
        return _foreach_loop(imp, node, body, dyn, carried, n_scan)
    return _while(imp, node, body, m, trip, dyn, c, carried, n_scan)


def _as_declared(final, initial):
    """Final loop states 0-d where their initial values were 0-d constants
    (which ran through the loop as (1,) parameters)."""
    return [_scalar(f) if isinstance(v, Const) and v.a.ndim == 0 else f
            for f, v in zip(final, initial)]


def _too_long(imp, node, n, size):
    imp.unsupported(
        "%s %r runs %s iterations of a %d-node body; aiond unrolls loops whose trip count "
        "is known at import time up to %d iterations (and %d body nodes in all)"
        % (node.op_type, _name(node), n, size, _MAX_ITERS, _MAX_UNROLLED))


def _unroll_loop(imp, node, body, trip, c, carried, n_scan):
    """The Loop unrolled; None when its condition turns out to be computed
    from the data (the caller builds a while_loop then)."""
    size = max(_graph_size(body), 1)
    cap = min(_MAX_ITERS, _MAX_UNROLLED // size)
    go = True if c is None else _truth(c)
    if trip is not None and trip > cap and go:
        _too_long(imp, node, trip, size)
    scans = [[] for _ in range(n_scan)]
    i = 0
    while go and (trip is None or i < trip):
        if i >= cap:
            _too_long(imp, node, "more than %d" % cap, size)
        outs = _call_body(imp, body, [Const(np.array(i, np.int64)), Const(np.array(go))]
                          + carried)
        cond_out = outs[0]
        if cond_out is None or not _known_cond(cond_out):
            return None
        go = _truth(cond_out)
        carried = list(outs[1:1 + len(carried)])
        for k, v in enumerate(outs[1 + len(carried):]):
            scans[k].append(v)
        i += 1
    if n_scan and i == 0:
        imp.unsupported("Loop %r runs no iteration and has scan outputs; aiond cannot give "
                        "their (empty) shape" % _name(node))
    return carried + [_stack(imp, rows, 0) for rows in scans]


def _var_shapes(imp, vs, shapes, added):
    """Give the loop body's variables ``vs`` the probe shapes ``shapes`` (so
    translators in the body can read them); ``added`` collects what to undo."""
    for v, sh in zip(vs, shapes):
        for ps, s in zip(imp.probe_shapes, sh):
            if s is not None and None not in s and v.name not in ps:
                ps[v.name] = s
                added.append((ps, v.name))


def _scalar(v):
    """foreach hands a 1-d sequence's elements over with shape (1,) (MXNet
    1.x indexing): ONNX's are 0-d."""
    return sym.split(v, num_outputs=1, axis=0, squeeze_axis=True)


def _foreach_loop(imp, node, body, dyn, carried, n_scan):
    """A Loop running as many times as a dynamic input axis is long, with a
    constant-true condition: foreach over that axis's positions (the
    iteration numbers)."""
    var, ax = dyn
    pos = sym.Cast(sym.contrib.arange_like(var, axis=ax), dtype="int64")
    init = [imp.sym(v) for v in carried]
    shapes = [imp.partial_shapes(v) for v in init]
    added = []

    def fn(i, ss):
        _var_shapes(imp, ss, shapes, added)
        outs = _call_body(imp, body, [_scalar(i), Const(np.array(True))] + list(ss))
        c = outs[0]
        if not (_known_cond(c) and _truth(c)):
            imp.unsupported(
                "Loop %r has scan outputs, a trip count following a dynamic input axis "
                "and a condition its body computes: the number of rows is known only "
                "when it runs" % _name(node))
        # (a state the body leaves alone still has to be read inside it)
        new = [_keep_shape(imp, imp.sym(v), sh) if v is not s else sym.identity(s)
               for v, s, sh in zip(outs[1:1 + len(ss)], ss, shapes)]
        return [imp.sym(v) for v in outs[1 + len(ss):]], new

    try:
        ys, final = sym.contrib.foreach(fn, pos, init, name="onnx_loop")
    finally:
        for ps, k in added:
            ps.pop(k, None)
    return _as_declared(final, carried) + list(ys)


def _while(imp, node, body, m, trip, dyn, c, carried, n_scan):
    why = "its trip count is computed from the model's inputs" if trip is None and \
        m is not None and dyn is None else "its condition is computed from the model's inputs"
    if n_scan:
        imp.unsupported(
            "Loop %r has %d scan output(s) and %s: the number of rows is known only when "
            "it runs (aiond's while_loop pads scan outputs to max_iterations); aiond "
            "imports such loops without scan outputs" % (_name(node), n_scan, why))
    i0 = sym.zeros(shape=(1,), dtype="int64")
    c0 = sym.ones(shape=(1,), dtype="float32") if c is None else \
        sym.Cast(sym.reshape(imp.sym(c), shape=(1,)), dtype="float32")
    init = [i0, c0]
    seen = set()
    for v in carried:
        s = imp.sym(v)
        if id(s) in seen:   # one value carried twice: the loop's variables need own names
            s = sym.identity(s)
        seen.add(id(s))
        init.append(s)
    n_var = len(init)
    if trip is not None or m is None:
        m_sym = None
    elif dyn is not None:
        m_sym = sym.slice_axis(sym.shape_array(dyn[0]), axis=0, begin=dyn[1], end=dyn[1] + 1)
    else:
        m_sym = sym.reshape(sym.Cast(imp.sym(m), dtype="int64"), shape=(1,))
    shapes = [imp.partial_shapes(v) for v in init]
    added = []

    def cond(*vs):
        if m_sym is None:
            return vs[1]
        return vs[1] * sym.Cast(sym.broadcast_lesser(vs[0], m_sym), dtype="float32")

    def func(*vs):
        _var_shapes(imp, vs, shapes, added)
        outs = _call_body(imp, body, [_scalar(vs[0]), _scalar(vs[1])] + list(vs[2:]))
        # (times ones_like of the old one: while_loop wants every variable used)
        c_new = sym.Cast(sym.reshape(imp.sym(outs[0]), shape=(1,)), dtype="float32")
        new = [vs[0] + 1, c_new * sym.ones_like(vs[1])]
        new += [_keep_shape(imp, imp.sym(v), sh)
                for v, sh in zip(outs[1:n_var - 1], shapes[2:])]
        return [], new

    try:
        _, final = sym.contrib.while_loop(
            cond, func, init, max_iterations=min(trip, _WHILE_CAP) if trip is not None
            else _WHILE_CAP, name="onnx_loop")
    finally:
        for ps, k in added:
            ps.pop(k, None)
    return _as_declared(final[2:], carried)


# -------------------------------------------------------------------- Scan
@op("Scan")
def _scan(imp, node, ins, at):
    if imp.opset < 9:
        imp.unsupported("Scan of opset 8 (with sequence_lens and a batch axis); aiond "
                        "imports the Scan of opset 9 and later")
    body = at["body"]
    ns = int(at["num_scan_inputs"])
    n_st = len(ins) - ns
    if n_st < 0:
        imp.fail("Scan has %d inputs but num_scan_inputs=%d" % (len(ins), ns))
    states, xs = list(ins[:n_st]), list(ins[n_st:])
    n_out = len(body.output) - n_st
    if n_out < 0 or len(body.input) != n_st + ns:
        imp.fail("Scan's body takes %d inputs and gives %d outputs for %d states and %d "
                 "scan inputs" % (len(body.input), len(body.output), n_st, ns))
    in_axes = list(at.get("scan_input_axes", [0] * ns))
    in_dirs = list(at.get("scan_input_directions", [0] * ns))
    out_axes = list(at.get("scan_output_axes", [0] * n_out))
    out_dirs = list(at.get("scan_output_directions", [0] * n_out))
    if any(x is None for x in xs):
        imp.fail("a scan input is missing")
    lens, axes = set(), []
    for k, (x, ax) in enumerate(zip(xs, in_axes)):
        pa, pb = imp.partial_shapes(x)
        if pa is None or pb is None:
            imp.fail("cannot infer the shape of scan input %d; give the model's inputs fixed "
                     "or named dimensions" % k)
        ax = ax + len(pa) if ax < 0 else ax
        if not 0 <= ax < len(pa) or pa[ax] is None or pb[ax] is None:
            imp.fail("cannot infer the sequence length of scan input %d (axis %d of shape %s)"
                     % (k, in_axes[k], pa))
        axes.append(ax)
        lens.add((pa[ax], pb[ax]))
    if len(lens) != 1:
        imp.fail("Scan's inputs have different sequence lengths %s" % sorted(lens))
    la, lb = lens.pop()
    if la == lb:
        return _unroll_scan(imp, node, body, states, xs, axes, in_dirs, out_axes, out_dirs,
                            la)
    return _foreach_scan(imp, node, body, states, xs, axes, in_dirs, out_axes, out_dirs)


def _slices(imp, x, axis, n):
    if isinstance(x, Const):
        return [Const(np.take(x.a, t, axis=axis), None if x.static else np.take(x.b, t, axis))
                for t in range(n)]
    parts = sym.split(imp.sym(x), num_outputs=n, axis=axis, squeeze_axis=True)
    return [parts] if n == 1 else [parts[t] for t in range(n)]


def _unroll_scan(imp, node, body, states, xs, axes, in_dirs, out_axes, out_dirs, n):
    size = max(_graph_size(body), 1)
    if n > min(_MAX_ITERS, _MAX_UNROLLED // size):
        _too_long(imp, node, n, size)
    if n == 0:
        imp.unsupported("Scan %r over an empty sequence" % _name(node))
    seqs = []
    for x, ax, d in zip(xs, axes, in_dirs):
        s = _slices(imp, x, ax, n)
        seqs.append(s[::-1] if d else s)
    n_st = len(states)
    rows = None
    for t in range(n):
        outs = _call_body(imp, body, states + [s[t] for s in seqs])
        states = list(outs[:n_st])
        if rows is None:
            rows = [[] for _ in outs[n_st:]]
        for k, v in enumerate(outs[n_st:]):
            rows[k].append(v)
    res = []
    for k, r in enumerate(rows):
        if k < len(out_dirs) and out_dirs[k]:
            r = r[::-1]
        ax = out_axes[k] if k < len(out_axes) else 0
        if ax < 0:
            rk = r[0].a.ndim if isinstance(r[0], Const) else _rank_of(imp, r[0])
            if rk is None:
                imp.fail("cannot infer the rank of scan output %d for its negative axis" % k)
            ax += rk + 1
        res.append(_stack(imp, r, ax))
    return states + res


def _foreach_scan(imp, node, body, states, xs, axes, in_dirs, out_axes, out_dirs):
    data, data_shapes = [], []
    for x, ax, d in zip(xs, axes, in_dirs):
        s = imp.sym(x)
        r = len(imp.partial_shapes(x)[0])
        if ax:
            perm = [ax] + [i for i in range(r) if i != ax]
            s = sym.transpose(s, axes=tuple(perm))
        if d:
            s = sym.reverse(s, axis=0)
        data.append(s)
        data_shapes.append(tuple(None if p is None else p[:ax] + p[ax + 1:]
                                 for p in imp.partial_shapes(x)))
    init = [imp.sym(v) for v in states]
    st_shapes = [imp.partial_shapes(v) for v in init]
    n_st = len(states)
    added, ranks = [], []

    # (foreach hands the elements of a 1-d sequence over as (1,))
    var_shapes = [tuple(None if p is None else (p or (1,)) for p in sh)
                  for sh in data_shapes] + st_shapes

    def fn(ds, ss):
        _var_shapes(imp, list(ds) + list(ss), var_shapes, added)
        ds = [_scalar(d) if sh[0] is not None and len(sh[0]) == 0 else d
              for d, sh in zip(ds, data_shapes)]
        outs = _call_body(imp, body, list(ss) + ds)
        ys = [imp.sym(v) for v in outs[n_st:]]
        ranks.extend(_rank_of(imp, y) for y in ys)
        return ys, [_keep_shape(imp, imp.sym(v), sh) for v, sh in zip(outs[:n_st], st_shapes)]

    try:
        ys, final = sym.contrib.foreach(fn, data, init, name="onnx_scan")
    finally:
        for ps, k in added:
            ps.pop(k, None)
    res = []
    for k, y in enumerate(ys):
        if k < len(out_dirs) and out_dirs[k]:
            y = sym.reverse(y, axis=0)
        ax = out_axes[k] if k < len(out_axes) else 0
        if ax:
            rk = ranks[k]
            if rk is None:
                imp.fail("cannot infer the rank of scan output %d to move its axis to %d"
                         % (k, ax))
            ax = ax + rk + 1 if ax < 0 else ax
            perm = list(range(1, ax + 1)) + [0] + list(range(ax + 1, rk + 1))
            y = sym.transpose(y, axes=tuple(perm))
        res.append(y)
    return _as_declared(final, states) + res
