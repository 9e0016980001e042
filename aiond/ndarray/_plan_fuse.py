"""Inference fusion of a plan's steps: Convolution + BatchNorm (+ ReLU).

As MXNet's oneDNN subgraph backend does for inference: a Convolution whose
output only an inference BatchNorm reads, and the ReLU that alone reads the
BatchNorm's output, become one step (``ops/conv_bn.py``): the BatchNorm is
folded into the convolution's weight and bias, the ReLU is a post-op. Only
for plans that run on the CPU without recording (``Plan(fuse=True)``); the
step keeps the name "Convolution" (its rows stay independent for
``_coalesce``, its errors name the convolution).
"""
from __future__ import annotations

import collections

import numpy as np

__all__ = ["fuse"]

_F32 = np.dtype(np.float32)


def _conv_ok(st, shapes):
    a = st.attrs
    if len(st.outs) != 1 or st.outs[0][1:] != (None, None) or st.whole is None:
        return False
    if a.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
        return False
    return all(shapes[s][1] == _F32 for s in st.whole)


def _bn_ok(st):
    a = st.attrs
    # in a graph, an inference BatchNorm writes nothing but its outputs
    # (gamma is set to 1 only in training or with output_mean_var)
    return (a.get("_graph") and not a.get("_train") and not a.get("output_mean_var")
            and a.get("axis", 1) == 1 and st.whole is not None and len(st.ins) == 5
            and len(st.outs) == 3)


def _is_relu(st):
    return (len(st.ins) == 1 and len(st.outs) == 1 and st.whole is not None
            and st.outs[0][1:] == (None, None)
            and ((st.name == "Activation" and st.attrs.get("act_type") == "relu")
                 or st.name == "relu"))


def fuse(steps, outputs, written, shapes=None):
    """(steps, written input slots) with the fusable runs of ``steps``
    replaced; ``outputs``: the plan's output refs; ``written``: the input
    slots written (declared writes and in-place outputs)."""
    from ..ops import conv_bn
    from ._plan import _Step
    if shapes is None:
        raise ValueError("fuse needs the slot shapes")
    readers = collections.defaultdict(list)
    for i, st in enumerate(steps):
        for r in st.ins:
            readers[r[0]].append(i)
    out_slots = {r[0] for r in outputs}
    writes_at = collections.defaultdict(set)        # slot -> steps writing it
    for i, st in enumerate(steps):
        for r in st.outs:
            writes_at[r[0]].add(i)
        for k in st.writes:
            writes_at[k].add(i)

    def sole_reader(s, i):
        rs = readers.get(s, ())
        return rs[0] if len(rs) == 1 and s not in out_slots and rs[0] > i else None

    def untouched(slots, lo, hi, skip):
        return not any(lo < k < hi and k != skip for s in slots for k in writes_at.get(s, ()))

    replaced = {}       # step index -> fused step (placed there), or None (dropped)
    for j, cv in enumerate(steps):
        if cv.name != "Convolution" or j in replaced or not _conv_ok(cv, shapes):
            continue
        sy = cv.outs[0][0]
        if sy not in cv.fresh:
            continue
        i = sole_reader(sy, j)
        if i is None or i in replaced:
            continue
        bn = steps[i]
        if bn.name != "BatchNorm" or not _bn_ok(bn) or bn.whole[0] != sy or sy in bn.whole[1:]:
            continue
        if any(r[0] in out_slots or readers.get(r[0]) or r[0] not in bn.fresh
               for r in bn.outs[1:]) or bn.outs[0][1:] != (None, None):
            continue
        last, final, relu = i, bn.outs[0], False
        sz = final[0]
        r = sole_reader(sz, i)
        if r is not None and r not in replaced and _is_relu(steps[r]) \
                and steps[r].whole[0] == sz and sz in bn.fresh:
            last, final, relu = r, steps[r].outs[0], True
        ins = cv.ins + bn.ins[1:]
        # (the BatchNorm's own declared write of gamma does not happen in inference)
        if not untouched([x[0] for x in ins], j, last, i):
            continue
        if final[0] not in steps[last].fresh:
            continue
        attrs = {"kernel": cv.attrs["kernel"], "stride": cv.attrs["stride"],
                 "dilate": cv.attrs["dilate"], "pad": cv.attrs["pad"],
                 "num_group": cv.attrs.get("num_group", 1),
                 "workspace": cv.attrs.get("workspace", 1024),
                 "has_bias": len(cv.ins) > 2 and not cv.attrs.get("no_bias", False),
                 "eps": float(bn.attrs.get("eps", 1e-3)),
                 "fix_gamma": bool(bn.attrs.get("fix_gamma", True)), "relu": relu}
        if not attrs["has_bias"]:
            ins = cv.ins[:2] + bn.ins[1:]
        st = _Step(conv_bn.kernel, attrs, tuple(ins), (final,), False, "Convolution",
                   (final[0],))
        st.rows = conv_bn.rows
        st.writes = tuple(cv.writes) + tuple(steps[last].writes if relu else ())
        replaced[j] = None
        replaced[i] = None
        replaced[last] = st
    if not replaced:
        return steps, written
    out = []
    for i, st in enumerate(steps):
        if i in replaced:
            if replaced[i] is not None:
                out.append(replaced[i])
            continue
        out.append(st)
    # the input slots still written: in-place outputs and declared writes of
    # the steps that remain (an inference BatchNorm's gamma is not one)
    nw = set()
    for st in out:
        nw.update(st.writes)
        nw.update(r[0] for r in st.outs if r[0] not in st.fresh)
    return out, {s for s in written if s in nw}
