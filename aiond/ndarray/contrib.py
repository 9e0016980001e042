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
