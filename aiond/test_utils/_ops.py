"""The registry's operator names, as MXNet's test utilities list them."""
from __future__ import annotations

__all__ = ["get_all_registered_operators"]


def get_all_registered_operators():
    """Every registered backend operator name (aliases included), as
    ``MXListAllOpNames`` gives them in MXNet."""
    from ..ops import registry
    return sorted(registry.ops())
