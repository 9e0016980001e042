"""Selection ops: ops whose every output element is a copy of one input
element (or a constant), such as flip, roll, pad, take or insert.

Such an op is defined by one function ``fn(xp, *inputs, fill=None, **attrs)``
that computes its result with array indexing; the gradient needs no rule of
its own: ``fn`` run on the *positions* of the input elements (int64 arrays
``arange(size)``) tells which input element each output element came from,
and the input gradient is the output gradient summed back into those
positions (``bincount``). ``fill`` is what ``fn`` puts where the result holds
no input element (a pad's constant, an inserted scalar): None means the op's
own value; the gradient pass gives -1 (no position).
"""
from __future__ import annotations

import numpy as np

from .registry import Param, _lit, p_int, register

__all__ = ["opt_int", "select_op"]

_I64 = np.dtype(np.int64)


def opt_int(v):
    """An int parameter that may be None (the selection ops' axis, start, stop...)."""
    v = _lit(v)
    return None if v is None else p_int(v)


def _positions(xp, ins, diff):
    arrs, total, sizes = [], 0, []
    for k, x in enumerate(ins):
        if k in diff:
            arrs.append(xp.arange(total, total + x.size, dtype=_I64).reshape(x.shape))
            sizes.append(x.size)
            total += x.size
        else:
            arrs.append(x)
    return arrs, sizes, total


def select_op(name, fn, infer, params=(), inputs=("a",), diff=None, variadic=False,
              num_outputs=1, aliases=(), doc=None):
    """Register op ``name`` computing ``fn`` (see the module doc) and its
    gradient. ``diff(n_inputs, attrs)`` lists the inputs that get gradients (default:
    all); ``num_outputs`` may be a function of the attrs (split's pieces)."""
    if diff is None:
        def diff(n, attrs):
            return tuple(range(n))
    multi = num_outputs != 1

    def kernel(xp, *ins, out, **attrs):
        r = fn(xp, *ins, **attrs)
        if multi:
            out = out if isinstance(out, (list, tuple)) else [out]
            for o, x in zip(out, r):
                o[...] = xp.reshape(x, o.shape)
        else:
            out[...] = xp.reshape(r, out.shape)
    kernel.__doc__ = doc or fn.__doc__
    register(name, inputs=inputs, params=params, infer=infer, variadic=variadic,
             num_outputs=num_outputs, aliases=aliases)(kernel)

    bname = "_backward" + (name if name.startswith("_") else "_" + name)

    def _bwd_rule(attrs, shapes, dtypes):
        k = attrs["num_ograds"]
        ins = shapes[k:]
        d = diff(len(ins), attrs)
        return tuple(tuple(ins[i]) for i in d), tuple(dtypes[k + i] for i in d)

    def bkernel(xp, *arrs, out, num_ograds, **attrs):
        ogs, ins = arrs[:num_ograds], arrs[num_ograds:]
        d = diff(len(ins), attrs)
        pos, sizes, total = _positions(xp, ins, d)
        r = fn(xp, *pos, fill=-1, **attrs)
        rs = r if multi else [r]
        idx = xp.concatenate([xp.reshape(xp.asarray(p), (-1,)) for p in rs]) if rs else \
            xp.zeros((0,), _I64)
        g = xp.concatenate([xp.reshape(xp.broadcast_to(o, xp.shape(p)), (-1,))
                            for o, p in zip(ogs, rs)]) if rs else xp.zeros((0,))
        keep = idx >= 0
        acc = xp.bincount(idx[keep], weights=g[keep].astype(np.float64), minlength=total)
        outs = out if isinstance(out, (list, tuple)) else [out]
        lo = 0
        for o, n in zip(outs, sizes):
            o[...] = xp.reshape(acc[lo:lo + n], o.shape).astype(o.dtype)
            lo += n

    # num_outputs=None: set per call from the inputs (see _bwd_rule)
    register(bname, inputs=("*args",), variadic=True,
             params=[Param("num_ograds", p_int, 1, "how many output gradients come first")]
             + list(params), infer=_bwd_rule, num_outputs=None, free_attrs=True,
             )(bkernel)
    from .registry import get

    def grad(F, attrs, ins, outs, og):
        ogs = [g if g is not None else F.zeros_like(o) for g, o in zip(og, outs)]
        d = diff(len(ins), attrs)
        res = getattr(F._internal, bname)(*ogs, *ins, num_ograds=len(ogs), **attrs)
        res = list(res) if isinstance(res, (list, tuple)) else [res]
        it = iter(res)
        return [next(it) if i in d else None for i in range(len(ins))]
    get(name).grad = grad
    return fn
