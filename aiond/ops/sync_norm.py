"""MXNet 1.9.1's ``_contrib_SyncBatchNorm`` (``mx.nd.contrib.SyncBatchNorm``,
used by ``gluon.contrib.nn.SyncBatchNorm``), after
src/operator/contrib/sync_batch_norm-inl.h:

* the channel axis is 1; training (and not ``use_global_stats``) normalises
  with the batch mean and ``E[x^2] - E[x]^2``; otherwise with the moving
  statistics;
* the hidden outputs are the batch ``mean`` and ``var`` (the variance itself,
  unlike BatchNorm's inverse standard deviation);
* the backward pass updates ``moving_mean`` / ``moving_var`` with
  ``momentum``; ``fix_gamma=True`` writes ones into gamma and gives it a zero
  gradient.

MXNet sums the statistics of ``ndev`` devices through a blocking barrier
shared by key. aiond supports ``ndev=1`` (one device: the barrier is the
identity); ``ndev > 1`` is rejected at push time rather than left to hang an
engine worker waiting for the other devices' ops.
"""
from __future__ import annotations



from ..base import OpError, ShapeError
from ._fast import channel_sum
from ._grad import set_grads
from ._rules import fmt
from .norm import _acc_dtype, _check_param, _float_data
from .registry import Param, p_bool, p_float, p_int, p_str, register

_PARAMS = [
    Param("eps", p_float, 1e-3, "added to the variance"),
    Param("momentum", p_float, 0.9, "moving = moving * momentum + batch * (1 - momentum)"),
    Param("fix_gamma", p_bool, True, "use gamma = 1 (its gradient is 0)"),
    Param("use_global_stats", p_bool, False, "use the moving statistics in training too"),
    Param("output_mean_var", p_bool, False, "also return the mean and the variance"),
    Param("ndev", p_int, 1, "number of devices whose batch statistics are combined"),
    Param("key", p_str, doc="hash key shared by the devices of one layer"),
]


def _check(op, attrs):
    if attrs["ndev"] < 1:
        raise OpError("SyncBatchNorm: ndev=%d must be >= 1" % attrs["ndev"])
    if attrs["ndev"] > 1:
        raise OpError("SyncBatchNorm: ndev=%d is not supported; aiond synchronises batch "
                      "statistics on one device only (ndev=1). Use nn.BatchNorm per device "
                      "or one device with the whole batch" % attrs["ndev"])


def _rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) < 1:
        raise ShapeError("data must have at least 1 dimension")
    _float_data(dtypes[0])
    C = d[1] if len(d) > 1 else 1
    what = "data %s (channels on axis 1)" % fmt(d)
    for name, s, t in zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:], dtypes[1:]):
        _check_param(name, s, t, C, dtypes[0], what)
    return (d, (C,), (C,)), (dtypes[0], dtypes[1], dtypes[1])


def _split(shape):
    C = shape[1] if len(shape) > 1 else 1
    B = 1
    for s in shape[2:]:
        B *= s
    return shape[0], C, B


def _visible(attrs):
    return 3 if attrs["output_mean_var"] else 1


@register("_contrib_SyncBatchNorm", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
          params=_PARAMS, infer=_rule, attr_check=_check, num_outputs=3,
          output_names=("output", "mean", "var"), train_aware=True,
          aux=("moving_mean", "moving_var"), num_visible=_visible, inline=False, mutates=(1,), waits=True)
def sync_batch_norm(xp, data, gamma, beta, moving_mean, moving_var, *, out, eps=1e-3,
                    momentum=0.9, fix_gamma=True, use_global_stats=False, _train=False,
                    **_ignored):
    """SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3,
    momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
    ndev=1, key): batch normalisation over the channel axis 1 with the
    statistics of the whole batch across ``ndev`` devices (aiond: one)."""
    y, mean_out, var_out = out
    if fix_gamma:
        gamma[...] = 1
    A, C, B = _split(data.shape)
    acc = _acc_dtype(data.dtype)
    x3 = data.reshape(A, C, B).astype(acc, copy=False)
    y3 = y.reshape(A, C, B)
    w = xp.ones(C, dtype=acc) if fix_gamma else gamma.astype(acc, copy=False)
    b = beta.astype(acc, copy=False)
    if _train and not use_global_stats:
        m = A * B
        mean = channel_sum(xp, x3) / m
        var = xp.sum(x3 * x3, axis=(0, 2)) / m - mean * mean
        scale = w / xp.sqrt(var + eps)
        y3[...] = (x3 - mean.reshape(1, C, 1)) * scale.reshape(1, C, 1) + b.reshape(1, C, 1)
        mean_out[...] = mean
        var_out[...] = var
    else:
        mm = moving_mean.astype(acc, copy=False)
        scale = w / xp.sqrt(moving_var.astype(acc, copy=False) + eps)
        y3[...] = x3 * scale.reshape(1, C, 1) + (b - mm * scale).reshape(1, C, 1)
        mean_out[...] = 0
        var_out[...] = 0


def _bwd_rule(attrs, shapes, dtypes):
    return (shapes[1], shapes[2], shapes[2]), (dtypes[1], dtypes[2], dtypes[2])


@register("_backward__contrib_SyncBatchNorm",
          inputs=("ograd", "data", "gamma", "mean", "var", "moving_mean", "moving_var"),
          params=_PARAMS, infer=_bwd_rule, attr_check=_check, num_outputs=3, mutates=(5, 6),
          train_aware=True, inline=False, waits=True)
def _backward_sync_batch_norm(xp, ograd, data, gamma, mean, var, moving_mean, moving_var, *,
                              out, eps=1e-3, momentum=0.9, fix_gamma=True,
                              use_global_stats=False, _train=False, **_ignored):
    """Gradients of SyncBatchNorm w.r.t. (data, gamma, beta); in training it
    also updates moving_mean / moving_var, as MXNet's backward does."""
    dx, dgamma, dbeta = out
    A, C, B = _split(data.shape)
    acc = _acc_dtype(data.dtype)
    x3 = data.reshape(A, C, B).astype(acc, copy=False)
    g3 = ograd.reshape(A, C, B).astype(acc, copy=False)
    dx3 = dx.reshape(A, C, B)
    w = xp.ones(C, dtype=acc) if fix_gamma else gamma.astype(acc, copy=False)
    sum_g = channel_sum(xp, g3)
    if _train and not use_global_stats:
        mu = mean.astype(acc, copy=False)
        v = var.astype(acc, copy=False)
        moving_mean *= momentum
        moving_mean += (mu * (1 - momentum)).astype(moving_mean.dtype, copy=False)
        moving_var *= momentum
        moving_var += (v * (1 - momentum)).astype(moving_var.dtype, copy=False)
        xc = x3 - mu.reshape(1, C, 1)
        sum_prod = xp.sum(g3 * xc, axis=(0, 2))
        istd = 1.0 / xp.sqrt(v + eps)
        scale = 1.0 / (A * B)
        gvar = -sum_prod * w * istd ** 3
        gmean = -sum_g * w * istd
        dx3[...] = (g3 * (w * istd).reshape(1, C, 1) + gvar.reshape(1, C, 1) * scale * xc
                    + gmean.reshape(1, C, 1) * scale)
        dg = sum_prod * istd
    else:
        mm = moving_mean.astype(acc, copy=False)
        istd = 1.0 / xp.sqrt(moving_var.astype(acc, copy=False) + eps)
        dx3[...] = g3 * (w * istd).reshape(1, C, 1)
        dg = xp.sum(g3 * (x3 - mm.reshape(1, C, 1)), axis=(0, 2)) * istd
    if fix_gamma:
        dgamma.fill(0)
    else:
        dgamma[...] = dg
    dbeta[...] = sum_g


def _grad(F, attrs, ins, outs, og):
    kw = {k: v for k, v in attrs.items() if k != "_train"}
    dx, dgamma, dbeta = F._internal._backward__contrib_SyncBatchNorm(
        og[0], ins[0], ins[1], outs[1], outs[2], ins[3], ins[4], **kw)
    return [dx, dgamma, dbeta, None, None]


set_grads({"_contrib_SyncBatchNorm": _grad})

