"""MXNet's matrix decompositions of the ``linalg`` family
(``src/operator/tensor/la_op*``): gelqf (LQ factorisation) and syevd
(symmetric eigendecomposition), batched over leading axes like the rest of
``aiond/ops/linalg.py``.

As in MXNet: only float32/float64; gelqf needs rows <= columns and returns
(Q, L) with A = L Q, Q row-orthonormal (LAPACK's Householder signs, from
geqrf of A^T); syevd returns (U, L) with U A = diag(L) U, eigenvalues
ascending and each eigenvector's largest-magnitude entry made positive. The
backward passes are la_op-inl.h's gelqf_backward / syevd_backward."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .linalg import _float_dtype, _need_matrices, _need_square, _swap
from .registry import matmul_cost, register


def _gelqf_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = tuple(shapes[0])
    _need_matrices(a)
    if a[-2] > a[-1]:
        raise ShapeError("gelqf needs matrices with rows <= columns, got shape %s" % fmt(a))
    return (a, a[:-1] + (a[-2],)), (d, d)


@register("_linalg_gelqf", inputs=("A",), infer=_gelqf_rule, aliases=("linalg_gelqf",),
          num_outputs=2, inline=matmul_cost, output_names=("output0", "output1"))
def _linalg_gelqf(xp, A, out):
    """gelqf(A): (Q, L) with A = L * Q, L lower triangular, Q row-orthonormal."""
    q, r = xp.linalg.qr(_swap(xp, A))          # A^T = q r  =>  A = r^T q^T
    out[0][...] = _swap(xp, q)
    out[1][...] = _swap(xp, r)


def _gelqf_bwd_rule(attrs, shapes, dtypes):
    return (tuple(shapes[2]),), (dtypes[2],)


@register("_backward_linalg_gelqf", inputs=("dQ", "dL", "Q", "L"), infer=_gelqf_bwd_rule,
          inline=matmul_cost)
def _backward_linalg_gelqf(xp, dQ, dL, Q, L, out):
    """dA = L^-T (dQ + copyLTU(L^T dL - dQ Q^T) Q)."""
    M = xp.matmul(_swap(xp, L), dL) - xp.matmul(dQ, _swap(xp, Q))
    M = xp.tril(M) + _swap(xp, xp.tril(M, -1))
    B = dQ + xp.matmul(M, Q)
    out[...] = xp.linalg.solve(_swap(xp, L), B)


def _syevd_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = tuple(shapes[0])
    _need_square(a)
    return (a, a[:-1]), (d, d)


@register("_linalg_syevd", inputs=("A",), infer=_syevd_rule, aliases=("linalg_syevd",),
          num_outputs=2, inline=matmul_cost, output_names=("output0", "output1"))
def _linalg_syevd(xp, A, out):
    """syevd(A): (U, L) with U A = diag(L) U for symmetric A (its lower triangle)."""
    w, v = xp.linalg.eigh(A, UPLO="L")
    u = _swap(xp, v)                           # rows are eigenvectors
    idx = xp.argmax(xp.abs(u), axis=-1)[..., None]
    sign = xp.where(xp.take_along_axis(u, idx, axis=-1) < 0, -1.0, 1.0).astype(u.dtype)
    out[0][...] = u * sign
    out[1][...] = w


def _syevd_bwd_rule(attrs, shapes, dtypes):
    return (tuple(shapes[2]),), (dtypes[2],)


@register("_backward_linalg_syevd", inputs=("dU", "dL", "U", "L"), infer=_syevd_bwd_rule,
          inline=matmul_cost)
def _backward_linalg_syevd(xp, dU, dL, U, L, out):
    """dA = U^T Y U, Y from X = dU U^T: Y_ij = (X_ij - X_ji) / (2 (L_i - L_j))
    off the diagonal (the gap at least eps), Y_ii = dL_i."""
    X = xp.matmul(dU, _swap(xp, U))
    eps = 1e-30 if U.dtype == np.float32 else 1e-100
    gap = L[..., :, None] - L[..., None, :]            # L_i - L_j, >= 0 below the diagonal
    low = xp.tril(xp.ones(X.shape[-2:], dtype=bool), -1)
    denom = 2.0 * xp.maximum(xp.where(low, gap, 1.0), eps)
    Y = xp.where(low, (X - _swap(xp, X)) / denom, 0.0)
    Y = Y + _swap(xp, Y)
    n = X.shape[-1]
    Y[..., xp.arange(n), xp.arange(n)] = dL
    out[...] = xp.matmul(xp.matmul(_swap(xp, U), Y), U)


def _pair_grad(bwd):
    def grad(F, attrs, ins, outs, og):
        g0 = og[0] if og[0] is not None else F.zeros_like(outs[0])
        g1 = og[1] if og[1] is not None else F.zeros_like(outs[1])
        return [getattr(F._internal, bwd)(g0, g1, outs[0], outs[1])]
    return grad


set_grads({"_linalg_gelqf": _pair_grad("_backward_linalg_gelqf"),
           "_linalg_syevd": _pair_grad("_backward_linalg_syevd")})
