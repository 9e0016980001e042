"""Helpers for gradient rules. A rule is
``grad(F, attrs, inputs, outputs, out_grads) -> input grads`` written with
``F`` (the ``mx.nd`` namespace) and NDArray operators, so its ops are engine
ops and, recorded again, give higher-order gradients. ``None`` means "no
gradient flows to this input"."""
from __future__ import annotations

__all__ = ["unbroadcast", "set_grads", "zeros_grad", "takes_need", "ignores_ograd"]


def unbroadcast(F, g, shape):
    """Sum ``g`` down to ``shape`` (the inverse of numpy broadcasting)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    nd = len(g.shape)
    padded = (1,) * (nd - len(shape)) + shape
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, padded)) if b == 1 and a != 1)
    if axes:
        g = F.sum(g, axis=axes, keepdims=True)
    return g.reshape(shape)


def takes_need(rule):
    """Mark a rule that accepts ``need=[bool per input]`` and skips the
    gradients nobody needs (a matmul for the data of a first layer)."""
    rule.takes_need = True
    return rule


def ignores_ograd(rule):
    """Mark a rule that never reads the output gradients (MXNet's ops whose
    backward does not depend on them, e.g. region proposals): a head gradient
    of any shape is then accepted and unused, as MXNet's executor does."""
    rule.ignores_ograd = True
    return rule


def zeros_grad(F, attrs, inputs, outputs, ograds):
    return [F.zeros_like(x) for x in inputs]


def set_grads(table):
    """Install ``{op name: grad rule}`` rows into the registry."""
    from .registry import get
    for name, fn in table.items():
        get(name).grad = fn
