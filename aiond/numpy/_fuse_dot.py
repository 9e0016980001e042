"""``np.dot(x, w.T)`` in a traced graph as one product that reads ``w`` as it
is (MXNet 2's Gluon maps the same pattern to ``npx.fully_connected``).

A HybridBlock written with the NumPy interface spells a dense layer
``F.np.dot(x, w.T) + b``. Built literally, the graph copies ``w`` into its
transpose every step, and copies the gradient back through a second
transpose; the product's own backward computes ``x``'s gradient even when
``x`` is the data. When the dot's second operand is the transpose of a 2-D parameter (a graph
variable that declares its shape and dtype) and the first operand's dtype
(a gluon trace knows it) is the parameter's, the dot becomes the
registry's ``dot(x, w, transpose_b=True)``: BLAS reads ``w`` transposed in
place, and its gradient is one product per input, so a gradient nobody asks
for is never computed; a 1-D parameter added to it makes one
``FullyConnected``. Nothing here asks the tracer for a shape (that would
make gluon re-trace the graph per input shape). The result is the
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


def _var_sig(s):
    """(shape, dtype name) a graph variable ``s`` declares (a Parameter's
    variable does: ``__shape__``/``__dtype__``), or None. Read from the node,
    not asked of the tracer: a graph whose code asks an input's shape is
    re-traced per input shape and loses gluon's fast call paths, and a
    parameter's shape does not change with the batch."""
    outs = getattr(s, "_outputs", None)
    if not outs or len(outs) != 1:
        return None
    node = outs[0][0]
    if node.op is not None:
        return None
    sh, dt = node.attrs.get("__shape__"), node.attrs.get("__dtype__")
    if sh is None or dt is None:
        return None
    try:
        import ast
        from ..base import DTYPE_MX_TO_NP
        shape = tuple(int(d) for d in ast.literal_eval(sh))
        dtype = _name(DTYPE_MX_TO_NP[int(dt)])
    except (ValueError, SyntaxError, KeyError, TypeError):
        return None
    if not all(d > 0 for d in shape):
        return None                     # deferred initialisation: not known yet
    return shape, dtype


def fused_dot(F, a, b):
    """``dot(a, b.T's source, transpose_b=True)`` when that is ``np.dot(a, b)``
    and cheaper (see the module doc), else None. ``b.T``'s source must be a
    2-D parameter variable and ``a`` of its dtype."""
    if F.kind != "sym":
        return None
    w = _transposed_source(b)
    if w is None:
        return None
    sig = _var_sig(w)
    if sig is None or len(sig[0]) != 2 or sig[1] not in _FLOATS:
        return None
    da = F.dtype(a)
    if da is None or _name(da) != sig[1]:
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
    None unless one side is such a product of a parameter ``w`` and the
    other a 1-D parameter of ``w``'s height and dtype."""
    if F.kind != "sym":
        return None
    for prod, bias in ((x1, x2), (x2, x1)):
        node = _head(prod)
        if node is None or node.op is None or node.op.name != "dot":
            continue
        p = node.params
        if not p.get("transpose_b") or p.get("transpose_a") or len(node.inputs) != 2:
            continue
        w = type(prod)._from([node.inputs[1]])
        sw, sb = _var_sig(w), _var_sig(bias)
        if sw is None or sb is None or len(sw[0]) != 2 or sb != ((sw[0][0],), sw[1]):
            continue
        x = type(prod)._from([node.inputs[0]])
        return F.op("FullyConnected", [x, w, bias],
                    {"num_hidden": sw[0][0], "no_bias": False, "flatten": False})
    return None
