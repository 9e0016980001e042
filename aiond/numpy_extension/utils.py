"""``npx.utils`` (``mxnet.numpy_extension.utils``): saving and loading
``mx.np`` arrays in MXNet's binary format (NumPy shapes kept: 0-d and
zero-size arrays round-trip)."""
from __future__ import annotations

from ..numpy.multiarray import _as_np

__all__ = ["save", "load"]


def save(file, arr):
    """Save an ndarray or a dict/list of them (MXNet's binary format, NumPy shapes)."""
    from ..ndarray.io import save as _save
    from ..util import np_shape
    with np_shape(True):
        _save(file, arr)


def load(file):
    """Load arrays saved by :func:`save` as mx.np.ndarrays."""
    from ..ndarray.io import load as _load
    from ..util import np_shape
    with np_shape(True):
        res = _load(file)
    if isinstance(res, dict):
        return {k: _as_np(v) for k, v in res.items()}
    return [_as_np(v) for v in res]
