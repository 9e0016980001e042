"""``mx.autograd``: record ops on NDArrays and compute gradients.

While ``record()`` is active, every op whose inputs need gradients is put
on a tape (``ndarray._invoke.hooks.record``; ndarray never imports this
module). ``backward()`` walks the tape from the heads and applies each op's
registry gradient, ``grad(F, attrs, inputs, outputs, out_grads)``, written
with ``F = mx.nd`` functions: the gradient ops are ordinary engine ops, so
backward returns at once and ``await x.grad.read()`` works; recorded again
(``create_graph=True``) they give higher-order gradients.

Recording and training state are per thread, as in MXNet.
"""
from __future__ import annotations

import math
import threading

from . import _grad_plans
from . import engine as _engine
from . import ndarray as _nd
from .base import MXNetError
from .ndarray import NDArray
from .ndarray import _invoke
from .ndarray.ndarray import _view

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad",
           "Function", "get_symbol", "NDArray"]


class _State(threading.local):
    recording = False
    training = False
    bwd_observer = None     # f(node, input grads) per node backward runs (mx.mon.Monitor)


_state = _State()
_nrec = [0]                 # threads recording now; the push hook is off at 0
_nrec_lock = threading.Lock()


def _set_rec(flag):
    flag = bool(flag)
    if flag == _state.recording:
        return
    with _nrec_lock:
        _state.recording = flag
        _nrec[0] += 1 if flag else -1
        _invoke.hooks.record = _record if _nrec[0] else None
_GRAD_REQS = ("write", "add", "null")


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


# --------------------------------------------------------------- the tape


class _Leaf:
    """A variable: its gradient buffer and request ('write', 'add', 'null');
    ``fresh``: whether backward wrote the gradient since the flag was cleared
    (MXNet's fresh_out_grad, read by ``NDArray._fresh_grad``)."""
    __slots__ = ("grad", "req", "fresh")

    def __init__(self, grad, req):
        self.grad, self.req, self.fresh = grad, req, False


class _Node:
    """One recorded op: how to compute its inputs' gradients."""
    __slots__ = ("op", "attrs", "inputs", "outputs", "edges", "fn", "freed", "__weakref__")

    def __init__(self, op, attrs, inputs, outputs, edges, fn=None):
        self.op, self.attrs, self.inputs, self.outputs = op, attrs, inputs, outputs
        self.edges = edges      # per input: its _ag (a _Leaf, an _Entry or None)
        self.fn = fn            # a custom Function instead of a registry op
        self.freed = False

    @property
    def name(self):
        return self.op.name if self.op is not None else type(self.fn).__name__


class _Entry:
    """An op output on the tape: (node, output index)."""
    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node, self.index = node, index


def _alias(x):
    # the value without the autograd link: no reference cycle through _ag
    return _view(x, x._shape, x._off)


def _is_in(y, xs):
    for x in xs:
        if x is y:
            return True
    return False


def _record(op, inputs, attrs, outs):
    if not _state.recording:
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
    live = False
    for x in inputs:
        e = x._ag
        if e is not None:
            if type(e) is _Entry and e.node.freed:
                e = None
            else:
                live = True
        edges.append(e)
    if not live:
        return
    for y in outs:
        if not _is_in(y, inputs):
            continue
        raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                         "recording with autograd (%s writes one of its inputs, and an input "
                         "needs gradients)" % op.name)
    node = _Node(op, attrs, [_alias(x) for x in inputs], [_alias(y) for y in outs], edges)
    for i, y in enumerate(outs):
        y._ag = _Entry(node, i)


_invoke.hooks.is_training = is_training


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
        if r not in _GRAD_REQS:
            raise MXNetError("grad_req must be one of %s, got %r" % (_GRAD_REQS, r))
        if g is not None and g.shape != v.shape:
            raise MXNetError("mark_variables: gradient of shape %s for a variable of shape %s"
                             % (g.shape, v.shape))
        v._ag = _Leaf(g, r)


def _attach_grad(self, grad_req="write", stype=None):
    """Allocate a zero gradient buffer and mark this array as a variable."""
    from .ndarray import zeros
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


def _ignores_ograd(h):
    """Whether no gradient rule reads ``h``'s head gradient: the op that made
    it is marked ``ignores_ograd`` (copies, as an executor makes into its
    output buffers, are looked through)."""
    ag = h._ag
    while isinstance(ag, _Entry) and ag.node.op is not None and ag.node.op.name == "_copy":
        ag = ag.node.edges[0]
    if isinstance(ag, _Entry) and getattr(ag.node.fn, "fused", False):
        return ag.node.fn.ignores_ograd(ag.index)
    if not isinstance(ag, _Entry) or ag.node.op is None:
        return False
    return bool(getattr(ag.node.op.grad, "ignores_ograd", False))


def _parse_heads(heads, head_grads):
    if isinstance(heads, NDArray):
        heads = [heads]
    heads = list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError("backward: %d heads but %d head_grads" % (len(heads), len(head_grads)))
    for i, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and g.shape != h.shape:
            if (g.size == 0 and h.size == 0) or _ignores_ograd(h):
                # no data either way, or an op whose gradient never reads its
                # output gradient: MXNet's executor neither copies nor checks it
                head_grads[i] = h.zeros_like().astype(g.dtype, copy=False)
                continue
            raise MXNetError("backward: head_grad of shape %s for a head of shape %s"
                             % (g.shape, h.shape))
        if g is not None and g.context != h.context and "gpu" in (
                g.context.device_type, h.context.device_type):
            raise MXNetError("backward: head gradient %d is on %s but its head is on %s; "
                             "move it with .as_in_context(%s)"
                             % (i, g.context, h.context, h.context))
    return heads, head_grads


def _topo(heads):
    """Nodes reachable from heads, in reverse topological order (heads first)."""
    order, seen = [], set()
    stack = []
    for h in heads:
        if isinstance(h._ag, _Entry):
            stack.append((h._ag.node, False))
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for e in node.edges:
            if isinstance(e, _Entry) and id(e.node) not in seen:
                stack.append((e.node, False))
    order.reverse()
    return order


def _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode,
                  into=None):
    """``into`` (with ``variables``): an array per variable (or None) in
    which a gradient that one edge alone makes may be computed, in place of a
    new array (a bound executor's 'write' gradient buffers)."""
    F = _nd
    heads, head_grads = _parse_heads(heads, head_grads)
    for h in heads:
        if h._ag is None:
            raise MXNetError("backward: a head (shape %s) is not part of a recorded graph; "
                             "compute it inside autograd.record() from arrays that called "
                             "attach_grad()" % (h.shape,))
    order = None
    if variables is None and not create_graph:
        order = _topo(heads)
        if _grad_plans.tape_via_plan(F, heads, head_grads, order, retain_graph, train_mode):
            return None
    grads = {}          # id(entry or leaf) -> accumulated gradient

    def add(key, g):
        prev = grads.get(key)
        grads[key] = g if prev is None else prev + g

    leaves = {}
    scope = _engine.bulk_scope("backward", "backward")
    scope.__enter__()
    try:
        for h, g in zip(heads, head_grads):
            if g is None:
                g = F.ones_like(_alias(h))
            ag = h._ag
            key = (id(ag.node), ag.index) if isinstance(ag, _Entry) else id(ag)
            if isinstance(ag, _Leaf):
                leaves[id(ag)] = ag
            add(key, g)
    except BaseException:
        scope.__exit__(None, None, None)
        raise
    prev = (_state.recording, _state.training)
    _set_rec(create_graph)
    _state.training = bool(train_mode)
    try:
        if order is None:
            order = _topo(heads)
        # a leaf that gets its whole gradient from one node has it computed
        # in its grad buffer (MXNet's kWriteTo), with no copy after
        direct = None
        if not create_graph:
            if variables is None:
                direct = _direct_leaves(order, heads, _own_grad)
            elif into is not None:
                tg = {id(v._ag): t for v, t in zip(variables, into) if t is not None}
                if tg:
                    direct = _direct_leaves(order, heads, lambda leaf: tg.get(id(leaf)))
        for node in order:
            if node.freed:
                raise MXNetError("backward: the graph through operator %s was already freed by "
                                 "an earlier backward; pass retain_graph=True to the first "
                                 "backward to differentiate twice" % node.name)
            ograds = [grads.pop((id(node), i), None) for i in range(len(node.outputs))]
            if all(g is None for g in ograds):
                continue
            ograds = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, node.outputs)]
            # gradient rules take dense output gradients (MXNet's storage fallback)
            ograds = [g.tostype("default") if g._sparse else g for g in ograds]
            ins, outs = node.inputs, node.outputs
            if create_graph:
                # differentiate through inputs and outputs (rules like tanh's use
                # the output): give their aliases back their graph links
                ins = [_relink(x, e) for x, e in zip(node.inputs, node.edges)]
                outs = [_relink(y, _Entry(node, i)) for i, y in enumerate(node.outputs)]
            targets = None
            if direct:
                targets = [direct.get(id(e)) if isinstance(e, _Leaf) else None
                           for e in node.edges]
            if node.fn is not None:
                if getattr(node.fn, "fused", False):
                    igrads = node.fn._backward_entry(ograds, node.inputs, targets)
                else:
                    igrads = node.fn._backward_entry(ograds)
            elif node.op.grad is None:
                raise MXNetError(
                    "operator %s is not differentiable (it has no gradient rule), but a "
                    "gradient reaches it; wrap its input in BlockGrad/stop_gradient if no "
                    "gradient should flow there" % node.name)
            else:
                rule = node.op.grad
                igrads = None
                if not create_graph:
                    igrads = _grad_plans.rule_via_plan(
                        F, node, ograds, tuple(e is not None for e in node.edges),
                        _state.training, targets)
                if igrads is None:
                    igrads = _grad_plans.apply_rule(rule, F, node.attrs, ins, outs, ograds,
                                                    [e is not None for e in node.edges])
            if not isinstance(igrads, (list, tuple)):
                igrads = [igrads]
            if len(igrads) != len(node.edges):
                raise MXNetError("gradient of %s returned %d arrays for %d inputs"
                                 % (node.name, len(igrads), len(node.edges)))
            if _state.bwd_observer is not None:
                _state.bwd_observer(node, igrads)       # a monitored executor's backward
            for e, g in zip(node.edges, igrads):
                if type(e) is _Leaf and e.req == "null":
                    e.grad = None   # MXNet: a 'null' variable a backward reached has no grad
                if e is None or g is None:
                    continue
                if isinstance(e, _Entry):
                    add((id(e.node), e.index), g)
                else:
                    leaves[id(e)] = e
                    add(id(e), g)
            if not retain_graph:
                node.freed = True
                if getattr(node.fn, "fused", False):
                    node.fn.release()
        if variables is not None:
            out = []
            for v in variables:
                g = grads.get(id(v._ag)) if isinstance(v._ag, _Leaf) else None
                out.append(g if g is not None else F.zeros_like(_alias(v)))
            return out
        _set_rec(prev[0])
        _state.training = prev[1]
        for key, leaf in leaves.items():
            g = grads.get(key)
            if g is None or leaf.req == "null" or leaf.grad is None:
                continue
            leaf.fresh = True       # the Trainer's stale-gradient check reads this
            if g is leaf.grad:
                continue            # computed in place (see _direct_leaves)
            _grad_plans.write_grad(leaf, g)
        return None
    finally:
        scope.__exit__(None, None, None)
        _set_rec(prev[0])
        _state.training = prev[1]


def _own_grad(leaf):
    return leaf.grad


def _direct_leaves(order, heads, target_of):
    """{id(leaf): target} for the leaves ('write', with a dense target)
    that exactly one edge of the graph reaches, and no head is: their whole
    gradient is computed in ``target_of(leaf)`` (MXNet's kWriteTo)."""
    uses = {}
    leaves = {}
    for node in order:
        for e in node.edges:
            if isinstance(e, _Leaf):
                uses[id(e)] = uses.get(id(e), 0) + 1
                leaves[id(e)] = e
    for h in heads:
        uses.pop(id(h._ag), None)
    out = {}
    for k, n in uses.items():
        leaf = leaves[k]
        if n == 1 and leaf.req == "write":
            t = target_of(leaf)
            if t is not None and not t._sparse:
                out[k] = t
    return out


def _relink(alias, edge):
    if edge is None:
        return alias
    h = _view(alias, alias._shape, alias._off)
    h._ag = edge
    return h


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
        from .symbol._autograd import tape_to_symbol
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
            node = _Node(None, None, [_alias(x) for x in inputs], [_alias(y) for y in outs],
                         [x._ag for x in inputs], fn=self)
            self._nin = len(inputs)
            for i, y in enumerate(outs):
                if y._ag is not None or any(y is x for x in inputs):
                    raise MXNetError("Function.forward must return new arrays, not its inputs")
                y._ag = _Entry(node, i)
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


from ._ctypes_helpers import (MXCallbackList, c_array, c_array_buf,  # noqa: E402,F401
                              c_handle_array)  # MXNet names in mx.autograd
