"""GroupNorm against numpy (forward, hidden mean/std, gradients by finite differences)."""
import numpy as np
import pytest

import aiond as mx


def _np_gn(x, gamma, beta, g, eps):
    n = x.shape[0]
    xr = x.reshape(n, g, -1)
    mean = xr.mean(axis=2, keepdims=True)
    std = np.sqrt(xr.var(axis=2, keepdims=True) + eps)
    y = (xr - mean) / std * gamma.reshape(1, g, 1) + beta.reshape(1, g, 1)
    return y.reshape(x.shape), mean.reshape(n, g), std.reshape(n, g)


def test_groupnorm_forward_and_gradient():
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (2, 6, 3, 2))
    gamma = rng.uniform(-1, 1, (3,))
    beta = rng.uniform(-1, 1, (3,))
    args = [mx.nd.array(a, dtype='float64') for a in (x, gamma, beta)]
    y, mean, std = mx.nd.GroupNorm(*args, num_groups=3, eps=1e-5, output_mean_var=True)
    want = _np_gn(x, gamma, beta, 3, 1e-5)
    for got, w in zip((y, mean, std), want):
        np.testing.assert_allclose(got.asnumpy(), w, rtol=1e-10, atol=1e-12)
    assert mx.nd.GroupNorm(*args, num_groups=3).shape == x.shape    # one visible output
    og = rng.uniform(-1, 1, x.shape)
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        out = mx.nd.GroupNorm(*args, num_groups=3)
    out.backward(mx.nd.array(og, dtype='float64'))

    def loss(xx, gg, bb):
        return float((_np_gn(xx, gg, bb, 3, 1e-5)[0] * og).sum())
    vals = [x, gamma, beta]
    for k, a in enumerate(args):
        num = np.zeros(vals[k].size)
        for i in range(vals[k].size):
            up = [v.copy() for v in vals]
            dn = [v.copy() for v in vals]
            up[k].flat[i] += 1e-6
            dn[k].flat[i] -= 1e-6
            num[i] = (loss(*up) - loss(*dn)) / 2e-6
        np.testing.assert_allclose(a.grad.asnumpy().ravel(), num, rtol=1e-5, atol=1e-7)


def test_sync_batchnorm_is_batchnorm_with_variance_output():
    rng = np.random.RandomState(2)
    x = mx.nd.array(rng.uniform(-1, 1, (4, 3, 5)))
    gamma, beta = mx.nd.array(rng.uniform(0.5, 1, 3)), mx.nd.array(rng.uniform(-1, 1, 3))
    mm1, mv1, mm2, mv2 = mx.nd.zeros(3), mx.nd.ones(3), mx.nd.zeros(3), mx.nd.ones(3)
    x.attach_grad()
    with mx.autograd.record():
        y1, mean1, var1 = mx.nd.contrib.SyncBatchNorm(x, gamma, beta, mm1, mv1, fix_gamma=False,
                                                      output_mean_var=True, key='k')
    y1.backward()
    g1 = x.grad.asnumpy().copy()
    with mx.autograd.record():
        y2, mean2, invstd = mx.nd.BatchNorm(x, gamma, beta, mm2, mv2, fix_gamma=False,
                                            output_mean_var=True)
    y2.backward()
    xn = x.asnumpy()
    np.testing.assert_allclose(y1.asnumpy(), y2.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mean1.asnumpy(), xn.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var1.asnumpy(), xn.var(axis=(0, 2)), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g1, x.grad.asnumpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(mv1.asnumpy(), mv2.asnumpy(), rtol=1e-5)


def test_layernorm_float32_accumulates_in_float64():
    # MXNet's LayerNorm reduces float32 data in float64: results match a float64 reference
    rng = np.random.RandomState(4)
    x = (1000 + rng.normal(0, 1, (3, 8192))).astype(np.float32)
    gamma, beta = np.ones(8192, np.float32), np.zeros(8192, np.float32)
    y = mx.nd.LayerNorm(mx.nd.array(x), mx.nd.array(gamma), mx.nd.array(beta), eps=1e-5)
    xd = x.astype(np.float64)
    want = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)


def _norm_by_pieces(monkeypatch, piece, op, x, gamma, beta, og):
    """op's outputs, then the gradients of x, gamma and beta, with pieces of
    ``piece`` elements (``norm._LN_PIECE``)."""
    from aiond.ops import norm
    monkeypatch.setattr(norm, "_LN_PIECE", piece)
    X, G, B = (mx.nd.array(a) for a in (x, gamma, beta))
    for a in (X, G, B):
        a.attach_grad()
    with mx.autograd.record():
        outs = op(X, G, B)
    outs[0].backward(mx.nd.array(og))
    return [a.asnumpy() for a in list(outs) + [X.grad, G.grad, B.grad]]


@pytest.mark.parametrize("shape,axis", [((6, 5, 40), -1), ((6, 40, 5), 1), ((40, 6, 5), 0),
                                        ((64, 8, 512), -1)])     # shared between the workers
def test_layernorm_by_pieces_is_the_whole_calls_result(shape, axis, monkeypatch):
    """LayerNorm works on pieces along an axis it does not normalise (cache-
    sized float64 copies, no full-size temporaries): every row's output,
    mean, std and data gradient are the one-piece call's bit for bit; gamma's
    and beta's gradients add the pieces' sums in order (same to rounding)."""
    from aiond.ops import norm
    rng = np.random.RandomState(9)
    x = rng.normal(3, 2, shape).astype(np.float32)
    C = shape[axis]
    gamma, beta = rng.rand(C).astype(np.float32) + 0.5, rng.randn(C).astype(np.float32)
    og = rng.randn(*shape).astype(np.float32)

    def op(X, G, B):
        return mx.nd.LayerNorm(X, G, B, axis=axis, output_mean_var=True)
    whole, pieces = (_norm_by_pieces(monkeypatch, p, op, x, gamma, beta, og) for p in (1 << 30, 16))
    assert norm._npieces(np, x, axis % x.ndim) > 3
    for name, a, b in zip(("y", "mean", "std", "dx"), whole[:4], pieces[:4]):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), name
    for name, a, b in zip(("dgamma", "dbeta"), whole[4:], pieces[4:]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6, err_msg=name)


def test_instancenorm_by_pieces_is_the_whole_calls_result(monkeypatch):
    """InstanceNorm by pieces of instances (cache-sized working buffers):
    the output and data gradient are the one-piece call's bit for bit;
    gamma's and beta's gradients sum per instance first, so they too."""
    from aiond.ops import norm
    rng = np.random.RandomState(10)
    x = rng.normal(2, 3, (8, 6, 5, 7)).astype(np.float32)
    gamma, beta = rng.rand(6).astype(np.float32) + 0.5, rng.randn(6).astype(np.float32)
    og = rng.randn(*x.shape).astype(np.float32)

    def op(X, G, B):
        return [mx.nd.InstanceNorm(X, G, B, eps=1e-3)]
    whole, pieces = (_norm_by_pieces(monkeypatch, p, op, x, gamma, beta, og) for p in (1 << 30, 70))
    assert norm._npieces(np, x.reshape(48, -1), 1) > 10
    for name, a, b in zip(("y", "dx", "dgamma", "dbeta"), whole, pieces):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), name
    # and the formula, against numpy
    m = x.mean(axis=(2, 3), keepdims=True)
    v = x.var(axis=(2, 3), keepdims=True)
    want = (x - m) / np.sqrt(v + 1e-3) * gamma.reshape(1, 6, 1, 1) + beta.reshape(1, 6, 1, 1)
    np.testing.assert_allclose(pieces[0], want, rtol=1e-4, atol=1e-4)
