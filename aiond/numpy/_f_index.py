"""Basic indexing as a front function (``a[key]`` for Symbols; arrays
have their own indexing in ``_indexing``): ints, slices, None and tuples of
them, through ``slice``, ``squeeze`` and ``expand_dims``, so a graph needs
no shapes."""
from __future__ import annotations

from numbers import Integral

from ._front import front


@front("_getitem")
def _getitem(F, a, key):
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        raise IndexError("a Symbol has no known number of dimensions: index it without "
                         "Ellipsis (...)")
    begin, end, step, drop, new = [], [], [], [], []
    pos = 0                 # axis of the input the next key entry indexes
    for k in key:
        if k is None:
            new.append(len(begin) - len(drop) + len(new))
            continue
        if isinstance(k, Integral) and not isinstance(k, bool):
            k = int(k)
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(1)
            drop.append(pos)
        elif isinstance(k, slice):
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
        else:
            raise IndexError("only integers, slices and None index a Symbol, got %s"
                             % type(k).__name__)
        pos += 1
    out = a
    if begin:
        out = F.op("slice", [out], {"begin": tuple(begin), "end": tuple(end),
                                    "step": tuple(step)})
    if drop:
        out = F.op("squeeze", [out], {"axis": tuple(drop)})
    for ax in new:
        out = F.op("expand_dims", [out], {"axis": ax})
    return out
