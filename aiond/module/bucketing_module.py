"""``BucketingModule``: one Module per bucket key (a sequence length, say),
all sharing the parameters, optimizer and memory of the default bucket's
Module (MXNet 1.9.1's ``mx.mod.BucketingModule``).

    def sym_gen(seq_len):
        ...                                  # an unrolled net for seq_len steps
        return net, ('data',), ('softmax_label',)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=10)
    mod.fit(bucket_iter, num_epoch=5)        # batches carry bucket_key

The default bucket is bound first and must be the largest (other buckets
bind with it as ``shared_module``, borrowing its parameter arrays).
"""
from __future__ import annotations

import logging
import warnings

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from .. import symbol as sym
from ..base import MXNetError
from ..initializer import Uniform
from ..model import load_params
from ..name import NameManager
from .base_module import BaseModule, _check_input_names
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """A module whose network depends on the batch's ``bucket_key``.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``; every
        bucket's symbol must name its parameters the same way.
    default_bucket_key : hashable
        The bucket bound first (the one with the largest shapes).
    logger, context, work_load_list, fixed_param_names, state_names,
    group2ctxs, compression_params
        As for ``Module``, passed to every bucket's Module.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging,
                 context=ctx.cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super(BucketingModule, self).__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule needs default_bucket_key (the key of the bucket "
                             "with the largest shapes)")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        # a fresh NameManager per call: every bucket's symbol gets the same
        # auto-generated names, so the buckets share their parameters
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, symbol, data_names, label_names):
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    # ------------------------------------------------------------ information
    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        _, data_names, _ = self._call_sym_gen(self._default_bucket_key)
        return data_names

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        symbol, _, _ = self._call_sym_gen(self._default_bucket_key)
        return symbol.list_outputs()

    @property
    def data_shapes(self):
        self._require(params=False, what="data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._require(params=False, what="label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._require(params=False, what="output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The symbol of the current bucket."""
        self._require(params=False, what="symbol")
        return self._curr_module.symbol

    # ------------------------------------------------------------ parameters
    def get_params(self):
        self._require(binded=False, what="get_params")
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require(params=False, what="init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._require(what="get_states")
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require(what="set_states")
        self._curr_module.set_states(states, value)

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the default bucket for ``data_shapes``/``label_shapes``; other
        buckets are bound when ``switch_bucket`` first meets them."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise MXNetError("BucketingModule.bind: shared_module is not supported (the "
                             "buckets already share the default bucket's parameters)")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req

        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
            module = self._new_module(symbol, data_names, label_names)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self.binded = True
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s Module the current one, creating and binding
        it (sharing the default bucket's arrays) the first time."""
        self._require(params=False, what="switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            symbol, data_names, label_names = self._call_sym_gen(bucket_key)
            module = self._new_module(symbol, data_names, label_names)
            self._buckets[bucket_key] = module
        if not module.binded:
            if data_shapes is None:
                raise MXNetError("switch_bucket: bucket %r is not bound yet; give its "
                                 "data_shapes" % (bucket_key,))
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # ------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self._require(what="init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module and mod.binded:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket if new and let it prepare the batch; the
        current bucket does not change."""
        self._require(what="prepare")
        original_bucket_key = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original_bucket_key, None, None)

    def forward(self, data_batch, is_train=None):
        """Switch to ``data_batch.bucket_key``'s bucket and run forward."""
        self._require(what="forward")
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._require(what="backward")
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        self._require(optimizer=True, what="update")
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require(what="get_outputs")
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require(what="get_input_grads")
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True first")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._require(what="update_metric")
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket, now and when new buckets bind."""
        self._require(params=False, what="install_monitor")
        self._monitor = mon
        for mod in self._buckets.values():
            if mod.binded:
                mod.install_monitor(mon)

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params`` (shared parameters), one
        ``prefix-<key>-symbol.json`` per bucket and ``prefix.buckets`` (the
        keys, as an int32 array: keys must be integers, as in MXNet)."""
        if not self._buckets:
            raise MXNetError("save_checkpoint: the BucketingModule has no bucket (bind it "
                             "first)")
        self.save_params("%s-%04d.params" % (prefix, epoch))
        for bucket_key in self._buckets:
            symbol, _, _ = self._call_sym_gen(bucket_key)
            symbol.save("%s-%s-symbol.json" % (prefix, bucket_key),
                        remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix,
                nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from ``save_checkpoint``'s files; bind it before
        use. Other keyword arguments go to every bucket's Module."""
        if sym_gen is None:
            raise ValueError("sym_gen is required for loading BucketingModule")
        if default_bucket_key is None:
            raise ValueError("default_bucket_key is required for loading BucketingModule")
        buckets = nd.load("%s.buckets" % prefix)
        buckets = [int(k) for k in buckets[0].asnumpy().astype('int32')]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key in buckets:
            _, data_names, label_names = sym_gen(bucket_key)
            symbol = sym.load("%s-%s-symbol.json" % (prefix, bucket_key))
            mod._buckets[bucket_key] = Module(symbol, data_names, label_names, **kwargs)
            if bucket_key == default_bucket_key:
                mod._curr_module = mod._buckets[bucket_key]
        if mod._curr_module is None:
            raise MXNetError("BucketingModule.load: default_bucket_key %r is not among the "
                             "saved buckets %s" % (default_bucket_key, buckets))
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from ``{bucket_key: symbol}`` and shared
        ``arg_params``/``aux_params``; bind it before use."""
        for value, what in ((sym_dict, "sym_dict"), (arg_params, "arg_params"),
                            (aux_params, "aux_params"),
                            (default_bucket_key, "default_bucket_key")):
            if value is None:
                raise ValueError("%s needs to be provided for BucketingModule.load_dict" % what)
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for bucket_key, loaded_sym in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            mod._buckets[bucket_key] = Module(loaded_sym, data_names, label_names, **kwargs)
            if bucket_key == default_bucket_key:
                mod._curr_module = mod._buckets[bucket_key]
        if mod._curr_module is None:
            raise MXNetError("BucketingModule.load_dict: default_bucket_key %r is not a key of "
                             "sym_dict" % (default_bucket_key,))
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
