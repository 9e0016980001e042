"""contrib.SyncBatchNorm (MXNet 1.9.1): BatchNorm over the channel axis 1
whose statistics MXNet synchronises across the ``ndev`` devices of one
``key``. aiond runs every context in one process, so with one device per
key it is BatchNorm; its hidden outputs are the batch mean and the
(biased) variance, not BatchNorm's 1/sqrt(var + eps)."""
from __future__ import annotations

from ._grad import set_grads
from .norm import _BN_PARAMS, _bn_rule, _bn_visible, BatchNorm
from .registry import Param, p_int, p_str, register

_SBN_PARAMS = [p for p in _BN_PARAMS if p.name in ("eps", "momentum", "fix_gamma",
                                                    "use_global_stats", "output_mean_var")] + [
    Param("ndev", p_int, 1, "The count of GPU devices"),
    Param("key", p_str, "", "Hash key for synchronization, please set the same hash key for "
          "same layer, Block.prefix is typically used as in "
          ":class:`gluon.nn.contrib.SyncBatchNorm`.")]


def _sbn_rule(attrs, shapes, dtypes):
    return _bn_rule(dict(attrs, axis=1), shapes, dtypes)


@register("_contrib_SyncBatchNorm", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
          params=_SBN_PARAMS, infer=_sbn_rule, num_outputs=3,
          output_names=("output", "mean", "var"), train_aware=True,
          aux=("moving_mean", "moving_var"), num_visible=_bn_visible, inline=False,
          mutates=(1,))
def SyncBatchNorm(xp, data, gamma, beta, moving_mean, moving_var, *, out, eps=1e-3,
                  momentum=0.9, fix_gamma=True, use_global_stats=False, _train=False,
                  **_ignored):
    """SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
    fix_gamma=True, use_global_stats=False, output_mean_var=False, ndev=1, key=''):
    batch normalisation over channel axis 1; hidden outputs mean and var."""
    BatchNorm(xp, data, gamma, beta, moving_mean, moving_var, out=out, eps=eps,
              momentum=momentum, fix_gamma=fix_gamma, use_global_stats=use_global_stats,
              axis=1, _train=_train)
    istd = out[2]
    istd[...] = 1.0 / (istd * istd) - eps       # MXNet's INVSTD_TO_VARIANCE


def _sbn_grad(F, attrs, ins, outs, og):
    kw = {k: attrs[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats",
                                "output_mean_var")}
    invstd = F.rsqrt(outs[2] + attrs["eps"])
    dx, dgamma, dbeta = F._internal._backward_BatchNorm(
        og[0], ins[0], ins[1], outs[1], invstd, ins[3], ins[4], axis=1, **kw)
    return [dx, dgamma, dbeta, None, None]


set_grads({"_contrib_SyncBatchNorm": _sbn_grad})
