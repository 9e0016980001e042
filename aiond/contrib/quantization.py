"""Quantization (``mx.contrib.quantization``): INT8 inference models from FP32
ones, as MXNet 1.9.1.

``quantize_model`` rewrites the graph (``_quantize_graph.quantize_graph``),
quantizes the weights and biases offline to int8, and with calibration
('naive': the min/max of each layer output over calibration data;
'entropy': the threshold of least KL divergence of its histogram) fixes
the requantize ranges so no range is measured at inference time. With
'none' the ranges are measured on every forward, as in MXNet.

aiond runs the int8 layers with its own kernels (exact int32 accumulation);
it has no MKL-DNN, so ``quantize_model_mkldnn`` and ``quantize_net`` on the
CPU quantize without MKL-DNN's operator fusion.
"""
from __future__ import annotations

import logging
import os
import tempfile
import warnings

import numpy as np

from ..symbol import Symbol
from ..symbol import load as sym_load
from .. import ndarray
from ..ndarray import load as nd_load
from ..ndarray import save as nd_save
from ..ndarray import NDArray
from ..io import DataIter, DataDesc, DataBatch
from ..context import cpu, Context
from ..module import Module
from ._quantize_graph import quantize_graph as _quantize_graph_pass, set_calib_table

__all__ = ["quantize_model", "quantize_model_mkldnn", "quantize_graph", "calib_graph",
           "quantize_net_v2", "quantize_net", "combine_histogram"]


def _quantize_params(qsym, params, th_dict):
    """int8 weights/biases (with their ranges) for the ``*_quantize`` inputs of
    ``qsym``; other arguments pass through, and ``*_min``/``*_max`` inputs take
    calibrated ranges from ``th_dict``."""
    quantized = {}
    for name in qsym.list_arguments():
        if name.endswith(('weight_quantize', 'bias_quantize')):
            original = name[:-len('_quantize')]
            param = params[original]
            val, vmin, vmax = ndarray.contrib.quantize(
                data=param, min_range=ndarray.min(param), max_range=ndarray.max(param),
                out_type='int8')
            quantized[name] = val
            quantized[name + '_min'] = vmin
            quantized[name + '_max'] = vmax
        elif name in params:
            quantized[name] = params[name]
        elif name.endswith('_min'):
            output = name[:-len('_min')]
            if output in th_dict:
                quantized[name] = ndarray.array([th_dict[output][0]])
        elif name.endswith('_max'):
            output = name[:-len('_max')]
            if output in th_dict:
                quantized[name] = ndarray.array([th_dict[output][1]])
    return quantized


def _quantize_symbol(sym, ctx, excluded_symbols=None, excluded_operators=None,
                     offline_params=None, quantized_dtype='int8', quantize_mode='smart',
                     quantize_granularity='tensor-wise'):
    if excluded_symbols is not None:
        assert isinstance(excluded_symbols, list)
    if excluded_operators is not None:
        assert isinstance(excluded_operators, list)
    if quantize_granularity != 'tensor-wise':
        raise ValueError("quantize_granularity='%s': aiond's int8 kernels quantize "
                         "tensor-wise only (channel-wise needs MKL-DNN's fused FC)"
                         % quantize_granularity)
    return _quantize_graph_pass(sym, excluded_symbols or [], excluded_operators or [],
                                offline_params or [], quantized_dtype, quantize_mode)


def combine_histogram(old_hist, arr, new_min, new_max, new_th):
    """Collect layer histogram for arr and combine it with old histogram."""
    (old_hist, old_hist_edges, old_min, old_max, old_th) = old_hist
    if new_th <= old_th:
        hist, _ = np.histogram(arr, bins=len(old_hist), range=(-old_th, old_th))
        return (old_hist + hist, old_hist_edges, min(old_min, new_min),
                max(old_max, new_max), old_th)
    # a wider range: grow the histogram symmetrically by whole old-sized bins
    old_num_bins = len(old_hist)
    old_step = 2 * old_th / old_num_bins
    half_increased_bins = int((new_th - old_th) // old_step + 1)
    new_num_bins = half_increased_bins * 2 + old_num_bins
    new_th = half_increased_bins * old_step + old_th
    hist, hist_edges = np.histogram(arr, bins=new_num_bins, range=(-new_th, new_th))
    hist[half_increased_bins:new_num_bins - half_increased_bins] += old_hist
    return (hist, hist_edges, min(old_min, new_min), max(old_max, new_max), new_th)


def _as_numpy(arr):
    return arr.asnumpy() if isinstance(arr, NDArray) else np.asarray(arr)


class _LayerHistogramCollector(object):
    """Histograms of layer outputs (name -> (hist, edges, min, max, th)), for
    entropy calibration; a monitor callback."""
    def __init__(self, num_bins=8001, include_layer=None, logger=None):
        self.hist_dict = {}
        self.num_bins = num_bins
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        if self.include_layer is not None and name not in self.include_layer:
            return
        arr = _as_numpy(arr)
        if self.logger:
            self.logger.debug("Collecting layer %s histogram of shape %s" % (name, arr.shape))
        min_range, max_range = np.min(arr), np.max(arr)
        th = max(abs(min_range), abs(max_range))
        if name in self.hist_dict:
            self.hist_dict[name] = combine_histogram(self.hist_dict[name], arr,
                                                     min_range, max_range, th)
        else:
            hist, hist_edges = np.histogram(arr, bins=self.num_bins, range=(-th, th))
            self.hist_dict[name] = (hist, hist_edges, min_range, max_range, th)


class _LayerOutputMinMaxCollector(object):
    """The min and max of layer outputs (name -> (min, max)), for naive
    calibration; a monitor callback."""
    def __init__(self, quantized_dtype, include_layer=None, logger=None):
        self.min_max_dict = {}
        self.quantized_dtype = quantized_dtype
        self.include_layer = include_layer
        self.logger = logger

    def collect(self, name, arr):
        if self.include_layer is not None and name not in self.include_layer:
            return
        arr = arr if isinstance(arr, NDArray) else ndarray.array(arr)
        min_range = ndarray.min(arr).asscalar()
        max_range = ndarray.max(arr).asscalar()
        if name in self.min_max_dict:
            cur = self.min_max_dict[name]
            self.min_max_dict[name] = (min(cur[0], min_range), max(cur[1], max_range))
        else:
            self.min_max_dict[name] = (min_range, max_range)
        if self.logger:
            self.logger.debug("Collecting layer %s min_range=%f, max_range=%f"
                              % (name, min_range, max_range))


def _calibrate_quantized_sym(qsym, th_dict):
    if not th_dict:
        return qsym
    return set_calib_table(qsym, th_dict)


def _collect_layer_statistics(mod, data, collector, max_num_examples=None, logger=None):
    if not isinstance(data, DataIter):
        raise ValueError('Only supports data as a type of DataIter, while received type %s'
                         % str(type(data)))
    mod._exec_group.execs[0].set_monitor_callback(collector.collect, monitor_all=True)
    num_batches = num_examples = 0
    for batch in data:
        mod.forward(data_batch=batch, is_train=False)
        num_batches += 1
        num_examples += data.batch_size
        if max_num_examples is not None and num_examples >= max_num_examples:
            break
    mod._exec_group.execs[0].set_monitor_callback(None)
    if logger is not None:
        logger.info("Collected statistics from %d batches with batch_size=%d"
                    % (num_batches, data.batch_size))
    return num_examples


def _collect_layer_output_min_max(mod, data, quantized_dtype, include_layer=None,
                                  max_num_examples=None, logger=None):
    collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                            include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.min_max_dict, num_examples


def _collect_layer_histogram(mod, data, include_layer=None, max_num_examples=None, logger=None):
    collector = _LayerHistogramCollector(include_layer=include_layer, logger=logger)
    num_examples = _collect_layer_statistics(mod, data, collector, max_num_examples, logger)
    return collector.hist_dict, num_examples


def _smooth_distribution(p, eps=0.0001):
    """``p`` (a histogram, not necessarily normalised) with every zero bin
    raised to ``eps`` and the same total mass taken evenly off the non-zero
    bins, as float32 (MXNet's helper of entropy calibration: the KL
    divergence needs no empty bins). ValueError when every bin is zero."""
    p = np.asarray(p)
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        raise ValueError('The discrete probability distribution is malformed. All entries are 0.')
    take = eps * n_zeros / n_nonzeros
    if take >= 1.0:
        raise ValueError("_smooth_distribution: eps=%g over %d empty bins takes %g from each "
                         "of the %d others; use a smaller eps" % (eps, n_zeros, take, n_nonzeros))
    hist = p.astype(np.float32) + np.where(zeros, np.float32(eps), np.float32(-take))
    if (hist <= 0).any():
        raise ValueError("_smooth_distribution: a bin smaller than %g would become negative; "
                         "use a smaller eps" % take)
    return hist


def _get_optimal_threshold(hist_data, quantized_dtype, num_quantized_bins=255):
    (hist, hist_edges, min_val, max_val, _) = hist_data
    assert len(hist) % 2 == 1
    if min_val >= 0 and quantized_dtype in ['auto', 'uint8']:
        num_quantized_bins = num_quantized_bins * 2 + 1   # negative bins unused by uint8
    threshold, divergence = ndarray.contrib.calibrate_entropy(
        hist=ndarray.array(hist, ctx=cpu()), hist_edges=ndarray.array(hist_edges, ctx=cpu()),
        num_quantized_bins=num_quantized_bins)
    return min_val, max_val, threshold.asnumpy(), divergence.asnumpy()


def _get_optimal_thresholds(hist_dict, quantized_dtype, num_quantized_bins=255, logger=None):
    assert isinstance(hist_dict, dict)
    if logger is not None:
        logger.info('Calculating optimal thresholds for quantization using KL divergence'
                    ' with num_quantized_bins=%d' % num_quantized_bins)
    th_dict = {}
    for name in list(hist_dict.keys()):
        min_val, max_val, th, divergence = _get_optimal_threshold(
            hist_dict[name], quantized_dtype, num_quantized_bins=num_quantized_bins)
        th = float(th.reshape(-1)[0])
        if min_val >= 0 and quantized_dtype in ['auto', 'uint8']:
            th_dict[name] = (0, th)
        else:
            th_dict[name] = (-th, th)
        del hist_dict[name]  # release the memory
        if logger:
            logger.debug('layer=%s, min_val=%f, max_val=%f, th=%f, divergence=%f'
                         % (name, min_val, max_val, th, float(divergence.reshape(-1)[0])))
    return th_dict


def _load_sym(sym, logger=None):
    if isinstance(sym, str):
        if logger:
            logger.info('Loading symbol from file %s' % sym)
        return sym_load(sym)
    if isinstance(sym, Symbol):
        return sym
    raise ValueError('_load_sym only accepts Symbol or path to the symbol file,'
                     ' while received type %s' % str(type(sym)))


def _load_params(params, logger=None):
    if isinstance(params, str):
        if logger:
            logger.info('Loading params from file %s' % params)
        arg_params, aux_params = {}, {}
        for k, v in nd_load(params).items():
            tp, name = k.split(':', 1)
            if tp == 'arg':
                arg_params[name] = v
            if tp == 'aux':
                aux_params[name] = v
        return arg_params, aux_params
    if isinstance(params, (tuple, list)) and len(params) == 2:
        return params[0], params[1]
    raise ValueError('Unsupported params provided. Must be either a path to the param file or'
                     ' a pair of dictionaries representing arg_params and aux_params')


class _DataIterWrapper(DataIter):
    """A DataIter over a general iterable (e.g. a Gluon DataLoader) of batches."""
    def __init__(self, calib_data):  # pylint: disable=super-init-not-called
        self._data = calib_data
        try:
            calib_iter = iter(calib_data)
        except TypeError as e:
            raise TypeError('calib_data is not a valid iterator. {}'.format(str(e)))
        example = next(calib_iter)
        example = list(example) if isinstance(example, (list, tuple)) else [example]
        assert example
        if len(example[0].shape) > 4:
            example[0] = example[0].reshape((-1,) + example[0].shape[2:])
        self.provide_data = [DataDesc(name='data', shape=example[0].shape)]
        self.provide_data += [DataDesc(name='data{}'.format(i), shape=x.shape)
                              for i, x in enumerate(example[1:])]
        if len(example) >= 3:
            self.provide_data = [DataDesc(name='data{}'.format(i), shape=x.shape)
                                 for i, x in enumerate(example)]
        self.provide_label = []
        self.batch_size = example[0].shape[0]
        self.reset()

    def reset(self):
        self._iter = iter(self._data)

    def next(self):
        nxt = next(self._iter)
        nxt = list(nxt) if isinstance(nxt, (list, tuple)) else [nxt]
        if len(nxt[0].shape) > 4:
            nxt[0] = nxt[0].reshape((-1,) + nxt[0].shape[2:])
        # entries the network does not take (quantize_net_v2 drops them from
        # provide_data, e.g. a DataLoader's labels) are not fed
        return DataBatch(data=nxt[:len(self.provide_data)])


def _as_data_iter(calib_data):
    if isinstance(calib_data, DataIter):
        return calib_data, calib_data.provide_data
    calib_data = _DataIterWrapper(calib_data)
    return calib_data, calib_data.provide_data


def _check_names(value, what):
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError('%s must be a list of strings representing the names of the %s '
                         'that will not be quantized, while received type %s'
                         % ('excluded_sym_names' if what == 'symbols' else 'excluded_op_names',
                            what, str(type(value))))
    return value


def _check_dtypes(quantized_dtype, quantize_granularity):
    if quantized_dtype not in ('int8', 'uint8', 'auto'):
        raise ValueError('unknown quantized_dtype %s received,'
                         ' expected `int8`, `uint8` or `auto`' % quantized_dtype)
    if quantize_granularity not in ('tensor-wise', 'channel-wise'):
        raise ValueError('unkonwn quantize_granularity %s received,'
                         ' expected `tensor-wise` or `channel-wise`.' % quantize_granularity)


def quantize_model(sym, arg_params, aux_params,
                   data_names=('data',), label_names=('softmax_label',),
                   ctx=cpu(), excluded_sym_names=None, excluded_op_names=None, calib_mode='entropy',
                   calib_data=None, num_calib_examples=None,
                   quantized_dtype='int8', quantize_mode='smart',
                   quantize_granularity='tensor-wise', logger=None):
    """Quantize an FP32 model (symbol and parameters) to INT8, with calibration
    ('entropy', 'naive') over ``calib_data`` (a DataIter) or none ('none').
    Returns ``(qsym, qarg_params, aux_params)``."""
    excluded_sym_names = _check_names(excluded_sym_names, 'symbols')
    excluded_op_names = _check_names(excluded_op_names, 'operators')
    if logger:
        logger.info('Quantizing symbol')
    _check_dtypes(quantized_dtype, quantize_granularity)
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    th_dict = {}
    if calib_mode is not None and calib_mode != 'none':
        if not isinstance(ctx, Context):
            raise ValueError('currently only supports single ctx, while received %s' % str(ctx))
        if calib_data is None:
            raise ValueError('calib_data must be provided when calib_mode=%s' % calib_mode)
        if not isinstance(calib_data, DataIter):
            raise ValueError('calib_data must be of DataIter type when calib_mode=%s,'
                             ' while received type %s' % (calib_mode, str(type(calib_data))))
        mod = Module(symbol=sym, data_names=data_names, label_names=label_names, context=ctx)
        if len(calib_data.provide_label) > 0:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data,
                     label_shapes=calib_data.provide_label)
        else:
            mod.bind(for_training=False, data_shapes=calib_data.provide_data)
        mod.set_params(arg_params, aux_params)
        if calib_mode == 'entropy':
            hist_dict, num_examples = _collect_layer_histogram(
                mod, calib_data, include_layer=calib_layer,
                max_num_examples=num_calib_examples, logger=logger)
            if logger:
                logger.info('Collected layer outputs from FP32 model using %d examples'
                            % num_examples)
            th_dict = _get_optimal_thresholds(hist_dict, quantized_dtype, logger=logger)
        elif calib_mode == 'naive':
            th_dict, num_examples = _collect_layer_output_min_max(
                mod, calib_data, quantized_dtype, include_layer=calib_layer,
                max_num_examples=num_calib_examples, logger=logger)
            if logger:
                logger.info('Collected layer output min/max values from FP32 model using %d '
                            'examples' % num_examples)
        else:
            raise ValueError('unknown calibration mode %s received,'
                             ' expected `none`, `naive`, or `entropy`' % calib_mode)
        qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info('Quantizing parameters')
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params


def quantize_model_mkldnn(sym, arg_params, aux_params,
                          data_names=('data',), label_names=('softmax_label',),
                          ctx=cpu(), excluded_sym_names=None, excluded_op_names=None,
                          calib_mode='entropy', calib_data=None, num_calib_examples=None,
                          quantized_dtype='int8', quantize_mode='smart',
                          quantize_granularity='tensor-wise', logger=None):
    """``quantize_model`` for the CPU (MXNet's MKL-DNN path). aiond has no
    MKL-DNN operator fusion: the model is quantized as by ``quantize_model``."""
    if not isinstance(ctx, Context):
        raise ValueError('currently only supports single ctx, while received %s' % str(ctx))
    if ctx.device_type != 'cpu':
        raise ValueError(
            'quantize_model_mkldnn only support Intel cpu platform with MKL-DNN Backend')
    return quantize_model(sym=sym, arg_params=arg_params, aux_params=aux_params,
                          data_names=data_names, label_names=label_names, ctx=ctx,
                          excluded_sym_names=excluded_sym_names,
                          excluded_op_names=excluded_op_names, calib_mode=calib_mode,
                          calib_data=calib_data, num_calib_examples=num_calib_examples,
                          quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
                          quantize_granularity=quantize_granularity, logger=logger)


def quantize_graph(sym, arg_params, aux_params, ctx=cpu(),
                   excluded_sym_names=None, excluded_op_names=None,
                   calib_mode='entropy', quantized_dtype='int8',
                   quantize_mode='full', quantize_granularity='tensor-wise',
                   LayerOutputCollector=None, logger=None):  # noqa: N803 - MXNet's name
    """Quantize the graph without calibrating it; returns ``(qsym, qarg_params,
    aux_params, collector)`` where ``collector`` (None for 'none') is the
    monitor callback object to fill with FP32 layer outputs for ``calib_graph``."""
    excluded_sym_names = _check_names(excluded_sym_names, 'symbols')
    if not isinstance(ctx, Context):
        raise ValueError('currently only supports single ctx, while received %s' % str(ctx))
    if logger:
        logger.info('Quantizing graph')
    _check_dtypes(quantized_dtype, quantize_granularity)
    qsym, calib_layer = _quantize_symbol(sym, ctx, excluded_symbols=excluded_sym_names,
                                         excluded_operators=excluded_op_names,
                                         offline_params=list(arg_params.keys()),
                                         quantized_dtype=quantized_dtype,
                                         quantize_mode=quantize_mode,
                                         quantize_granularity=quantize_granularity)
    collector = None
    if calib_mode is not None and calib_mode != 'none':
        if calib_mode == 'entropy':
            collector = _LayerHistogramCollector(include_layer=calib_layer, logger=logger)
        elif calib_mode == 'naive':
            collector = _LayerOutputMinMaxCollector(quantized_dtype=quantized_dtype,
                                                    include_layer=calib_layer, logger=logger)
        elif calib_mode == 'customize' and LayerOutputCollector is not None:
            collector = LayerOutputCollector
        else:
            raise ValueError('unknown calibration mode %s received,'
                             ' expected `none`, `naive`, `entropy` or `customize`' % calib_mode)
        if logger:
            logger.info('Collector created, please use set_monitor_callback'
                        ' to collect calibration information.')
    if logger:
        logger.info('Quantizing parameters')
    qarg_params = _quantize_params(qsym, arg_params, {})
    return qsym, qarg_params, aux_params, collector


def calib_graph(qsym, arg_params, aux_params, collector,
                calib_mode='entropy', quantized_dtype='int8', logger=logging):
    """Calibrate a graph from ``quantize_graph`` with its filled collector;
    returns ``(qsym, qarg_params, aux_params)``."""
    if calib_mode is None or calib_mode == 'none':
        raise ValueError('please set calibration mode to naive or entropy.')
    if calib_mode == 'entropy':
        if logger:
            logger.info('Calculating optimal thresholds for quantization')
        th_dict = _get_optimal_thresholds(collector.hist_dict, quantized_dtype, logger=logger)
    elif calib_mode in ('naive', 'customize'):
        th_dict = collector.min_max_dict
    else:
        raise ValueError('unknown calibration mode %s received,'
                         ' expected `none`, `naive`, `entropy` or `customize`' % calib_mode)
    qsym = _calibrate_quantized_sym(qsym, th_dict)
    if logger:
        logger.info('Quantizing parameters')
    qarg_params = _quantize_params(qsym, arg_params, th_dict)
    return qsym, qarg_params, aux_params


def quantize_net_v2(network, quantized_dtype='auto', quantize_mode='full',
                    quantize_granularity='tensor-wise',
                    exclude_layers=None, exclude_layers_match=None, exclude_operators=None,
                    calib_data=None, data_shapes=None, calib_mode='none',
                    num_calib_examples=None, ctx=cpu(), LayerOutputCollector=None,  # noqa: N803
                    logger=None):
    """Quantize a Gluon HybridBlock to an INT8 SymbolBlock, calibrating with
    ``calib_data`` (a DataIter or an iterable such as a DataLoader) unless
    ``calib_mode='none'``; ``data_shapes`` (DataDescs) are needed without it."""
    from ..gluon import SymbolBlock
    from .. import model as _model
    from .. import symbol as _sym
    if logger:
        logger.info('Export HybridBlock')
    network.hybridize()
    if calib_data is not None:
        if isinstance(calib_data, DataIter):
            dshapes = calib_data.provide_data
        else:
            calib_data, dshapes = _as_data_iter(calib_data)
        if not data_shapes:
            data_shapes = dshapes
    if not data_shapes:
        raise ValueError('data_shapes required')
    data_nd = [ndarray.zeros(shape.shape) for shape in data_shapes]
    while True:
        try:
            network(*data_nd)
        except TypeError:
            # more data entries than the network takes (e.g. a label): drop the last
            del data_nd[-1]
            if calib_data is not None:
                del calib_data.provide_data[-1]
            continue
        else:
            break
    with tempfile.TemporaryDirectory() as tmpdirname:
        prefix = os.path.join(tmpdirname, 'tmp')
        network.export(prefix, epoch=0)
        symnet, args, auxs = _model.load_checkpoint(prefix, 0)

    exclude_layers = list(exclude_layers or [])
    for name_match in exclude_layers_match or []:
        for layer in list(symnet.get_internals()):
            if layer.name.find(name_match) != -1:
                exclude_layers.append(layer.name)
    if logger:
        logger.info('These layers have been excluded %s' % exclude_layers)

    qsym, qarg_params, aux_params, collector = quantize_graph(
        sym=symnet, arg_params=args, aux_params=auxs, ctx=ctx,
        excluded_sym_names=exclude_layers, excluded_op_names=list(exclude_operators or []),
        calib_mode=calib_mode, quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
        quantize_granularity=quantize_granularity, LayerOutputCollector=LayerOutputCollector,
        logger=logger)

    if calib_mode is not None and calib_mode != 'none':
        if not isinstance(ctx, Context):
            raise ValueError('currently only supports single ctx, while received %s' % str(ctx))
        if calib_data is None:
            raise ValueError('calib_data must be provided when calib_mode=%s' % calib_mode)
        if calib_mode not in ['naive', 'entropy', 'customize']:
            raise ValueError('please set calibration mode to naive or entropy.')
        data_names = [pair[0] for pair in calib_data.provide_data]
        mod = Module(symbol=symnet, context=ctx, data_names=data_names, label_names=None)
        mod.bind(for_training=False, data_shapes=data_shapes)
        mod.set_params(args, auxs, allow_missing=False, force_init=True)
        num_examples = _collect_layer_statistics(mod, calib_data, collector,
                                                 num_calib_examples, logger)
        if logger:
            logger.info('Collected layer output values from FP32 model using %d examples'
                        % num_examples)
        qsym, qarg_params, aux_params = calib_graph(
            qsym=qsym, arg_params=args, aux_params=auxs, collector=collector,
            calib_mode=calib_mode, quantized_dtype=quantized_dtype, logger=logger)
    else:
        data_names = [pair[0] for pair in data_shapes]

    net = SymbolBlock(qsym, [_sym.var(name) for name in data_names])
    with tempfile.TemporaryDirectory() as tmpdirname:
        param_name = os.path.join(tmpdirname, 'tmpnet-quantized-0000.params')
        save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in qarg_params.items()}
        save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
        nd_save(param_name, save_dict)
        net.collect_params().load(param_name, cast_dtype=True, dtype_source='saved')
        net.collect_params().reset_ctx(ctx)
    return net


def quantize_net(network, quantized_dtype='auto', quantize_mode='full',
                 exclude_layers=None, exclude_layers_match=None, exclude_operators=None,
                 calib_data=None, data_shapes=None, calib_mode='none',
                 num_calib_examples=None, ctx=cpu(), logger=None):
    """``quantize_net_v2`` with tensor-wise granularity (deprecated in MXNet)."""
    warnings.warn('WARNING: This will be deprecated after MXNet 2.0, please use quantize_net_v2.')
    return quantize_net_v2(network=network, quantized_dtype=quantized_dtype,
                           quantize_mode=quantize_mode, quantize_granularity='tensor-wise',
                           exclude_layers=exclude_layers,
                           exclude_layers_match=exclude_layers_match,
                           exclude_operators=exclude_operators,
                           calib_data=calib_data, data_shapes=data_shapes,
                           calib_mode=calib_mode, num_calib_examples=num_calib_examples,
                           ctx=ctx, LayerOutputCollector=None, logger=logger)
