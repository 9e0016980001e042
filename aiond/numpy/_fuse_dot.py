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


def _head(s):
    outs = getattr(s, "_outputs", None)
    if not outs or len(outs) != 1:
        return None
    return outs[0][0]


def fused_bias_add(F, x1, x2):
    """``dot(x, w, transpose_b=True) + b`` (either order) as one
    ``FullyConnected(x, w, b, flatten=False)``: a dense layer's bias added in
    the product's own output, as MXNet 2's ``npx.fully_connected`` does.
    None unless one side is such a product, the other a 1-D bias of its
    width and the dtypes are known and equal."""
    if F.kind != "sym":
        return None
    for prod, bias in ((x1, x2), (x2, x1)):
        node = _head(prod)
        if node is None or node.op is None or node.op.name != "dot":
            continue
        p = node.params
        if not p.get("transpose_b") or p.get("transpose_a") or len(node.inputs) != 2:
            continue
        x = type(prod)._from([node.inputs[0]])
        w = type(prod)._from([node.inputs[1]])
        sw, sb = F.shape(w), F.shape(bias)
        if sw is None or sb is None or len(sw) != 2 or tuple(sb) != (sw[0],):
            continue
        dt, db = F.dtype(prod), F.dtype(bias)
        if dt is None or db is None or _name(dt) != _name(db) or _name(dt) not in _FLOATS:
            continue
        return F.op("FullyConnected", [x, w, bias],
                    {"num_hidden": int(sw[0]), "no_bias": False, "flatten": False})
    return None
