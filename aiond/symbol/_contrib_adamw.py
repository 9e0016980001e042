"""``mx.sym.contrib.adamw_update`` / ``mp_adamw_update`` (MXNet 1.9.1's
symbol/contrib.py): the ops with ``rescale_grad`` given as a symbol."""
from __future__ import annotations

__all__ = ["adamw_update", "mp_adamw_update"]


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """Symbol of one AdamW step (``_adamw_update``); ``rescale_grad`` is a symbol
    of one value (the step is skipped when it is 0, NaN or inf)."""
    from . import _internal
    return _internal._adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                   rescale_grad=rescale_grad, lr=lr, eta=eta, beta1=beta1,
                                   beta2=beta2, epsilon=epsilon, wd=wd,
                                   clip_gradient=clip_gradient, out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """Symbol of ``_mp_adamw_update`` (AdamW on a float32 master weight)."""
    from . import _internal
    return _internal._mp_adamw_update(weight=weight, grad=grad, mean=mean, var=var,
                                      weight32=weight32, rescale_grad=rescale_grad, lr=lr,
                                      eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon,
                                      wd=wd, clip_gradient=clip_gradient, out=out, name=name,
                                      **kwargs)
