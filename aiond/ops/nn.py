"""Operators: nn (being written)."""
from __future__ import annotations
