"""Moved to ``aiond.graph.fused``; this name stays for code that imports it."""
from .graph.fused import FusedGraph, enabled, live  # noqa: F401

__all__ = ["FusedGraph", "enabled", "live"]
