"""A test double of the CuPy surface aiond's GPU executor uses, over numpy.

It is installed as ``cupy`` / ``cupyx`` in ``sys.modules`` (``install()``)
so ``mx.gpu(i)`` works end to end on a machine without a GPU. What it models:

* **Devices**: ``getDeviceCount()`` devices; an array lives on the device
  current when it was made, and using it under another current device in a
  kernel raises, as CuPy does (peer copies go through ``MemoryPointer``).
* **Streams** each own a real thread that runs, in order, what is enqueued
  on them: event records, ``wait_event`` waits, host functions and test
  ``block(gate)`` items (a long-running kernel). An ``Event`` is *done*
  once its stream's thread reached it. The legacy default stream is ordered
  with everything, as CUDA's is with blocking streams.
* **Kernels compute at launch** (numpy, on the launching thread): the double
  does not defer the arithmetic. What it checks instead is the *ordering a
  real GPU would need*: every stream keeps a vector clock (its own launches,
  plus what it waited for through events); an array remembers the stream
  and position of its last write and the reads since, and a kernel touching
  it from a stream that is not ordered after them is recorded in ``races``
  (a missing ``wait_event``).
* **Strictness** as CuPy: no implicit conversion to numpy (``__array__``
  raises), no numpy arrays mixed into kernels; numpy functions on device
  arrays dispatch (NEP 13/18) as with CuPy.
* **DLPack**: device arrays give real "dltensor" capsules naming a CUDA
  device (numpy refuses them, as it does CuPy's); ``from_dlpack`` takes back
  the double's own, once each, sharing the buffer.
* **Random numbers**: ``cupy.random.RandomState`` draws from a numpy
  generator into device arrays on the current stream (``generators`` lists
  every one made; each works only on its own device, as cuRAND's do).
* **Host synchronizations are counted** in ``syncs`` (stream, event and
  device ``synchronize``, blocking ``get``/``asnumpy``, scalar conversions
  such as ``float(x)``), host functions in ``host_funcs``.
"""
from __future__ import annotations

import ctypes
import operator
import queue
import sys
import threading
import types
import weakref

import numpy as np

# --------------------------------------------------------------- state


class State:
    def __init__(self, ndev):
        self.ndev = ndev
        self.lock = threading.Lock()
        self.syncs = 0
        self.sync_where = []
        self.host_funcs = 0
        self.races = []
        self.streams = []
        self.pools = [MemoryPool() for _ in range(ndev)]
        self.nstreams = 0
        self.generators = []    # every cupy.random.RandomState made

    def sync(self, what):
        with self.lock:
            self.syncs += 1
            self.sync_where.append(what)


S = None
_tls = threading.local()
USED = set()    # what kernels asked of the double (to check against CuPy's API)


def _cur_dev():
    return getattr(_tls, "dev", 0)


def _cur_stream():
    st = getattr(_tls, "streams", None)
    if st:
        s = st.get(_cur_dev())
        if s:
            return s[-1]
    return _null(_cur_dev())


_nulls = {}


def _null(dev):
    s = _nulls.get(dev)
    if s is None:
        s = _nulls[dev] = Stream(null=True, _dev=dev)
    return s


# ----------------------------------------------------------- streams

class Stream:
    """A CUDA stream: one thread runs its queue in order."""

    def __init__(self, non_blocking=False, null=False, ptds=False, priority=0, _dev=None):
        self.dev = _cur_dev() if _dev is None else _dev
        self.null = null
        with S.lock:
            S.nstreams += 1
            self.sid = S.nstreams
        self.seq = 0
        self.clock = {}
        self.name = "null%d" % self.dev if null else "stream%d" % self.sid
        if not null:
            self.q = queue.SimpleQueue()
            self.t = threading.Thread(target=self._run, name="fake-" + self.name, daemon=True)
            self.t.start()
            S.streams.append(self)

    @property
    def ptr(self):
        return 0 if self.null else self.sid

    def _run(self):
        while True:
            item = self.q.get()
            if item is None:
                return
            try:
                item()
            except BaseException as e:  # noqa: BLE001 - a host func's error: report, go on
                print("fakecupy: %s raised %r" % (self.name, e), file=sys.stderr)

    def _put(self, fn):
        if self.null:
            fn()
        else:
            self.q.put(fn)

    def tick(self):
        """One more launch on this stream (host side); returns its position."""
        self.seq += 1
        self.clock[self.sid] = self.seq
        return self.seq

    # the CuPy API
    def __enter__(self):
        st = getattr(_tls, "streams", None)
        if st is None:
            st = _tls.streams = {}
        st.setdefault(self.dev, []).append(self)
        return self

    def __exit__(self, *exc):
        _tls.streams[self.dev].pop()

    def use(self):
        return self

    def wait_event(self, event):
        self.clock = _merge(self.clock, event.clock)
        done = event._done
        self._put(lambda: done.wait())

    def record(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def launch_host_func(self, callback, arg):
        with S.lock:
            S.host_funcs += 1
        self._put(lambda: callback(arg))

    def synchronize(self):
        S.sync("Stream.synchronize")
        done = threading.Event()
        self._put(done.set)
        done.wait()

    def block(self, gate: threading.Event):
        """Test helper: a kernel that runs until ``gate`` is set."""
        self.tick()
        self._put(lambda: gate.wait())


def _merge(a, b):
    out = dict(a)
    for k, v in b.items():
        if out.get(k, 0) < v:
            out[k] = v
    return out


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.clock = {}
        self._done = threading.Event()
        self._done.set()        # never recorded: complete, as CUDA's
        self.stream = None

    def record(self, stream=None):
        if stream is None:
            stream = _cur_stream()
        self.stream = stream
        self.clock = dict(stream.clock)
        if stream.null:
            # the legacy stream waits for everything: its events order all
            for s in S.streams:
                self.clock = _merge(self.clock, {s.sid: s.seq})
        d = self._done = threading.Event()
        stream._put(d.set)

    @property
    def done(self):
        return self._done.is_set()

    def synchronize(self):
        S.sync("Event.synchronize")
        self._done.wait()


def get_elapsed_time(start, end):
    return 0.0


class Device:
    def __init__(self, device=None):
        self.id = _cur_dev() if device is None else int(device)
        if not 0 <= self.id < S.ndev:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._prev = []

    def __enter__(self):
        self._prev.append(_cur_dev())
        _tls.dev = self.id
        return self

    def __exit__(self, *exc):
        _tls.dev = self._prev.pop()

    def use(self):
        _tls.dev = self.id

    def synchronize(self):
        S.sync("Device.synchronize")
        for s in list(S.streams):
            if s.dev == self.id:
                done = threading.Event()
                s._put(done.set)
                done.wait()


class CUDARuntimeError(RuntimeError):
    pass


def get_current_stream(device_id=None):
    return _cur_stream()


# ------------------------------------------------------------- memory

class MemoryPool:
    def __init__(self):
        self.used = 0
        self.total = 0
        self.lock = threading.Lock()

    def _alloc(self, nbytes):
        with self.lock:
            self.used += nbytes
            self.total = max(self.total, self.used)

    def _free(self, nbytes):
        with self.lock:
            self.used -= nbytes

    def used_bytes(self):
        return self.used

    def total_bytes(self):
        return self.total

    def free_all_blocks(self, stream=None):
        with self.lock:
            self.total = self.used

    def n_free_blocks(self):
        return 0


def get_default_memory_pool():
    return S.pools[_cur_dev()]


def get_default_pinned_memory_pool():
    return MemoryPool()


DEVICE_MEMORY = 16 << 30


class _Buf:
    """What a device allocation remembers: device, last write, reads since."""
    __slots__ = ("dev", "wsid", "wseq", "reads", "__weakref__")

    def __init__(self, dev):
        self.dev = dev
        self.wsid = 0
        self.wseq = 0
        self.reads = []


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


_bufs = {}      # id(root numpy array) -> _Buf (dropped when the root dies)


def _buf_of(a, dev, new=False):
    r = _root(a)
    b = _bufs.get(id(r))
    if b is None or new:
        b = _Buf(dev)
        _bufs[id(r)] = b
        pool = S.pools[dev]
        n = r.nbytes
        pool._alloc(n)
        key = id(r)
        weakref.finalize(r, _release, key, pool, n)
    return b


def _release(key, pool, n):
    _bufs.pop(key, None)
    pool._free(n)


def _access(buf, stream, write, what):
    """Record an access of ``buf`` by ``stream``; note a race if unordered."""
    if stream.null:
        pos = (0, 0)
    else:
        pos = (stream.sid, stream.seq)
    if not stream.null:
        if buf.wsid and buf.wsid != stream.sid and stream.clock.get(buf.wsid, 0) < buf.wseq:
            S.races.append("%s on %s reads/writes a buffer written on stream%d at %d "
                           "without waiting for it" % (what, stream.name, buf.wsid, buf.wseq))
        if write:
            for sid, seq in buf.reads:
                if sid and sid != stream.sid and stream.clock.get(sid, 0) < seq:
                    S.races.append("%s on %s overwrites a buffer read on stream%d at %d "
                                   "without waiting for the read" % (what, stream.name, sid, seq))
    if write:
        buf.wsid, buf.wseq = pos
        buf.reads = []
    else:
        if len(buf.reads) > 64:
            buf.reads = buf.reads[-32:]
        buf.reads.append(pos)


# -------------------------------------------------------------- arrays

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", ctypes.c_uint8 * 4), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsules = {}      # DLManagedTensor address -> (struct, device array)
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dl_capsule(arr):
    """A real "dltensor" PyCapsule whose DLTensor names a CUDA device (so
    numpy refuses it, as it does CuPy's), its buffer kept here by address."""
    m = _DLManagedTensor()
    m.dl_tensor.device.device_type = 2          # kDLCUDA
    m.dl_tensor.device.device_id = arr._dev
    m.dl_tensor.ndim = arr.ndim
    addr = ctypes.addressof(m)
    _capsules[addr] = (m, arr)
    return _capsule_new(addr, b"dltensor", None)


def from_dlpack(x):
    """The device array sharing the buffer of a capsule (or of an object
    with ``__dlpack__``); a capsule is consumed once, as real ones are."""
    cap = x.__dlpack__() if hasattr(x, "__dlpack__") else x
    try:
        addr = _capsule_ptr(cap, b"dltensor")
    except ValueError:
        raise ValueError("not an unused DLPack capsule") from None
    entry = _capsules.pop(addr, None)
    if entry is None:
        raise TypeError("the CuPy double reads only its own DLPack capsules")
    _capsule_rename(cap, b"used_dltensor")
    arr = entry[1]
    return ndarray._wrap(arr._a, arr._dev)


class ndarray:
    """A device array: a numpy array plus the device it lives on."""
    __slots__ = ("_a", "_dev", "__weakref__")

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        a = np.empty(shape, dtype=dtype, order=order)
        self._a = a
        self._dev = _cur_dev()
        _buf_of(a, self._dev, new=True)

    @classmethod
    def _wrap(cls, a, dev):
        x = object.__new__(cls)
        x._a = a
        x._dev = dev
        return x

    # metadata (no device access)
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    device = property(lambda self: Device(self._dev))
    data = property(lambda self: MemoryPointer(self))

    @property
    def T(self):
        return _call(lambda a: a.T, (self,), {}, "T")

    def __array__(self, *a, **k):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        USED.add("ufunc:%s.%s" % (ufunc.__name__, method))
        return _call(getattr(ufunc, method), inputs, kwargs, ufunc.__name__,
                     writes_first=(method == "at"))

    def __array_function__(self, func, types_, args, kwargs):
        USED.add("function:%s.%s" % (func.__module__, func.__name__))
        return _call(func, args, kwargs, func.__name__)

    def __getattr__(self, name):
        if name.startswith("__"):
            # no __array_interface__ & co: numpy must not see device memory
            raise AttributeError("'cupy.ndarray' object has no attribute %r" % name)
        attr = getattr(self._a, name)
        if callable(attr):
            inplace = name in _INPLACE_METHODS

            def method(*args, **kwargs):
                return _call(lambda a, *r, **k: getattr(a, name)(*r, **k), (self,) + args,
                             kwargs, name, writes_first=inplace)
            return method
        return attr

    def __getitem__(self, key):
        return _call(operator.getitem, (self, key), {}, "getitem")

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray):
            value = _h2d(value)
        _call(operator.setitem, (self, key, value), {}, "setitem", writes_first=True)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield self[i]

    def _scalar(self, conv, what):
        S.sync("ndarray.%s" % what)
        _access(_buf_of(self._a, self._dev), _cur_stream(), False, what)
        return conv(self._a)

    def __bool__(self):
        return self._scalar(bool, "__bool__")

    def __float__(self):
        return self._scalar(float, "__float__")

    def __int__(self):
        return self._scalar(int, "__int__")

    def __index__(self):
        return self._scalar(operator.index, "__index__")

    def __complex__(self):
        return self._scalar(complex, "__complex__")

    def item(self, *args):
        return self._scalar(lambda a: a.item(*args), "item")

    def tolist(self):
        return self._scalar(lambda a: a.tolist(), "tolist")

    def __repr__(self):
        return "fakecupy.ndarray(shape=%s, dtype=%s, device=%d)" % (self.shape, self.dtype,
                                                                     self._dev)

    def get(self, stream=None, order="C", out=None, blocking=True):
        return asnumpy(self, stream=stream, out=out, blocking=blocking)

    # DLPack: a capsule of this device buffer (the double's own kind)
    def __dlpack__(self, stream=None, **kwargs):
        return _dl_capsule(self)

    def __dlpack_device__(self):
        return (2, self._dev)       # kDLCUDA

    def toDlpack(self):
        return _dl_capsule(self)

    def set(self, arr, stream=None):
        # CuPy's checks: a numpy array of exactly this dtype and shape
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError("{} array cannot be set to {} array".format(arr.dtype, self.dtype))
        if self.shape != arr.shape:
            raise ValueError("Shape mismatch. Old shape: {}, new shape: {}".format(
                self.shape, arr.shape))
        s = _cur_stream() if stream is None else stream
        if s.null:
            S.sync("ndarray.set on the default stream")
        s.tick()
        _access(_buf_of(self._a, self._dev), s, True, "set")
        np.copyto(self._a, arr)

    def __hash__(self):
        raise TypeError("unhashable type: 'cupy.ndarray'")


_INPLACE_METHODS = {"fill", "sort", "partition", "put", "itemset", "resize", "setfield"}


def _binop(name, inplace=False):
    op = getattr(operator, name)

    def f(self, other):
        return _call(op, (self, other), {}, name, writes_first=inplace)
    return f


for _n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
           "xor", "lshift", "rshift", "lt", "le", "eq", "ne", "gt", "ge"):
    _d = _n.rstrip("_")
    setattr(ndarray, "__%s__" % _d, _binop(_n))
    if _n not in ("lt", "le", "eq", "ne", "gt", "ge"):
        setattr(ndarray, "__r%s__" % _d,
                (lambda op: lambda self, other: _call(op, (other, self), {}, "r" + _d))(
                    getattr(operator, _n)))
        setattr(ndarray, "__i%s__" % _d, _binop("i" + _n.rstrip("_") if _n.endswith("_")
                                                else "i" + _n, inplace=True))
for _n in ("neg", "pos", "abs", "invert"):
    setattr(ndarray, "__%s__" % _n,
            (lambda op, nm: lambda self: _call(op, (self,), {}, nm))(getattr(operator, _n), _n))


class MemoryPointer:
    def __init__(self, arr):
        self.arr = arr
        self.device_id = arr._dev

    @property
    def ptr(self):
        return self.arr._a.__array_interface__["data"][0]

    def copy_from_device_async(self, src, size, stream=None):
        s = _cur_stream() if stream is None else stream
        s.tick()
        _access(_buf_of(src.arr._a, src.arr._dev), s, False, "copy_from_device_async")
        _access(_buf_of(self.arr._a, self.arr._dev), s, True, "copy_from_device_async")
        d = self.arr._a.reshape(-1).view(np.uint8)
        d[:size] = src.arr._a.reshape(-1).view(np.uint8)[:size]


def _h2d(value):
    """A host value used in a device expression: an implicit upload."""
    x = ndarray._wrap(np.array(value), _cur_dev())
    _buf_of(x._a, x._dev, new=True)
    return x


def _unwrap(x, arrays, allow_host):
    if isinstance(x, ndarray):
        arrays.append(x)
        return x._a
    if isinstance(x, np.ndarray) and not allow_host and x.ndim > 0:
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(y, arrays, allow_host) for y in x)
    if isinstance(x, dict):
        return {k: _unwrap(v, arrays, allow_host) for k, v in x.items()}
    return x


def _call(fn, args, kwargs, what, writes_first=False, allow_host=False):
    ins = []
    a = _unwrap(args, ins, allow_host)
    outs = []
    k = _unwrap(kwargs, outs, allow_host) if kwargs else {}
    dev = _cur_dev()
    stream = _cur_stream()
    for x in ins + outs:
        if x._dev != dev:
            raise ValueError("The device where the array resides (%d) is different from the "
                             "current device (%d). Peer access is unavailable between these "
                             "devices." % (x._dev, dev))
    if what in _META or (what == "getitem" and not _fancy(args[1])):
        # shape-only views: no device work, nothing to order
        return _wrap_result(fn(*a, **k), dev, {id(_root(x._a)) for x in ins + outs})
    stream.tick()
    written = set()
    out_kw = kwargs.get("out") if kwargs else None
    if out_kw is not None:
        for o in (out_kw if isinstance(out_kw, tuple) else (out_kw,)):
            if isinstance(o, ndarray):
                written.add(id(o))
    if writes_first and ins:
        written.add(id(ins[0]))
    if what in ("copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis") and ins:
        written.add(id(ins[0]))
    for x in ins + outs:
        _access(_buf_of(x._a, x._dev), stream, id(x) in written, what)
    res = fn(*a, **k)
    roots = {id(_root(x._a)) for x in ins + outs}
    return _wrap_result(res, dev, roots)


_META = {"reshape", "view", "T", "transpose", "swapaxes", "squeeze", "expand_dims",
         "broadcast_to", "moveaxis", "rollaxis", "atleast_1d", "atleast_2d", "atleast_3d"}


def _fancy(key):
    if isinstance(key, tuple):
        return any(_fancy(k) for k in key)
    return isinstance(key, (ndarray, np.ndarray, list))


def _wrap_result(res, dev, roots):
    if isinstance(res, np.ndarray):
        _buf_of(res, dev)
        return ndarray._wrap(res, dev)
    if isinstance(res, np.generic):
        return _wrap_result(np.asarray(res), dev, roots)
    if isinstance(res, tuple):
        return tuple(_wrap_result(r, dev, roots) for r in res)
    if isinstance(res, list):
        return [_wrap_result(r, dev, roots) for r in res]
    return res


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if not isinstance(a, ndarray):
        return np.asarray(a)
    s = _cur_stream() if stream is None else stream
    s.tick()
    _access(_buf_of(a._a, a._dev), s, False, "asnumpy")
    if blocking:
        S.sync("asnumpy(blocking=True)")
        if not s.null:
            done = threading.Event()
            s._put(done.set)
            done.wait()
    if out is None:
        return np.array(a._a, order=order)
    if not isinstance(out, np.ndarray) or out.shape != a.shape or out.dtype != a.dtype:
        raise ValueError("out must be a numpy array of the same shape and dtype")
    np.copyto(out, a._a)
    return out


# ------------------------------------------------------------- random


def _float_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype.char not in "fd":     # as cupy.random's _check_and_get_dtype
        raise TypeError("cupy.random only supports float32 and float64")
    return dtype


class RandomState:
    """``cupy.random.RandomState`` over a numpy generator: draws are device
    arrays made on the current stream, parameters must be device arrays or
    Python scalars, and the generator works only on the device current when
    it was made (a cuRAND generator belongs to one)."""

    def __init__(self, seed=None, method=None):
        self._dev = _cur_dev()
        self.draws = 0
        self.seed(seed)
        with S.lock:
            S.generators.append(self)

    def seed(self, seed=None):
        if seed is not None:
            seed = int(np.asarray(seed))
            if not 0 <= seed < 2 ** 64:
                raise ValueError("Seed must be an integer between 0 and 2**64 - 1")
        self._seed = seed
        self._g = np.random.Generator(np.random.PCG64(seed))

    def _draw(self, what, fn, args, kwargs, dtype):
        if _cur_dev() != self._dev:
            raise CUDARuntimeError("cuRAND generator of device %d used on device %d"
                                   % (self._dev, _cur_dev()))
        USED.add("random.RandomState.%s" % what)
        self.draws += 1
        return _call(lambda *a, **k: np.asarray(fn(*a, **k)).astype(dtype, copy=False),
                     args, kwargs, "random." + what)

    def random_sample(self, size=None, dtype=float):
        dt = _float_dtype(dtype)
        return self._draw("random_sample", lambda: self._g.random(size), (), {}, dt)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        dt = _float_dtype(dtype)
        return self._draw("uniform", lambda lo, hi: self._g.uniform(lo, hi, size), (low, high),
                          {}, dt)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        dt = _float_dtype(dtype)
        return self._draw("normal", lambda m, s: self._g.normal(m, s, size), (loc, scale), {}, dt)

    def standard_exponential(self, size=None, dtype=float):
        dt = _float_dtype(dtype)
        return self._draw("standard_exponential", lambda: self._g.standard_exponential(size),
                          (), {}, dt)

    def gamma(self, shape, scale=1.0, size=None, dtype=float):
        return self._draw("gamma", lambda k, t: self._g.gamma(k, t, size), (shape, scale), {},
                          np.dtype(dtype))

    def poisson(self, lam=1.0, size=None, dtype="l"):
        return self._draw("poisson", lambda lm: self._g.poisson(lm, size), (lam,), {},
                          np.dtype(dtype))

    def permutation(self, a):
        if not isinstance(a, int):
            raise NotImplementedError("the double permutes ranges only")
        return self._draw("permutation", lambda: self._g.permutation(a), (), {},
                          np.dtype(np.int64))


def _creator(name):
    f = getattr(np, name)

    def create(*args, **kwargs):
        return _call(f, args, kwargs, name, allow_host=True)
    create.__name__ = name
    return create


def get_array_module(*args):
    for x in args:
        if isinstance(x, ndarray):
            return _cupy
    return np


def _wrap_fn(f, name):
    def g(*args, **kwargs):
        return _call(f, args, kwargs, name)
    g.__name__ = name
    return g


_wrapped_cache = {}


def _proxy_module(name, base):
    m = types.ModuleType(name)

    def __getattr__(attr):
        USED.add("attr:%s.%s" % (name, attr))
        v = getattr(base, attr)
        if isinstance(v, types.ModuleType):
            return _proxy_module(name + "." + attr, v)
        if isinstance(v, np.ufunc):
            return v        # ufuncs dispatch through __array_ufunc__
        if callable(v) and not isinstance(v, type):
            key = (name, attr)
            w = _wrapped_cache.get(key)
            if w is None:
                w = _wrapped_cache[key] = _wrap_fn(v, attr)
            return w
        return v
    m.__getattr__ = __getattr__
    return m


_CREATORS = ("asarray", "array", "asanyarray", "ascontiguousarray")
_cupy = None


def install(ndev=2):
    """Put the double in ``sys.modules`` as ``cupy``/``cupyx``; returns its state."""
    global S, _cupy
    S = State(ndev)
    _nulls.clear()
    _bufs.clear()
    cp = _proxy_module("cupy", np)
    cp.ndarray = ndarray
    cp.asnumpy = asnumpy
    cp.from_dlpack = from_dlpack
    cp.fromDlpack = from_dlpack
    cp.get_array_module = get_array_module
    cp.get_default_memory_pool = get_default_memory_pool
    cp.get_default_pinned_memory_pool = get_default_pinned_memory_pool
    cp.__version__ = "13.0.0-fake"
    cp._fake_state = S
    for n in _CREATORS:
        setattr(cp, n, _creator(n))
    rnd = types.ModuleType("cupy.random")
    rnd.RandomState = RandomState
    cp.random = rnd
    cuda = types.ModuleType("cupy.cuda")
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.Device = Device
    cuda.get_current_stream = get_current_stream
    cuda.get_elapsed_time = get_elapsed_time
    cuda.MemoryPointer = MemoryPointer
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: S.ndev
    runtime.memGetInfo = lambda: (DEVICE_MEMORY - S.pools[_cur_dev()].used, DEVICE_MEMORY)
    runtime.CUDARuntimeError = CUDARuntimeError
    cuda.runtime = runtime
    cp.cuda = cuda
    cpx = types.ModuleType("cupyx")
    cpx.empty_pinned = lambda shape, dtype=float, order="C": np.empty(shape, dtype, order)
    cpx.zeros_pinned = lambda shape, dtype=float, order="C": np.zeros(shape, dtype, order)
    _cupy = cp
    import importlib.machinery
    for name, m in (("cupy", cp), ("cupy.cuda", cuda), ("cupy.cuda.runtime", runtime),
                    ("cupyx", cpx), ("cupy.random", rnd)):
        m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    sys.modules["cupy"] = cp
    sys.modules["cupy.cuda"] = cuda
    sys.modules["cupy.cuda.runtime"] = runtime
    sys.modules["cupyx"] = cpx
    sys.modules["cupy.random"] = rnd
    return S


def uninstall():
    global S
    for n in ("cupy", "cupy.cuda", "cupy.cuda.runtime", "cupyx", "cupy.random"):
        sys.modules.pop(n, None)
    if S is not None:
        for s in S.streams:
            s.q.put(None)
    S = None
