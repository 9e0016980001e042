"""``mx.nd.CachedOp``: a Symbol graph compiled once and replayed on NDArrays
(MXNet 1.9.1's ``CachedOp(sym, flags=())``): one output comes back as an
NDArray, several as a list; ``out=`` receives the results in place."""
from __future__ import annotations

__all__ = ["CachedOp"]


class CachedOp:
    """Replay ``sym`` on NDArrays given in ``sym.list_inputs()`` order."""

    def __init__(self, sym, flags=()):
        # the graph layer's CachedOp, shared with hybridized Gluon blocks: a
        # declared upward import (tests/test_layers.py), as a Symbol argument
        # means the layers above are loaded already
        from ..graph.cached_op import CachedOp as _Replay
        self._replay = _Replay(sym, flags)

    def __call__(self, *args, **kwargs):
        out = kwargs.pop("out", None)
        if kwargs:
            raise TypeError("CachedOp got unexpected keyword arguments %s" % sorted(kwargs))
        res = self._replay(*args)
        if out is not None:
            outs = out if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(res):
                raise ValueError("CachedOp: out= has %d arrays but the graph has %d outputs"
                                 % (len(outs), len(res)))
            for o, r in zip(outs, res):
                r.copyto(o)
            return out
        return res[0] if len(res) == 1 else res
