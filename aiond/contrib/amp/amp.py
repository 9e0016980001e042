"""Automatic mixed precision (``mx.contrib.amp``), as MXNet 1.9.1.

``init()`` replaces the functions of the ops on AMP's lists in ``mx.nd`` and
``mx.sym`` with ones that cast their inputs first: to the target type
(float16 or bfloat16) for the low-precision list, to float32 for the float32
list (and the conditional one, for the listed parameter values), to the
widest input type for ops whose inputs must agree. Gluon layers call those
functions, so a model built after ``init()`` runs its matmuls and
convolutions in the target type. ``init_trainer`` gives a Trainer the
dynamic loss scaler; ``scale_loss`` scales the loss for backward and the
trainer divides the scale out of the gradients (skipping steps whose
gradients overflowed). ``convert_symbol``/``convert_model``/
``convert_hybrid_block`` convert trained FP32 graphs for inference by
inserting ``amp_cast``/``amp_multicast`` nodes.

aiond's CPU computes in float16, so NDArrays are cast on every device (MXNet
casts float16 only on GPUs). aiond's operators have no bfloat16 type:
target_dtype='bfloat16' raises, though its op lists are there to read.
"""
from __future__ import annotations

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops',
           'list_lp16_fp32_ops', 'list_conditional_fp32_ops',
           'list_widest_type_cast', 'list_loss_output_functions', 'list_lp16_use_fp32_params',
           'convert_symbol']

import contextlib
import logging

import numpy as np

from ... import symbol
from ... import ndarray
from ...context import gpu
from ...symbol import Symbol
from ...ndarray import NDArray
from ...gluon import trainer
from ... import optimizer as opt
from . import lists
from ._names import locate
from ._reduce_precision import reduce_precision
from .loss_scaler import LossScaler

# MXNet's spelling of bfloat16 in numpy (a one-field structured type); aiond
# holds bfloat16 data as ml_dtypes.bfloat16
bfloat16 = np.dtype([('bfloat16', np.uint16)])

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None

_nd_amp_cast = ndarray.amp_cast
_sym_amp_cast = symbol.amp_cast
_sym_amp_multicast = symbol.amp_multicast


def _bf16():
    raise TypeError("AMP with target_dtype='bfloat16': aiond's operators have no bfloat16 "
                    "type (amp_cast cannot produce it); use target_dtype='float16'. The "
                    "bfloat16 op lists (amp.list_lp16_ops('bfloat16'), ...) are available.")


def _is_bf16(dtype):
    if isinstance(dtype, str):
        return dtype == 'bfloat16'
    try:
        d = np.dtype(dtype)
    except TypeError:
        return False
    return d == bfloat16 or d.name == 'bfloat16'


def _is_fp16(dtype):
    return dtype in ('float16', np.float16) or (not isinstance(dtype, str) and
                                                _dtype_or_none(dtype) == np.float16)


def _dtype_or_none(dtype):
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def _lp16(target_dtype):
    """The numpy dtype aiond computes in for ``target_dtype``."""
    if _is_bf16(target_dtype):
        return _bf16()
    if _is_fp16(target_dtype):
        return np.dtype(np.float16)
    raise AssertionError("AMP currently supports only float16 or bfloat16 as a target_dtype, "
                         "got %r" % (target_dtype,))


def _float_types():
    return [np.dtype(np.float16), np.dtype(np.float32)]


def _cast_symbol_NDArray(s, dtype):  # noqa: N802 - MXNet's name
    dtype = np.dtype(dtype)
    if isinstance(s, Symbol):
        return _sym_amp_cast(s, dtype=dtype.name)
    if isinstance(s, NDArray):
        if s.dtype != dtype and np.dtype(s.dtype) in _float_types():
            return _nd_amp_cast(s, dtype=dtype)
    return s


# ------------------------------------------------------------ wrapping ops


def _copy_meta(new, f):
    new.__name__ = f.__name__
    new.__module__ = f.__module__
    new.__doc__ = f.__doc__
    new.__wrapped__ = f
    return new


def _cond_holds(cond_arg, kwargs):
    return cond_arg is None or (cond_arg[0] in kwargs and
                                str(kwargs[cond_arg[0]]) in cond_arg[1])


def _ndarray_wrapper(f, dtype, fp32_param=None, cond_arg=None):
    def _new_fun(*args, **kwargs):
        if not _cond_holds(cond_arg, kwargs):
            return f(*args, **kwargs)
        keep = lambda i: bool(fp32_param) and i < len(fp32_param) and bool(fp32_param[i])
        args = tuple(x if keep(i) else _cast_symbol_NDArray(x, dtype) for i, x in enumerate(args))
        kwargs = {k: v if (fp32_param and k in fp32_param) else _cast_symbol_NDArray(v, dtype)
                  for k, v in kwargs.items()}
        return f(*args, **kwargs)
    return _copy_meta(_new_fun, f)


def _rebuild(sym, inputs):
    """``sym``'s head op applied to ``inputs`` (Symbols, one output each)."""
    from ...symbol.symbol import _Node
    node = sym._outputs[0][0]
    new = _Node(node.op, node.name, dict(node.attrs), [s._outputs[0] for s in inputs])
    new._params = node._params
    new.subgraphs = node.subgraphs
    return Symbol._from([(new, e[1], 0) for e in sym._outputs])


def _symbol_wrapper(f, dtype, fp32_param=None, cond_arg=None):
    def _new_fun(*args, **kwargs):
        if not _cond_holds(cond_arg, kwargs):
            return f(*args, **kwargs)
        sym = f(*args, **kwargs)
        children = sym.get_children()
        if children is None:
            return sym
        aux = set(sym.list_auxiliary_states())
        new_inputs = []
        for i, x in enumerate(children):
            keep = x.name in aux or (fp32_param and i < len(fp32_param) and fp32_param[i])
            new_inputs.append(x if keep else _cast_symbol_NDArray(x, dtype))
        return _rebuild(sym, new_inputs)
    return _copy_meta(_new_fun, f)


def _widest_wrapper(f, target_dtype):
    def _new_fun(*args, **kwargs):
        args = list(args)
        found, is_symbol = [], False
        for i, a in enumerate(args):
            if isinstance(a, (Symbol, NDArray)):
                found.append((args, i, a))
                is_symbol = is_symbol or isinstance(a, Symbol)
        for k, a in kwargs.items():
            if isinstance(a, (Symbol, NDArray)):
                found.append((kwargs, k, a))
                is_symbol = is_symbol or isinstance(a, Symbol)
        if not is_symbol:
            widest = np.dtype(np.float32) if any(
                np.dtype(a.dtype) == np.float32 for _, _, a in found) else target_dtype
            for holder, key, a in found:
                if np.dtype(a.dtype) != widest and np.dtype(a.dtype) == target_dtype:
                    holder[key] = _nd_amp_cast(a, dtype=widest)
        elif found:
            casted = _sym_amp_multicast(*[a for _, _, a in found], num_outputs=len(found))
            for (holder, key, _), c in zip(found, casted):
                holder[key] = c
        return f(*args, **kwargs)
    return _copy_meta(_new_fun, f)


def _replace(module, name, make):
    attr, ns = locate(name, module)
    f = getattr(ns, attr)
    setattr(ns, attr, make(f))
    op_ns = getattr(module, 'op', None)
    if ns is module and op_ns is not None and hasattr(op_ns, attr):
        setattr(op_ns, attr, make(f))


def _wrap_loss_output_functions(module, ls, target_dtype):
    if module is ndarray:
        def _wrapper(f):
            def _scaling_wrapper(*args, **kwargs):
                kwargs['grad_scale'] = kwargs.get('grad_scale', 1.0) * ls.loss_scale
                return f(*args, **kwargs)
            return _copy_meta(_scaling_wrapper, f)
    else:
        def _wrapper(f):
            def _warning_wrapper(*args, **kwargs):
                logging.warning("%s does not support dynamic loss scaling "
                                "in symbolic and hybridized execution.", f.__name__)
                return f(*args, **kwargs)
            return _copy_meta(_warning_wrapper, f)
    for name in list_loss_output_functions(target_dtype):
        f = getattr(module, name, None)
        if f is not None:
            setattr(module, name, _wrapper(f))


# ------------------------------------------------------------ training


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Within the block, the loss (or list of losses) multiplied by the loss
    scale, for backward; the trainer's next step divides it out again."""
    scaler = getattr(optimizer_or_trainer, '_amp_loss_scaler', None)
    assert scaler is not None, \
        'Loss scaler is not initialized, did you forget to call amp.init_trainer()?'
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [l * scaler.loss_scale for l in loss]
    else:
        yield scaler.loss_scale * loss


def init(target_dtype='float16', target_precision_ops=None,
         conditional_fp32_ops=None, fp32_ops=None):
    """Initialize AMP: from now on the listed ops of mx.nd and mx.sym cast
    their inputs (call before creating the model). A second call does nothing.

    Parameters
    ----------
    target_dtype : {'float16', 'bfloat16'}
        Target low precision type.
    target_precision_ops : list of str
        Override the list of functions cast to target_dtype.
    conditional_fp32_ops : list of (str, str, list of str)
        Override the list of functions cast to float32 for some values of a
        parameter: (function, parameter, values).
    fp32_ops : list of str
        Override the list of functions cast to float32.
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    assert target_dtype in ['float16', np.float16, 'bfloat16', bfloat16], \
        "AMP currently supports only float16 or bfloat16 as a target_dtype"
    dtype = _lp16(target_dtype)
    key = 'bfloat16' if _is_bf16(target_dtype) else np.float16
    logging.info("Using AMP")
    for module in (symbol, ndarray):
        _wrap_symbol_functions(module, key, dtype, target_precision_ops,
                                     conditional_fp32_ops, fp32_ops)
    _amp_initialized = True
    _loss_scaler = LossScaler()
    _wrap_loss_output_functions(ndarray, _loss_scaler, key)
    _wrap_loss_output_functions(symbol, _loss_scaler, key)


def _wrap_symbol_functions(module, key, dtype, target_precision_ops,
                                 conditional_fp32_ops, fp32_ops):
    # the lists are chosen by MXNet's key ('bfloat16' or float16), the casts
    # go to the dtype aiond computes in
    ops = target_precision_ops if target_precision_ops is not None else list_lp16_ops(key)
    cond = (conditional_fp32_ops if conditional_fp32_ops is not None
            else list_conditional_fp32_ops(key))
    f32 = fp32_ops if fp32_ops is not None else list_fp32_ops(key)
    wrapper = _symbol_wrapper if module is symbol else _ndarray_wrapper
    fp32_params = list_lp16_use_fp32_params(key) or {}
    for name in ops:
        fp = fp32_params.get(name)
        _replace(module, name, lambda f, fp=fp: wrapper(f, dtype, fp32_param=fp))
    for name in f32:
        _replace(module, name, lambda f: wrapper(f, np.dtype(np.float32)))
    for name, arg, values in cond:
        _replace(module, name, lambda f, c=(arg, values): wrapper(f, np.dtype(np.float32),
                                                                  cond_arg=c))
    for name in list_widest_type_cast(key):
        _replace(module, name, lambda f: _widest_wrapper(f, dtype))


def init_trainer(optimizer_or_trainer):
    """Give a Gluon Trainer AMP's dynamic loss scaling: its steps then skip
    gradients that overflowed and undo the loss scale of ``scale_loss``."""
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        loss_scaler = _loss_scaler
    else:
        loss_scaler = LossScaler()
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        optimizer_or_trainer._amp_loss_scaler = loss_scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or "
                        "an optimizer, instead is %s" % type(optimizer_or_trainer))


def unscale(optimizer_or_trainer):
    """Divide the loss scale out of the gradients now (e.g. before clipping
    them); the next step then applies them unscaled."""
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        for p in optimizer_or_trainer._params:
            if p._grad is not None:
                for g in p._grad:
                    g[:] *= optimizer_or_trainer._scale
        optimizer_or_trainer._scale = 1.
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or "
                        "an optimizer, instead is %s" % type(optimizer_or_trainer))


# ------------------------------------------------------------ conversion


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None,
                   fp32_ops=None, conditional_fp32_ops=None,
                   excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of the FP32 graph ``sym`` with ``amp_cast``/``amp_multicast``
    nodes so the listed ops run in ``target_dtype`` ('float16' or
    'bfloat16'), float32, or their inputs' widest type (see
    ``_reduce_precision``). ``data_names`` are the inputs fed as float32 (by
    default the inputs without a ``__dtype__`` attribute); the others are
    parameters, and get a ``__dtype__`` attribute with the type the converted
    graph needs them in (the target type for those feeding target ops when
    ``cast_optional_params``)."""
    assert isinstance(sym, Symbol), "First argument to convert_symbol should be Symbol"
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    key = 'bfloat16' if target_dtype == 'bfloat16' else np.float16
    lp_name = _lp16(target_dtype).name

    if target_dtype_ops is not None:
        assert isinstance(target_dtype_ops, list), "target_dtype_ops should be a list of strs"
    else:
        target_dtype_ops = list_lp16_ops(key)
    if fp32_ops is not None:
        assert isinstance(fp32_ops, list), "fp32_ops should be a list of strs"
    else:
        fp32_ops = list_fp32_ops(key)
    if conditional_fp32_ops is not None:
        assert isinstance(conditional_fp32_ops, list), "conditional_fp32_ops should be a list"
    else:
        conditional_fp32_ops = list_conditional_fp32_ops(key)
    conditional = {}
    for entry in conditional_fp32_ops:
        assert (isinstance(entry[0], str) and isinstance(entry[1], str)
                and isinstance(entry[2], list)), \
            "conditional_fp32_ops should be a list of (str, str, list of str)"
        conditional.setdefault(entry[0], {}).setdefault(entry[1], []).extend(entry[2])
    if excluded_sym_names is not None:
        assert isinstance(excluded_sym_names, list), "excluded_sym_names should be a list of strs"
    else:
        excluded_sym_names = []

    cond_names = list(conditional)
    for a, b, what in ((target_dtype_ops, fp32_ops, "target_dtype_ops and fp32_ops"),
                       (target_dtype_ops, cond_names, "target_dtype_ops and conditional_fp32_ops"),
                       (cond_names, fp32_ops, "fp32_ops and conditional_fp32_ops")):
        common = set(a) & set(b)
        assert not common, "Ops cannot be in two or more lists. Common ops in %s %s" % (what, common)
    allowed = set(list_lp16_ops(key) + list_fp32_ops(key) + list_lp16_fp32_ops(key)
                  + [c[0] for c in list_conditional_fp32_ops(key)])
    illegal = set(target_dtype_ops + fp32_ops + cond_names) - allowed
    assert not illegal, ("Can only choose ops from one of the four lists for lp16_ops and "
                         "fp32_ops: amp.list_lp16_ops, amp.list_fp32_ops, "
                         "amp.list_lp16_fp32_ops, amp.list_conditional_fp32_ops of the "
                         "target_dtype. Op %s not in any of them" % illegal)

    attr_dict = sym.attr_dict()
    if data_names is None:
        data_names = [n for n in sym.list_inputs()
                      if "__dtype__" not in attr_dict.get(n, {})]
    model_params = set(sym.list_inputs()) - set(data_names)
    outputs, lp_params = reduce_precision(
        sym._outputs, lp_name, set(target_dtype_ops), set(fp32_ops),
        set(list_widest_type_cast(key)), conditional, set(excluded_sym_names),
        set(data_names), bool(cast_optional_params))
    out = Symbol._from(outputs)
    _set_input_dtypes(out, data_names, model_params, lp_params, lp_name)
    return out


def _set_input_dtypes(sym, data_names, model_params, lp_params, lp_name):
    """Write each parameter's type in the converted graph as its ``__dtype__``
    (data inputs are float32; a parameter whose type nothing fixes stays float32)."""
    from ...symbol.symbol import DTYPE_NP_TO_MX, dfs
    try:
        args, _, auxs = sym.infer_type_partial(**{n: np.float32 for n in data_names
                                                  if n in sym.list_inputs()})
        inferred = dict(zip(sym.list_arguments() + sym.list_auxiliary_states(),
                            list(args) + list(auxs)))
    except Exception:  # noqa: BLE001 - an op rule needing shapes: types stay unknown
        inferred = {}
    for node in dfs(sym._outputs):
        if node.op is not None:
            continue
        name = node.name
        if name in lp_params:
            t = lp_name
        elif name in model_params or "__dtype__" in node.attrs:
            t = inferred.get(name)
            t = np.dtype(t).name if t is not None else "float32"
        else:
            continue
        code = _dtype_code(t, DTYPE_NP_TO_MX)
        if code is not None:
            node.attrs["__dtype__"] = str(code)


def _dtype_code(name, table):
    if name == "bfloat16":
        return 12       # mshadow's kBfloat16
    for k, v in table.items():
        if np.dtype(k).name == name:
            return v
    return None


def _code_dtype(code):
    from ...symbol.symbol import DTYPE_MX_TO_NP
    code = int(code)
    if code == 12:
        return _bf16()
    return np.dtype(DTYPE_MX_TO_NP[code])


def _cast_params(sym, params, names):
    attr_dict = sym.attr_dict()
    for name in names:
        if name in params and "__dtype__" in attr_dict.get(name, {}):
            if attr_dict[name]["__dtype__"] != "-1":
                typ = _code_dtype(attr_dict[name]["__dtype__"])
                if params[name].dtype != typ:
                    params[name] = params[name].astype(typ)


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """Convert an FP32 model (symbol and parameters) to mixed precision for
    inference: ``convert_symbol`` with the parameters' names as non-data
    inputs, and each parameter cast to the type the converted graph needs.
    Returns ``(sym, arg_params, aux_params)``."""
    if excluded_sym_names is None:
        excluded_sym_names = []
    if not isinstance(excluded_sym_names, list):
        raise ValueError('excluded_sym_names must be a list of strings representing'
                         ' the names of the symbols that should not be casted,'
                         ' while received type %s' % str(type(excluded_sym_names)))
    assert target_dtype in ['float16', 'bfloat16'], \
        "Only target_dtype float16 and bfloat16 are supported currently"
    assert isinstance(sym, Symbol), "First argument to convert_model should be Symbol"
    assert isinstance(arg_params, dict), "Second argument to convert_model should be a dict of name to ndarray"
    assert isinstance(aux_params, dict), "Third argument to convert_model should be a dict of name to ndarray"
    param_names = list(arg_params) + list(aux_params)
    data_names = list(set(sym.list_inputs()) - set(param_names))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    _cast_params(sym, arg_params, sym.list_arguments())
    _cast_params(sym, aux_params, sym.list_auxiliary_states())
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None,
                         excluded_sym_names=None, ctx=gpu(0),
                         cast_optional_params=False):
    """A SymbolBlock running the hybridized ``block``'s graph in mixed
    precision (``convert_symbol``), with its parameters cast as the converted
    graph needs, on ``ctx``. The block must have been hybridized and run once."""
    from ...gluon import HybridBlock, SymbolBlock
    assert isinstance(block, HybridBlock), "block input should be a HybridBlock"
    if not block._cached_graph:
        raise RuntimeError(
            "Please first call block.hybridize() and then run forward with "
            "this block at least once before calling export.")
    inputs, sym = block._cached_graph
    input_names = [inp.name for inp in inputs]
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=input_names, cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    aux_names = set(converted.list_auxiliary_states())
    attr_dict = converted.attr_dict()
    arg_dict = {}
    for name, param in block.collect_params().items():
        prefix = 'arg' if name in arg_names else 'aux'
        if prefix == 'aux' and name not in aux_names:
            continue    # a parameter the graph does not use
        value = param._reduce()
        code = attr_dict.get(name, {}).get("__dtype__", "-1")
        if code != "-1":
            typ = _code_dtype(code)
            if value.dtype != typ:
                value = value.astype(typ)
        arg_dict['%s:%s' % (prefix, name)] = value
    ret = SymbolBlock(converted, inputs)
    for key, param in ret.collect_params().items():
        for prefix in ('arg', 'aux'):
            v = arg_dict.get('%s:%s' % (prefix, key))
            if v is not None and param.dtype != v.dtype:
                param.cast(v.dtype)
    ret.collect_params().load_dict(arg_dict, ctx=ctx)
    return ret


# ------------------------------------------------------------ the lists


def _fp16_or_bf16(target_dtype):
    if target_dtype in ['float16', np.float16]:
        return lists.symbol_fp16
    assert _is_bf16(target_dtype), "not supported type"
    return lists.symbol_bf16


def list_lp16_ops(target_dtype):
    """Get the default list of LP16 ops for AMP"""
    m = _fp16_or_bf16(target_dtype)
    return m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS


def list_fp32_ops(target_dtype):
    """Get the default list of FP32 ops for AMP"""
    return _fp16_or_bf16(target_dtype).FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """Get the default list of ops which run in both LP16 and FP32"""
    m = _fp16_or_bf16(target_dtype)
    return m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype):
    """Get the conditional fp32 ops list"""
    return _fp16_or_bf16(target_dtype).CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """Get the widest type cast ops list"""
    return _fp16_or_bf16(target_dtype).WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """Get loss function list"""
    return _fp16_or_bf16(target_dtype).LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """Get the params restrict for LP16 (None for float16)"""
    m = _fp16_or_bf16(target_dtype)
    return None if m is lists.symbol_fp16 else m.BF16_USE_FP32_PARAMS
