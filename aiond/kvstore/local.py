"""The single-process KVStore ('local', 'device', ...): values are summed
over devices on push, passed to the updater once per key, and copied out on
pull. Every step is an engine op, so push and pull return at once and keep
the order of the arrays they touch."""
from __future__ import annotations

import numpy as np

from ..base import MXNetError
from ..context import cpu
from ..ndarray import NDArray
from .base import KVStoreBase

__all__ = ["KVStore"]


def _is_int_key(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


class KVStore(KVStoreBase):
    """MXNet's local key-value store."""

    def __init__(self, kvtype="local"):
        self._type = kvtype
        self._store = {}
        self._updater = None
        self._str_keys = None       # None until the first key decides int or str
        self._ctx = cpu()

    # ----------------------------------------------------------- key/values
    def _check_key(self, k):
        if _is_int_key(k):
            is_str = False
        elif isinstance(k, str):
            is_str = True
        else:
            raise MXNetError("kvstore keys must be int or str, got %r" % (k,))
        if self._str_keys is None:
            self._str_keys = is_str
        elif self._str_keys != is_str:
            raise MXNetError("cannot mix int and str keys in one kvstore (got %r after %s keys)"
                             % (k, "str" if self._str_keys else "int"))
        return int(k) if not is_str else k

    def _pairs(self, key, value, what):
        """(key, [arrays]) pairs from MXNet's key/value forms."""
        if isinstance(key, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(key):
                raise MXNetError("%s: %d keys need a list of %d values" % (what, len(key), len(key)))
            return [(self._check_key(k), self._vals(v, what, k)) for k, v in zip(key, value)]
        return [(self._check_key(key), self._vals(value, what, key))]

    @staticmethod
    def _vals(v, what, k):
        vals = list(v) if isinstance(v, (list, tuple)) else [v]
        for x in vals:
            if not isinstance(x, NDArray):
                raise MXNetError("%s: the value for key %r must be an NDArray or a list of "
                                 "NDArrays, got %s" % (what, k, type(x).__name__))
        if not vals:
            raise MXNetError("%s: no value given for key %r" % (what, k))
        return vals

    def _stored(self, k, what):
        try:
            return self._store[k]
        except KeyError:
            raise MXNetError("%s: key %r has not been initialized; call init() first"
                             % (what, k)) from None

    # ------------------------------------------------------------------ API
    def init(self, key, value):
        """Initialise key(s) with value(s) (a copy is stored)."""
        for k, vals in self._pairs(key, value, "init"):
            if k in self._store:
                raise MXNetError("init: key %r is already initialized" % (k,))
            self._store[k] = vals[0].copyto(self._ctx)

    def push(self, key, value, priority=0):
        """Push value(s): a list for one key is summed, then the updater runs
        once with (key, sum, stored); without an updater the sum is stored."""
        for k, vals in self._pairs(key, value, "push"):
            stored = self._stored(k, "push")
            merged = self._merge(vals, stored)
            if self._updater is not None:
                self._updater(k, merged, stored)
            elif merged.stype != stored.stype:
                # MXNet stores the merged value in its own storage type
                self._store[k] = merged.copyto(self._ctx)
            elif merged is not stored:
                merged.copyto(stored)

    def _merge(self, vals, stored):
        for v in vals:
            if v.shape != stored.shape:
                raise MXNetError("push: value of shape %s for a key stored with shape %s"
                                 % (v.shape, stored.shape))
        acc = vals[0].as_in_context(self._ctx)
        if len(vals) == 1:
            return acc.copy() if acc is vals[0] else acc
        for v in vals[1:]:
            acc = acc + v.as_in_context(self._ctx)
        return acc

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value(s) into ``out`` (an array or a list per device);
        sparse outs are skipped unless ``ignore_sparse=False`` (use
        ``row_sparse_pull`` for row_sparse values)."""
        if out is None:
            raise MXNetError("pull: out= is required")
        for k, outs in self._pairs(key, out, "pull"):
            stored = self._stored(k, "pull")
            for o in outs:
                if o.stype != "default" and ignore_sparse:
                    continue
                if o.shape != stored.shape:
                    raise MXNetError("pull: out of shape %s for key %r stored with shape %s"
                                     % (o.shape, k, stored.shape))
                stored.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """push then pull (into ``value`` when ``out`` is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """init with ``value`` then pull into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull the rows ``row_ids`` of row_sparse value(s) into row_sparse
        ``out``: one row_ids array per out, or one for all of a key's outs."""
        if out is None:
            raise MXNetError("row_sparse_pull: out= is required")
        if row_ids is None:
            raise MXNetError("row_sparse_pull: row_ids= is required")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        if not isinstance(row_ids, list):
            raise MXNetError("row_ids should be NDArray or list of NDArray")
        single = len(row_ids) == 1 and isinstance(out, list)
        first_out = [out[0]] if single else out
        pairs = self._pairs(key, first_out, "row_sparse_pull")
        id_pairs = self._pairs(key, row_ids, "row_sparse_pull")
        from ..ndarray.sparse import retain
        for (k, outs), (_, rids) in zip(pairs, id_pairs):
            if len(rids) != len(outs):
                raise MXNetError("row_sparse_pull: the number of row_ids (%d) doesn't match "
                                 "the number of values (%d)" % (len(rids), len(outs)))
            stored = self._stored(k, "row_sparse_pull")
            for o, rid in zip(outs, rids):
                if o.stype != "row_sparse":
                    raise MXNetError("row_sparse_pull: expected row_sparse storage type for "
                                     "the output of key %r, got %s" % (k, o.stype))
                if stored.stype != "row_sparse":
                    raise MXNetError("row_sparse_pull expects a row_sparse value for key %r, "
                                     "which is stored as %s" % (k, stored.stype))
                if rid.stype != "default":
                    raise MXNetError("row_sparse_pull: row_ids must have default storage")
                retain(stored, rid.as_in_context(stored.context)).copyto(o)
        if single:
            for o in out[1:]:
                out[0].copyto(o)

    def set_gradient_compression(self, compression_params):
        raise MXNetError("gradient compression is only meaningful for distributed stores")

    def _set_updater(self, updater):
        """Set the function ``updater(key, input, stored)`` applied on push."""
        if updater is not None and not callable(updater):
            raise MXNetError("the updater must be callable(key, input, stored)")
        self._updater = updater

    def set_optimizer(self, optimizer):
        """Update the stored weights with ``optimizer`` on every push."""
        from .. import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))

    @staticmethod
    def is_capable(capability):
        return capability.lower() == KVStoreBase.OPTIMIZER

    def save_optimizer_states(self, fname, dump_optimizer=False):
        if self._updater is None or not hasattr(self._updater, "get_states"):
            raise MXNetError("save_optimizer_states: no optimizer was set (set_optimizer)")
        with open(fname, "wb") as f:
            f.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        if self._updater is None or not hasattr(self._updater, "set_states"):
            raise MXNetError("load_optimizer_states: no optimizer was set (set_optimizer)")
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())

    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    def _barrier(self):
        pass
