"""``mx.kv`` / ``mx.kvstore``: key-value stores for parameter synchronisation."""
from . import base  # noqa: F401
from .base import KVStoreBase, create  # noqa: F401
from .local import KVStore  # noqa: F401
from . import kvstore, kvstore_server  # noqa: F401,E402  (MXNet's module paths)

__all__ = ["KVStoreBase", "KVStore", "create"]
