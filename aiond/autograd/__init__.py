"""``mx.autograd``: record ops on NDArrays and compute gradients.

While ``record()`` is active, every op whose inputs need gradients is put
on a tape (``_tape.py``; ndarray never imports this package). ``backward()``
walks the tape from the heads (``_walk.py``, driven by ``_backward.py``)
and applies each op's registry gradient, ``grad(F, attrs, inputs, outputs,
out_grads)``, written with ``F = mx.nd`` functions: the gradient ops are
ordinary engine ops, so backward returns at once and ``await
x.grad.read()`` works; recorded again (``create_graph=True``) they give
higher-order gradients. ``_plans.py`` replays rules and whole tapes as
cached plans.

Recording and training state are per thread, as in MXNet.
"""
from __future__ import annotations

import math

from ..base import MXNetError
from ..ndarray import NDArray
from . import _plans  # noqa: F401
from ._backward import ignores_ograd as _ignores_ograd  # noqa: F401
from ._backward import run_backward as _run_backward
from ._tape import GRAD_REQS as _GRAD_REQS
from ._tape import Entry as _Entry, Leaf as _Leaf, Node as _Node  # noqa: F401
from ._tape import alias as _alias, attach as _attach, mark_variables
from ._tape import set_recording_flag as _set_rec, state as _state
from ._walk import topo as _topo  # noqa: F401

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad",
           "Function", "get_symbol", "NDArray"]


def is_recording() -> bool:
    return _state.recording


def is_training() -> bool:
    return _state.training


def set_recording(is_recording):  # noqa: A002 - MXNet's name
    """Set recording on/off in this thread; returns the previous state."""
    prev = _state.recording
    _set_rec(is_recording)
    return prev


def set_training(train_mode):  # noqa: A002
    """Set training/predicting in this thread; returns the previous state."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


class _Scope:
    def __init__(self, is_record, train_mode):
        self._rec, self._train = is_record, train_mode
        self._prev = None

    def __enter__(self):
        self._prev = (_state.recording, _state.training)
        if self._rec is not None:
            _set_rec(self._rec)
        if self._train is not None:
            _state.training = self._train
        return self

    def __exit__(self, *exc):
        _set_rec(self._prev[0])
        _state.training = self._prev[1]


def record(train_mode=True):  # noqa: A002
    """``with autograd.record():`` - record ops for gradients (training mode
    by default: Dropout drops, BatchNorm uses batch statistics)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):  # noqa: A002
    """``with autograd.pause():`` - stop recording inside a record block."""
    return _Scope(False, train_mode)


def train_mode():
    return _Scope(None, True)


def predict_mode():
    return _Scope(None, False)


def _attach_grad(self, grad_req="write", stype=None):
    """Allocate a zero gradient buffer and mark this array as a variable."""
    from ..ndarray import zeros
    if grad_req not in _GRAD_REQS:
        raise MXNetError("attach_grad: grad_req must be one of %s, got %r" % (_GRAD_REQS, grad_req))
    if math.prod(self.shape) == 0:
        # MXNet's attach_grad uses zeros_like: zero-size arrays work outside
        # NumPy-shape semantics too (mx.nd.zeros refuses their shape there)
        with pause():
            g = self.zeros_like()
    else:
        g = zeros(self.shape, ctx=self.context, dtype=self.dtype, stype=stype or self.stype)
    self._ag = _Leaf(g, grad_req)


def _grad_prop(self):
    ag = self._ag
    return ag.grad if isinstance(ag, _Leaf) else None


def _detach(self):
    return _alias(self)


def _ndarray_backward(self, out_grad=None, retain_graph=False, train_mode=True):  # noqa: A002
    """Backward from this array (``out_grad`` defaults to ones)."""
    backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)


def _get_fresh_grad(self):
    ag = self._ag
    return bool(ag.fresh) if isinstance(ag, _Leaf) else False


def _set_fresh_grad(self, state):
    ag = self._ag
    if isinstance(ag, _Leaf):
        ag.fresh = bool(state)


NDArray.attach_grad = _attach_grad
NDArray.grad = property(_grad_prop)
NDArray._fresh_grad = property(_get_fresh_grad, _set_fresh_grad,
                               doc="Whether backward wrote this variable's gradient since "
                                   "the flag was last cleared.")
NDArray.detach = _detach
NDArray.backward = _ndarray_backward


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: A002
    """Compute the gradients of ``heads`` into the ``.grad`` of the variables.

    Returns at once: the gradient ops are pushed to the engine like any op.
    """
    _run_backward(heads, head_grads, None, retain_graph, False, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):  # noqa: A002
    """Gradients of ``heads`` w.r.t. ``variables``, returned as a list of new
    arrays (not written to ``.grad``), one per variable, also when
    ``variables`` is a single NDArray (MXNet 1.9.1 returns a list then too,
    and code such as ``grad(y, x, ...)[0]`` relies on it).
    ``create_graph=True`` records them, so they can be differentiated again."""
    if isinstance(variables, NDArray):
        variables = [variables]
    for v in variables:
        if not isinstance(v._ag, _Leaf):
            raise MXNetError("autograd.grad: a variable (shape %s) was not marked; call "
                             "attach_grad() on it before recording" % (v.shape,))
    if retain_graph is None:
        retain_graph = create_graph
    return _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode)


def get_symbol(x):
    """The recorded graph of ``x`` as a Symbol (needs the symbol package)."""
    try:
        from ..symbol._autograd import tape_to_symbol
    except ImportError:
        raise MXNetError("autograd.get_symbol needs aiond.symbol, which is not available "
                         "in this build yet") from None
    return tape_to_symbol(x)


class Function:
    """A user-defined differentiable function (MXNet's ``autograd.Function``).

    Subclass it, define ``forward(*inputs)`` and ``backward(*output_grads)``
    over NDArrays, and call an instance on NDArrays. ``save_for_backward``
    keeps arrays for ``backward`` (``self.saved_tensors``).
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        if self._used:
            raise MXNetError("an autograd.Function instance can only be called once; "
                             "create a new instance for each call")
        self._used = True
        with pause(train_mode=_state.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if _state.recording and any(x._ag is not None for x in inputs):
            for y in outs:
                if y._ag is not None or any(y is x for x in inputs):
                    raise MXNetError("Function.forward must return new arrays, not its inputs")
            self._nin = len(inputs)
            _attach(inputs, outs, [x._ag for x in inputs], self)
        return outputs

    def _backward_entry(self, ograds):
        with pause(train_mode=_state.training):
            igrads = self.backward(*ograds)
        if isinstance(igrads, NDArray):
            igrads = [igrads]
        igrads = list(igrads)
        if len(igrads) != self._nin:
            raise MXNetError("%s.backward returned %d gradients for %d inputs"
                             % (type(self).__name__, len(igrads), self._nin))
        return igrads

    def forward(self, *inputs):
        raise NotImplementedError("The 'forward' method must be implemented.")

    def backward(self, *output_grads):
        raise NotImplementedError("The 'backward' method must be implemented.")


from .._ctypes_helpers import (MXCallbackList, c_array, c_array_buf,  # noqa: E402,F401
                               c_handle_array)  # MXNet names in mx.autograd
