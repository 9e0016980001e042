"""MXNet 1.9.1's linalg operators (``mx.nd.linalg.*``, ``mx.nd.linalg_*``):
forward against numpy, batching, MXNet's parameters, literal values and
gradients computed with MXNet 1.9.1, numeric gradient checks, and bad input
raising at the call with the op and the shapes named."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import aiond as mx
from aiond import autograd
from aiond.base import MXNetError, OpError, ShapeError
from aiond.test_utils import check_numeric_gradient

nd = mx.nd
la = mx.nd.linalg

RNG = np.random.RandomState(7)


def T(x):
    return np.swapaxes(x, -1, -2)


def spd(*batch, n=3):
    """Well-conditioned symmetric positive-definite matrices."""
    x = RNG.uniform(-1, 1, batch + (n, n))
    return x @ T(x) + n * np.eye(n)


def tri(*batch, n=3):
    """Well-conditioned matrices to be read as triangular: the ops use one
    triangle only, so the other holds garbage on purpose."""
    return RNG.uniform(-1, 1, batch + (n, n)) + 3 * np.eye(n)


def f64(x):
    return nd.array(x, dtype="float64")


def close(got, want, rtol=1e-10, atol=1e-10):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# --------------------------------------------------------------- the API


def test_namespace_and_aliases():
    names = ["gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "inverse", "det",
             "slogdet", "sumlogdiag", "extractdiag", "makediag", "extracttrian", "maketrian"]
    for n in names:
        assert callable(getattr(la, n)), n
        assert callable(getattr(nd, "linalg_" + n)), n
        assert callable(getattr(nd._internal, "_linalg_" + n)), n
    assert mx.ops.get("linalg_gemm2") is mx.ops.get("_linalg_gemm2")
    assert list(inspect.signature(la.gemm).parameters)[:8] == [
        "A", "B", "C", "transpose_a", "transpose_b", "alpha", "beta", "axis"]
    assert list(inspect.signature(la.trsm).parameters)[:6] == [
        "A", "B", "transpose", "rightside", "lower", "alpha"]
    assert list(inspect.signature(la.syrk).parameters)[:3] == ["A", "transpose", "alpha"]
    assert list(inspect.signature(la.extractdiag).parameters)[:2] == ["A", "offset"]
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    close(nd.linalg_gemm2(x, x), la.gemm2(A=x, B=x).asnumpy())


# ------------------------------------------- MXNet's documented examples


def test_docstring_examples():
    # values and shapes as printed by MXNet 1.9.1
    A = nd.array([[1.0, 1.0], [1.0, 1.0]])
    B = nd.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    C = nd.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    close(la.gemm(A, B, C, transpose_b=True, alpha=2.0, beta=10.0), np.full((2, 3), 14.0))
    close(la.gemm2(A, B, transpose_b=True, alpha=2.0), np.full((2, 3), 4.0))
    A = nd.array([[[1.0, 1.0]], [[0.1, 0.1]]])
    close(la.gemm(A, A, nd.array([[[10.0]], [[0.01]]]), transpose_b=True, alpha=2.0, beta=10.0),
          [[[104.0]], [[0.14]]], rtol=1e-6)
    close(la.gemm2(A, A, transpose_b=True, alpha=2.0), [[[4.0]], [[0.04]]], rtol=1e-6)
    close(la.potrf(nd.array([[[4.0, 1.0], [1.0, 4.25]], [[16.0, 4.0], [4.0, 17.0]]])),
          [[[2.0, 0], [0.5, 2.0]], [[4.0, 0], [1.0, 4.0]]])
    close(la.potri(nd.array([[2.0, 0], [0.5, 2.0]])), [[0.265625, -0.0625], [-0.0625, 0.25]])
    At = nd.array([[[1.0, 0], [1.0, 1.0]], [[1.0, 0], [1.0, 1.0]]])
    Bt = nd.array([[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]])
    close(la.trmm(At, Bt, alpha=2.0), [[[2.0] * 3, [4.0] * 3], [[1.0] * 3, [2.0] * 3]])
    close(la.trsm(nd.array([[1.0, 0], [1.0, 1.0]]), nd.array([[2.0] * 3, [4.0] * 3]), alpha=0.5),
          np.ones((2, 3)))
    close(la.syrk(nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])), [[14.0, 32.0], [32.0, 77.0]])
    close(la.syrk(nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), transpose=True),
          [[17.0, 22.0, 27.0], [22.0, 29.0, 36.0], [27.0, 36.0, 45.0]])
    close(la.sumlogdiag(nd.array([[[1.0, 1.0], [1.0, 7.0]], [[3.0, 0], [0, 17.0]]])),
          [np.log(7.0), np.log(51.0)], rtol=1e-6)
    M = nd.array([[1.0, 2.0], [3.0, 4.0]])
    close(la.extractdiag(M), [1.0, 4.0])
    close(la.extractdiag(M, 1), [2.0])
    close(la.makediag(nd.array([1.0, 2.0]), 1), [[0, 1.0, 0], [0, 0, 2.0], [0, 0, 0]])
    close(la.extracttrian(M), [1.0, 3.0, 4.0])
    close(la.extracttrian(M, lower=False), [1.0, 2.0, 4.0])
    close(la.maketrian(nd.array([1.0, 2.0, 3.0]), offset=-1),
          [[0, 0, 0], [1.0, 0, 0], [2.0, 3.0, 0]])


# ------------------------------------------- literal values from MXNet 1.9.1

SPD3 = np.array([[4.0, 2.0, 0.6], [2.0, 5.0, 1.0], [0.6, 1.0, 3.0]])
G3 = np.arange(1.0, 10.0).reshape(3, 3)


def test_mxnet_literals_forward():
    A = f64(SPD3)
    close(la.potrf(A), [[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.3, 0.35, 1.6695807857064]])
    inv = [[0.31390134529147984, -0.1210762331838565, -0.022421524663677132],
           [-0.1210762331838565, 0.2609865470852018, -0.06278026905829596],
           [-0.022421524663677132, -0.06278026905829596, 0.3587443946188341]]
    close(la.potri(la.potrf(A)), inv)
    close(la.inverse(A), inv)
    close(la.det(A), [44.6])
    sign, logdet = la.slogdet(A)
    close(sign, [1.0])
    close(logdet, [3.7977338590260183])
    # potrf reads one triangle only; potri symmetrises; upper variants
    close(la.potrf(nd.array([[4.0, 100.0], [1.0, 4.25]])), [[2.0, 0.0], [0.5, 2.0]])
    close(la.potrf(nd.array([[4.0, 1.0], [100.0, 4.25]]), lower=False), [[2.0, 0.5], [0.0, 2.0]])
    close(la.potri(nd.array([[2.0, 7.0], [0.5, 2.0]])), [[0.265625, -0.0625], [-0.0625, 0.25]])
    close(la.potri(nd.array([[2.0, 0.5], [7.0, 2.0]]), lower=False),
          [[0.265625, -0.0625], [-0.0625, 0.25]])
    close(la.syrk(nd.array([[1.0, 2, 3], [4, 5, 6]]), alpha=0.5, transpose=True),
          [[8.5, 11.0, 13.5], [11.0, 14.5, 18.0], [13.5, 18.0, 22.5]])
    M = nd.array(np.arange(9.0).reshape(3, 3))
    close(la.extracttrian(M, lower=False), [0, 1, 4, 2, 5, 8])   # column-major upper
    close(la.extracttrian(M), [0, 3, 4, 6, 7, 8])
    close(la.extracttrian(M, offset=1), [1, 2, 5])
    close(la.extracttrian(M, offset=-1), [3, 6, 7])
    close(la.extractdiag(M, offset=-1), [3, 7])
    close(la.maketrian(nd.array([1.0, 2, 3, 4, 5, 6]), lower=False),
          [[1, 2, 4], [0, 3, 5], [0, 0, 6]])


@pytest.mark.parametrize("kw, mm, sm", [
    ({}, [[1, 0], [3, 4]], [[1, 0], [-0.75, 0.25]]),
    ({"lower": False}, [[1, 2], [0, 4]], [[1, -0.5], [0, 0.25]]),
    ({"transpose": True}, [[1, 3], [0, 4]], [[1, -0.75], [0, 0.25]]),
    ({"rightside": True}, [[1, 0], [3, 4]], [[1, 0], [-0.75, 0.25]]),
    ({"rightside": True, "transpose": True, "lower": False}, [[1, 0], [2, 4]],
     [[1, 0], [-0.5, 0.25]]),
])
def test_mxnet_literals_triangular(kw, mm, sm):
    A, B = nd.array([[1.0, 2.0], [3.0, 4.0]]), nd.array(np.eye(2))
    close(la.trmm(A, B, **kw), mm)
    close(la.trsm(A, B, **kw), sm)


def _grad_of(f, x, head=None):
    x = f64(x)
    x.attach_grad()
    with autograd.record():
        y = f(x)
    if isinstance(y, list):
        autograd.backward(y, head)
    else:
        y.backward(None if head is None else head)
    return x.grad.asnumpy()


def test_mxnet_literals_gradients():
    g = f64(G3)
    close(_grad_of(la.potrf, SPD3, g),
          [[0.023028466277576903, 0.27947970557721485, 0.5815445395587715],
           [0.27947970557721497, 0.9825431756162021, 1.5283247107645597],
           [0.5815445395587715, 1.5283247107645597, 2.695287367059659]], rtol=1e-9)
    close(_grad_of(la.inverse, SPD3, g),
          [[0.08405558125037704, 0.0021717709988135696, -0.02201934484908206],
           [-0.06957710792495328, -0.047730700396147144, -0.1827303987612862],
           [-0.33592069014056186, -0.2096362283576988, -0.7911882402622212]], rtol=1e-9)
    close(_grad_of(lambda a: la.potri(la.potrf(a)), SPD3, g),
          [[0.08405558125037704, -0.033702668463069844, -0.17897001749482194],
           [-0.03370266846306983, -0.04773070039614713, -0.19618331355949245],
           [-0.17897001749482197, -0.19618331355949242, -0.7911882402622215]], rtol=1e-9)
    close(_grad_of(la.det, SPD3),
          [[14.0, -5.4, -1.0], [-5.4, 11.64, -2.8], [-1.0, -2.8, 16.0]], rtol=1e-9)
    close(_grad_of(la.slogdet, SPD3, [f64([5.0]), f64([2.0])]),    # the sign gets no gradient
          [[0.6278026905829597, -0.242152466367713, -0.04484304932735426],
           [-0.242152466367713, 0.5219730941704036, -0.1255605381165919],
           [-0.044843049327354265, -0.1255605381165919, 0.7174887892376681]], rtol=1e-9)


def test_singular_det_and_its_zero_gradient():
    S = np.array([[1.0, 2.0], [2.0, 4.0]])
    close(la.det(f64(S)), [0.0])
    sign, logdet = la.slogdet(f64(S))
    close(sign, [0.0])
    assert logdet.asnumpy()[0] == -np.inf
    # MXNet stops the gradient of singular matrices (det == 0)
    close(_grad_of(la.det, S), np.zeros((2, 2)))
    close(_grad_of(lambda a: la.slogdet(a)[1], S), np.zeros((2, 2)))
    # a batch mixing singular and regular matrices
    R = SPD3[:2, :2]
    close(_grad_of(la.det, np.stack([S, R])),
          np.stack([np.zeros((2, 2)), np.linalg.det(R) * np.linalg.inv(R).T]))


# ------------------------------------------------ forward against numpy


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_gemm_gemm2_forward(ta, tb):
    a = RNG.randn(2, 3, 4, 5)
    b = RNG.randn(2, 3, 5, 6)
    a_, b_ = (T(a) if ta else a), (T(b) if tb else b)
    want = a @ b
    c = RNG.randn(*want.shape)
    close(la.gemm2(f64(a_), f64(b_), transpose_a=ta, transpose_b=tb, alpha=1.5), 1.5 * want)
    close(la.gemm(f64(a_), f64(b_), f64(c), transpose_a=ta, transpose_b=tb, alpha=0.5, beta=-2.0),
          0.5 * want - 2.0 * c)
    # rows on axis 1: swapaxes(1, -2) / gemm / swapaxes back, as MXNet documents
    a4 = RNG.randn(2, 5, 3, 4) if ta else RNG.randn(2, 4, 3, 5)     # op(A): 4 x 5
    b4 = RNG.randn(2, 6, 3, 5) if tb else RNG.randn(2, 5, 3, 6)     # op(B): 5 x 6
    sa, sb = np.swapaxes(a4, 1, 2), np.swapaxes(b4, 1, 2)
    want4 = np.swapaxes((T(sa) if ta else sa) @ (T(sb) if tb else sb), 1, 2)
    c4 = RNG.randn(*want4.shape)
    close(la.gemm2(f64(a4), f64(b4), transpose_a=ta, transpose_b=tb, axis=1), want4)
    close(la.gemm(f64(a4), f64(b4), f64(c4), transpose_a=ta, transpose_b=tb, axis=-3, beta=0.5),
          want4 + 0.5 * c4)


def test_gemm_beta_zero_ignores_c_and_dtype_kept():
    r = la.gemm(nd.ones((1, 2)), nd.ones((2, 1)), nd.array([[np.nan]]), beta=0.0)
    close(r, [[2.0]])
    assert r.dtype == np.float32
    assert la.gemm2(nd.ones((2, 2), dtype="float64"), nd.ones((2, 2), dtype="float64")).dtype \
        == np.float64


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_potri_batched(lower):
    A = spd(2, 3, n=4)
    L = np.linalg.cholesky(A)
    got = la.potrf(f64(A), lower=lower)
    close(got, L if lower else T(L))
    close(la.potri(got, lower=lower), np.linalg.inv(A))
    assert la.potrf(nd.array(A)).dtype == np.float32


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("rightside", [False, True])
@pytest.mark.parametrize("lower", [False, True])
def test_trsm_trmm_batched(transpose, rightside, lower):
    A = tri(2, n=3)
    B = RNG.randn(2, 4, 3) if rightside else RNG.randn(2, 3, 4)
    Tm = np.tril(A) if lower else np.triu(A)
    op = T(Tm) if transpose else Tm
    kw = dict(transpose=transpose, rightside=rightside, lower=lower, alpha=2.0)
    close(la.trmm(f64(A), f64(B), **kw), 2.0 * (B @ op if rightside else op @ B))
    X = la.trsm(f64(A), f64(B), **kw).asnumpy()
    np.testing.assert_allclose(X @ op if rightside else op @ X, 2.0 * B, atol=1e-10)


@pytest.mark.parametrize("transpose", [False, True])
def test_syrk(transpose):
    A = RNG.randn(2, 3, 5)
    want = 0.5 * (T(A) @ A if transpose else A @ T(A))
    got = la.syrk(f64(A), transpose=transpose, alpha=0.5).asnumpy()
    close(got, want)
    assert (got == T(got)).all()           # exactly symmetric, as MXNet's copy


def test_inverse_det_slogdet_sumlogdiag_batched():
    A = spd(2, 3, n=3) * np.array([1.0, -1.0, 1.0])[:, None, None]   # some negative dets
    close(la.inverse(f64(A)), np.linalg.inv(A))
    close(la.det(f64(A)), np.linalg.det(A))
    s, l = la.slogdet(f64(A))
    ws, wl = np.linalg.slogdet(A)
    close(s, ws)
    close(l, wl)
    assert la.det(nd.ones((2, 2))).shape == (1,)              # one matrix: shape (1,)
    assert la.det(nd.ones((4, 2, 2))).shape == (4,)
    P = spd(2, 3)
    close(la.sumlogdiag(f64(P)), np.log(np.diagonal(P, 0, -2, -1)).sum(-1))
    assert la.sumlogdiag(nd.array(np.eye(3))).shape == (1,)
    assert np.isnan(la.sumlogdiag(nd.array([[-1.0, 0], [0, 2.0]])).asnumpy()[0])


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 2])
def test_diag_and_trian_roundtrip(offset):
    X = RNG.randn(2, 3, 4, 4)
    d = la.extractdiag(f64(X), offset=offset)
    close(d, np.diagonal(X, offset, -2, -1))
    D = la.makediag(d, offset=offset).asnumpy()
    assert D.shape == (2, 3, 4, 4)
    want = np.zeros_like(X)
    idx = np.arange(4 - abs(offset))
    r, c = (idx - offset, idx) if offset < 0 else (idx, idx + offset)
    want[..., r, c] = X[..., r, c]
    close(D, want)
    for lower in (True, False):
        t = la.extracttrian(f64(X), offset=offset, lower=lower)
        m = 4 - abs(offset)
        assert t.shape == (2, 3, m * (m + 1) // 2)
        back = la.maketrian(t, offset=offset, lower=lower).asnumpy()
        lo = offset < 0 or (offset == 0 and lower)
        mask = np.tril(np.ones((4, 4)), offset) if lo else np.triu(np.ones((4, 4)), offset)
        close(back, X * mask)


# ------------------------------------------------------------- gradients


def _sym(a):
    """(a + a^T) / 2: potrf reads one triangle, so check it on symmetric input."""
    return (a + nd.transpose(a, axes=tuple(range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2))) * 0.5


@pytest.mark.parametrize("ta, tb, axis", [(False, False, -2), (True, False, -2),
                                          (False, True, -2), (True, True, 1)])
def test_gemm_gradients(ta, tb, axis):
    if axis == 1:       # rows on axis 1, axis 2 a batch axis; op(A) 2 x 3, op(B) 3 x 4
        a, b = RNG.randn(2, 3, 2, 2), RNG.randn(2, 4, 2, 3)
    else:
        a, b = RNG.randn(2, 3, 2) if not ta else RNG.randn(2, 2, 3), \
            RNG.randn(2, 2, 3) if not tb else RNG.randn(2, 3, 2)
    kw = dict(transpose_a=ta, transpose_b=tb, axis=axis)
    c = la.gemm2(f64(a), f64(b), **kw).asnumpy()
    check_numeric_gradient(lambda x, y: la.gemm2(x, y, alpha=1.5, **kw), [a, b])
    check_numeric_gradient(lambda x, y, z: la.gemm(x, y, z, alpha=0.5, beta=-2.0, **kw),
                           [a, b, RNG.randn(*c.shape)])


@pytest.mark.parametrize("lower", [True, False])
def test_potrf_potri_gradients(lower):
    A = spd(2, n=3)
    check_numeric_gradient(lambda x: la.potrf(_sym(x), lower=lower), [A])
    L = np.linalg.cholesky(A)
    U = np.ascontiguousarray(T(L))   # test_utils.numeric_grad needs C-contiguous input
    check_numeric_gradient(lambda x: la.potri(x, lower=lower), [L if lower else U])


@pytest.mark.parametrize("transpose, rightside, lower, alpha", [
    (False, False, True, 1.0), (True, False, True, 2.0), (False, True, False, -0.5),
    (True, True, False, 1.0), (True, True, True, 0.7)])
def test_trsm_trmm_gradients(transpose, rightside, lower, alpha):
    A = tri(2, n=3)
    B = RNG.randn(2, 2, 3) if rightside else RNG.randn(2, 3, 2)
    kw = dict(transpose=transpose, rightside=rightside, lower=lower, alpha=alpha)
    check_numeric_gradient(lambda a, b: la.trsm(a, b, **kw), [A, B])
    check_numeric_gradient(lambda a, b: la.trmm(a, b, **kw), [A, B])


@pytest.mark.parametrize("transpose", [False, True])
def test_syrk_gradient(transpose):
    check_numeric_gradient(lambda a: la.syrk(a, transpose=transpose, alpha=0.5),
                           [RNG.randn(2, 2, 3)])


def test_inverse_det_slogdet_sumlogdiag_gradients():
    A = spd(2, n=3) * np.array([1.0, -1.0])[:, None, None]
    check_numeric_gradient(la.inverse, [A])
    check_numeric_gradient(la.det, [A])
    check_numeric_gradient(la.det, [A[0]])
    check_numeric_gradient(lambda a: la.slogdet(a)[1], [A])
    check_numeric_gradient(la.slogdet, [A[1]])
    check_numeric_gradient(la.sumlogdiag, [spd(2, n=3)])
    check_numeric_gradient(la.sumlogdiag, [spd(n=2)])


def test_diag_trian_gradients():
    X = RNG.randn(2, 3, 3)
    check_numeric_gradient(lambda a: la.extractdiag(a, offset=1), [X])
    check_numeric_gradient(lambda a: la.makediag(a, offset=-1), [RNG.randn(2, 3)])
    check_numeric_gradient(lambda a: la.extracttrian(a, lower=False), [X])
    check_numeric_gradient(lambda a: la.maketrian(a, offset=1), [RNG.randn(2, 6)])


def test_second_order_through_linalg_gradients():
    # d/dA sum(d sumlogdiag / dA) = diag(-1 / a_ii^2): the gradient is itself differentiable
    A = spd(n=3)
    x = f64(A)
    x.attach_grad()
    with autograd.record():
        g = autograd.grad(la.sumlogdiag(x), x, create_graph=True)[0]
        s = nd.sum(g)
    s.backward()
    close(x.grad, np.diag(-1.0 / np.diag(A) ** 2), rtol=1e-9)


# ------------------------------------------------------------- bad input


def _raises_at_call(fn, exc, *words):
    with pytest.raises(exc) as ei:
        fn()
    msg = str(ei.value)
    for w in words:
        assert w in msg, msg


def test_bad_shapes_raise_at_the_call():
    _raises_at_call(lambda: la.potrf(nd.ones((2, 3))), ShapeError, "_linalg_potrf", "(2, 3)")
    _raises_at_call(lambda: la.potri(nd.ones((4, 2, 3))), ShapeError, "_linalg_potri", "(4, 2, 3)")
    _raises_at_call(lambda: la.inverse(nd.ones((2, 3))), ShapeError, "_linalg_inverse", "(2, 3)")
    _raises_at_call(lambda: la.det(nd.ones((3,))), ShapeError, "_linalg_det", "(3,)")
    _raises_at_call(lambda: la.gemm2(nd.ones((2, 3)), nd.ones((2, 3))), ShapeError,
                    "_linalg_gemm2", "(2, 3)", "incompatible")
    _raises_at_call(lambda: la.gemm2(nd.ones((3, 2, 2)), nd.ones((2, 2, 2))), ShapeError,
                    "_linalg_gemm2", "(3, 2, 2)", "(2, 2, 2)")
    _raises_at_call(lambda: la.gemm2(nd.ones((2, 2, 2)), nd.ones((2, 2))), ShapeError,
                    "_linalg_gemm2", "(2, 2, 2)", "(2, 2)")
    _raises_at_call(lambda: la.gemm2(nd.ones((2, 2)), nd.ones((2, 2)), axis=1), OpError,
                    "_linalg_gemm2", "axis=1")
    _raises_at_call(lambda: la.gemm(nd.ones((2, 2)), nd.ones((2, 2)), nd.ones((2, 3))),
                    ShapeError, "_linalg_gemm", "(2, 3)", "(2, 2)")
    _raises_at_call(lambda: la.trsm(nd.ones((2, 2)), nd.ones((3, 2))), ShapeError,
                    "_linalg_trsm", "(2, 2)", "(3, 2)")
    _raises_at_call(lambda: la.trmm(nd.ones((2, 3)), nd.ones((3, 2))), ShapeError,
                    "_linalg_trmm", "(2, 3)")
    _raises_at_call(lambda: la.syrk(nd.ones((2,))), ShapeError, "_linalg_syrk", "(2,)")
    _raises_at_call(lambda: la.extractdiag(nd.ones((2, 2)), offset=2), ShapeError,
                    "_linalg_extractdiag", "offset=2")
    _raises_at_call(lambda: la.maketrian(nd.ones((4,))), ShapeError, "_linalg_maketrian", "(4,)")


def test_bad_dtype_raises_at_the_call():
    _raises_at_call(lambda: la.potrf(nd.array(np.eye(2), dtype="int32")), OpError,
                    "_linalg_potrf", "int32", "float32")
    _raises_at_call(lambda: la.gemm2(nd.ones((2, 2), dtype="float16"),
                                     nd.ones((2, 2), dtype="float16")), OpError, "float16")
    _raises_at_call(lambda: la.gemm2(nd.ones((2, 2)), nd.ones((2, 2), dtype="float64")),
                    OpError, "_linalg_gemm2", "dtype")


def test_numerical_failures_raise_at_read():
    with pytest.raises(MXNetError, match="positive-definite"):
        la.potrf(nd.array([[1.0, 2.0], [2.0, 1.0]])).asnumpy()
    with pytest.raises(MXNetError, match="singular"):
        la.inverse(nd.array([[1.0, 2.0], [2.0, 4.0]])).asnumpy()
