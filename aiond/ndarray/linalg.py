"""``mx.nd.linalg``: linear algebra (being written)."""
from __future__ import annotations
