"""NumPy-interface operators that run NumPy itself, as Custom operators
(MXNet's ``mxnet.numpy_op_fallback``): ``empty_like_fallback``,
``resize_fallback``, ``unravel_index_fallback`` and ``mvn_fallback``
(``np.random.multivariate_normal``). :func:`register` makes such an op callable
as ``mx.nd.np._internal.<name>`` and ``mx.sym.np._internal.<name>``, so it
works imperatively and in graphs. None of them has a gradient."""
from __future__ import annotations

import ast
import functools

import numpy as np

from . import numpy as _mx_np
from . import operator
from .ndarray.numpy import _internal as _nd_npi
from .numpy.utils import _STR_2_DTYPE_
from .symbol.numpy import _internal as _sym_npi
from .util import np_array, use_np

__all__ = ["register", "EmptyLike", "EmptyLikeProp", "Resize", "ResizeProp", "Unravel_index",
           "Unravel_indexProp", "MultivariateNormal", "MultivariateNormalProp"]


def register(op_name, imperative=True, symbolic=True):
    """Register a CustomOpProp class as op ``op_name`` and expose it as
    ``mx.nd.np._internal.<op_name>`` (``imperative``) and
    ``mx.sym.np._internal.<op_name>`` (``symbolic``)."""
    def _save_op(mod):
        if op_name in vars(mod):
            raise ValueError("Duplicate name {} found in module {}".format(op_name, str(mod)))
        setattr(mod, op_name, functools.partial(mod.Custom, op_type=op_name))

    def _register_helper(prop_cls):
        with np_array():
            prop_cls = operator.register(op_name)(prop_cls)
        if imperative:
            _save_op(_nd_npi)
        if symbolic:
            _save_op(_sym_npi)
        return prop_cls
    return _register_helper


def _value(v):
    """A Custom op attribute: its string form (as a graph stores it) or the value."""
    return ast.literal_eval(v) if isinstance(v, str) else v


def _no_grad(name):
    raise NotImplementedError("Operator {} does not support gradient computation".format(name))


@use_np
class EmptyLike(operator.CustomOp):
    """``np.empty_like`` by NumPy."""
    def __init__(self, dtype, order, subok, shape):
        super().__init__()
        self._dtype, self._order, self._subok, self._shape = dtype, order, subok, shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = np.empty_like(in_data[0].asnumpy(), dtype=self._dtype, order=self._order,
                            subok=self._subok)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype, ctx=in_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("empty_like")


@register("empty_like_fallback")
class EmptyLikeProp(operator.CustomOpProp):
    """Shapes and dtypes of ``empty_like_fallback``: the prototype's (or ``dtype``)."""
    def __init__(self, dtype=None, order="C", subok=False, shape=None):
        super().__init__(need_top_grad=True)
        self._dtype = None if dtype in (None, "None") else str(np.dtype(dtype))
        self._order = order
        self._subok = _value(subok)
        self._shape = _value(shape)

    def list_arguments(self):
        return ["prototype"]

    def infer_shape(self, in_shape):
        return (in_shape[0],), (in_shape[0],), ()

    def infer_type(self, in_type):
        if self._dtype is None:
            return (in_type[0],), (in_type[0],), ()
        return (in_type[0],), (_STR_2_DTYPE_[self._dtype],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return EmptyLike(self._dtype, self._order, self._subok, self._shape)


@use_np
class Resize(operator.CustomOp):
    """``np.resize`` by NumPy (the data repeated to fill ``new_shape``)."""
    def __init__(self, new_shape):
        super().__init__()
        self._new_shape = new_shape

    def forward(self, is_train, req, in_data, out_data, aux):
        out = np.resize(in_data[0].asnumpy(), self._new_shape)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype, ctx=out_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("resize")


@register("resize_fallback")
class ResizeProp(operator.CustomOpProp):
    """Shapes of ``resize_fallback``: ``new_shape``."""
    def __init__(self, new_shape):
        super().__init__(need_top_grad=True)
        self._new_shape = _value(new_shape)

    def list_arguments(self):
        return ["a"]

    def infer_shape(self, in_shape):
        out = (self._new_shape,) if np.isscalar(self._new_shape) else tuple(self._new_shape)
        return (in_shape[0],), (out,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Resize(self._new_shape)


@use_np
class Unravel_index(operator.CustomOp):  # noqa: N801 - MXNet's name
    """``np.unravel_index`` by NumPy: one row of coordinates per dimension."""
    def __init__(self, shape):
        super().__init__()
        self._shape = shape

    def forward(self, is_train, req, in_data, out_data, aux):
        idx = in_data[0].asnumpy()
        out = np.array(np.unravel_index(idx.astype(np.int64), self._shape))
        self.assign(out_data[0], req[0],
                    _mx_np.array(out, dtype=out_data[0].dtype, ctx=out_data[0].ctx))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("unravel_index")


@register("unravel_index_fallback")
class Unravel_indexProp(operator.CustomOpProp):  # noqa: N801 - MXNet's name
    """Shapes of ``unravel_index_fallback``: ``(len(shape),) + indices.shape``."""
    def __init__(self, shape):
        super().__init__(need_top_grad=True)
        self._shape = _value(shape)

    def list_arguments(self):
        return ["indices"]

    def infer_shape(self, in_shape):
        dims = (1,) if np.isscalar(self._shape) else (len(self._shape),)
        return (in_shape[0],), (dims + tuple(in_shape[0]),), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Unravel_index(self._shape)


@use_np
class MultivariateNormal(operator.CustomOp):
    """``np.random.multivariate_normal``: mean + cholesky(cov) @ standard normal
    draws from the context's generator."""
    def __init__(self, size=None):
        super().__init__()
        self._size = size

    def forward(self, is_train, req, in_data, out_data, aux):
        loc, cov = in_data[0], in_data[1]
        if cov.dtype == np.float16:
            scale = _mx_np.array(np.linalg.cholesky(cov.asnumpy().astype(np.float32))
                                 .astype(np.float16), dtype=np.float16, ctx=loc.ctx)
        else:
            scale = _mx_np.array(np.linalg.cholesky(cov.asnumpy()), dtype=cov.dtype,
                                 ctx=loc.ctx)
        noise = _mx_np.random.normal(size=out_data[0].shape, dtype=loc.dtype, ctx=loc.ctx)
        z = np.einsum("...jk,...j->...k", scale.asnumpy(), noise.asnumpy())
        out = loc + _mx_np.array(z, dtype=loc.dtype, ctx=loc.ctx)
        self.assign(out_data[0], req[0], out)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        _no_grad("random.multivariate_normal")


@register("mvn_fallback")
class MultivariateNormalProp(operator.CustomOpProp):
    """Shapes of ``mvn_fallback``: ``size + broadcast(mean, cov[..., 0]).shape``."""
    def __init__(self, size=None):
        super().__init__(need_top_grad=True)
        self._size = _value(size)

    def list_arguments(self):
        return ["mean", "cov"]

    def infer_shape(self, in_shape):
        loc_shape, cov_shape = tuple(in_shape[0]), tuple(in_shape[1])
        if len(loc_shape) < 1:
            raise ValueError("mean must be at least 1 dimensional")
        if len(cov_shape) < 2:
            raise ValueError("cov must be at least 2 dimensional")
        if cov_shape[-1] != cov_shape[-2]:
            raise ValueError("the last two dimensions of the parameter cov have to be the "
                             "same, whereas the shape of cov is {}".format(cov_shape))
        if cov_shape[-1] != loc_shape[-1]:
            raise ValueError("mean and cov must have same length. The shape of mean is {} but "
                             "the shape of cov is {}".format(loc_shape[-1:], cov_shape[-2:]))
        out_shape = np.broadcast_shapes(loc_shape, cov_shape[:-1])
        if self._size is not None:
            size = (self._size,) if np.isscalar(self._size) else tuple(self._size)
            out_shape = size + out_shape
        return in_shape, (out_shape,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return MultivariateNormal(self._size)
