"""``mx.nd.image``: MXNet's image operators (the ``_image_*`` registry
entries, without the prefix): to_tensor, normalize, flips, resize, crop."""
from __future__ import annotations

from ..ops import registry as _reg
from ._namespace import make_function

for _name, _op in list(_reg.ops().items()):
    if _name.startswith("_image_"):
        globals()[_name[len("_image_"):]] = make_function(_op, _name[len("_image_"):])
