"""Operators: linalg (being written)."""
from __future__ import annotations
