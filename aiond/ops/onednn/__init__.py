"""oneDNN CPU kernels behind the numpy ones.

A numpy kernel asks here first (``conv_plan`` and friends); the answer is
None whenever oneDNN is off (``AIOND_ONEDNN=0``), absent, or has nothing for
the case (dtype, layout, shape), and the numpy kernel then runs as before.
Nothing here loads the library until such a call: ``import aiond`` stays
free of it. One registry entry per op still holds its shape rule and
gradient; only the kernel body differs.

CPU inference plans run consecutive oneDNN ops as one chain (``chain``,
formed by ``ndarray/_plan_chain.py``) whose values stay in oneDNN's
blocked layouts between the primitives.
"""
from __future__ import annotations

import os

from . import _lib
from ._wcache import scope as kept_scope

__all__ = ["active", "conv_plan", "pool_run", "pool_whole", "bn_bwd", "channel_chain",
           "kept_scope"]


def active():
    """Whether oneDNN kernels run now (library present, not turned off)."""
    if os.environ.get("AIOND_ONEDNN", "1").strip().lower() in ("0", "false", "off", "no"):
        return False
    return _lib.load() is not None


def conv_plan(kind, a, b, out, k, s, d, p, g, bias=None, relu=False, wst=None):
    """A (units, run) plan computing a convolution (``kind`` 'fwd',
    'bwd_data' or 'bwd_weight') with oneDNN, or None. ``relu``: the forward
    with a ReLU on its output; ``wst``: the weight's version stamp."""
    if not active():
        return None
    from .conv import plan
    return plan(kind, a, b, out, k, s, d, p, g, bias, relu, wst)


def pool_run(kind, ins, out, attrs):
    """Pooling ('fwd') or its gradient ('bwd') into ``out``; False where
    oneDNN does not take the case."""
    if not active():
        return False
    from .pool import run
    return run(kind, ins, out, attrs)


def pool_whole(attrs, shape):
    """Whether a Pooling with ``attrs`` of data ``shape`` runs on oneDNN (ranges of samples)."""
    if not active():
        return False
    from .pool import takes
    return takes(attrs, shape)


def bn_bwd(*args, **kw):
    """BatchNorm gradients (``bnorm.backward``); False where oneDNN does not take it."""
    if not active():
        return False
    from .bnorm import backward
    return backward(*args, **kw)


def channel_chain(src, ops, out):
    """Per-channel elementwise chain in one pass (``binary.chain``); False
    where oneDNN does not take it."""
    if not active():
        return False
    from .binary import chain
    return chain(src, ops, out)
