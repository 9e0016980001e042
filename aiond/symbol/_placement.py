"""Device placement of a bound graph across contexts (MXNet's ``group2ctx``,
its PlaceDevice pass): which context each op of an executor runs on, and the
copies between contexts.

- a variable lives where its bound array is;
- an op whose ``ctx_group`` attribute (``mx.AttrScope(ctx_group=...)``)
  names a group of ``group2ctx`` runs on that group's context;
- any other op runs where its first input is (the default context when it
  has none);
- an input on another context is copied to the op's (``DeviceCopy``, MXNet's
  ``_CrossDeviceCopy``: its gradient is copied back)."""
from __future__ import annotations

from .. import autograd
from ..context import Context

__all__ = ["DeviceCopy", "copy_to", "place", "var_contexts"]


class DeviceCopy(autograd.Function):
    """A copy of an array on another context, differentiable: the gradient
    goes back to the source's context."""

    def __init__(self, ctx):
        super().__init__()
        self._dst = ctx
        self._src = None

    def forward(self, x):
        self._src = x.context
        return x.copyto(self._dst)

    def backward(self, dy):
        return dy.copyto(self._src)


def copy_to(x, ctx):
    """``x`` on ``ctx`` (``x`` itself when it is there already)."""
    if x.context == ctx:
        return x
    if autograd.is_recording() and x._ag is not None:
        return DeviceCopy(ctx)(x)
    return x.copyto(ctx)


def place(sym, group2ctx, arg_arrays, aux_arrays, default):
    """{id(node): context} for every node of ``sym``."""
    order, args, auxs = sym._arg_aux_nodes()
    where = {}
    for n, a in zip(list(args) + list(auxs), list(arg_arrays) + list(aux_arrays)):
        where[id(n)] = a.context if a is not None else default
    groups = group2ctx or {}
    for n in order:
        if n.op is None:
            where.setdefault(id(n), default)
            continue
        g = n.attrs.get("__ctx_group__")
        c = groups.get(g) if g is not None else None
        if c is None and n.inputs:
            c = where.get(id(n.inputs[0][0]))
        if c is not None and not isinstance(c, Context):
            raise TypeError("group2ctx[%r] must be a Context, got %r" % (g, c))
        where[id(n)] = c if c is not None else default
    return where


def var_contexts(sym, group2ctx):
    """{variable name: context} for the variables whose ``ctx_group`` names a
    group of ``group2ctx`` (where simple_bind allocates them)."""
    out = {}
    for n in sym._arg_aux_nodes()[0]:
        if n.op is None:
            c = group2ctx.get(n.attrs.get("__ctx_group__"))
            if c is not None:
                out[n.name] = c
    return out
