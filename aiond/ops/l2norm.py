"""L2Normalization (MXNet 1.9.1): data / sqrt(sum(data^2) + eps) by
instance, channel or spatial position."""
from __future__ import annotations

from ..base import ShapeError
from ._grad import set_grads
from ._nn_util import _need_float, _num_inputs, _prod
from ._rules import fmt
from .registry import Param, p_float, p_str, register


def _l2_norm_shape(d, mode):
    if mode == "instance":
        return (d[0],)
    if mode == "channel":
        return (d[0], _prod(d[2:]))
    return (d[0], d[1])


def _l2_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    d = tuple(shapes[0])
    mode = attrs["mode"]
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if mode != "instance" and len(d) < 3:
        raise ShapeError("mode=%r needs data with at least 3 dimensions, got shape %s"
                         % (mode, fmt(d)))
    return (d, _l2_norm_shape(d, mode)), (dtypes[0], dtypes[0])


@register("L2Normalization", params=[
    Param("eps", p_float, 1e-10, "A small constant for numerical stability."),
    Param("mode", p_str, "instance", "Specify the dimension along which to compute L2 norm.",
          choices=("channel", "instance", "spatial"))],
    infer=_l2_rule, num_outputs=2, output_names=("output", "norm"), num_visible=lambda a: 1)
def l2_normalization(xp, data, out, eps=1e-10, mode="instance"):
    """L2Normalization(data, eps=1e-10, mode='instance'): data / sqrt(sum(data^2) + eps)
    over all but axis 0 (instance), over axis 1 (channel) or over axes 2.. (spatial)."""
    y, nrm = out
    n = data.shape[0]
    if mode == "instance":
        x = data.reshape(n, -1)
        s = xp.sqrt(xp.sum(x * x, axis=1) + x.dtype.type(eps))
        xp.copyto(nrm, s)
        xp.divide(x, s[:, None], out=y.reshape(n, -1))
        return
    x = data.reshape(n, data.shape[1], -1)
    ax = 1 if mode == "channel" else 2
    s = xp.sqrt(xp.sum(x * x, axis=ax, keepdims=True) + x.dtype.type(eps))
    xp.copyto(nrm, s.reshape(nrm.shape))
    xp.divide(x, s, out=y.reshape(x.shape))


def _l2_grad(F, attrs, ins, outs, og):
    y, nrm, g = outs[0], outs[1], og[0]
    n = y.shape[0]
    mode = attrs["mode"]
    if mode == "instance":
        y2, g2 = y.reshape((n, -1)), g.reshape((n, -1))
        t = F.sum(g2 * y2, axis=1, keepdims=True)
        return [((g2 - y2 * t) / nrm.reshape((n, 1))).reshape(y.shape)]
    v = (n, y.shape[1], -1)
    y3, g3 = y.reshape(v), g.reshape(v)
    ax = 1 if mode == "channel" else 2
    t = F.sum(g3 * y3, axis=ax, keepdims=True)
    nb = nrm.reshape((n, 1, -1)) if mode == "channel" else nrm.reshape((n, -1, 1))
    return [((g3 - y3 * t) / nb).reshape(y.shape)]


set_grads({
    "L2Normalization": _l2_grad,
})
