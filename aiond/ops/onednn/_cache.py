"""Primitives built once per (op, shapes, strides, attributes, threads):
oneDNN picks its kernel and layouts for exactly these, so a key holds
everything that went into the primitive descriptor."""
from __future__ import annotations

import collections
import threading

CAPACITY = 1024

_cache: "collections.OrderedDict" = collections.OrderedDict()
_lock = threading.Lock()
stats = {"hits": 0, "misses": 0}


def get(key, build):
    """The entry for ``key``, made by ``build()`` on a miss (None: oneDNN has
    no implementation; remembered too, so the numpy kernel is taken at once)."""
    try:
        e = _cache[key]
        stats["hits"] += 1
        return e
    except KeyError:
        pass
    e = build()         # outside the lock: two threads may build; one wins
    stats["misses"] += 1
    with _lock:
        _cache[key] = e
        if len(_cache) > CAPACITY:
            _cache.popitem(last=False)
    return e


def clear():
    with _lock:
        _cache.clear()
