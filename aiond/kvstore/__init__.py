"""``mx.kv`` / ``mx.kvstore``: key-value stores for parameter synchronisation."""
from .base import KVStoreBase, create  # noqa: F401
from .local import KVStore  # noqa: F401

__all__ = ["KVStoreBase", "KVStore", "create"]
