"""Dropout (MXNet 1.9.1). Dropout with p=1 gives NaN (0 * 1/0), as MXNet's."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import set_grads
from ._nn_util import _errstate, _in_range, _need_float, _num_inputs, _p_opt_bool
from ._rules import fmt
from .random import uniform01
from .registry import Param, p_float, p_shape, p_str, register


def _dropout_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    d = tuple(shapes[0])
    mask = list(d)
    for a in attrs["axes"]:
        if not -len(d) <= a < max(len(d), 1):
            raise OpError("axes=%s is out of range for data of shape %s" % (attrs["axes"], fmt(d)))
        mask[a % len(d)] = 1
    return (d, tuple(mask)), (dtypes[0], dtypes[0])


@register("Dropout", params=[
    Param("p", p_float, 0.5, "Fraction of the input that gets dropped out during training time."),
    Param("mode", p_str, "training", "Whether to only turn on dropout during training or also "
          "for inference.", choices=("always", "training")),
    Param("axes", p_shape, (), "Axes for variational dropout kernel (the mask is shared there)."),
    Param("cudnn_off", _p_opt_bool, False, "Ignored (no cuDNN in aiond).")],
    infer=_dropout_rule, needs_rng=True, train_aware=True, num_outputs=2,
    output_names=("output", "mask"), num_visible=lambda attrs: 1,
    attr_check=_in_range(("p", 0.0, 1.0)))
def dropout(xp, data, out, rng, p=0.5, mode="training", axes=(), cudnn_off=False, _train=False):
    """Dropout(data, p=0.5, mode='training', axes=()): in training (or with
    mode='always') zero each element with probability p and scale the rest
    by 1/(1-p); identity otherwise. Returns one array (the mask is hidden)."""
    y, mask = out
    pkeep = 1.0 - p
    if pkeep < 1.0 and (_train or mode == "always"):
        u = uniform01(xp, rng, mask.shape)      # on the device on a GPU context
        with _errstate():
            scale = np.float32(1.0) / np.float32(pkeep)       # p=1: 0 * inf = NaN, as MXNet
            xp.copyto(mask, (u < np.float32(pkeep)).astype(np.float32) * scale, casting="unsafe")
        xp.multiply(data, mask, out=y)
    else:
        mask[...] = 1
        xp.copyto(y, data)


set_grads({
    "Dropout": lambda F, at, ins, outs, og: [og[0] * outs[1]],
})
