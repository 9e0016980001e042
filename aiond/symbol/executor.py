"""``mx.executor.Executor``: a Symbol bound to arrays.

``forward()`` pushes each node's op with ``invoke`` on the bound arrays
(used in place: ``exe.arg_dict['x'][:] = v`` changes the next forward) and
returns at once; results land in ``exe.outputs``, the same NDArray objects
every time. ``backward()`` uses autograd: a training forward is recorded on
views of the arguments that need gradients (the bound arrays themselves
stay unmarked, so executors sharing arrays do not interfere), and the
gradients are written into ``grad_arrays`` as ``grad_req`` says
('write', 'add' or 'null').
"""
from __future__ import annotations

import numpy as np

from .. import autograd
from .. import engine as _engine
from ..autograd import _tape
from ..graph.program import Program
from ..base import MXNetError
from ..context import Context
from .. import ndarray as _nd
from ..ndarray import NDArray
from ..ndarray.ndarray import empty, zeros
from ..ndarray.ndarray import view_of as _view
from .symbol import ArgumentError, Symbol, UnknownArgumentError, _shape_str, infer
from . import _cse
from ._infer import from_user
from ._partial import known

__all__ = ["Executor", "bind", "simple_bind", "ndarray_inputs", "Plan"]

_GRAD_REQS = ("null", "write", "add", "inplace")


def Plan(sym, placement=None):  # noqa: N802 - builds a Program
    """``sym``'s Program over its arguments then auxiliary states (the
    executor's order); ``arg_names``/``aux_names`` name them."""
    from ._placement import copy_to
    order, args, auxs = sym._arg_aux_nodes()
    prog = Program(sym._outputs, list(args) + list(auxs), placement, "graph", order,
                   move=copy_to)
    prog.arg_names = [n.name for n in args]
    prog.aux_names = [n.name for n in auxs]
    return prog


# ------------------------------------------------------------------ binding


def ndarray_inputs(arg_key, args, arg_names, allow_missing):
    """MXNet's ``_get_ndarray_inputs``: a list (in ``arg_names`` order) from a
    list or a dict of NDArrays."""
    if isinstance(args, (list, tuple)):
        if len(args) != len(arg_names):
            raise ArgumentError("Length of %s does not match the number of arguments: got %d, "
                            "the symbol has %d (%s)" % (arg_key, len(args), len(arg_names),
                                                        ", ".join(arg_names)))
        out = []
        for name, a in zip(arg_names, args):
            if a is None and allow_missing:
                out.append(None)
            elif not isinstance(a, NDArray):
                raise TypeError("Only accept list of NDArrays or dict of str to NDArray "
                                "(%s: %s for %s)" % (arg_key, type(a).__name__, name))
            else:
                out.append(a)
        return out
    if isinstance(args, dict):
        out = []
        for name in arg_names:
            if name in args:
                a = args[name]
                if not isinstance(a, NDArray):
                    raise TypeError("Only accept list of NDArrays or dict of str to NDArray "
                                    "(%s[%r] is %s)" % (arg_key, name, type(a).__name__))
                out.append(a)
            elif allow_missing:
                out.append(None)
            else:
                raise ArgumentError("key `%s` is missing in `%s` (the symbol needs %s)"
                                % (name, arg_key, ", ".join(arg_names)))
        return out
    raise TypeError("Only accept list of NDArrays or dict of str to NDArray")


def _reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ArgumentError("grad_req has %d entries for %d arguments" % (len(grad_req),
                                                                         len(names)))
        reqs = list(grad_req)
    elif isinstance(grad_req, dict):
        # as MXNet: arguments not named get 'null', names that are not arguments
        # are ignored (one dict may serve several symbols)
        reqs = [grad_req.get(n, "null") for n in names]
    else:
        raise TypeError("grad_req must be a str, list or dict, got %s" % type(grad_req).__name__)
    for r in reqs:
        if r not in _GRAD_REQS:
            raise ValueError("grad_req must be in %s, got %r" % (_GRAD_REQS, r))
    return ["write" if r == "inplace" else r for r in reqs]


def _check_ctx(ctx):
    if not isinstance(ctx, Context):
        raise TypeError("Context type error: ctx must be a Context such as mx.cpu(), got %r"
                        % (ctx,))


def _infer_or_raise(sym, shapes, dtypes, what):
    # the user's shapes: without NumPy-shape semantics 0 marks an unknown dim
    shapes = {k: from_user(v) for k, v in shapes.items()}
    shapes = {k: v for k, v in shapes.items() if v is not None}
    inf = infer(sym, shapes, dtypes)
    unknown = inf.unknown_args()
    outs_known = all(known(inf.shape_of(e)) for e in sym._outputs)
    if unknown or not outs_known:
        raise MXNetError("%s: cannot infer the shape of %s from the given shapes %s; give "
                         "them as keyword arguments (name=shape)"
                         % (what, ", ".join(unknown) or "the outputs", shapes))
    return inf


def bind(sym, ctx, args, args_grad=None, grad_req="write", aux_states=None, group2ctx=None,
         shared_exec=None):
    _check_ctx(ctx)
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    arg_arrays = ndarray_inputs("args", args, arg_names, False)
    if args_grad is None:
        grad_arrays = [None] * len(arg_names)
    else:
        grad_arrays = ndarray_inputs("args_grad", args_grad, arg_names, True)
    aux_arrays = ndarray_inputs("aux_states", [] if aux_states is None else aux_states,
                                aux_names, False)
    reqs = _reqs(grad_req, arg_names)
    for name, a, g in zip(arg_names, arg_arrays, grad_arrays):
        if g is not None and g.shape != a.shape:
            raise ArgumentError("bind: the gradient array of %s has shape %s but the argument "
                            "has shape %s" % (name, _shape_str(g.shape), _shape_str(a.shape)))
    return Executor(sym, ctx, arg_arrays, grad_arrays, reqs, aux_arrays, group2ctx)


_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}


def _grad_stypes(order, stypes):
    """The gradient storage MXNet infers for arguments: row_sparse for the
    weight of Embedding(sparse_grad=True) and for the right side of
    dot(csr, x); default otherwise."""
    out = {}
    for n in order:
        if n.op is None:
            continue
        name = getattr(n.op, "name", n.op)
        ins = [src for src, _i, _v in n.inputs]
        if len(ins) > 1 and ins[1].op is None and (name == "_contrib_SparseEmbedding" or (
                name == "Embedding" and
                str(n.attrs.get("sparse_grad", "False")).lower() in ("true", "1"))):
            out[ins[1].name] = "row_sparse"
        elif name == "dot" and len(ins) == 2 and ins[0].op is None and ins[1].op is None \
                and stypes.get(ins[0].name) == "csr" and \
                str(n.attrs.get("transpose_b", "False")).lower() not in ("true", "1"):
            out[ins[1].name] = "row_sparse"
    return out


def simple_bind(sym, ctx, grad_req="write", type_dict=None, stype_dict=None, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
    _check_ctx(ctx)
    default_ctx = ctx
    shapes = {k: tuple(v) for k, v in kwargs.items() if isinstance(v, tuple)}
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    dtypes = {}
    if type_dict is not None:
        dtypes = {k: np.dtype(v) for k, v in type_dict.items()}
    else:
        for n in sym._arg_aux_nodes()[1]:
            if "__dtype__" not in n.attrs:
                dtypes[n.name] = np.dtype(np.float32)
    # storage types: stype_dict, else the variables' __storage_type__ attribute
    stypes = {}
    for n in sym._arg_aux_nodes()[0]:
        st = n.attrs.get("__storage_type__")
        if st is not None and int(st) in _STYPE_NAMES:
            stypes[n.name] = _STYPE_NAMES[int(st)]
    for k, v in (stype_dict or {}).items():
        if v not in (None, "default", "row_sparse", "csr"):
            raise MXNetError("simple_bind: unknown storage type %r for %s" % (v, k))
        stypes[k] = v or "default"
    inf = _infer_or_raise(sym, shapes, dtypes, "simple_bind")
    grad_stypes = _grad_stypes(sym._arg_aux_nodes()[0], stypes)
    _, args, auxs = inf.order, inf.args, inf.auxs
    reqs = _reqs(grad_req, arg_names)
    shared_names = set(shared_arg_names or ())
    sh_args = shared_exec.arg_dict if shared_exec is not None else {}
    sh_grads = shared_exec.grad_dict if shared_exec is not None else {}
    sh_aux = shared_exec.aux_dict if shared_exec is not None else {}

    # with group2ctx, a variable of a ctx_group is allocated on that group's context
    vctx = {}
    if group2ctx:
        from ._placement import var_contexts
        vctx = var_contexts(sym, group2ctx)

    def dtype_of(n):
        d = inf.dtypes.get((id(n), 0))
        return d if d is not None else np.dtype(np.float32)

    def alloc(name, shape, dtype, shared, use_buffer):
        ctx = vctx.get(name, default_ctx)
        st = stypes.get(name, "default")
        a = shared.get(name) if name in shared_names else None
        if a is not None and a.shape == shape and a.dtype == dtype and a.stype == st:
            return a
        if st != "default":
            return zeros(shape, ctx=ctx, dtype=dtype, stype=st)
        if use_buffer and shared_buffer is not None:
            b = shared_buffer.get(name)
            if b is not None and b.dtype == dtype and b.size >= int(np.prod(shape)):
                return _reshaped(b, shape)
            a = zeros(shape, ctx=ctx, dtype=dtype)
            shared_buffer[name] = a
            return a
        return zeros(shape, ctx=ctx, dtype=dtype)

    arg_arrays, grad_arrays = [], []
    for n, req in zip(args, reqs):
        shape = inf.shapes[(id(n), 0)]
        dt = dtype_of(n)
        # as MXNet's simple_bind: only arguments that are not shared parameters
        # (data, labels, unshared weights) go through the shared buffer
        arg_arrays.append(alloc(n.name, shape, dt, sh_args, n.name not in shared_names))
        if req == "null":
            grad_arrays.append(None)
        else:
            g = sh_grads.get(n.name) if n.name in shared_names else None
            gst = grad_stypes.get(n.name)
            grad_arrays.append(g if g is not None and g.shape == shape
                               else zeros(shape, ctx=vctx.get(n.name, ctx), dtype=dt,
                                          stype=gst))
    aux_arrays = []
    for n in auxs:
        shape = inf.shapes[(id(n), 0)]
        a = sh_aux.get(n.name) if shared_exec is not None else None
        aux_arrays.append(a if a is not None and a.shape == shape
                          else zeros(shape, ctx=vctx.get(n.name, ctx), dtype=dtype_of(n)))
    assert [n.name for n in args] == arg_names and [n.name for n in auxs] == aux_names
    return Executor(sym, ctx, arg_arrays, grad_arrays, reqs, aux_arrays, group2ctx, inf)


# ops through which no gradient flows (nnvm's zero-gradient ops)
_GRAD_STOPS = frozenset(("BlockGrad",))


def _check_differentiable(sym, grad_reqs, grad_arrays):
    """As MXNet's bind builds the gradient graph: an op without a gradient
    that a gradient would reach (on a path from the outputs, not cut by
    BlockGrad, to an argument whose gradient is requested) is an error now,
    not at the first backward."""
    order, args, _ = sym._arg_aux_nodes()
    dep = {id(n) for n, r, g in zip(args, grad_reqs, grad_arrays)
           if r != "null" and g is not None}
    if not dep:
        return
    for n in order:                                  # topological order
        if n.op is not None and any(id(e[0]) in dep for e in n.inputs):
            dep.add(id(n))
    seen = set()
    stack = [e[0] for e in sym._outputs]
    while stack:
        n = stack.pop()
        if n.op is None or id(n) in seen:
            continue
        seen.add(id(n))
        if n.op.name in _GRAD_STOPS or id(n) not in dep:
            continue
        if n.op.grad is None:
            raise MXNetError("Operator %s is non-differentiable because it didn't register "
                             "FGradient attribute. (node %s)" % (n.op.name, n.name))
        stack.extend(e[0] for e in n.inputs)


def _reshaped(a, shape):
    """A view of the first prod(shape) elements of ``a`` (MXNet's executor reshape)."""
    if a.shape == shape:
        return a
    return _view(a, shape, a._off if a._off is not None else 0)


# ------------------------------------------------------------------ Executor


def _fused_graph(exe):
    if not exe._plan.steps:
        return None
    from ..graph.fused import FusedGraph, enabled
    if not enabled():
        return None
    plan = exe._plan
    nx = len(exe.arg_arrays) + len(exe.aux_arrays)

    def graph(inputs, ctx):
        return plan.run(inputs[:nx], ctx, inputs[nx:])
    name = plan.steps[-1].name
    sym = exe._symbol
    inputs = sym.list_arguments() + sym.list_auxiliary_states() + \
        ["output %s" % n for n in sym.list_outputs()]
    return FusedGraph(graph, name, input_names=inputs)


def _output_stypes(symbol, args, auxs):
    """The outputs' storage types: all dense unless a bound array is sparse."""
    if not any(a._sparse for a in args) and not any(a._sparse for a in auxs):
        return ["default"] * len(symbol._outputs)
    from ._stype import infer_stypes
    return infer_stypes(symbol, [a.stype for a in args], [a.stype for a in auxs])


class Executor:
    """A bound symbol: ``forward``/``backward`` over ``arg_arrays``,
    ``grad_arrays``, ``aux_arrays``; results in ``outputs``."""

    def __init__(self, symbol, ctx, arg_arrays, grad_arrays, grad_reqs, aux_arrays,
                 group2ctx=None, inference=None, shared_outputs=None):
        self._ctx = ctx
        self._group2ctx = group2ctx
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._grad_req = list(grad_reqs)
        self._arg_dict = self._grad_dict = self._aux_dict = self._output_dict = None
        self._monitor = None
        self._tape_names = {}       # id(tape node) -> op name, while monitored
        self._monitor_all = False
        self._recorded = False
        names = symbol.list_arguments()
        for name, a in zip(names + symbol.list_auxiliary_states(),
                           self.arg_arrays + self.aux_arrays):
            if group2ctx:
                break       # placed across contexts: each array stays where it is
            if a._st.ctx is not ctx:
                raise MXNetError("bind: %s is on %s but the executor runs on %s; move it with "
                                 ".as_in_context(ctx)" % (name, a.context, ctx))
        if inference is None:
            inference = self._infer_bound(symbol)
        _check_differentiable(symbol, self._grad_req, self.grad_arrays)
        # outputs: preallocated, written by every forward
        self.outputs = []
        ostypes = _output_stypes(symbol, self.arg_arrays, self.aux_arrays)
        placement = None
        if group2ctx:
            from ._placement import place
            placement = place(symbol, group2ctx, self.arg_arrays, self.aux_arrays, ctx)
        # outputs whose size is a value (after an NMS, a boolean_mask): each
        # forward replaces them with the arrays it makes (MXNet's CachedOp
        # does; its GraphExecutor refuses such graphs)
        self._value_shaped = []
        for i, e in enumerate(symbol._outputs):
            s = inference.shape_of(e)
            d = inference.dtype_of(e)
            d = np.dtype(d if d is not None else np.float32)
            if any(k < 0 for k in s):
                self._value_shaped.append(i)
                self.outputs.append(empty(tuple(max(k, 0) for k in s), ctx=ctx, dtype=d))
                continue
            old = shared_outputs[i] if shared_outputs and i < len(shared_outputs) else None
            if placement is not None:
                # an output lives on the context of the op that makes it
                self.outputs.append(empty(s, ctx=placement[id(e[0])], dtype=d,
                                          stype=ostypes[i]))
            elif ostypes[i] != "default":
                self.outputs.append(empty(s, ctx=ctx, dtype=d, stype=ostypes[i]))
            elif old is not None and old.dtype == d and int(np.prod(s)) <= old.size:
                # an executor made by reshape() writes into its parent's output memory
                self.outputs.append(_reshaped(old, tuple(s)))
            else:
                self.outputs.append(empty(s, ctx=ctx, dtype=d))
        self._symbol = symbol.__copy__()      # later changes to ``symbol`` do not reach us
        self._optimized = self._optimize(self._symbol)
        self._fix_init_shapes(self._optimized)
        self._placed = placement is not None
        if self._placed:
            placement = place(self._optimized, group2ctx, self.arg_arrays, self.aux_arrays, ctx)
        self._plan = Plan(self._optimized, placement)
        # gradients: views of the arguments that need them, marked for autograd
        self._grad_idx = [i for i, (g, r) in enumerate(zip(self.grad_arrays, self._grad_req))
                          if g is not None and r != "null"]
        self._views = list(self.arg_arrays)
        for i in self._grad_idx:
            a = self.arg_arrays[i]
            self._views[i] = _view(a, a._shape, a._off)
        self._fused = None if self._placed or self._value_shaped else _fused_graph(self)

    def _run_plan(self, args, *watch):
        if not self._value_shaped:
            self._plan.run(args, self._ctx, self.outputs, *watch)
            return
        outs = list(self.outputs)
        for i in self._value_shaped:
            outs[i] = None
        res = self._plan.run(args, self._ctx, outs, *watch)
        for i in self._value_shaped:
            self.outputs[i] = res[i]
        self._output_dict = None

    def _run_fused(self, args):
        """The graph as one op (and one tape node when recording), writing
        ``outputs`` in place; False when it cannot be fused."""
        if self._fused is None or self._monitor is not None:
            return False
        heads = self._fused(list(args) + self.aux_arrays + self.outputs, self._ctx)
        if heads is None:
            return False
        for o, h in zip(self.outputs, heads):
            o._ag = h._ag
        return True

    @staticmethod
    def _optimize(sym):
        """The graph this executor runs: ``sym`` after MXNet's executor
        passes (common subexpression elimination, see ``_cse``; the
        partitioning MXNET_SUBGRAPH_BACKEND names, see ``_subgraph``)."""
        from ._subgraph import partition_for_bind
        opt = sym.__copy__()
        if _cse.enabled():
            opt = Symbol._from(_cse.eliminate_common_expr(opt._outputs))
        opt = partition_for_bind(opt)
        if (opt.list_arguments() != sym.list_arguments()
                or opt.list_auxiliary_states() != sym.list_auxiliary_states()):
            return sym.__copy__()   # pragma: no cover - the passes keep every input in place
        return opt

    def _fix_init_shapes(self, sym):
        """``_zeros(shape=(-1, 3))`` & co run with the shape inference gave them."""
        from ._partial import has_unknown_param_shape
        nodes = [n for n in sym._arg_aux_nodes()[0]
                 if n.op is not None and has_unknown_param_shape(n.op, n.params)]
        if not nodes:
            return
        names = sym.list_arguments() + sym.list_auxiliary_states()
        arrays = self.arg_arrays + self.aux_arrays
        inf = infer(sym, {k: a.shape for k, a in zip(names, arrays)},
                    {k: a.dtype for k, a in zip(names, arrays)})
        for n in nodes:
            shape = inf.shapes.get((id(n), 0))
            if not known(shape):
                raise MXNetError("bind: cannot infer the shape of %s (shape=%s)"
                                 % (n.name, n.attrs.get("shape")))
            n.attrs["shape"] = str(tuple(shape))
            n._params = None

    def get_optimized_symbol(self):
        """The symbol this executor runs, after the graph passes (a copy)."""
        return self._optimized.__copy__()

    def _infer_bound(self, sym):
        names = sym.list_arguments() + sym.list_auxiliary_states()
        arrays = self.arg_arrays + self.aux_arrays
        shapes = {n: a.shape for n, a in zip(names, arrays)}
        dtypes = {n: a.dtype for n, a in zip(names, arrays)}
        inf = infer(sym, shapes, dtypes)
        for n, a in zip(inf.args + inf.auxs, arrays):
            s = inf.shapes.get((id(n), 0))
            if s != a.shape:  # pragma: no cover - inference keeps given shapes
                raise MXNetError("bind: %s has shape %s but the graph needs %s"
                                 % (n.name, a.shape, s))
        for e in sym._outputs:
            if inf.shape_of(e) is None:
                raise MXNetError("bind: cannot infer the shape of output %s"
                                 % e[0].output_name(e[1]))
        return inf

    # ---------------------------------------------------------- dicts
    @staticmethod
    def _get_dict(names, ndarrays):
        if len(set(names)) != len(names):
            raise ValueError("Duplicate names detected, %s" % str(names))
        return dict(zip(names, ndarrays))

    @property
    def arg_dict(self):
        if self._arg_dict is None:
            self._arg_dict = Executor._get_dict(self._symbol.list_arguments(), self.arg_arrays)
        return self._arg_dict

    @property
    def grad_dict(self):
        if self._grad_dict is None:
            self._grad_dict = Executor._get_dict(self._symbol.list_arguments(),
                                                 self.grad_arrays)
        return self._grad_dict

    @property
    def aux_dict(self):
        if self._aux_dict is None:
            self._aux_dict = Executor._get_dict(self._symbol.list_auxiliary_states(),
                                                self.aux_arrays)
        return self._aux_dict

    @property
    def output_dict(self):
        if self._output_dict is None:
            self._output_dict = Executor._get_dict(self._symbol.list_outputs(), self.outputs)
        return self._output_dict

    # ---------------------------------------------------------- running
    def forward(self, is_train=False, **kwargs):
        """Run the graph (pushed to the engine; returns at once) and return ``outputs``.

        Keyword arguments are copied into the bound argument arrays first."""
        if kwargs:
            arg_dict = self.arg_dict
            for name, array in kwargs.items():
                if not isinstance(array, (NDArray, np.ndarray)):
                    raise ValueError("only accept keyword argument of NDArrays and "
                                     "numpy.ndarray (%s is %s)" % (name, type(array).__name__))
                if name not in arg_dict:
                    raise UnknownArgumentError("Unknown argument %s; the arguments are %s"
                                    % (name, ", ".join(arg_dict)))
                if arg_dict[name].shape != array.shape:
                    raise ArgumentError("Shape not match! Argument %s, need: %s, received: %s"
                                    % (name, str(arg_dict[name].shape), str(array.shape)))
                arg_dict[name][:] = array
        monitor = self._monitor
        if self._recorded:
            for o in self.outputs:
                o._ag = None
        if is_train and self._grad_idx:
            views = [self._views[i] for i in self._grad_idx]
            autograd.mark_variables(views, [None] * len(views),
                                    [self._grad_req[i] for i in self._grad_idx])
            self._tape_names = {} if monitor is not None else None
            with autograd.record(train_mode=True):
                if not self._run_fused(self._views):
                    self._run_plan(self._views + self.aux_arrays,
                                   monitor, self._monitor_all, self._tape_names)
            self._recorded = True
        else:
            with autograd.pause(train_mode=bool(is_train)):
                if not self._run_fused(self.arg_arrays):
                    self._run_plan(self.arg_arrays + self.aux_arrays,
                                   monitor, self._monitor_all)
            self._recorded = False
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the outputs (times ``out_grads``, ones where not given)
        into ``grad_arrays``, as ``grad_req`` says. Returns at once."""
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads.get(k) for k in self._symbol.list_outputs()]
        out_grads = list(out_grads)
        for g in out_grads:
            if g is not None and not isinstance(g, NDArray):
                raise TypeError("inputs must be NDArray")
        # MXNet's GraphExecutor reads one head gradient per output and ignores
        # any extra ones (MXNet's own test_prelu passes one per input)
        out_grads = out_grads[:len(self.outputs)]
        if not self._grad_idx:
            return
        if not self._recorded:
            # MXNet allows backward after forward(is_train=False): replay that
            # forward (same inputs, inference mode) with the graph recorded
            views = [self._views[i] for i in self._grad_idx]
            autograd.mark_variables(views, [None] * len(views),
                                    [self._grad_req[i] for i in self._grad_idx])
            self._tape_names = {} if self._monitor is not None else None
            with autograd.record(train_mode=False):
                if not self._run_fused(self._views):
                    self._run_plan(self._views + self.aux_arrays,
                                   self._monitor, self._monitor_all, self._tape_names)
            self._recorded = True
        out_grads += [None] * (len(self.outputs) - len(out_grads))
        heads, hgrads = [], []
        for o, g in zip(self.outputs, out_grads):
            if o._ag is None:
                continue            # an output that no gradient flows through
            if g is not None and g.shape != o.shape:
                if (g.size == 0 and o.size == 0) or autograd._ignores_ograd(o):
                    continue        # MXNet never reads (nor checks) this head gradient
                raise ArgumentError("backward: out_grad of shape %s for output of shape %s"
                                % (g.shape, o.shape))
            if g is not None and g._st.ctx != o._st.ctx:
                # MXNet's GraphExecutor copies head gradients into its own
                # arrays (CopyFromTo): one from another device is moved here
                with autograd.pause():
                    g = g.as_in_context(o.context)
            if g is not None and g.dtype != o.dtype:
                # MXNet copies head gradients into arrays of the outputs' dtypes
                with autograd.pause():
                    g = g.astype(o.dtype)
            heads.append(o)
            hgrads.append(g)
        views = [self._views[i] for i in self._grad_idx]
        observe = self._backward_monitor()
        prev = autograd._state.bwd_observer
        autograd._state.bwd_observer = observe
        try:
            with _engine.bulk_scope("backward", "backward"):
                self._write_grads(heads, hgrads, views, is_train)
        finally:
            autograd._state.bwd_observer = prev

    def _backward_monitor(self):
        """With a monitor installed: a tape observer passing each op's input
        gradients to it, named as MXNet's backward nodes are
        (``<op>_backward_output`` or ``<op>_backward_output<i>``); an input
        that needs no gradient is reported as zeros."""
        monitor, names = self._monitor, self._tape_names
        if monitor is None or not names:
            return None

        def observe(node, igrads):
            name = names.get(id(node))
            if name is None:
                return
            with autograd.pause():
                for i, g in enumerate(igrads):
                    if g is None:
                        g = _nd.zeros_like(node.inputs[i])
                    monitor("%s_backward_output%s" % (name, "" if len(igrads) == 1 else i), g)
        return observe

    def _write_grads(self, heads, hgrads, views, is_train):
        if heads:
            targets = self._grad_targets()
            grads = self._fused_grads(heads, hgrads, targets)
            if grads is None:
                grads = autograd._run_backward(heads, hgrads, views, True, False, is_train,
                                               targets)
        else:
            grads = [None] * len(views)
        with autograd.pause(train_mode=is_train):
            for i, g in zip(self._grad_idx, grads):
                tgt = self.grad_arrays[i]
                if g is tgt:
                    continue        # computed in its buffer (a 'write' gradient)
                req = self._grad_req[i]
                if g is None:
                    if req == "write":
                        tgt[:] = 0
                    continue
                if g.dtype != tgt.dtype:
                    g = g.astype(tgt.dtype)
                if req == "add":
                    tgt += g
                else:
                    tgt[:] = g

    def _fused_grads(self, heads, hgrads, targets):
        """The gradients (per ``_grad_idx``) of the fused forward this
        executor recorded last, from its backward plan pushed straight away:
        what ``autograd._run_backward`` computes for that one-node tape,
        without walking it. None unless every output is a head of that one
        live node and nothing records (then the tape walk decides)."""
        outs = self.outputs
        if len(heads) != len(outs) or _tape.state.recording:
            return None
        node = None
        for i, (h, o) in enumerate(zip(heads, outs)):
            ag = h._ag
            if h is not o or type(ag) is not _tape.Entry or ag.index != i:
                return None
            if node is None:
                node = ag.node
            elif ag.node is not node:
                return None
        fn = node.fn
        if node.freed or not getattr(fn, "fused", False) or len(node.outputs) != len(outs):
            return None
        edges = node.edges
        tg = [None] * len(edges)
        for i, t in zip(self._grad_idx, targets):
            if type(edges[i]) is not _tape.Leaf:
                return None
            tg[i] = t
        ograds = []
        for i, (g, o) in enumerate(zip(hgrads, outs)):
            if g is None:
                # an output whose head gradient no rule reads (a loss output)
                # needs none made
                g = o if fn.ignores_ograd(i) else _nd.ones_like(_tape.alias(o))
            elif g._sparse:
                return None
            ograds.append(g)
        grads = fn._backward_entry(ograds, node.inputs, tg)
        return [grads[i] for i in self._grad_idx]

    def _grad_targets(self):
        """Per gradient argument, its 'write' buffer where backward may
        compute the gradient in place (MXNet's kWriteTo), else None: never a
        buffer shared with another gradient, an argument, an aux state or an
        output (backward reads those, or a later write would undo it)."""
        grads = self.grad_arrays
        seen = {}
        for a in self.arg_arrays + self.aux_arrays + self.outputs:
            seen[id(a._st)] = 2
        for i in self._grad_idx:
            k = id(grads[i]._st)
            seen[k] = seen.get(k, 0) + 1
        out = []
        for i in self._grad_idx:
            g = grads[i]
            ok = (self._grad_req[i] == "write" and seen[id(g._st)] == 1
                  and g._dtype == self.arg_arrays[i]._dtype)
            out.append(g if ok else None)
        return out

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` for every op output of each forward."""
        self._monitor = callback
        self._monitor_all = monitor_all

    # ---------------------------------------------------------- params
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy ``arg_params``/``aux_params`` (name -> NDArray) into the bound arrays."""
        for name, array in arg_params.items():
            if name in self.arg_dict:
                dst = self.arg_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ArgumentError('Find name "%s" that is not in the arguments' % name)
        if aux_params is None:
            return
        for name, array in aux_params.items():
            if name in self.aux_dict:
                dst = self.aux_dict[name]
                array.astype(dst.dtype).copyto(dst)
            elif not allow_extra_params:
                raise ArgumentError("Find name %s that is not in the auxiliary states" % name)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing this one's memory."""
        sym = self._symbol
        shapes = {k: tuple(v) for k, v in kwargs.items() if isinstance(v, tuple)}
        inf = _infer_or_raise(sym, shapes, {n: a.dtype for n, a in
                                            zip(sym.list_arguments(), self.arg_arrays)},
                              "reshape")

        def new(name, old, shape, given):
            if shape == old.shape:
                return old
            if not given and not partial_shaping:
                raise MXNetError("reshape: the new shape of %s is %s, different from %s; pass "
                                 "partial_shaping=True to allow changing arguments that were "
                                 "not given" % (name, _shape_str(shape), _shape_str(old.shape)))
            if int(np.prod(shape)) > old.size:
                if not allow_up_sizing:
                    raise MXNetError(
                        "reshape: New shape of arg: %s is larger than original. First making a "
                        "big executor and then down sizing it is more efficient than the "
                        "reverse. If you really want to up size, set allow_up_sizing=True to "
                        "enable allocation of new arrays." % name)
                return zeros(shape, ctx=self._ctx, dtype=old.dtype)
            return _reshaped(old, shape)

        args, grads = [], []
        for n, a, g in zip(inf.args, self.arg_arrays, self.grad_arrays):
            shape = inf.shapes[(id(n), 0)]
            args.append(new(n.name, a, shape, n.name in shapes))
            grads.append(None if g is None else new(n.name, g, shape, True))
        auxs = [new(n.name, a, inf.shapes[(id(n), 0)], True)
                for n, a in zip(inf.auxs, self.aux_arrays)]
        return Executor(sym, self._ctx, args, grads, self._grad_req, auxs, self._group2ctx,
                        inf, shared_outputs=self.outputs)

    def debug_str(self):
        text = self._symbol.debug_str()
        nbytes = self._planned_bytes()
        if nbytes is not None:
            # MXNet's line, which scripts (and its test_zero_prop) parse
            text += "Total %d MB allocated\n" % (nbytes >> 20)
        return text

    def _planned_bytes(self):
        """What one forward (and backward, when gradients are asked for)
        allocates beyond the bound arrays, from the compiled plans."""
        if self._fused is None:
            return None
        args = self._views + self.aux_arrays + self.outputs
        need = tuple(i in self._grad_idx for i in range(len(args)))
        if any(need):
            n = self._fused.planned_bytes(args, self._ctx, True, need)
            if n is not None:
                return n
        # no gradient reaches the outputs (stop_gradient): forward alone
        return self._fused.planned_bytes(args, self._ctx, False, ())

    def __repr__(self):
        return "<Executor %s on %s>" % (", ".join(self._symbol.list_outputs()), self._ctx)


Symbol._executor_cls = Executor

from .. import ndarray  # noqa: E402,F401  (mxnet.executor.ndarray)
from .._ctypes_helpers import c_str_array  # noqa: E402,F401  (MXNet helper in mx.executor)
