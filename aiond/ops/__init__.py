"""Operators: the registry and the kernels that fill it."""
from . import registry  # noqa: F401
from . import elemwise, init, matrix, random, reduce  # noqa: F401  (register ops)
from . import conv, linalg, nn, norm  # noqa: F401
from . import optimizer_ops  # noqa: F401  (also loads optimizer_fused)
from . import indexing, shape, sorting, special  # noqa: F401
from . import rnn  # noqa: F401
from . import misc  # noqa: F401
from . import random_pdf  # noqa: F401
from . import np_ops  # noqa: F401  (mx.np semantics)
from . import np_init  # noqa: F401  (mx.np creation ops: _npi_full_like, ...)
from . import np_random  # noqa: F401  (mx.np.random, mx.npx.random samplers: _npi_normal, ...)
from . import np_npx  # noqa: F401  (_npx_constraint_check)
from . import np_shape  # noqa: F401  (mx.np shape manipulation: _np_transpose, _npi_concatenate, ...)
from . import np_creation  # noqa: F401  (mx.np creation, windows, index grids, boolean mask assign)
from . import custom  # noqa: F401  (mx.operator's Custom)
from . import np_elemwise  # noqa: F401  (mx.np unary math, predicates, bitwise, around, ...)
from . import sparse  # noqa: F401  (storage types, sparse kernels; loads sparse_update)
from . import attention, contrib_misc, correlation, ctc, image, linalg_decomp  # noqa: F401
from . import spatial  # noqa: F401
from . import reset, sync_norm  # noqa: F401
from . import optimizer_multi  # noqa: F401  (multi_sgd_update, multi_sum_sq, multi_lars, ...)
from . import contrib_bbox, contrib_vision, cvimage  # noqa: F401  (_contrib_* vision ops, _cv* image ops)
from . import groupnorm, roipool, stn, svm  # noqa: F401
from . import deformable, proposal, quantize, roi  # noqa: F401
from . import image_tensor  # noqa: F401  (_image_to_tensor, flips, resize, crop)
from . import loss_fused  # noqa: F401  (Gluon's softmax cross-entropy as one op)
from . import contrib_hawkes, krprod, stes  # noqa: F401  (issue 31: hawkesll, khatri_rao, *_ste)
from . import optimizer_adamw  # noqa: F401  (_adamw_update family, group_adagrad_update)
from . import control_flow  # noqa: F401  (_foreach, _while_loop, _cond: bodies run by symbol)
from . import contrib_embedding, scatter  # noqa: F401  (SparseEmbedding, _scatter_* ops)
from . import bilinear_sampler, contrib_dgl  # noqa: F401  (contrib_dgl: the dgl_* graph ops)
from . import quantized  # noqa: F401  (int8 inference: quantize_v2, quantized_conv/fc, requantize, calibrate_entropy)
from . import image_random  # noqa: F401  (_image_random_* augmentations, adjust_lighting)
from . import np_linalg, np_products, np_sorting, np_stats  # noqa: F401  (issue 32: mx.np)
from . import contrib_grad_ops, contrib_multibox  # noqa: F401  (issue 31: gradientmultiplier, fft, MultiBox*)
from . import deformable_modulated, deformable_psroi  # noqa: F401  (issue 31: DCNv2, deformable PSROI)
from . import cumsum, sampling_grads  # noqa: F401  (issue 31: cumsum; zero gradients of samplers)
from .registry import Null, Op, Param, get, ops, register  # noqa: F401
