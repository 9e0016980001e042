"""Inference chains of a plan's oneDNN steps: activations kept in oneDNN's
layouts between them.

After ``_plan_fuse`` (Convolution + BatchNorm + ReLU folded), each maximal
run of consecutive steps that oneDNN can do - Convolution (folded or
plain), Pooling (max/avg), an inference BatchNorm, a ReLU, the add of two
values - becomes one step (``ops/onednn/chain.py``) whose values stay in
the blocked layouts the primitives chose; only the values read outside the
run (by a later step or as plan outputs) come out, as plain NCHW arrays.
A residual add right after the convolution that alone makes one of its
operands becomes that convolution's ``sum`` post-op, and a ReLU alone
reading an add or a BatchNorm becomes their post-op, as in MXNet's oneDNN
subgraph backend.

Only in CPU inference plans (``Plan(fuse=True)``), with oneDNN present,
for float32 4-D channel-first activations; a run needs a convolution and
at least two ops. ``AIOND_ONEDNN_CHAIN=0`` turns chains off (each op then
reorders at its own edges, as before). A run oneDNN refuses to build stays
as its steps.
"""
from __future__ import annotations

import collections
import os

import numpy as np

__all__ = ["chain", "enabled"]

_F32 = np.dtype(np.float32)
_ADDS = frozenset(("elemwise_add", "_plus", "_Plus", "_add", "broadcast_add", "broadcast_plus"))


def enabled():
    return os.environ.get("AIOND_ONEDNN_CHAIN", "1").strip().lower() not in (
        "0", "false", "off", "no")


def _act(shapes, s):
    shape, dt = shapes[s]
    return dt == _F32 and len(shape) == 4 and all(d > 0 for d in shape)


def _info(st, shapes, conv_bn_kernel):
    """(kind, activation slots read, parameter slots, attrs, relu) of a step
    oneDNN can run inside a chain, else None."""
    from ..ops.onednn import pool as _pool
    if st.whole is None or st.rng or not st.outs:
        return None
    # (an inference BatchNorm in a graph declares a write of gamma that
    # does not happen: ``_plan_fuse._bn_ok``)
    if st.writes and not (st.op is not None and st.op.name == "BatchNorm"):
        return None
    o = st.outs[0]
    if o[1:] != (None, None) or o[0] not in st.fresh or not _act(shapes, o[0]):
        return None
    a = st.attrs
    ins = st.whole
    if st.kernel is conv_bn_kernel:
        if len(st.outs) != 1 or not _act(shapes, ins[0]) or len(a["kernel"]) != 2:
            return None
        w = ins[1]
        b = ins[2] if a["has_bias"] else None
        params = (w, b) + tuple(ins[-4:])
        if any(p is not None and shapes[p][1] != _F32 for p in params):
            return None
        at = {"kernel": tuple(a["kernel"]), "stride": tuple(a["stride"]),
              "dilate": tuple(a["dilate"]), "pad": tuple(a["pad"]), "num_group": a["num_group"],
              "wshape": tuple(shapes[w][0]), "eps": a["eps"], "fix_gamma": a["fix_gamma"],
              "has_bias": True}
        return "convbn", (ins[0],), params, at, a["relu"]
    op = st.op
    name = op.name if op is not None else None
    if op is None or st.kernel is not op.kernel:
        return None
    if len(st.outs) != 1 and name != "BatchNorm":
        return None
    if name == "Convolution":
        k = tuple(a.get("kernel") or ())
        if len(k) != 2 or a.get("layout") not in (None, "NCHW") or not _act(shapes, ins[0]):
            return None
        has_bias = len(ins) > 2 and not a.get("no_bias", False)
        params = (ins[1], ins[2] if has_bias else None)
        if any(p is not None and shapes[p][1] != _F32 for p in params):
            return None
        at = {"kernel": k, "stride": tuple(a["stride"]), "dilate": tuple(a["dilate"]),
              "pad": tuple(a["pad"]), "num_group": a.get("num_group", 1),
              "wshape": tuple(shapes[ins[1]][0]), "has_bias": has_bias}
        if len(at["stride"]) != 2 or len(at["dilate"]) != 2 or len(at["pad"]) != 2:
            return None
        return "conv", (ins[0],), params, at, False
    if name == "Pooling":
        if (a.get("layout") not in (None, "NCHW") or a.get("pool_type", "max") not in ("max", "avg")
                or a.get("pooling_convention", "valid") == "same" or not _act(shapes, ins[0])):
            return None
        xs, ys = shapes[ins[0]][0], shapes[o[0]][0]
        if not a.get("global_pool") and len(a.get("kernel") or ()) != 2:
            return None
        geo = _pool._geom(a, xs, ys)
        if _pool._alg(a, geo[2], geo[3]) is None:
            return None
        return "pool", (ins[0],), (), dict(a), False
    if name == "Activation" and a.get("act_type") == "relu" or name == "relu":
        if len(ins) != 1 or not _act(shapes, ins[0]):
            return None
        return "relu", (ins[0],), (), {}, False
    if name in _ADDS:
        if len(ins) != 2 or not all(_act(shapes, s) and shapes[s][0] == shapes[o[0]][0]
                                    for s in ins):
            return None
        return "add", tuple(ins), (), {}, False
    if name == "BatchNorm":
        if (not a.get("_graph") or a.get("_train") or a.get("output_mean_var")
                or a.get("axis", 1) != 1 or len(ins) != 5 or len(st.outs) != 3
                or not _act(shapes, ins[0]) or any(r[0] not in st.fresh for r in st.outs)):
            return None
        if any(shapes[p][1] != _F32 for p in ins[1:]):
            return None
        return "bn", (ins[0],), tuple(ins[1:]), {"eps": float(a.get("eps", 1e-3)),
                                                  "fix_gamma": bool(a.get("fix_gamma", True))}, \
            False
    return None


def chain(steps, outputs, written, shapes):
    """(steps, written input slots) with each chainable run of ``steps``
    replaced by one chain step; ``outputs``: the plan's output refs;
    ``written``: the input slots written; ``shapes``: (shape, dtype) per slot."""
    if not enabled():
        return steps, written
    from ..ops import conv_bn
    info = [_info(st, shapes, conv_bn.kernel) for st in steps]
    if not any(x is not None and x[0] in ("conv", "convbn") for x in info):
        return steps, written
    # (only now: a plan without a convolution never loads the library)
    from ..ops import onednn as _dnn
    if not _dnn.active():
        return steps, written
    readers = collections.defaultdict(set)
    for i, st in enumerate(steps):
        for r in st.ins:
            readers[r[0]].add(i)
    out_slots = {r[0] for r in outputs}
    for i, st in enumerate(steps):
        # a BatchNorm's mean/var outputs: nothing may read them
        if info[i] is not None and info[i][0] == "bn" and any(
                readers.get(r[0]) or r[0] in out_slots for r in st.outs[1:]):
            info[i] = None
    out = []
    i = 0
    while i < len(steps):
        if info[i] is None:
            out.append(steps[i])
            i += 1
            continue
        j = i
        while j < len(steps) and info[j] is not None:
            j += 1
        made = _make(steps, i, j, info, readers, out_slots, shapes)
        if made is None:
            out.extend(steps[i:j])
        else:
            out.append(made)
        i = j
    if len(out) == len(steps):
        return steps, written
    nw = set()
    for st in out:
        nw.update(st.writes)
        nw.update(r[0] for r in st.outs if r[0] not in st.fresh)
    return out, {s for s in written if s in nw}


def _make(steps, i0, i1, info, readers, out_slots, shapes):
    from ..ops.onednn import chain as _chain
    from ._plan import _Step
    run = set(range(i0, i1))
    nodes = []
    made_at = {}            # slot -> index in nodes
    for i in range(i0, i1):
        kind, srcs, params, attrs, relu = info[i]
        s = steps[i].outs[0][0]
        nodes.append({"kind": kind, "srcs": srcs, "params": params, "attrs": attrs,
                      "relu": relu, "sum": None, "out": s, "step": i})
        made_at[s] = len(nodes) - 1

    def sole(s, kind):
        """The node that alone reads slot ``s`` (made in the run, read by
        nothing outside it), if it is of ``kind``."""
        rs = readers.get(s, ())
        if s in out_slots or len(rs) != 1:
            return None
        (r,) = rs
        if r not in run:
            return None
        q = r - i0
        nd = nodes[q]
        return q if nd is not None and nd["kind"] == kind else None

    for q, nd in enumerate(nodes):
        if nd is None or nd["kind"] != "add":
            continue
        a, b = nd["srcs"]
        target = None
        for c, r in ((a, b), (b, a)):
            pc = made_at.get(c)
            if pc is None or c == r or nodes[pc] is None:
                continue
            cv = nodes[pc]
            if (cv["kind"] in ("conv", "convbn") and not cv["relu"] and cv["sum"] is None
                    and sole(c, "add") == q and (r not in made_at or made_at[r] < pc)):
                target = pc, r
                break
        if target is not None:
            pc, r = target
            cv = nodes[pc]
            cv["sum"] = r
            cv["out"] = nd["out"]
            made_at[nd["out"]] = pc
            nodes[q] = None
            host, at = cv, pc
        else:
            host, at = nd, q
        rq = sole(host["out"], "relu")
        if rq is not None and rq > q:
            host["relu"] = True
            host["out"] = nodes[rq]["out"]
            made_at[host["out"]] = at
            nodes[rq] = None
    for q, nd in enumerate(nodes):
        if nd is not None and nd["kind"] == "bn" and not nd["relu"]:
            rq = sole(nd["out"], "relu")
            if rq is not None:
                nd["relu"] = True
                nd["out"] = nodes[rq]["out"]
                nodes[rq] = None
    nodes = [nd for nd in nodes if nd is not None]
    if len(nodes) < 2 or not any(nd["kind"] in ("conv", "convbn") for nd in nodes):
        return None
    # value ids: the chain step's inputs first, then one per node
    produced = {nd["out"] for nd in nodes}
    ext, acts, params = [], set(), set()
    for nd in nodes:
        for s in nd["srcs"] + ((nd["sum"],) if nd["sum"] is not None else ()):
            if s not in produced:
                acts.add(s)
                if s not in ext:
                    ext.append(s)
        for p in nd["params"]:
            if p is not None:
                params.add(p)
                if p not in ext:
                    ext.append(p)
    if acts & params:
        return None
    vid = {s: k for k, s in enumerate(ext)}
    for j, nd in enumerate(nodes):
        vid[nd["out"]] = len(ext) + j
    ext_shape = [tuple(shapes[s][0]) if s in acts else None for s in ext]
    outs = [nd["out"] for nd in nodes
            if nd["out"] in out_slots or (readers.get(nd["out"], set()) - run)]
    if not outs:
        return None
    cnodes = []
    for nd in nodes:
        shape = tuple(shapes[nd["out"]][0])
        cnodes.append(_chain.Node(
            nd["kind"], [vid[s] for s in nd["srcs"]],
            [None if p is None else vid[p] for p in nd["params"]], nd["attrs"], shape,
            nd["relu"], None if nd["sum"] is None else vid[nd["sum"]]))
    orig = steps[i0:i1]
    try:
        spec = _chain.Spec(cnodes, [vid[s] for s in outs], ext_shape,
                           _fallback(orig, ext, outs, shapes))
    except ValueError:
        return None
    if spec.get(spec.batch, 1) is None:
        return None         # oneDNN refuses a part: the steps stay
    st = _Step(_chain.kernel, {"chain": spec}, tuple((s, None, None) for s in ext),
               tuple((s, None, None) for s in outs), False, "oneDNN chain", tuple(outs))
    st.rows = _chain.rows
    st.writes = ()
    return st


def _fallback(orig, ext, outs, shapes):
    """The run's original steps over the chain step's arrays (for what
    oneDNN refused when it ran)."""
    def run(xp, ins, outarrs):
        bufs = dict(zip(ext, ins))
        bufs.update(zip(outs, outarrs))
        b = outarrs[0].shape[0]
        for st in orig:
            for s in st.fresh:
                if s not in bufs:
                    shape, dt = shapes[s]
                    if len(shape) == 4:
                        shape = (b,) + tuple(shape[1:])
                    bufs[s] = xp.empty(shape, dt)
            ins_ = [bufs[s] for s in st.whole]
            o = [bufs[r[0]] for r in st.outs]
            st.kernel(xp, *ins_, out=o[0] if len(o) == 1 else o, **st.attrs)
    return run
