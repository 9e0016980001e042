"""MXNet 1.9.1's 0-index element ops of ``mx.nd``: ``choose_element_0index``
and ``fill_element_0index``."""
from __future__ import annotations

from ._common import _as_index, _n_inputs, _no_grad
from ._grad import set_grads
from ._rules import fmt
from ..base import ShapeError
from .registry import register


# ------------------------------------------------- 0-index element ops
def _choose_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    lhs, rhs = tuple(shapes[0]), tuple(shapes[1])
    if len(lhs) != 2 or rhs != lhs[:1]:
        raise ShapeError("lhs must be 2-D (n, k) and rhs of shape (n,), got %s and %s"
                         % (fmt(lhs), fmt(rhs)))
    return (lhs[:1],), (dtypes[0],)


@register("choose_element_0index", inputs=("lhs", "rhs"), infer=_choose_rule)
def choose_element_0index(xp, lhs, rhs, out):
    """choose_element_0index(lhs, rhs): out[i] = lhs[i, rhs[i]]."""
    idx = xp.clip(_as_index(xp, rhs), 0, lhs.shape[1] - 1)
    xp.copyto(out, lhs[xp.arange(lhs.shape[0]), idx])


def _fill_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "mhs", "rhs"))
    lhs, mhs, rhs = (tuple(s) for s in shapes)
    if len(lhs) != 2 or mhs != lhs[:1] or rhs != lhs[:1]:
        raise ShapeError("lhs must be 2-D (n, k), mhs and rhs of shape (n,), got %s, %s, %s"
                         % (fmt(lhs), fmt(mhs), fmt(rhs)))
    return (lhs,), (dtypes[0],)


@register("fill_element_0index", inputs=("lhs", "mhs", "rhs"), infer=_fill_rule)
def fill_element_0index(xp, lhs, mhs, rhs, out):
    """fill_element_0index(lhs, mhs, rhs): lhs with out[i, rhs[i]] = mhs[i]."""
    xp.copyto(out, lhs)
    idx = xp.clip(_as_index(xp, rhs), 0, lhs.shape[1] - 1)
    out[xp.arange(lhs.shape[0]), idx] = mhs


set_grads({
    "choose_element_0index": _no_grad,
    "fill_element_0index": _no_grad,
})
