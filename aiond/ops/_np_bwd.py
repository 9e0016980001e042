"""Gradients computed by a companion ``_backward_<op>`` kernel (NumPy-interface
ops whose gradient is a host formula: einsum, decompositions, sorting ...).

``backward(name, kernel, diff)`` registers ``_backward_<name>`` taking the
output gradients, the forward inputs and the forward outputs (in that
order), with the forward op's attrs; ``kernel(xp, ograds, inputs, outputs,
**attrs)`` returns the gradients of the inputs listed in ``diff`` (None:
every input). The forward op's grad rule pushes that op, so the gradient
runs on the engine like any op (it is not differentiable again).
"""
from __future__ import annotations

from .registry import get, hooks, register

__all__ = ["backward"]


def backward(name, kernel, diff=None):
    bname = "_backward_" + name

    def infer(attrs, shapes, dtypes):
        n_og, n_in = attrs["_nog"], attrs["_nin"]
        idx = range(n_in) if diff is None else [i for i in diff if i < n_in]
        return (tuple(tuple(shapes[n_og + i]) for i in idx),
                tuple(dtypes[n_og + i] for i in idx))

    def bkernel(xp, *arrs, out, _nog, _nin, **attrs):
        og = arrs[:_nog]
        ins = arrs[_nog:_nog + _nin]
        outs = arrs[_nog + _nin:]
        grads = kernel(xp, og, ins, outs, **attrs)
        outl = out if isinstance(out, (list, tuple)) else [out]
        for o, g in zip(outl, grads):
            o[...] = xp.asarray(g).reshape(o.shape).astype(o.dtype, copy=False)

    register(bname, inputs=("*args",), variadic=True, infer=infer, free_attrs=True)(bkernel)
    bop = get(bname)

    def grad(F, attrs, ins, outs, og):
        n_in = len(ins)
        idx = list(range(n_in)) if diff is None else [i for i in diff if i < n_in]
        a = dict(attrs)
        a["_nog"], a["_nin"] = len(og), n_in
        # through ndarray's invoke, which the F namespace's function is not: that
        # drops the free attrs (the forward op's and the _nog/_nin counts)
        r = hooks.invoke(bop, list(og) + list(ins) + list(outs), a)
        r = list(r) if isinstance(r, (list, tuple)) else [r]
        res = [None] * n_in
        for i, g in zip(idx, r):
            res[i] = g
        return res
    get(name).grad = grad
    return grad
