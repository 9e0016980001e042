"""Operators: MXNet's ``linalg`` family (``src/operator/tensor/la_op.*``).

gemm, gemm2, potrf, potri, trsm, trmm, syrk, inverse, det, slogdet,
sumlogdiag, extractdiag, makediag, extracttrian, maketrian; registered as
``_linalg_<name>`` with MXNet's ``linalg_<name>`` aliases. Every op works on
the trailing two axes and batches over the leading ones (gemm/gemm2 take the
row axis from ``axis``). Kernels are one body against ``xp``: batched
``xp.matmul`` / ``xp.linalg``, no Python loop over the batch.

As in MXNet: only float32 and float64; triangular inputs use only their
``lower`` (or upper) triangle; potrf zeroes the other triangle; potri and
syrk return exactly symmetric matrices; det/sumlogdiag of one matrix have
shape (1,). MXNet's hidden LU/pivot outputs of det/slogdet are not kept
(the gradients use ``inverse`` instead).

Gradients follow la_op-inl.h's backward formulas, written with ``F`` ops
so they are differentiable again.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt, same_dtype
from .registry import matmul_cost, Param, p_bool, p_float, p_int, register

__all__ = []

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(dtypes):
    d = same_dtype(dtypes)
    if d not in _FLOATS:
        raise OpError("supports float32 and float64 only, got %s (cast with .astype('float32'))"
                      % d.name)
    return d


def _swap(xp, a):
    return xp.swapaxes(a, -1, -2)


def _lin_err(xp):
    return getattr(xp.linalg, "LinAlgError", np.linalg.LinAlgError)


def _need_matrices(shape, what="A"):
    if len(shape) < 2:
        raise ShapeError("input %s must have at least 2 dimensions, got shape %s"
                         % (what, fmt(shape)))


def _need_square(shape, what="A"):
    _need_matrices(shape, what)
    if shape[-1] != shape[-2]:
        raise ShapeError("input %s must be a (batch of) square matrices, got shape %s"
                         % (what, fmt(shape)))


def _sym_from_lower(xp, r):
    """The symmetric matrix with r's lower triangle (MXNet copies it up)."""
    return xp.tril(r) + _swap(xp, xp.tril(r, -1))

# ------------------------------------------------------------- gemm, gemm2


def _gemm_shape(attrs, a, b):
    ta, tb, axis = attrs["transpose_a"], attrs["transpose_b"], attrs["axis"]
    if len(a) < 2 or len(a) != len(b):
        raise ShapeError("A and B must have the same number of dimensions (>= 2), got A %s "
                         "and B %s" % (fmt(a), fmt(b)))
    nd = len(a)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd - 1:
        raise OpError("axis=%d is not a valid row axis for %d-D inputs (it must be one of "
                      "the first %d axes)" % (axis, nd, nd - 1))
    for i in range(nd - 1):
        if i != ax and a[i] != b[i]:
            raise ShapeError("A %s and B %s must have the same shape except on the row axis "
                             "(%d) and the last axis" % (fmt(a), fmt(b), ax))
    ka = a[ax] if ta else a[-1]
    kb = b[-1] if tb else b[ax]
    if ka != kb:
        raise ShapeError("A %s and B %s are incompatible for multiplication: %d columns of "
                         "%s != %d rows of %s" % (fmt(a), fmt(b), ka, "A^T" if ta else "A", kb,
                                                  "B^T" if tb else "B"))
    out = list(a)
    out[ax] = a[-1] if ta else a[ax]
    out[-1] = b[ax] if tb else b[-1]
    return tuple(out)


def _gemm2_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    return (_gemm_shape(attrs, shapes[0], shapes[1]),), (d,)


def _gemm_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    out = _gemm_shape(attrs, shapes[0], shapes[1])
    if tuple(shapes[2]) != out:
        raise ShapeError("C has shape %s but A %s times B %s has shape %s"
                         % (fmt(shapes[2]), fmt(shapes[0]), fmt(shapes[1]), fmt(out)))
    return (out,), (d,)


def _row_axis(axis, nd):
    ax = axis + nd if axis < 0 else axis
    return None if ax == nd - 2 else ax


def _matmul(xp, A, B, ta, tb, ax):
    """op(A) @ op(B) with the rows on axis ``ax`` (None: axis -2)."""
    if ax is not None:
        A = xp.swapaxes(A, ax, -2)
        B = xp.swapaxes(B, ax, -2)
    r = xp.matmul(_swap(xp, A) if ta else A, _swap(xp, B) if tb else B)
    return r if ax is None else xp.swapaxes(r, ax, -2)


_GEMM2 = [Param("transpose_a", p_bool, False, "Multiply with transposed of first input (A)."),
          Param("transpose_b", p_bool, False, "Multiply with transposed of second input (B)."),
          Param("alpha", p_float, 1.0, "Scalar factor multiplied with A*B."),
          Param("axis", p_int, -2, "Axis corresponding to the matrix rows.")]
_GEMM = _GEMM2[:3] + [Param("beta", p_float, 1.0, "Scalar factor multiplied with C."),
                      _GEMM2[3]]


@register("_linalg_gemm", inputs=("A", "B", "C"), params=_GEMM, infer=_gemm_rule,
          aliases=("linalg_gemm",), inline=matmul_cost)
def _linalg_gemm(xp, A, B, C, out, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0,
                 axis=-2):
    """gemm(A, B, C, transpose_a=False, transpose_b=False, alpha=1.0, beta=1.0, axis=-2):
    alpha * op(A) @ op(B) + beta * C per matrix of a batch (rows on ``axis``)."""
    r = _matmul(xp, A, B, transpose_a, transpose_b, _row_axis(axis, A.ndim))
    if alpha != 1.0:
        r = r * alpha
    if beta != 0.0:                  # BLAS: beta == 0 ignores C (even NaN)
        r = r + (C if beta == 1.0 else C * beta)
    out[...] = r


@register("_linalg_gemm2", inputs=("A", "B"), params=_GEMM2, infer=_gemm2_rule,
          aliases=("linalg_gemm2",), inline=matmul_cost)
def _linalg_gemm2(xp, A, B, out, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    """gemm2(A, B, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    alpha * op(A) @ op(B) per matrix of a batch (rows on ``axis``)."""
    ax = _row_axis(axis, A.ndim)
    if ax is None:
        xp.matmul(_swap(xp, A) if transpose_a else A, _swap(xp, B) if transpose_b else B,
                  out=out)
    else:
        out[...] = _matmul(xp, A, B, transpose_a, transpose_b, ax)
    if alpha != 1.0:
        out *= alpha

# ------------------------------------------------------------ potrf, potri


def _square_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    _need_square(shapes[0])
    return (tuple(shapes[0]),), (d,)


_LOWER = Param("lower", p_bool, True, "True if the triangular matrix is lower triangular, "
               "false if it is upper triangular.")


@register("_linalg_potrf", inputs=("A",), params=[_LOWER], infer=_square_rule,
          aliases=("linalg_potrf",), inline=matmul_cost)
def _linalg_potrf(xp, A, out, lower=True):
    """potrf(A, lower=True): the Cholesky factor of symmetric positive-definite A,
    lower triangular (A = L L^T) or, with lower=False, upper (A = U^T U); only
    that triangle of A is read, the other triangle of the result is zero."""
    a = A if lower else _swap(xp, A)     # numpy/CuPy cholesky read the lower triangle
    try:
        L = xp.linalg.cholesky(a)
    except _lin_err(xp):
        raise OpError("_linalg_potrf: the Cholesky factorization failed: the input matrix "
                      "%s is not symmetric positive-definite" % fmt(A.shape)) from None
    out[...] = L if lower else _swap(xp, L)


@register("_linalg_potri", inputs=("A",), params=[_LOWER], infer=_square_rule,
          aliases=("linalg_potri",), inline=matmul_cost)
def _linalg_potri(xp, A, out, lower=True):
    """potri(A, lower=True): the inverse of L L^T (or U^T U) from its Cholesky
    factor A; only A's lower (upper) triangle is read."""
    T = xp.tril(A) if lower else xp.triu(A)
    try:
        Ti = xp.linalg.inv(T)
    except _lin_err(xp):
        raise OpError("_linalg_potri: the triangular factor %s is singular"
                      % fmt(A.shape)) from None
    r = xp.matmul(_swap(xp, Ti), Ti) if lower else xp.matmul(Ti, _swap(xp, Ti))
    out[...] = _sym_from_lower(xp, r)

# ------------------------------------------------------------- trsm, trmm


def _tri_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a, b = shapes
    if len(a) < 2 or len(a) != len(b):
        raise ShapeError("A and B must have the same number of dimensions (>= 2), got A %s "
                         "and B %s" % (fmt(a), fmt(b)))
    _need_square(a)
    if tuple(a[:-2]) != tuple(b[:-2]):
        raise ShapeError("A %s and B %s must have the same leading (batch) dimensions"
                         % (fmt(a), fmt(b)))
    n = a[-1]
    if attrs["rightside"]:
        if b[-1] != n:
            raise ShapeError("A %s and B %s are incompatible (rightside=True needs B's last "
                             "dimension == %d)" % (fmt(a), fmt(b), n))
    elif b[-2] != n:
        raise ShapeError("A %s and B %s are incompatible (B's rows must be %d)"
                         % (fmt(a), fmt(b), n))
    return (tuple(b),), (d,)


_TRI = [Param("transpose", p_bool, False, "Use transposed of the triangular matrix"),
        Param("rightside", p_bool, False,
              "Multiply triangular matrix from the right to non-triangular one."),
        _LOWER, Param("alpha", p_float, 1.0, "Scalar factor to be applied to the result.")]


def _op_tri(xp, A, lower, transpose):
    T = xp.tril(A) if lower else xp.triu(A)
    return _swap(xp, T) if transpose else T


@register("_linalg_trsm", inputs=("A", "B"), params=_TRI, infer=_tri_rule,
          aliases=("linalg_trsm",), inline=matmul_cost)
def _linalg_trsm(xp, A, B, out, transpose=False, rightside=False, lower=True, alpha=1.0):
    """trsm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0): solves
    op(A) X = alpha B (or X op(A) = alpha B if rightside) with A triangular."""
    T = _op_tri(xp, A, lower, transpose)
    try:
        if rightside:       # X T = B  <=>  T^T X^T = B^T
            r = _swap(xp, xp.linalg.solve(_swap(xp, T), _swap(xp, B)))
        else:
            r = xp.linalg.solve(T, B)
    except _lin_err(xp):
        raise OpError("_linalg_trsm: the triangular matrix A %s is singular"
                      % fmt(A.shape)) from None
    out[...] = r if alpha == 1.0 else r * alpha


@register("_linalg_trmm", inputs=("A", "B"), params=_TRI, infer=_tri_rule,
          aliases=("linalg_trmm",), inline=matmul_cost)
def _linalg_trmm(xp, A, B, out, transpose=False, rightside=False, lower=True, alpha=1.0):
    """trmm(A, B, transpose=False, rightside=False, lower=True, alpha=1.0):
    alpha * op(A) B (or alpha * B op(A) if rightside) with A triangular."""
    T = _op_tri(xp, A, lower, transpose)
    if rightside:
        xp.matmul(B, T, out=out)
    else:
        xp.matmul(T, B, out=out)
    if alpha != 1.0:
        out *= alpha

# -------------------------------------------------------------------- syrk


def _syrk_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    _need_matrices(a)
    m = a[-1] if attrs["transpose"] else a[-2]
    return (tuple(a[:-2]) + (m, m),), (d,)


@register("_linalg_syrk", inputs=("A",), params=[
    Param("transpose", p_bool, False, "Use transpose of input matrix."),
    Param("alpha", p_float, 1.0, "Scalar factor to be applied to the result.")],
    infer=_syrk_rule, aliases=("linalg_syrk",), inline=matmul_cost)
def _linalg_syrk(xp, A, out, transpose=False, alpha=1.0):
    """syrk(A, transpose=False, alpha=1.0): alpha * A A^T (alpha * A^T A if transpose),
    exactly symmetric."""
    r = xp.matmul(_swap(xp, A), A) if transpose else xp.matmul(A, _swap(xp, A))
    r = _sym_from_lower(xp, r)
    out[...] = r if alpha == 1.0 else r * alpha

# ------------------------------------------------------- inverse, det, slogdet


@register("_linalg_inverse", inputs=("A",), infer=_square_rule, aliases=("linalg_inverse",),
          inline=matmul_cost)
def _linalg_inverse(xp, A, out):
    """inverse(A): the inverse of each square matrix."""
    try:
        out[...] = xp.linalg.inv(A)
    except _lin_err(xp):
        raise OpError("_linalg_inverse: the input matrix %s is singular (not invertible)"
                      % fmt(A.shape)) from None


def _det_shape(a):
    _need_square(a)
    return tuple(a[:-2]) if len(a) > 2 else (1,)


def _det_rule(attrs, shapes, dtypes):
    return (_det_shape(shapes[0]),), (_float_dtype(dtypes),)


def _slogdet_rule(attrs, shapes, dtypes):
    s = _det_shape(shapes[0])
    d = _float_dtype(dtypes)
    return (s, s), (d, d)


@register("_linalg_det", inputs=("A",), infer=_det_rule, aliases=("linalg_det",),
          inline=matmul_cost, output_names=("output0",))
def _linalg_det(xp, A, out):
    """det(A): the determinant of each square matrix (shape (1,) for one matrix)."""
    out[...] = xp.linalg.det(A).reshape(out.shape)


@register("_linalg_slogdet", inputs=("A",), infer=_slogdet_rule, aliases=("linalg_slogdet",),
          num_outputs=2, inline=matmul_cost, output_names=("output0", "output1"))
def _linalg_slogdet(xp, A, out):
    """slogdet(A): (sign, log|det|) of each square matrix."""
    s, ld = xp.linalg.slogdet(A)
    out[0][...] = s.reshape(out[0].shape)
    out[1][...] = ld.reshape(out[1].shape)

# ------------------------------------------------ sumlogdiag, diag, trian


def _sumlogdiag_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    _need_square(a)
    return ((tuple(a[:-2]) if len(a) > 2 else (1,)),), (d,)


@register("_linalg_sumlogdiag", inputs=("A",), infer=_sumlogdiag_rule,
          aliases=("linalg_sumlogdiag",))
def _linalg_sumlogdiag(xp, A, out):
    """sumlogdiag(A): the sum of the logs of each square matrix's diagonal."""
    with np.errstate(invalid="ignore", divide="ignore"):    # log(<=0): nan/-inf as MXNet
        r = xp.log(xp.diagonal(A, 0, -2, -1)).sum(axis=-1)
    out[...] = r.reshape(out.shape)


_OFFSET = Param("offset", p_int, 0, "Offset of the diagonal versus the main diagonal. 0 "
                "corresponds to the main diagonal, a negative/positive value to diagonals "
                "below/above the main diagonal.")


def _extract_n(a, k, what):
    _need_square(a)
    n = a[-1] - abs(k)
    if n <= 0:
        raise ShapeError("offset=%d is out of range for %s extraction from matrices of shape %s"
                         % (k, what, fmt(a)))
    return n


def _extractdiag_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    n = _extract_n(a, attrs["offset"], "diagonal")
    return (tuple(a[:-2]) + (n,),), (d,)


def _makediag_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    if len(a) < 1:
        raise ShapeError("input A must have at least 1 dimension, got shape %s" % fmt(a))
    n = a[-1] + abs(attrs["offset"])
    return (tuple(a[:-1]) + (n, n),), (d,)


def _diag_index(xp, n, k):
    i = xp.arange(n)
    return (i - k, i) if k < 0 else (i, i + k)


@register("_linalg_extractdiag", inputs=("A",), params=[_OFFSET], infer=_extractdiag_rule,
          aliases=("linalg_extractdiag",))
def _linalg_extractdiag(xp, A, out, offset=0):
    """extractdiag(A, offset=0): the (offset) diagonal of each square matrix."""
    out[...] = xp.diagonal(A, offset, -2, -1)


@register("_linalg_makediag", inputs=("A",), params=[_OFFSET], infer=_makediag_rule,
          aliases=("linalg_makediag",))
def _linalg_makediag(xp, A, out, offset=0):
    """makediag(A, offset=0): square matrices with A on their (offset) diagonal."""
    out[...] = 0
    r, c = _diag_index(xp, A.shape[-1], offset)
    out[..., r, c] = A


def _trian_index(xp, m, k, lower):
    """(rows, cols) of the triangle in MXNet's packing order: row-major over the
    lower triangle; the upper one is packed as its transpose (column-major)."""
    i, j = xp.tril_indices(m)
    i = i + abs(k)
    if k > 0 or (k == 0 and not lower):
        return j, i
    return i, j


def _extracttrian_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    m = _extract_n(a, attrs["offset"], "triangle")
    return (tuple(a[:-2]) + (m * (m + 1) // 2,),), (d,)


def _maketrian_rule(attrs, shapes, dtypes):
    d = _float_dtype(dtypes)
    a = shapes[0]
    if len(a) < 1:
        raise ShapeError("input A must have at least 1 dimension, got shape %s" % fmt(a))
    n = a[-1]
    m = int(np.floor(0.5 + (np.sqrt(8 * n + 1) - 1.0) * 0.5))
    if m * (m + 1) // 2 != n or n == 0:
        raise ShapeError("the last axis of A %s has length %d, which is not a triangular "
                         "number m*(m+1)/2" % (fmt(a), n))
    s = m + abs(attrs["offset"])
    return (tuple(a[:-1]) + (s, s),), (d,)


_TRIAN = [_OFFSET, Param("lower", p_bool, True, "Refer to the lower triangular matrix if "
                         "lower=true, refer to the upper otherwise. Only relevant when offset=0")]


@register("_linalg_extracttrian", inputs=("A",), params=_TRIAN, infer=_extracttrian_rule,
          aliases=("linalg_extracttrian",))
def _linalg_extracttrian(xp, A, out, offset=0, lower=True):
    """extracttrian(A, offset=0, lower=True): a triangle of each square matrix, packed."""
    m = A.shape[-1] - abs(offset)
    r, c = _trian_index(xp, m, offset, lower)
    out[...] = A[..., r, c]


@register("_linalg_maketrian", inputs=("A",), params=_TRIAN, infer=_maketrian_rule,
          aliases=("linalg_maketrian",))
def _linalg_maketrian(xp, A, out, offset=0, lower=True):
    """maketrian(A, offset=0, lower=True): square matrices from packed triangles."""
    m = out.shape[-1] - abs(offset)
    out[...] = 0
    r, c = _trian_index(xp, m, offset, lower)
    out[..., r, c] = A

# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _T(F, x):
    """x with its last two axes swapped."""
    nd = x.ndim
    if nd == 2:
        return F.transpose(x)
    return F.transpose(x, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _tri(F, x, lower=True, k=0):
    """The lower (upper) triangle of each matrix of x, from diagonal k."""
    n, m = x.shape[-2], x.shape[-1]
    mask = np.tril(np.ones((n, m)), k) if lower else np.triu(np.ones((n, m)), k)
    return x * F.array(mask, ctx=x.context, dtype=x.dtype)


def _gemm_grads(F, g, a, b, ta, tb, alpha, axis):
    mm = F.linalg_gemm2
    ga = (mm(b, g, transpose_a=tb, transpose_b=True, alpha=alpha, axis=axis) if ta
          else mm(g, b, transpose_a=False, transpose_b=not tb, alpha=alpha, axis=axis))
    gb = (mm(g, a, transpose_a=True, transpose_b=ta, alpha=alpha, axis=axis) if tb
          else mm(a, g, transpose_a=not ta, transpose_b=False, alpha=alpha, axis=axis))
    return ga, gb


def _gemm_grad(F, at, ins, outs, og):
    ga, gb = _gemm_grads(F, og[0], ins[0], ins[1], at["transpose_a"], at["transpose_b"],
                         at["alpha"], at["axis"])
    return [ga, gb, og[0] * at["beta"]]


def _gemm2_grad(F, at, ins, outs, og):
    return list(_gemm_grads(F, og[0], ins[0], ins[1], at["transpose_a"], at["transpose_b"],
                            at["alpha"], at["axis"]))


def _potrf_grad(F, at, ins, outs, og):
    # dA = 0.5 * L^-T copyLTU(L^T dL) L^-1 (lower); the transposed form for upper
    L, g = outs[0], og[0]
    lo = at["lower"]
    if lo:
        M = F.linalg_trmm(L, g, transpose=True)                       # L^T dL
        S = _tri(F, M) + _T(F, _tri(F, M, True, -1))                  # copy lower up
        X = F.linalg_trsm(L, S, transpose=True)                       # L^-T S
        return [F.linalg_trsm(L, X, rightside=True, alpha=0.5)]       # X L^-1 / 2
    M = F.linalg_trmm(L, g, rightside=True, lower=False, transpose=True)   # dU U^T
    S = _tri(F, M, False) + _T(F, _tri(F, M, False, 1))                    # copy upper down
    X = F.linalg_trsm(L, S, lower=False)                                   # U^-1 S
    return [F.linalg_trsm(L, X, rightside=True, lower=False, transpose=True, alpha=0.5)]


def _potri_grad(F, at, ins, outs, og):
    # dB = -tril(A (dA + dA^T) B^-T) (lower); the transposed form for upper
    B, A, g = ins[0], outs[0], og[0]
    S = g + _T(F, g)
    if at["lower"]:
        X = F.linalg_trsm(B, F.linalg_gemm2(A, S), rightside=True, transpose=True, alpha=-1.0)
        return [_tri(F, X)]
    X = F.linalg_trsm(B, F.linalg_gemm2(S, A), lower=False, transpose=True, alpha=-1.0)
    return [_tri(F, X, False)]


def _trsm_grad(F, at, ins, outs, og):
    A, C, g = ins[0], outs[0], og[0]
    tr, rs, lo, alpha = at["transpose"], at["rightside"], at["lower"], at["alpha"]
    dB = F.linalg_trsm(A, g, transpose=not tr, rightside=rs, lower=lo, alpha=alpha)
    if alpha == 0.0:
        return [F.zeros_like(A), dB]
    s = -1.0 / alpha
    if rs == tr:
        dA = F.linalg_gemm2(dB, C, transpose_a=tr, transpose_b=not tr, alpha=s)
    else:
        dA = F.linalg_gemm2(C, dB, transpose_a=not tr, transpose_b=tr, alpha=s)
    return [_tri(F, dA, lo), dB]


def _trmm_grad(F, at, ins, outs, og):
    A, B, g = ins[0], ins[1], og[0]
    tr, rs, lo, alpha = at["transpose"], at["rightside"], at["lower"], at["alpha"]
    if rs == tr:
        dA = F.linalg_gemm2(g, B, transpose_a=tr, transpose_b=not tr, alpha=alpha)
    else:
        dA = F.linalg_gemm2(B, g, transpose_a=not tr, transpose_b=tr, alpha=alpha)
    dB = F.linalg_trmm(A, g, transpose=not tr, rightside=rs, lower=lo, alpha=alpha)
    return [_tri(F, dA, lo), dB]


def _syrk_grad(F, at, ins, outs, og):
    A, g = ins[0], og[0]
    al = at["alpha"]
    if at["transpose"]:     # B = alpha A^T A: dA = alpha A (dB + dB^T)
        return [F.linalg_gemm2(A, g, alpha=al) + F.linalg_gemm2(A, g, transpose_b=True, alpha=al)]
    return [F.linalg_gemm2(g, A, alpha=al) + F.linalg_gemm2(g, A, transpose_a=True, alpha=al)]


def _inverse_grad(F, at, ins, outs, og):
    # dB = -A^T dA A^T with A = inverse(B)
    A, g = outs[0], og[0]
    t = F.linalg_gemm2(g, A, transpose_b=True)
    return [F.linalg_gemm2(A, t, transpose_a=True, alpha=-1.0)]


def _safe_inverse_T(F, A, ok):
    """inverse(A)^T where ``ok`` (batch + (1, 1), 1.0/0.0) holds; identity
    stands in for singular matrices, whose gradient MXNet sets to zero."""
    eye = F.eye(A.shape[-1], ctx=A.context, dtype=A.dtype)
    return _T(F, F.linalg_inverse(A * ok + eye * (1.0 - ok)))


def _bshape(A):
    return tuple(A.shape[:-2]) + (1, 1)


def _det_grad(F, at, ins, outs, og):
    # Jacobi: d det / dA = det * A^-T; zero where det == 0 (as MXNet)
    A, d, g = ins[0], outs[0], og[0]
    bs = _bshape(A)
    ok = (d != 0.0).reshape(bs)
    return [(g * d).reshape(bs) * _safe_inverse_T(F, A, ok)]


def _slogdet_grad(F, at, ins, outs, og):
    # d log|det| / dA = A^-T; the sign has no gradient; zero where det == 0
    A, ld, g = ins[0], outs[1], og[1]
    bs = _bshape(A)
    ok = (ld != float("-inf")).reshape(bs)
    return [g.reshape(bs) * ok * _safe_inverse_T(F, A, ok)]


def _sumlogdiag_grad(F, at, ins, outs, og):
    A, g = ins[0], og[0]
    gs = g.reshape(tuple(A.shape[:-2]) + (1,)) if A.ndim > 2 else g.reshape((1,))
    return [F.linalg_makediag(gs / F.linalg_extractdiag(A))]


set_grads({
    "_linalg_gemm": _gemm_grad,
    "_linalg_gemm2": _gemm2_grad,
    "_linalg_potrf": _potrf_grad,
    "_linalg_potri": _potri_grad,
    "_linalg_trsm": _trsm_grad,
    "_linalg_trmm": _trmm_grad,
    "_linalg_syrk": _syrk_grad,
    "_linalg_inverse": _inverse_grad,
    "_linalg_det": _det_grad,
    "_linalg_slogdet": _slogdet_grad,
    "_linalg_sumlogdiag": _sumlogdiag_grad,
    "_linalg_extractdiag": lambda F, at, ins, outs, og: [
        F.linalg_makediag(og[0], offset=at["offset"])],
    "_linalg_makediag": lambda F, at, ins, outs, og: [
        F.linalg_extractdiag(og[0], offset=at["offset"])],
    "_linalg_extracttrian": lambda F, at, ins, outs, og: [
        F.linalg_maketrian(og[0], offset=at["offset"], lower=at["lower"])],
    "_linalg_maketrian": lambda F, at, ins, outs, og: [
        F.linalg_extracttrian(og[0], offset=at["offset"], lower=at["lower"])],
})
