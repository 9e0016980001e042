"""``npx.random``: seeding."""
from __future__ import annotations

from ..random import seed  # noqa: F401

__all__ = ["seed"]
