"""``mx.optimizer.Updater`` / ``get_updater``: the closure kvstore and Gluon's
Trainer call as ``updater(index, grad, weight)``, holding the optimizer
states, which ``get_states``/``set_states`` pickle as MXNet does.

``set_states`` also reads states pickled by MXNet 1.9.1 itself (its NDArrays
pickle their raw ``NDArray::Save`` bytes; its optimizer and scheduler classes
map to aiond's of the same name).
"""
from __future__ import annotations

import importlib
import io
import pickle

from ..ndarray import NDArray
from ..ndarray.ndarray import array

__all__ = ['Updater', 'get_updater']


class Updater(object):
    """Updater for kvstore and Gluon's Trainer."""
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        """Updates ``weight`` (or a list of weights) given gradient(s) and index(es)."""
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
            for group in type_map.values():
                idxs, ws, gs = zip(*group)
                current_index = 0
                while current_index < len(idxs):
                    states = [self.states[j] for j in idxs[current_index:current_index + n]]
                    self.optimizer.update_multi_precision(
                        idxs[current_index:current_index + n],
                        ws[current_index:current_index + n],
                        gs[current_index:current_index + n],
                        states)
                    current_index += n
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
        """The pickled states (with the optimizer when ``dump_optimizer``, which
        saves its learning rate, schedule and update counts too)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """The ``Updater`` of ``optimizer``."""
    return Updater(optimizer)


# ------------------------------------------------------ reading MXNet pickles

class _MXNetNDArray(object):
    """Stands in for ``mxnet.ndarray.ndarray.NDArray`` while unpickling: MXNet
    pickles ``{'handle': raw NDArray::Save bytes}``."""
    def __init__(self, *args, **kwargs):
        self.value = None

    def __setstate__(self, state):
        from ..ndarray.io import _Parser
        handle = state['handle'] if isinstance(state, dict) else state
        p = _Parser(memoryview(bytes(handle)).cast('B'), scalar_data=True)
        self.value = p.array(0)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in (('mxnet.ndarray.ndarray', 'NDArray'),
                              ('mxnet.ndarray.sparse', 'RowSparseNDArray'),
                              ('mxnet.ndarray.sparse', 'CSRNDArray')):
            return _MXNetNDArray
        if module == 'mxnet' or module.startswith('mxnet.'):
            try:
                return getattr(importlib.import_module('aiond' + module[5:]), name)
            except (ImportError, AttributeError):
                pass
            mod = {'mxnet.optimizer.optimizer': 'aiond.optimizer',
                   'mxnet.lr_scheduler': 'aiond.lr_scheduler'}.get(module)
            if mod is not None:
                return getattr(importlib.import_module(mod), name)
            raise pickle.UnpicklingError("cannot load %s.%s from an MXNet pickle in aiond"
                                         % (module, name))
        return super().find_class(module, name)


from ..ndarray.io import SparseRecord, from_record  # noqa: E402


def _convert(obj):
    if isinstance(obj, _MXNetNDArray):
        v = obj.value
        if isinstance(v, SparseRecord):
            return from_record(v)
        return None if v is None else array(v, dtype=v.dtype)
    if isinstance(obj, tuple):
        return tuple(_convert(x) for x in obj)
    if isinstance(obj, list):
        return [_convert(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _convert(v) for k, v in obj.items()}
    return obj


def loads(data):
    """``pickle.loads`` that also maps MXNet 1.9.1's classes to aiond's."""
    return _convert(_Unpickler(io.BytesIO(data)).load())
