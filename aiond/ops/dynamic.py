"""Ops whose output shape depends on their inputs' values (MXNet's dynamic
shape ops, such as ``boolean_mask``).

aiond infers every output shape when an op is pushed, so such an op cannot
run from its registry entry alone: its imperative function reads the
already-computed values its shape needs and then pushes the op. ``DYNAMIC``
maps the op's name to that function, ``fn(*inputs, **attrs)``; graph replays
(a hybridized block's cached graph) call it in place of a plain push."""
from __future__ import annotations

from ..base import OpError

__all__ = ["DYNAMIC", "dynamic_shape", "ValueShaped"]

DYNAMIC: dict = {}


class ValueShaped(OpError):
    """Raised by a value-shaped op's shape rule when it is asked for shapes
    without the values (symbol inference): ``shapes`` holds what is known of
    each output (-1 for a dimension only the values decide), ``dtypes``
    their dtypes, so inference goes on around the op as MXNet's does."""

    def __init__(self, msg, shapes=(), dtypes=()):
        super().__init__(msg)
        self.shapes = tuple(tuple(s) for s in shapes)
        self.dtypes = tuple(dtypes)


def dynamic_shape(name):
    """Decorator: ``fn`` is op ``name``'s imperative entry (see the module doc)."""
    def deco(fn):
        DYNAMIC[name] = fn
        return fn
    return deco
