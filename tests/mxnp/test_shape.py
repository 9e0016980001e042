"""mx.np shape manipulation (reshape, joins, splits, flips, pads, insert,
delete, where, take, ...): imperative AND hybridized results against NumPy,
gradients against the known Jacobian, and bad input."""
import numpy as onp
import pytest

import aiond as mx
from aiond import np, npx
from aiond.base import MXNetError
from aiond.gluon import HybridBlock


class _Fn(HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, *xs):
        return self._fn(F, *xs)


def _both(fn, *arrays, weights=None):
    """fn(F, *xs) imperatively and hybridized: (outputs, input grads) each,
    the grads of sum(out * weights) (weights: per output, numpy arrays)."""
    res = []
    for hyb in (False, True):
        xs = [np.array(a, dtype=a.dtype) for a in arrays]
        for x in xs:
            if x.dtype.kind == "f":
                x.attach_grad()
        blk = _Fn(fn)
        if hyb:
            blk.hybridize()
        with mx.autograd.record():
            out = blk(*xs)
            outs = out if isinstance(out, (list, tuple)) else [out]
            if weights is not None:
                loss = sum((o * np.array(w, dtype=o.dtype)).sum() for o, w in zip(outs, weights))
        if weights is not None:
            loss.backward()
        res.append(([o.asnumpy() for o in outs],
                    [x.grad.asnumpy() if x.dtype.kind == "f" else None for x in xs]))
    return res


def _check(fn, ref, *arrays, grad=True):
    """fn's outputs equal ref's (numpy); with grad, the input grads of
    sum(out * w) equal NumPy's (the selection's transpose, by brute force)."""
    exp = ref(*arrays)
    exp = exp if isinstance(exp, (list, tuple)) else [exp]
    rng = onp.random.RandomState(0)
    ws = [rng.uniform(-1, 1, size=e.shape).astype(e.dtype) for e in exp] if grad else None
    for outs, grads in _both(fn, *arrays, weights=ws):
        assert len(outs) == len(exp)
        for o, e in zip(outs, exp):
            assert o.shape == e.shape and o.dtype == e.dtype, (o.shape, e.shape, o.dtype, e.dtype)
            onp.testing.assert_allclose(o, e, rtol=1e-6)
        if grad:
            for i, a in enumerate(arrays):
                if a.dtype.kind != "f":
                    continue
                # d/da sum(ref(a) * w): each element's weight summed over its copies
                g = onp.zeros(a.size)
                # positions count from 1, so a constant 0 (tril, diag, pad) is none
                pos = onp.arange(1, a.size + 1, dtype=onp.float64).reshape(a.shape)
                # other float inputs hold -1: no position of this input
                args = [x if x.dtype.kind != "f" else onp.full(x.shape, -1.0) for x in arrays]
                args[i] = pos
                sel = ref(*args)
                sel = sel if isinstance(sel, (list, tuple)) else [sel]
                for s, w, e in zip(sel, ws, exp):
                    # positions that hold a constant (pad) are not integers of the input
                    s = onp.broadcast_to(s, e.shape)
                    ok = (s >= 1) & (s == onp.round(s)) & (s <= a.size)
                    onp.add.at(g, s[ok].astype(onp.int64) - 1, w[ok])
                onp.testing.assert_allclose(grads[i], g.reshape(a.shape), rtol=1e-5, atol=1e-6)


A = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4) - 5.5


def test_reshape_transpose_family():
    _check(lambda F, x: F.np.reshape(x, (4, -1)), lambda x: onp.reshape(x, (4, -1)), A)
    _check(lambda F, x: F.np.transpose(x, (1, 0, 2)), lambda x: onp.transpose(x, (1, 0, 2)), A)
    _check(lambda F, x: F.np.swapaxes(x, 0, 2), lambda x: onp.swapaxes(x, 0, 2), A)
    _check(lambda F, x: F.np.moveaxis(x, 0, -1), lambda x: onp.moveaxis(x, 0, -1), A)
    _check(lambda F, x: F.np.rollaxis(x, 2), lambda x: onp.rollaxis(x, 2), A)
    _check(lambda F, x: F.np.expand_dims(x, 1), lambda x: onp.expand_dims(x, 1), A)
    _check(lambda F, x: F.np.squeeze(x, 1), lambda x: onp.squeeze(x, 1), A[:, :1])
    _check(lambda F, x: F.np.ravel(x), lambda x: onp.ravel(x), A)
    _check(lambda F, x: F.np.broadcast_to(x, (3, 2, 3, 4)),
           lambda x: onp.broadcast_to(x, (3, 2, 3, 4)), A)


def test_npx_reshape_codes():
    x = np.array(A)
    assert npx.reshape(x, (-2, -1)).shape == (2, 12)
    assert npx.reshape(x, (-5, -2)).shape == (6, 4)
    assert npx.reshape(x, (-6, 1, 2, -4)).shape == (1, 2, 3, 4)
    assert npx.reshape(x, (-4,)).shape == (2, 3, 4)
    assert npx.reshape(np.ones((1, 3)), (-3, -2)).shape == (3,)
    assert npx.reshape(x, (-1, 6), reverse=True).shape == (4, 6)
    with pytest.raises(MXNetError):
        npx.reshape(x, (5, -1))
    s = mx.sym.var("x").as_np_ndarray()
    y = mx.sym.npx.reshape(s, (-5, -2))
    assert y.as_nd_ndarray().infer_shape(x=(2, 3, 4))[1] == [(6, 4)]


def test_joins():
    B = A + 100
    for axis in (0, 1, 2, None):
        _check(lambda F, x, y, ax=axis: F.np.concatenate([x, y], axis=ax),
               lambda x, y, ax=axis: onp.concatenate([x, y], axis=ax), A, B)
    _check(lambda F, x, y: F.np.stack([x, y], axis=1), lambda x, y: onp.stack([x, y], axis=1),
           A, B)
    _check(lambda F, x, y: F.np.append(x, y), lambda x, y: onp.append(x, y), A, B)
    v = onp.arange(3, dtype=onp.float32)
    for name in ("vstack", "hstack", "dstack", "column_stack"):
        _check(lambda F, x, y, n=name: getattr(F.np, n)([x, y]),
               lambda x, y, n=name: getattr(onp, n)([x, y]), v, v + 10)
    # dtypes promote as in MXNet NumPy: int with float gives the float
    r = np.concatenate([np.array([1, 2], dtype="int32"), np.array([0.5])])
    assert r.dtype == onp.float32


def test_splits():
    _check(lambda F, x: F.np.split(x, 3, axis=1), lambda x: onp.split(x, 3, axis=1), A)
    _check(lambda F, x: F.np.split(x, (1, 3), axis=2), lambda x: onp.split(x, (1, 3), axis=2), A)
    _check(lambda F, x: F.np.array_split(x, 3, axis=2),
           lambda x: onp.array_split(x, 3, axis=2), A)
    _check(lambda F, x: F.np.hsplit(x, 3), lambda x: onp.hsplit(x, 3), A)
    _check(lambda F, x: F.np.vsplit(x, 2), lambda x: onp.vsplit(x, 2), A)
    _check(lambda F, x: F.np.dsplit(x, [1]), lambda x: onp.dsplit(x, [1]), A)
    # one piece stays a list, imperatively and hybridized
    for outs, _ in _both(lambda F, x: F.np.split(x, 1), A):
        assert len(outs) == 1
    with pytest.raises(ValueError):
        np.split(np.array(A), 5, axis=2)
    with pytest.raises(ValueError):
        np.vsplit(np.ones((3,)), 3)


def test_repeat_flip_roll_rot_pad():
    _check(lambda F, x: F.np.tile(x, (2, 1, 1, 2)), lambda x: onp.tile(x, (2, 1, 1, 2)), A)
    _check(lambda F, x: F.np.repeat(x, 2, axis=1), lambda x: onp.repeat(x, 2, axis=1), A)
    _check(lambda F, x: F.np.repeat(x, 3), lambda x: onp.repeat(x, 3), A)
    _check(lambda F, x: F.np.flip(x, (0, 2)), lambda x: onp.flip(x, (0, 2)), A)
    _check(lambda F, x: F.np.flipud(x), lambda x: onp.flipud(x), A)
    _check(lambda F, x: F.np.fliplr(x), lambda x: onp.fliplr(x), A)
    _check(lambda F, x: F.np.roll(x, 2, axis=1), lambda x: onp.roll(x, 2, axis=1), A)
    _check(lambda F, x: F.np.roll(x, 5), lambda x: onp.roll(x, 5), A)
    _check(lambda F, x: F.np.rot90(x, 3, axes=(1, 2)), lambda x: onp.rot90(x, 3, axes=(1, 2)), A)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        _check(lambda F, x, m=mode: F.np.pad(x, ((1, 0), (2, 1), (0, 2)), mode=m),
               lambda x, m=mode: onp.pad(x, ((1, 0), (2, 1), (0, 2)), mode=m), A,
               grad=(mode != "constant"))
    p = np.pad(np.array(A), 1, mode="constant", constant_values=7)
    onp.testing.assert_allclose(p.asnumpy(), onp.pad(A, 1, constant_values=7))
    with pytest.raises(NotImplementedError):
        np.pad(np.array(A), 1, mode="wrap")


def test_pad_constant_gradient():
    x = np.array(A)
    x.attach_grad()
    with mx.autograd.record():
        y = np.pad(x, 2, mode="constant", constant_values=3)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.ones_like(A))


def test_insert_delete_resize():
    M = onp.arange(10, dtype=onp.float32).reshape(2, 5)
    V = onp.array([[7., 8.], [9., 10.]], dtype=onp.float32)
    _check(lambda F, x, v: F.np.insert(x, 1, v, axis=1), lambda x, v: onp.insert(x, 1, v, axis=1),
           M, V)
    _check(lambda F, x: F.np.insert(x, slice(0, 4, 2), 5.0, axis=1),
           lambda x: onp.insert(x, slice(0, 4, 2), 5.0, axis=1), M, grad=False)
    _check(lambda F, x: F.np.delete(x, 1, axis=1), lambda x: onp.delete(x, 1, axis=1), M)
    _check(lambda F, x: F.np.delete(x, slice(1, None, 2)),
           lambda x: onp.delete(x, slice(1, None, 2)), M)
    x = np.array(M)
    onp.testing.assert_allclose(np.insert(x, [3, 0], np.array([1., 2.])).asnumpy(),
                                onp.insert(M, [3, 0], [1., 2.]))
    onp.testing.assert_allclose(np.insert(x, -1, 0.5, axis=0).asnumpy(),
                                onp.insert(M, -1, 0.5, axis=0))
    # MXNet ignores index-array entries outside [0, n) (negative ones included)
    r = np.delete(x, np.array([0, -1, 7, 3], dtype="int64"), axis=1)
    onp.testing.assert_allclose(r.asnumpy(), onp.delete(M, [0, 3], axis=1))
    _check(lambda F, x: F.np.resize(x, (3, 4)), lambda x: onp.resize(x, (3, 4)), M)
    with pytest.raises(IndexError):
        np.insert(x, 7, 1.0, axis=1)


def test_triangles_diagonals_atleast():
    S = onp.arange(16, dtype=onp.float32).reshape(4, 4)
    _check(lambda F, x: F.np.tril(x, -1), lambda x: onp.tril(x, -1), S, grad=False)
    _check(lambda F, x: F.np.triu(x, 1), lambda x: onp.triu(x, 1), S, grad=False)
    _check(lambda F, x: F.np.diag(x, 1), lambda x: onp.diag(x, 1), S)
    _check(lambda F, x: F.np.diag(x, -2), lambda x: onp.diag(x, -2), S[0])
    _check(lambda F, x: F.np.diagflat(x, 1), lambda x: onp.diagflat(x, 1), S[:2, :2], grad=False)
    _check(lambda F, x: F.np.diagonal(x, 1, 0, 2), lambda x: onp.diagonal(x, 1, 0, 2), A)
    _check(lambda F, x, y: F.np.atleast_2d(x, y), lambda x, y: onp.atleast_2d(x, y),
           S[0], S)
    _check(lambda F, x: F.np.atleast_3d(x), lambda x: onp.atleast_3d(x), S)
    x = np.array(S)
    x.attach_grad()
    with mx.autograd.record():
        y = np.tril(x)
    y.backward()
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.tril(onp.ones((4, 4))))
    with pytest.raises(MXNetError):
        np.diagonal(np.ones((3,)))


def test_where_take():
    c = (A > 0)
    B = -A
    _check(lambda F, c_, x, y: F.np.where(c_, x, y), lambda c_, x, y: onp.where(c_, x, y),
           c, A, B)
    r = np.where(np.array(c), 1.0, np.array(B))
    onp.testing.assert_allclose(r.asnumpy(), onp.where(c, 1.0, B))
    r = np.where(np.array(c), 2.0, 3.0)
    onp.testing.assert_allclose(r.asnumpy(), onp.where(c, 2.0, 3.0))
    idx = onp.array([[0, 2], [1, 1]], dtype=onp.int64)
    _check(lambda F, x, i: F.np.take(x, i, axis=1), lambda x, i: onp.take(x, i, axis=1), A, idx)
    _check(lambda F, x, i: F.np.take(x, i), lambda x, i: onp.take(x, i), A, idx)
    wrap = np.take(np.array(A), np.array([5, -7], dtype="int64"), axis=1, mode="wrap")
    onp.testing.assert_allclose(wrap.asnumpy(), onp.take(A, [5, -7], axis=1, mode="wrap"))
    with pytest.raises(NotImplementedError):
        np.take(np.array(A), np.array([0]), mode="foo")


def test_broadcast_arrays_meshgrid_copy():
    a, b = np.array(onp.ones((3, 1))), np.array(onp.arange(4.0))
    r = np.broadcast_arrays(a, b)
    assert [x.shape for x in r] == [(3, 4), (3, 4)]
    x, y = onp.arange(3.0), onp.arange(2.0)
    for ind in ("xy", "ij"):
        got = np.meshgrid(np.array(x), np.array(y), indexing=ind)
        for g, e in zip(got, onp.meshgrid(x, y, indexing=ind)):
            onp.testing.assert_allclose(g.asnumpy(), e)
    c = np.copy(np.array(A))
    assert c.shape == A.shape and not np.shares_memory(c, np.array(A))


def test_symbol_names_and_shapes():
    s = mx.sym.var("x").as_np_ndarray()
    y = mx.sym.np.concatenate([s, s], axis=1)
    assert y.as_nd_ndarray().infer_shape(x=(2, 3))[1] == [(2, 6)]
    parts = mx.sym.np.split(s, 3, axis=1)
    assert len(parts.list_outputs()) == 3
    out = parts.as_nd_ndarray().eval(x=mx.nd.array(onp.arange(6.0).reshape(2, 3)))
    assert [o.shape for o in out] == [(2, 1)] * 3
    with pytest.raises(NotImplementedError):
        mx.sym.np.delete(s, np.array([1, 2]))


def test_take_along_axis():
    idx = onp.argsort(A, axis=2)[:, :, ::-1].copy()
    _check(lambda F, x, i: F.np.take_along_axis(x, i, 2),
           lambda x, i: onp.take_along_axis(x, i, 2), A, idx)
    flat = onp.array([3, 0, 23], dtype=onp.int64)
    _check(lambda F, x, i: F.np.take_along_axis(x, i, None),
           lambda x, i: onp.take_along_axis(x, i, None), A, flat)
    with pytest.raises(MXNetError):
        np.take_along_axis(np.array(A), np.array([[0]], dtype="int64"), 0)
