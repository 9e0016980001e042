"""mx.np reductions, statistics, sorting, products and np.linalg: the same
front functions on arrays and hybridized (Symbol) graphs, checked against
NumPy, with gradients and bad input."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np
from aiond.base import MXNetError
from aiond.gluon import HybridBlock


class _Fn(HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, *xs):
        return self._fn(F, *xs)


def _both(fn, *arrays):
    """fn(F, *xs) imperatively and hybridized: the two results (as NumPy)."""
    outs = []
    for hybrid in (False, True):
        net = _Fn(fn)
        if hybrid:
            net.hybridize()
        r = net(*arrays)
        outs.append([o.asnumpy() for o in r] if isinstance(r, (list, tuple)) else r.asnumpy())
    return outs


def _grad(fn, *arrays):
    xs = [np.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = fn(*xs)
    y.backward()
    return [x.grad.asnumpy() for x in xs]


def test_reductions_dtypes_and_axis_forms():
    a = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4) - 7
    x = np.array(a)
    for axis in (None, 0, -1, (0, 2), ()):
        for kd in (False, True):
            got = _both(lambda F, v: F.np.sum(v, axis=axis, keepdims=kd), x)
            want = onp.sum(a, axis=axis, keepdims=kd)
            for g in got:
                assert g.shape == want.shape
                onp.testing.assert_allclose(g, want)
    i = np.array(a.astype(onp.int32))
    assert np.mean(i).dtype == onp.float32
    assert np.sum(np.array(a > 0)).dtype == onp.int64
    assert np.sum(i, dtype="float64").dtype == onp.float64
    onp.testing.assert_allclose(np.std(x, axis=1, ddof=1).asnumpy(), a.std(axis=1, ddof=1),
                                rtol=1e-6)
    onp.testing.assert_allclose(np.var(i, axis=(0, 1)).asnumpy(), a.var(axis=(0, 1)), rtol=1e-6)
    assert np.var(i).dtype == onp.float32
    assert np.max(x, axis=()).shape == a.shape
    assert np.all(np.array(a != 100), axis=0).dtype == onp.bool_
    assert np.any(x > 15, axis=1).asnumpy().tolist() == onp.any(a > 15, axis=1).tolist()
    assert np.sum(x, initial=1.5).item() == pytest.approx(a.sum() + 1.5)


def test_argmax_cumsum_and_methods():
    a = onp.random.RandomState(0).rand(3, 5).astype(onp.float32)
    x = np.array(a)
    for axis in (None, 0, 1, -1):
        r = _both(lambda F, v: F.np.argmax(v, axis), x)
        assert r[0].dtype == onp.int64
        assert r[0].tolist() == r[1].tolist() == onp.argmax(a, axis).tolist()
    assert x.argmin(1).asnumpy().tolist() == a.argmin(1).tolist()
    assert np.argmax(np.array(3.0), 0).item() == 0
    with pytest.raises(MXNetError):
        np.argmax(np.zeros((2, 0)), 1)
    onp.testing.assert_allclose(x.cumsum(axis=1).asnumpy(), a.cumsum(axis=1), rtol=1e-6)
    assert np.cumsum(np.array([1, 2, 3], dtype="int32")).dtype == onp.int64
    g = _grad(lambda v: np.cumsum(v, axis=0) * np.array(onp.arange(15.).reshape(3, 5)), a)[0]
    w = onp.arange(15.).reshape(3, 5)
    onp.testing.assert_allclose(g, w[::-1].cumsum(0)[::-1], rtol=1e-6)
    onp.testing.assert_allclose(x.sum(axis=0).asnumpy(), a.sum(0), rtol=1e-6)
    onp.testing.assert_allclose(x.dot(x.T).asnumpy(), a @ a.T, rtol=1e-5)


def test_moment_and_average_gradients():
    a = onp.random.RandomState(1).rand(4, 3)
    g = _grad(lambda v: np.var(v, axis=0), a)[0]
    onp.testing.assert_allclose(g, 2 * (a - a.mean(0)) / 4, rtol=1e-5)
    w = onp.array([1.0, 2.0, 3.0])
    ga, gw = _grad(lambda v, u: np.average(v, axis=1, weights=u), a, w)
    onp.testing.assert_allclose(ga, onp.tile(w / w.sum(), (4, 1)), rtol=1e-5)
    avg = (a * w).sum(1) / w.sum()
    onp.testing.assert_allclose(gw, ((a - avg[:, None]) / w.sum()).sum(0), rtol=1e-5)
    r, s = np.average(np.array(a), axis=0, returned=True)
    onp.testing.assert_allclose(r.asnumpy(), a.mean(0), rtol=1e-6)
    assert s.asnumpy().tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(MXNetError):
        np.average(np.array(a), weights=np.array(w))    # shapes differ without an axis


def test_sort_unique_nonzero_bincount():
    a = onp.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], dtype=onp.float32)
    x = np.array(a)
    for axis in (None, 0, -1):
        s = _both(lambda F, v: F.np.sort(v, axis=axis), x)
        assert s[0].tolist() == s[1].tolist() == onp.sort(a, axis=axis).tolist()
        i = _both(lambda F, v: F.np.argsort(v, axis=axis), x)
        assert i[0].tolist() == i[1].tolist() == onp.argsort(a, axis=axis).tolist()
    g = _grad(lambda v: np.sort(v, axis=1) * np.array([[1.0, 2.0, 3.0]]), a)[0]
    assert g.tolist() == [[3.0, 1.0, 2.0], [1.0, 3.0, 2.0]]
    u = np.array([3, 1, 1, 2, 3, 3], dtype="int32")
    vals, idx, inv, cnt = np.unique(u, True, True, True)
    assert vals.asnumpy().tolist() == [1, 2, 3] and cnt.asnumpy().tolist() == [2, 1, 3]
    assert idx.asnumpy().tolist() == [1, 3, 0] and inv.asnumpy().tolist() == [2, 0, 0, 1, 2, 2]
    h = _both(lambda F, v: F.np.unique(v, return_counts=True), u)
    assert h[1][0].tolist() == [1, 2, 3] and h[1][1].tolist() == [2, 1, 3]
    nz = _both(lambda F, v: F.npx.nonzero(v), x)
    assert nz[0].tolist() == nz[1].tolist() == onp.transpose(onp.nonzero(a)).tolist()
    assert [t.asnumpy().tolist() for t in np.nonzero(x)] == [r.tolist() for r in onp.nonzero(a)]
    b = _both(lambda F, v: F.np.bincount(v, minlength=5), u)
    assert b[0].tolist() == b[1].tolist() == [0, 2, 1, 3, 0]
    with pytest.raises(MXNetError):
        np.bincount(np.array([-1, 2], dtype="int32"))


def test_quantiles_histogram_diff_trace():
    a = onp.random.RandomState(2).rand(4, 5)
    x = np.array(a, dtype="float64")
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        got = np.percentile(x, 30, axis=1, interpolation=interp).asnumpy()
        onp.testing.assert_allclose(got, onp.percentile(a, 30, axis=1, method=interp))
    q = np.array([0.1, 0.9], dtype="float64")
    onp.testing.assert_allclose(np.quantile(x, q, axis=0).asnumpy(),
                                onp.quantile(a, [0.1, 0.9], axis=0))
    with pytest.raises(MXNetError):
        np.percentile(x, 150).asnumpy()
    h, e = np.histogram(x, bins=4, range=(0.0, 1.0))
    wh, we = onp.histogram(a, bins=4, range=(0.0, 1.0))
    assert h.asnumpy().tolist() == wh.tolist()
    onp.testing.assert_allclose(e.asnumpy(), we)
    d = _both(lambda F, v: F.np.diff(v, n=2, axis=1), x)
    onp.testing.assert_allclose(d[1], onp.diff(a, 2, axis=1))
    g = _grad(lambda v: np.diff(v, n=1, axis=0) * 2, a)[0]
    onp.testing.assert_allclose(g, onp.array([[-2.0] * 5] + [[0.0] * 5] * 2 + [[2.0] * 5]))
    e1 = np.ediff1d(x, to_begin=np.array([7.0, 8.0], dtype="float64"), to_end=9)
    onp.testing.assert_allclose(e1.asnumpy(), onp.ediff1d(a, to_begin=[7.0, 8.0], to_end=9))
    t = _both(lambda F, v: F.np.trace(v, offset=1), x)
    assert t[0] == pytest.approx(onp.trace(a, 1)) and t[1] == pytest.approx(onp.trace(a, 1))
    assert _grad(lambda v: np.trace(v), a)[0].tolist() == onp.eye(4, 5).tolist()


def test_products_and_einsum():
    rs = onp.random.RandomState(3)
    a, b = rs.rand(2, 3, 4), rs.rand(4, 3, 5)
    xa, xb = np.array(a, dtype="float64"), np.array(b, dtype="float64")
    r = _both(lambda F, u, v: F.np.tensordot(u, v, ([1, 2], [1, 0])), xa, xb)
    for g in r:
        onp.testing.assert_allclose(g, onp.tensordot(a, b, ([1, 2], [1, 0])))
    ga, gb = _grad(lambda u, v: np.tensordot(u, v, ([1, 2], [1, 0])), a, b)
    onp.testing.assert_allclose(ga, onp.tensordot(onp.ones((2, 5)), b, ([1], [2])).transpose(
        0, 2, 1))
    onp.testing.assert_allclose(gb, onp.tensordot(a, onp.ones((2, 5)), ([0], [0])).transpose(
        1, 0, 2))
    m, v = rs.rand(3, 2, 4), rs.rand(4)
    onp.testing.assert_allclose(np.matmul(np.array(m), np.array(v)).asnumpy(), m @ v)
    gm, gv = _grad(lambda u, w: np.matmul(u, w), m, v)
    onp.testing.assert_allclose(gv, m.sum((0, 1)))
    c = rs.rand(6, 4, 2)
    onp.testing.assert_allclose(np.dot(xa, np.array(c, dtype="float64")).asnumpy(),
                                onp.dot(a, c))
    onp.testing.assert_allclose(np.inner(xa, xa).asnumpy(), onp.inner(a, a))
    onp.testing.assert_allclose(np.outer(xa, xb).asnumpy(), onp.outer(a, b))
    assert np.vdot(xa, xa).item() == pytest.approx(onp.vdot(a, a))
    e = _both(lambda F, u, w: F.np.einsum("...ij,jk->...ik", u, w), np.array(m), np.array(
        rs.rand(4, 2)))
    assert e[0].shape == (3, 2, 2)
    gd = _grad(lambda u: np.einsum("ii->i", u), rs.rand(3, 3))[0]
    assert gd.tolist() == onp.eye(3).tolist()
    with pytest.raises(MXNetError):
        np.dot(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(MXNetError):
        np.einsum("ij,jk", np.ones((2, 3)), np.ones((2, 3)))


def test_linalg_against_numpy():
    rs = onp.random.RandomState(4)
    a = rs.rand(3, 4, 4) + 4 * onp.eye(4)
    x = np.array(a, dtype="float64")
    onp.testing.assert_allclose(np.linalg.inv(x).asnumpy(), onp.linalg.inv(a))
    onp.testing.assert_allclose(np.linalg.det(x).asnumpy(), onp.linalg.det(a))
    s, ld = np.linalg.slogdet(x)
    ws, wld = onp.linalg.slogdet(a)
    onp.testing.assert_allclose(s.asnumpy(), ws)
    onp.testing.assert_allclose(ld.asnumpy(), wld)
    spd = a @ a.transpose(0, 2, 1)
    onp.testing.assert_allclose(np.linalg.cholesky(np.array(spd, dtype="float64")).asnumpy(),
                                onp.linalg.cholesky(spd))
    w, v = np.linalg.eigh(np.array(spd, dtype="float64"))
    onp.testing.assert_allclose(w.asnumpy(), onp.linalg.eigh(spd)[0])
    bb = rs.rand(3, 4)
    onp.testing.assert_allclose(np.linalg.solve(x, np.array(bb, dtype="float64")).asnumpy(),
                                onp.linalg.solve(a, bb[..., None])[..., 0])
    ut, l, vv = np.linalg.svd(np.array(rs.rand(2, 3), dtype="float64"))
    assert ut.shape == (2, 2) and l.shape == (2,) and vv.shape == (2, 3)
    m = rs.rand(2, 5)
    onp.testing.assert_allclose(np.linalg.pinv(np.array(m, dtype="float64")).asnumpy(),
                                onp.linalg.pinv(m))
    for ordv, axis in ((None, None), (2, 1), ("fro", (1, 2)), ("nuc", (1, 2)), (onp.inf, 2),
                       (-2, (1, 2)), (1, (1, 2))):
        got = _both(lambda F, t: F.np.linalg.norm(t, ord=ordv, axis=axis), x)
        for g in got:
            onp.testing.assert_allclose(g, onp.linalg.norm(a, ord=ordv, axis=axis), rtol=1e-6)
    gi = _grad(lambda t: np.linalg.det(t), a)[0]
    onp.testing.assert_allclose(gi, onp.linalg.det(a)[:, None, None] *
                                onp.linalg.inv(a).transpose(0, 2, 1), rtol=1e-6)
    gn = _grad(lambda t: np.linalg.norm(t), a)[0]
    onp.testing.assert_allclose(gn, a / onp.linalg.norm(a), rtol=1e-6)
    with pytest.raises(MXNetError):
        np.linalg.inv(np.ones((2, 3)))
    with pytest.raises(MXNetError):
        np.linalg.cholesky(np.ones((3, 3), dtype="int32"))
    with pytest.raises(ValueError):
        np.linalg.eigh(x, UPLO="X")


def test_symbol_front_functions_build_graphs():
    s = mx.sym.var("x").as_np_ndarray()
    y = mx.sym.np.linalg.norm(mx.sym.np.matmul(s, s), axis=1).as_nd_ndarray()
    a = onp.random.RandomState(5).rand(3, 3).astype(onp.float32)
    out = y.eval(x=mx.nd.array(a))[0].asnumpy()
    onp.testing.assert_allclose(out, onp.linalg.norm(a @ a, axis=1), rtol=1e-5)
    assert s.sum(axis=0).name.startswith("_np_sum")
    assert isinstance(mx.sym.np.linalg.svd(s), mx.sym.np._Symbol)


def test_linalg_extras_and_searchsorted():
    rs = onp.random.RandomState(6)
    a = rs.rand(2, 4, 3)
    q, r = np.linalg.qr(np.array(a, dtype="float64"))
    onp.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), a)
    assert onp.allclose(onp.triu(r.asnumpy()), r.asnumpy())
    low = onp.ones((4, 3))
    assert np.linalg.matrix_rank(np.array(low)).item() == 1
    assert np.linalg.matrix_rank(np.array(a)).asnumpy().tolist() == [3, 3]
    sq = rs.rand(3, 3) + 3 * onp.eye(3)
    x = np.array(sq, dtype="float64")
    for p in (None, -2, 1, "fro", onp.inf):
        onp.testing.assert_allclose(np.linalg.cond(x, p).asnumpy(), onp.linalg.cond(sq, p))
    for n in (0, 3, -2):
        got = _both(lambda F, t: F.np.linalg.matrix_power(t, n), x)
        for g in got:
            onp.testing.assert_allclose(g, onp.linalg.matrix_power(sq, n), rtol=1e-6)
    g = _grad(lambda t: np.linalg.matrix_power(t, 2), sq)[0]
    onp.testing.assert_allclose(g, onp.ones((3, 3)) @ sq.T + sq.T @ onp.ones((3, 3)))
    onp.testing.assert_allclose(
        np.linalg.multi_dot([x, x, np.array(sq[0], dtype="float64")]).asnumpy(),
        onp.linalg.multi_dot([sq, sq, sq[0]]))
    bb = rs.rand(4, 2)
    got = np.linalg.lstsq(np.array(a[0], dtype="float64"), np.array(bb, dtype="float64"),
                          rcond=None)
    for m, w in zip(got, onp.linalg.lstsq(a[0], bb, rcond=None)):
        onp.testing.assert_allclose(m.asnumpy(), w)
    with pytest.raises(MXNetError):
        np.linalg.matrix_power(np.ones((2, 3)), 2)
    s = onp.array([1.0, 2.0, 2.0, 5.0])
    for side in ("left", "right"):
        got = np.searchsorted(np.array(s), np.array([[2.0, 6.0], [0.0, 1.5]]), side=side)
        assert got.asnumpy().tolist() == onp.searchsorted(s, [[2.0, 6.0], [0.0, 1.5]],
                                                          side=side).tolist()
    with pytest.raises(ValueError):
        np.searchsorted(np.array(s), np.array([1.0]), side="middle")
