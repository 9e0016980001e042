"""``mx.registry``: name -> class tables for objects created from
configuration strings (MXNet 1.9.1's ``mxnet.registry``).

    register = mx.registry.get_register_func(MyBase, 'thing')
    create = mx.registry.get_create_func(MyBase, 'thing')
    @register
    class Foo(MyBase): ...
    create('foo'), create('["foo", {"a": 1}]'), create({'thing': 'foo'})

One table per base class; ``mx.init.Initializer`` and
``mx.metric.EvalMetric`` keep theirs here too, so
``get_registry(mx.init.Initializer)`` lists the registered initializers and
``get_create_func(mx.metric.EvalMetric, 'metric')('acc')`` makes an Accuracy.
"""
from __future__ import annotations

import json
import warnings

from .base import string_types

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func"]

_REGISTRY = {}


def _share(base_class, table):
    """Keep ``table`` (a module's own name -> class dict) as ``base_class``'s
    table, so registrations through either reach both."""
    table.update(_REGISTRY.get(base_class, {}))
    _REGISTRY[base_class] = table
    return table


def _table(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the name -> class table of ``base_class``."""
    return _table(base_class).copy()


def get_register_func(base_class, nickname):
    """``register(klass, name=None)``: enter a subclass of ``base_class``
    under ``name`` (default its class name), lower-cased; ``nickname`` names
    the kind in messages."""
    registry = _table(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError("Can only register subclass of %s, got %r"
                            % (base_class.__name__, klass))
        name = (klass.__name__ if name is None else name).lower()
        if name in registry:
            warnings.warn(
                "\033[91mNew %s %s.%s registered with name %s is"
                "overriding existing %s %s.%s\033[0m" % (
                    nickname, klass.__module__, klass.__name__, name,
                    nickname, registry[name].__module__, registry[name].__name__),
                UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = "Register %s to the %s factory" % (nickname, nickname)
    return register


def get_alias_func(base_class, nickname):
    """``alias(*names)``: a class decorator registering the class under each
    of ``names``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """``create(name_or_config, *args, **kwargs)``: an instance of the class
    registered under a name, from a JSON string (``'["name", {kwargs}]'`` or
    ``'{"<nickname>": name, ...}'``), a dict, or an instance (returned as is;
    no further arguments allowed)."""
    registry = _table(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        else:
            if nickname not in kwargs:
                raise TypeError("create %s: give the %s name as the first argument or as "
                                "%s=..." % (nickname, nickname, nickname))
            name = kwargs.pop(nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError("%s is already an instance. Additional arguments are invalid"
                                 % nickname)
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, string_types):
            raise TypeError("%s must be of string type, got %s" % (nickname, type(name).__name__))
        if name.startswith('['):
            if args or kwargs:
                raise ValueError("create %s: a JSON config takes no further arguments" % nickname)
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith('{'):
            if args or kwargs:
                raise ValueError("create %s: a JSON config takes no further arguments" % nickname)
            return create(**json.loads(name))
        name = name.lower()
        if name not in registry:
            raise ValueError("%s is not registered. Please register with %s.register first "
                             "(registered: %s)" % (name, nickname, ", ".join(sorted(registry))))
        return registry[name](*args, **kwargs)

    create.__doc__ = ("Create a %s instance from config: a registered name, JSON, a dict, or "
                      "a %s instance (returned as is)." % (nickname, base_class.__name__))
    return create
