"""The NDArray handle: a thin slotted object over engine-tracked storage.

Every op returns at once; ``c.shape``/``c.dtype``/``c.context`` never wait.
Reading the value waits: ``await arr.read()`` on the caller's own event loop,
``asnumpy()``/``asscalar()``/``wait_to_read()`` blocking only the calling
thread. Basic contiguous slices and ``reshape`` are views sharing their
base's storage and engine var, as in MXNet; other slices are copies.
"""
from __future__ import annotations

import math
import operator
import threading
import warnings
import weakref

import numpy as np

from .. import engine as _engine_mod
from .. import util as _util
from ..base import MXNetError, numeric_types
from ..context import Context, current_context
from ..engine.storage import Storage
from ..ops import registry as _reg
from ..ops.registry import to_dtype
from ._invoke import INLINE_MAX, data_of, host_copy, invoke, new_array
from ._invoke import hooks as _hooks

py_slice = slice   # MXNet's name for the builtin (mx.nd.slice is the op)

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "linspace", "eye",
           "waitall", "concatenate", "from_numpy"]

_engine = _engine_mod.get()
_prod = math.prod

# MXNet's storage type ids (NDArrayStorageType)
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED, "default": _STORAGE_TYPE_DEFAULT,
                           "row_sparse": _STORAGE_TYPE_ROW_SPARSE, "csr": _STORAGE_TYPE_CSR}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}
_F32 = np.dtype(np.float32)
_get = _reg.get


def _op(name):
    return _get(name)


def _dim(d):
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError("reshape(): shape dims must be integers, got %r (%s)"
                        % (d, type(d).__name__)) from None


class NDArray:
    """An n-dimensional array on a device, computed asynchronously.

    >>> a = mx.nd.ones((2, 3))
    >>> (a * 2 + 1).asnumpy()
    array([[3., 3., 3.],
           [3., 3., 3.]], dtype=float32)
    """
    __slots__ = ("_st", "_shape", "_dtype", "_off", "_ag", "__weakref__")
    __array_priority__ = 1000.0
    _sparse = False     # True for CSRNDArray / RowSparseNDArray (ndarray/sparse.py)

    def __init__(self, handle=None, writable=True):
        # MXNet code never builds an NDArray directly; pickling passes None
        if handle is not None:
            raise MXNetError("NDArray(handle) is not supported; create arrays with "
                             "mx.nd.array(), mx.nd.zeros(), ...")
        self._st = Storage((0,), _F32, current_context())
        self._shape = (0,)
        self._dtype = _F32
        self._off = None
        self._ag = None

    # ------------------------------------------------------------ properties
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype.type

    @property
    def context(self) -> Context:
        return self._st.ctx

    ctx = context

    @property
    def size(self) -> int:
        return _prod(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def stype(self) -> str:
        return "default"

    @property
    def writable(self) -> bool:
        return True

    @property
    def handle(self):
        return self._st

    @property
    def T(self):
        if len(self._shape) < 2:
            return self
        return invoke(_op("transpose"), [self], {"axes": ()})

    # -------------------------------------------------------------- reading
    def _push_copy(self, on_done=None):
        st = self._st
        if st.ctx.device_typeid == 2:
            from ._gpu import read
            return read(self)
        n = _prod(self._shape)

        def copy():
            return np.array(data_of(self), copy=True)
        return _engine.push(copy, (st.var,), (), "read", 0, n <= INLINE_MAX * 4)

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the value; blocks the calling thread until it is computed."""
        _engine.check_blocking("asnumpy()")
        opr = self._push_copy()
        if not opr.done:
            _engine.wait_opr(opr, "asnumpy()")
        if opr.failure is not None:
            raise opr.failure.error("asnumpy()")
        return opr.result

    def asscalar(self):
        """The value of a size-1 array as a numpy scalar."""
        if _prod(self._shape) != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(-1)[0]

    def wait_to_read(self):
        """Block until every write pushed before this call has finished."""
        _engine.check_blocking("wait_to_read()")
        if self._st.ctx.device_typeid == 2:
            from ._gpu import wait_to_read
            opr = wait_to_read(self)
        else:
            opr = _engine.push(None, (self._st.var,), (), "wait_to_read", 0, True)
        if not opr.done:
            _engine.wait_opr(opr, "wait_to_read()")
        if opr.failure is not None:
            raise opr.failure.error("wait_to_read()")

    def read(self):
        """Await the value as the caller's own numpy copy: ``await x.read()``.

        The read is pushed at the call, so it observes exactly the writes
        pushed before the call, whenever it is awaited. It resolves on the
        running loop of the awaiting coroutine (any loop, any thread) without
        blocking it. Cancelling the await cancels only the wait: the
        computation and the array are untouched and later reads work.
        """
        v = self._st.var
        _engine.check_await(v, "await read()")
        if v.reader is not None and self._off is None:
            fut = v.reader(self)        # the op writing it answers (a batch)
            if fut is not None:
                return fut
        return _await_result(self._push_copy(), "read()")

    # ------------------------------------------------------------ copying
    def copyto(self, other):
        """Copy into ``other`` (an NDArray of the same shape, or a Context)."""
        if isinstance(other, NDArray):
            if other is self or (other._st is self._st and other._off == self._off
                                 and other._shape == self._shape):
                warnings.warn("You are attempting to copy an array to itself", RuntimeWarning)
                return False
            if other._shape != self._shape:
                raise MXNetError("copyto: shape mismatch, source %s and target %s"
                                 % (self._shape, other._shape))
            return _copy_into(self, other)
        if isinstance(other, Context):
            dst = new_array(self._shape, self._dtype, other)
            return _copy_into(self, dst)
        raise TypeError("copyto does not support type " + str(type(other)))

    def copy(self):
        return self.copyto(self._st.ctx)

    def as_in_context(self, context):
        if self._st.ctx == context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def astype(self, dtype, copy=True):
        dt = to_dtype(dtype)
        if not copy and dt == self._dtype:
            return self
        return invoke(_op("Cast"), [self], {"dtype": dt})

    def detach(self):
        h = _view(self, self._shape, self._off)
        return h

    def to_dlpack_for_read(self):
        """A DLPack capsule of this buffer, once pending writes are done."""
        from .dlpack import to_dlpack_for_read
        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self):
        """A DLPack capsule of this buffer, once pending reads and writes are done."""
        from .dlpack import to_dlpack_for_write
        return to_dlpack_for_write(self)

    def as_np_ndarray(self):
        """The same buffer as an ``mx.np.ndarray`` (NumPy semantics; no copy)."""
        if not _NP_CLASS:
            _hooks.load_numpy()     # mx.np, built on this module, registers its class
        return view_as(self, _NP_CLASS[0])

    def as_nd_ndarray(self):
        return self

    def tostype(self, stype):
        """This array in storage type ``stype`` ('default', 'row_sparse', 'csr')."""
        from .sparse import cast_storage
        return cast_storage(self, stype=stype)

    # ----------------------------------------------------------- shaping
    def reshape(self, *shape, **kwargs):
        """A view with a new shape; MXNet's codes 0, -1, -2, -3, -4 and
        ``reverse=True`` apply."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        elif not shape:
            shape = kwargs.pop("shape", None)
            if shape is None:
                raise TypeError("reshape() needs a shape")
            shape = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError("reshape() got unexpected arguments %s" % sorted(kwargs))
        # MXNet passes the dims as C int64s: a float or None is refused here,
        # not later by the kernel reading the view
        shape = tuple(_dim(d) for d in shape)
        try:
            new = infer_reshape(self._shape, shape, reverse)
        except MXNetError as e:
            raise type(e)("reshape: %s" % e) from None
        if self._ag is not None and _hooks.record is not None:
            # recording a graph through this array: the reshape is an op on the tape
            return invoke(_op("Reshape"), [self], {"shape": new, "reverse": False,
                                                   "target_shape": None, "keep_highest": False})
        return _view(self, new, self._off or 0)

    def reshape_like(self, *args, **kwargs):
        """``mx.nd.reshape_like(self, rhs, ...)`` (a view for the plain form)."""
        if len(args) == 1 and not kwargs and isinstance(args[0], NDArray):
            return self.reshape(args[0].shape)
        from . import reshape_like
        return reshape_like(self, *args, **kwargs)

    def flatten(self, inplace=False):
        """(d0, d1*...*dn): a copy, or a view sharing memory with ``inplace=True``."""
        res = invoke(_op("Flatten"), [self], {})
        return self.reshape(res.shape) if inplace else res

    def expand_dims(self, axis, inplace=False):
        """Insert a size-1 axis: a copy, or a view with ``inplace=True``."""
        res = invoke(_op("expand_dims"), [self], {"axis": int(axis)})
        return self.reshape(res.shape) if inplace else res

    def squeeze(self, axis=None, inplace=False):
        """Drop size-1 axes: a copy, or a view with ``inplace=True``."""
        res = invoke(_op("squeeze"), [self], _op("squeeze").parse({"axis": axis}))
        return self.reshape(res.shape) if inplace else res

    def broadcast_to(self, shape):
        return invoke(_op("broadcast_to"), [self], {"shape": tuple(int(d) for d in shape)})

    def broadcast_like(self, other):
        return self.broadcast_to(other.shape)

    # ---------------------------------------------------------- container
    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    def __bool__(self):
        n = _prod(self._shape)
        if n == 0:
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, "
                          "but in future this will result in an error.", DeprecationWarning)
            return False
        if n == 1:
            return bool(self.asscalar())
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __nonzero__ = __bool__

    def __hash__(self):
        return id(self) // 16

    def __repr__(self):
        shape_info = "x".join("%d" % x for x in self._shape)
        return "\n%s\n<%s %s @%s>" % (str(self.asnumpy()), type(self).__name__, shape_info,
                                      self._st.ctx)

    def __str__(self):
        return self.__repr__()

    def __getstate__(self):
        """``{'handle': bytes}``: this array in MXNet's per-array binary layout."""
        from .io import dumps_one
        from ..util import is_np_shape
        return {"handle": bytearray(dumps_one(self.asnumpy(), is_np_shape()))}

    def __setstate__(self, state):
        """Become the array of ``state['handle']`` (MXNet's raw bytes; loaded on
        the CPU, as aiond reads every file)."""
        from .io import loads_one
        handle = state.get("handle") if isinstance(state, dict) else None
        if handle is None:
            raise MXNetError("NDArray.__setstate__ needs a dict with a 'handle' entry")
        a = loads_one(handle)
        if a is None:
            a = np.zeros((0,), _F32)
        a = np.ascontiguousarray(a)
        st = Storage(a.shape, a.dtype, Context("cpu", 0))
        st.set(a)
        self._st, self._shape, self._dtype, self._off, self._ag = st, a.shape, a.dtype, None, None

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), self._st.ctx.device_type, self._st.ctx.device_id))

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether basic slicing with ``slc_key`` (one slice per axis) gives a
        contiguous block: from the right, once an axis is a proper subset,
        the axes to its left select at most one element."""
        assert len(slc_key) == len(shape)
        from ._indexing import _contiguous
        return _contiguous(list(slc_key), tuple(shape)) is not None

    def __getitem__(self, key):
        from ._indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value):
        from ._indexing import setitem
        setitem(self, key, value)

    # --------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _ufunc(self, other, "broadcast_add", "_plus_scalar", None)

    __radd__ = __add__

    def __sub__(self, other):
        return _ufunc(self, other, "broadcast_sub", "_minus_scalar", None)

    def __rsub__(self, other):
        return _ufunc(self, other, "broadcast_sub", "_rminus_scalar", None, reverse=True)

    def __mul__(self, other):
        return _ufunc(self, other, "broadcast_mul", "_mul_scalar", None)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _ufunc(self, other, "broadcast_div", "_div_scalar", None)

    __div__ = __truediv__

    def __rtruediv__(self, other):
        return _ufunc(self, other, "broadcast_div", "_rdiv_scalar", None, reverse=True)

    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return _ufunc(self, other, "broadcast_mod", "_mod_scalar", None)

    def __rmod__(self, other):
        return _ufunc(self, other, "broadcast_mod", "_rmod_scalar", None, reverse=True)

    def __pow__(self, other):
        return _ufunc(self, other, "broadcast_power", "_power_scalar", None)

    def __rpow__(self, other):
        return _ufunc(self, other, "broadcast_power", "_rpower_scalar", None, reverse=True)

    def __neg__(self):
        return invoke(_op("_mul_scalar"), [self], {"scalar": -1.0, "is_int": True})

    def __abs__(self):
        return invoke(_op("abs"), [self], {})

    def __pos__(self):
        return self

    def __eq__(self, other):
        return _ufunc(self, other, "broadcast_equal", "_equal_scalar", None)

    def __ne__(self, other):
        return _ufunc(self, other, "broadcast_not_equal", "_not_equal_scalar", None)

    def __gt__(self, other):
        return _ufunc(self, other, "broadcast_greater", "_greater_scalar", None)

    def __ge__(self, other):
        return _ufunc(self, other, "broadcast_greater_equal", "_greater_equal_scalar", None)

    def __lt__(self, other):
        return _ufunc(self, other, "broadcast_lesser", "_lesser_scalar", None)

    def __le__(self, other):
        return _ufunc(self, other, "broadcast_lesser_equal", "_lesser_equal_scalar", None)

    def __iadd__(self, other):
        return _ufunc(self, other, "broadcast_add", "_plus_scalar", self)

    def __isub__(self, other):
        return _ufunc(self, other, "broadcast_sub", "_minus_scalar", self)

    def __imul__(self, other):
        return _ufunc(self, other, "broadcast_mul", "_mul_scalar", self)

    def __itruediv__(self, other):
        return _ufunc(self, other, "broadcast_div", "_div_scalar", self)

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return _ufunc(self, other, "broadcast_mod", "_mod_scalar", self)



# mx.np.ndarray, NDArray's NumPy-semantics subclass: the numpy front end (built
# on this module, which never imports it) registers it when it is imported
_NP_CLASS: list = []


def register_np_class(cls):
    """Make ``cls`` (mx.np.ndarray) what ``NDArray.as_np_ndarray`` returns."""
    _NP_CLASS[:] = [cls]


def view_as(x, cls):
    """A handle of class ``cls`` over the same storage and var as ``x``."""
    h = object.__new__(cls)
    h._st = x._st
    h._shape = x._shape
    h._dtype = x._dtype
    h._off = x._off
    h._ag = x._ag
    return h


from . import _invoke as _invoke_mod  # noqa: E402
_invoke_mod._NDArray = NDArray

# ops resolved once; the arithmetic path must not look them up per call
_OPS = {}


def _cached(name):
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = _get(name)
    return op


def _ufunc(lhs, rhs, array_op, scalar_op, out, reverse=False):
    """MXNet's scalar/array split: ``a + 1`` -> _plus_scalar, ``a + b`` ->
    broadcast_add (the source of symbol auto-names)."""
    if isinstance(rhs, NDArray):
        if reverse:
            lhs, rhs = rhs, lhs
        return invoke(_cached(array_op), [lhs, rhs], _EMPTY, out)
    if isinstance(rhs, numeric_types) and not isinstance(rhs, np.ndarray):
        if isinstance(rhs, np.generic) and rhs.ndim:  # pragma: no cover
            raise TypeError("type %s not supported" % type(rhs))
        return invoke(_cached(scalar_op), [lhs], {"scalar": float(rhs)}, out)
    raise TypeError("type %s not supported" % str(type(rhs)))


_EMPTY = {}


def view_of(base, shape, off):
    """A handle of ``base``'s class over ``shape`` elements of its storage from
    flat offset ``off`` (no autograd entry): the view other packages build on."""
    cls = base.__class__
    h = cls.__new__(cls)
    h._st = base._st
    h._shape = tuple(shape)
    h._dtype = base._dtype
    h._off = off
    h._ag = None
    return h


_view = view_of     # the in-package name


def copy_into(src, dst):
    """Push the copy of ``src`` into ``dst`` (casting, or across contexts)."""
    op = _cached("_copy")
    if src._dtype != dst._dtype:
        return invoke(_cached("Cast"), [src], {"dtype": dst._dtype}, dst) if src._st.ctx is dst._st.ctx \
            else _cross_ctx_copy(src, dst)
    if src._st.ctx is not dst._st.ctx:
        return _cross_ctx_copy(src, dst)
    return invoke(op, [src], _EMPTY, dst)


_copy_into = copy_into     # the in-package name


def _cross_ctx_copy(src, dst):
    """Copy between contexts: one op reading src's var and writing dst's."""
    if src._st.ctx.device_typeid == 2 or dst._st.ctx.device_typeid == 2:
        from ._gpu import copy as gpu_copy
        return gpu_copy(src, dst)
    rw = dst._off is not None or dst._st.shape != dst._shape

    def copy():
        np.copyto(data_of(dst), data_of(src), casting="unsafe")
    reads = (src._st.var,)
    writes = (dst._st.var,)
    if src._st.var is dst._st.var:
        reads = ()
        rw = True
    _engine.push(copy, reads, writes, "_copyto", _prod(dst._shape) * dst._dtype.itemsize,
                 _prod(dst._shape) <= INLINE_MAX, rw)
    return dst


async def _await_result(opr, what):
    e = _engine
    if e.pending > e.max_pending or e.bytes > e.max_bytes:
        # an async producer is held here, never blocked in push (issue 15)
        await e.room()
    if not opr.done:
        import asyncio  # a coroutine's caller has imported it: `import aiond` stays light
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        inbox = _inbox_of(loop)

        def on_done(o, prev=None):
            inbox.put(fut, o)
        with _engine.lock:
            armed = not opr.done
            if armed:
                prev = opr.on_done
                if prev is None:
                    opr.on_done = on_done
                else:
                    def both(o, prev=prev):
                        prev(o)
                        on_done(o)
                    opr.on_done = both
        if armed:
            return await fut
    if opr.failure is not None:
        raise opr.failure.error(what)
    return opr.result


class _Inbox:
    """Results bound for one event loop, handed over with one wake-up per
    burst: a worker that finishes a batch of requests' reads wakes the loop
    (a write to its self-pipe, a system call) once, not once per read. The
    loop resolves them a few per iteration, so that the coroutines a batch
    wakes do not all run in one iteration ahead of its timers."""
    __slots__ = ("loop", "items", "lock")

    def __init__(self, loop):
        self.loop = weakref.ref(loop)   # (the inbox must not keep its loop alive)
        self.items = []
        self.lock = threading.Lock()

    def put(self, fut, opr):
        with self.lock:
            items = self.items
            items.append((fut, opr))
            if len(items) > 1:
                return          # a drain is scheduled and has not run yet
        self._wake()

    def put_many(self, pairs):
        """``put`` of each (future, done) pair, under one lock: a batch's
        answers go in at once, not one lock round trip against the loop's
        drain (and its GIL) per request."""
        with self.lock:
            items = self.items
            wake = not items and pairs
            items.extend(pairs)
        if wake:
            self._wake()

    def _wake(self):
        loop = self.loop()
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self.drain)
            except RuntimeError:  # the loop closed meanwhile: nobody waits
                pass

    def drain(self):
        with self.lock:
            items = self.items
            if len(items) > _DRAIN_MAX:
                self.items = items[_DRAIN_MAX:]
                items = items[:_DRAIN_MAX]
                self.loop().call_soon(self.drain)
            else:
                self.items = []
        for fut, opr in items:
            _resolve(fut, opr)


_DRAIN_MAX = 8   # results resolved per loop iteration (a batch's are spread over a few)
_inboxes = weakref.WeakKeyDictionary()     # event loop -> its _Inbox


def loop_future():
    """(future, inbox) on the running event loop (None without one): the
    inbox resolves the future from any thread, ``inbox.put(fut, done)``
    with ``done.failure`` / ``done.result`` as an op's."""
    import asyncio
    loop = asyncio.events._get_running_loop()
    if loop is None:
        return None
    return loop.create_future(), _inbox_of(loop)


def _inbox_of(loop):
    inbox = _inboxes.get(loop)
    if inbox is None:
        inbox = _inboxes.setdefault(loop, _Inbox(loop))
        _engine.cpu.serving()       # workers now yield a core to a waking loop
    return inbox


def _resolve(fut, opr):
    if fut.done():
        return
    if opr.failure is not None:
        fut.set_exception(opr.failure.error("read()"))
    else:
        fut.set_result(opr.result)


def infer_reshape(old, shape, reverse=False):
    # replaced by ops.matrix's on first call: importing aiond loads no op module for it
    global infer_reshape
    from ..ops.matrix import infer_reshape
    return infer_reshape(old, shape, reverse)


def _rebuild(value, dev_type, dev_id):
    # MXNet restores pickled CPU arrays on cpu(0) whatever cpu(i) they came from
    ctx = Context(dev_type, dev_id) if dev_type == "gpu" else Context("cpu", 0)
    return array(value, ctx=ctx, dtype=value.dtype)


# ------------------------------------------------------------- creation


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        s = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError("shape must be an int or a tuple of ints, got %r" % (shape,)) from None
    for d in s:
        if d < 0:
            raise MXNetError("shape %s has a negative dimension" % (s,))
    return s


def _ctx_arg(ctx):
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        name, _, rest = ctx.partition("(")
        return Context(name, int(rest.rstrip(")") or 0))
    raise TypeError("ctx must be a Context, got %r" % (ctx,))


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array (``stype`` 'row_sparse'/'csr': an all-zero sparse one)."""
    if stype is not None and stype != "default":
        from .sparse import empty as _sparse_empty
        return _sparse_empty(stype, shape, ctx=ctx, dtype=dtype)
    ctx = _ctx_arg(ctx)
    if ctx.device_typeid == 2:
        from ._invoke import _no_gpu
        _no_gpu(ctx)
    return new_array(_shape_arg(shape), to_dtype(dtype or "float32"), ctx)


def _known_shape(shape):
    """MXNet's init ops outside NumPy-shape semantics: a shape of () or with a
    0 dimension means "unknown" there, so creating such an array fails."""
    s = _shape_arg(shape)
    if (not s or 0 in s) and not _util.is_np_shape():
        raise MXNetError("shape %s is unknown outside NumPy-shape semantics (a 0 dimension "
                         "or ndim 0); use mx.np_shape() or mx.util.set_np_shape(True) for "
                         "zero-size or scalar arrays" % (s,))
    return s


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (float32 unless ``dtype``; storage type ``stype``)."""
    if stype is not None and stype != "default":
        from .sparse import zeros as _sparse_zeros
        return _sparse_zeros(stype, shape, ctx=ctx, dtype=dtype, **kwargs)
    return invoke(_cached("_zeros"), [], {"shape": _known_shape(shape),
                                          "dtype": to_dtype(dtype or "float32")},
                  kwargs.get("out"), _ctx_arg(ctx))


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones (float32 unless ``dtype``)."""
    return invoke(_cached("_ones"), [], {"shape": _known_shape(shape),
                                         "dtype": to_dtype(dtype or "float32")},
                  kwargs.get("out"), _ctx_arg(ctx))


def full(shape, val, ctx=None, dtype=np.float32, out=None):
    """An array filled with ``val``."""
    if out is not None:
        return invoke(_cached("_full"), [], {"shape": out.shape, "dtype": out._dtype,
                                             "value": float(val)}, out, out.context)
    return invoke(_cached("_full"), [], {"shape": _shape_arg(shape), "dtype": to_dtype(dtype),
                                         "value": float(val)}, None, _ctx_arg(ctx))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=np.float32):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    op = _cached("_arange")
    attrs = op.parse({"start": start, "stop": stop, "step": step, "repeat": repeat,
                      "dtype": dtype})
    return invoke(op, [], attrs, None, _ctx_arg(ctx))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=np.float32):
    """``num`` evenly spaced values from start to stop."""
    op = _cached("_linspace")
    attrs = op.parse({"start": start, "stop": stop, "num": num, "endpoint": endpoint,
                      "dtype": dtype})
    return invoke(op, [], attrs, None, _ctx_arg(ctx))


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):
    """A 2-D array with ones on the k-th diagonal."""
    op = _cached("_eye")
    attrs = op.parse({"N": N, "M": M, "k": k, "dtype": dtype or "float32"})
    return invoke(op, [], attrs, None, _ctx_arg(ctx))


def array(source_array, ctx=None, dtype=None):
    """An NDArray holding a copy of ``source_array`` (float32 unless
    ``dtype``, or the dtype of an NDArray source), as MXNet's ``nd.array``.
    A sparse NDArray or a scipy csr_matrix gives a sparse array."""
    if (source_array.__class__.__module__ or "").startswith("scipy.sparse") or \
            (isinstance(source_array, NDArray) and source_array._sparse):
        from .sparse import array as _sparse_array
        return _sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dt = source_array._dtype if dtype is None else to_dtype(dtype)
        out = new_array(source_array._shape, dt, _ctx_arg(ctx))
        return _copy_into(source_array, out)
    dt = _F32 if dtype is None else to_dtype(dtype)
    try:
        if type(source_array) is np.ndarray:
            src = host_copy(source_array, dt)
        else:
            src = np.array(source_array, dtype=dt, copy=True, order="C")
    except OverflowError:
        # MXNet converts C-style: out-of-range ints wrap ([300, -1] as uint8 -> [44, 255])
        src = np.array(np.array(source_array), order="C").astype(dt)
    except (TypeError, ValueError) as e:
        raise TypeError("source_array must be array like object: %s" % e) from None
    ctx = _ctx_arg(ctx)
    if ctx.device_typeid == 2:
        from ._gpu import from_numpy_value
        return from_numpy_value(src, ctx, dt)
    h = new_array(src.shape, dt, ctx)
    h._st.set(src)
    return h


def from_numpy(ndarray, zero_copy=True):
    """An NDArray of a numpy array. ``zero_copy=True`` (MXNet's default) shares
    its memory: the numpy array becomes read-only and writes go through the
    NDArray; it must be C-contiguous."""
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    dt = to_dtype(ndarray.dtype)
    try:                        # an array shared before is read-only already: unlock
        ndarray.flags["WRITEABLE"] = True   # it to take the NDArray's writable alias
    except ValueError:
        pass                    # memory numpy may not write (a read-only buffer)
    buf = ndarray.view()
    ndarray.flags["WRITEABLE"] = False
    h = new_array(tuple(ndarray.shape), dt, current_context())
    h._st.set(buf)
    return h


def waitall():
    """Wait for every pushed op; raises the first failure not yet reported."""
    _engine.wait_all()


def concatenate(arrays, axis=0, always_copy=True):
    from . import concat
    return concat(*arrays, dim=axis)


def _thread_ident():
    return threading.get_ident()


_ = operator


def __getattr__(name):
    # MXNet's other names of mxnet.ndarray.ndarray (code tables, indexing helpers,
    # the elementwise functions, imdecode) live in _ndarray_names, loaded on first use
    if name.startswith("__"):
        raise AttributeError(name)
    from . import _ndarray_names  # noqa: F401  (sets them on this module)
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError("module %r has no attribute %r" % (__name__, name)) from None
