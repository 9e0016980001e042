"""``mx.AttrScope``: attributes given to every symbol made inside a scope.

    with mx.AttrScope(ctx_group='dev1', lr_mult='0.1'):
        fc = mx.sym.FullyConnected(data, num_hidden=10)   # and its fc_weight, fc_bias

Values must be strings; scopes nest (inner values win); the current scope is
per thread. MXNet 1.9.1 semantics (python/mxnet/attribute.py).
"""
from __future__ import annotations

import threading
import warnings
from collections import defaultdict

__all__ = ["AttrScope", "current"]


class _AttrScopeMeta(type):
    """``AttrScope.current`` as a class property with a setter (MXNet's
    classproperty): assigning it sets this thread's scope."""

    @property
    def current(cls):
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the "
                      "`with` statement with AttrScope.", DeprecationWarning, stacklevel=2)
        return current()

    @current.setter
    def current(cls, val):
        warnings.warn("AttrScope.current has been deprecated. It is advised to use the "
                      "`with` statement with AttrScope.", DeprecationWarning, stacklevel=2)
        AttrScope._current.value = val


class AttrScope(metaclass=_AttrScopeMeta):
    """Attribute manager for scoping; ``kwargs`` are set on every symbol made inside."""

    _current = threading.local()
    _subgraph_names = defaultdict(int)

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (the ones given at creation)."""
        if self._attr:
            ret = self._attr.copy()
            if attr:
                ret.update(attr)
            return ret
        return dict(attr) if attr else {}

    def __enter__(self):
        self._old_scope = current()
        attr = self._old_scope._attr.copy()
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_scope is not None
        AttrScope._current.value = self._old_scope


def current() -> AttrScope:
    """This thread's current scope (an empty one is made on first use)."""
    try:
        return AttrScope._current.value
    except AttributeError:
        s = AttrScope._current.value = AttrScope()
        return s


AttrScope._current.value = AttrScope()
