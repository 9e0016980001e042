"""MXNet's module-level Symbol functions that wrap an internal op with Python
logic (``mx.sym.split_v2``, ``mx.sym.histogram``), as in MXNet's symbol.py."""
from __future__ import annotations

import numpy as np

__all__ = ["split_v2", "histogram"]


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split a Symbol into sub-symbols along ``axis``: ``indices_or_sections``
    is a number of equal sections or a tuple of split indices."""
    from . import _internal
    indices = []
    sections = 0
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError('indices_or_sections must either int or tuple of ints')
    return _internal._split_v2(ary, indices, axis, squeeze_axis, sections)


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002 - MXNet's name
    """Histogram of ``a``: ``bins`` is a number of equal bins over ``range``
    or a Symbol of bin edges; the result has outputs (counts, edges)."""
    from . import _internal
    from .symbol import Symbol
    if isinstance(bins, Symbol):
        return _internal._histogram(data=a, bins=bins, **kwargs)
    if isinstance(bins, (int, np.integer)):
        if range is None:
            raise ValueError("null range is not supported in symbol mode")
        return _internal._histogram(data=a, bin_cnt=bins, range=range, **kwargs)
    raise ValueError("bins argument should be either an integer or an NDArray")
