"""Model adapters: a bound Executor as a callable on a batch, and loading
``prefix-symbol.json`` + ``prefix-NNNN.params`` into a callable model."""
from __future__ import annotations

import logging

import numpy as np

from ..base import MXNetError
from .. import ndarray as nd

__all__ = ["ExecutorModel", "load_model"]

log = logging.getLogger("aiond.serve")


# ------------------------------------------------------------ model adapters
def _is_executor(obj):
    from ..symbol.executor import Executor
    return isinstance(obj, Executor)


class ExecutorModel:
    """A bound Executor (or a Symbol with its parameters) as a callable on a batch.

    One executor is bound per power-of-two batch size (rows are padded with
    zeros up to it and the outputs cut back), ``copies`` of each so that
    batches of the same size can run at once. Inputs other than the data
    (e.g. ``softmax_label`` of a Module checkpoint) are fed zeros.
    ``data_name`` may be a list: the model is then called with one batch
    per name, in that order.
    """

    def __init__(self, executor_or_symbol, arg_params=None, aux_params=None, data_name=None,
                 ctx=None, copies=2):
        from ..context import cpu
        from ..symbol import Symbol
        if isinstance(executor_or_symbol, Symbol):
            self._sym = executor_or_symbol
            self._args = dict(arg_params or {})
            self._aux = dict(aux_params or {})
            self._ctx = ctx or cpu()
        else:
            ex = executor_or_symbol
            self._sym = ex._symbol
            self._args = dict(ex.arg_dict)
            self._aux = dict(ex.aux_dict)
            self._ctx = ex._ctx
        names = [data_name] if isinstance(data_name, str) else \
            (list(data_name) if data_name is not None else None)
        free = [a for a in self._sym.list_arguments() if a not in self._args
                or (names is None and a == "data") or (names is not None and a in names)]
        if names is None:
            cands = [a for a in free if not a.endswith("label")]
            if "data" in free:
                names = ["data"]
            elif len(cands) == 1:
                names = cands
            else:
                raise ValueError("cannot tell the data input among %s; pass data_name="
                                 % (cands or free,))
        missing = [n for n in names if n not in self._sym.list_arguments()]
        if missing:
            raise ValueError("the graph has no input %s; its arguments are %s"
                             % (", ".join(map(repr, missing)), self._sym.list_arguments()))
        self.data_names = names
        self.data_name = names[0]
        self._extra = [a for a in free if a not in names]
        for k in (*names, *self._extra):
            self._args.pop(k, None)
        self._copies = max(1, int(copies))
        self._cache = {}
        self.outputs = self._sym.list_outputs()

    def _executors(self, n, samples, dtypes):
        key = (n, samples, dtypes)
        exs = self._cache.get(key)
        if exs is None:
            shapes = {k: (n,) + s for k, s in zip(self.data_names, samples)}
            arg_shapes, out_shapes, _ = self._sym.infer_shape_partial(**shapes)
            for name, shp in zip(self.outputs, out_shapes):
                # a batch is split back per request along axis 0: an output
                # whose rows are not the batch's (an NMS's kept boxes) cannot be
                if not shp or shp[0] != n:
                    raise MXNetError(
                        "output %r has shape %s for a batch of %d: aiond serves models "
                        "whose outputs have the batch axis first (an output whose size "
                        "depends on the values, such as NonMaxSuppression's selected "
                        "boxes, cannot be split per request)"
                        % (name, "unknown" if shp is None else
                           tuple(d if d > 0 else "?" for d in shp), n))
            names = self._sym.list_arguments()
            exs = []
            for _ in range(self._copies):
                args = dict(self._args)
                for name, shp in zip(names, arg_shapes):
                    if name in shapes:
                        args[name] = nd.zeros(shapes[name], ctx=self._ctx,
                                              dtype=dtypes[self.data_names.index(name)])
                    elif name in self._extra:
                        args[name] = nd.zeros(tuple(shp or (n,)), ctx=self._ctx)
                exs.append(self._sym.bind(self._ctx, args, aux_states=self._aux,
                                          grad_req="null"))
            self._cache[key] = exs = [exs, 0]
        i = exs[1]
        exs[1] = (i + 1) % len(exs[0])
        return exs[0][i]

    def __call__(self, *xs):
        if len(xs) != len(self.data_names):
            raise TypeError("this model takes %d inputs (%s), got %d"
                            % (len(self.data_names), ", ".join(self.data_names), len(xs)))
        rows = xs[0].shape[0]
        n = 1 << max(0, (rows - 1).bit_length())
        ex = self._executors(n, tuple(tuple(x.shape[1:]) for x in xs),
                             tuple(np.dtype(x.dtype) for x in xs))
        if n != rows:
            xs = [nd.concat(x, nd.zeros((n - rows,) + tuple(x.shape[1:]), ctx=x.context,
                                        dtype=x.dtype), dim=0) for x in xs]
        outs = ex.forward(is_train=False, **dict(zip(self.data_names, xs)))
        # the outputs are this executor's own buffers: the Batcher pushes its
        # reads right away, so a later forward on it is ordered after them
        if n != rows:
            outs = [o[:rows] for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)


def load_model(symbol_file, params_file, input_name=None, ctx=None):
    """A callable model from ``prefix-symbol.json`` + ``prefix-NNNN.params``
    (exported by MXNet 1.x or by aiond: Gluon ``export`` or Module checkpoint),
    or from an ``.onnx`` file (``params_file`` None).

    ``input_name``: the graph's input, or a list of them for a model with
    several (it is then called with one batch per name, in that order).
    Graphs whose free inputs are exactly these run as a Gluon
    ``SymbolBlock``; graphs with more (labels of a Module checkpoint) run
    on bound executors."""
    from .. import symbol as _sym
    from ..context import cpu
    ctx = ctx or cpu()
    if str(symbol_file).endswith(".onnx"):
        if params_file:
            raise ValueError("an ONNX file holds its parameters; give no params file "
                             "(got %s)" % params_file)
        from .onnx_models import load_onnx_model
        return load_onnx_model(symbol_file, input_name=input_name, ctx=ctx)
    sym = _sym.load(symbol_file)
    loaded = nd.load(params_file) if params_file else {}
    if isinstance(loaded, list):
        if loaded:      # an MXNet list file: arrays without names cannot be parameters
            raise MXNetError("%s holds %d arrays without names; a parameter file names "
                             "each arg:<name> or aux:<name>" % (params_file, len(loaded)))
        loaded = {}     # MXNet writes a model without parameters as an empty list
    args, aux = {}, {}
    for k, v in loaded.items():
        if v is None:
            raise MXNetError("%s: parameter %r is stored as a 'none' array" % (params_file, k))
        tp, _, name = k.partition(":")
        if tp == "arg":
            args[name] = v.as_in_context(ctx)
        elif tp == "aux":
            aux[name] = v.as_in_context(ctx)
        else:  # save_parameters files have no prefixes
            args[k] = v.as_in_context(ctx)
    free = [a for a in sym.list_arguments() if a not in args]
    if input_name is None:
        cands = [a for a in free if not a.endswith("label")]
        if len(cands) != 1:
            raise ValueError("%s: cannot tell the input among %s; pass input_name"
                             % (symbol_file, cands or free))
        input_name = cands[0]
    names = [input_name] if isinstance(input_name, str) else list(input_name)
    unknown = [n for n in names if n not in sym.list_arguments()]
    if unknown:
        raise ValueError("%s: the graph has no input %s; its free inputs are %s"
                         % (symbol_file, ", ".join(map(repr, unknown)), free))
    missing = [a for a in free if a not in names and not a.endswith("label")]
    if missing:     # an executor would run them as zeros: a silently wrong model
        raise MXNetError("%s lacks the parameters %s of %s (inputs: %s)"
                         % (params_file, ", ".join(missing[:8]) +
                            (", ..." if len(missing) > 8 else ""), symbol_file,
                            ", ".join(names)))
    if sorted(free) == sorted(names):
        try:
            from ..gluon import SymbolBlock
            block = SymbolBlock.imports(symbol_file, names, params_file, ctx=ctx)
            return block
        except Exception as e:  # noqa: BLE001 - fall back to the executor path
            log.warning("aiond.serve: SymbolBlock.imports failed (%s); using executors", e)
    return ExecutorModel(sym, args, aux, data_name=names if len(names) > 1 else names[0],
                         ctx=ctx)
