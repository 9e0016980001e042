"""mx.np creation (zeros/ones/full and *_like, ranges, eye, index grids,
windows), the index helpers and polyval: on arrays and in graphs, against
NumPy and MXNet's dtype defaults (float32), and bad input."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np
from aiond.base import MXNetError
from aiond.gluon import HybridBlock


def _sym_eval(fn, **inputs):
    """fn(mx.sym.np, *symbols) evaluated on numpy ``inputs``."""
    syms = [mx.sym.var(k).as_np_ndarray() for k in inputs]
    out = fn(mx.sym.np, *syms)
    outs = out.as_nd_ndarray().eval(**{k: mx.nd.array(v, dtype=v.dtype)
                                       for k, v in inputs.items()})
    return [o.asnumpy() for o in outs]


def test_fill_creation_and_dtypes():
    for fn, ref in ((np.zeros, onp.zeros), (np.ones, onp.ones)):
        a = fn((2, 0, 3))
        assert a.shape == (2, 0, 3) and a.dtype == onp.float32
        b = fn((2, 3), dtype="int64")
        assert b.dtype == onp.int64 and (b.asnumpy() == ref((2, 3))).all()
    f = np.full((2, 2), 7, dtype="int32")
    assert f.dtype == onp.int32 and f.asnumpy().tolist() == [[7, 7], [7, 7]]
    assert np.full((3,), True).dtype == onp.bool_
    f = np.full((2, 3), np.array([1.0, 2.0, 3.0]))
    onp.testing.assert_allclose(f.asnumpy(), onp.full((2, 3), [1.0, 2.0, 3.0]))
    x = np.array([[1, 2], [3, 4]], dtype="int32")
    assert np.zeros_like(x).dtype == onp.int32 and np.ones_like(x).asnumpy().sum() == 4
    assert np.full_like(x, 2.7).asnumpy().tolist() == [[2, 2], [2, 2]]
    assert np.full_like(x, 2.5, dtype="float64").dtype == onp.float64
    e = np.empty_like(x)
    assert e.shape == (2, 2) and e.dtype == onp.int32
    with pytest.raises(ValueError):
        np.zeros((2, -1))
    with pytest.raises(NotImplementedError):
        np.ones((2,), order="F")


def test_ranges():
    onp.testing.assert_allclose(np.arange(2, 9, 3).asnumpy(), onp.arange(2, 9, 3))
    assert np.arange(5).dtype == onp.float32
    assert np.arange(1, 7, 2, dtype="int64").asnumpy().tolist() == [1, 3, 5]
    assert np.arange(3, 1).shape == (0,)
    with pytest.raises(ZeroDivisionError):
        np.arange(0, 3, 0)
    onp.testing.assert_allclose(np.linspace(0, 1, 5).asnumpy(), onp.linspace(0, 1, 5), rtol=1e-6)
    r, step = np.linspace(0, 1, 4, endpoint=False, retstep=True)
    assert step == 0.25 and r.dtype == onp.float32
    onp.testing.assert_allclose(np.logspace(0, 2, 3, base=2.0).asnumpy(),
                                onp.logspace(0, 2, 3, base=2.0), rtol=1e-6)
    with pytest.raises(MXNetError):
        np.linspace(0, 1, -1)
    with pytest.raises(MXNetError):
        np.linspace(0, 1, 2.5)


def test_eye_identity_indices_windows():
    assert (np.eye(3, 4, k=1).asnumpy() == onp.eye(3, 4, k=1)).all()
    assert np.eye(4, 0).shape == (4, 0)
    assert (np.identity(3, dtype="int32").asnumpy() == onp.identity(3)).all()
    g = np.indices((2, 3))
    assert g.dtype == onp.int32 and (g.asnumpy() == onp.indices((2, 3))).all()
    for name in ("hanning", "hamming", "blackman"):
        w = getattr(np, name)(7)
        assert w.dtype == onp.float32
        onp.testing.assert_allclose(w.asnumpy(), getattr(onp, name)(7), rtol=1e-5, atol=1e-7)
    r, c = np.tril_indices(3, -1)
    ref = onp.tril_indices(3, -1)
    assert r.asnumpy().tolist() == ref[0].tolist() and c.asnumpy().tolist() == ref[1].tolist()


def test_index_helpers():
    r = np.unravel_index(np.array([3, 7], dtype="int64"), (2, 4))
    assert [x.asnumpy().tolist() for x in r] == [list(v) for v in onp.unravel_index([3, 7], (2, 4))]
    assert np.unravel_index(5, (2, 3)) == onp.unravel_index(5, (2, 3))
    d = np.diag_indices_from(np.ones((3, 3)))
    assert len(d) == 2 and d[0].asnumpy().tolist() == [0, 1, 2]
    with pytest.raises(MXNetError):
        np.diag_indices_from(np.ones((2, 3)))
    out = _sym_eval(lambda F, x: F.unravel_index(x, (2, 4)), x=onp.array([3., 7.]))
    assert out[0].tolist() == [[0, 1], [3, 3]]


def test_polyval_value_and_grads():
    p = onp.array([2.0, -1.0, 3.0], dtype=onp.float32)
    x = onp.array([0.5, 2.0, -1.0], dtype=onp.float32)
    mp, mxx = np.array(p), np.array(x)
    mp.attach_grad()
    mxx.attach_grad()
    with mx.autograd.record():
        y = np.polyval(mp, mxx)
    y.backward()
    onp.testing.assert_allclose(y.asnumpy(), onp.polyval(p, x), rtol=1e-6)
    onp.testing.assert_allclose(mxx.grad.asnumpy(), onp.polyval(onp.polyder(p), x), rtol=1e-6)
    onp.testing.assert_allclose(mp.grad.asnumpy(), [onp.sum(x ** 2), onp.sum(x), 3.0], rtol=1e-6)
    assert np.polyval([1, 2], 3) == 5
    with pytest.raises(TypeError):
        np.polyval(mp, 2.0)


def test_creation_in_graphs():
    class Net(HybridBlock):
        def hybrid_forward(self, F, x):
            return x + F.np.ones((2, 3)) + F.np.full_like(x, 2) + F.np.arange(3)

    x = np.array(onp.ones((2, 3), dtype=onp.float32))
    net = Net()
    ref = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), ref)
    onp.testing.assert_allclose(ref, onp.broadcast_to(4.0 + onp.arange(3), (2, 3)))
    out = _sym_eval(lambda F, a: F.zeros_like(a) + F.eye(2), a=onp.ones((2, 2), dtype=onp.float32))
    onp.testing.assert_allclose(out[0], onp.eye(2))


def test_boolean_mask_assign():
    a = np.array(onp.arange(12.0).reshape(3, 4))
    m = onp.array([True, False, True])
    a[np.array(m)] = 0.5
    ref = onp.arange(12.0).reshape(3, 4)
    ref[m] = 0.5
    onp.testing.assert_allclose(a.asnumpy(), ref)
    m2 = onp.array([False, True, True, False])
    a[:, np.array(m2)] = np.array([[9.0, 8.0]])
    ref[:, m2] = [[9.0, 8.0]]
    onp.testing.assert_allclose(a.asnumpy(), ref)
    x = np.zeros((2, 3))
    npi = mx.nd.np._internal
    npi.boolean_mask_assign_scalar(x, np.array([[True, False, False], [False, False, True]]),
                                   3.0, out=x)
    assert x.asnumpy().tolist() == [[3, 0, 0], [0, 0, 3]]
    with pytest.raises(MXNetError):
        npi.boolean_mask_assign_scalar(x, np.array([True, False, True]), 1.0)


def test_interp():
    r = np.interp(np.array([0.5, 1.5, 3.0]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 20.0]))
    assert r.dtype == onp.float64 and r.asnumpy().tolist() == [5.0, 15.0, 20.0]
    assert np.interp(2.5, [1, 2, 3], [3, 2, 0]) == onp.interp(2.5, [1, 2, 3], [3, 2, 0])
    r = np.interp(np.array([-1.0, 9.0]), np.array([0.0, 1.0]), np.array([1.0, 2.0]), left=-5,
                  right=5)
    assert r.asnumpy().tolist() == [-5.0, 5.0]
    with pytest.raises(MXNetError):
        np.interp(np.array([1.0]), np.array([0.0, 1.0]), np.array([1.0]))
