"""``mx.gluon.Block``, ``HybridBlock`` and ``SymbolBlock`` (MXNet 1.9.1).

A Block owns Parameters and child Blocks (registered by attribute
assignment) and names them with MXNet's prefix scheme (``dense0_weight``).
A HybridBlock runs ``hybrid_forward(F, x, ..., **params)`` with ``F =
mx.nd`` until ``hybridize()``; then its first call traces it once with
``F = mx.sym`` and later calls replay the cached graph
(``graph/cached_op.CachedOp``; its short call paths are in ``_fast.py``).
``export`` writes MXNet's ``-symbol.json`` and ``-0000.params``;
``SymbolBlock.imports`` (``symbol_block.py``) loads them (MXNet's or aiond's).
"""
from __future__ import annotations

import json
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .. import autograd as _autograd
from .. import engine as _engine
from .. import initializer, ndarray
from .. import name as _name
from ..util import is_np_array as _is_np_array
from ..graph.program import renamed as _renamed
from ..base import MXNetError
from ..ndarray import NDArray
from . import _cached_op
from ._fast import _fast_call, _fast_record
from ._formats import _flatten, _is_symbol, _np_outs, _np_symbols, _np_views, _regroup
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ["Block", "HybridBlock", "SymbolBlock"]

mx_real_t = np.float32


def _symbol():
    from .. import symbol
    return symbol


_BUILD_LOCK = threading.RLock()


class _BlockScope(object):
    """Scope for collecting child Blocks (and naming them)."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new Block."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = "%s%d_" % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _gather_type_ctx_info(args):
    """(has_symbol, has_ndarray, set of contexts, first context) of nested args."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if _is_symbol(args):
        return True, False, set(), None
    if isinstance(args, (list, tuple)):
        has_symbol = has_ndarray = False
        ctx_set = set()
        first_ctx = None
        for ele in args:
            s, n, cs, fc = _gather_type_ctx_info(ele)
            has_symbol = has_symbol or s
            has_ndarray = has_ndarray or n
            if first_ctx is None and fc is not None:
                first_ctx = fc
            ctx_set = ctx_set | cs
            if has_symbol and has_ndarray:
                break
        return has_symbol, has_ndarray, ctx_set, first_ctx
    return False, False, set(), None


class Block(object):
    """Base class for all neural network layers and models.

    Child Blocks assigned as attributes are registered; use
    ``with self.name_scope():`` to give them names under this Block's
    prefix::

        class Model(Block):
            def __init__(self, **kwargs):
                super(Model, self).__init__(**kwargs)
                with self.name_scope():
                    self.dense0 = nn.Dense(20)
                    self.dense1 = nn.Dense(20)

            def forward(self, x):
                x = F.relu(self.dense0(x))
                return F.relu(self.dense1(x))
    """
    _active = False     # whether calls run a cached graph (HybridBlock.hybridize sets it)

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        s = "{name}(\n{modstr}\n)"
        modstr = "\n".join(["  ({key}): {block}".format(key=key, block=_indent(block.__repr__(), 2))
                            for key, block in self.__dict__.items() if isinstance(block, Block)])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __setattr__(self, name, value):
        """Registers parameters and child blocks."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError("Changing attribute type for {name} from {type1} to {type2}"
                                "is not allowed.".format(name=name, type1=type(existing),
                                                         type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            assert name not in self._reg_params, \
                "Overriding Parameter attribute %s is not allowed. " \
                "If you want to share parameters between blocks, please set " \
                "'params' at Block construction instead."
            self._reg_params[name] = value
        super(Block, self).__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())

        def _find(data):
            if isinstance(data, (list, tuple)):
                return any(_find(ele) for ele in data)
            if isinstance(data, dict):
                return any(_find(v) for v in data.values())
            if isinstance(data, Block):
                return data not in children
            return False
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if _find(v):
                    warnings.warn('"{name}" is an unregistered container with Blocks. '
                                  "Note that Blocks inside the list, tuple or dict will not be "
                                  "registered automatically. Make sure to register them using "
                                  "register_child() or switching to "
                                  "nn.Sequential/nn.HybridSequential instead. "
                                  .format(name=self.__class__.__name__ + "." + k), stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """Prefix of this Block."""
        return self._prefix

    @property
    def name(self):
        """Name of this Block, without the trailing '_'."""
        return self._name

    def name_scope(self):
        """A ``with`` scope naming child Blocks and Parameters under this prefix."""
        return self._scope

    @property
    def params(self):
        """This Block's ParameterDict (without its children's)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this Block's and all its children's Parameters;
        ``select`` is a regular expression the names must match, e.g.
        ``'.*weight|.*bias'``."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in self.params.items()
                        if pattern.match(name)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters under structural names (``0.weight``,
        ``dense0.bias``) in MXNet's ``.params`` format."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse_params = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse_params.items()}
        arg_dict = {key: val._reduce() for key, val in params.items()}
        ndarray.save(filename, arg_dict)

    def save_params(self, filename):
        """[Deprecated] Use save_parameters."""
        warnings.warn("save_params is deprecated. Please use save_parameters. "
                      "Note that if you want load from SymbolBlock later, please "
                      "use export instead.")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError("%s\nsave_params is deprecated. Using "
                             "save_parameters may resolve this error." % e) from None

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by ``save_parameters`` (aiond's or MXNet's)."""
        loaded = ndarray.load(filename)
        if not isinstance(loaded, dict):
            raise ValueError("load_parameters: %s holds a list of arrays without names, not "
                             "saved parameters" % filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in i for i in loaded.keys()):
            # legacy loading (save_params / collect_params().save)
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            params_inv = defaultdict(list)
            for k, v in params.items():
                params_inv[v].append(k)
            for name, param in params.items():
                if not any(p in loaded for p in params_inv[param]):
                    from .parameter import ParameterFileError
                    raise ParameterFileError(
                        "Parameter '%s' is missing in file '%s', which contains parameters: "
                        "%s. Set allow_missing=True to ignore missing parameters." % (
                            name, filename, _brief_print_list(loaded.keys())))
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    "Parameter '%s' loaded from file '%s' is not present in ParameterDict, "
                    "which contains parameters %s. Set ignore_extra=True to ignore. " % (
                        name, filename, _brief_print_list(params.keys())))
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                        dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """[Deprecated] Use load_parameters."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (attribute assignment does this)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a
        handle whose ``detach()`` removes it."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns
        a handle whose ``detach()`` removes it."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Apply ``fn(block)`` to every child (recursively) and then self."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize the Parameters of this Block and its children."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (see ``HybridBlock.hybridize``)."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def save(self, prefix):
        """Save the structure (``prefix-model.json``) and parameters
        (``prefix-model.params``) to be restored by ``load`` on the same model."""
        model = {}

        def _save_cached_graphs(blk, index, structure):
            mdl = {"orig_name": blk.name}
            name = type(blk).__name__.lower()
            structure[name + str(index[0])] = mdl
            if isinstance(blk, HybridBlock):
                if blk._cached_graph:
                    mdl["in_format"] = blk._in_format
                    mdl["out_format"] = blk._out_format
                    syms, out = blk._cached_graph
                    mdl["inputs"] = [sym.tojson() for sym in syms]
                    mdl["symbol"] = out.tojson()
                    mdl["hybridized"] = True
                else:
                    mdl["hybridized"] = False
            children = dict()
            mdl["children"] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                _save_cached_graphs(child, index, mdl)
        index = [0]
        _save_cached_graphs(self, index, model)
        with open(prefix + "-model.json", "w") as fp:
            json.dump(model, fp)
        self.save_parameters(prefix + "-model.params")

    def load(self, prefix):
        """Load a model saved with ``save`` into this (identically built) model."""
        with open(prefix + "-model.json") as fp:
            model = json.load(fp)
        sym = _symbol()

        def _load_cached_graphs(blk, index, structure):
            name = type(blk).__name__.lower()
            mdl = structure[name + str(index[0])]
            blk._name = mdl["orig_name"]
            if isinstance(blk, HybridBlock):
                if mdl["hybridized"]:
                    blk._in_format = mdl["in_format"]
                    blk._out_format = mdl["out_format"]
                    out = sym.load_json(mdl["symbol"])
                    syms = [sym.load_json(inp) for inp in mdl["inputs"]]
                    blk._cached_graph = (syms, out)
                    blk._active = True
            pnames = list(blk.params.keys())
            for p in pnames:
                param = blk.params._params[p]
                new_name = blk.name + "_" + p[len(blk.params._prefix):]
                blk.params._params.pop(p)
                blk.params._params[new_name] = param
            for ch_name, child in blk._children.items():
                index[0] += 1
                _load_cached_graphs(child, index, mdl)
            ch_names = list(blk._children.keys())
            children = mdl["children"]
            for ch_name in ch_names:
                child = blk._children[ch_name]
                blk._children.pop(ch_name)
                orig_name = children[child.name]
                blk._children[orig_name] = child
        index = [0]
        _load_cached_graphs(self, index, model)
        self.load_parameters(prefix + "-model.params")

    def cast(self, dtype):
        """Cast this Block (its Parameters and children) to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def __call__(self, *args):
        """Calls forward. Only accepts positional arguments."""
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """Override to implement the forward computation on NDArrays."""
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        """Install an op hook on the hybridized children."""
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for ``inputs``
        (the network must be initialized and not hybridized)."""
        summary = OrderedDict()
        seen = set()
        hooks = []

        def _get_shape_str(args):
            def flatten(args):
                if not isinstance(args, (list, tuple)):
                    return [args], int(0)
                flat = []
                fmts = []
                for i in args:
                    arg, fmt = flatten(i)
                    flat.extend(arg)
                    fmts.append(fmt)
                return flat, fmts

            def regroup(args, fmt):
                if isinstance(fmt, int):
                    if fmt == 0:
                        return args[0], args[1:]
                    return args[:fmt], args[fmt:]
                ret = []
                for i in fmt:
                    res, args = regroup(args, i)
                    ret.append(res)
                return ret, args

            flat_args, fmts = flatten(args)
            flat_arg_shapes = [x.shape if isinstance(x, NDArray) else x for x in flat_args]
            shapes = regroup(flat_arg_shapes, fmts)[0]
            if isinstance(shapes, list):
                shape_str = str(shapes)[1:-1]
            else:
                shape_str = str(shapes)
            return shape_str.replace("L", "")

        def _register_summary_hook(block):
            assert not block._active, \
                '"{}" must not be hybridized to print summary.'.format(block.name)

            def _summary_hook(block, _, outputs):
                class_name = block.__class__.__name__
                block_idx = len(summary) - 1
                m_key = "%s-%i" % (class_name, block_idx + 1)
                summary[m_key] = OrderedDict()
                summary[m_key]["output_shape"] = _get_shape_str(outputs)
                params = 0
                summary[m_key]["trainable"] = 0
                summary[m_key]["shared"] = 0
                for p in block.params.values():
                    params += p.data().size
                    summary[m_key]["trainable"] += 0 if p.grad_req == "null" else p.data().size
                    if p in seen:
                        summary[m_key]["shared"] += p.data().size
                    else:
                        seen.add(p)
                summary[m_key]["n_params"] = params

            from .nn.basic_layers import HybridSequential, Sequential
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(_summary_hook))

        summary["Input"] = OrderedDict()
        summary["Input"]["output_shape"] = _get_shape_str(inputs)
        summary["Input"]["n_params"] = 0
        summary["Input"]["trainable"] = 0
        summary["Input"]["shared"] = 0
        try:
            self.apply(_register_summary_hook)
            self(*inputs)
            line_format = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(line_format.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            total_params = 0
            trainable_params = 0
            shared_params = 0
            for layer in summary:
                print(line_format.format(layer, str(summary[layer]["output_shape"]),
                                         summary[layer]["n_params"]))
                total_params += summary[layer]["n_params"]
                trainable_params += summary[layer]["trainable"]
                shared_params += summary[layer]["shared"]
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print("   Total params: " + str(total_params))
            print("   Trainable params: " + str(trainable_params))
            print("   Non-trainable params: " + str(total_params - trainable_params))
            print("Shared params in forward computation graph: " + str(shared_params))
            print("Unique parameters in model: " + str(total_params - shared_params))
            print("-" * 80)
        finally:
            for h in hooks:
                h.detach()


_SIG_CACHE_MAX = 16


class HybridBlock(Block):
    """A Block whose ``hybrid_forward(F, x, *args, **params)`` works with
    both ``F = mx.nd`` (NDArrays) and ``F = mx.sym`` (Symbols), so that
    ``hybridize()`` can trace it once and replay the cached graph.

    ``hybrid_forward`` must be static: no ``asnumpy()``, no shapes, no
    branching on values."""

    def __init__(self, prefix=None, params=None):
        super(HybridBlock, self).__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._cached_sig = None
        self._sig_cache = OrderedDict()
        self._np_out = False
        self._fast = None
        self._fast_rec = None
        self._coalesce_ok = True
        self._shape_dependent = False
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts = {}

    def __setattr__(self, name, value):
        super(HybridBlock, self).__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    # ------------------------------------------------------------ tracing
    def _get_graph(self, *args):
        if not self._cached_graph:
            sym = _symbol()
            flatten_args, self._in_format = _flatten(args, "input")
            flatten_inputs = []
            symbol_inputs = []
            shapes, dtypes = {}, {}
            cnt = 0
            real_arg_num = sum([ele is not None for ele in flatten_args])
            if real_arg_num == 0:
                raise ValueError("All args are None and we do not support such a case."
                                 " Received args={}".format(args))
            for arg in flatten_args:
                if arg is not None:
                    name = "data{}".format(cnt) if real_arg_num > 1 else "data"
                    arg_sym = sym.var(name)
                    if _is_np_array():
                        arg_sym = arg_sym.as_np_ndarray()
                    if isinstance(arg, NDArray):
                        shapes[name] = arg.shape
                        dtypes[name] = arg.dtype
                    cnt += 1
                    flatten_inputs.append(arg_sym)
                    symbol_inputs.append(arg_sym)
                else:
                    flatten_inputs.append(None)
            grouped_inputs = _regroup(flatten_inputs, self._in_format)
            params = {i: j.var() for i, j in self._reg_params.items()}
            with _cached_op.tracing(shapes, dtypes) as tr:
                with self.name_scope():
                    out = self.hybrid_forward(sym, *grouped_inputs, **params)
            self._shape_dependent = tr.shape_dependent
            out, self._out_format = _flatten(out, "output")
            self._np_out = _np_symbols(out)
            self._cached_graph = symbol_inputs, sym.Group(out)
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data)}
        input_names = out.list_inputs()
        expected_names = set(input_names)
        params = self.collect_params()
        param_names = set(params.keys())
        for name in expected_names:
            assert name in param_names or name in data_names, \
                "Unknown input to HybridBlock: %s" % name
        used_data_names = [i for i in data_names if i in expected_names]
        if len(used_data_names) != len(data_names):
            unused = ", ".join(["%d-th" % i for name, i in data_names.items()
                                if name not in expected_names])
            warnings.warn("The %s input to HybridBlock is not used by any "
                          "computation. Is this intended?" % unused, stacklevel=4)
        used_param_names = [i for i in param_names if i in expected_names]
        if len(used_param_names) != len(param_names):
            unused = ", ".join(sorted(param_names - set(used_param_names)))
            warnings.warn("Parameter %s is not used by any computation. "
                          "Is this intended?" % unused, stacklevel=4)
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()
        if self._backend:   # MXNet 1.9.1: the traced graph partitioned for the backend
            from ._block_partition import partition_cached_graph
            out = partition_cached_graph(self, data, out, args)
            input_names = out.list_inputs()
        self._cached_op_args = []
        for name in input_names:
            if name in data_names:
                self._cached_op_args.append((True, data_names[name]))
            else:
                self._cached_op_args.append((False, params[name]))
        self._cached_op = _cached_op.CachedOp(out, self._flags)

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:  # noqa: BLE001 - MXNet wraps every failure
            raise ValueError("Deferred initialization failed because shape cannot be "
                             "inferred. {}".format(e)) from e

    def _signature(self, flat):
        return tuple(None if a is None else (a.shape, np.dtype(a.dtype).str) for a in flat)

    def _call_cached_op(self, *args):
        flat, fmt = _flatten(args, "input")
        if self._cached_op is None or self._shape_dependent:
            # threads serving one block may call it first at once: one builds
            with _BUILD_LOCK:
                self._select_cached_op(flat, args)
                if self._shape_dependent:   # another thread may switch graphs after
                    return self._run_cached_op(flat, fmt)
        return self._run_cached_op(flat, fmt)

    def _select_cached_op(self, flat, args):
        sig = self._signature(flat)
        if self._cached_op is None:
            self._build_cache(*args)
            self._cached_sig = sig
        elif self._shape_dependent and sig != self._cached_sig:
            # the graph used input shapes: one graph per input signature
            self._sig_cache[self._cached_sig] = (self._cached_graph, self._cached_op,
                                                 self._cached_op_args, self._in_format,
                                                 self._out_format)
            while len(self._sig_cache) > _SIG_CACHE_MAX:
                self._sig_cache.popitem(last=False)
            hit = self._sig_cache.pop(sig, None)
            if hit is not None:
                (self._cached_graph, self._cached_op, self._cached_op_args, self._in_format,
                 self._out_format) = hit
            else:
                self._cached_graph = ()
                self._cached_op = None
                self._build_cache(*args)
            self._cached_sig = sig

    def _run_cached_op(self, flat, fmt):
        if fmt != self._in_format:
            if len(self._in_format) > len(fmt):
                valid = all([self._in_format[i] == -1
                             for i in range(len(fmt), len(self._in_format))])
                valid = valid and (fmt == self._in_format[:len(fmt)])
            elif len(self._in_format) < len(fmt):
                valid = all([fmt[i] == -1 for i in range(len(self._in_format), len(fmt))])
                valid = valid and (fmt[:len(self._in_format)] == self._in_format)
            else:
                valid = False
            if not valid:
                raise ValueError("The argument structure of HybridBlock does not match"
                                 " the cached version. Stored format = {}, input format = {}"
                                 .format(fmt, self._in_format))
        args_without_none = [ele for ele in flat if ele is not None]
        ctx = args_without_none[0].context if args_without_none else None
        cargs = [args_without_none[i] if is_arg else i.data(ctx)
                 for is_arg, i in self._cached_op_args]
        out = self._cached_op(*cargs, ctx=ctx)
        if not _autograd._state.recording:
            self._fast = _fast_call(self, fmt, cargs, ctx)
        else:
            self._fast_rec = _fast_record(self, fmt, cargs, ctx)
        if self._np_out:
            out = _np_outs(out)
        return _regroup(out, self._out_format)

    def _clear_cached_op(self):
        self._fast = None
        self._fast_rec = None
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._cached_sig = None
        self._sig_cache = OrderedDict()

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                "Children of HybridBlock must also be HybridBlock, "
                "but %s has type %s. If you are using Sequential, "
                "please try HybridSequential instead." % (str(block), str(type(block))))
        super(HybridBlock, self).register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Turn the cached graph on (or off) for this block and its children:
        the next call traces ``hybrid_forward`` once with Symbols, later
        calls replay the graph. ``static_alloc``/``static_shape`` are
        accepted for compatibility (the replay has no separate memory plan).
        ``coalesce=False`` (aiond's own): coroutines' concurrent calls of
        this block are never batched by the engine (see README)."""
        self._coalesce_ok = bool(kwargs.pop("coalesce", True))
        self._fast = None
        self._fast_rec = None
        if len(kwargs) > 0:
            self._backend_opts = kwargs
        self._backend = backend
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and self._forward_hooks or self._forward_pre_hooks:
            warnings.warn('"{block}" is being hybridized while still having forward hook/pre-hook. '
                          'If "{block}" is a child of HybridBlock, the hooks will not take effect.'
                          .format(block=self))
        super(HybridBlock, self).hybridize(active, static_alloc=static_alloc,
                                           static_shape=static_shape,
                                           inline_limit=inline_limit,
                                           forward_bulk_size=forward_bulk_size,
                                           backward_bulk_size=backward_bulk_size)

    def optimize_for(self, x, *args, backend=None, **kwargs):
        """Hybridize with subgraph ``backend`` and partition the graph for
        these inputs without running it (see ``_block_partition``)."""
        from ._block_partition import optimize_for
        optimize_for(self, x, args, backend, kwargs)

    def cast(self, dtype):
        self._clear_cached_op()
        super(HybridBlock, self).cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        args, _ = _flatten(args, "input")
        args_without_none = [ele for ele in args if ele is not None]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{i.name: getattr(j, attr) for i, j in zip(inputs, args_without_none)})
        if arg_attrs is None:
            raise ValueError(str(w[0].message) if w else
                             "%s: cannot infer the %s of the parameters" % (self.name, attr))
        sdict = {i: j for i, j in zip(out.list_arguments(), arg_attrs)}
        sdict.update({name: a for name, a in zip(out.list_auxiliary_states(), aux_attrs)})
        for i in self.collect_params().values():
            if i.name in sdict:
                setattr(i, attr, sdict[i.name])

    def infer_shape(self, *args):
        """Infer the shapes of the Parameters from the inputs."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Infer the dtypes of the Parameters from the inputs."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (names with
        ``arg:``/``aux:``), loadable by ``SymbolBlock.imports``, MXNet's
        Module and MXNet itself. Needs a hybridized forward first."""
        if not self._cached_graph:
            raise RuntimeError(
                "Please first call block.hybridize() and then run forward with "
                "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym.save("%s-symbol.json" % path, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for is_arg, param in self._cached_op_args:
            if not is_arg:
                name = param.name
                if name in arg_names:
                    arg_dict["arg:{}".format(name)] = param._reduce()
                elif name not in aux_names:
                    warnings.warn('Parameter "{name}" is not found in the graph. '
                                  .format(name=name), stacklevel=3)
                else:
                    arg_dict["aux:%s" % name] = param._reduce()
        ndarray.save("%s-%04d.params" % (path, epoch), arg_dict)

    def register_op_hook(self, callback, monitor_all=False):
        """Accepted for compatibility; aiond's cached graph calls no op hooks."""
        self._callback = callback
        self._monitor_all = monitor_all
        for cld in self._children.values():
            cld._callback = callback
            cld._monitor_all = monitor_all

    def forward(self, x, *args):
        """Run ``hybrid_forward`` on NDArrays (or the cached graph when
        hybridized), or build the graph on Symbols."""
        if isinstance(x, NDArray):
            if self._active and not args:
                f = self._fast_rec if _autograd._state.recording else self._fast
                if f is not None:
                    out = f(self, x)
                    if out is not None:
                        return out
            # the serving / training-loop call: NDArrays (or None) on one context
            ctx = x._st.ctx
            for a in args:
                if a is not None and (not isinstance(a, NDArray) or a._st.ctx is not ctx):
                    break
            else:
                if self._active:
                    with ctx:
                        return self._call_cached_op(x, *args)
                return self._forward_nd(ctx, x, args)
        has_symbol, has_ndarray, ctx_set, first_ctx = _gather_type_ctx_info([x] + list(args))
        if has_symbol and has_ndarray:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols"
                             " types for the input. Please check the type of the args.\n")
        if not has_symbol and not has_ndarray:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        if has_ndarray:
            ctx = first_ctx
            if self._active:
                if len(ctx_set) > 1:
                    raise ValueError("Find multiple contexts in the input, "
                                     "After hybridized, the HybridBlock only supports one input "
                                     "context. You can print the ele.ctx in the "
                                     "input arguments to inspect their contexts. "
                                     "Find all contexts = {}".format(ctx_set))
                with ctx:
                    return self._call_cached_op(x, *args)
            return self._forward_nd(ctx, x, args)
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(_symbol(), x, *args, **params)

    def _forward_nd(self, ctx, x, args):
        """``hybrid_forward`` on NDArrays, op by op (not hybridized)."""
        with ctx:
            try:
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            except DeferredInitializationError:
                self._deferred_infer_shape(x, *args)
                for _, v in self.params.items():
                    v._finish_deferred_init()
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            try:
                # a block's ops go out as one bulk segment (nested blocks
                # join their parent's), as a hybridized call's do
                with _engine.bulk_scope("forward" if _autograd.is_recording() else "inference",
                                        "forward"):
                    out = self.hybrid_forward(ndarray, x, *args, **params)
                return _np_views(out) if _is_np_array() else out
            except DeferredInitializationError:
                raise
            except MXNetError as e:
                if getattr(e, "_gluon_block", None) is not None:
                    raise
                new = _renamed(e, "%s (%s): %s" % (self.name, type(self).__name__, e))
                new._gluon_block = self.name
                raise new from None

    def hybrid_forward(self, F, x, *args, **kwargs):
        """Override: the computation, with ``F`` being ``mx.nd`` or ``mx.sym``."""
        raise NotImplementedError


# SymbolBlock lives in its own module; mx.gluon.block.SymbolBlock stays its name
from .symbol_block import SymbolBlock  # noqa: E402,F401
