"""Pickling a DataLoader's dataset and batchify function for its workers.

A dataset's transforms are often hybridized blocks (``transforms.Compose``
hybridizes its runs of HybridBlocks) and, once they have run, hold a traced
graph with compiled plans: engine objects and kernel wrappers that neither
pickle nor would mean anything in another process. A worker gets each
such block as it was before its first call (MXNet's workers, forked,
re-trace on their first call too): the block's own state (children,
parameters, settings) travels, the cached graph does not.
"""
from __future__ import annotations

import copy
import io
import pickle

__all__ = ["dumps"]


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        from ..block import HybridBlock
        if isinstance(obj, HybridBlock) and (obj.__dict__.get("_cached_op") is not None
                                             or obj.__dict__.get("_fast") is not None):
            c = copy.copy(obj)
            c._clear_cached_op()
            return c.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
        return NotImplemented


def dumps(obj):
    buf = io.BytesIO()
    p = _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
    p.dump(obj)
    return buf.getvalue()
