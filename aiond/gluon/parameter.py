"""``mx.gluon.Parameter``, ``Constant`` and ``ParameterDict`` (MXNet 1.9.1).

A Parameter holds one copy of its value per context (and one gradient
buffer per copy unless ``grad_req='null'``); the gradients are attached
with ``autograd.mark_variables``. A shape with 0s is unknown: with
``allow_deferred_init`` the initialisation waits until the first forward
has inferred it. ``ParameterDict.save``/``load`` use MXNet's ``.params``
format (``nd.save``/``nd.load``) and its prefix rules.
"""
from __future__ import annotations

import re
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, context, initializer, ndarray
from ..base import MXNetError
from ..context import Context, cpu
from ..util import is_np_array, is_np_shape
from ..ndarray import NDArray
from .utils import _brief_print_list, _indent, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

mx_real_t = np.float32


def _tensor_types():
    from ..symbol import Symbol
    return (Symbol, NDArray)


def _zeros(shape, dtype, ctx, stype):
    """Zeros for a parameter's data or gradient: mx.np.ndarray under NumPy-array
    semantics (a block run with ``use_np``), as MXNet makes them."""
    if is_np_array():
        if stype != "default":
            raise ValueError("mxnet.numpy.zeros does not support stype = {}".format(stype))
        from .. import numpy as _mx_np
        return _mx_np.zeros(shape=shape, dtype=dtype, ctx=ctx)
    return ndarray.zeros(shape=shape, dtype=dtype, ctx=ctx, stype=stype)


class ParameterFileError(MXNetError, AssertionError):
    """A parameter file does not fit the network: a parameter missing or
    extra, a shape or dtype that differs, an array stored as 'none'. MXNet
    raises ``AssertionError`` here (gone under ``python -O``); this is an
    ``MXNetError`` that ``except AssertionError`` still catches."""


class DeferredInitializationError(MXNetError):
    """Error for unfinished deferred initialization."""


# --------------------------------------------------------- fresh gradients
# MXNet's Trainer refuses to update a parameter whose gradient no backward
# wrote since the last step. The leaf autograd marks for a parameter copy is
# replaced by this subclass: reading ``grad`` is what backward does just
# before writing a gradient, so it flags the copy as fresh.

try:
    _LeafBase = autograd._Leaf
except AttributeError:  # pragma: no cover - an autograd without leaves
    _LeafBase = None

if _LeafBase is not None:
    class _ParamLeaf(_LeafBase):
        __slots__ = ("_buf",)

        def __init__(self, grad, req):  # noqa: D107 - slots set directly
            self._buf = grad
            self.req = req
            self.fresh = False

        @property
        def grad(self):
            self.fresh = True
            return self._buf

        @grad.setter
        def grad(self, value):
            self._buf = value
            self.fresh = True


def _mark(datas, grads, req):
    autograd.mark_variables(datas, grads, req)
    if _LeafBase is not None:
        for d, g in zip(datas, grads):
            d._ag = _ParamLeaf(g, req)


def _fresh_grad(data):
    """Whether backward wrote ``data``'s gradient since the flag was cleared."""
    ag = data._ag
    return bool(getattr(ag, "fresh", True)) if ag is not None else False


def _clear_fresh(data):
    ag = data._ag
    if ag is not None and hasattr(ag, "fresh"):
        ag.fresh = False


# --------------------------------------------------------------- Parameter


class Parameter(object):
    """A container holding the value (and gradient) of a weight of a Block,
    one copy per context.

    >>> w = mx.gluon.Parameter('fc_weight', shape=(64, 100), init=mx.init.Xavier())
    >>> w.initialize(ctx=mx.cpu())
    >>> w.data().shape
    (64, 100)
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=mx_real_t,
                 lr_mult=1.0, wd_mult=1.0, init=None, allow_deferred_init=False,
                 differentiable=True, stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        valid_stypes = ["default", "row_sparse", "csr"]
        assert grad_stype in valid_stypes, "grad_stype for Parameter '%s' must be " \
            "one of 'default', 'row_sparse', or 'csr', but got '%s'" % (name, grad_stype)
        assert stype in valid_stypes, "stype for Parameter '%s' must be " \
            "one of 'default', 'row_sparse', or 'csr', but got '%s'" % (name, stype)
        # sparse gradients are computed dense in aiond (same values)
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        s = "Parameter {name} (shape={shape}, dtype={dtype})"
        return s.format(name=self.name, shape=self.shape, dtype=self.dtype)

    # ------------------------------------------------------------ attributes
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        assert req in ["write", "add", "null"], \
            "grad_req must be one of 'write', 'add', or 'null', but got '%s'" % req
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [i.detach() for i in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The type of the parameter; setting it casts the parameter."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape of the parameter. An unknown dimension is 0, or -1 under
        NumPy shape semantics (``mx.np_shape(True)``)."""
        if self._shape is None:
            return None
        if is_np_shape():
            # a parameter is never zero-size: a 0 marks an unknown dimension
            return tuple(i if i != 0 else -1 for i in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if new_shape is not None:
            new_shape = tuple(new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        assert len(self._shape) == len(new_shape) and \
            all(j in (-1, 0, i) for i, j in zip(new_shape, self._shape)), \
            "Expected shape %s is incompatible with given shape %s." % (
                str(new_shape), str(self._shape))
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    @property
    def grad_stype(self):
        return self._grad_stype

    def _set_trainer(self, trainer):
        # the trainer of a sparse parameter cannot be replaced
        if self._stype != "default" and self._trainer and trainer and self._trainer is not trainer:
            raise RuntimeError(
                "Failed to set the trainer for Parameter '%s' because it was already set. "
                "More than one trainers for a %s Parameter is not supported."
                % (self.name, self._stype))
        self._trainer = trainer

    # ------------------------------------------------------------ access
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = context.current_context()
            ctx_list = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(ctx_list):
                idx = ctx_list[ctx.device_id]
                if idx is not None:
                    return arr_list[idx]
            raise RuntimeError(
                "Parameter '%s' was not initialized on context %s. "
                "It was only initialized on %s." % (self.name, str(ctx), str(self._ctx_list)))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers." % (self.name))
        raise RuntimeError(
            "Parameter '%s' has not been initialized. Note that "
            "you should initialize parameters and create Trainer "
            "with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of "
            "nested child Blocks" % (self.name))

    def _get_row_sparse(self, arr_list, ctx, row_id):
        """The row_sparse data on ``ctx`` (or all), holding rows ``row_id``
        pulled from the trainer's store."""
        if not isinstance(row_id, NDArray):
            raise TypeError("row_id must have NDArray type, but %s is given" % (type(row_id)))
        if not self._trainer:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no "
                               "Trainer is created with it." % self.name)
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialize by loading from ``data``."""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise ValueError("dtype_source must be 'current' or 'saved', got %r"
                             % (dtype_source,))
        if not isinstance(data, NDArray):
            raise ParameterFileError(
                "Failed loading Parameter '%s' from saved params: expected an array, got %s"
                % (self.name, "a 'none' array" if data is None else type(data).__name__))
        if self.shape:
            unknown_dim_size = -1 if is_np_shape() else 0
            if not (len(self.shape) == len(data.shape) and all(
                    i in (unknown_dim_size, j) for i, j in zip(self.shape, data.shape))):
                raise ParameterFileError(
                    "Failed loading Parameter '%s' from saved params: "
                    "shape incompatible expected %s vs saved %s" % (
                        self.name, str(self.shape), str(data.shape)))
            self.shape = tuple(i if i != unknown_dim_size else j
                               for i, j in zip(self.shape, data.shape))
        elif self._shape is None:
            self._shape = tuple(data.shape)
        if self.dtype:
            if cast_dtype and np.dtype(self.dtype).type != data.dtype:
                if dtype_source == "current":
                    data = data.astype(self.dtype, copy=False)
                elif dtype_source == "saved":
                    self.dtype = data.dtype
            elif np.dtype(self.dtype).type != data.dtype:
                raise ParameterFileError(
                    "Failed loading Parameter '%s' from saved params: "
                    "dtype incompatible expected %s vs saved %s. "
                    "Set cast_dtype=True to cast the dtype of saved params." % (
                        self.name, str(self.dtype), str(data.dtype)))
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        elif is_np_array() and self._stype == "default":
            data = data.as_np_ndarray()     # MXNet loads with npx.load under NumPy semantics
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                assert ctx is None or set(ctx) == set(self._deferred_init[1]), \
                    "Failed to load Parameter '%s' on %s because it was " \
                    "previous initialized on %s." % (self.name, str(ctx), str(self.list_ctx()))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            assert ctx is None or set(ctx) == set(self.list_ctx()), \
                "Failed to load Parameter '%s' on %s because it was " \
                "previous initialized on %s." % (self.name, str(ctx), str(self.list_ctx()))
            self.set_data(data)
        self._deferred_init = ()

    def _finish_deferred_init(self):
        """Finish a deferred initialization (the shape is now known)."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        assert shape_is_known(self.shape), \
            "Cannot initialize Parameter '%s' because it has " \
            "invalid shape: %s. Please specify in_units, " \
            "in_channels, etc for `Block`s." % (self.name, str(self.shape))
        with autograd.pause():
            if data is None:
                data = _zeros(self.shape, self.dtype, context.cpu(), self._stype)
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Set the data (one copy per context) and the gradients."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, ctx in enumerate(self._ctx_list):
            dev_list = self._ctx_map[ctx.device_typeid & 1]
            while len(dev_list) <= ctx.device_id:
                dev_list.append(None)
            dev_list[ctx.device_id] = i
        with autograd.pause():
            self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        """Allocate the gradient buffers and mark the data as variables."""
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [_zeros(i.shape, i.dtype, i.context, self._grad_stype) for i in self._data]
        _mark(self._check_and_get(self._data, list), self._grad, self.grad_req)

    def _reduce(self):
        """The value averaged over the contexts, on the CPU."""
        ctx = context.cpu()
        if self._stype != "default":
            # every row of a row_sparse parameter, from the trainer's store
            all_row_ids = ndarray.arange(0, self.shape[0], dtype="int64", ctx=ctx)
            data = ndarray.zeros(self.shape, stype="row_sparse", ctx=ctx)
            self._trainer._row_sparse_pull(self, data, all_row_ids, full_idx=True)
            return data
        block = self.list_data()
        with autograd.pause():
            if len(block) > 1:
                total = None
                for w in block:
                    w = w.copyto(ctx)
                    total = w if total is None else total + w
                return total / len(block)
            return self.data().copyto(ctx)

    # ------------------------------------------------------------ API
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Initialize the value and gradient arrays, one copy per context of
        ``ctx`` (default: the current context). ``init`` overrides
        ``self.init``, which overrides ``default_init``. With an unknown
        shape and ``allow_deferred_init`` the work waits for the first
        forward."""
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. "
                          "Set force_reinit=True to re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has "
                             "invalid shape: %s." % (self.name, str(self.shape)))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def reset_ctx(self, ctx):
        """Move the parameter to other context(s) (one copy per context)."""
        if ctx is None:
            ctx = [context.current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it "
                             "has not been initialized." % self.name)

    def set_data(self, data):
        """Set this parameter's value on all contexts."""
        self.shape = data.shape
        if self._data is None:
            assert self._deferred_init, "Parameter '%s' has not been initialized" % self.name
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and trainer._kv_initialized and trainer._update_on_kvstore:
            if self not in trainer._params_to_init:
                trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._check_and_get(self._data, list):
                if isinstance(data, NDArray):
                    arr[:] = data.as_in_context(arr.context)
                else:
                    arr[:] = data

    def row_sparse_data(self, row_id):
        """The copy of a row_sparse parameter on ``row_id``'s context, holding
        (only) the rows ``row_id``, pulled from the trainer's store."""
        if self._stype != "row_sparse":
            raise RuntimeError("Cannot return a copy of Parameter %s via row_sparse_data() "
                               "because its storage type is %s. Please use data() instead."
                               % (self.name, self._stype))
        return self._get_row_sparse(self._data, row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """The copies of a row_sparse parameter on all contexts, holding the
        rows ``row_id``."""
        if self._stype != "row_sparse":
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_row_sparse_data() because its storage type is %s. Please "
                               "use data() instead." % (self.name, self._stype))
        return self._get_row_sparse(self._data, list, row_id)

    def data(self, ctx=None):
        """The copy of this parameter on ``ctx`` (default: the only one, or
        the one on the current context); sparse parameters use row_sparse_data()."""
        if self._stype != "default":
            raise RuntimeError("Cannot return a copy of Parameter '%s' on ctx %s via data() "
                               "because its storage type is %s. Please use row_sparse_data() "
                               "instead." % (self.name, str(ctx), self._stype))
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The copies on all contexts, in initialization order."""
        if self._stype != "default":
            raise RuntimeError("Cannot return copies of Parameter '%s' on all contexts via "
                               "list_data() because its storage type is %s. Please use "
                               "row_sparse_data() instead." % (self.name, self._stype))
        return self._check_and_get(self._data, list)

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' "
                               "because grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on all contexts."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' "
                               "because grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter is initialized on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    def zero_grad(self):
        """Set the gradient buffers on all contexts to 0."""
        if self._grad is None:
            return
        with autograd.pause():
            for i in self._grad:
                i[:] = 0

    def var(self):
        """A Symbol variable for this parameter (with its shape, dtype,
        lr_mult, wd_mult and init as attributes)."""
        if self._var is None:
            from .. import symbol
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult,
                                   init=self.init, stype=self._stype)
            if is_np_array():
                self._var = self._var.as_np_ndarray()
        return self._var

    def cast(self, dtype):
        """Cast the value and gradient to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [i.astype(dtype) for i in self._data]
            if self._grad is None:
                return
            self._grad = [i.astype(dtype) for i in self._grad]
            _mark(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A parameter that autograd and Trainer leave alone (``grad_req`` is
    always 'null'); ``set_data`` still changes it.

    >>> const = mx.gluon.Constant('const', [[1, 2], [3, 4]])
    """

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = ndarray.array(value)
        self.value = value

        class Init(initializer.Initializer):
            def _init_weight(self, _, arr):
                value.copyto(arr)
        init_name = "Constant_{}_{}".format(name, id(self))
        initializer.alias(init_name)(Init)
        super(Constant, self).__init__(name, grad_req="null", shape=value.shape,
                                       dtype=value.dtype, init=init_name)

    def __repr__(self):
        s = "Constant {name} (shape={shape}, dtype={dtype})"
        return s.format(name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn('Constant parameter "{}" does not support '
                          'grad_req other than "null", and new value "{}" '
                          'is ignored.'.format(self.name, req))


# ----------------------------------------------------------- ParameterDict


class ParameterDict(object):
    """An ordered dict of Parameters whose names start with ``prefix``;
    ``get`` finds (or creates) ``prefix + name``, first in ``shared``."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        s = "{name}(\n{content}\n)"
        name = self._prefix + " " if self._prefix else ""
        return s.format(name=name, content="\n".join([_indent("  {0}".format(v), 2)
                                                      for v in self.values()]))

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """The prefix prepended to the names of Parameters created by ``get``."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name``: from this dict, else from the
        shared dict, else a new one made with ``kwargs``. For an existing
        one, ``kwargs`` must agree with it (unknown 0 dimensions of a shape
        are filled in)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
        else:
            for k, v in kwargs.items():
                if hasattr(param, k) and getattr(param, k) is not None:
                    existing = getattr(param, k)
                    if k == "shape" and len(v) == len(existing):
                        inferred_shape = []
                        matched = True
                        for dim1, dim2 in zip(v, existing):
                            if dim1 != dim2 and dim1 > 0 and dim2 > 0:
                                matched = False
                                break
                            elif dim1 == dim2:
                                inferred_shape.append(dim1)
                            elif dim1 in (0, -1):
                                inferred_shape.append(dim2)
                            else:
                                inferred_shape.append(dim1)
                        if matched:
                            param._shape = tuple(inferred_shape)
                            continue
                    elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                        continue
                    assert v is None or v == existing, \
                        "Cannot retrieve Parameter '%s' because desired attribute " \
                        "does not match with stored for attribute '%s': " \
                        "desired '%s' vs stored '%s'." % (name, k, str(v), str(getattr(param, k)))
                else:
                    setattr(param, k, v)
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created with ``value`` if needed."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError("No constant named '{}'. Please specify value "
                               "if you want to create a new constant.".format(name))
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            assert isinstance(param, Constant), \
                "Parameter '{}' already exists but it is not a constant.".format(name)
            if isinstance(value, NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            assert param.shape == value.shape and \
                (param.value.asnumpy() == value).all(), \
                "Constant '{}' already exists but it's value doesn't match new value".format(name)
        return param

    def update(self, other):
        """Copy all Parameters of ``other`` into this dict."""
        for k, v in other.items():
            if k in self._params:
                assert self._params[k] is v, \
                    "Cannot update self with other because they have different " \
                    "Parameters with the same name '%s'" % k
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialize every Parameter (``init`` is the default initializer
        for those without their own)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for _, v in self.items():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0: one ``reset_arrays`` op per context
        for the dense gradients, ``zeros_like(out=)`` for row_sparse ones (as
        MXNet 1.9.1)."""
        arrays = OrderedDict()
        with autograd.pause():
            for p in self.values():
                if p.grad_req == "null" or p._grad is None:
                    continue
                for g in p.list_grad():
                    if g.stype == "row_sparse":
                        ndarray.zeros_like(g, out=g)
                    else:
                        arrays.setdefault(g.context, []).append(g)
            if not arrays:
                return
            if is_np_array():
                for arr in arrays.values():
                    for ele in arr:
                        ele[()] = 0
            else:
                for arr in arrays.values():
                    ndarray.reset_arrays(*arr, num_arrays=len(arr))

    def reset_ctx(self, ctx):
        """Move every Parameter to other context(s)."""
        for i in self.values():
            i.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts any Parameter is initialized on."""
        s = set()
        for i in self.values():
            s.update(i.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set an attribute of every Parameter, e.g. ``setattr('grad_req', 'null')``."""
        for i in self.values():
            setattr(i, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the values (averaged over contexts) to ``filename`` in MXNet's
        format, names without ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            weight = param._reduce()
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    "Prefix '%s' is to be striped before saving, but Parameter's "
                    "name '%s' does not start with '%s'. "
                    "this may be due to your Block shares parameters from other "
                    "Blocks or you forgot to use 'with name_scope()' when creating "
                    "child blocks." % (strip_prefix, param.name, strip_prefix))
            arg_dict[param.name[len(strip_prefix):]] = weight
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by ``save`` (or an MXNet ``.params`` file, whose
        ``arg:``/``aux:`` prefixes are dropped); names get ``restore_prefix``."""
        if restore_prefix:
            for name in self.keys():
                assert name.startswith(restore_prefix), \
                    "restore_prefix is '%s' but Parameters name '%s' does not start " \
                    "with '%s'." % (restore_prefix, name, restore_prefix)
        ndarray_load = ndarray.load(filename)
        self.load_dict(ndarray_load, ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load values from a dict of NDArrays (names may carry ``arg:``/``aux:``)."""
        lprefix = len(restore_prefix)
        error_str = "file: %s" % (filename) if filename else "param_dict"
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith("arg:") or k.startswith("aux:") else k, v)
                      for k, v in param_dict.items()]
        elif isinstance(param_dict, list) and (not param_dict or isinstance(param_dict[0], NDArray)
                                               or param_dict[0] is None):
            if param_dict:
                raise ParameterFileError(
                    "%s holds %d arrays without names; saved parameters are named arrays"
                    % (error_str, len(param_dict)))
            loaded = []
        else:
            loaded = param_dict
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ParameterFileError(
                        "Parameter '%s' is missing in %s, which contains parameters: %s. "
                        "Please make sure source and target networks have the same prefix." % (
                            name[lprefix:], error_str, _brief_print_list(arg_dict.keys())))
        for name in arg_dict:
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterFileError(
                        "Parameter '%s' loaded from %s is not present in ParameterDict, "
                        "choices are: %s. Set ignore_extra to True to ignore. "
                        "Please make sure source and target networks have the same prefix." % (
                            name[lprefix:], error_str, _brief_print_list(self._params.keys())))
                continue
            if arg_dict[name] is None:
                raise ParameterFileError(
                    "Parameter '%s' in %s is stored as a 'none' array, not a value"
                    % (name[lprefix:], error_str))
            self[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                  dtype_source=dtype_source)

    def _select(self, select):
        """A new dict with the Parameters whose names match regex ``select``."""
        ret = ParameterDict(self._prefix)
        pattern = re.compile(select)
        ret.update({k: v for k, v in self.items() if pattern.match(k)})
        return ret


def __getattr__(name):
    if name == "tensor_types":
        return _tensor_types()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
