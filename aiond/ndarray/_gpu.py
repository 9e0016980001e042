"""NDArrays on ``mx.gpu(i)``: ops, copies and reads pushed to the device's
``GPUExecutor`` (``engine/gpu.py``). Imported on the first use of a GPU
context: ``import aiond`` never loads CuPy.

Every registry kernel runs unchanged with ``xp = cupy``; the work objects
here only say which stream an op runs on and whether the host must be told
when it is done (reads and device->host copies).
"""
from __future__ import annotations

import math

import numpy as np

from ..base import MXNetError
from ..engine import gpu as _gpu
from ..engine.gpu import GPUWork
from ..engine.storage import Storage
from . import _invoke
from ._invoke import data_of, hooks

__all__ = ["invoke", "new_array", "read", "wait_to_read", "copy", "from_numpy_value",
           "copy_in"]

_prod = math.prod
_engine = _invoke._engine
_push = _engine.push
_EMPTY = {}


class GPUStorage(Storage):
    """A device buffer from CuPy's pool, allocated on first write on the
    stream that writes it (``home``): only that stream may reuse it freely."""
    __slots__ = ("home",)

    def __init__(self, shape, dtype, ctx):
        Storage.__init__(self, shape, dtype, ctx)
        self.home = None

    def _alloc(self):
        cp = _gpu.cupy()
        with cp.cuda.Device(self.ctx.device_id):
            a = cp.empty(self.shape, dtype=self.dtype)
            home = cp.cuda.get_current_stream()
        cur = self.arr
        if cur is not None:
            return cur
        self.arr = a
        self.home = home
        self.var.nbytes = a.nbytes
        from ..engine import storage as _s
        h = _s.mem_hook
        if h is not None:
            self.counted = a.nbytes
            h(self.ctx, a.nbytes)
        return a

    def set(self, a):
        self.arr = a
        self.pooled = False
        self.home = None
        self.var.nbytes = a.nbytes


def new_array(shape, dtype, ctx):
    _gpu.executor(ctx)          # the device is usable, or a clear error now
    h = _invoke._NDArray.__new__(_invoke._NDArray)
    h._st = GPUStorage(tuple(shape), np.dtype(dtype), ctx)
    h._shape = tuple(shape)
    h._dtype = np.dtype(dtype)
    h._off = None
    h._ag = None
    return h


def _kept(handles, stream):
    out = []
    for h in handles:
        st = h._st
        if isinstance(st, GPUStorage) and st.home is not None and st.home is not stream \
                and st.arr is not None:
            out.append(st.arr)
    return out


class Kernel(GPUWork):
    """A registry kernel on the compute stream, with ``xp = cupy``."""
    __slots__ = ("op", "ins", "outs", "attrs", "rng", "ex", "stream")

    def __init__(self, op, ins, outs, attrs, rng, ex):
        self.op, self.ins, self.outs, self.attrs, self.rng, self.ex = op, ins, outs, attrs, rng, ex
        self.stream = None

    def launch(self, ex, stream):
        self.stream = stream
        cp = ex.cp
        outs = self.outs
        out = data_of(outs[0]) if len(outs) == 1 else [data_of(y) for y in outs]
        ins = [data_of(x) for x in self.ins]
        if self.op.host_kernel:
            run_on_host(self.op.kernel, cp, stream, ins, out, self.rng, self.attrs)
            return None
        if self.rng is not None:
            self.op.kernel(cp, *ins, out=out, rng=self.rng, **self.attrs)
        else:
            self.op.kernel(cp, *ins, out=out, **self.attrs)
        return None

    def arrays(self):
        return _kept(list(self.ins) + list(self.outs), self.stream)


def to_host(cp, a, stream):
    """A host copy of device array ``a`` taken on ``stream``, complete when
    this returns (CuPy 12's ``asnumpy`` with a stream only starts the copy)."""
    try:
        return cp.asnumpy(a, stream=stream, blocking=True)     # CuPy >= 13
    except TypeError:
        h = cp.asnumpy(a, stream=stream)
        (stream or cp.cuda.get_current_stream()).synchronize()
        return h


def run_on_host(kernel, cp, stream, ins, out, rng, attrs):
    """A numpy-only kernel (``op.host_kernel``): inputs to the host (this
    waits for them: a host synchronization), the kernel there, outputs back
    (``stream``: the one launching, None for the current one)."""
    hins = [to_host(cp, a, stream) for a in ins]
    outs = out if isinstance(out, list) else [out]
    houts = [np.empty(o.shape, dtype=o.dtype) for o in outs]
    hout = houts if isinstance(out, list) else houts[0]
    if rng is not None:
        kernel(np, *hins, out=hout, rng=rng, **attrs)
    else:
        kernel(np, *hins, out=hout, **attrs)
    for o, h in zip(outs, houts):
        o.set(h, stream=stream)


def invoke(op, inputs, attrs, out, ctx, shapes, oshapes, odtypes):
    """``_invoke.invoke`` for a GPU context (shapes already inferred)."""
    ex = _gpu.executor(ctx)
    if op.train_aware:
        attrs = dict(attrs)
        attrs["_train"] = hooks.is_training()
    if out is None:
        outs = [new_array(s, d, ctx) for s, d in zip(oshapes, odtypes)]
        fresh = True
    else:
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        _invoke._check_out(op, outs, oshapes, odtypes, ctx)
        fresh = False
    rng = None
    if op.needs_rng:
        from ..ops.random import rng_state
        rng = rng_state(ctx)
    reads, writes, rw = _invoke.op_vars(op, inputs, outs, fresh, rng)
    nbytes = 0
    for s, d in zip(oshapes, odtypes):
        nbytes += _prod(s) * d.itemsize
    rec = hooks.record
    if rec is not None:
        rec(op, inputs, attrs, outs)
    if _engine.tracing():
        # a graph being compiled into a plan (``_plan.py``): only noted,
        # never run; the plan runs on the device as one launch
        _push(_invoke._Call(op, inputs, outs, attrs, rng), tuple(reads), tuple(writes),
              op.name, nbytes, False, rw)
        return _invoke.result_of(op, attrs, out, outs)
    work = Kernel(op, inputs, outs, attrs, rng, ex)
    _push(work, tuple(reads), tuple(writes), op.name, nbytes, False, rw, None, ex)
    if ex.inflight_bytes > ex.max_inflight:
        _hold(ex)
    return _invoke.result_of(op, attrs, out, outs)




def _hold(ex):
    if not _engine.in_engine_thread():
        ex.throttle()


# ----------------------------------------------------------------- copies


def _d2h(cp, src, pinned, stream):
    """An asynchronous device->pinned host copy on ``stream``."""
    try:
        cp.asnumpy(src, stream=stream, out=pinned, blocking=False)     # CuPy >= 13
    except TypeError:
        src.get(stream=stream, out=pinned)      # CuPy 12: a stream makes it asynchronous


class _Read(GPUWork):
    """Device -> a fresh pinned host array, on the copy stream; finished by a
    host callback once the bytes are there."""
    __slots__ = ("src", "ex")
    copy = True
    host = True

    def __init__(self, src, ex):
        self.src, self.ex = src, ex

    def launch(self, ex, stream):
        src = data_of(self.src)
        pinned = _gpu.cupyx().empty_pinned(src.shape, dtype=src.dtype)
        _d2h(ex.cp, src, pinned, stream)
        return pinned

    def complete(self, pinned):
        # the caller's own pageable copy: pinned host memory is scarce and
        # goes back to CuPy's pinned pool at once
        return np.array(pinned, copy=True)


class _Sync(GPUWork):
    """Nothing to copy: finished once the stream reached it (wait_to_read)."""
    __slots__ = ("ex",)
    copy = True
    host = True

    def __init__(self, ex):
        self.ex = ex

    def launch(self, ex, stream):
        return None


def read(h):
    """Push a read of GPU array ``h``: its ``Opr.result`` is a host copy."""
    ex = _gpu.executor(h._st.ctx)
    return _push(_Read(h, ex), (h._st.var,), (), "read", 0, False, False, None, ex)


def wait_to_read(h):
    ex = _gpu.executor(h._st.ctx)
    return _push(_Sync(ex), (h._st.var,), (), "wait_to_read", 0, False, False, None, ex)


def wait_to_write(h):
    """Finished once the device ran every pending read and write of ``h``."""
    ex = _gpu.executor(h._st.ctx)
    return _push(_Sync(ex), (), (h._st.var,), "wait_to_write", 0, False, True, None, ex)


def from_device_array(a, ctx, ex):
    """An NDArray on ``ctx`` holding device array ``a`` (made on ``ex``'s
    compute stream): later work on other streams waits for that stream."""
    cp = ex.cp
    with ex.device:
        if not a.flags.c_contiguous:
            with ex.compute:
                a = cp.ascontiguousarray(a)
        ev = cp.cuda.Event(disable_timing=True)
        ev.record(ex.compute)
    h = new_array(tuple(a.shape), a.dtype, ctx)
    h._st.set(a)
    ex.record_done(ex.compute, ev, writes=(h._st.var,))
    return h


class _HostToDevice(GPUWork):
    """A host value (numpy array or CPU NDArray) into a device array: staged
    through pinned memory, then an asynchronous copy on the copy stream."""
    __slots__ = ("src", "dst", "ex", "pinned", "stream")
    copy = True

    def __init__(self, src, dst, ex):
        self.src, self.dst, self.ex = src, dst, ex
        self.pinned = None
        self.stream = None

    def launch(self, ex, stream):
        self.stream = stream
        src = self.src if isinstance(self.src, np.ndarray) else data_of(self.src)
        dst = data_of(self.dst)
        pinned = _gpu.cupyx().empty_pinned(dst.shape, dtype=dst.dtype)
        np.copyto(pinned, src, casting="unsafe")
        dst.set(pinned, stream=stream)
        self.pinned = pinned
        self.src = None     # the host source is copied: let it go
        return None

    def arrays(self):
        # the pinned stage must outlive the asynchronous copy
        return [self.pinned] + _kept([self.dst], self.stream)


class _DeviceToHost(_Read):
    """A device array into a CPU NDArray (a host op: CPU readers of the
    destination run once the bytes are there)."""
    __slots__ = ("dst",)

    def __init__(self, src, dst, ex):
        _Read.__init__(self, src, ex)
        self.dst = dst

    def complete(self, pinned):
        np.copyto(data_of(self.dst), pinned, casting="unsafe")
        return None


class _DeviceToDevice(GPUWork):
    """Between two arrays on GPUs (the same or another), on the destination
    device's copy stream; a dtype change runs as a cast there."""
    __slots__ = ("src", "dst", "ex", "stream")
    copy = True

    def __init__(self, src, dst, ex):
        self.src, self.dst, self.ex = src, dst, ex
        self.stream = None

    def launch(self, ex, stream):
        self.stream = stream
        sdev = self.src._st.ctx.device_id
        if sdev != self.dst._st.ctx.device_id:
            # the source's view is made on its own device: CuPy's array calls
            # refuse arrays of another device where peer access is unavailable
            with ex.cp.cuda.Device(sdev):
                src = data_of(self.src)
        else:
            src = data_of(self.src)
        dst = data_of(self.dst)
        if src.dtype == dst.dtype and src.flags.c_contiguous and dst.flags.c_contiguous:
            dst.data.copy_from_device_async(src.data, src.nbytes, stream)
        else:
            if self.src._st.ctx is not self.dst._st.ctx:
                raise MXNetError("copyto between GPUs with a dtype change is not supported; "
                                 "cast first")
            ex.cp.copyto(dst, src, casting="unsafe")
        return None

    def arrays(self):
        # the source may live on another stream (or device): keep it until done
        return [x._st.arr for x in (self.src, self.dst) if x._st.arr is not None]


def copy(src, dst):
    """Push ``dst[...] = src`` where at least one of them is on a GPU."""
    sg = src._st.ctx.device_typeid == 2
    dg = dst._st.ctx.device_typeid == 2
    rw = dst._off is not None or dst._st.shape != dst._shape
    reads = (src._st.var,)
    writes = (dst._st.var,)
    if src._st.var is dst._st.var:
        reads = ()
        rw = True
    nbytes = _prod(dst._shape) * dst._dtype.itemsize
    if sg and dg:
        ex = _gpu.executor(dst._st.ctx)
        _gpu.executor(src._st.ctx)
        work = _DeviceToDevice(src, dst, ex)
    elif dg:
        ex = _gpu.executor(dst._st.ctx)
        work = _HostToDevice(src, dst, ex)
    else:
        ex = _gpu.executor(src._st.ctx)
        work = _DeviceToHost(src, dst, ex)
    _push(work, reads, writes, "_copyto", nbytes, False, rw, None, ex)
    return dst


def from_numpy_value(src, ctx, dtype):
    """A GPU array holding a copy of host array ``src`` (``nd.array(..., ctx=gpu)``)."""
    h = new_array(src.shape, dtype, ctx)
    ex = _gpu.executor(ctx)
    work = _HostToDevice(np.ascontiguousarray(src), h, ex)
    _push(work, (), (h._st.var,), "_copyto", src.size * np.dtype(dtype).itemsize, False,
          False, None, ex)
    return h


def copy_in(dst, src, rw):
    """``dst[...] = src`` for a host array ``src`` already shaped like ``dst``."""
    ex = _gpu.executor(dst._st.ctx)
    work = _HostToDevice(src, dst, ex)
    _push(work, (), (dst._st.var,), "_sync_copyfrom", src.nbytes, False, rw, None, ex)


class _PlanRun(GPUWork):
    """A compiled plan (``_plan.Plan``) as one launch on the compute stream:
    every step's kernel with ``xp = cupy``, one event for the lot."""
    __slots__ = ("run", "stream")

    def __init__(self, run):
        self.run = run
        self.stream = None

    def launch(self, ex, stream):
        self.stream = stream
        run = self.run
        handles = list(run.inputs)
        stores = list(run.stores.values()) + [st for st in run.plan.keep if st is not None]
        run.run(ex.cp, None)
        self.run = (handles, stores)    # what the device may still be using
        return None

    def arrays(self):
        handles, stores = self.run
        out = _kept(handles, self.stream)
        for st in stores:
            if isinstance(st, GPUStorage) and st.home is not None \
                    and st.home is not self.stream and st.arr is not None:
                out.append(st.arr)
        return out


def plan_work(plan, inputs, stores, rng, ctx):
    """(work, executor) running ``plan`` on GPU ``ctx`` (see ``_plan.Plan.push``)."""
    from ._plan import _Run
    return _PlanRun(_Run(plan, inputs, stores, rng)), _gpu.executor(ctx)
