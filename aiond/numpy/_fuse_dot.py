"""``np.dot(x, w.T)`` in a traced graph as one product that reads ``w`` as it
is (MXNet 2's Gluon maps the same pattern to ``npx.fully_connected``).

A HybridBlock written with the NumPy interface spells a dense layer
``F.np.dot(x, w.T) + b``. Built literally, the graph copies ``w`` into its
transpose every step, and copies the gradient back through a second
transpose; the product's own backward computes ``x``'s gradient even when
``x`` is the data. When the dot's second operand is the 2-D transpose of a
Symbol and both operands' dtypes are known and equal (a gluon trace knows
them), the dot becomes the registry's ``dot(x, w, transpose_b=True)``:
BLAS reads ``w`` transposed in place, and its gradient is one product per
input, so a gradient nobody asks for is never computed. The result is the
same (NumPy's dot of an N-D ``x`` with a 2-D ``b`` contracts ``x``'s last
axis with ``b``'s first, which is ``w``'s last).
"""
from __future__ import annotations

_FLOATS = ("float16", "float32", "float64")


def _transposed_source(b):
    """The Symbol whose 2-D transpose ``b`` is, or None."""
    outs = getattr(b, "_outputs", None)
    if not outs or len(outs) != 1:
        return None
    node = outs[0][0]
    op = node.op
    if op is None or op.name != "_np_transpose" or len(node.inputs) != 1:
        return None
    axes = node.params.get("axes")
    if axes not in (None, (), (1, 0)):
        return None
    return type(b)._from([node.inputs[0]])


def fused_dot(F, a, b):
    """``dot(a, b.T's source, transpose_b=True)`` when that is ``np.dot(a, b)``
    and cheaper (see the module doc), else None."""
    if F.kind != "sym":
        return None
    w = _transposed_source(b)
    if w is None:
        return None
    sw, sa = F.shape(w), F.shape(a)
    da, dw = F.dtype(a), F.dtype(w)
    if sw is None or sa is None or da is None or dw is None:
        return None
    if len(sw) != 2 or len(sa) < 1 or sa[-1] != sw[1]:
        return None
    if str(da) != str(dw) or str(_name(da)) not in _FLOATS:
        return None
    return F.op("dot", [a, w], {"transpose_b": True})


def _name(dt):
    import numpy as _np
    try:
        return _np.dtype(dt).name
    except TypeError:
        return str(dt)
