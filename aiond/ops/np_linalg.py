"""``np.linalg`` ops (MXNet's ``_npi_norm``, ``_npi_svd``, ``_npi_cholesky``,
``_npi_inv``, ``_npi_det``, ``_npi_slogdet``, ``_npi_solve``, ``_npi_tensorinv``,
``_npi_tensorsolve``, ``_npi_pinv``, ``_npi_eig``, ``_npi_eigh``, ...).

Kernels are one ``xp`` body (batched ``xp.linalg``); gradients are host
formulas in ``_backward_<op>`` kernels (see ``_np_bwd``). Decompositions take
float32/float64 as MXNet's do; eigenvalue ops also take integer matrices
(float32 results).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._np_bwd import backward
from ._rules import fmt, norm_axis
from .np_ops import promote
from .registry import Param, p_any, p_axis, p_bool, p_float, p_int, p_str, register

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _sw(xp, a):
    return xp.swapaxes(a, -1, -2)


def _floats(dtypes, what):
    for d in dtypes:
        if d not in _FLOATS and d != np.dtype(np.float16):
            raise OpError("%s supports float32 and float64 only, got %s (cast with "
                          ".astype('float32'))" % (what, d.name))
    return dtypes[0]


# ================================================================ np.linalg
def _lin_err(xp):
    return getattr(xp.linalg, "LinAlgError", np.linalg.LinAlgError)


def _square(shape, what="a"):
    if len(shape) < 2:
        raise ShapeError("%d-dimensional array given. Array must be at least two-dimensional"
                         % len(shape))
    if shape[-1] != shape[-2]:
        raise ShapeError("Last 2 dimensions of the array must be square (%s has shape %s)"
                         % (what, fmt(shape)))


def _fdt(d):
    return d if d in _FLOATS else np.dtype(np.float32)


# ---------------------------------------------------------------- norm
def _norm_ord(o):
    if isinstance(o, str):
        s = o.strip()
        if s in ("fro", "nuc"):
            return s
        if s in ("inf", "-inf"):
            return float(s)
        if s in ("None", ""):
            return None
    return None if o is None else float(o)


def _norm_axes(attrs, ndim):
    axis = attrs["axis"]
    if axis is None:
        return None
    if isinstance(axis, int):
        return (norm_axis(axis, ndim),)
    ax = tuple(norm_axis(a, ndim) for a in axis)
    if len(set(ax)) != len(ax):
        raise OpError("norm: duplicate axes given: %s" % (axis,))
    return ax


def _norm_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    ordv = _norm_ord(attrs["ord"])
    ax = _norm_axes(attrs, len(shape))
    if ax is None:
        if ordv is not None and len(shape) > 2:
            raise OpError("norm: improper number of dimensions to norm (ord=%r needs a vector "
                          "or matrix, got shape %s)" % (attrs["ord"], fmt(shape)))
        ax = tuple(range(len(shape)))
        if ordv is None:            # the 2-norm of the flattened array
            out = (1,) * len(shape) if attrs["keepdims"] else ()
            return (out,), (_fdt(dtypes[0]),)
    if len(ax) > 2:
        raise OpError("norm: improper number of dimensions to norm (axis=%s)" % (attrs["axis"],))
    if len(ax) == 1 and isinstance(ordv, str):
        raise OpError("norm: invalid norm order %r for vectors" % ordv)
    if len(ax) == 2 and ordv is not None and not isinstance(ordv, str) and \
            ordv not in (1.0, -1.0, 2.0, -2.0, np.inf, -np.inf):
        raise OpError("norm: invalid norm order %r for matrices" % attrs["ord"])
    if attrs["keepdims"]:
        out = tuple(1 if i in ax else d for i, d in enumerate(shape))
    else:
        out = tuple(d for i, d in enumerate(shape) if i not in ax)
    return (out,), (_fdt(dtypes[0]),)


def _norm_axes_full(attrs, ndim):
    ax = _norm_axes(attrs, ndim)
    if ax is None:
        ordv = _norm_ord(attrs["ord"])
        if ordv is None:
            return None
        return tuple(range(ndim))
    return ax


def _npi_norm_kernel(xp, x, out, ord=None, axis=None, keepdims=False, flag=None):
    ordv = _norm_ord(ord)
    ax = _norm_axes({"axis": axis}, x.ndim)
    x = x.astype(out.dtype, copy=False)
    if ax is None:
        if ordv is None:
            out[...] = xp.sqrt(xp.sum(x * x)).reshape(out.shape)
            return
        ax = tuple(range(x.ndim))
    if x.size == 0 and len(ax) == 2 and ordv not in (None, "fro"):
        out[...] = 0
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        r = xp.linalg.norm(x, ord=ordv, axis=ax if len(ax) > 1 else ax[0], keepdims=keepdims)
    out[...] = xp.reshape(r, out.shape)


register("_npi_norm", params=[Param("ord", p_any, None, "order of the norm"),
                              Param("axis", p_axis, None, "axis or pair of axes"),
                              Param("keepdims", p_bool, False, "keep the reduced axes"),
                              Param("flag", p_int, -1, "MXNet's norm kind (unused)")],
         infer=_norm_rule, inline=False)(_npi_norm_kernel)


def _norm_bwd(xp, og, ins, outs, ord=None, axis=None, keepdims=False, flag=None):
    x = ins[0]
    y = outs[0]
    g = og[0]
    ordv = _norm_ord(ord)
    ax = _norm_axes({"axis": axis}, x.ndim)
    if ax is None:
        ax = tuple(range(x.ndim))
        if ordv is None:
            ordv = 2.0 if x.ndim == 1 else "fro"
    if ordv is None:
        ordv = 2.0 if len(ax) == 1 else "fro"
    shp = [1 if i in ax else d for i, d in enumerate(x.shape)]
    y = xp.reshape(y, shp)
    g = xp.reshape(g, shp)
    with np.errstate(divide="ignore", invalid="ignore"):
        if len(ax) == 1 or ordv == "fro":
            if ordv == "fro" or ordv == 2.0:
                r = x / y
            elif ordv in (np.inf, -np.inf):
                r = xp.sign(x) * (xp.abs(x) == y)
                r = r / xp.maximum(xp.sum(r != 0, axis=ax, keepdims=True), 1)
            elif ordv == 0:
                r = xp.zeros_like(x)
            elif ordv == 1:
                r = xp.sign(x)
            else:
                r = xp.sign(x) * xp.power(xp.abs(x) / y, ordv - 1)
            r = xp.where(xp.isfinite(r), r, 0)
            return [r * g]
        # matrix norms over two axes: move them last
        a0, a1 = ax
        xm = xp.moveaxis(x, (a0, a1), (-2, -1))
        gm = xp.moveaxis(g, (a0, a1), (-2, -1))
        if ordv in ("nuc", 2.0, -2.0):
            u, s, vt = xp.linalg.svd(xm, full_matrices=False)
            if ordv == "nuc":
                r = xp.matmul(u, vt)
            else:
                k = 0 if ordv == 2.0 else -1
                r = u[..., :, k:k + 1 if k == 0 else None] * vt[..., k:k + 1 if k == 0 else None, :]
            r = r * gm
        else:
            col = ordv in (1.0, -1.0)
            sums = xp.sum(xp.abs(xm), axis=-2 if col else -1, keepdims=True)
            pick = xp.max(sums, axis=-1 if col else -2, keepdims=True) if ordv > 0 else \
                xp.min(sums, axis=-1 if col else -2, keepdims=True)
            r = xp.sign(xm) * (sums == pick) * gm
        return [xp.moveaxis(r, (-2, -1), (a0, a1))]


backward("_npi_norm", _norm_bwd)


# ---------------------------------------------------------------- decompositions
def _svd_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("svd: a must be at least 2-D, got shape %s" % fmt(s))
    m, n = s[-2], s[-1]
    if m > n:
        raise ShapeError("svd: MXNet's svd needs rows <= columns (shape %s); transpose the "
                         "input" % fmt(s))
    d = _floats(dtypes, "svd")
    b = s[:-2]
    return (b + (m, m), b + (m,), b + (m, n)), (d, d, d)


@register("_npi_svd", params=[], infer=_svd_rule, num_outputs=3, inline=False,
          output_names=("ut", "l", "v"))
def _npi_svd(xp, a, out):
    """_npi_svd(a): ut, l, v with a = ut @ diag(l) @ v (l descending)."""
    ut, l, v = out
    if a.size == 0:
        ut[...] = xp.eye(ut.shape[-1], dtype=ut.dtype) if ut.size else 0
        l[...] = 0
        v[...] = 0
        return
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    ut[...] = u
    l[...] = s
    v[...] = vt


def _svd_bwd(xp, og, ins, outs):
    dut, dl, dv = og
    ut, l, v = outs
    m = v.shape[-2]
    if ins[0].size == 0:
        return [xp.zeros(ins[0].shape, ins[0].dtype)]
    li = l[..., :, None]
    lj = l[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = 1.0 / (xp.maximum(li - lj, 1e-20) * xp.maximum(li + lj, 1e-20))
        upper = xp.triu(xp.ones((m, m), dtype=bool), 1)
        e = xp.where(upper, e, 0)
        e = e - _sw(xp, e)
        g1 = xp.matmul(dv / li, _sw(xp, v)) * lj + xp.matmul(_sw(xp, dut), ut)
        x = g1 * e
        eye = xp.eye(m, dtype=v.dtype)
        g2 = dl[..., :, None] * eye + \
            (x + _sw(xp, x)) * lj - xp.matmul(dv, _sw(xp, v)) / li * eye
        da = xp.matmul(ut, xp.matmul(g2, v) + dv / li)
    return [da]


backward("_npi_svd", _svd_bwd)


def _sq_rule(name, outs=1, vec=False):
    def rule(attrs, shapes, dtypes):
        s = tuple(shapes[0])
        _square(s)
        d = _floats(dtypes, name)
        if vec:
            return (s[:-1],), (d,)
        return (s,) * outs, (d,) * outs
    return rule


@register("_npi_cholesky", params=[Param("lower", p_bool, True, "the lower factor (False: upper)")],
          infer=_sq_rule("cholesky"), inline=False)
def _npi_cholesky(xp, a, out, lower=True):
    """_npi_cholesky(a): the lower Cholesky factor L (a = L L^T)."""
    if a.size == 0:
        return
    try:
        r = xp.linalg.cholesky(a)
    except _lin_err(xp):
        raise OpError("cholesky: the matrix is not positive-definite") from None
    out[...] = r if lower else _sw(xp, r)


def _chol_bwd(xp, og, ins, outs, lower=True):
    lo = outs[0]
    g = og[0]
    if not lower:
        lo, g = _sw(xp, lo), _sw(xp, g)
    if lo.size == 0:
        return [xp.zeros_like(lo)]
    li = xp.linalg.inv(lo)
    p = xp.matmul(_sw(xp, lo), g)
    # the lower triangle mirrored to the upper one
    p = xp.tril(p) + _sw(xp, xp.tril(p, -1))
    return [0.5 * xp.matmul(xp.matmul(_sw(xp, li), p), li)]


backward("_npi_cholesky", _chol_bwd)


@register("_npi_inv", params=[], infer=_sq_rule("inv"), inline=False)
def _npi_inv(xp, a, out):
    """_npi_inv(a): the inverse matrix."""
    if a.size == 0:
        return
    try:
        out[...] = xp.linalg.inv(a)
    except _lin_err(xp):
        raise OpError("inv: singular matrix") from None


backward("_npi_inv", lambda xp, og, ins, outs: [
    -xp.matmul(_sw(xp, outs[0]), xp.matmul(og[0], _sw(xp, outs[0])))])


def _det_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    _square(s)
    d = _floats(dtypes, "det")
    return (s[:-2],), (d,)


@register("_npi_det", params=[], infer=_det_rule, inline=False)
def _npi_det(xp, a, out):
    """_npi_det(a): the determinant."""
    if a.size == 0:
        out[...] = 1
        return
    out[...] = xp.linalg.det(a)


def _inv_t(xp, a):
    # A^-T for the gradients of det/slogdet (pinv for singular matrices)
    try:
        return _sw(xp, xp.linalg.inv(a))
    except _lin_err(xp):
        return _sw(xp, xp.linalg.pinv(a))


backward("_npi_det", lambda xp, og, ins, outs: [
    (og[0] * outs[0])[..., None, None] * _inv_t(xp, ins[0]) if ins[0].size else
    xp.zeros_like(ins[0])])


def _slogdet_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    _square(s)
    d = _floats(dtypes, "slogdet")
    return (s[:-2], s[:-2]), (d, d)


@register("_npi_slogdet", params=[], infer=_slogdet_rule, num_outputs=2, inline=False,
          output_names=("sign", "logdet"))
def _npi_slogdet(xp, a, out):
    """_npi_slogdet(a): sign and log|det|."""
    if a.size == 0:
        out[0][...] = 1
        out[1][...] = 0
        return
    s, ld = xp.linalg.slogdet(a)
    out[0][...] = s
    out[1][...] = ld


backward("_npi_slogdet", lambda xp, og, ins, outs: [
    og[1][..., None, None] * _inv_t(xp, ins[0]) if ins[0].size else xp.zeros_like(ins[0])])


def _solve_rule(attrs, shapes, dtypes):
    a, b = tuple(shapes[0]), tuple(shapes[1])
    _square(a)
    if len(b) == len(a) - 1:
        if b != a[:-1]:
            raise ShapeError("solve: b %s does not match a %s" % (fmt(b), fmt(a)))
    elif len(b) != len(a) or b[:-1] != a[:-1]:
        raise ShapeError("solve: b %s does not match a %s" % (fmt(b), fmt(a)))
    d = _floats(dtypes, "solve")
    return (b,), (d,)


def _solve_vec(a, b):
    return b.ndim == a.ndim - 1


@register("_npi_solve", inputs=("a", "b"), params=[], infer=_solve_rule, inline=False)
def _npi_solve(xp, a, b, out):
    """_npi_solve(a, b): x with a @ x = b."""
    if out.size == 0 or a.size == 0:
        out[...] = 0
        return
    bb = b[..., None] if _solve_vec(a, b) else b
    try:
        r = xp.linalg.solve(a, bb.astype(a.dtype, copy=False))
    except _lin_err(xp):
        raise OpError("solve: singular matrix") from None
    out[...] = r.reshape(out.shape)


def _solve_bwd(xp, og, ins, outs):
    a, b = ins
    if a.size == 0 or b.size == 0:
        return [xp.zeros_like(a), xp.zeros_like(b)]
    vec = _solve_vec(a, b)
    x = outs[0][..., None] if vec else outs[0]
    g = og[0][..., None] if vec else og[0]
    gb = xp.linalg.solve(_sw(xp, a), g)
    ga = -xp.matmul(gb, _sw(xp, x))
    return [ga, gb.reshape(b.shape)]


backward("_npi_solve", _solve_bwd)


def _tinv_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    ind = attrs["ind"]
    if ind <= 0:
        raise OpError("tensorinv: ind must be > 0, got %d" % ind)
    a, b = s[:ind], s[ind:]
    if int(np.prod(a)) != int(np.prod(b)):
        raise ShapeError("tensorinv: prod(a.shape[:ind]) must equal prod(a.shape[ind:]), got "
                         "shape %s with ind=%d" % (fmt(s), ind))
    return (b + a,), (_floats(dtypes, "tensorinv"),)


@register("_npi_tensorinv", params=[Param("ind", p_int, 2, "number of leading indices")],
          infer=_tinv_rule, inline=False)
def _npi_tensorinv(xp, a, out, ind=2):
    """_npi_tensorinv(a, ind): the inverse of a as an ind-index tensor."""
    n = int(np.prod(a.shape[:ind]))
    if n == 0:
        return
    try:
        out[...] = xp.linalg.inv(a.reshape(n, n)).reshape(out.shape)
    except _lin_err(xp):
        raise OpError("tensorinv: singular matrix") from None


def _tinv_bwd(xp, og, ins, outs, ind=2):
    a = ins[0]
    n = int(np.prod(a.shape[:ind]))
    if n == 0:
        return [xp.zeros_like(a)]
    inv = outs[0].reshape(n, n)
    g = og[0].reshape(n, n)
    return [-xp.matmul(inv.T, xp.matmul(g, inv.T)).reshape(a.shape)]


backward("_npi_tensorinv", _tinv_bwd)


def _tsolve_prep(xp_shape_a, nb, axes):
    na = len(xp_shape_a)
    axes = tuple(norm_axis(x, na) for x in (axes or ()))
    perm = [i for i in range(na) if i not in axes] + list(axes)
    return perm


def _tsolve_rule(attrs, shapes, dtypes):
    a, b = tuple(shapes[0]), tuple(shapes[1])
    perm = _tsolve_prep(a, len(b), attrs["a_axes"])
    at = tuple(a[i] for i in perm)
    # x takes a's trailing axes beyond b's count (MXNet: all of a's when the
    # counts are equal, none when a is 0-d)
    x = at[-(len(at) - len(b)):]
    n = int(np.prod(x))
    if n * n != int(np.prod(a)) or n != int(np.prod(b)):
        raise ShapeError("tensorsolve: a %s (axes moved: %s) and b %s do not make a square "
                         "problem" % (fmt(a), fmt(at), fmt(b)))
    return (x,), (_floats([promote(*dtypes)], "tensorsolve"),)


@register("_npi_tensorsolve", inputs=("a", "b"),
          params=[Param("a_axes", p_axis, (), "axes of a to move to the end")],
          infer=_tsolve_rule, inline=False)
def _npi_tensorsolve(xp, a, b, out, a_axes=()):
    """_npi_tensorsolve(a, b, a_axes): x with tensordot(a, x, x.ndim) = b."""
    perm = _tsolve_prep(a.shape, b.ndim, a_axes)
    at = xp.transpose(a, perm).astype(out.dtype, copy=False)
    n = int(np.prod(out.shape))
    if n == 0:
        return
    try:
        r = xp.linalg.solve(at.reshape(n, n), b.reshape(-1).astype(out.dtype, copy=False))
    except _lin_err(xp):
        raise OpError("tensorsolve: singular matrix") from None
    out[...] = r.reshape(out.shape)


def _tsolve_bwd(xp, og, ins, outs, a_axes=()):
    a, b = ins
    perm = _tsolve_prep(a.shape, b.ndim, a_axes)
    at = xp.transpose(a, perm)
    n = int(np.prod(outs[0].shape))
    if n == 0:
        return [xp.zeros_like(a), xp.zeros_like(b)]
    m = at.reshape(n, n)
    gb = xp.linalg.solve(m.T, og[0].reshape(-1))
    gm = -xp.outer(gb, outs[0].reshape(-1))
    ga = xp.transpose(gm.reshape(at.shape), np.argsort(perm))
    return [ga, gb.reshape(b.shape)]


backward("_npi_tensorsolve", _tsolve_bwd)


def _pinv_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("pinv: a must be at least 2-D, got shape %s" % fmt(s))
    return (s[:-2] + (s[-1], s[-2]),), (_floats(dtypes[:1], "pinv"),)


def _pinv_kernel(xp, a, *rc, out, rcond=1e-15, hermitian=False):
    if a.size == 0:
        return
    u, sv, vt = xp.linalg.svd(a, full_matrices=False)
    r = rc[0].astype(sv.dtype)[..., None] if rc else rcond
    cutoff = r * xp.max(sv, axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        sinv = xp.where(sv > cutoff, 1.0 / sv, 0)
    out[...] = xp.matmul(_sw(xp, vt) * sinv[..., None, :], _sw(xp, u))


register("_npi_pinv", inputs=("A", "rcond"), params=[
    Param("hermitian", p_bool, False, "a is Hermitian")], infer=_pinv_rule,
    inline=False)(lambda xp, a, rc, out, hermitian=False: _pinv_kernel(
        xp, a, rc, out=out, hermitian=hermitian))
register("_npi_pinv_scalar_rcond", inputs=("A",), params=[
    Param("rcond", p_float, 1e-15, "cutoff for small singular values"),
    Param("hermitian", p_bool, False, "a is Hermitian")], infer=_pinv_rule,
    inline=False)(_pinv_kernel)


def _eig_rule(kind):
    def rule(attrs, shapes, dtypes):
        s = tuple(shapes[0])
        _square(s)
        d = _fdt(dtypes[0])         # integer matrices give float32, as MXNet's
        if kind in ("eigvals", "eigvalsh"):
            return (s[:-1],), (d,)
        return (s[:-1], s), (d, d)
    return rule


def _uplo(attrs_uplo):
    u = str(attrs_uplo).upper()
    if u not in ("L", "U"):
        raise OpError("UPLO argument must be 'L' or 'U', got %r" % attrs_uplo)
    return u


def _real_eig(xp, a, vectors):
    if a.size == 0:
        return None
    a = a if a.dtype.kind == "f" else a.astype(np.float64)
    try:
        r = xp.linalg.eig(a) if vectors else xp.linalg.eigvals(a)
    except _lin_err(xp):
        raise OpError("eig: eigenvalues did not converge") from None
    w = r[0] if vectors else r
    if xp.iscomplexobj(w) and xp.any(xp.abs(w.imag) > 1e-6 * xp.maximum(1, xp.abs(w.real))):
        raise OpError("eig: the matrix has complex eigenvalues; mx.np supports only real ones")
    if vectors:
        return w.real, r[1].real
    return w.real


@register("_npi_eigvals", params=[], infer=_eig_rule("eigvals"), inline=False)
def _npi_eigvals(xp, a, out):
    """_npi_eigvals(a): the (real) eigenvalues of a square matrix."""
    r = _real_eig(xp, a, False)
    if r is not None:
        out[...] = r


@register("_npi_eig", params=[], infer=_eig_rule("eig"), num_outputs=2, inline=False,
          output_names=("w", "v"))
def _npi_eig(xp, a, out):
    """_npi_eig(a): (real) eigenvalues w and right eigenvectors v."""
    r = _real_eig(xp, a, True)
    if r is not None:
        out[0][...] = r[0]
        out[1][...] = r[1]


@register("_npi_eigvalsh", params=[Param("UPLO", p_str, "L", "which triangle to use")],
          infer=_eig_rule("eigvalsh"), inline=False)
def _npi_eigvalsh(xp, a, out, UPLO="L"):  # noqa: N803 - NumPy's name
    """_npi_eigvalsh(a, UPLO): eigenvalues of a symmetric matrix (ascending)."""
    if a.size:
        a = a if a.dtype.kind == "f" else a.astype(np.float64)
        out[...] = xp.linalg.eigvalsh(a, UPLO=_uplo(UPLO))


@register("_npi_eigh", params=[Param("UPLO", p_str, "L", "which triangle to use")],
          infer=_eig_rule("eigh"), num_outputs=2, inline=False, output_names=("w", "v"))
def _npi_eigh(xp, a, out, UPLO="L"):  # noqa: N803 - NumPy's name
    """_npi_eigh(a, UPLO): eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    if a.size:
        a = a if a.dtype.kind == "f" else a.astype(np.float64)
        w, v = xp.linalg.eigh(a, UPLO=_uplo(UPLO))
        out[0][...] = w
        out[1][...] = v


def _eigh_bwd(xp, og, ins, outs, UPLO="L"):  # noqa: N803
    gw, gv = og
    w, v = outs
    if w.size == 0:
        return [xp.zeros_like(ins[0])]
    with np.errstate(divide="ignore", invalid="ignore"):
        f = w[..., None, :] - w[..., :, None]
        f = xp.where(f == 0, xp.inf, f)
        f = 1.0 / f
    inner = gw[..., :, None] * xp.eye(w.shape[-1], dtype=w.dtype) + \
        f * xp.matmul(_sw(xp, v), gv)
    ga = xp.matmul(v, xp.matmul(inner, _sw(xp, v)))
    # only one triangle of a is read
    lower = _uplo(UPLO) == "L"
    tri = xp.tril(ga, -1) + _sw(xp, xp.triu(ga, 1)) if lower else \
        xp.triu(ga, 1) + _sw(xp, xp.tril(ga, -1))
    diag = ga * xp.eye(w.shape[-1], dtype=w.dtype)
    return [(xp.tril(tri) if lower else xp.triu(tri)) + diag]


backward("_npi_eigh", _eigh_bwd)
backward("_npi_eigvalsh", lambda xp, og, ins, outs, UPLO="L": _eigh_bwd(
    xp, [og[0], xp.zeros(ins[0].shape, ins[0].dtype)], ins,
    xp.linalg.eigh(ins[0], UPLO=_uplo(UPLO)), UPLO))


# ---------------------------------------------------------------- qr, rank, cond
def _qr_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("qr: a must be at least 2-D, got shape %s" % fmt(s))
    m, n = s[-2], s[-1]
    k = min(m, n)
    d = _fdt(dtypes[0])
    return (s[:-2] + (m, k), s[:-2] + (k, n)), (d, d)


@register("_npi_qr", params=[], infer=_qr_rule, num_outputs=2, inline=False,
          output_names=("q", "r"))
def _npi_qr(xp, a, out):
    """_npi_qr(a): the reduced QR factorization q (orthonormal columns), r (upper)."""
    if a.size == 0:
        out[0][...] = 0
        out[1][...] = 0
        return
    q, r = xp.linalg.qr(a.astype(out[0].dtype, copy=False), mode="reduced")
    out[0][...] = q
    out[1][...] = r


def _rank_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    return ((s[:-2] if len(s) >= 2 else ()),), (np.dtype(np.int64),)


@register("_npi_matrix_rank", params=[Param("tol", p_any, None, "singular values below it "
                                            "count as zero (default: S.max * max(M, N) * eps)"),
                                      Param("hermitian", p_bool, False, "a is Hermitian")],
          infer=_rank_rule, inline=False)
def _npi_matrix_rank(xp, a, out, tol=None, hermitian=False):
    """_npi_matrix_rank(a, tol, hermitian): the rank of (a batch of) matrices by SVD."""
    a = a.astype(_fdt(a.dtype), copy=False)
    if a.ndim < 2:
        out[...] = int(xp.any(a != 0))
        return
    if a.size == 0:
        out[...] = 0
        return
    s = xp.linalg.svd(a, compute_uv=False)
    t = s.max(axis=-1, keepdims=True) * max(a.shape[-2:]) * np.finfo(s.dtype).eps \
        if tol is None else xp.asarray(tol)[..., None]
    out[...] = (s > t).sum(axis=-1)


def _cond_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("cond: a must be at least 2-D, got shape %s" % fmt(s))
    return (s[:-2],), (_fdt(dtypes[0]),)


@register("_npi_cond", params=[Param("p", p_any, None, "the norm order (None: 2-norm)")],
          infer=_cond_rule, inline=False)
def _npi_cond(xp, a, out, p=None):
    """_npi_cond(a, p): the condition number of (a batch of) matrices."""
    a = a.astype(out.dtype, copy=False)
    p = _norm_ord(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p is None or p in (2.0, -2.0):
            s = xp.linalg.svd(a, compute_uv=False)
            r = s[..., 0] / s[..., -1] if p != -2.0 else s[..., -1] / s[..., 0]
        else:
            _square(a.shape)
            r = xp.linalg.norm(a, ord=p, axis=(-2, -1)) * \
                xp.linalg.norm(xp.linalg.inv(a), ord=p, axis=(-2, -1))
    out[...] = r


def _mpow_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    _square(s)
    if attrs["n"] < 0:
        _floats(dtypes, "matrix_power with a negative exponent")
    return (s,), (dtypes[0],)


@register("_npi_matrix_power", params=[Param("n", p_int, doc="the integer exponent")],
          infer=_mpow_rule, inline=False)
def _npi_matrix_power(xp, a, out, n):
    """_npi_matrix_power(a, n): a to the integer power n (repeated squaring)."""
    if a.size == 0:
        return
    try:
        out[...] = xp.linalg.matrix_power(a, n)
    except _lin_err(xp):
        raise OpError("matrix_power: singular matrix") from None


def _mpow_bwd(xp, og, ins, outs, n):
    # d(A^n) = sum_k A^k dA A^(n-1-k); for n < 0 through inv(A)^|n|
    a, g = ins[0], og[0]
    if n == 0 or a.size == 0:
        return [xp.zeros_like(a)]
    base = a if n > 0 else xp.linalg.inv(a)
    m = abs(n)
    pw = [xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)]
    for _ in range(m):
        pw.append(xp.matmul(pw[-1], base))
    gb = sum(xp.matmul(_sw(xp, pw[k]), xp.matmul(g, _sw(xp, pw[m - 1 - k]))) for k in range(m))
    if n > 0:
        return [gb]
    return [-xp.matmul(_sw(xp, base), xp.matmul(gb, _sw(xp, base)))]


backward("_npi_matrix_power", _mpow_bwd)


from ._grad import set_grads  # noqa: E402
set_grads({n: lambda F, at, ins, outs, og: [None] for n in ("_npi_qr", "_npi_matrix_rank",
                                                             "_npi_cond", "_npi_eig",
                                                             "_npi_eigvals")})
