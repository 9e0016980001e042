"""NumPy-interface products (MXNet's ``_np_dot``, ``_npi_matmul``,
``_npi_tensordot``, ``_npi_tensordot_int_axes``, ``_npi_einsum``).

Shapes and dtype promotion follow NumPy (MXNet's rule: a float with an
integer gives the float); kernels are one ``xp`` body; gradients are host
formulas in ``_backward_<op>`` kernels (see ``_np_bwd``).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._np_bwd import backward
from ._rules import fmt, norm_axis
from .np_ops import promote
from .registry import Op, Param, p_axis, p_int, p_str, register
from .registry import get as _get

def _sw(xp, a):
    return xp.swapaxes(a, -1, -2)


def _promote_all(dtypes):
    d = dtypes[0]
    for e in dtypes[1:]:
        d = promote(d, e)
    return d


# ================================================================ dot family
def _dot_shape(a, b):
    if not a or not b:
        return tuple(a or b)
    if len(b) == 1:
        if a[-1] != b[0]:
            raise ShapeError("shapes %s and %s not aligned: %d (dim %d) != %d (dim 0)"
                             % (fmt(a), fmt(b), a[-1], len(a) - 1, b[0]))
        return tuple(a[:-1])
    k = b[-2]
    if a[-1] != k:
        raise ShapeError("shapes %s and %s not aligned: %d (dim %d) != %d (dim %d)"
                         % (fmt(a), fmt(b), a[-1], len(a) - 1, k, len(b) - 2))
    return tuple(a[:-1]) + tuple(b[:-2]) + (b[-1],)


@register("_np_dot", inputs=("a", "b"),
          infer=lambda at, s, d: ((_dot_shape(tuple(s[0]), tuple(s[1])),), (promote(*d),)),
          inline=False)
def _np_dot(xp, a, b, out):
    """_np_dot(a, b): NumPy's dot."""
    dt = out.dtype
    out[...] = xp.dot(a.astype(dt, copy=False), b.astype(dt, copy=False))


def _dot_bwd(xp, og, ins, outs):
    a, b = ins
    g = og[0]
    if a.ndim == 0 or b.ndim == 0:
        return [xp.sum(g * b), xp.sum(g * a)] if a.ndim == 0 and b.ndim else (
            [g * b, xp.sum(g * a)] if b.ndim == 0 and a.ndim else [g * b, g * a])
    if a.ndim == 2 and b.ndim == 2:     # a layer's x @ w: BLAS reads the transposes
        return [xp.dot(g, b.T), xp.dot(a.T, g)]
    if b.ndim == 1:
        ga = xp.multiply.outer(g, b)
        gb = xp.tensordot(a, g, axes=(list(range(a.ndim - 1)), list(range(g.ndim))))
        return [ga, gb]
    # g: a.shape[:-1] + b.shape[:-2] + b.shape[-1:]
    na = a.ndim - 1
    bt = xp.moveaxis(b, -2, -1)            # b with the contracted axis last
    ga = xp.tensordot(g, bt, axes=(list(range(na, g.ndim)), list(range(b.ndim - 1))))
    gb = xp.tensordot(a, g, axes=(list(range(na)), list(range(na))))
    gb = xp.moveaxis(gb, 0, -2)
    return [ga, gb]


backward("_np_dot", _dot_bwd)


def _matmul_shape(a, b):
    if not a or not b:
        raise ShapeError("matmul: Input operand does not have enough dimensions (shapes %s, %s)"
                         % (fmt(a), fmt(b)))
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError("matmul: shapes %s and %s not aligned: %d != %d"
                         % (fmt(a), fmt(b), a2[-1], b2[-2]))
    from ._rules import broadcast_shapes
    batch = broadcast_shapes(a2[:-2], b2[:-2])
    shp = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        shp = shp[:-2] + shp[-1:]
    if len(b) == 1:
        shp = shp[:-1]
    return shp


@register("_npi_matmul", inputs=("a", "b"),
          infer=lambda at, s, d: ((_matmul_shape(tuple(s[0]), tuple(s[1])),), (promote(*d),)),
          inline=False)
def _npi_matmul(xp, a, b, out):
    """_npi_matmul(a, b): NumPy's matmul (broadcast batches)."""
    dt = out.dtype
    out[...] = xp.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False))


def _unbroadcast(xp, g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    axes = tuple(i for i, (s, t) in enumerate(zip(shape, g.shape)) if s == 1 and t != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _matmul_bwd(xp, og, ins, outs):
    a, b = ins
    g = og[0]
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g = g.reshape(_matmul_shape(tuple(a2.shape), tuple(b2.shape)))
    ga = _unbroadcast(xp, xp.matmul(g, _sw(xp, b2)), a2.shape)
    gb = _unbroadcast(xp, xp.matmul(_sw(xp, a2), g), b2.shape)
    return [ga.reshape(a.shape), gb.reshape(b.shape)]


backward("_npi_matmul", _matmul_bwd)


def _td_axes(attrs, na, nb):
    if "axes" in attrs and attrs.get("axes") is not None and not isinstance(attrs["axes"],
                                                                          (tuple, list)):
        n = attrs["axes"]
        if n < 0 or n > na or n > nb:
            raise ShapeError("tensordot: axes=%d exceeds the operands' dimensions (%d, %d)"
                             % (n, na, nb))
        return list(range(na - n, na)), list(range(n))
    ax_a, ax_b = attrs["a_axes_summed"], attrs["b_axes_summed"]
    ax_a = [ax_a] if isinstance(ax_a, int) else list(ax_a or ())
    ax_b = [ax_b] if isinstance(ax_b, int) else list(ax_b or ())
    if len(ax_a) != len(ax_b):
        raise ShapeError("tensordot: %d axes of a but %d axes of b to sum over"
                         % (len(ax_a), len(ax_b)))
    return [norm_axis(x, na) for x in ax_a], [norm_axis(x, nb) for x in ax_b]


def _td_rule(attrs, shapes, dtypes):
    a, b = tuple(shapes[0]), tuple(shapes[1])
    ax_a, ax_b = _td_axes(attrs, len(a), len(b))
    for i, j in zip(ax_a, ax_b):
        if a[i] != b[j]:
            raise ShapeError("tensordot: shape-mismatch for sum: a %s axis %d != b %s axis %d"
                             % (fmt(a), i, fmt(b), j))
    out = tuple(d for i, d in enumerate(a) if i not in ax_a) + \
        tuple(d for i, d in enumerate(b) if i not in ax_b)
    return (out,), (promote(*dtypes),)


def _td_kernel(xp, a, b, out, **attrs):
    ax_a, ax_b = _td_axes(attrs, a.ndim, b.ndim)
    dt = out.dtype
    out[...] = xp.tensordot(a.astype(dt, copy=False), b.astype(dt, copy=False),
                            axes=(ax_a, ax_b))


def _td_bwd(xp, og, ins, outs, **attrs):
    a, b = ins
    g = og[0]
    ax_a, ax_b = _td_axes(attrs, a.ndim, b.ndim)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    nfa = len(free_a)
    # g's axes: free_a then free_b
    # what is left of b (a) after the contraction keeps b's (a's) axis order
    ga = xp.tensordot(g, b, axes=(list(range(nfa, g.ndim)), free_b))
    perm_a = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
    ga = xp.transpose(ga, np.argsort(perm_a))
    gb = xp.tensordot(a, g, axes=(free_a, list(range(nfa))))
    perm_b = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
    gb = xp.transpose(gb, np.argsort(perm_b))
    return [ga, gb]


register("_npi_tensordot", inputs=("a", "b"), infer=_td_rule, inline=False,
         params=[Param("a_axes_summed", p_axis, (), "axes of a to sum over"),
                 Param("b_axes_summed", p_axis, (), "axes of b to sum over")])(_td_kernel)
register("_npi_tensordot_int_axes", inputs=("a", "b"), infer=_td_rule, inline=False,
         params=[Param("axes", p_int, 2, "sum over the last axes of a and first of b")])(
             _td_kernel)
backward("_npi_tensordot", _td_bwd)
backward("_npi_tensordot_int_axes", _td_bwd)


# ================================================================ einsum
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(subscripts, shapes):
    """Explicit subscripts (no ellipsis) for operands of ``shapes``, and the output's."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->")
    else:
        lhs, rhs = s, None
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise OpError("einsum: %d operand subscripts for %d operands"
                      % (len(terms), len(shapes)))
    used = set(c for c in s if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_n = 0
    for t, shp in zip(terms, shapes):
        if "..." in t:
            ell_n = max(ell_n, len(shp) - (len(t) - 3))
    ell = "".join(free[:ell_n])
    out_terms = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            k = len(shp) - (len(t) - 3)
            if k < 0:
                raise OpError("einsum: subscripts %r have more dimensions than an operand of "
                              "shape %s" % (t, fmt(shp)))
            t = t.replace("...", ell[ell_n - k:])
        if len(t) != len(shp):
            raise OpError("einsum: subscripts %r do not match an operand of shape %s"
                          % (t, fmt(shp)))
        for c in t:
            if not c.isalpha():
                raise OpError("einsum: invalid subscript character %r" % c)
        out_terms.append(t)
    if rhs is None:
        counts = {}
        for t in out_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        rhs = rhs.replace("...", ell)
    return out_terms, rhs


def _einsum_sizes(terms, shapes):
    sizes = {}
    for t, shp in zip(terms, shapes):
        for c, d in zip(t, shp):
            old = sizes.get(c)
            if old is None or old == 1:
                sizes[c] = d
            elif d != 1 and d != old:
                raise ShapeError("einsum: operands could not be broadcast together: "
                                 "subscript %r has sizes %d and %d" % (c, old, d))
    return sizes


def _einsum_rule(attrs, shapes, dtypes):
    shapes = [tuple(s) for s in shapes]
    terms, rhs = _einsum_parse(attrs["subscripts"], shapes)
    sizes = _einsum_sizes(terms, shapes)
    for c in rhs:
        if c not in sizes:
            raise OpError("einsum: output subscript %r appears in no operand" % c)
    return (tuple(sizes[c] for c in rhs),), (_promote_all(list(dtypes)),)


@register("_npi_einsum", inputs=("*data",), variadic=True, infer=_einsum_rule, inline=False,
          params=[Param("subscripts", p_str, doc="NumPy einsum subscripts"),
                  Param("optimize", p_int, 0, "whether to optimize the contraction order")])
def _npi_einsum(xp, *data, out, subscripts, optimize=0):
    """_npi_einsum(*operands, subscripts): NumPy's einsum."""
    terms, rhs = _einsum_parse(subscripts, [d.shape for d in data])
    dt = out.dtype
    ops = [d.astype(dt, copy=False) for d in data]
    out[...] = xp.einsum(",".join(terms) + "->" + rhs, *ops, optimize=bool(optimize))


def _einsum_bwd(xp, og, ins, outs, subscripts, optimize=0):
    terms, rhs = _einsum_parse(subscripts, [d.shape for d in ins])
    sizes = _einsum_sizes(terms, [d.shape for d in ins])
    g = og[0]
    grads = []
    for i, (t, x) in enumerate(zip(terms, ins)):
        others = [(terms[j], ins[j]) for j in range(len(ins)) if j != i]
        avail = set(rhs) | set("".join(o[0] for o in others))
        uniq = "".join(dict.fromkeys(t))
        keep = "".join(c for c in uniq if c in avail)
        spec = ",".join([rhs] + [o[0] for o in others]) + "->" + keep
        r = xp.einsum(spec, g, *[o[1] for o in others], optimize=bool(optimize))
        # letters only this operand has: the gradient is constant along them
        full = xp.broadcast_to(xp.reshape(r, [sizes[c] if c in keep else 1 for c in uniq]),
                               [sizes[c] for c in uniq])
        # dims this operand broadcast (size 1 where the letter is larger)
        red = tuple(k for k, c in enumerate(uniq) if
                    any(tc == c and d == 1 for tc, d in zip(t, x.shape)) and sizes[c] != 1)
        if red:
            full = full.sum(axis=red, keepdims=True)
        if len(uniq) == len(t):
            gx = xp.transpose(full, [uniq.index(c) for c in t]) if uniq != t else full
        else:
            # repeated letters (a diagonal): the gradient sits on that diagonal
            gx = np.zeros(x.shape, dtype=full.dtype)
            view = np.einsum(t + "->" + uniq, gx)
            view[...] = xp.asnumpy(full) if xp is not np else full
            gx = xp.asarray(gx)
        grads.append(gx)
    return grads


backward("_npi_einsum", _einsum_bwd)


class _DotOp(Op):
    """``_np_dot`` whose ``b`` (a deferred-init weight, say) takes its unknown
    leading dimension from ``a``'s last one, for symbolic shape inference."""
    __slots__ = ()

    def fill_inputs(self, params, in_shapes):
        a, b = (list(in_shapes) + [None, None])[:2]
        if not a or any(d <= 0 for d in a) or not b:
            return None
        k = len(b) - 2 if len(b) >= 2 else 0
        if b[k] > 0 or any(d <= 0 for i, d in enumerate(b) if i != k):
            return None
        b = tuple(b)
        return [tuple(a), b[:k] + (a[-1],) + b[k + 1:]]


_get("_np_dot").__class__ = _DotOp
