"""Loads op modules on demand, from the generated index (``_index.py``).

The index maps each op name to the modules whose import-time code builds
its entry (the module that registers it, then any that set attributes on
it, such as a gradient rule), in ``MODULES`` order. When ``MODULES`` no
longer matches the tuple the index was built from (a module added without
rerunning ``tools/gen_op_index.py``), the index is not trusted: a name it
does not know loads every module, so a stale index costs time, never ops.
"""
from __future__ import annotations

import importlib

_state = {"index": None, "all": False}


def _index():
    idx = _state["index"]
    if idx is None:
        from . import MODULES
        from ._index import ALSO, DEFINES, MODULES as built_from
        ops = {}
        for m, names in DEFINES.items():
            for n in names.split():
                ops[n] = (m,) + ALSO.get(n, ())
        idx = _state["index"] = (ops, tuple(built_from) == tuple(MODULES))
    return idx


def load(name) -> bool:
    """Import what defines op ``name``; False when the index does not know it
    (every module is then loaded if the index may be stale)."""
    ops, fresh = _index()
    mods = ops.get(name)
    if mods is None:
        if not fresh:
            load_all()
        return False
    for m in mods:
        importlib.import_module("aiond.ops." + m)
    return True


def load_all():
    """Import every op module (what ``registry.ops()`` lists)."""
    if _state["all"]:
        return
    from . import MODULES
    for m in MODULES:
        importlib.import_module("aiond.ops." + m)
    _state["all"] = True


def names():
    """Every op name, loaded or not (aliases included), without loading any."""
    ops, fresh = _index()
    if not fresh:
        load_all()
    from .registry import _REGISTRY
    return set(ops) | set(_REGISTRY)


def known(name) -> bool:
    """Whether ``name`` is an op (loaded or in the index)."""
    from .registry import _REGISTRY
    if name in _REGISTRY:
        return True
    ops, fresh = _index()
    if name in ops:
        return True
    if not fresh:
        load_all()
        return name in _REGISTRY
    return False
