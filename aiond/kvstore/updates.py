"""The kvstore side of a training step for mx.mod.Module and mx.model.FeedForward
(MXNet 1.9.1's ``model._create_kvstore``, ``_initialize_kvstore``,
``_update_params`` and ``_update_params_on_kvstore``, which mx.model keeps
under those names): which store to use, putting the parameters in it, and
summing gradients over devices before each update."""
from __future__ import annotations

import os

import numpy as np

from .. import engine as _engine
from . import base as _kvbase

__all__ = ["create_kvstore", "initialize_kvstore", "update_params_on_kvstore", "update_params"]


def create_kvstore(kvstore, num_device, arg_params):
    """(kvstore or None, update_on_kvstore) for ``kvstore`` (a store, a type
    name or None) and ``num_device`` devices, with MXNet's rules: one device
    and a local type need no store; ``MXNET_UPDATE_ON_KVSTORE`` (default 1)
    and arrays over 16M elements turn updating on the store off."""
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, _kvbase.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = _kvbase.create(kvstore)
            if kvstore == 'local':
                max_size = max(int(np.prod(p.shape)) for p in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be KVStore, str or None')
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(_kvbase.KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


def initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Put each parameter in the store (and, when the store updates, copy it
    back to every device)."""
    for idx, param_on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore:
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=param_on_devs)


def update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push the gradients of every device and pull the updated weights."""
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        kvstore.pushpull(param_names[index], grad_list, out=arg_list, priority=-index)


def update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Sum the gradients over devices (in the store, if any), then update every
    device's weights with ``updater`` (one call per device, index
    ``param_index * num_device + device``)."""
    updates = [[] for _ in range(num_device)]
    for index, (arg_list, grad_list) in enumerate(zip(param_arrays, grad_arrays)):
        if grad_list[0] is None:
            continue
        if kvstore:
            kvstore.pushpull(param_names[index], grad_list, priority=-index)
        for k, (w, g) in enumerate(zip(arg_list, grad_list)):
            updates[k].append((index * num_device + k, g, w))
    with _engine.bulk_scope("update", "update"):
        for dev_updates in updates:
            if dev_updates:
                i, g, w = zip(*dev_updates)
                updater(i, g, w)
