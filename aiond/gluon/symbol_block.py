"""``mx.gluon.SymbolBlock``: a Block running a Symbol graph (MXNet 1.9.1)."""
from __future__ import annotations

import copy
import warnings

import numpy as np

from .. import autograd as _autograd
from ..base import MXNetError
from ..ndarray import NDArray
from ..util import is_np_array as _is_np_array
from ._formats import _flatten, _is_symbol, _regroup
from .block import HybridBlock, _symbol
from .parameter import ParameterDict

__all__ = ["SymbolBlock"]

mx_real_t = np.float32


def _common_prefix(names):
    """The common prefix of all names."""
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A Block running a Symbol graph (e.g. a model exported by MXNet or by
    ``HybridBlock.export``): ``outputs`` are the Symbol(s) computed,
    ``inputs`` the variables fed at call time; every other argument and
    auxiliary state becomes a Parameter (shared from ``params`` if given).

    >>> net = gluon.SymbolBlock.imports('net-symbol.json', ['data'], 'net-0000.params')
    """

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``symbol_file`` (graph JSON) and ``param_file``
        (``arg:``/``aux:`` parameters), as written by ``export`` or by
        Module's ``save_checkpoint`` (MXNet's or aiond's)."""
        sym = _symbol()
        graph = sym.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [sym.var(i, dtype=mx_real_t) for i in input_names]
        else:
            inputs = [sym.var(i) for i in input_names]
        ret = SymbolBlock(graph, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __repr__(self):
        s = "{name}(\n{modstr}\n)"
        modstr = "\n".join(["{block} : {numinputs} -> {numoutputs}".format(
            block=self._cached_graph[1], numinputs=len(self._cached_graph[0]),
            numoutputs=len(self._cached_graph[1].list_outputs()))])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __init__(self, outputs, inputs, params=None):
        sym = _symbol()
        super(SymbolBlock, self).__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if _is_symbol(inputs) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for i in syms:
            assert len(i.get_internals().list_outputs()) == 1, \
                "Input symbols must be variable, but %s is an output of operators" % str(i)
            input_names.add(i.name)
        # row_sparse parameters are not supported by SymbolBlock (as in MXNet)
        row_sparse_storage = "1"    # _STORAGE_TYPE_STR_TO_ID['row_sparse']
        for i in out:
            for j in i.get_internals():
                assert j.attr("__storage_type__") != row_sparse_storage, \
                    "SymbolBlock doesn't support Parameter '%s' because its storage " \
                    "type is 'row_sparse'." % j.name
        if len(out) > 1:
            out = sym.Group(out)
        else:
            out = out[0]
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for i, arg in enumerate(arg_params):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=arg_types[i])
        for i, aux in enumerate(aux_params):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True,
                                dtype=aux_types[i])
        self._cached_graph = syms, out
        # an np graph (or one built under NumPy semantics) returns mx.np.ndarrays
        from ..symbol.numpy import _Symbol
        self._np_out = _is_np_array() or isinstance(outputs, _Symbol)
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            if not args:
                f = self._fast_rec if _autograd._state.recording else self._fast
                if f is not None:
                    out = f(self, x)
                    if out is not None:
                        return out
            with x.context:
                return self._call_cached_op(x, *args)
        assert _is_symbol(x), \
            "HybridBlock requires the first argument to forward be either " \
            "Symbol or NDArray, but got %s" % type(x)
        args, in_fmt = _flatten([x] + list(args), "input")
        assert in_fmt == self._in_format, "Invalid input format"
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], args)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        tmp = self._cached_graph
        super(SymbolBlock, self)._clear_cached_op()
        self._cached_graph = tmp

    def cast(self, dtype):
        self._clear_cached_op()
        super(SymbolBlock, self).cast(dtype)
        if np.dtype(dtype).name == "float16":
            # BatchNorm parameters stay float32
            out = self._cached_graph[1]
            params_list = out.get_internals().list_inputs()
            for node in params_list:
                for suffix, mean in (("running_var", "running_mean"),
                                     ("moving_var", "moving_mean")):
                    if node.endswith(suffix):
                        prefix = node[:-len(suffix)]
                        sibs = [prefix + t for t in (mean, "gamma", "beta")]
                        if all(p in params_list for p in sibs):
                            self.params.get(node).cast("float32")
                            for sib in sibs:
                                self.params.get(sib).cast("float32")

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def reset_ctx(self, ctx):
        """Move every Parameter to other context(s)."""
        for p in self.collect_params().values():
            p.reset_ctx(ctx)


def _infer_param_types(in_params, out_params, arg_params, aux_params, default_dtype=mx_real_t):
    """dtypes of the arguments and auxiliary states, inferred from the
    inputs' dtypes where possible, else ``default_dtype``."""
    arg_types = None
    aux_types = None
    input_sym_names = [in_param.name for in_param in in_params]
    input_sym_arg_types = []
    can_infer_input_type = True
    for in_param in in_params:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = in_param.infer_type()[0]
        except MXNetError:
            t = None
        if not t or len(t) < 1 or t[0] is None:
            can_infer_input_type = False
            break
        input_sym_arg_types.append(t[0])
    if can_infer_input_type:
        params = {k: v for k, v in zip(input_sym_names, input_sym_arg_types)}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arg_types, _, aux_types = out_params.infer_type(**params)
        except MXNetError:
            arg_types, aux_types = None, None
    if arg_types is None or len(arg_types) != len(arg_params):
        arg_types = [default_dtype for _ in arg_params]
    if aux_types is None or len(aux_types) != len(aux_params):
        aux_types = [default_dtype for _ in aux_params]
    return (arg_types, aux_types)
