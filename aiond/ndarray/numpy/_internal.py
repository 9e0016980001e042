"""``mx.nd.np._internal`` (MXNet's ``_npi``): every ``_npi_<name>`` op as
``<name>(*inputs, *params, out=None, **params)``, returning ``mx.np.ndarray``
(what MXNet's own numpy front ends and tests call directly)."""
from __future__ import annotations

from ...ops import registry as _reg

__all__ = []


def _make(opname, op):
    def fn(*args, out=None, name=None, **kwargs):
        from ...numpy._front import ND
        if op.variadic:
            k = 0
            while k < len(args) and ND.isarr(args[k]):
                k += 1
        else:
            k = min(len(op.inputs), len(args))
        inputs = [ND.arr(x) for x in args[:k]]
        for p, v in zip(op.params, args[k:]):
            kwargs.setdefault(p.name, v)
        return ND.op(opname, inputs, op.parse(kwargs), out)
    fn.__name__ = fn.__qualname__ = opname[5:]
    fn.__doc__ = op.doc
    return fn


for _n, _op in sorted(_reg.ops().items()):
    if _n.startswith("_npi_"):
        globals()[_n[5:]] = _make(_n, _op)
        __all__.append(_n[5:])
del _n, _op
