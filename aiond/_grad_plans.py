"""Gradient rules replayed as plans: one op per recorded node in backward.

A gradient rule (``grad(F, attrs, inputs, outputs, out_grads)``) pushes a
few ``F`` ops (a FullyConnected's: two ``dot``s, a ``sum``, reshapes);
imperative backward pays each op's Python - argument parsing, shape rule,
handles - on every step. The ops a rule pushes depend only on the op, its
attributes, the shapes and dtypes involved and which inputs need a
gradient, so the rule is traced once per such key on placeholders
(``ndarray/_plan.py``) and replayed as one op after that; the values are
those of the same kernels in the same order.

Rules that cannot be traced (they read a value, push work of their own,
take sparse arrays) run as before; so do nodes recorded for
``create_graph`` (their gradient ops must be recorded themselves).
"""
from __future__ import annotations

from . import engine as _engine_mod
from .ndarray._plan import Plan, TraceError, enabled, placeholder, trace
from .util import is_np_shape

_engine = _engine_mod.get()

__all__ = ["rule_via_plan"]

_MAX = 4096
_plans = {}
_enabled = [enabled()]      # read once (per process), as MXNet reads its variables


def refresh():
    """Read ``AIOND_FUSE_GRAPHS`` again and forget the cached plans."""
    _enabled[0] = enabled()
    _plans.clear()


def _key(node, ins, outs, ograds, need, training, ctx):
    attrs = node.attrs
    try:
        akey = tuple(sorted(attrs.items())) if attrs else ()
        k = (node.op, node.op.grad, akey, tuple((x._shape, x._dtype) for x in ins),
             tuple((y._shape, y._dtype) for y in outs),
             tuple((g._shape, g._dtype) for g in ograds), need, training, ctx,
             is_np_shape())
        hash(k)
    except TypeError:       # an attribute value that is not hashable
        return None
    return k


def rule_via_plan(F, node, ograds, need, training, targets=None):
    """The input gradients of ``node`` (a list with None where no gradient
    flows), from its rule's cached plan; None when the rule cannot be
    planned. ``targets[i]``: an array to compute input ``i``'s gradient in
    (see ``Plan.push``)."""
    if _engine.tracing() or not _enabled[0]:
        return None         # a graph being traced takes the rule's own ops
    ins, outs = node.inputs, node.outputs
    for a in ins:
        if a._sparse:
            return None
    for a in ograds:
        if a._sparse:
            return None
    ctx = ins[0]._st.ctx if ins else outs[0]._st.ctx
    key = _key(node, ins, outs, ograds, need, training, ctx)
    if key is None:
        return None
    entry = _plans.get(key)
    if entry is None:
        entry = _build(F, node, ins, outs, ograds, need, ctx)
        if len(_plans) >= _MAX:
            _plans.clear()
        _plans[key] = entry
    if entry is False:
        return None
    plan, mask = entry
    tg = None
    if targets is not None:
        tg = [t for t, m in zip(targets, mask) if m]
    got = plan.push(list(ins) + list(outs) + list(ograds), ctx, targets=tg)
    res = []
    k = 0
    for m in mask:
        if m:
            res.append(got[k])
            k += 1
        else:
            res.append(None)
    return res


def _build(F, node, ins, outs, ograds, need, ctx):
    pi = [placeholder(x._shape, x._dtype, ctx) for x in ins]
    po = [placeholder(y._shape, y._dtype, ctx) for y in outs]
    pg = [placeholder(g._shape, g._dtype, ctx) for g in ograds]
    rule = node.op.grad

    def run():
        if getattr(rule, "takes_need", False):
            return rule(F, node.attrs, pi, po, pg, need=list(need))
        return rule(F, node.attrs, pi, po, pg)
    try:
        igrads, members, inline = trace(run)
    except TraceError:
        return False
    except Exception:  # noqa: BLE001 - the rule raises the same on the real arrays
        return False
    if not isinstance(igrads, (list, tuple)):
        igrads = [igrads]
    mask = tuple(g is not None for g in igrads)
    real = [g for g in igrads if g is not None]
    try:
        plan = Plan(members, pi + po + pg, real, "backward_" + node.op.name, inline)
    except Exception:  # noqa: BLE001 - not a list of arrays the ops made: run it as is
        return False
    return plan, mask
