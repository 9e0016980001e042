"""The optimizers SVRGModule installs: ``_SVRGOptimizer`` routes each
parameter to the optimizer the user chose, and the ``<name>_full`` keys (the
full gradients SVRGModule accumulates in a kvstore) to
``_AssignmentOptimizer``, which stores what is pushed. Both are meant for
SVRGModule only."""
from __future__ import annotations

import sys

from ...optimizer import Optimizer, create

# MXNet's module has `mx` (it imports mxnet as mx): the top package, already
# loaded before any of its submodules, named here without importing upward
mx = sys.modules[__name__.split(".")[0]]

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# the parameters of Optimizer itself: the rest of the keyword arguments are
# for the wrapped optimizer only
_BASE_PARAMS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate',
                'lr_scheduler', 'sym', 'begin_num_update', 'multi_precision', 'param_dict')


@Optimizer.register
class _AssignmentOptimizer(Optimizer):
    """Sets the weight to the pushed value (``weight[:] = grad``): how the
    full gradients of SVRGModule are gathered in a kvstore."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@Optimizer.register
class _SVRGOptimizer(Optimizer):
    """Wraps ``default_optimizer`` (a name, created with the other keyword
    arguments, or an Optimizer) for the parameters, and an
    ``_AssignmentOptimizer`` for the keys whose name contains ``full``.

    Parameters
    ----------
    default_optimizer : str or Optimizer
        The optimizer passed to ``SVRGModule.init_optimizer``.
    """

    def __init__(self, default_optimizer, **kwargs):
        super(_SVRGOptimizer, self).__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The keyword arguments Optimizer itself takes."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def update(self, index, weight, grad, state):
        """Update with the assignment optimizer for a ``*full*`` key, else with
        the default optimizer."""
        if "full" in self._check_index(index):
            self.aux_opt.update(index, weight, grad, state)
        else:
            self.default_opt.update(index, weight, grad, state)

    def create_state(self, index, weight):
        """The state of the optimizer that will update ``index``."""
        if "full" in self._check_index(index):
            return self.aux_opt.create_state(index, weight)
        return self.default_opt.create_state(index, weight)

    def _check_index(self, index):
        """The parameter name of ``index`` (a kvstore key may be the name itself)."""
        if index in self.idx2name.values():
            return index
        try:
            return self.idx2name[index]
        except KeyError:
            raise KeyError("_SVRGOptimizer: index %r names no parameter; param_idx2name maps "
                           "%s" % (index, sorted(self.idx2name.items(), key=str))) from None
