"""MXNet 1.9.1 behaviours of issue 31's "also found" list: gradients reaching
a sampler are zeros (sample_multinomial's log-probabilities have the real
one), sample_uniform with low > high draws as MXNet does, mx.nd/mx.sym.cumsum,
autograd.grad returning a list (higher-order chains of batched heads), and
0-means-unknown init shapes inside hybridized graphs."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon
from aiond.base import MXNetError


# ---------------------------------------------------------------- samplers
def test_gradient_through_samplers_is_zero():
    mu, sigma = mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 2.0])
    lo, hi = mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 3.0])
    w = mx.nd.array([1.0, 2.0])
    for a in (mu, sigma, lo, hi, w):
        a.attach_grad()
    with autograd.record():
        s = mx.nd.sample_normal(mu, sigma, shape=(3,)) * 2 + mx.nd.sample_uniform(lo, hi, shape=(1,))
        y = (s * w.reshape((2, 1))).sum() + (w * w).sum()
    y.backward()
    for a in (mu, sigma, lo, hi):
        assert a.grad.asnumpy().tolist() == [0.0, 0.0]
    # the rest of the graph still gets its gradient: d(w*w + w*s)/dw
    want = 2 * w.asnumpy() + (s.asnumpy()).sum(axis=1)
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5)


def test_sample_multinomial_log_prob_gradient():
    p = mx.nd.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    p.attach_grad()
    with autograd.record():
        draws, logp = mx.nd.sample_multinomial(p, shape=(4,), get_prob=True)
        loss = (logp * mx.nd.array([[1, 2, 3, 4], [5, 6, 7, 8]])).sum()
    loss.backward()
    d, pn = draws.asnumpy(), p.asnumpy()
    want = np.zeros((2, 3))
    wts = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    for i in range(2):
        for j in range(4):
            want[i, d[i, j]] += wts[i, j] / pn[i, d[i, j]]
    np.testing.assert_allclose(p.grad.asnumpy(), want, rtol=1e-5)
    np.testing.assert_allclose(logp.asnumpy(), np.log(pn[np.arange(2)[:, None], d]), rtol=1e-6)


def test_sample_uniform_low_above_high():
    mx.random.seed(3)
    u = mx.nd.sample_uniform(mx.nd.array([3.0, 0.0]), mx.nd.array([1.0, 1.0]), shape=(500,))
    a = u.asnumpy()
    assert ((a[0] >= 1) & (a[0] <= 3)).all() and a[0].std() > 0.3     # spread over [1, 3]
    assert ((a[1] >= 0) & (a[1] < 1)).all()


# ------------------------------------------------------------------ cumsum
def test_cumsum_values_dtypes_and_gradient():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    np.testing.assert_array_equal(mx.nd.cumsum(mx.nd.array(x)).asnumpy(), np.cumsum(x))
    np.testing.assert_array_equal(mx.nd.cumsum(mx.nd.array(x), axis=1).asnumpy(),
                                  np.cumsum(x, axis=1))
    np.testing.assert_array_equal(mx.nd.cumsum(mx.nd.array(x), axis=-2).asnumpy(),
                                  np.cumsum(x, axis=0))
    # MXNet: the input's dtype (int32 stays int32), bool gives int64, dtype= wins
    assert mx.nd.cumsum(mx.nd.array([1, 2], dtype="int32")).dtype == np.int32
    assert mx.nd.cumsum(mx.nd.array([1, 0, 1], dtype="bool")).dtype == np.int64
    r = mx.nd.cumsum(mx.nd.array([1, 2, 3], dtype="int32"), dtype="float64")
    assert r.dtype == np.float64 and r.asnumpy().tolist() == [1, 3, 6]
    a = mx.nd.array(x)
    a.attach_grad()
    with autograd.record():
        y = mx.nd.cumsum(a, axis=0)
    y.backward(mx.nd.array([[1, 2, 3], [4, 5, 6]]))
    assert a.grad.asnumpy().tolist() == [[5, 7, 9], [4, 5, 6]]
    a.attach_grad()
    with autograd.record():
        y = mx.nd.cumsum(a)
    y.backward(mx.nd.arange(1, 7))
    assert a.grad.asnumpy().tolist() == [[21, 20, 18], [15, 11, 6]]
    with pytest.raises(MXNetError, match="out of range"):
        mx.nd.cumsum(a, axis=2)
    s = mx.sym.cumsum(mx.sym.var("a"), axis=1)
    assert s.infer_shape(a=(2, 3))[1] == [(2, 3)]
    assert mx.sym.cumsum(mx.sym.var("a")).infer_shape(a=(2, 3))[1] == [(6,)]
    np.testing.assert_array_equal(s.eval(a=mx.nd.array(x))[0].asnumpy(), np.cumsum(x, axis=1))


# ---------------------------------------------------------- autograd.grad
def test_grad_returns_a_list_and_chains_orders():
    x = mx.nd.array([0.1, 0.2, 0.3, 0.4])
    x.attach_grad()
    h1, h2 = mx.nd.array([1.0, 2.0, 3.0, 4.0]), mx.nd.array([0.5, -1.0, 2.0, 3.0])
    with autograd.record():
        g = autograd.grad(mx.nd.sin(x), x, head_grads=h1, create_graph=True, retain_graph=True)
        assert isinstance(g, list) and len(g) == 1 and g[0].shape == (4,)
        # MXNet's higher-order pattern: y = grad(heads=y, variables=x, ...)[0]
        g2 = autograd.grad(g[0], x, head_grads=h2, create_graph=True, retain_graph=True)[0]
    xn = x.asnumpy()
    np.testing.assert_allclose(g[0].asnumpy(), np.cos(xn) * h1.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(g2.asnumpy(), -np.sin(xn) * h1.asnumpy() * h2.asnumpy(),
                               rtol=1e-5)


def test_second_order_of_batched_loss():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    x.attach_grad()
    with autograd.record():
        loss = (x * x * x).sum(axis=1)                      # one loss per sample
        g = autograd.grad(loss, [x], head_grads=mx.nd.ones((4,)), create_graph=True)[0]
        penalty = (g * g).sum()
    penalty.backward()
    xn = x.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), 3 * xn ** 2, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), 36 * xn ** 3, rtol=1e-5)


# ------------------------------------------- 0 dims of hybridized init ops
class _Unrolled(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.cell = gluon.rnn.LSTMCell(8, input_size=5)
            self.out = gluon.nn.Dense(3, in_units=8)

    def hybrid_forward(self, F, x):
        states = self.cell.begin_state(func=F.zeros, batch_size=0)
        for t in range(3):
            step = F.slice_axis(x, axis=1, begin=t, end=t + 1).reshape((0, -1))
            o, states = self.cell(step, states)
        return self.out(o)


def test_begin_state_batch_size_zero_in_hybridized_block():
    net = _Unrolled()
    net.initialize(mx.init.Constant(0.1))
    net.hybridize()
    x = mx.nd.array(np.arange(4 * 3 * 5).reshape(4, 3, 5) / 60.0)
    y = net(x)
    # what MXNet 1.9.1 gives for this net (rows repeated over the 3 outputs)
    want = np.array([0.033578, 0.114722, 0.21564, 0.320866])[:, None].repeat(3, axis=1)
    np.testing.assert_allclose(y.asnumpy(), want, atol=2e-6)
    # the same cell run imperatively with the batch size given
    cell = net.cell
    states = cell.begin_state(batch_size=4)
    for t in range(3):
        o, states = cell(x[:, t, :], states)
    np.testing.assert_allclose(y.asnumpy(), net.out(o).asnumpy(), rtol=1e-6)
    # another batch size re-infers; gradients flow as through the imperative net
    x2 = mx.nd.array(np.random.RandomState(0).rand(2, 3, 5))
    with autograd.record():
        loss = net(x2).sum()
    loss.backward()
    assert net(x2).shape == (2, 3)
    g = net.cell.i2h_weight.grad().asnumpy().copy()
    cell_states = net.cell.begin_state(batch_size=2)
    with autograd.record():
        for t in range(3):
            o, cell_states = net.cell(x2[:, t, :], cell_states)
        loss = net.out(o).sum()
    loss.backward()
    np.testing.assert_allclose(g, net.cell.i2h_weight.grad().asnumpy(), rtol=1e-5)


def test_unresolvable_zero_dim_says_so():
    class Bad(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.zeros(shape=(0, 4)) + 1       # nothing fixes the 0 dim

    net = Bad()
    net.hybridize()
    with pytest.raises(MXNetError, match="shape"):
        net(mx.nd.ones((2, 4))).asnumpy()
