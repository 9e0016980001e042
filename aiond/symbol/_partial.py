"""Shape inference over partly known shapes, as MXNet 1.9.1's ``FInferShape``
functions do it: an op fills what it can of its outputs from partly known
inputs, and of its inputs from known outputs (the backward half of nnvm's
alternating inference passes).

Shapes here use MXNet's internal (NumPy-shape) encoding whatever the user's
mode: ``None`` is an unknown shape and ``-1`` an unknown dimension; ``0`` is
a real zero-size dimension. ``_infer`` converts at the edges.

A rule is ``rule(params, ins, outs) -> (ins, outs)``: lists of shapes (or
None) of the same lengths, holding what the op can say about each entry;
the caller merges them into what is known and reports conflicts. Ops with no
rule here get the generic treatment in ``_infer``: the registry's rule once
every input is known, and for partly known inputs the rule run with two
different stand-ins for the unknown dims.
"""
from __future__ import annotations

import numpy as np

from .. import util as _util
from ..ops import _rules
from ..ops.dynamic import ValueShaped

__all__ = ["known", "merge", "rule_for", "partial_forward"]

UNKNOWN = -1


def known(s):
    """A completely known shape."""
    return s is not None and all(d >= 0 for d in s)


def merge(a, b):
    """Unify two partial shapes; ``False`` when they conflict."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if len(a) != len(b):
        return False
    out = []
    for x, y in zip(a, b):
        if x >= 0 and y >= 0 and x != y:
            return False
        out.append(x if x >= 0 else y)
    return tuple(out)


def _unify(shapes):
    cur = None
    for s in shapes:
        m = merge(cur, s)
        if m is False:
            return False
        cur = m
    return cur


# ------------------------------------------------------------------ families


def _same(p, ins, outs):
    """ElemwiseShape: every input and output has one shape."""
    s = _unify(list(ins) + list(outs))
    if s is False or s is None:
        return ins, outs
    return [s] * len(ins), [s] * len(outs)


def _broadcast(p, ins, outs):
    """BinaryBroadcastShape: forward only; unknown dims stay unknown."""
    lhs, rhs = ins
    if lhs is None or rhs is None:
        return ins, outs
    if lhs == rhs:
        return ins, [tuple(lhs)]
    n = max(len(lhs), len(rhs))
    pl = (1,) * (n - len(lhs)) + tuple(lhs)
    pr = (1,) * (n - len(rhs)) + tuple(rhs)
    out = []
    for a, b in zip(pl, pr):
        if a < 0 or b < 0:
            out.append(UNKNOWN)
        elif a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            return ins, outs        # the registry rule reports the mismatch
    return ins, [tuple(out)]


# ------------------------------------------------------------------ layers


def _fully_connected(p, ins, outs):
    ins = list(ins)
    d, o = ins[0], outs[0]
    if d is None:
        return ins, outs
    nh = p["num_hidden"]
    if p.get("flatten", True):
        out = (d[0], nh)
    else:
        out = tuple(d[:-1]) + (nh,)
    if o is not None and len(o) > 0:
        ins[0] = (o[0],) + tuple(d[1:])
    return ins, [out]


def _spatial_axes(p, ndim):
    layout = p.get("layout")
    if isinstance(layout, str) and layout.endswith("C"):
        return 0, ndim - 1, list(range(1, ndim - 1))
    return 0, 1, list(range(2, ndim))


def _convolution(p, ins, outs):
    ins = list(ins)
    d, o = ins[0], outs[0]
    if d is None:
        return ins, outs
    kernel = tuple(p["kernel"])
    k = len(kernel)
    if len(d) != k + 2:
        return ins, outs            # the registry rule reports it
    stride = tuple(p.get("stride") or ()) or (1,) * k
    dilate = tuple(p.get("dilate") or ()) or (1,) * k
    pad = tuple(p.get("pad") or ()) or (0,) * k
    nb, nc, sp = _spatial_axes(p, len(d))
    out = [UNKNOWN] * len(d)
    out[nb] = d[nb]
    out[nc] = p["num_filter"]
    for j, ax in enumerate(sp):
        dk = dilate[j] * (kernel[j] - 1) + 1
        out[ax] = (d[ax] + 2 * pad[j] - dk) // stride[j] + 1 if d[ax] >= 0 else UNKNOWN
    o = merge(o, tuple(out))
    if o is False:
        return ins, outs
    back = list(d)
    back[nb] = o[nb]
    for j, ax in enumerate(sp):
        if o[ax] >= 0 and stride[j] == 1:
            dk = dilate[j] * (kernel[j] - 1) + 1
            back[ax] = o[ax] + dk - 1 - 2 * pad[j]
    ins[0] = tuple(back)
    return ins, [o]


def _concat(p, ins, outs):
    """ConcatShape: inputs agree off the concat axis; the output's axis is
    their sum once every input's is known."""
    dim = p.get("dim", 1)
    common = None
    total, unknown_axis, axis = 0, False, None
    for s in ins:
        if s is None:
            unknown_axis = True
            continue
        if not s:
            return ins, outs
        axis = dim % len(s)
        unknown_axis = unknown_axis or s[axis] < 0
        total += max(s[axis], 0)
        t = list(s)
        t[axis] = UNKNOWN
        common = merge(common, tuple(t))
        if common is False:
            return ins, outs
    o = outs[0]
    if o is not None and o:
        axis = dim % len(o)
        t = list(o)
        t[axis] = UNKNOWN
        common = merge(common, tuple(t))
        if common is False:
            return ins, outs
    if common is None:
        return ins, outs
    new_ins = [merge(s, common) if s is not None else common for s in ins]
    if any(s is False for s in new_ins):
        return ins, outs
    out = list(common)
    if not unknown_axis:
        out[axis] = total
    elif o is not None and o[axis] >= 0:
        # one input with an unknown axis size: the output's size tells it
        miss = [i for i, s in enumerate(new_ins) if s[axis] < 0]
        if len(miss) == 1:
            rest = sum(s[axis] for i, s in enumerate(new_ins) if i != miss[0])
            t = list(new_ins[miss[0]])
            t[axis] = o[axis] - rest
            new_ins[miss[0]] = tuple(t)
    return new_ins, [tuple(out)]


def _slice_channel(p, ins, outs):
    d = ins[0]
    if d is None:
        return ins, outs
    n = p["num_outputs"]
    axis = p.get("axis", 1) % len(d)
    squeeze = p.get("squeeze_axis", False)
    o = list(d)
    if o[axis] >= 0:
        o[axis] //= n
    if squeeze and (o[axis] == 1 or d[axis] < 0):
        del o[axis]
    common = _unify([tuple(o)] + [s for s in outs if s is not None])
    if common is False:
        return ins, outs
    back = list(d)
    if squeeze and len(common) == len(d) - 1:
        back = list(common[:axis]) + [n] + list(common[axis:])
    else:
        back = list(common)
        if back[axis] >= 0:
            back[axis] *= n
    return [tuple(back)], [common] * len(outs)


def _where(p, ins, outs):
    """WhereOpShape: nothing is inferred before the condition is known."""
    cond, x, y = ins
    if not known(cond):
        return ins, outs
    t = _unify([x, y, outs[0]])
    if t is False or t is None:
        return ins, outs
    if len(cond) == len(t):
        t = merge(t, cond)
        if t is False:
            return ins, outs
        return [t, t, t], [t]
    return [cond, t, t], [t]


def _transpose(p, ins, outs):
    """TransposeShape: out[i] = in[axes[i]], both ways."""
    d, o = ins[0], outs[0]
    n = len(d) if d is not None else (len(o) if o is not None else None)
    if n is None:
        return ins, outs
    axes = p.get("axes")
    axes = tuple(a % n for a in axes) if axes else tuple(range(n - 1, -1, -1))
    if len(axes) != n:
        return ins, outs
    new_o = tuple(d[a] for a in axes) if d is not None else None
    new_d = None
    if o is not None:
        t = [UNKNOWN] * n
        for i, a in enumerate(axes):
            t[a] = o[i]
        new_d = tuple(t)
    return [new_d], [new_o]


def init_rule(p, ins, outs):
    """InitShape (_zeros, _ones, _full): the ``shape`` parameter, whose -1
    dims are unknown and come from the graph around."""
    shape = p.get("shape")
    if shape is None:
        return ins, outs
    legacy = not _util.is_np_shape()        # MXNet 1.x: a 0 dim is unknown too
    if legacy and shape == ():
        return ins, outs                    # ... and () an unknown shape
    return ins, [tuple(UNKNOWN if d < 0 or (legacy and d == 0) else d for d in shape)]


def has_unknown_param_shape(op, params):
    """An init op whose ``shape`` parameter leaves dims to inference."""
    if not _is_init(op):
        return False
    shape = params.get("shape")
    legacy = not _util.is_np_shape()
    if shape is None:
        return legacy          # a sampler's default shape is (), below
    # MXNet 1.x (no NumPy-shape semantics): a 0 dim is unknown too, and so is
    # the whole shape when it is () (ConvertToNumpyShape in InitShape)
    return any(d < 0 for d in shape) or (legacy and (0 in shape or shape == ()))


def _is_init(op):
    # the samplers without inputs (_random_normal & co) share InitShape
    return op.name in _INIT_OPS or (op.name.startswith("_random_") and not op.inputs)


_INIT_OPS = ("_zeros", "_ones", "_full")


RULES = {
    "FullyConnected": _fully_connected,
    "Convolution": _convolution,
    "Concat": _concat,
    "SliceChannel": _slice_channel,
    "where": _where,
    "transpose": _transpose,
    "_zeros": init_rule,
    "_ones": init_rule,
    "_full": init_rule,
}


def _reshape(op):
    """ReshapeShape: forward as the registry rule says, and back from a known
    output to an input with one unknown dim (ReverseReshapeInferShape)."""
    def rule(p, ins, outs):
        d, o = ins[0], outs[0]
        new_o = None
        if d is not None and not known(d):
            part = partial_forward(op, p, [d], (np.dtype(np.float32),))
            new_o = part[0] if part else None
        new_d = d
        if d is not None and known(o) and not known(d):
            miss = [i for i, x in enumerate(d) if x < 0]
            if len(miss) == 1:
                rest = 1
                for x in d:
                    if x >= 0:
                        rest *= x
                size = 1
                for x in o:
                    size *= x
                if rest and size % rest == 0:
                    t = list(d)
                    t[miss[0]] = size // rest
                    new_d = tuple(t)
        return [new_d], [new_o]
    return rule


def _slice_like_axes(op):
    """SliceShape / SliceAxisShape: a dim unknown in the input stays unknown
    in the output, whatever begin and end say."""
    def rule(p, ins, outs):
        d = ins[0]
        if d is None or known(d):
            return ins, outs
        part = partial_forward(op, p, [d], (np.dtype(np.float32),))
        if not part or len(part[0]) != len(d):
            return ins, outs
        o = tuple(UNKNOWN if x < 0 else y for x, y in zip(d, part[0]))
        return ins, [o]
    return rule


FACTORIES = {"Reshape": _reshape, "slice": _slice_like_axes, "slice_axis": _slice_like_axes}


def _elemwise_unary(op):
    """An elementwise op of one input and one output (Cast, Activation,
    ``_plus_scalar``, BlockGrad, ...): MXNet gives these ElemwiseShape<1, 1>.
    Whether the op keeps the shape with its parameters (Reshape is
    elementwise too) is asked of its registry rule at the entry's rank."""
    def rule(p, ins, outs):
        s = ins[0] if ins[0] is not None else outs[0]
        if s is None:
            return ins, outs
        dt = (np.dtype(np.float32),)
        for base in _STANDINS:
            probe = tuple(base * (i + 1) for i in range(len(s)))
            try:
                if tuple(op.infer(p, (probe,), dt)[0][0]) != probe:
                    return ins, outs
            except Exception:  # noqa: BLE001 - the probe does not fit: no information
                return ins, outs
        return _same(p, ins, outs)
    return rule


def rule_for(op):
    """The partial rule of ``op``, or None for the generic treatment."""
    r = RULES.get(op.name)
    if r is not None:
        return r
    f = FACTORIES.get(op.name)
    if f is not None:
        return f(op)
    if op.infer is _rules.elemwise_same or op.infer is _rules.unary:
        return _same
    if op.infer is _rules.broadcast:
        return _broadcast
    if op.elemwise and len(op.inputs) == 1 and op.num_outputs == 1 and not op.variadic:
        return _elemwise_unary(op)
    return None


def same_dtype(op):
    """Ops whose inputs and outputs share one dtype (MXNet's ElemwiseType)."""
    return (op.infer is _rules.elemwise_same or op.infer is _rules.unary
            or op.infer is _rules.broadcast)


# ------------------------------------------------------------------ generic

# stand-ins for unknown dims: divisible by every small factor, so splits and
# reshapes that fit any real size fit these too
_STANDINS = (720720, 1441440)


def partial_forward(op, params, in_shapes, dtypes):
    """Output shapes for partly known inputs (every input's ndim known):
    the registry rule runs with two stand-ins for the unknown dims; output
    dims that differ between the runs depend on them and are unknown. None
    when the rule rejects the stand-ins (nothing can be said)."""
    runs = []
    for fill in _STANDINS:
        shapes = tuple(tuple(d if d >= 0 else fill for d in s) for s in in_shapes)
        try:
            runs.append(op.infer(params, shapes, tuple(dtypes))[0])
        except ValueShaped as e:
            runs.append(e.shapes)
        except Exception:  # noqa: BLE001 - the stand-ins may not fit the op: no information
            return None
    out = []
    for a, b in zip(*runs):
        if len(a) != len(b):
            return None
        out.append(tuple(int(x) if x == y else UNKNOWN for x, y in zip(a, b)))
    return out


def derive_partial(rule, params, shape):
    """``rule(params, shape)`` (a parameter-shape table entry) for a partly
    known ``shape``: entries that depend on its unknown dims are -1."""
    if known(shape):
        return rule(params, shape)
    runs = []
    for fill in _STANDINS:
        runs.append(rule(params, tuple(d if d >= 0 else fill for d in shape)))
    out = {}
    for k, a in runs[0].items():
        b = runs[1].get(k)
        if a is None or b is None or len(a) != len(b):
            continue
        out[k] = tuple(int(x) if x == y else UNKNOWN for x, y in zip(a, b))
    return out
