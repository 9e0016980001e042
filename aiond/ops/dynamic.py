"""Ops whose output shape depends on their inputs' values (MXNet's dynamic
shape ops, such as ``boolean_mask``).

aiond infers every output shape when an op is pushed, so such an op cannot
run from its registry entry alone: its imperative function reads the
already-computed values its shape needs and then pushes the op. ``DYNAMIC``
maps the op's name to that function, ``fn(*inputs, **attrs)``; graph replays
(a hybridized block's cached graph) call it in place of a plain push."""
from __future__ import annotations

__all__ = ["DYNAMIC", "dynamic_shape"]

DYNAMIC: dict = {}


def dynamic_shape(name):
    """Decorator: ``fn`` is op ``name``'s imperative entry (see the module doc)."""
    def deco(fn):
        DYNAMIC[name] = fn
        return fn
    return deco
