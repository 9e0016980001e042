"""One definition per NumPy-interface function, for every front end.

A front function is written once, as ``impl(F, *args, **kwargs)`` against a
backend ``F``, and registered with :func:`front`. ``mx.np`` and ``mx.nd.np``
bind it to the NDArray backend :data:`ND`; ``mx.sym.np`` binds the same
``impl`` to the Symbol backend, so a HybridBlock's ``F.np.sum(x)`` handles
its arguments the same way imperatively and in a traced graph::

    @front("sum")
    def _sum(F, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
        return F.op("_npi_sum", [a], {"axis": axis, "dtype": dtype,
                                      "keepdims": keepdims, "initial": initial}, out)

Dtype and shape rules belong in the registry op (its ``infer`` rule), never
in the front function: a Symbol's dtype is not known when the graph is built.
A front function may branch on ``F.shape(x)``/``F.dtype(x)`` only where the
answer is optional (they return None for a Symbol whose shape or dtype is
not known); it may call other front functions directly (``_sum(F, ...)``).

The backend interface:

- ``F.kind``: ``"nd"`` or ``"sym"``.
- ``F.op(name, inputs, attrs=None, out=None)``: registry op ``name`` on
  ``inputs`` (arrays of this backend) with parameters ``attrs`` (Python
  values; None means "not given"); one array, or a list when the op has
  several visible outputs. ``out`` is NDArray-only.
- ``F.isarr(x)``: ``x`` is an array of this backend.
- ``F.arr(x, like=None)``: ``x`` as an array of this backend (an NDArray
  backend turns lists, NumPy arrays and scalars into ``mx.np.ndarray``,
  float32 by default, on ``like``'s device; the Symbol backend accepts only
  Symbols and raises TypeError naming what it got).
- ``F.shape(x)``, ``F.dtype(x)``: known shape/dtype, or None.
- ``F.ctx(x)``: the device of array ``x`` (None for a Symbol).
- ``F.native``: the class ``F.arr`` returns (``mx.np.ndarray``, ``_Symbol``),
  for a fast path that skips ``F.arr`` on values already of it.
"""
from __future__ import annotations

import functools
import inspect

import numpy as _np

from ..base import numeric_types
from ..ndarray.ndarray import NDArray

__all__ = ["front", "table", "bind", "populate", "npi_function", "ND", "NAMESPACES"]

# the namespaces front functions live in, keyed as in MXNet's module paths
NAMESPACES = ("np", "np.linalg", "np.random", "np.fft", "npx", "npx.random", "npx.image")

_TABLE: dict = {ns: {} for ns in NAMESPACES}


def front(*names, ns="np"):
    """Register ``impl(F, ...)`` as the NumPy-interface function(s) ``names``
    (default: the impl's name without leading underscores) of namespace ``ns``."""
    if ns not in _TABLE:
        raise ValueError("unknown namespace %r; expected one of %s" % (ns, NAMESPACES))

    def deco(impl):
        for n in names or (impl.__name__.lstrip("_"),):
            _TABLE[ns][n] = impl
        return impl
    return deco


def table(ns="np"):
    """``{name: impl}`` of namespace ``ns``."""
    return _TABLE[ns]


def _signature(impl):
    try:
        sig = inspect.signature(impl)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())[1:]
    return sig.replace(parameters=params)


def bind(F, impl, name, module):
    """The user-facing function ``name`` of ``module``: ``impl`` with ``F`` bound."""
    def fn(*args, **kwargs):
        return impl(F, *args, **kwargs)
    functools.update_wrapper(fn, impl)
    del fn.__wrapped__
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    sig = _signature(impl)
    if sig is not None:
        fn.__signature__ = sig
    return fn


def populate(F, ns, namespace: dict, module: str, wrap=None):
    """Bind every front function of ``ns`` into ``namespace`` (a module's
    globals); ``wrap(fn)`` post-processes each (the Symbol front end groups
    list results). Returns the names bound."""
    from . import _fronts  # noqa: F401  (registers every front function)
    names = []
    for name, impl in _TABLE[ns].items():
        fn = bind(F, impl, name, module)
        namespace[name] = wrap(fn) if wrap is not None else fn
        names.append(name)
    exported = namespace.get("__all__")
    if isinstance(exported, list):
        exported.extend(n for n in names if n not in exported)
    return names


# ------------------------------------------------------------------ NDArray
class _NDBackend:
    """Front functions on ``mx.np.ndarray``: ops are pushed to the engine."""
    kind = "nd"

    _invoke = None      # multiarray.invoke (that module imports this one)
    native = None       # mx.np.ndarray, set by multiarray as it loads

    def op(self, name, inputs, attrs=None, out=None):
        invoke = self._invoke
        if invoke is None:
            from .multiarray import invoke
            _NDBackend._invoke = staticmethod(invoke)
        if attrs:
            attrs = {k: v for k, v in attrs.items() if v is not None}
        return invoke(name, list(inputs), attrs or {}, out)

    @staticmethod
    def isarr(x):
        return isinstance(x, NDArray)

    @staticmethod
    def arr(x, like=None, dtype=None):
        from .multiarray import _as_np, array, ndarray
        if isinstance(x, NDArray):
            x = x if isinstance(x, ndarray) else _as_np(x.as_np_ndarray())
            return x if dtype is None or x.dtype == _np.dtype(dtype) else x.astype(dtype)
        ctx = like.context if isinstance(like, NDArray) else None
        if dtype is None and isinstance(x, _np.ndarray):
            dtype = x.dtype
        elif dtype is None and isinstance(x, numeric_types) and not isinstance(x, _np.ndarray):
            # a Python scalar: NumPy's dtype for bools and ints, float32 for floats
            dtype = _np.bool_ if isinstance(x, (bool, _np.bool_)) else (
                _np.int64 if isinstance(x, (int, _np.integer)) else None)
        return array(x, dtype=dtype, ctx=ctx)

    @staticmethod
    def shape(x):
        return x.shape if isinstance(x, NDArray) else None

    @staticmethod
    def dtype(x):
        return x.dtype if isinstance(x, NDArray) else None

    @staticmethod
    def ctx(x):
        return x.context if isinstance(x, NDArray) else None

    def __repr__(self):
        return "<NumPy-interface backend: NDArray>"


ND = _NDBackend()


def _set_native():
    from .multiarray import ndarray
    _NDBackend.native = ndarray


def npi_function(namespace: dict, module: str, name: str, make_function, wrap):
    """``mx.nd.np._internal.<name>`` / ``mx.sym.np._internal.<name>``: the
    registry's ``_npi_<name>`` as a function (``make_function`` of the front
    end, its result passed through ``wrap``), cached in ``namespace``."""
    import sys
    from ..base import OpError
    from ..ops import registry as reg
    if name.startswith("__"):
        raise AttributeError(name)
    if name.endswith("_fallback") and "aiond.numpy_op_fallback" not in sys.modules:
        # the NumPy-fallback Custom ops (symbol layer) register themselves on import;
        # the top package hands in the loader
        from ..ndarray._invoke import hooks
        if hooks.load_npi_fallbacks is not None:
            hooks.load_npi_fallbacks()
        if name in namespace:
            return namespace[name]
    try:
        op = reg.get("_npi_" + name)
    except OpError:
        raise AttributeError("module %r has no attribute %r (no operator _npi_%s)"
                             % (module, name, name)) from None
    legacy = make_function(op, name)

    def fn(*args, **kwargs):
        return wrap(legacy(*args, **kwargs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = legacy.__doc__
    fn.__module__ = module
    namespace[name] = fn
    return fn
