"""``contrib.SparseEmbedding``: MXNet's deprecated spelling of
``Embedding(..., sparse_grad=True)``: the same lookup, whose weight gradient
is always row_sparse (only the rows the indices name are stored)."""
from __future__ import annotations

import numpy as np

from ._nn_util import _in_range
from .embedding import _embedding_rule, embedding
from .registry import Param, p_bool, p_dtype, p_int, register

_PARAMS = [
    Param("input_dim", p_int, doc="Vocabulary size of the input indices."),
    Param("output_dim", p_int, doc="Dimension of the embedding vectors."),
    Param("dtype", p_dtype, np.dtype(np.float32), "Data type of weight (the weight's own "
          "dtype is used)."),
    Param("deterministic", p_bool, False, "Accumulate repeated indices' gradients in a fixed "
          "order (aiond's accumulation always is).")]


@register("_contrib_SparseEmbedding", inputs=("data", "weight"), params=_PARAMS,
          infer=_embedding_rule,
          attr_check=_in_range(("input_dim", 1, None), ("output_dim", 1, None)))
def sparse_embedding(xp, data, weight, out, input_dim, output_dim, dtype=None,
                     deterministic=False):
    """SparseEmbedding(data, weight, input_dim, output_dim): rows of weight at
    the indices in data (clipped to [0, input_dim - 1]); its weight gradient
    is row_sparse. Deprecated in MXNet: use Embedding(sparse_grad=True)."""
    embedding(xp, data, weight, out, input_dim, output_dim)


def _grads():
    from ._grad import set_grads
    set_grads({
        "_contrib_SparseEmbedding": lambda F, at, ins, outs, og: [
            None, F._internal._backward_Embedding(
                ins[0], og[0], input_dim=at["input_dim"], output_dim=at["output_dim"],
                sparse_grad=True)],
    })


_grads()
