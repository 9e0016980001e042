"""``mx.operator``: operators written in Python (MXNet 1.9.1's API).

    class Sqr(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register("sqr")
    class SqrProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Sqr()

    y = mx.nd.Custom(x, op_type="sqr")          # also mx.sym.Custom, in executors,
                                                # Gluon blocks and under autograd

How it runs (MXNet's CustomOperator, natively): a Custom node is one engine
op that reads its inputs and writes its outputs (and auxiliary states). When
its inputs are ready, the user's ``forward``/``backward`` runs on a custom-op
thread (not an engine thread, so it may block on ``asnumpy()``), over
NDArrays that share the op's buffers under fresh engine vars; the op
finishes once everything that code pushed on those arrays has finished, and
fails (poisoning its outputs) if the code or any op it pushed failed. So
``mx.nd.Custom`` returns at once like any op, and errors surface at
``wait_to_read()``/``asnumpy()`` as ``MXNetError``. Under ``mx.engine.naive()``
the code runs at push on the caller's thread.

``infer_shape``, ``infer_type``, ``list_*`` and ``declare_backward_dependency``
are honoured; ``need_top_grad=False`` (loss layers) leaves out the output
gradients. The operator instance made by ``create_operator`` at a forward
is the one whose ``backward`` computes that forward's gradient. Storage
types other than 'default' are not supported (aiond arrays are dense).

The deprecated ``NumpyOp`` / ``NDArrayOp`` (``op.get_symbol(...)``) run on the
same machinery.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import threading
import warnings

import numpy as np

from . import engine as _engine_mod
from .engine.profiler import custom_op_scope as _custom_op_scope
from .base import MXNetError, OpError, ctypes2numpy_shared  # noqa: F401  (MXNet's name here)
from .context import Context, current_context
from .ndarray import NDArray
from .ndarray import _invoke
from .ndarray._invoke import data_of, new_array
from .ndarray.ndarray import _await_result
from .ops import custom as _custom
from .ops import registry as _reg
from .util import is_np_array

__all__ = ["CustomOp", "CustomOpProp", "register", "PythonOp", "NumpyOp", "NDArrayOp",
           "get_all_registered_operators", "get_operator_arguments", "OperatorArguments"]

_engine = _engine_mod.get()


# ------------------------------------------------------------------ the user API


class CustomOp(object):
    """Base class for operators implemented in python"""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Forward interface. ``req`` says how to assign to ``out_data``:
        'null', 'write', 'inplace' or 'add' (``self.assign`` handles it)."""
        pass

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Backward interface: fill ``in_grad`` as ``req`` says."""
        pass

    def assign(self, dst, req, src):
        """Helper function for assigning into dst depending on requirements."""
        if req == 'null':
            return
        if req in ('write', 'inplace'):
            if is_np_array():
                dst[()] = src
            else:
                dst[:] = src
        elif req == 'add':
            if is_np_array():
                dst[()] += src
            else:
                dst[:] += src


class CustomOpProp(object):
    """Base class for operator property class implemented in python.

    ``need_top_grad``: whether the default ``declare_backward_dependency``
    asks for the output gradients (False for loss layers)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(input shapes, output shapes[, aux shapes]) from the input shapes."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(input types, output types[, aux types]) from the input types."""
        return in_type, [in_type[0]] * len(self.list_outputs()), \
            [in_type[0]] * len(self.list_auxiliary_states())

    def infer_storage_type(self, in_stype):
        for i, stype in enumerate(in_stype):
            assert stype == 'default', \
                "Default infer_storage_type implementation doesnt allow non default stypes: " \
                "found non default stype '%s' for in_stype[%d]. Please implement " \
                "infer_storage_type and infer_storage_type_backward interface " \
                "in your custom operator if you have non-default input/output stypes" % (stype, i)
        return in_stype, ['default'] * len(self.list_outputs()), \
            ['default'] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        for i, stype in enumerate(ograd_stype):
            assert stype == 'default', \
                "Default infer_storage_type_backward implementation doesnt allow non default " \
                "stypes: found non default stype '%s' for ograd_stype[%d]." % (stype, i)
        for i, stype in enumerate(igrad_stype):
            if stype == 'undefined':
                stype = 'default'
            assert stype == 'default', \
                "Default infer_storage_type_backward implementation doesnt allow non default " \
                "stypes: found non default stype '%s' for igrad_stype[%d]." % (stype, i)
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        for lst in lists:
            lst[:] = len(lst) * ['default']
        return lists[0], lists[1], lists[2], lists[3], lists[4]

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs ``backward`` needs (out_grad, in_data, out_data)."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The CustomOp that computes, for this context, shapes and dtypes."""
        return CustomOp()


def register(reg_name):
    """Register a subclass of CustomOpProp to the registry with name reg_name."""
    def do_register(prop_cls):
        _custom.register_prop(reg_name, prop_cls)
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)


# ------------------------------------------------------------------ running


_pool = None
_pool_lock = threading.Lock()


def _user_pool():
    """Threads that run user forward/backward code (MXNet's custom-op
    threads, ``MXNET_CUSTOM_OP_NUM_THREADS``): not engine threads, so the
    code may block on results, and several may run (custom ops nest)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                n = int(os.environ.get("MXNET_CUSTOM_OP_NUM_THREADS", "16") or 16)
                _pool = concurrent.futures.ThreadPoolExecutor(max(n, 1), "aiond-custom-op")
    return _pool


def _after_fork():
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def _alias(a, ctx):
    """An NDArray over ``a``'s buffer under a fresh engine var (MXNet's
    AllocateNDArrayCopy): what user code pushes on it is tracked apart from
    the custom op that holds the original's var. A sparse array's alias
    starts from its current value (ops replace a sparse value whole: what
    the user code writes is adopted back by ``_adopt``)."""
    if a._sparse:
        from .ndarray._sparse_invoke import new_sparse, value_of
        h = new_sparse(a.stype, a._shape, a._dtype, ctx, a._st.aux_types)
        h._st.arr = value_of(a)
        return h
    buf = data_of(a)
    h = new_array(a._shape, a._dtype, ctx)
    h._st.set(buf)
    return h


def _adopt(arrays, aliases, written):
    """The values user code gave the aliases of written sparse arrays."""
    for a, al in zip(arrays, aliases):
        if a is not None and a._sparse and id(a) in written and al._st.arr is not a._st.arr:
            a._st.arr = al._st.arr


def _run_user(body, ctx, arrays, name):
    """Run ``body(aliases)`` in user code, with the arrays aliased; returns the
    aliases (None where an array is None). The profiler sees the ops it
    pushes under "Custom Operator"."""
    aliases = [None if a is None else _alias(a, ctx) for a in arrays]
    with ctx, _custom_op_scope(name):
        body(aliases)
    return aliases


async def _finish(aliases, name):
    # everything the user code pushed on the aliases: a write after all of it
    # (rw, so a failed op poisons it and the custom op fails too)
    if not aliases:
        return
    opr = _engine.push(None, (), tuple(dict.fromkeys(a._st.var for a in aliases)),
                       name + " (finish)", 0, False, True)
    await _await_result(opr, name)


def _push(name, body, ctx, reads, writes, arrays):
    """One engine op reading ``reads`` and writing ``writes`` whose work is
    ``body(aliases of arrays)``, run as user code on a custom-op thread."""
    written = {id(a) for a in writes}
    if _engine_mod.is_naive():
        # everything runs at push: the user code too, on the caller's thread
        try:
            _adopt(arrays, _run_user(body, ctx, arrays, name), written)
        except MXNetError:
            raise
        except Exception as e:  # noqa: BLE001 - reported as MXNet does
            raise MXNetError("Error in operator %s: %s: %s" % (name, type(e).__name__, e)) \
                from e
        return None
    wvars = tuple(dict.fromkeys(a._st.var for a in writes))
    rvars = tuple(dict.fromkeys(a._st.var for a in reads if a._st.var not in wvars))
    rw = any(a._st.var in wvars for a in reads)

    def fn():
        async def run():
            loop = asyncio.get_running_loop()
            aliases = await loop.run_in_executor(_user_pool(), _run_user, body, ctx, arrays, name)
            await _finish([a for a in aliases if a is not None], name)
            _adopt(arrays, aliases, written)
        return run()
    return _engine.push(fn, rvars, wvars, name, 0, False, rw, None,
                        _engine_mod._async_executor())


def _reqs(n, req="write"):
    return [req] * n


def _custom_invoke(op, inputs, attrs, out, ctx):
    """``invoke`` for the Custom entry: shapes and dtypes from the prop, then
    one engine op running the user's forward."""
    prop = _custom.prop_of(attrs)
    n_in, n_out, n_aux = _custom.counts(prop)
    if inputs:
        ctx = inputs[0]._st.ctx
        for x in inputs:
            if x._st.ctx is not ctx:
                raise MXNetError("Custom: all inputs must be on the same context")
    elif ctx is None:
        ctx = current_context()
    elif not isinstance(ctx, Context):
        ctx = Context(ctx)
    shapes = [x._shape for x in inputs]
    dtypes = [x._dtype for x in inputs]
    try:
        oshapes, odtypes = op.infer(attrs, shapes, dtypes)
    except OpError as e:
        raise OpError("Custom (op_type %s): %s" % (attrs.get("op_type"), e)) from None
    except Exception as e:  # noqa: BLE001 - user code
        raise MXNetError("Error in %s.infer_shape/infer_type: %s: %s"
                         % (attrs.get("op_type"), type(e).__name__, e)) from e
    args, auxs = list(inputs[:n_in]), list(inputs[n_in:])
    args, auxs, ostypes, back = _storage_fallback(prop, args, auxs, n_out)
    if out is None:
        outs = [_new_out(st, tuple(s), np.dtype(d), ctx)
                for st, s, d in zip(ostypes, oshapes, odtypes)]
        req = "write"
    else:
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != n_out:
            raise OpError("Custom: out= has %d array(s) but the op has %d output(s)"
                          % (len(outs), n_out))
        req = "write"
    inst = prop.create_operator(ctx, [list(s) for s in shapes[:n_in]],
                                [np.dtype(d).type for d in dtypes[:n_in]])
    attrs = dict(attrs)
    attrs["_op"] = inst
    is_train = bool(_invoke.hooks.is_training())
    op_type = attrs["op_type"]

    def body(al):
        inst.forward(is_train=is_train, req=_reqs(n_out, req), in_data=al[:n_in],
                     out_data=al[n_in:n_in + n_out], aux=al[n_in + n_out:])
    rec = _invoke.hooks.record
    if rec is not None:
        rec(op, inputs, attrs, outs)
    _push(op_type, body, ctx, args, outs + auxs, args + outs + auxs)
    if back:
        from .ndarray._sparse_invoke import assign
        for tmp, orig in back:      # aux states the op saw as dense temporaries
            assign(tmp, orig)
    return outs[0] if n_out == 1 and not isinstance(out, (list, tuple)) else outs


def _new_out(stype, shape, dtype, ctx):
    if stype in (None, "default"):
        return new_array(shape, dtype, ctx)
    from .ndarray._sparse_invoke import new_sparse
    return new_sparse(stype, shape, dtype, ctx)


def _storage_fallback(prop, args, auxs, n_out):
    """MXNet's storage fallback around a Custom op: the storage types its
    prop declares (``infer_storage_type``) for the actual inputs; a sparse
    input or aux state it declares 'default' is handed over as a dense copy
    (aux states are written back after). Returns (args, auxs, output
    stypes, [(dense copy, aux state)])."""
    stypes = [x.stype for x in args] + [a.stype for a in auxs]
    if all(st == "default" for st in stypes):
        return args, auxs, [None] * n_out, []
    try:
        ist, ost, ast = _custom._split3(prop.infer_storage_type([x.stype for x in args]),
                                        "infer_storage_type")
    except (AssertionError, OpError) as e:
        raise MXNetError("Custom: %s" % e) from None
    args = [x.tostype("default") if x._sparse and st == "default" else x
            for x, st in zip(args, ist)] + list(args[len(ist):])
    back = []
    new_auxs = []
    for j, a in enumerate(auxs):
        if a._sparse and j < len(ast) and ast[j] == "default":
            tmp = a.tostype("default")
            back.append((tmp, a))
            new_auxs.append(tmp)
        else:
            new_auxs.append(a)
    ost = list(ost) + [None] * (n_out - len(ost))
    return args, new_auxs, ost[:n_out], back


def _custom_grad(F, attrs, inputs, outputs, ograds):
    """The gradient of a Custom node: ``backward`` of the operator instance
    that ran its forward, as one engine op (MXNet's ``_backward_Custom``)."""
    prop = _custom.prop_of(attrs)
    inst = attrs["_op"]
    n_in, n_out, n_aux = _custom.counts(prop)
    og = list(range(n_out))
    ind = list(range(n_out, n_out + n_in))
    od = list(range(n_out + n_in, 2 * n_out + n_in))
    deps = set(int(d) for d in prop.declare_backward_dependency(og, ind, od))
    pool = list(ograds) + list(inputs[:n_in]) + list(outputs)
    given = [pool[i] if i in deps else None for i in range(len(pool))]
    auxs = list(inputs[n_in:])
    args = inputs[:n_in]
    ctx = args[0]._st.ctx if args else outputs[0]._st.ctx
    igrads = [new_array(x._shape, x._dtype, ctx) for x in args]
    op_type = attrs["op_type"]
    is_train = bool(_invoke.hooks.is_training())

    def body(al):
        # al: the given (dependency) arrays in pool order, then in_grads, then auxs
        it = iter(al)
        vals = [next(it) if g is not None else None for g in given]
        ig = [next(it) for _ in igrads]
        ax = [next(it) for _ in auxs]
        inst.backward(req=_reqs(n_in), out_grad=vals[:n_out], in_data=vals[n_out:n_out + n_in],
                      out_data=vals[n_out + n_in:], in_grad=ig, aux=ax)
    # untouched gradients are zero, as MXNet's executors give them
    for g in igrads:
        data_zero = _reg.get("_zeros")
        _invoke.invoke(data_zero, [], {"shape": g._shape, "dtype": g._dtype}, g, ctx)
    _push("_backward_" + op_type, body, ctx, [g for g in given if g is not None] + auxs,
          igrads, [g for g in given if g is not None] + igrads + auxs)
    return igrads + [None] * n_aux


_entry = _reg.get("Custom")
_entry.grad = _custom_grad
_reg.set_invoke_hook(_custom.CustomEntry, _custom_invoke)


# ------------------------------------------------------------------ deprecated PythonOp


class PythonOp(object):
    """Base class for operators implemented in Python (deprecated: use CustomOp)."""
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        warnings.warn('PythonOp has been deprecated. Please use CustomOp')

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def need_top_grad(self):
        return self.need_top_grad_

    def _symbol(self, numpy_buffers, *args, **kwargs):
        """The op as a Custom symbol whose prop and operator call this object."""
        from . import symbol
        me = self
        reg_name = "_%s_%x" % (type(self).__name__, id(self))

        class _Op(CustomOp):
            def forward(self, is_train, req, in_data, out_data, aux):
                if numpy_buffers:
                    me.forward(in_data=[data_of(a) for a in in_data],
                               out_data=[data_of(a) for a in out_data])
                else:
                    me.forward(in_data=in_data, out_data=out_data)

            def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
                if numpy_buffers:
                    arr = lambda xs: [None if a is None else data_of(a) for a in xs]  # noqa
                    me.backward(out_grad=arr(out_grad), in_data=arr(in_data),
                                out_data=arr(out_data), in_grad=arr(in_grad))
                else:
                    me.backward(out_grad=out_grad, in_data=in_data, out_data=out_data,
                                in_grad=in_grad)

        class _Prop(CustomOpProp):
            def __init__(self):
                super().__init__(me.need_top_grad())

            def list_arguments(self):
                return me.list_arguments()

            def list_outputs(self):
                return me.list_outputs()

            def infer_shape(self, in_shape):
                ishape, oshape = me.infer_shape(in_shape)
                return ishape, oshape, []

            def declare_backward_dependency(self, out_grad, in_data, out_data):
                f = getattr(me, "declare_backward_dependency", None)
                if f is not None:
                    return f(out_grad, in_data, out_data)
                return super().declare_backward_dependency(out_grad, in_data, out_data)

            def create_operator(self, ctx, in_shapes, in_dtypes):
                return _Op()

        register(reg_name)(_Prop)
        PythonOp._ref_holder.append(self)
        return symbol.Custom(*args, op_type=reg_name, **kwargs)


class NumpyOp(PythonOp):
    """An operator over numpy arrays (deprecated: use CustomOp). ``forward``
    and ``backward`` get numpy arrays sharing the op's buffers."""

    def __init__(self, need_top_grad=True):
        super(NumpyOp, self).__init__(need_top_grad)
        warnings.warn('NumpyOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return self._symbol(True, *args, **kwargs)


class NDArrayOp(PythonOp):
    """An operator over NDArrays (deprecated: use CustomOp)."""

    def __init__(self, need_top_grad=True):
        super(NDArrayOp, self).__init__(need_top_grad)
        warnings.warn('NDArrayOp has been deprecated. Please use CustomOp')

    def get_symbol(self, *args, **kwargs):
        return self._symbol(False, *args, **kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps


# ------------------------------------------------------------------ introspection


def get_all_registered_operators():
    """Names of all registered operators (the registry's, aliases included)."""
    return sorted(_reg.ops())


OperatorArguments = collections.namedtuple('OperatorArguments', ['narg', 'names', 'types'])


_TYPE_NAMES = {"p_int": "int", "p_float": "float", "p_bool": "boolean", "p_shape": "Shape(tuple)",
               "p_str": "string", "p_axis": "Shape or None", "p_dtype": "{None, 'float16', "
               "'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}"}


def _type_str(p):
    if p.choices is not None:
        t = "{%s}" % ", ".join(repr(c) for c in sorted(p.choices, key=str))
    else:
        t = _TYPE_NAMES.get(getattr(p.parse, "__name__", ""), "any")
    if p.default is _reg.Null:
        return t + ", required"
    return "%s, optional, default=%r" % (t, str(p.default) if p.default is not None else "None")


def get_operator_arguments(op_name):
    """(narg, names, types) of ``op_name``'s arguments: its inputs, then its
    parameters, with MXNet's type strings ("{'relu', 'tanh'}, required")."""
    op = _reg.get(op_name)
    names = [n.lstrip("*") for n in op.inputs] + [p.name for p in op.params]
    types = ["NDArray-or-Symbol"] * len(op.inputs) + [_type_str(p) for p in op.params]
    return OperatorArguments(len(names), names, types)


def __getattr__(name):
    # the modules MXNet's operator.py imports under these names
    if name in ("context", "symbol"):
        import importlib
        return importlib.import_module("aiond." + name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
