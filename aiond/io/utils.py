"""Helpers shared by the data iterators (MXNet 1.9.1 ``mxnet.io.utils``)."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ..base import MXNetError
from ..ndarray import NDArray, _invoke, array
from ..ndarray.ndarray import _cached
from ..ndarray.ndarray import view_of as _view
from ..ndarray.sparse import array as sparse_array  # noqa: F401  (MXNet: mx.io.utils.sparse_array)

__all__ = ["_init_data", "_has_instance", "_getdata_by_idx", "_slice_along_batch_axis"]


def _init_data(data, allow_empty, default_name):
    """Put ``data`` in canonical form: a list of ``(name, NDArray)`` sorted by name.

    A single array is named ``default_name``; a list of several is named
    ``_0_<default_name>``, ``_1_<default_name>``, ...; a dict keeps its keys.
    Anything that is not an NDArray is copied into one (float32, as MXNet).
    """
    assert (data is not None) or allow_empty
    if data is None:
        data = []

    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty:
            assert len(data) > 0
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([('_%d_%s' % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, h5py.Dataset "
                        "a list of them or dict with them as values")
    out = OrderedDict()
    for k, v in data.items():
        if not isinstance(v, NDArray):
            try:
                v = array(v)
            except Exception:
                raise TypeError(("Invalid type '%s' for %s, " % (type(v), k))
                                + "should be NDArray, numpy.ndarray or h5py.Dataset") from None
        out[k] = v
    return list(sorted(out.items()))


def _has_instance(data, dtype):
    """Whether any array of ``data`` (a ``_init_data`` list) is a ``dtype``."""
    for _, arr in data:
        if isinstance(arr, dtype):
            return True
    return False


def _getdata_by_idx(data, idx):
    """Reorder every array of ``data`` along axis 0 by ``idx``.

    As MXNet, the result is rebuilt with ``nd.array`` from numpy, so it is
    float32 whatever the source dtype was.
    """
    out = []
    rows = None
    for k, v in data:
        if v.stype == "csr":        # rows of a csr array stay csr (via scipy, as MXNet)
            from ..ndarray.sparse import array as sparse_array
            out.append((k, sparse_array(v.asscipy()[idx], v.context)))
        elif isinstance(v, NDArray) and v.ndim:
            # one gather on the engine (asnumpy, fancy indexing and array() made
            # three copies of the whole dataset on the calling thread per epoch)
            from .. import ndarray as nd
            if rows is None or rows.context != v.context:
                rows = array(np.asarray(idx, dtype=np.int64), v.context, dtype=np.int64)
            r = nd.take(v, rows, axis=0)
            out.append((k, r if r.dtype == np.float32 else r.astype(np.float32)))
        else:
            out.append((k, array(v.asnumpy()[idx], v.context)))
    return out


def _slice_along_batch_axis(data, s, batch_axis):
    """A copy of ``data[s]`` along ``batch_axis``."""
    start, stop = s.start, s.stop
    if (batch_axis == 0 and type(data) is NDArray and not data._sparse and data._shape
            and 0 <= start < stop <= data._shape[0]):
        # rows of a dense array: a copy of their view (one op, no attrs to
        # parse nor shape rule to run: an iterator makes two of these a batch)
        rows = data._shape[1:]
        first = (data._off or 0) + start * math.prod(rows)
        return _invoke.invoke(_cached("_copy"), [_view(data, (stop - start,) + rows, first)], {})
    from .. import ndarray as nd
    return nd.slice_axis(data, axis=batch_axis, begin=start, end=stop)


def decode_image(data, flag=1, to_rgb=1):
    """Encoded image bytes decoded with Pillow to a C-contiguous uint8 numpy
    array, (H, W, 3) (RGB, or BGR with ``to_rgb=0``) or (H, W, 1) with
    ``flag=0``: what mx.image.imdecode and mx.io.ImageRecordIter decode with."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("mx.image.imdecode/imread and mx.io.ImageRecordIter need Pillow to "
                          "decode images (pip install Pillow); MXNet used OpenCV here") from None
    import io as _pyio
    if not data:
        raise MXNetError("imdecode: input cannot be an empty buffer")
    try:
        img = Image.open(_pyio.BytesIO(data))
        img.load()
    except Exception as e:  # Pillow raises several types for bad data
        raise MXNetError("Decoding failed. Invalid image file. (%s)" % e) from None
    if int(flag) == 0:
        arr = np.asarray(img.convert("L"), dtype=np.uint8)[:, :, None]
    else:
        arr = np.asarray(img.convert("RGB"), dtype=np.uint8)
        if not to_rgb:
            arr = arr[:, :, ::-1]
    return np.ascontiguousarray(arr)
