"""Embedding and its weight gradient ``_backward_Embedding`` (MXNet 1.9.1).
Indices are clipped to [0, input_dim - 1], as MXNet's."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._grad import set_grads
from ._nn_util import _in_range, _num_inputs
from ._rules import fmt
from .registry import Param, p_bool, p_dtype, p_int, register


def _embedding_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "weight"))
    want = (attrs["input_dim"], attrs["output_dim"])
    if tuple(shapes[1]) != want:
        raise ShapeError("weight has shape %s but expected %s (input_dim, output_dim)"
                         % (fmt(shapes[1]), fmt(want)))
    return (tuple(shapes[0]) + (attrs["output_dim"],),), (dtypes[1],)


_EMB_PARAMS = [
    Param("input_dim", p_int, doc="Vocabulary size of the input indices."),
    Param("output_dim", p_int, doc="Dimension of the embedding vectors."),
    Param("dtype", p_dtype, np.dtype(np.float32), "Data type of weight (the weight's own "
          "dtype is used)."),
    Param("sparse_grad", p_bool, False, "Ignored: gradients are dense in aiond.")]


def _clip_index(xp, data, n):
    return xp.clip(data.astype(np.int64).reshape(-1), 0, n - 1)


@register("Embedding", inputs=("data", "weight"), params=_EMB_PARAMS, infer=_embedding_rule,
          attr_check=_in_range(("input_dim", 1, None), ("output_dim", 1, None)))
def embedding(xp, data, weight, out, input_dim, output_dim, dtype=None, sparse_grad=False):
    """Embedding(data, weight, input_dim, output_dim): rows of weight at the
    indices in data (clipped to [0, input_dim - 1]); shape data.shape + (output_dim,)."""
    xp.take(weight, _clip_index(xp, data, input_dim), axis=0, out=out.reshape(-1, output_dim))


def _emb_backward_rule(attrs, shapes, dtypes):
    return ((attrs["input_dim"], attrs["output_dim"]),), (dtypes[1],)


@register("_backward_Embedding", inputs=("data", "ograd"), params=_EMB_PARAMS,
          infer=_emb_backward_rule, inline=False)
def _backward_embedding(xp, data, ograd, out, input_dim, output_dim, dtype=None, sparse_grad=False):
    """The gradient of Embedding w.r.t. weight: ograd rows added at data's indices."""
    out[...] = 0
    xp.add.at(out, _clip_index(xp, data, input_dim), ograd.reshape(-1, output_dim))


set_grads({
    "Embedding": lambda F, at, ins, outs, og: [None, F._internal._backward_Embedding(
        ins[0], og[0], input_dim=at["input_dim"], output_dim=at["output_dim"],
        sparse_grad=at.get("sparse_grad", False))],
    "_backward_Embedding": lambda F, at, ins, outs, og: [None, F.Embedding(
        ins[0], og[0], input_dim=at["input_dim"], output_dim=at["output_dim"])],
})
