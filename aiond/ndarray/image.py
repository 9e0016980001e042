"""``mx.nd.image``: MXNet's image operators (the ``_image_*`` registry
entries, without the prefix): to_tensor, normalize, flips, resize, crop."""
from __future__ import annotations

from ._namespace import populate_lazily as _populate_lazily

_populate_lazily(globals(), None, prefix="_image_")     # made on first use
