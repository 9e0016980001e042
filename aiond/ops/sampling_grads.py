"""Gradients of the samplers that take tensor parameters (``_sample_*``,
and ``_random_*_like``): zeros, as MXNet 1.9.1 registers them
(``MakeZeroGradNodes``). A gradient reaching a sampler is then passed on as
zeros instead of stopping the backward pass. Samplers with a real gradient
(``_sample_multinomial`` with ``get_prob``) keep theirs; the ops are
registered in ``random`` (imported before this module)."""
from __future__ import annotations

from . import random  # noqa: F401  (the samplers must be registered first)
from ._grad import set_grads, zeros_grad
from .registry import ops


def _multinomial_grad(F, attrs, ins, outs, og):
    # with get_prob the log-probabilities of the draws are differentiable:
    # d log p[k] / d p[k] = 1 / p[k] at each drawn k (MXNet's
    # _backward_sample_multinomial); the draws themselves carry no gradient
    data = ins[0]
    if not attrs["get_prob"] or len(og) < 2 or og[1] is None:
        return [F.zeros_like(data)]
    w = og[1] * F.exp(-outs[1])
    oh = F.one_hot(outs[0], depth=data.shape[-1], dtype=data.dtype) * F.expand_dims(w, axis=-1)
    extra = tuple(range(data.ndim - 1, oh.ndim - 1))
    if extra:
        oh = F.sum(oh, axis=extra)
    return [oh.reshape(data.shape)]


set_grads({"_sample_multinomial": _multinomial_grad})


def _install():
    for name, op in ops().items():
        if op.name != name or op.grad is not None or not op.inputs:
            continue
        if name.startswith("_sample_") or (name.startswith("_random_")
                                           and not name.startswith("_random_pdf")):
            op.grad = zeros_grad


_install()
