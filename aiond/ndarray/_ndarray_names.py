"""Names MXNet 1.9.1 keeps in ``mxnet.ndarray.ndarray`` (and ``mxnet.ndarray``)
that aiond defines elsewhere: the dtype and grad_req code tables, the
elementwise helper functions, the indexing helpers third-party code calls,
dlpack conversion; also ``mx.nd.sparse._contrib_round_ste`` /
``_contrib_sign_ste``. Loaded on the first lookup of one of them (the
NDArray methods MXNet has there are in ``_ndarray_methods``)."""
from __future__ import annotations

import numpy as np

from ..ops import registry as _reg
from . import _functions, dlpack, ndarray as _nd_module
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


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """DEPRECATED, use mx.img instead. Decode an image (bytes) to a
    (channels, height, width) array in the decoder's channel order (BGR, as
    OpenCV gives it), clipped to ``clip_rect`` = (x0, y0, x1, y1) (all of it
    when y1 == y0), minus ``mean`` ((channels, h, w)) when given; float32, or
    mean's dtype. With ``out`` the result is written there: a 3-D
    ``out`` whole, a 4-D one at ``out[index]``.

    Parameters
    ----------
    str_img : str
        Binary image data
    clip_rect : iterable of 4 int
        Clip decoded image to rectangle (x0, y0, x1, y1).
    out : NDArray
        Output buffer. Can be 3 dimensional (c, h, w) or 4 dimensional (n, c, h, w).
    index : int
        Output decoded image to i-th slice of 4 dimensional buffer.
    channels : int
        Number of channels to output. Decode to grey scale when channels = 1.
    mean : NDArray
        Subtract mean from decode image before outputing.
    """
    import io as _pyio
    from ..base import MXNetError
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("mx.nd.imdecode needs Pillow to decode images (pip install Pillow); "
                          "MXNet used OpenCV here") from None
    if isinstance(str_img, str):
        str_img = str_img.encode("latin-1")
    try:
        img = Image.open(_pyio.BytesIO(bytes(str_img)))
        img.load()
    except Exception as e:  # noqa: BLE001 - Pillow raises several types for bad data
        raise MXNetError("imdecode: failed to decode the image (%s)" % e) from None
    if channels == 1:
        arr = np.asarray(img.convert("L"), dtype=np.uint8)[:, :, None]
    elif img.mode in ("L", "1", "I", "F", "I;16") and "transparency" not in img.info:
        arr = np.asarray(img.convert("L"), dtype=np.uint8)[:, :, None]   # stays 1 channel
    else:
        has_alpha = img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info
        rgb = np.asarray(img.convert("RGBA" if has_alpha else "RGB"), dtype=np.uint8)
        arr = np.concatenate([rgb[:, :, 2::-1], rgb[:, :, 3:]], axis=2)   # BGR(A)
    if channels > arr.shape[2]:
        raise MXNetError("imdecode: %d channels requested, the image has %d"
                         % (channels, arr.shape[2]))
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, arr.shape[1], arr.shape[0]
    if not (x1 <= arr.shape[1] and y1 <= arr.shape[0]):
        raise MXNetError("imdecode: clip_rect %s exceeds the %dx%d image"
                         % (tuple(clip_rect), arr.shape[1], arr.shape[0]))
    res = arr[y0:y1, x0:x1, :channels].transpose(2, 0, 1)
    dtype = np.float32 if mean is None else mean.dtype
    res = res.astype(dtype)
    if mean is not None:
        if tuple(mean.shape) != res.shape:
            raise MXNetError("imdecode: mean has shape %s, the clipped image is %s"
                             % (tuple(mean.shape), res.shape))
        res = res - mean.asnumpy()
    if out is None:
        return _nd_module.array(res, dtype=dtype)
    if out.ndim == 3:
        out[:] = res
    elif out.ndim == 4:
        out[index] = res
    else:
        raise MXNetError("imdecode: out must be 3-D (c, h, w) or 4-D (n, c, h, w), got shape %s"
                         % (tuple(out.shape),))
    return out


def _new_empty_handle():
    """Returns a new empty handle, to hold a result: aiond arrays have no C
    handles, and ``NDArray(None)`` is the new empty array, so the empty
    handle is ``None`` (``NDArray(_new_empty_handle())`` works as in MXNet)."""
    return None


def _ndarray_cls(handle, writable=True, stype=-1):
    """The array a handle stands for, as MXNet's ``_ndarray_cls``: aiond's
    "handle" is the array itself (returned as the NDArray, CSRNDArray or
    RowSparseNDArray it is), or None for a new empty dense array. ``stype``
    (MXNet's storage type id, -1 undefined) must match the array's."""
    from ..base import MXNetError
    from .ndarray import _STORAGE_TYPE_ID_TO_STR
    want = _STORAGE_TYPE_ID_TO_STR.get(stype, stype)
    if handle is None:
        if want not in ("undefined", "default"):
            raise MXNetError("_ndarray_cls: an empty %s array needs a shape; create it with "
                             "mx.nd.sparse.zeros(%r, shape)" % (want, want))
        return NDArray(None, writable)
    if not isinstance(handle, NDArray):
        raise TypeError("_ndarray_cls: aiond arrays have no C handles; expected an NDArray "
                        "or None, got %s" % type(handle).__name__)
    if want not in ("undefined", handle.stype):
        raise MXNetError("_ndarray_cls: the array's storage type is %s, not %s"
                         % (handle.stype, want))
    return handle


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
              indexing_key_expand_implicit_axes=indexing_key_expand_implicit_axes,
              imdecode=imdecode, _new_empty_handle=_new_empty_handle)
for _name, _obj in _NAMES.items():
    if not hasattr(_nd_module, _name):
        setattr(_nd_module, _name, _obj)



def install_sparse(sparse):
    """MXNet's private names in ``mxnet.ndarray.sparse`` (called as it loads)."""
    if not hasattr(sparse, "_ndarray_cls"):
        sparse._ndarray_cls = _ndarray_cls
    for name in ("_contrib_round_ste", "_contrib_sign_ste"):
        if not hasattr(sparse, name):
            fn = make_function(_reg.get(name), name)
            fn.__module__ = "aiond.ndarray.sparse"
            setattr(sparse, name, fn)
