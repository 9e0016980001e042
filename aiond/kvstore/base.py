"""``KVStoreBase``: the interface every key-value store implements, and the
registry by which ``mx.kv.create(name)`` finds stores (distributed stores
plug in by name with ``@KVStoreBase.register``)."""
from __future__ import annotations

import warnings

from ..base import MXNetError

__all__ = ["KVStoreBase", "create"]


class KVStoreBase:
    """A store of arrays by key, synchronised across devices or workers."""

    kv_registry: dict = {}

    OPTIMIZER = "optimizer"

    def broadcast(self, key, value, out, priority=0):
        raise NotImplementedError("The 'broadcast' method must be implemented.")

    def pushpull(self, key, value, out=None, priority=0):
        raise NotImplementedError("The 'pushpull' method must be implemented.")

    def set_optimizer(self, optimizer):
        raise NotImplementedError("The 'set_optimizer' method must be implemented.")

    @staticmethod
    def is_capable(capability):
        raise NotImplementedError("The 'is_capable' method must be implemented.")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError("The 'save_optimizer_states' method must be implemented.")

    def load_optimizer_states(self, fname):
        raise NotImplementedError("The 'load_optimizer_states' method must be implemented.")

    @property
    def type(self):
        raise NotImplementedError("The 'type' property must be implemented.")

    @property
    def rank(self):
        raise NotImplementedError("The 'rank' property must be implemented.")

    @property
    def num_workers(self):
        raise NotImplementedError("The 'num_workers' property must be implemented.")

    @staticmethod
    def register(klass):
        """Register a store class; ``mx.kv.create(klass.__name__.lower())``
        then builds it. Re-registering a name warns and replaces it."""
        if not isinstance(klass, type):
            raise TypeError("KVStoreBase.register takes a class, got %r" % (klass,))
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn("WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s"
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A key-value store for testing (MXNet registers it as 'teststore'):
    pushpull sums the values on the first value's context; no optimizer."""

    def broadcast(self, key, value, out, priority=0):
        out = out if isinstance(out, list) else [out]
        for o in out:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        from ..ndarray import NDArray
        ctx = value[0].context
        if isinstance(value, NDArray):
            if out is not None:
                out = out if isinstance(out, list) else [out]
                for o in out:
                    o[:] = value
        else:
            reduced_value = sum([val.as_in_context(ctx) for val in value])
            if out is None:
                for v in value:
                    v[:] = reduced_value
            else:
                out = out if isinstance(out, list) else [out]
                for o in out:
                    o[:] = reduced_value

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError('Unknown capability: {}'.format(capability))

    @property
    def type(self):
        return 'teststore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()


_BUILTIN = ("local", "device", "local_allreduce_cpu", "local_allreduce_device")
_DIST_SYNC = ("dist_sync", "dist_device_sync", "dist_sync_device", "dist")
_DIST_ASYNC = ("dist_async", "dist_device_async")
_DIST = _DIST_SYNC + _DIST_ASYNC + ("nccl", "horovod")


def create(name="local"):
    """Create a KVStore: 'local' (aggregate on the CPU), 'device' (aggregate
    on the devices), 'local_allreduce_cpu', 'local_allreduce_device', the
    distributed 'dist_sync' / 'dist_device_sync' / 'dist_async' (MPI: run
    under ``mpiexec``; a process started without it is one worker), or any
    registered store's name."""
    if not isinstance(name, str):
        raise TypeError("name must be a string")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name in _BUILTIN:
        from .local import KVStore
        return KVStore(name)
    if name in _DIST_SYNC:
        from .dist import DistSyncKVStore
        return DistSyncKVStore(name)
    if name in _DIST_ASYNC:
        from .dist_async import DistAsyncKVStore
        return DistAsyncKVStore(name)
    if name in _DIST:
        raise MXNetError("kvstore type %r is not available in aiond; use 'dist_sync', "
                         "'dist_device_sync' or 'dist_async' (MPI)" % name)
    raise MXNetError("unknown kvstore type %r; expected one of %s or a registered store (%s)"
                     % (name, ", ".join(_BUILTIN), ", ".join(sorted(KVStoreBase.kv_registry)) or "none"))
