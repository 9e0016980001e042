"""``a[..., mask, ...] = value`` for ``mx.np.ndarray`` through MXNet's
``_npi_boolean_mask_assign_scalar``/``_tensor`` ops (one op, in place, with a
gradient), for keys that are a boolean mask after leading full slices."""
from __future__ import annotations

import numpy as _np

from ..base import numeric_types
from ..ndarray.ndarray import NDArray


def mask_key(key):
    """(start_axis, mask) when ``key`` is ``(:, ..., :, mask[, :, ...])``, else None."""
    parts = key if isinstance(key, tuple) else (key,)
    start, mask = 0, None
    for i, k in enumerate(parts):
        is_mask = (isinstance(k, (NDArray, _np.ndarray)) and k.dtype == _np.bool_)
        if mask is None:
            if is_mask:
                mask, start = k, i
            elif not (isinstance(k, slice) and k == slice(None)):
                return None
        elif not (isinstance(k, slice) and k == slice(None)) and k is not Ellipsis:
            return None
    return None if mask is None else (start, mask)


def assign(arr, key, value):
    """Do ``arr[key] = value`` if ``key`` is a mask key; False if it is not one."""
    mk = mask_key(key)
    if mk is None:
        return False
    from .multiarray import array, invoke
    start, mask = mk
    if not isinstance(mask, NDArray):
        mask = array(mask, dtype=_np.bool_, ctx=arr.context)
    if isinstance(value, numeric_types) and not isinstance(value, _np.ndarray):
        invoke("_npi_boolean_mask_assign_scalar", [arr, mask],
               {"value": float(value), "start_axis": start}, arr)
        return True
    if not isinstance(value, NDArray):
        value = array(_np.asarray(value), dtype=arr.dtype, ctx=arr.context)
    invoke("_npi_boolean_mask_assign_tensor", [arr, mask, value], {"start_axis": start}, arr)
    return True
