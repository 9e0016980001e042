"""``mx.optimizer.Updater`` / ``get_updater``: the closure kvstore and Gluon's
Trainer call as ``updater(index, grad, weight)``, holding the optimizer
states, which ``get_states``/``set_states`` pickle as MXNet does.

``get_states`` writes aiond's own format (JSON structure + NDArray file, no
code in it); ``set_states`` reads it and the pickles MXNet 1.9.1 writes, with
an unpickler allowing only the classes those contain (``_states``).
"""
from __future__ import annotations

import os

from ..ndarray import NDArray
from . import _states

__all__ = ['Updater', 'get_updater']


class Updater(object):
    """Updater for kvstore and Gluon's Trainer."""
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0
        self._express = None

    def __call__(self, index, grad, weight):
        """Updates ``weight`` (or a list of weights) given gradient(s) and index(es)."""
        ex = self.__dict__.get('_express')
        if ex is not None and isinstance(index, (list, tuple)):
            # the same weights, gradients and indices as the last fused call:
            # its groups again (the optimizer still counts and schedules)
            if (ex[0] == (tuple(index), tuple(map(id, weight)), tuple(map(id, grad)))
                    and ex[1] is self.states and ex[2] is self.optimizer):
                fused = fused_update(self.optimizer)
                if fused is not None:
                    self.optimizer._set_current_context(ex[4])
                    fused(ex[3])
                    return
        self._express = None
        if not isinstance(index, (list, tuple)):
            indices = [index]
            grads = [grad]
            weights = [weight]
        else:
            indices = list(index)
            grads = grad
            weights = weight
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx.decode('utf-8')
                idx = indices[i]
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        if self.aggregate_updates:
            # group by dtype, then update in chunks of aggregate_num
            type_map = {}
            for i, w, g in zip(indices, weights, grads):
                type_map.setdefault(w.dtype, []).append((i, w, g))
            n = self.optimizer.aggregate_num
            fused = fused_update(self.optimizer)
            for group in type_map.values():
                idxs, ws, gs = zip(*group)
                chunks = []
                current_index = 0
                while current_index < len(idxs):
                    states = [self.states[j] for j in idxs[current_index:current_index + n]]
                    chunk = (idxs[current_index:current_index + n],
                             ws[current_index:current_index + n],
                             gs[current_index:current_index + n],
                             states)
                    if fused is None:
                        self.optimizer.update_multi_precision(*chunk)
                    else:
                        chunks.append(chunk)
                    current_index += n
                if chunks:
                    fused(chunks)
                    if len(type_map) == 1 and isinstance(index, (list, tuple)):
                        # (chunks hold the weights, gradients and states by
                        # identity; the key holds them by id: same objects)
                        self._express = ((tuple(index), tuple(map(id, weights)),
                                          tuple(map(id, grads))), self.states,
                                         self.optimizer, chunks, weights[0].context.device_id)
        else:
            for i, w, g in zip(indices, weights, grads):
                self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray or nested tuples/lists of them) on ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced_state = (self.sync_state_context(i, context) for i in state)
            if isinstance(state, tuple):
                return tuple(synced_state)
            return list(synced_state)
        return state

    def set_states(self, states):
        """Sets the states from ``get_states``'s bytes (aiond's or MXNet's)."""
        states = loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
            # MXNet keeps the old flag here and then loops forever when an SGD
            # updater loads, say, an Adam optimizer
            self.aggregate_updates = self.optimizer.aggregate_num > 0
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states as bytes (with the optimizer when ``dump_optimizer``, which
        saves its learning rate, schedule and update counts too), in aiond's
        code-free format."""
        return _states.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


_FUSED_FOR = ('update', 'update_multi_precision', '_update_impl', '_prepare', '_push_multi',
              '_push_single')
_FUSABLE = {}     # (class, its update methods) -> whether _update_fused stands for them


def fused_update(optimizer):
    """``optimizer._update_fused`` (SGD: the chunks of one dtype pushed as few ops,
    with the numbers of one ``update_multi_precision`` call per chunk), unless
    MXNET_OPTIMIZER_AGGREGATION_SIZE was set or a subclass overrides the update
    methods that path stands for."""
    flag = getattr(optimizer, '_fuse_groups', None)
    if flag is None:
        # an SGD unpickled from MXNet's states has no flag: the environment decides
        flag = 'MXNET_OPTIMIZER_AGGREGATION_SIZE' not in os.environ
    if not flag:
        return None
    cls = type(optimizer)
    # (the methods are in the key: a class patched since is judged again)
    key = (cls,) + tuple([getattr(cls, name, None) for name in _FUSED_FOR])
    ok = _FUSABLE.get(key)
    if ok is None:
        if len(_FUSABLE) >= 256:    # classes made on the fly: do not keep them all
            _FUSABLE.clear()
        ok = _FUSABLE[key] = _fusable(cls)
    return optimizer._update_fused if ok else None


def _fusable(cls):
    owner = next((k for k in cls.__mro__ if '_update_fused' in k.__dict__), None)
    if owner is None:
        return False
    return all(getattr(cls, name, None) is getattr(owner, name, None) for name in _FUSED_FOR)


def get_updater(optimizer):
    """The ``Updater`` of ``optimizer``."""
    return Updater(optimizer)


def loads(data):
    """States (or ``(states, optimizer)``) from ``get_states`` bytes, aiond's or
    MXNet 1.9.1's; never runs code from the bytes (see ``_states``)."""
    return _states.loads(data)
