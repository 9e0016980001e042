"""``mx.contrib.autograd``: MXNet's first, experimental autograd interface
(MXNet 1.9.1 keeps it beside ``mx.autograd``), here on aiond's autograd.

    x = mx.nd.array([1, 2, 3])
    dx = mx.nd.zeros_like(x)
    mx.contrib.autograd.mark_variables([x], [dx])
    with mx.contrib.autograd.train_section():
        y = x * x
    mx.contrib.autograd.compute_gradient([y])      # dx == 2 * x

A "training section" both records operations and runs them in training
mode (``set_is_training`` sets the two together).
"""
from __future__ import annotations

import functools

from .. import autograd as _ag
from ..base import string_types
from ..ndarray import NDArray, zeros_like

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]


def set_is_training(is_train):
    """Turn recording and training mode on or off together; returns the
    previous recording state."""
    _ag.set_training(bool(is_train))
    return bool(_ag.set_recording(bool(is_train)))


class TrainingStateScope(object):
    """A scope with recording/training set to ``enter_state``, restored on
    exit."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None
        self._prev_train = None

    def __enter__(self):
        self._prev_train = _ag.is_training()
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)
        _ag.set_training(self._prev_train)


def train_section():
    """``with train_section():`` record operations, in training mode."""
    return TrainingStateScope(True)


def test_section():
    """``with test_section():`` inside a train section, stop recording (and
    run in inference mode)."""
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Mark ``variables`` (NDArrays) so that backward writes their
    gradients into ``gradients``; ``grad_reqs`` is 'write', 'add' or
    'null' (one for all, or a list)."""
    if isinstance(grad_reqs, string_types):
        grad_reqs = [grad_reqs] * len(variables)
    for req in grad_reqs:
        if req not in ('write', 'add', 'null'):
            raise ValueError("grad_req must be 'write', 'add' or 'null', got %r" % (req,))
    _ag.mark_variables(list(variables), list(gradients), list(grad_reqs))


def backward(outputs, out_grads=None, retain_graph=False):
    """Gradients of ``outputs`` (a list or tuple of NDArrays), times
    ``out_grads`` (ones where None), into the marked variables' gradients."""
    if not isinstance(outputs, (list, tuple)):
        raise TypeError("outputs must be a list or tuple of NDArrays")
    if out_grads is not None and len(out_grads) != len(outputs):
        raise ValueError("outputs and out_grads must have the same length (%d vs %d)"
                         % (len(outputs), len(out_grads)))
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads),
                 retain_graph=retain_graph)


def compute_gradient(outputs):
    """``backward(outputs)``."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` to return ``(gradients of its arguments, its output)``;
    ``argnum`` (an int or a list) picks the arguments to differentiate."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            argnum_ = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in argnum_]
        for x in variables:
            if not isinstance(x, NDArray):
                raise TypeError("type of autograd input should NDArray, got %s"
                                % type(x).__name__)
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` to return the gradients of its arguments."""
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args):
        return grad_with_loss_func(*args)[0]
    return wrapped
