"""The tape: recording state, nodes, entries and leaves (an internal API of
aiond: the graph layer attaches its fused calls here, the executor reads
what it recorded).

While recording, every op whose inputs need gradients is put on the tape
through ``ndarray._invoke.hooks.record`` (ndarray never imports autograd).
An array's ``_ag`` is its place on the tape: a ``Leaf`` (a variable), an
``Entry`` (output ``index`` of a recorded ``Node``) or None.

Recording and training state are per thread, as in MXNet.
"""
from __future__ import annotations

import threading

from ..base import MXNetError
from ..ndarray import NDArray, _invoke
from ..ndarray.ndarray import view_of as _view
from ..ops import registry as _registry

__all__ = ["State", "state", "set_recording_flag", "Leaf", "Node", "Entry", "alias", "attach",
           "live", "GRAD_REQS"]

GRAD_REQS = ("write", "add", "null")


class State(threading.local):
    recording = False
    training = False
    bwd_observer = None     # f(node, input grads) per node backward runs (mx.mon.Monitor)


state = State()
_nrec = [0]                 # threads recording now; the push hook is off at 0
_nrec_lock = threading.Lock()


def set_recording_flag(flag):
    """Turn this thread's recording on or off (the push hook follows)."""
    flag = bool(flag)
    if flag == state.recording:
        return
    with _nrec_lock:
        state.recording = flag
        _nrec[0] += 1 if flag else -1
        _invoke.hooks.record = _record if _nrec[0] else None


def is_training() -> bool:
    return state.training


def is_recording() -> bool:
    return state.recording


class Leaf:
    """A variable: its gradient buffer and request ('write', 'add', 'null');
    ``fresh``: whether backward wrote the gradient since the flag was cleared
    (MXNet's fresh_out_grad, read by ``NDArray._fresh_grad``)."""
    __slots__ = ("grad", "req", "fresh")

    def __init__(self, grad, req):
        self.grad, self.req, self.fresh = grad, req, False


class Node:
    """One recorded op: how to compute its inputs' gradients."""
    __slots__ = ("op", "attrs", "inputs", "outputs", "edges", "fn", "freed", "__weakref__")

    def __init__(self, op, attrs, inputs, outputs, edges, fn=None):
        self.op, self.attrs, self.inputs, self.outputs = op, attrs, inputs, outputs
        self.edges = edges      # per input: its _ag (a Leaf, an Entry or None)
        self.fn = fn            # a custom Function or a fused graph call instead of an op
        self.freed = False

    @property
    def name(self):
        return self.op.name if self.op is not None else type(self.fn).__name__


class Entry:
    """An op output on the tape: (node, output index)."""
    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node, self.index = node, index


def alias(x):
    """``x``'s value without its autograd link (no reference cycle through ``_ag``)."""
    return _view(x, x._shape, x._off)


def live(ag):
    """``ag``, or None for an array whose graph a backward freed (a constant again)."""
    if isinstance(ag, Entry) and ag.node.freed:
        return None
    return ag


def attach(inputs, outputs, edges, fn):
    """Put one node computed by ``fn`` (a custom Function, a fused graph
    call: ``fn._backward_entry`` gives its input gradients) on the tape:
    ``outputs`` become its entries, ``edges`` are the inputs' places."""
    node = Node(None, None, [alias(x) for x in inputs], [alias(y) for y in outputs], edges,
                fn=fn)
    for i, y in enumerate(outputs):
        y._ag = Entry(node, i)
    return node


def _is_in(y, xs):
    for x in xs:
        if x is y:
            return True
    return False


def _record(op, inputs, attrs, outs):
    if not state.recording:
        return
    for y in outs:
        if y._ag is not None and not _is_in(y, inputs):
            raise MXNetError(
                "%s: assigning to an NDArray that is already in a computational graph "
                "(out= or an in-place operator) is not supported while recording; call "
                "backward() first or do it outside autograd.record()" % op.name)
    # an array whose graph a backward freed is a constant again (MXNet clears
    # the autograd info of freed nodes)
    edges = []
    has_live = False
    for x in inputs:
        e = x._ag
        if e is not None:
            if type(e) is Entry and e.node.freed:
                e = None
            else:
                has_live = True
        edges.append(e)
    if not has_live:
        return
    for y in outs:
        if not _is_in(y, inputs):
            continue
        raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                         "recording with autograd (%s writes one of its inputs, and an input "
                         "needs gradients)" % op.name)
    node = Node(op, attrs, [alias(x) for x in inputs], [alias(y) for y in outs], edges)
    for i, y in enumerate(outs):
        y._ag = Entry(node, i)


_invoke.hooks.is_training = is_training
_invoke.hooks.is_recording = is_recording   # mx.np's NumPy fallback refuses to run then
_registry.hooks.is_training = is_training      # shape rules that depend on the mode


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients go into ``gradients``."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise MXNetError("mark_variables: %d variables, %d gradients and %d grad_reqs must match"
                         % (len(variables), len(gradients), len(grad_reqs)))
    for v, g, r in zip(variables, gradients, grad_reqs):
        if r not in GRAD_REQS:
            raise MXNetError("grad_req must be one of %s, got %r" % (GRAD_REQS, r))
        if g is not None and g.shape != v.shape:
            raise MXNetError("mark_variables: gradient of shape %s for a variable of shape %s"
                             % (g.shape, v.shape))
        v._ag = Leaf(g, r)
