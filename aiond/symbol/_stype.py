"""Storage-type inference of a bound graph (MXNet's FInferStorageType pass):
which outputs of an executor are row_sparse or csr.

Each op node's output storage follows the rule of its storage-aware kernel
(``ops.sparse.SPARSE``) for its inputs' storage types, exactly the choice
``mx.nd`` makes when the op runs imperatively; an op without such a kernel
for those inputs falls back to dense storage, as MXNet's storage fallback
does. The executor allocates its output arrays with these storage types, so
``exe.outputs[i].stype`` is what MXNet's executor gives."""
from __future__ import annotations

from ..base import OpError
from ..ops import sparse as _sp
from ..graph.ir import entry_key as _key

__all__ = ["infer_stypes"]


def infer_stypes(sym, arg_stypes, aux_stypes=()):
    """The storage type of each output of ``sym`` given its arguments' and
    auxiliary states' storage types (lists in ``list_arguments`` /
    ``list_auxiliary_states`` order)."""
    order, args, auxs = sym._arg_aux_nodes()
    st = {}
    for n, s in zip(args, arg_stypes):
        st[(id(n), 0)] = s
    for n, s in zip(auxs, aux_stypes):
        st[(id(n), 0)] = s
    for n in order:
        if n.op is None:
            continue
        k = n.num_visible()
        ins = tuple(st.get(_key(e), "default") for e in n.inputs)
        out = None
        attrs = n.params
        if any(s != "default" for s in ins) or n.op.name in _sp.ATTR_STYPE_OPS:
            impl = _sp.SPARSE.get(n.op.name)
            if impl is not None:
                try:
                    out = impl.stypes(attrs, ins)
                except OpError as e:
                    raise type(e)("Error in operator %s: %s" % (n.name, e)) from None
        out = tuple(out) if out is not None else ()
        for i in range(k):
            st[(id(n), i)] = out[i] if i < len(out) else "default"
    return [st.get(_key(e), "default") for e in sym._outputs]
