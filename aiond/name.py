"""``mx.name``: automatic names for symbols (MXNet 1.9.1's ``NameManager``).

An op symbol created without ``name=`` is named ``hint + counter``, where
the hint is the lower-cased name of the function that created it
(``mx.sym.FullyConnected`` -> ``fullyconnected0``, ``a + 1`` ->
``_plusscalar0``). Counters live in the current manager; ``with
mx.name.NameManager():`` starts fresh ones, ``with mx.name.Prefix('net_'):``
prefixes every name made inside. The current manager is per thread.
"""
from __future__ import annotations

import threading
import warnings

__all__ = ["NameManager", "Prefix", "current"]


class _NameManagerMeta(type):
    """``NameManager.current`` as a class property with a setter (MXNet's
    classproperty): assigning it sets this thread's manager."""

    @property
    def current(cls):
        warnings.warn("NameManager.current has been deprecated. It is advised to use the "
                      "`with` statement with NameManager.", DeprecationWarning, stacklevel=2)
        return current()

    @current.setter
    def current(cls, val):
        warnings.warn("NameManager.current has been deprecated. It is advised to use the "
                      "`with` statement with NameManager.", DeprecationWarning, stacklevel=2)
        NameManager._current.value = val


class NameManager(metaclass=_NameManagerMeta):
    """Makes names for symbols; subclass and override ``get`` to change the scheme."""

    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """``name`` if given, else ``hint`` followed by this manager's counter for it."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return "%s%d" % (hint, n)

    def __enter__(self):
        self._old_manager = current()
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_manager is not None
        NameManager._current.value = self._old_manager


class Prefix(NameManager):
    """A name manager that puts ``prefix`` in front of every name it gives.

    >>> with mx.name.Prefix('mynet_'):
    ...     net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=10, name='fc1')
    >>> net.list_arguments()
    ['data', 'mynet_fc1_weight', 'mynet_fc1_bias']
    """

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    """This thread's current name manager (one is made on first use)."""
    try:
        return NameManager._current.value
    except AttributeError:
        m = NameManager._current.value = NameManager()
        return m


NameManager._current.value = NameManager()

from .base import classproperty, with_metaclass  # noqa: E402,F401  (MXNet names in mx.name)
