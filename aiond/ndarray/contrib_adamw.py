"""``mx.nd.contrib``'s AdamW functions (MXNet 1.9.1's ndarray/contrib.py):
they turn a Python ``rescale_grad`` into the 1-element array the ops take
and flatten the per-weight lists of the multi-weight forms."""
from __future__ import annotations

__all__ = ["adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update"]


def _rescale_array(rescale_grad, ctx):
    from .ndarray import NDArray, full
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(ctx)
    return full(shape=(1,), val=rescale_grad, ctx=ctx)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """One AdamW step (``_adamw_update``): mean and var are updated in place, the new
    weight goes to ``out``; skipped when ``rescale_grad`` (a number or a 1-element
    array) is 0, NaN or inf."""
    from . import _internal
    rescale_grad = _rescale_array(rescale_grad, weight.context)
    return _internal._adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                   rescale_grad=rescale_grad, lr=lr, eta=eta, beta1=beta1,
                                   beta2=beta2, epsilon=epsilon, wd=wd,
                                   clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """``adamw_update`` on the float32 master copy ``weight32`` of a (float16)
    weight (``_mp_adamw_update``)."""
    from . import _internal
    rescale_grad = _rescale_array(rescale_grad, weight.context)
    return _internal._mp_adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                      weight32=weight32, rescale_grad=rescale_grad, lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon,
                                      wd=wd, clip_gradient=clip_gradient, out=out, name=name,
                                      **kwargs)


def _flat(groups):
    return [a for g in groups for a in g]


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas,
                       out=None, name=None, size=0, **kwargs):
    """AdamW steps of several weights in one op (``_multi_adamw_update``): lists of
    weights, grads, mean and var, one lr, wd and eta per weight."""
    from . import _internal
    if not size:
        size = len(weights)
    rescale_grad = _rescale_array(rescale_grad, weights[0].context)
    data = _flat(zip(weights, grads, mean, var)) + [rescale_grad]
    return _internal._multi_adamw_update(*data, out=out, num_weights=size, lrs=lrs, wds=wds,
                                         etas=etas, name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """``multi_adamw_update`` with float32 master copies ``weights32``
    (``_multi_mp_adamw_update``)."""
    from . import _internal
    if not size:
        size = len(weights)
    rescale_grad = _rescale_array(rescale_grad, weights[0].context)
    data = _flat(zip(weights, grads, mean, var, weights32)) + [rescale_grad]
    return _internal._multi_mp_adamw_update(*data, out=out, num_weights=size, lrs=lrs,
                                            wds=wds, etas=etas, name=name, **kwargs)
