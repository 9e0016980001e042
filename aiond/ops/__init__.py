"""Operators: the registry and the kernels that fill it.

Op modules load on first use: ``registry.get(name)`` imports the module(s)
that define ``name`` (``_index.py``, generated), ``registry.ops()`` all of
them. To add an op module, add its name to ``MODULES`` below and run
``python tools/gen_op_index.py`` (tests/test_op_index.py fails until then).
"""
from . import registry  # noqa: F401
from .registry import Null, Op, Param, get, ops, register  # noqa: F401

# Every module that registers ops, in the order they were imported when the
# registry was built eagerly (``registry.ops()`` still loads them in it).
MODULES = (
    "elemwise", "init", "matrix", "random", "reduce",
    "conv", "linalg",
    "fc", "activation", "softmax", "losses", "dropout", "embedding", "l2norm",
    "upsampling",               # the neural-network ops, once all in nn.py
    "norm",
    "optimizer_ops",            # also loads optimizer_fused
    "indexing", "shape", "sorting", "special",
    "rnn",
    "misc",
    "random_pdf",
    "np_ops",                   # mx.np semantics
    "np_init",                  # mx.np creation ops: _npi_full_like, ...
    "np_random",                # mx.np.random, mx.npx.random samplers: _npi_normal, ...
    "np_npx",                   # _npx_constraint_check
    "np_shape",                 # mx.np shape manipulation: _np_transpose, _npi_concatenate, ...
    "np_indexing",              # mx.np where, take, take_along_axis, insert, delete
    "np_creation",              # mx.np creation, windows, index grids, boolean mask assign
    "custom",                   # mx.operator's Custom
    "np_elemwise",              # mx.np unary math, predicates, bitwise, around, ...
    "sparse",                   # storage types, sparse kernels; loads sparse_update
    "attention", "contrib_misc", "correlation", "ctc", "image", "linalg_decomp",
    "spatial",
    "reset", "sync_norm",
    "optimizer_multi",          # multi_sgd_update, multi_sum_sq, multi_lars, ...
    "contrib_bbox", "contrib_vision", "cvimage",  # _contrib_* vision ops, _cv* image ops
    "groupnorm", "roipool", "stn", "svm",
    "deformable", "proposal", "quantize", "roi",
    "image_tensor",             # _image_to_tensor, flips, resize, crop
    "loss_fused",               # Gluon's softmax cross-entropy as one op
    "contrib_hawkes", "krprod", "stes", "crop",  # issue 31: hawkesll, khatri_rao, *_ste
    "optimizer_adamw",          # _adamw_update family, group_adagrad_update
    "control_flow",             # _foreach, _while_loop, _cond: bodies run by symbol
    "contrib_embedding", "scatter",  # SparseEmbedding, _scatter_* ops
    "bilinear_sampler", "contrib_dgl",  # contrib_dgl: the dgl_* graph ops
    "quantized",                # int8 inference: quantize_v2, quantized_conv/fc, requantize, calibrate_entropy
    "image_random",             # _image_random_* augmentations, adjust_lighting
    "np_linalg", "np_products", "np_sorting", "np_stats",  # issue 32: mx.np
    "contrib_grad_ops", "contrib_multibox",  # issue 31: gradientmultiplier, fft, MultiBox*
    "deformable_modulated", "deformable_psroi",  # issue 31: DCNv2, deformable PSROI
    "cumsum", "sampling_grads", # issue 31: cumsum; zero gradients of samplers
    "subgraph_op",              # issue 31: _CachedOp nodes of partitioned graphs
    "quantized_elemwise",       # issue 31: int8 elemwise_add/mul, concat, quantize_asym
    "quantized_layers",         # issue 31: int8 BatchNorm, Embedding
    "quantized_rnn",            # issue 31: int8 LSTM (_contrib_quantized_rnn)
    "onnx_nms",                 # issue 36: ONNX's NonMaxSuppression, for mx.contrib.onnx
)


def __getattr__(name):
    # aiond.ops.<module> as an attribute, as when every module was imported here
    if not name.startswith("__"):
        import importlib
        try:
            return importlib.import_module(__name__ + "." + name)
        except ModuleNotFoundError as e:
            if e.name != __name__ + "." + name:
                raise
    raise AttributeError("module 'aiond.ops' has no attribute %r" % name)
