"""Tracing a hybridized HybridBlock into its cached graph.

``hybridize()`` traces ``hybrid_forward(F=mx.sym, ...)`` once into a Symbol
and compiles it into a ``CachedOp`` (``aiond/graph/cached_op.py``): no
Python layer code runs per call, and autograd records each op as it would
record the imperative path, so gradients are the same.

While a graph is traced, ``tracing()`` tells layer code the shapes and
dtypes of the real inputs; ``shape_of``/``dtype_of`` answer for any
intermediate Symbol (used by losses that need a shape where MXNet used an
operator aiond lacks). A trace that asked is marked shape-dependent and is
re-traced for new input shapes.
"""
from __future__ import annotations

import threading

from ..base import MXNetError
from ..ndarray import NDArray

__all__ = ["CachedOp", "tracing", "shape_of", "dtype_of", "ndim_of"]


class _TraceState(threading.local):
    stack = None


_state = _TraceState()


class _Trace:
    """Known input shapes/dtypes of the graph being traced."""

    def __init__(self, shapes, dtypes):
        self.shapes = dict(shapes)
        self.dtypes = dict(dtypes)
        self.shape_dependent = False

    def __enter__(self):
        if _state.stack is None:
            _state.stack = []
        _state.stack.append(self)
        return self

    def __exit__(self, *exc):
        _state.stack.pop()


def tracing(shapes=None, dtypes=None):
    """``with tracing({'data': (2, 3)}, {'data': np.float32}) as t:`` while
    building a graph; ``t.shape_dependent`` tells whether layer code used a
    shape."""
    return _Trace(shapes or {}, dtypes or {})


def _current():
    st = _state.stack
    return st[-1] if st else None


def _full(s):
    return bool(s) and all(d > 0 for d in s)


def shape_of(x):
    """The shape of NDArray or Symbol ``x`` (a Symbol's is inferred from the
    inputs of the graph being traced, or its variables' ``__shape__``);
    None when unknown."""
    if isinstance(x, NDArray):
        return x.shape
    tr = _current()
    known = dict(tr.shapes) if tr is not None else {}
    try:
        args = set(x.list_arguments()) | set(x.list_auxiliary_states())
        _, out, _ = x.infer_shape_partial(**{k: v for k, v in known.items() if k in args})
    except MXNetError:
        return None
    if not out or not out[0] or not _full(tuple(out[0])):
        return None
    if tr is not None:
        tr.shape_dependent = True
    return tuple(out[0])


def ndim_of(x):
    s = shape_of(x)
    return None if s is None else len(s)


def dtype_of(x):
    """The dtype of NDArray or Symbol ``x``; None when unknown."""
    if isinstance(x, NDArray):
        return x.dtype
    tr = _current()
    known = dict(tr.dtypes) if tr is not None else {}
    try:
        args = set(x.list_arguments()) | set(x.list_auxiliary_states())
        _, out, _ = x.infer_type_partial(**{k: v for k, v in known.items() if k in args})
    except MXNetError:
        return None
    if not out or out[0] is None:
        return None
    return out[0]


# ------------------------------------------------------------------ CachedOp
# The cached graph itself lives in the graph layer; gluon's modules name it here.
from ..graph.cached_op import CachedOp  # noqa: E402,F401


def _install_symbol_hooks():
    # the NumPy front functions on Symbols may ask a traced input's shape/dtype
    from ..symbol.numpy._symbol import SYM
    SYM.shape_hook = shape_of
    SYM.dtype_hook = dtype_of


_install_symbol_hooks()
