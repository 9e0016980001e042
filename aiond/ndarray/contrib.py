"""``mx.nd.contrib``: MXNet's contrib operators (the ``_contrib_*`` registry
entries, without the prefix) and ``boolean_mask``, whose output shape is
read from an already-computed mask."""
from __future__ import annotations

from ..ops import registry as _reg
from ..ops.indexing import boolean_mask  # noqa: F401
from ._namespace import make_function

for _name, _op in list(_reg.ops().items()):
    if _name.startswith("_contrib_") and _name != "_contrib_boolean_mask":
        globals()[_name[len("_contrib_"):]] = make_function(_op, _name[len("_contrib_"):])


def isinf(data):
    """1 where ``data`` is +-inf, else 0 (in data's dtype)."""
    return data.abs() == float("inf")


def isfinite(data):
    """1 where ``data`` is neither NaN nor +-inf, else 0."""
    from ._functions import logical_and
    return logical_and(data.abs() != float("inf"), data == data)


def isnan(data):
    """1 where ``data`` is NaN, else 0."""
    return data != data
