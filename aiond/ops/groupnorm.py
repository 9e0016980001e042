"""GroupNorm (MXNet 1.9.1): normalise each (sample, group of channels) over
the group's channels and spatial axes; ``gamma``/``beta`` hold one value per
group. Hidden outputs: the mean and std = sqrt(var + eps), shaped
(batch, num_groups). float16 data is reduced in float32."""
from __future__ import annotations

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .norm import _acc_dtype, _check_param, _float_data
from .registry import Param, p_bool, p_float, p_int, register

_GN_PARAMS = [Param("num_groups", p_int, 1, "Total number of groups."),
              Param("eps", p_float, 1e-5, "An epsilon parameter to prevent division by 0."),
              Param("output_mean_var", p_bool, False, "Output the mean and std calculated "
                    "along the given axis.")]


def _gn_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    g = attrs["num_groups"]
    if len(d) < 2:
        raise ShapeError("data must have at least 2 dimensions (N, C, ...), got %s" % fmt(d))
    if g < 1 or d[1] % g:
        raise ShapeError("the %d channels of data %s do not split into num_groups=%d groups"
                         % (d[1], fmt(d), g))
    _float_data(dtypes[0])
    what = "data %s with num_groups=%d" % (fmt(d), g)
    for name, s, t in zip(("gamma", "beta"), shapes[1:], dtypes[1:]):
        _check_param(name, s, t, g, dtypes[0], what)
    return (d, (d[0], g), (d[0], g)), (dtypes[0],) * 3


def _stats(xp, data, g, eps):
    acc = _acc_dtype(data.dtype)
    x = data.reshape(data.shape[0], g, -1)
    x = x if x.dtype == acc else x.astype(acc)
    mean = xp.mean(x, axis=2, keepdims=True)
    xc = x - mean
    std = xp.sqrt(xp.mean(xc * xc, axis=2, keepdims=True) + eps)
    return acc, xc, mean, std


@register("GroupNorm", inputs=("data", "gamma", "beta"), params=_GN_PARAMS, infer=_gn_rule,
          num_outputs=3, output_names=("output", "mean", "std"),
          num_visible=lambda attrs: 3 if attrs["output_mean_var"] else 1, inline=False)
def GroupNorm(xp, data, gamma, beta, *, out, num_groups=1, eps=1e-5, **_ignored):
    """GroupNorm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False)."""
    y, mean_out, std_out = out
    g = num_groups
    acc, xc, mean, std = _stats(xp, data, g, eps)
    gm = gamma.astype(acc, copy=False).reshape(1, g, 1)
    bt = beta.astype(acc, copy=False).reshape(1, g, 1)
    y.reshape(data.shape[0], g, -1)[...] = xc / std * gm + bt
    mean_out[...] = mean.reshape(mean_out.shape)
    std_out[...] = std.reshape(std_out.shape)


@register("_backward_GroupNorm", inputs=("ograd", "data", "gamma"), params=_GN_PARAMS,
          infer=lambda a, s, d: ((s[1], s[2], s[2]), (d[1], d[2], d[2])), num_outputs=3,
          inline=False)
def _backward_GroupNorm(xp, ograd, data, gamma, *, out, num_groups=1, eps=1e-5, **_ignored):
    """Gradients of GroupNorm w.r.t. (data, gamma, beta)."""
    dx, dgamma, dbeta = out
    g = num_groups
    acc, xc, _, std = _stats(xp, data, g, eps)
    xhat = xc / std
    ga = ograd.reshape(data.shape[0], g, -1)
    ga = ga if ga.dtype == acc else ga.astype(acc)
    dbeta[...] = xp.sum(ga, axis=(0, 2))
    dgamma[...] = xp.sum(ga * xhat, axis=(0, 2))
    dxh = ga * gamma.astype(acc, copy=False).reshape(1, g, 1) / std
    dx.reshape(data.shape[0], g, -1)[...] = (dxh - xp.mean(dxh, axis=2, keepdims=True)
                                             - xhat * xp.mean(dxh * xhat, axis=2, keepdims=True))


def _gn_grad(F, attrs, ins, outs, og):
    dx, dgamma, dbeta = F._internal._backward_GroupNorm(og[0], ins[0], ins[1], **attrs)
    return [dx, dgamma, dbeta]


set_grads({"GroupNorm": _gn_grad})
