"""``invoke``: from an op, its inputs and attrs to pushed work and result
handles. The hottest path in the project: the shape rule runs now (a bad
shape raises at the user's line), outputs are thin handles over lazily
allocated storage, and the engine push is O(1)."""
from __future__ import annotations

import math

import numpy as np

from .. import engine as _engine_mod
from ..base import MXNetError, OpError
from ..context import Context, current_context
from ..engine.cpu import SPLIT_MIN
from ..engine.storage import Storage
from ..ops.onednn import kept_scope as _kept_scope
from ..ops.registry import hooks as _op_hooks

__all__ = ["invoke", "prepare", "PreparedCall", "data_of", "new_array", "INLINE_MAX", "hooks"]

INLINE_MAX = 1 << 14          # elements touched; below this a thread hop costs more
ROWS_SPLIT_MIN = 1 << 19      # estimated work above which a matmul is split by rows
_engine = _engine_mod.get()
_push = _engine.push
_prod = math.prod
_np = np
_EMPTY = {}


class hooks:
    """Set by higher layers (autograd installs ``record`` while some thread
    records, ``is_training`` and ``is_recording``); ndarray never imports them."""
    record = None
    is_training = staticmethod(lambda: False)
    is_recording = staticmethod(lambda: False)
    load_npi_fallbacks = None     # the top package: imports aiond.numpy_op_fallback
    load_numpy = None             # the top package: imports aiond.numpy


_HELD_COPY_MAX = 128 << 10


def host_copy(a, dtype):
    """A C-contiguous copy of numpy array ``a`` as ``dtype``. A small
    contiguous array of that dtype is copied without releasing the GIL:
    numpy releases it for copies of over 500 elements, and a thread that
    releases it (an event loop, say) then waits for the engine's workers to
    hand it back, 100 µs and more when they run Python, for a copy of 1 µs."""
    if (a.dtype == dtype and a.nbytes <= _HELD_COPY_MAX and a.flags.c_contiguous
            and type(a) is np.ndarray):
        return np.ndarray(a.shape, dtype, bytearray(a.data))
    return np.array(a, dtype=dtype, copy=True, order="C")


def data_of(h):
    """The numpy array behind handle ``h`` (a view for sliced/reshaped handles)."""
    st = h._st
    a = st.arr
    if a is None:
        a = st._alloc()
    off = h._off
    if off is None:
        return a
    return a.reshape(-1)[off:off + _prod(h._shape)].reshape(h._shape)


_NDArray = None     # set by ndarray.py (which imports this module)


def new_array(shape, dtype, ctx):
    if ctx.device_typeid == 2:
        from ._gpu import new_array as gpu_array
        return gpu_array(shape, dtype, ctx)
    h = _NDArray.__new__(_NDArray)
    h._st = Storage(shape, dtype, ctx)
    h._shape = shape
    h._dtype = dtype
    h._off = None
    h._ag = None
    return h


class _Call:
    """The deferred kernel call of one pushed op."""
    __slots__ = ("op", "ins", "outs", "attrs", "rng")

    def __init__(self, op, ins, outs, attrs, rng=None):
        self.op, self.ins, self.outs, self.attrs, self.rng = op, ins, outs, attrs, rng

    def __call__(self):
        outs = self.outs
        if len(outs) == 1:
            y = outs[0]
            out = y._st.arr
            if out is None or y._off is not None:
                out = data_of(y)
        else:
            out = [data_of(y) for y in outs]
        ins = self.ins
        n = len(ins)
        if n == 2:
            x, z = ins
            a = x._st.arr
            if a is None or x._off is not None:
                a = data_of(x)
            b = z._st.arr
            if b is None or z._off is not None:
                b = data_of(z)
            ins = (a, b)
        elif n == 1:
            x = ins[0]
            a = x._st.arr
            if a is None or x._off is not None:
                a = data_of(x)
            ins = (a,)
        else:
            ins = [data_of(x) for x in ins]
        if self.rng is not None:
            self.op.kernel(_np, *ins, out=out, rng=self.rng, **self.attrs)
        elif self.op.rows is not None:
            # as split_rows: the kernel may keep what it derives from an input
            # by its version, and picks the same kernel as split or in a plan
            with _kept_scope(ins, self.ins, self.outs):
                self.op.kernel(_np, *ins, out=out, **self.attrs)
        else:
            self.op.kernel(_np, *ins, out=out, **self.attrs)

    def split(self):
        """(n, run(lo, hi)) over flat ranges, for same-shaped elementwise ops."""
        out = data_of(self.outs[0])
        ins = [data_of(x) for x in self.ins]
        if out.size < SPLIT_MIN:
            return 0, None
        for a in ins:
            if a.shape != out.shape:
                return 0, None
        fo = out.reshape(-1)
        fi = [a.reshape(-1) for a in ins]
        kern, attrs = self.op.kernel, self.attrs

        def run(lo, hi):
            kern(_np, *[a[lo:hi] for a in fi], out=fo[lo:hi], **attrs)
        return fo.size, run

    def split_rows(self):
        """(n, run(lo, hi)) over output rows, for matmul-like ops."""
        ins = [data_of(x) for x in self.ins]
        # the plan may keep what it derives from an input by its version
        # (oneDNN's reordered weights)
        with _kept_scope(ins, self.ins, self.outs):
            return self.op.rows(_np, ins, data_of(self.outs[0]), self.attrs)


def _ctx_error(op, inputs):
    ctxs = ", ".join("%s on %s" % (op.inputs[i] if i < len(op.inputs) else "input %d" % i,
                                   x._st.ctx) for i, x in enumerate(inputs))
    return MXNetError("%s: all inputs must be on the same context, got %s; move them with "
                      ".as_in_context(ctx) or .copyto(ctx)" % (op.name, ctxs))


def invoke(op, inputs, attrs, out=None, ctx=None):
    """Push ``op`` on NDArray ``inputs``; returns the output handle (a list
    for multi-output ops). ``out`` (an NDArray or list) receives the result
    in place; ``ctx`` places ops without inputs."""
    if op.invoke_hook is not None:
        return op.invoke_hook(op, inputs, attrs, out, ctx)
    n_in = len(inputs)
    if n_in == 1:
        x0 = inputs[0]
        if x0._sparse:
            return _sparse(op, inputs, attrs, out, ctx)
        ctx = x0._st.ctx
        shapes = (x0._shape,)
        dtypes = (x0._dtype,)
    elif n_in == 2:
        x0, x1 = inputs
        if x0._sparse or x1._sparse:
            return _sparse(op, inputs, attrs, out, ctx)
        ctx = x0._st.ctx
        if x1._st.ctx is not ctx:
            raise _ctx_error(op, inputs)
        shapes = (x0._shape, x1._shape)
        dtypes = (x0._dtype, x1._dtype)
    elif n_in:
        ctx = inputs[0]._st.ctx
        for x in inputs:
            if x._sparse:
                return _sparse(op, inputs, attrs, out, ctx)
            if x._st.ctx is not ctx:
                raise _ctx_error(op, inputs)
        shapes = [x._shape for x in inputs]
        dtypes = [x._dtype for x in inputs]
    else:
        if ctx is None:
            ctx = current_context()
        elif not isinstance(ctx, Context):
            ctx = Context(ctx)
        shapes = dtypes = ()
    if out is not None and _sparse_out(out):
        return _sparse(op, inputs, attrs, out, ctx)
    try:
        oshapes, odtypes = op.infer(attrs, shapes, dtypes)
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    if ctx.device_typeid == 2:
        from ._gpu import invoke as gpu_invoke
        return gpu_invoke(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes)
    if op.train_aware:
        attrs = dict(attrs)
        attrs["_train"] = hooks.is_training()
    if op.mutates:
        return _invoke_general(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes)
    if len(oshapes) == 1 and n_in <= 2 and not op.needs_rng:
        shape = oshapes[0]
        if out is None:
            # the common case, kept lean: one fresh output, at most two inputs
            dt = odtypes[0]
            st = Storage(shape, dt, ctx)
            y = _NDArray.__new__(_NDArray)
            y._st = st
            y._shape = shape
            y._dtype = dt
            y._off = None
            y._ag = None
        elif (isinstance(out, _NDArray) and (not n_in or out is not x0) and out._off is None
              and out._st.shape == out._shape and shape == out._shape
              and odtypes[0] == out._dtype and out._st.ctx is ctx):
            # into a whole array (``y[:] = x``, ``x.copyto(y)``, ``out=y``), the
            # same push when no input shares it
            y = out
            dt = out._dtype
        else:
            y = None
        if y is not None:
            w = y._st.var
            size = work = _prod(shape)
            if n_in == 2:
                v0 = x0._st.var
                v1 = x1._st.var
                reads = (v0,) if v0 is v1 else (v0, v1)
                work += _prod(shapes[0]) + _prod(shapes[1])
            elif n_in == 1:
                reads = (x0._st.var,)
                work += _prod(shapes[0])
            else:
                reads = ()
            if out is None or w not in reads:
                outs = (y,)
                rec = hooks.record
                if rec is not None:
                    rec(op, inputs, attrs, outs)
                call = _Call(op, inputs, outs, attrs, None)
                inline = op.inline
                split = None
                if inline is True:
                    if op.elemwise and size >= SPLIT_MIN:
                        split = call.split      # split across the workers: theirs
                        inline = False
                    else:
                        inline = work <= INLINE_MAX or op.caller
                elif inline:
                    cost = inline(attrs, shapes, oshapes)
                    inline = cost <= INLINE_MAX or op.caller
                    if op.rows is not None and cost >= ROWS_SPLIT_MIN:
                        split = call.split_rows
                else:
                    inline = op.caller
                _push(call, reads, (w,), op.name, size * dt.itemsize, inline, False, split)
                return y
    if (out is not None and 0 < n_in <= 2 and out is inputs[0] and len(oshapes) == 1
            and out._off is None
            and oshapes[0] == out._shape and odtypes[0] == out._dtype and not op.needs_rng):
        # in place on a whole array (``a += 1``, ``a += b``): write its var, read the rest
        v = out._st.var
        work = _prod(out._shape)
        if n_in == 2 and x1._st.var is not v:
            reads = (x1._st.var,)
            work += _prod(shapes[1])
        else:
            reads = ()
        work *= 2
        rec = hooks.record
        if rec is not None:
            rec(op, inputs, attrs, [out])
        call = _Call(op, inputs, (out,), attrs, None)
        if op.elemwise and _prod(out._shape) >= SPLIT_MIN:
            _push(call, reads, (v,), op.name, 0, False, True, call.split)
        else:
            _push(call, reads, (v,), op.name, 0,
                  (op.inline is True and work <= INLINE_MAX) or op.caller, True, None)
        return out
    return _invoke_general(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes)


def _sparse_out(out):
    if isinstance(out, (list, tuple)):
        return any(o._sparse for o in out)
    return out._sparse


def _sparse(op, inputs, attrs, out, ctx):
    from ._sparse_invoke import sparse_invoke
    return sparse_invoke(op, inputs, attrs, out, ctx)


def _invoke_general(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes):
    pc = _prepare(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes)
    rec = hooks.record
    if rec is not None:
        rec(op, inputs, attrs, pc.outs)
    pc.push()
    return result_of(op, attrs, out, pc.outs)


class PreparedCall:
    """An op call with its checks done and its vars worked out: ``push()``
    pushes it again, on the same arrays with the same attrs (an optimizer's
    update of the same weights every step)."""
    __slots__ = ("outs", "call", "reads", "writes", "rw", "nbytes", "inline", "split", "name")

    def push(self):
        _push(self.call, self.reads, self.writes, self.name, self.nbytes, self.inline, self.rw,
              self.split)


def prepare(op, inputs, attrs, out):
    """A ``PreparedCall`` of ``invoke(op, inputs, attrs, out)`` for ``out``
    given (an NDArray or list), or None for a call that only ``invoke`` can
    push (sparse arrays, a device, an op drawing random numbers or reading
    the training mode). Raises as ``invoke`` would for bad input."""
    if out is None or op.invoke_hook is not None or op.needs_rng or op.train_aware \
            or not inputs or _sparse_out(out):
        return None
    ctx = inputs[0]._st.ctx
    for x in inputs:
        if x._sparse:
            return None
        if x._st.ctx is not ctx:
            raise _ctx_error(op, inputs)
    if ctx.device_typeid == 2:
        return None
    shapes = [x._shape for x in inputs]
    try:
        oshapes, odtypes = op.infer(attrs, shapes, [x._dtype for x in inputs])
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    return _prepare(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes)


def _prepare(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes):
    if out is None:
        outs = [new_array(s, d, ctx) for s, d in zip(oshapes, odtypes)]
        fresh = True
    else:
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        _check_out(op, outs, oshapes, odtypes, ctx)
        fresh = False
    rng = None
    if op.needs_rng:
        from ..ops.random import rng_state
        rng = rng_state(ctx)
    call = _Call(op, inputs, outs, attrs, rng)
    reads, writes, rw = op_vars(op, inputs, outs, fresh, rng)
    nbytes = work = 0
    for s, d in zip(oshapes, odtypes):
        n = _prod(s)
        work += n
        nbytes += n * d.itemsize
    for s in shapes:
        work += _prod(s)
    split = call.split if (op.elemwise and len(outs) == 1
                           and _prod(oshapes[0]) >= SPLIT_MIN) else None
    inline = op.inline
    if inline is True:
        # split across the workers: theirs
        inline = False if split is not None else (work <= INLINE_MAX or op.caller)
    elif inline:
        cost = inline(attrs, shapes, oshapes)
        inline = cost <= INLINE_MAX or op.caller
        if op.rows is not None and len(outs) == 1 and cost >= ROWS_SPLIT_MIN:
            split = call.split_rows
    else:
        inline = op.caller
    pc = PreparedCall()
    pc.outs, pc.call, pc.name = outs, call, op.name
    pc.reads, pc.writes, pc.rw = tuple(reads), tuple(writes), rw
    pc.nbytes, pc.inline, pc.split = nbytes, inline, split
    return pc


def result_of(op, attrs, out, outs):
    """What an op call returns: its one output (or the ``out=`` given), or
    the outputs it shows (``num_visible``)."""
    if op.num_outputs == 1 and len(outs) == 1:
        return outs[0] if out is None or not isinstance(out, (list, tuple)) else out
    if op.num_visible is not None and out is None:
        k = op.num_visible(attrs)
        return outs[0] if k == 1 else outs[:k]
    return outs


def _check_out(op, outs, oshapes, odtypes, ctx):
    if len(outs) != len(oshapes):
        raise OpError("%s: out= has %d array(s) but the op has %d output(s)"
                      % (op.name, len(outs), len(oshapes)))
    for y, s, d in zip(outs, oshapes, odtypes):
        if y._shape != tuple(s):
            raise OpError("%s: out= has shape %s but the result has shape %s"
                          % (op.name, y._shape, tuple(s)))
        if y._dtype != d:
            raise OpError("%s: out= has dtype %s but the result has dtype %s"
                          % (op.name, y._dtype.name, np.dtype(d).name))
        if y._st.ctx is not ctx:
            raise OpError("%s: out= is on %s but the inputs are on %s" % (op.name, y._st.ctx, ctx))


def op_vars(op, inputs, outs, fresh, rng):
    """The vars an op call reads and writes (dicts: disjoint, each var once,
    in push order, linear for variadic ops with many inputs) and whether it
    reads what it writes."""
    reads = dict.fromkeys(x._st.var for x in inputs)
    writes = dict.fromkeys(y._st.var for y in outs)
    rw = False
    for i in op.mutated(len(inputs)):
        v = inputs[i]._st.var
        reads.pop(v, None)
        writes[v] = None
        rw = True
    if not fresh:
        for v in writes:
            if v in reads:
                del reads[v]
                rw = True
        # an out= that is a view of a bigger buffer keeps the rest: read-modify-write
        for y in outs:
            if y._off is not None or y._st.shape != y._shape:
                rw = True
    if rng is not None:
        writes[rng.var] = None
    return reads, writes, rw


def _no_gpu(ctx):
    """Raise the clear error of an unusable GPU context (no CuPy, no device)."""
    from ..engine.gpu import check_device
    check_device(ctx)


_op_hooks.invoke = invoke     # for grad rules in ops (ops never import ndarray)
