"""Where an operator's function lives in ``mx.nd``/``mx.sym``: MXNet's rule
(``_contrib_x`` is ``contrib.x``, ``_linalg_x`` ``linalg.x`` and so on, other
``_x`` names are in ``_internal``, the rest at the top). AMP wraps ops by
replacing that attribute."""
from __future__ import annotations

OP_NAME_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")


def locate(name, module):
    """``(attribute name, namespace)`` of op ``name`` in ``module`` (mx.nd or mx.sym)."""
    for prefix in OP_NAME_PREFIXES:
        if name.startswith(prefix):
            # _random_pdf_* and other _random_ ops are internal; *_like samplers are in random
            if prefix != "_random_" or name.endswith("_like"):
                return name[len(prefix):], getattr(module, prefix[1:-1])
            return name, module._internal
    if name.startswith("_"):
        return name, module._internal
    return name, module


def resolvable(name) -> bool:
    """True when op ``name`` has a function in both mx.nd and mx.sym."""
    from ... import ndarray, symbol
    for module in (ndarray, symbol):
        attr, ns = locate(name, module)
        if not callable(getattr(ns, attr, None)):
            return False
    return True
