"""Operators: conv (being written)."""
from __future__ import annotations
