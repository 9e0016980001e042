"""``mxnet.kvstore.kvstore``: the module where MXNet 1.9.1 defines its
``KVStore`` class (``init``, ``push``, ``pull``, ``pushpull``,
``broadcast``, ``row_sparse_pull``, ``set_optimizer``, ``rank``,
``num_workers``, ``save/load_optimizer_states`` ...). aiond's is the
local store of ``aiond.kvstore.local``; ``mx.kv.create`` picks the
distributed ones."""
from .local import KVStore  # noqa: F401

__all__ = ["KVStore"]
