"""``mx.sym.np._internal`` (MXNet's ``_npi`` for symbols): every ``_npi_<name>``
op as ``<name>(*inputs, *params, **params)`` adding a graph node."""
from __future__ import annotations

from ...ops import registry as _reg

__all__ = []


def _make(opname, op):
    def fn(*args, name=None, **kwargs):
        from ._symbol import SYM
        kwargs.pop("out", None)     # a graph node makes its own output
        if op.variadic:
            k = 0
            while k < len(args) and SYM.isarr(args[k]):
                k += 1
        else:
            k = min(len(op.inputs), len(args))
        inputs = [SYM.arr(x) for x in args[:k]]
        for p, v in zip(op.params, args[k:]):
            kwargs.setdefault(p.name, v)
        return SYM.op(opname, inputs, op.parse(kwargs))
    fn.__name__ = fn.__qualname__ = opname[5:]
    fn.__doc__ = op.doc
    return fn


for _n, _op in sorted(_reg.ops().items()):
    if _n.startswith("_npi_"):
        globals()[_n[5:]] = _make(_n, _op)
        __all__.append(_n[5:])
del _n, _op
