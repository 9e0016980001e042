"""Names MXNet 1.9.1 keeps in ``mxnet.ndarray.ndarray`` (and ``mxnet.ndarray``)
that aiond defines elsewhere: the dtype and grad_req code tables, the
elementwise helper functions, the indexing helpers third-party code calls,
dlpack conversion, and the NDArray methods ``depth_to_space``,
``space_to_depth``, ``slice_assign`` and ``slice_assign_scalar``. Also
``mx.nd.sparse._contrib_round_ste`` / ``_contrib_sign_ste``."""
from __future__ import annotations

import numpy as np

from ..ops import registry as _reg
from . import _functions, dlpack, ndarray as _nd_module, sparse as _sparse
from ._namespace import make_function
from .ndarray import NDArray

# MXNet's dtype codes (mshadow's type flags) and grad_req codes (OpReqType)
_DTYPE_NP_TO_MX = {
    None: -1, np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3, np.int32: 4,
    np.int8: 5, np.int64: 6, np.bool_: 7, np.dtype([("bfloat16", np.uint16)]): 12,
}
_DTYPE_MX_TO_NP = {v: k for k, v in _DTYPE_NP_TO_MX.items()}
_GRAD_REQ_MAP = {"null": 0, "write": 1, "add": 3}

_NDARRAY_UNSUPPORTED_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1
_NDARRAY_EMPTY_TUPLE_INDEXING = 2
_NDARRAY_NO_ZERO_DIM_BOOL_ARRAY = -1
_NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE = 0
_NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE = 1

_integer_types = (int, np.integer)


def get_indexing_dispatch_code(key):
    """Returns a dispatch code for calling basic or advanced indexing functions:
    0 basic (ints, slices, None), 1 advanced (arrays, lists, tuples, ranges),
    2 an empty tuple inside the key."""
    if not isinstance(key, tuple):
        raise TypeError("get_indexing_dispatch_code: key must be a tuple, got %s"
                        % type(key).__name__)
    for idx in key:
        if isinstance(idx, (NDArray, np.ndarray, list, tuple, range)):
            if isinstance(idx, tuple) and len(idx) == 0:
                return _NDARRAY_EMPTY_TUPLE_INDEXING
            return _NDARRAY_ADVANCED_INDEXING
        if not (isinstance(idx, (slice, _integer_types)) or idx is None):
            raise ValueError("NDArray does not support slicing with key {} of type {}."
                             .format(idx, type(idx)))
    return _NDARRAY_BASIC_INDEXING


def get_oshape_of_gather_nd_op(dshape, ishape):
    """The output shape of ``gather_nd`` for data shape ``dshape`` and index
    shape ``ishape``: ishape[1:] + dshape[ishape[0]:]."""
    if not (len(dshape) > 0 and len(ishape) > 0):
        raise ValueError("gather_nd needs non-scalar data and indices, got shapes %s and %s"
                         % (tuple(dshape), tuple(ishape)))
    oshape = list(ishape[1:])
    if ishape[0] < len(dshape):
        oshape.extend(dshape[ishape[0]:])
    return tuple(oshape)


def _check_boolean_array_dimension(array_shape, axis, bool_shape):
    for i, val in enumerate(bool_shape):
        if array_shape[axis + i] != val:
            raise IndexError("boolean index did not match indexed array along axis {}; size is "
                             "{} but corresponding boolean size is {}"
                             .format(axis + i, array_shape[axis + i], val))


def indexing_key_expand_implicit_axes(key, shape):
    """Make implicit axes explicit by adding ``slice(None)`` (for a missing or
    ``...`` part of the key) and turn boolean arrays into the integer arrays
    of their nonzero positions (numpy semantics only, as in MXNet). Returns
    ``(expanded_key, prepend)``; ``prepend`` is -1 without a 0-d boolean
    index, else 0 (it was False) or 1 (True).

    >>> indexing_key_expand_implicit_axes(np.s_[:2, None, 0, ...], (3, 4, 5))
    ((slice(None, 2, None), None, 0, slice(None, None, None)), -1)
    """
    from ..util import is_np_array
    if not isinstance(key, tuple):
        key = (key,)
    ell_idx = None
    num_none = 0
    nonell_key = []
    prepend = _NDARRAY_NO_ZERO_DIM_BOOL_ARRAY
    axis = 0
    for i, idx in enumerate(key):
        if idx is Ellipsis:
            if ell_idx is not None:
                raise IndexError("Cannot use more than one ellipsis (`...`) for indexing")
            ell_idx = i
            continue
        if isinstance(idx, bool):
            idx = _nd_module.array(idx, dtype=np.bool_)
        if idx is None:
            num_none += 1
        if isinstance(idx, NDArray) and idx.ndim == 0 and idx.dtype == np.bool_:
            prepend = (_NDARRAY_ZERO_DIM_BOOL_ARRAY_TRUE if idx.asscalar()
                       else _NDARRAY_ZERO_DIM_BOOL_ARRAY_FALSE)
        elif isinstance(idx, NDArray) and idx.ndim == 0:
            nonell_key.append(int(idx.asscalar()))
            axis += 1
        elif isinstance(idx, NDArray) and idx.dtype == np.bool_:
            _check_boolean_array_dimension(shape, axis, idx.shape)
            if not is_np_array():
                raise ValueError("Cannot perform boolean indexing in legacy mode. Please "
                                 "activate numpy semantics by calling `npx.set_np()` in the "
                                 "global scope before calling this function.")
            nonell_key.extend(_nd_module.array(np.nonzero(idx.asnumpy())[k], dtype=np.int64)
                              for k in range(idx.ndim))
            axis += idx.ndim
        else:
            nonell_key.append(idx)
            axis += 1
    nonell_key = tuple(nonell_key)
    if ell_idx is None:
        ell_idx = len(nonell_key)       # "too few" indices: the ellipsis is at the end
    ell_ndim = len(shape) + num_none - len(nonell_key)
    return nonell_key[:ell_idx] + (slice(None),) * ell_ndim + nonell_key[ell_idx:], prepend


# ------------------------------------------------------------- NDArray methods
def _depth_to_space(self, *args, **kwargs):
    """Convenience fluent method for :py:func:`depth_to_space`."""
    return _nd_fn("depth_to_space")(self, *args, **kwargs)


def _space_to_depth(self, *args, **kwargs):
    """Convenience fluent method for :py:func:`space_to_depth`."""
    return _nd_fn("space_to_depth")(self, *args, **kwargs)


def _slice_assign_scalar(self, value, begin, end, step):
    """Assign the scalar ``value`` to the cropped subset ``[begin:end:step]``
    of this NDArray in place (cast to its dtype); returns this NDArray."""
    return _nd_fn("_slice_assign_scalar")(self, scalar=value, begin=begin, end=end, step=step,
                                          out=self)


def _slice_assign(self, rhs, begin, end, step):
    """Assign ``rhs`` (the cropped shape, same dtype and device) to the
    subset ``[begin:end:step]`` of this NDArray in place; returns this NDArray."""
    return _nd_fn("_slice_assign")(self, rhs, begin=begin, end=end, step=step, out=self)


_FNS = {}


def _nd_fn(name):
    fn = _FNS.get(name)
    if fn is None:
        fn = _FNS[name] = make_function(_reg.get(name), name)
    return fn


for _name, _meth in (("depth_to_space", _depth_to_space), ("space_to_depth", _space_to_depth),
                     ("slice_assign_scalar", _slice_assign_scalar),
                     ("slice_assign", _slice_assign)):
    _meth.__name__ = _name
    _meth.__qualname__ = "NDArray." + _name
    if not hasattr(NDArray, _name):
        setattr(NDArray, _name, _meth)

# module-level names of mxnet.ndarray.ndarray
_NAMES = {n: getattr(_functions, n) for n in (
    "add", "divide", "equal", "greater", "greater_equal", "histogram", "lesser",
    "lesser_equal", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
    "modulo", "moveaxis", "multiply", "not_equal", "onehot_encode", "power", "split_v2",
    "subtract", "true_divide")}
_NAMES.update({n: getattr(dlpack, n) for n in (
    "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write")})
_NAMES.update(_DTYPE_NP_TO_MX=_DTYPE_NP_TO_MX, _DTYPE_MX_TO_NP=_DTYPE_MX_TO_NP,
              _GRAD_REQ_MAP=_GRAD_REQ_MAP, get_indexing_dispatch_code=get_indexing_dispatch_code,
              get_oshape_of_gather_nd_op=get_oshape_of_gather_nd_op,
              indexing_key_expand_implicit_axes=indexing_key_expand_implicit_axes)
for _name, _obj in _NAMES.items():
    if not hasattr(_nd_module, _name):
        setattr(_nd_module, _name, _obj)

for _name in ("_contrib_round_ste", "_contrib_sign_ste"):
    if not hasattr(_sparse, _name):
        _fn = make_function(_reg.get(_name), _name)
        _fn.__module__ = "aiond.ndarray.sparse"
        setattr(_sparse, _name, _fn)
