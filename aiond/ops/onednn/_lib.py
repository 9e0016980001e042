"""A ctypes binding of the part of oneDNN's C API (v3.x) the kernels use.

Loaded on the first kernel call that could use it, never by ``import aiond``:
``AIOND_ONEDNN_LIB`` (a path), else ``libdnnl.so.3`` next to the running
Python (``sys.prefix/lib``: where the ``onednn-cpu-gomp`` wheel puts it),
else the system's. ``AIOND_ONEDNN=0`` turns oneDNN off; a missing library
leaves the numpy kernels in charge without a word.

Memory descriptors are opaque handles in oneDNN 3.x; the constants below are
those of ``dnnl_types.h``/``dnnl_common_types.h`` of v3.2.
"""
from __future__ import annotations

import ctypes as C
import os
import sys
import threading

# dnnl_status_t
SUCCESS, UNIMPLEMENTED = 0, 3
# dnnl_data_type_t
F32 = 3
# dnnl_format_tag_t
ANY = 1
PLAIN = {1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7}       # ndims -> a, ab, abc, abcd, ...
# dnnl_prop_kind_t
FWD_TRAINING, FWD_INFERENCE, BACKWARD, BWD_DATA, BWD_WEIGHTS = 64, 96, 128, 160, 192
# dnnl_alg_kind_t
CONV_DIRECT, DECONV_DIRECT = 0x1, 0xa
ELTWISE_RELU = 0x20
POOL_MAX, POOL_AVG_INC, POOL_AVG_EXC = 0x1ff, 0x2ff, 0x3ff
# dnnl_normalization_flags_t
USE_GLOBAL_STATS, USE_SCALE, USE_SHIFT, FUSE_NORM_RELU = 0x1, 0x2, 0x4, 0x8
BINARY_ADD, BINARY_MUL, BINARY_SUB = 0x1fff0, 0x1fff1, 0x1fff5
# DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE of oneDNN 3.2: post-op i's second
# operand is (i + 1) * POST_OP_BASE | A_SRC_1 (older releases used 16384)
POST_OP_BASE = 32768
# dnnl_query_t
Q_SRC, Q_DIFF_SRC, Q_WEIGHTS, Q_DIFF_WEIGHTS, Q_DST, Q_DIFF_DST, Q_WORKSPACE = \
    129, 130, 131, 132, 133, 134, 135
Q_EXEC_ARG, Q_SCRATCHPAD = 255, 136
Q_IMPL_INFO = 8
# DNNL_ARG_*
A_SRC, A_DST, A_WEIGHTS, A_BIAS = 1, 17, 33, 41
A_SRC_1 = 2
A_MEAN, A_VARIANCE, A_SCALE, A_SHIFT, A_WORKSPACE, A_SCRATCHPAD = 49, 50, 51, 52, 64, 80
SCRATCHPAD_USER = 1
A_DIFF_SRC, A_DIFF_DST, A_DIFF_WEIGHTS, A_DIFF_BIAS = 129, 145, 161, 169
A_DIFF_SCALE, A_DIFF_SHIFT = 255, 256
CPU = 1

Dims = C.c_int64 * 12
_p = C.c_void_p


class ExecArg(C.Structure):
    _fields_ = [("arg", C.c_int), ("memory", _p)]


class OneDNNError(RuntimeError):
    pass


_SIGS = {
    "dnnl_engine_create": (C.c_int, [C.POINTER(_p), C.c_int, C.c_size_t]),
    "dnnl_stream_create": (C.c_int, [C.POINTER(_p), _p, C.c_uint]),
    "dnnl_memory_desc_create_with_tag": (C.c_int, [C.POINTER(_p), C.c_int, Dims, C.c_int, C.c_int]),
    "dnnl_memory_desc_create_with_strides": (C.c_int, [C.POINTER(_p), C.c_int, Dims, C.c_int, Dims]),
    "dnnl_memory_desc_destroy": (C.c_int, [_p]),
    "dnnl_memory_desc_equal": (C.c_int, [_p, _p]),
    "dnnl_memory_desc_get_size": (C.c_size_t, [_p]),
    "dnnl_memory_desc_clone": (C.c_int, [C.POINTER(_p), _p]),
    "dnnl_memory_create": (C.c_int, [C.POINTER(_p), _p, _p, _p]),
    "dnnl_memory_set_data_handle": (C.c_int, [_p, _p]),
    "dnnl_memory_destroy": (C.c_int, [_p]),
    "dnnl_primitive_attr_create": (C.c_int, [C.POINTER(_p)]),
    "dnnl_primitive_attr_destroy": (C.c_int, [_p]),
    "dnnl_primitive_attr_set_scratchpad_mode": (C.c_int, [_p, C.c_int]),
    "dnnl_post_ops_create": (C.c_int, [C.POINTER(_p)]),
    "dnnl_post_ops_append_eltwise": (C.c_int, [_p, C.c_int, C.c_float, C.c_float]),
    "dnnl_post_ops_append_sum": (C.c_int, [_p, C.c_float, C.c_int32, C.c_int]),
    "dnnl_post_ops_append_binary": (C.c_int, [_p, C.c_int, _p]),
    "dnnl_post_ops_destroy": (C.c_int, [_p]),
    "dnnl_primitive_attr_set_post_ops": (C.c_int, [_p, _p]),
    "dnnl_primitive_desc_query_md": (_p, [_p, C.c_int, C.c_int]),
    "dnnl_primitive_desc_query": (C.c_int, [_p, C.c_int, C.c_int, _p]),
    "dnnl_primitive_desc_destroy": (C.c_int, [_p]),
    "dnnl_primitive_create": (C.c_int, [C.POINTER(_p), _p]),
    "dnnl_primitive_execute": (C.c_int, [_p, _p, C.c_int, C.POINTER(ExecArg)]),
    "dnnl_primitive_destroy": (C.c_int, [_p]),
    "dnnl_reorder_primitive_desc_create": (C.c_int, [C.POINTER(_p), _p, _p, _p, _p, _p]),
    "dnnl_convolution_forward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, C.c_int, _p, _p, _p, _p, Dims, Dims, Dims, Dims, _p]),
    "dnnl_convolution_backward_data_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, _p, Dims, Dims, Dims, Dims, _p, _p]),
    "dnnl_convolution_backward_weights_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, _p, _p, Dims, Dims, Dims, Dims, _p, _p]),
    "dnnl_pooling_forward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, C.c_int, _p, _p, Dims, Dims, Dims, Dims, Dims, _p]),
    "dnnl_pooling_backward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, Dims, Dims, Dims, Dims, Dims, _p, _p]),
    "dnnl_batch_normalization_forward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, C.c_float, C.c_uint, _p]),
    "dnnl_eltwise_forward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, C.c_int, _p, _p, C.c_float, C.c_float, _p]),
    "dnnl_binary_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, _p, _p]),
    "dnnl_batch_normalization_backward_primitive_desc_create": (
        C.c_int, [C.POINTER(_p), _p, C.c_int, _p, _p, _p, C.c_float, C.c_uint, _p, _p]),
}

# bookkeeping calls (no computation, no JIT): bound with the GIL held
_KEEP_GIL = frozenset((
    "dnnl_memory_desc_create_with_tag", "dnnl_memory_desc_create_with_strides",
    "dnnl_memory_desc_destroy", "dnnl_memory_desc_equal", "dnnl_memory_desc_get_size",
    "dnnl_memory_desc_clone", "dnnl_memory_create", "dnnl_memory_set_data_handle",
    "dnnl_memory_destroy", "dnnl_primitive_desc_query_md", "dnnl_primitive_desc_query"))

_lock = threading.Lock()
_state = {"tried": False, "lib": None, "engine": None, "attr": None, "omp": None, "error": None}
_local = threading.local()


def _candidates():
    path = os.environ.get("AIOND_ONEDNN_LIB")
    if path:
        return [path]
    return [os.path.join(sys.prefix, "lib", "libdnnl.so.3"), "libdnnl.so.3"]


def enabled_by_env():
    return os.environ.get("AIOND_ONEDNN", "1").strip().lower() not in ("0", "false", "off", "no")


def load():
    """The loaded library, or None (absent, or turned off). Tried once."""
    st = _state
    if st["tried"]:
        return st["lib"]
    with _lock:
        if st["tried"]:
            return st["lib"]
        try:
            if enabled_by_env():
                from . import _threads
                _threads.quiet_omp_env()    # before libgomp loads with libdnnl
                lib = None
                for path in _candidates():
                    try:
                        lib = C.CDLL(path)
                        break
                    except OSError:
                        continue
                if lib is not None:
                    # the calls that only fill a small struct keep the GIL:
                    # releasing it costs a hand-over to a waiting engine
                    # thread and a wait to get it back (up to the switch
                    # interval), far more than the call (microseconds)
                    held = C.PyDLL(lib._name)
                    for name, (res, args) in _SIGS.items():
                        f = getattr(held if name in _KEEP_GIL else lib, name)
                        f.restype, f.argtypes = res, args
                        setattr(lib, name, f)
                    eng = _p()
                    _check(lib.dnnl_engine_create(C.byref(eng), CPU, 0), "engine_create")
                    st["engine"] = eng
                    # every primitive gets its scratchpad from the caller: the
                    # library's own is a thread_local of the thread that
                    # created the primitive, and engine workers run
                    # primitives other threads created
                    attr = _p()
                    _check(lib.dnnl_primitive_attr_create(C.byref(attr)), "attr_create")
                    _check(lib.dnnl_primitive_attr_set_scratchpad_mode(attr, SCRATCHPAD_USER),
                           "set_scratchpad_mode")
                    st["attr"] = attr
                    st["omp"] = _threads.bind_omp()
                    st["lib"] = lib
        except Exception as e:      # noqa: BLE001 - an unusable library: numpy kernels
            st["error"] = e
            st["lib"] = None
        st["tried"] = True
        return st["lib"]


def _check(status, what):
    if status != SUCCESS:
        raise OneDNNError("oneDNN %s failed (status %d)" % (what, status))


def check(status, what):
    _check(status, what)


def lib():
    return _state["lib"]


def engine():
    return _state["engine"]


_AVX512_CORE = 0x27     # dnnl_cpu_isa_avx512_core: the bits every AVX-512 level has


def wide_isa():
    """Whether oneDNN runs AVX-512 (or newer) kernels here: their convolutions
    take channel counts off the 8-block in channels-last layouts, unpadded."""
    v = _state.get("isa")
    if v is None:
        v = _state["isa"] = int(_state["lib"].dnnl_get_effective_cpu_isa())
    return v & _AVX512_CORE == _AVX512_CORE


def stream():
    """This thread's stream (a stream is not for concurrent use)."""
    s = getattr(_local, "stream", None)
    if s is None:
        s = _p()
        _check(_state["lib"].dnnl_stream_create(C.byref(s), _state["engine"], 1), "stream_create")
        _local.stream = s
    return s


def dims(seq):
    d = Dims()
    for i, v in enumerate(seq):
        d[i] = int(v)
    return d


class MD:
    """An owned memory descriptor handle."""
    __slots__ = ("h",)

    def __init__(self, h):
        self.h = h

    @classmethod
    def plain(cls, shape, tag=None):
        h = _p()
        nd = len(shape)
        _check(lib().dnnl_memory_desc_create_with_tag(
            C.byref(h), nd, dims(shape), F32, PLAIN[nd] if tag is None else tag), "memory_desc")
        return cls(h)

    @classmethod
    def any(cls, shape):
        return cls.plain(shape, ANY)

    @classmethod
    def strided(cls, shape, strides):
        h = _p()
        _check(lib().dnnl_memory_desc_create_with_strides(
            C.byref(h), len(shape), dims(shape), F32, dims(strides)), "memory_desc")
        return cls(h)

    @classmethod
    def of(cls, a):
        """The descriptor of float32 numpy array ``a`` as it lies in memory."""
        if a.flags.c_contiguous:
            return cls.plain(a.shape)
        return cls.strided(a.shape, [s // 4 for s in a.strides])

    @classmethod
    def clone(cls, h):
        out = _p()
        _check(lib().dnnl_memory_desc_clone(C.byref(out), h), "memory_desc_clone")
        return cls(out)

    def __eq__(self, other):
        return bool(lib().dnnl_memory_desc_equal(self.h, other.h))

    __hash__ = None

    def size(self):
        return lib().dnnl_memory_desc_get_size(self.h)

    def __del__(self):
        lib_ = _state["lib"]
        if lib_ is not None and self.h:
            lib_.dnnl_memory_desc_destroy(self.h)
            self.h = None


class Memory:
    """A oneDNN memory object over a buffer it does not own."""
    __slots__ = ("h",)

    def __init__(self, md, ptr=None):
        h = _p()
        _check(lib().dnnl_memory_create(C.byref(h), md.h, engine(), _p(ptr)), "memory_create")
        self.h = h

    def point(self, ptr):
        lib().dnnl_memory_set_data_handle(self.h, _p(ptr))

    def __del__(self):
        lib_ = _state["lib"]
        if lib_ is not None and self.h:
            lib_.dnnl_memory_destroy(self.h)
            self.h = None


class Primitive:
    """A primitive with its descriptor (queried for the layouts it chose)."""
    __slots__ = ("pd", "prim", "__weakref__")

    def __init__(self, pd):
        self.pd = pd
        p = _p()
        _check(lib().dnnl_primitive_create(C.byref(p), pd), "primitive_create")
        self.prim = p

    def md(self, what, index=0):
        """A copy of the descriptor the primitive chose for query ``what``
        (None where it has no such memory)."""
        h = lib().dnnl_primitive_desc_query_md(self.pd, what, index)
        if not h:
            return None
        return MD.clone(h)

    def impl(self):
        s = C.c_char_p()
        lib().dnnl_primitive_desc_query(self.pd, Q_IMPL_INFO, 0, C.byref(s))
        return s.value.decode() if s.value else ""

    def execute(self, args):
        """Run with ``args``: a list of (DNNL_ARG_*, Memory)."""
        n = len(args)
        arr = (ExecArg * n)()
        for i, (a, m) in enumerate(args):
            arr[i].arg = a
            arr[i].memory = m.h
        _check(lib().dnnl_primitive_execute(self.prim, stream(), n, arr), "execute")

    def __del__(self):
        lib_ = _state["lib"]
        if lib_ is not None:
            if self.prim:
                lib_.dnnl_primitive_destroy(self.prim)
            if self.pd:
                lib_.dnnl_primitive_desc_destroy(self.pd)
            self.prim = self.pd = None


refused = []     # the last (function, status) pairs oneDNN declined: for debugging


def relu_attr():
    """Primitive attributes as the default ones plus a ReLU post-op (made once)."""
    return post_ops_attr(("relu",))


def post_ops_attr(ops):
    """Primitive attributes with user scratchpad and post-ops ``ops``, a
    tuple of "sum" (add the destination's old value) and "relu", applied in
    that order (made once per tuple)."""
    if not ops:
        return _state["attr"]
    cache = _state.setdefault("post_attrs", {})
    a = cache.get(ops)
    if a is None:
        with _lock:
            a = cache.get(ops)
            if a is None:
                lb = lib()
                a, po = _p(), _p()
                _check(lb.dnnl_primitive_attr_create(C.byref(a)), "attr_create")
                _check(lb.dnnl_primitive_attr_set_scratchpad_mode(a, SCRATCHPAD_USER),
                       "set_scratchpad_mode")
                _check(lb.dnnl_post_ops_create(C.byref(po)), "post_ops_create")
                for op in ops:
                    if op == "sum":
                        _check(lb.dnnl_post_ops_append_sum(po, 1.0, 0, 0), "post_ops_append_sum")
                    elif op == "relu":
                        _check(lb.dnnl_post_ops_append_eltwise(po, ELTWISE_RELU, 0.0, 0.0),
                               "post_ops_append_eltwise")
                    else:
                        raise ValueError("unknown post-op %r; expected 'sum' or 'relu'" % (op,))
                _check(lb.dnnl_primitive_attr_set_post_ops(a, po), "set_post_ops")
                lb.dnnl_post_ops_destroy(po)
                cache[ops] = a
    return a


def binary_attr(ops):
    """Primitive attributes with user scratchpad and binary post-ops ``ops``:
    (algorithm, MD of the second operand) pairs, applied in order. A new
    handle, owned by the caller (kept with the primitive it made)."""
    lb = lib()
    a, po = _p(), _p()
    _check(lb.dnnl_primitive_attr_create(C.byref(a)), "attr_create")
    _check(lb.dnnl_primitive_attr_set_scratchpad_mode(a, SCRATCHPAD_USER), "set_scratchpad_mode")
    _check(lb.dnnl_post_ops_create(C.byref(po)), "post_ops_create")
    try:
        for alg, md in ops:
            _check(lb.dnnl_post_ops_append_binary(po, alg, md.h), "post_ops_append_binary")
        _check(lb.dnnl_primitive_attr_set_post_ops(a, po), "set_post_ops")
    finally:
        lb.dnnl_post_ops_destroy(po)
    return a


def create_pd(fn_name, *args, attr=None):
    """A primitive descriptor from ``dnnl_<fn_name>`` (its arguments but the
    last, the attributes: user-provided scratchpad, or ``attr``), or None
    where oneDNN has no implementation for the case."""
    pd = _p()
    st = getattr(lib(), fn_name)(C.byref(pd), *args, attr or _state["attr"])
    if st != SUCCESS:
        # unimplemented, or arguments oneDNN rejects: the numpy kernel decides
        # (and raises its own error in the user's terms if they are wrong)
        refused.append((fn_name, st))
        del refused[:-16]
        return None
    return pd


def reorder(src_md, dst_md):
    pd = create_pd("dnnl_reorder_primitive_desc_create", src_md.h, engine(), dst_md.h, engine())
    return None if pd is None else Primitive(pd)
