"""Devices: ``mx.cpu(i)``, ``mx.gpu(i)``, the default context and ``with ctx:``.

Contexts are interned (``mx.cpu(0) is mx.cpu(0)``) so the op push path can
compare them by identity. The default context is a ``contextvars`` variable:
``with mx.gpu(0):`` in one thread or asyncio task does not leak into another.
"""
from __future__ import annotations

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "gpu_memory_info"]

import contextvars
import warnings

from ._extras import install_hint
from .base import MXNetError


class _ContextMeta(type):
    """``Context.default_ctx`` as a class property with a setter (MXNet 1.x's
    deprecated spelling of the default context of this thread)."""

    @property
    def default_ctx(cls):
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return _default_ctx.get()

    @default_ctx.setter
    def default_ctx(cls, val):
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        _default_ctx.set(val)


_DEPRECATED = ("Context.default_ctx has been deprecated. Please use Context.current_context() "
               "instead. Please use test_utils.set_default_context to set a default context")


class Context(metaclass=_ContextMeta):
    """A device: its type ('cpu', 'gpu', 'cpu_pinned', 'cpu_shared') and id.

    >>> mx.cpu(1)
    cpu(1)
    >>> with mx.cpu(1):
    ...     mx.nd.zeros((2,)).context
    cpu(1)
    """
    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {'cpu': 1, 'gpu': 2, 'cpu_pinned': 3, 'cpu_shared': 5}
    _interned: dict = {}
    __slots__ = ("device_typeid", "device_id", "__weakref__")

    def __new__(cls, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if isinstance(device_type, str):
            if device_type not in cls.devstr2type:
                raise MXNetError("unknown device type %r; expected one of %s"
                                 % (device_type, sorted(cls.devstr2type)))
            typeid = cls.devstr2type[device_type]
        elif device_type in cls.devtype2str:
            typeid = int(device_type)
        else:
            raise MXNetError("unknown device type %r" % (device_type,))
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise MXNetError("device_id must be an int >= 0, got %r" % (device_id,))
        key = (typeid, device_id)
        ctx = cls._interned.get(key)
        if ctx is None:
            ctx = object.__new__(cls)
            ctx.device_typeid = typeid
            ctx.device_id = device_id
            ctx = cls._interned.setdefault(key, ctx)
        return ctx

    @property
    def device_type(self) -> str:
        return Context.devtype2str[self.device_typeid]

    @property
    def is_gpu(self) -> bool:
        return self.device_typeid == 2

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return isinstance(other, Context) and self.device_typeid == other.device_typeid \
            and self.device_id == other.device_id

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return '%s(%d)' % (self.device_type, self.device_id)

    __repr__ = __str__

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    def __enter__(self):
        # the tokens live in a context variable, not on this (interned, shared)
        # object: threads and tasks entering the same context at once each
        # get their own stack
        tok = _default_ctx.set(self)
        _ctx_tokens.set(_ctx_tokens.get() + (tok,))
        return self

    def __exit__(self, *exc):
        stack = _ctx_tokens.get()
        _ctx_tokens.set(stack[:-1])
        _default_ctx.reset(stack[-1])

    def empty_cache(self):
        """Release cached memory of this device back to the system (for a
        GPU: CuPy's pool's free blocks, without synchronizing the device)."""
        if self.device_typeid == 2:
            import sys
            cp = sys.modules.get("cupy")
            if cp is not None:      # nothing is cached on a GPU never used
                with cp.cuda.Device(self.device_id):
                    cp.get_default_memory_pool().free_all_blocks()
            return
        for release in _HOST_CACHE_RELEASE:
            release()

    # MXNet 1.x spelling: Context.default_ctx
    @classmethod
    def _get_default(cls):
        return _default_ctx.get()


def cpu(device_id: int = 0) -> Context:
    """The CPU context; ``device_id`` only labels arrays (all share the host)."""
    return Context('cpu', device_id)


def gpu(device_id: int = 0) -> Context:
    """The context of GPU ``device_id``; arrays on it need CuPy and a GPU."""
    return Context('gpu', device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return Context('cpu_pinned', device_id)


# What frees the host's cached buffers: the engine's pool registers its
# release at import (the engine sits above context, so it is handed in).
_HOST_CACHE_RELEASE: list = []


def on_empty_cache(release):
    """Have ``Context.empty_cache`` on a CPU context call ``release()`` (the
    engine's buffer pool registers itself here)."""
    _HOST_CACHE_RELEASE.append(release)


_default_ctx: contextvars.ContextVar = contextvars.ContextVar("aiond_default_ctx", default=cpu(0))
_ctx_tokens: contextvars.ContextVar = contextvars.ContextVar("aiond_ctx_tokens", default=())


def current_context() -> Context:
    """The context ``with ctx:`` selected here, else ``cpu(0)``."""
    return _default_ctx.get()


def num_gpus() -> int:
    """Number of GPUs CuPy can see; 0 without CuPy or without a GPU."""
    try:
        import cupy  # noqa: F401 - imported only when asked
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def gpu_memory_info(device_id: int = 0):
    """(free, total) bytes of GPU ``device_id``, as in MXNet."""
    n = num_gpus()
    if device_id >= n:
        raise MXNetError("gpu(%d) is not available: %d GPU(s) found (GPU support needs CuPy: "
                         "%s)" % (device_id, n, install_hint("gpu")))
    import cupy
    with cupy.cuda.Device(device_id):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)
