"""Products and ``np.linalg`` as front functions (see ``_front``): ``dot``,
``matmul``, ``tensordot``, ``inner``, ``outer``, ``vdot``, ``einsum`` and
``mx.np.linalg``'s norm, svd, cholesky, inv, det, slogdet, solve, pinv,
tensorinv, tensorsolve, eig, eigh, eigvals, eigvalsh."""
from __future__ import annotations

import numbers

import numpy as _np

from ..base import numeric_types
from ._f_reduce import axis_attr
from ._front import front
from ._fuse_dot import fused_dot


def _flat(F, a):
    return F.op("_np_reshape", [a], {"newshape": (-1,)})


def _is_scalar(x):
    return isinstance(x, numeric_types) and not isinstance(x, _np.ndarray)


def _pair(F, a, b):
    if _is_scalar(a) and not _is_scalar(b):
        b = F.arr(b)
        return F.arr(a, like=b), b
    a = F.arr(a)
    return a, F.arr(b, like=a)


@front("dot")
def _dot(F, a, b, out=None):
    """NumPy's dot: inner product of vectors, matrix product of matrices, a sum
    over ``a``'s last axis and ``b``'s second-to-last otherwise."""
    a, b = _pair(F, a, b)
    fused = fused_dot(F, a, b) if out is None else None
    if fused is not None:
        return fused
    return F.op("_np_dot", [a, b], None, out)


@front("matmul")
def _matmul(F, a, b, out=None, **kwargs):
    """NumPy's matmul: matrix products broadcast over the leading axes."""
    if kwargs:
        from ..util import _np_ufunc_check
        _np_ufunc_check("matmul", kwargs)
    a, b = _pair(F, a, b)
    return F.op("_npi_matmul", [a, b], None, out)


@front("tensordot")
def _tensordot(F, a, b, axes=2):
    """Sums of products over ``axes`` (an int: ``a``'s last and ``b``'s first
    ones; or a pair of axis lists)."""
    a, b = _pair(F, a, b)
    if isinstance(axes, numbers.Integral):
        return F.op("_npi_tensordot_int_axes", [a, b], {"axes": int(axes)})
    if len(axes) != 2:
        raise ValueError("tensordot: axes must be an int or a pair of axis lists, got %r"
                         % (axes,))
    ax_a, ax_b = axes
    ax_a = (int(ax_a),) if isinstance(ax_a, numbers.Integral) else tuple(int(x) for x in ax_a)
    ax_b = (int(ax_b),) if isinstance(ax_b, numbers.Integral) else tuple(int(x) for x in ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError("tensordot: axes to sum over must have the same length, got %r"
                         % (axes,))
    return F.op("_npi_tensordot", [a, b], {"a_axes_summed": ax_a, "b_axes_summed": ax_b})


@front("inner")
def _inner(F, a, b):
    """Inner product over the last axes of ``a`` and ``b``."""
    return _tensordot(F, a, b, ([-1], [-1]))


@front("outer")
def _outer(F, a, b):
    """Outer product of the flattened ``a`` and ``b``."""
    a, b = _pair(F, a, b)
    return _tensordot(F, _flat(F, a), _flat(F, b), 0)


@front("vdot")
def _vdot(F, a, b):
    """Dot product of the flattened ``a`` and ``b``."""
    a, b = _pair(F, a, b)
    return _tensordot(F, _flat(F, a), _flat(F, b), 1)


@front("einsum")
def _einsum(F, *operands, **kwargs):
    """Einstein summation: ``einsum(subscripts, *operands, out=None, optimize=False)``."""
    out = kwargs.pop("out", None)
    optimize = kwargs.pop("optimize", False)
    if kwargs:
        raise TypeError("einsum() got unexpected keyword argument(s) %s" % sorted(kwargs))
    if not operands or not isinstance(operands[0], str):
        raise TypeError("einsum: the first argument must be the subscripts string")
    subscripts, arrs = operands[0], operands[1:]
    if not arrs:
        raise ValueError("einsum: at least one operand is needed")
    first = next((x for x in arrs if F.isarr(x)), None)
    arrs = [F.arr(x, like=first) for x in arrs]
    return F.op("_npi_einsum", arrs, {"subscripts": subscripts,
                                      "optimize": int(bool(optimize))}, out)


# ------------------------------------------------------------------ np.linalg
@front("norm", ns="np.linalg")
def _norm(F, x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """Matrix or vector norm: ``ord`` None/'fro'/'nuc'/inf/-inf/numbers, over
    ``axis`` (an int: vector norms; a pair: matrix norms)."""
    if isinstance(ord, str) and ord not in ("fro", "nuc", "inf", "-inf"):
        raise ValueError("norm: invalid norm order %r" % ord)
    if axis is not None and not isinstance(axis, numbers.Integral):
        axis = tuple(int(a) for a in axis)
        if len(axis) not in (1, 2):
            raise ValueError("norm: improper number of dimensions to norm (axis=%r)" % (axis,))
        if len(axis) == 1:
            axis = axis[0]
    if isinstance(axis, numbers.Integral) and ord in ("fro", "nuc"):
        raise ValueError("norm: invalid norm order %r for vectors" % ord)
    o = ord
    if o is not None and not isinstance(o, str):
        o = float(o)
    return F.op("_npi_norm", [F.arr(x)], {"ord": o, "axis": axis_attr(axis),
                                          "keepdims": bool(keepdims)})


def _lin(name, doc, nout=1):
    def impl(F, a):
        r = F.op("_npi_" + name, [F.arr(a)], {})
        return tuple(r) if nout > 1 else r
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = doc
    front(name, ns="np.linalg")(impl)
    return impl


_lin("svd", "Singular value decomposition of (a batch of) rows <= columns matrices: "
     "``ut, l, v`` with ``a = ut @ diag(l) @ v``, ``l`` descending.", 3)
_lin("inv", "The inverse of (a batch of) square matrices.")
_lin("det", "The determinant of (a batch of) square matrices.")
_lin("slogdet", "Sign and natural log of the absolute determinant.", 2)
_lin("eigvals", "The (real) eigenvalues of (a batch of) square matrices.")
_lin("eig", "The (real) eigenvalues and right eigenvectors of (a batch of) square "
     "matrices.", 2)


@front("cholesky", ns="np.linalg")
def _cholesky(F, a):
    """The lower Cholesky factor ``L`` of a symmetric positive-definite matrix (``a = L L^T``)."""
    return F.op("_npi_cholesky", [F.arr(a)], {})


def _uplo(UPLO):  # noqa: N803 - NumPy's name
    if UPLO not in ("L", "U", "l", "u"):
        raise ValueError("UPLO argument must be 'L' or 'U', got %r" % (UPLO,))
    return UPLO.upper()


@front("eigvalsh", ns="np.linalg")
def _eigvalsh(F, a, UPLO="L"):  # noqa: N803
    """Eigenvalues (ascending) of a symmetric matrix, read from its ``UPLO`` triangle."""
    return F.op("_npi_eigvalsh", [F.arr(a)], {"UPLO": _uplo(UPLO)})


@front("eigh", ns="np.linalg")
def _eigh(F, a, UPLO="L"):  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    return tuple(F.op("_npi_eigh", [F.arr(a)], {"UPLO": _uplo(UPLO)}))


@front("solve", ns="np.linalg")
def _solve(F, a, b):
    """``x`` with ``a @ x = b`` (``b`` a vector or matrix per batch)."""
    a, b = _pair(F, a, b)
    return F.op("_npi_solve", [a, b], {})


@front("tensorinv", ns="np.linalg")
def _tensorinv(F, a, ind=2):
    """The inverse of ``a`` as a tensor of ``ind`` leading indices."""
    if not isinstance(ind, numbers.Integral) or ind <= 0:
        raise ValueError("tensorinv: ind must be a positive integer, got %r" % (ind,))
    return F.op("_npi_tensorinv", [F.arr(a)], {"ind": int(ind)})


@front("tensorsolve", ns="np.linalg")
def _tensorsolve(F, a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b`` (``axes``: axes of ``a`` to move last)."""
    a, b = _pair(F, a, b)
    ax = () if axes is None else tuple(int(x) for x in axes)
    return F.op("_npi_tensorsolve", [a, b], {"a_axes": ax})


@front("pinv", ns="np.linalg")
def _pinv(F, a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse (singular values below ``rcond`` times
    the largest are dropped; ``rcond`` a number or an array per matrix)."""
    a = F.arr(a)
    if _is_scalar(rcond):
        return F.op("_npi_pinv_scalar_rcond", [a], {"rcond": float(rcond),
                                                    "hermitian": bool(hermitian)})
    return F.op("_npi_pinv", [a, F.arr(rcond, like=a)], {"hermitian": bool(hermitian)})


@front("qr", ns="np.linalg")
def _qr(F, a, mode="reduced"):
    """The reduced QR factorization ``q, r`` of (a batch of) matrices."""
    if mode != "reduced":
        raise NotImplementedError("qr: only mode='reduced' is supported, got %r" % (mode,))
    return tuple(F.op("_npi_qr", [F.arr(a)], {}))


@front("matrix_rank", ns="np.linalg")
def _matrix_rank(F, M, tol=None, hermitian=False):  # noqa: N803 - NumPy's name
    """The rank of (a batch of) matrices: singular values above ``tol``."""
    if tol is not None and not _is_scalar(tol):
        raise TypeError("matrix_rank: tol must be a number, got %r" % (tol,))
    return F.op("_npi_matrix_rank", [F.arr(M)], {"tol": None if tol is None else float(tol),
                                                 "hermitian": bool(hermitian)})


@front("cond", ns="np.linalg")
def _cond(F, x, p=None):
    """The condition number of (a batch of) matrices in the norm ``p``."""
    if isinstance(p, str) and p not in ("fro", "nuc"):
        raise ValueError("cond: invalid norm order %r" % p)
    return F.op("_npi_cond", [F.arr(x)], {"p": p if p is None or isinstance(p, str)
                                          else float(p)})


@front("matrix_power", ns="np.linalg")
def _matrix_power(F, a, n):
    """``a`` to the integer power ``n`` (``inv`` for n < 0, the identity for 0)."""
    if not isinstance(n, numbers.Integral):
        raise TypeError("matrix_power: exponent must be an integer, got %r" % (n,))
    return F.op("_npi_matrix_power", [F.arr(a)], {"n": int(n)})


@front("multi_dot", ns="np.linalg")
def _multi_dot(F, arrays, out=None):
    """``dot`` of two or more arrays, left to right (1-D first/last allowed)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    r = F.arr(arrays[0])
    for i, b in enumerate(arrays[1:]):
        r = F.op("_np_dot", [r, F.arr(b, like=r)], None, out if i == len(arrays) - 2 else None)
    return r


@front("lstsq", ns="np.linalg")
def _lstsq(F, a, b, rcond="warn"):
    """Least-squares solution ``x`` of ``a @ x = b``, with the residuals, the rank
    of ``a`` and its singular values."""
    from ._f_reduce import _dynamic
    a, b = _pair(F, a, b)
    return tuple(_dynamic(F, "_npi_lstsq", [a, b], {"rcond": rcond}))
