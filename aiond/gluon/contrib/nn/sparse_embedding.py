"""``gluon.contrib.nn.SparseEmbedding``: an Embedding whose weight is stored
row_sparse and whose gradient is row_sparse, so a Trainer with a kvstore
pulls and updates only the rows a batch uses (MXNet 1.9.1)."""
from __future__ import annotations

from .... import ndarray as nd
from ...block import Block

__all__ = ["SparseEmbedding"]


class SparseEmbedding(Block):
    r"""Turns non-negative integers (indexes/tokens) into dense vectors of
    fixed size, e.g. [4, 20] -> [[0.25, 0.1], [0.6, -0.2]].

    This block is designed for distributed training with extremely large
    input dimension: the weight and its gradient are row_sparse. Only a
    subset of the weight is read each call (``row_sparse_data`` of the
    batch's indices), so this is a Block, not a HybridBlock.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary, i.e. maximum integer index + 1.
    output_dim : int
        Dimension of the dense embedding.
    dtype : str or np.dtype, default 'float32'
        Data type of output embeddings.
    weight_initializer : Initializer
        Initializer for the `embeddings` matrix.

    Inputs: data, (N-1)-D indices; output: (N-1)-D + (output_dim,).
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        s = "{block_name}({input_dim} -> {output_dim}, {dtype})"
        return s.format(block_name=self.__class__.__name__, **self._kwargs)
