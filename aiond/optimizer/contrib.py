"""``mx.optimizer.contrib``: MXNet 1.9.1's contrib optimizers (GroupAdaGrad)."""
from __future__ import annotations

from ..ndarray import NDArray, zeros
from ..ops import optimizer_adamw as _ops  # noqa: F401  (registers group_adagrad_update)
from .optimizer import Optimizer, _update

register = Optimizer.register

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-d weight::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        div = grad / sqrt(history + float_stable_eps)
        weight -= div * lr

    Rows of a row_sparse gradient are updated lazily (the others, and their
    history, are left alone). Weight decay is not supported.

    Parameters
    ----------
    eps : float, default 1e-5
        Added to the history before the square root. Avoids division by 0.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super(GroupAdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise ValueError("GroupAdaGrad updates 2-d weights (one learning rate per row); "
                             "weight %r has shape %s" % (index, weight.shape))
        return zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        if wd != 0:
            raise ValueError("Weight decay is not supported for GroupAdaGrad (got wd=%s for "
                             "weight %r); create it with wd=0" % (wd, index))
        clip = -1.0 if self.clip_gradient is None else self.clip_gradient
        _update('_contrib_group_adagrad_update', [weight, grad, state], weight, lr=lr,
                epsilon=self.float_stable_eps, rescale_grad=self.rescale_grad,
                clip_gradient=clip)
