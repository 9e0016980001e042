"""MXNet's interleaved multi-head attention matmuls (``mx.nd.contrib``,
``src/operator/contrib/transformer.cc``).

Self-attention input ``queries_keys_values`` is (L, B, 3*H*D), laid out per
position as (B, H, 3, D): for batch b and head h the query, key and value
vectors of length D follow each other. Encoder-decoder attention takes
``queries`` (Lq, B, H*D) and ``keys_values`` (Lk, B, 2*H*D) laid out as
(B, H, 2, D). Attention matrices are (B*H, Lq, Lk) with batch index b*H + h;
scores are scaled by 1/sqrt(D)."""
from __future__ import annotations

import math

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, matmul_cost, p_int, register

_HEADS = [Param("heads", p_int, None, "Set number of heads")]


def _split(x, heads, parts):
    """(L, B, parts*H*D) -> list of `parts` arrays (B*H, L, D)."""
    L, B, E = x.shape
    D = E // (parts * heads)
    v = x.reshape(L, B * heads, parts, D)
    return [v[:, :, i, :].transpose(1, 0, 2) for i in range(parts)], D


def _merge(xp, pieces, L, B, heads):
    """list of (B*H, L, D) -> (L, B, parts*H*D) interleaved like the input."""
    D = pieces[0].shape[-1]
    st = xp.stack([p.transpose(1, 0, 2) for p in pieces], axis=2)     # (L, B*H, parts, D)
    return st.reshape(L, B, heads * len(pieces) * D)


def _check3(name, s):
    if len(s) != 3:
        raise ShapeError("%s must be 3-D (seq_length, batch, projection), got %s"
                         % (name, fmt(s)))


def _selfatt_qk_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    _check3("queries_keys_values", s)
    h = attrs["heads"]
    if s[2] % (3 * h):
        raise ShapeError("queries_keys_values.shape[2] (%d) must be a multiple of 3 * heads"
                         % s[2])
    return ((s[1] * h, s[0], s[0]),), (dtypes[0],)


@register("_contrib_interleaved_matmul_selfatt_qk", inputs=("queries_keys_values",),
          params=_HEADS, infer=_selfatt_qk_rule, inline=matmul_cost)
def _selfatt_qk(xp, qkv, out, heads):
    """interleaved_matmul_selfatt_qk(queries_keys_values, heads): q k^T / sqrt(D)."""
    (q, k, _), D = _split(qkv, heads, 3)
    out[...] = xp.matmul(q * (1.0 / math.sqrt(D)), k.transpose(0, 2, 1))


@register("_backward_interleaved_matmul_selfatt_qk", inputs=("ograd", "queries_keys_values"),
          params=_HEADS, infer=lambda a, s, d: ((tuple(s[1]),), (d[1],)), inline=matmul_cost)
def _selfatt_qk_bwd(xp, g, qkv, out, heads):
    """The gradient of interleaved_matmul_selfatt_qk (zero for the values)."""
    (q, k, v), D = _split(qkv, heads, 3)
    sc = 1.0 / math.sqrt(D)
    dq = xp.matmul(g, k) * sc
    dk = xp.matmul(g.transpose(0, 2, 1), q) * sc
    L, B = qkv.shape[:2]
    out[...] = _merge(xp, [dq, dk, xp.zeros_like(v)], L, B, heads)


def _selfatt_valatt_rule(attrs, shapes, dtypes):
    s, a = tuple(shapes[0]), tuple(shapes[1])
    _check3("queries_keys_values", s)
    _check3("attention", a)
    h = attrs["heads"]
    if a[1] != s[0] or a[2] != s[0] or a[0] != s[1] * h or s[2] % (3 * h):
        raise ShapeError("attention %s does not fit queries_keys_values %s with heads=%d"
                         % (fmt(a), fmt(s), h))
    return ((s[0], s[1], s[2] // 3),), (dtypes[0],)


@register("_contrib_interleaved_matmul_selfatt_valatt",
          inputs=("queries_keys_values", "attention"), params=_HEADS,
          infer=_selfatt_valatt_rule, inline=matmul_cost)
def _selfatt_valatt(xp, qkv, att, out, heads):
    """interleaved_matmul_selfatt_valatt(queries_keys_values, attention, heads):
    attention @ values, as (L, B, H*D)."""
    (_, _, v), D = _split(qkv, heads, 3)
    r = xp.matmul(att, v)                                   # (B*H, L, D)
    L, B = qkv.shape[:2]
    out[...] = r.transpose(1, 0, 2).reshape(L, B, heads * D)


@register("_backward_interleaved_matmul_selfatt_valatt",
          inputs=("ograd", "queries_keys_values", "attention"), params=_HEADS, num_outputs=2,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])),
          inline=matmul_cost)
def _selfatt_valatt_bwd(xp, g, qkv, att, out, heads):
    """The gradients of interleaved_matmul_selfatt_valatt."""
    (q, k, v), D = _split(qkv, heads, 3)
    L, B = qkv.shape[:2]
    gr = g.reshape(L, B * heads, D).transpose(1, 0, 2)      # (B*H, L, D)
    dv = xp.matmul(att.transpose(0, 2, 1), gr)
    out[0][...] = _merge(xp, [xp.zeros_like(q), xp.zeros_like(k), dv], L, B, heads)
    out[1][...] = xp.matmul(gr, v.transpose(0, 2, 1))


def _encdec_qk_rule(attrs, shapes, dtypes):
    q, kv = tuple(shapes[0]), tuple(shapes[1])
    _check3("queries", q)
    _check3("keys_values", kv)
    h = attrs["heads"]
    if q[2] * 2 != kv[2] or q[1] != kv[1] or q[2] % h:
        raise ShapeError("keys_values %s does not fit queries %s with heads=%d"
                         % (fmt(kv), fmt(q), h))
    return ((q[1] * h, q[0], kv[0]),), (dtypes[0],)


@register("_contrib_interleaved_matmul_encdec_qk", inputs=("queries", "keys_values"),
          params=_HEADS, infer=_encdec_qk_rule, inline=matmul_cost)
def _encdec_qk(xp, queries, kv, out, heads):
    """interleaved_matmul_encdec_qk(queries, keys_values, heads): q k^T / sqrt(D)."""
    (q,), D = _split(queries, heads, 1)
    (k, _), _ = _split(kv, heads, 2)
    out[...] = xp.matmul(q * (1.0 / math.sqrt(D)), k.transpose(0, 2, 1))


@register("_backward_interleaved_matmul_encdec_qk", inputs=("ograd", "queries", "keys_values"),
          params=_HEADS, num_outputs=2,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])),
          inline=matmul_cost)
def _encdec_qk_bwd(xp, g, queries, kv, out, heads):
    """The gradients of interleaved_matmul_encdec_qk."""
    (q,), D = _split(queries, heads, 1)
    (k, v), _ = _split(kv, heads, 2)
    sc = 1.0 / math.sqrt(D)
    dq = xp.matmul(g, k) * sc
    dk = xp.matmul(g.transpose(0, 2, 1), q) * sc
    out[0][...] = _merge(xp, [dq], queries.shape[0], queries.shape[1], heads)
    out[1][...] = _merge(xp, [dk, xp.zeros_like(v)], kv.shape[0], kv.shape[1], heads)


def _encdec_valatt_rule(attrs, shapes, dtypes):
    kv, a = tuple(shapes[0]), tuple(shapes[1])
    _check3("keys_values", kv)
    _check3("attention", a)
    h = attrs["heads"]
    if kv[0] != a[2] or kv[1] * h != a[0] or kv[2] % (2 * h):
        raise ShapeError("attention %s does not fit keys_values %s with heads=%d"
                         % (fmt(a), fmt(kv), h))
    return ((a[1], kv[1], kv[2] // 2),), (dtypes[0],)


@register("_contrib_interleaved_matmul_encdec_valatt", inputs=("keys_values", "attention"),
          params=_HEADS, infer=_encdec_valatt_rule, inline=matmul_cost)
def _encdec_valatt(xp, kv, att, out, heads):
    """interleaved_matmul_encdec_valatt(keys_values, attention, heads):
    attention @ values, as (Lq, B, H*D)."""
    (_, v), D = _split(kv, heads, 2)
    r = xp.matmul(att, v)
    Lq, B = att.shape[1], kv.shape[1]
    out[...] = r.transpose(1, 0, 2).reshape(Lq, B, heads * D)


@register("_backward_interleaved_matmul_encdec_valatt",
          inputs=("ograd", "keys_values", "attention"), params=_HEADS, num_outputs=2,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])),
          inline=matmul_cost)
def _encdec_valatt_bwd(xp, g, kv, att, out, heads):
    """The gradients of interleaved_matmul_encdec_valatt."""
    (k, v), D = _split(kv, heads, 2)
    Lq, B = att.shape[1], kv.shape[1]
    gr = g.reshape(Lq, B * heads, D).transpose(1, 0, 2)
    dv = xp.matmul(att.transpose(0, 2, 1), gr)
    out[0][...] = _merge(xp, [xp.zeros_like(k), dv], kv.shape[0], B, heads)
    out[1][...] = xp.matmul(gr, v.transpose(0, 2, 1))


def _grad(name):
    def grad(F, attrs, ins, outs, og):
        r = getattr(F._internal, name)(og[0], *ins, heads=attrs["heads"])
        return list(r) if isinstance(r, (list, tuple)) else [r]
    return grad


set_grads({
    "_contrib_interleaved_matmul_selfatt_qk": _grad("_backward_interleaved_matmul_selfatt_qk"),
    "_contrib_interleaved_matmul_selfatt_valatt":
        _grad("_backward_interleaved_matmul_selfatt_valatt"),
    "_contrib_interleaved_matmul_encdec_qk": _grad("_backward_interleaved_matmul_encdec_qk"),
    "_contrib_interleaved_matmul_encdec_valatt":
        _grad("_backward_interleaved_matmul_encdec_valatt"),
})
