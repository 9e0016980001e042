"""khatri_rao, contrib round_ste/sign_ste, contrib hawkesll, the AdamW update
ops and Group AdaGrad (issue 31). Expected values are numpy references or
numbers MXNet 1.9.1 returns for the same calls."""
import numpy as np
import pytest

import aiond as mx
from aiond import nd
from aiond.base import MXNetError


# ------------------------------------------------------------- khatri_rao

def test_khatri_rao_doc_example():
    A = nd.array([[1, -1], [2, -3]])
    B = nd.array([[1, 4], [2, 5], [3, 6]])
    np.testing.assert_array_equal(nd.khatri_rao(A, B).asnumpy(),
                                  [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]])


def test_khatri_rao_three_and_one():
    rs = np.random.RandomState(1)
    a, b, c = rs.rand(3, 4), rs.rand(2, 4), rs.rand(5, 4)
    want = np.einsum("ik,jk,lk->ijlk", a, b, c).reshape(-1, 4)
    got = nd.khatri_rao(nd.array(a), nd.array(b), nd.array(c)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(nd.khatri_rao(nd.array(a)).asnumpy(), a.astype(np.float32))


def test_khatri_rao_gradient():
    rs = np.random.RandomState(2)
    a, b, h = rs.rand(3, 2), rs.rand(4, 2), rs.rand(12, 2)
    A, B = nd.array(a, dtype="float64"), nd.array(b, dtype="float64")
    A.attach_grad()
    B.attach_grad()
    with mx.autograd.record():
        y = nd.khatri_rao(A, B)
    y.backward(nd.array(h, dtype="float64"))
    h3 = h.reshape(3, 4, 2)
    np.testing.assert_allclose(A.grad.asnumpy(), np.einsum("ijk,jk->ik", h3, b))
    np.testing.assert_allclose(B.grad.asnumpy(), np.einsum("ijk,ik->jk", h3, a))


def test_khatri_rao_symbol():
    s = mx.sym.khatri_rao(mx.sym.var("a"), mx.sym.var("b"))
    _, out, _ = s.infer_shape(a=(3, 5), b=(4, 5))
    assert out == [(12, 5)]


def test_khatri_rao_bad_input():
    with pytest.raises(MXNetError, match="same number of columns"):
        nd.khatri_rao(nd.ones((2, 3)), nd.ones((2, 4)))
    with pytest.raises(MXNetError, match="matrices"):
        nd.khatri_rao(nd.ones((2, 3)), nd.ones((3,)))


# ------------------------------------------------------------------ STEs

def test_round_sign_ste_forward_and_gradient():
    x = nd.array([-1.5, 1.5, -1.9, 0.0, 2.5, 0.4])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.round_ste(x) * 3
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [-6, 6, -6, 0, 9, 0])   # half away from zero
    np.testing.assert_array_equal(x.grad.asnumpy(), [3] * 6)
    with mx.autograd.record():
        z = nd.contrib.sign_ste(x) * x
    z.backward()
    np.testing.assert_array_equal(z.asnumpy(), np.abs(x.asnumpy()))
    # d/dx sign_ste(x)*x = x + sign(x)
    np.testing.assert_allclose(x.grad.asnumpy(), x.asnumpy() + np.sign(x.asnumpy()))


def test_ste_keeps_sparse_storage():
    x = nd.array([[0, 0], [1.6, -0.2], [0, 0]]).tostype("row_sparse")
    y = nd.contrib.round_ste(x)
    assert y.stype == "row_sparse"
    np.testing.assert_array_equal(y.asnumpy(), [[0, 0], [2, 0], [0, 0]])
    assert nd.contrib.sign_ste(x.tostype("default").tostype("csr")).stype == "csr"


def test_ste_in_hybridized_block():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.contrib.round_ste(x * 2)

    net = Net()
    net.hybridize()
    x = nd.array([0.3, 0.8, -1.1])
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, -2])
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2])


# --------------------------------------------------------------- hawkesll

def _hawkes_inputs(dtype="float64"):
    mu = nd.array([[1.5, 2.0, 3.0]] * 2, dtype=dtype)
    alpha = nd.array([0.2, 0.3, 0.4], dtype=dtype)
    beta = nd.array([2.0, 2.0, 2.0], dtype=dtype)
    lags = nd.array([[6, 7, 8, 9, 3, 2, 5, 1, 7], [1, 2, 3, 4, 2, 1, 2, 1, 4]], dtype=dtype)
    marks = nd.array([[0, 0, 0, 1, 0, 0, 1, 2, 0], [1, 2, 0, 0, 0, 2, 2, 1, 0]],
                     dtype="int32")
    return (mu, alpha, beta, nd.zeros((2, 3), dtype=dtype), lags, marks,
            nd.array([9, 9], dtype=dtype), nd.array([100, 100], dtype=dtype))


def test_hawkesll_values_and_gradient_match_mxnet():
    mu, alpha, beta, state, *rest = _hawkes_inputs()
    for a in (mu, alpha, beta):
        a.attach_grad()
    with mx.autograd.record():
        ll, st = nd.contrib.hawkesll(mu, alpha, beta, state, *rest)
    ll.backward()
    assert ll.shape == (2,) and st.shape == (2, 3)
    # MXNet 1.9.1's test_hawkesll_backward_correct (mu tiled: its gradient is the sum)
    np.testing.assert_allclose(mu.grad.asnumpy().sum(axis=0),
                               [-193.33987481, -198.0, -198.66828681], rtol=1e-7)
    np.testing.assert_allclose(alpha.grad.asnumpy(), [-9.95093892, -4.0, -3.98784892],
                               rtol=1e-7)
    np.testing.assert_allclose(beta.grad.asnumpy(),
                               [-1.49052169e-02, -5.87469511e-09, -7.29065224e-03], rtol=1e-6)


def test_hawkesll_forward_single_sequence():
    # one mark, one sequence: MXNet 1.9.1 gives -148.4815
    f = "float32"
    ll, st = nd.contrib.hawkesll(nd.array([[1.5]], dtype=f), nd.array([0.2], dtype=f),
                                 nd.array([1.0], dtype=f), nd.zeros((1, 1), dtype=f),
                                 nd.array([[6, 7, 8, 3, 2, 1, 7]], dtype=f),
                                 nd.zeros((1, 7), dtype="int32"), nd.array([7], dtype=f),
                                 nd.array([100], dtype=f))
    assert ll.dtype == np.float32
    np.testing.assert_allclose(ll.asnumpy(), [-148.4815], rtol=1e-6)
    # the state decays from the last point (t=34) to max_time
    phi = 0.0
    for lag in [6, 7, 8, 3, 2, 1, 7]:
        phi = 1 + phi * np.exp(-lag)
    np.testing.assert_allclose(st.asnumpy(), [[phi * np.exp(-(100 - 34))]], rtol=1e-5)


def test_hawkesll_state_gradient_by_finite_differences():
    mu, alpha, beta, _, lags, marks, vl, mt = _hawkes_inputs()
    s0 = np.array([[0.3, 0.1, 0.7], [0.5, 0.2, 0.0]])
    mt = nd.array([49, 21.5], dtype="float64")   # shortly after the last points (48, 20)
    w_st = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -1.0]])

    def f(s):
        return ((nd.contrib.hawkesll(mu, alpha, beta, nd.array(s, dtype="float64"), lags,
                                     marks, vl, mt)[1] * nd.array(w_st, dtype="float64")).sum()
                + nd.contrib.hawkesll(mu, alpha, beta, nd.array(s, dtype="float64"), lags,
                                      marks, vl, mt)[0].sum()).asscalar()
    S = nd.array(s0, dtype="float64")
    S.attach_grad()
    with mx.autograd.record():
        ll, st = nd.contrib.hawkesll(mu, alpha, beta, S, lags, marks, vl, mt)
        z = ll.sum() + (st * nd.array(w_st, dtype="float64")).sum()
    z.backward()
    num = np.zeros_like(s0)
    for idx in np.ndindex(s0.shape):
        e = np.zeros_like(s0)
        e[idx] = 1e-6
        num[idx] = (f(s0 + e) - f(s0 - e)) / 2e-6
    np.testing.assert_allclose(S.grad.asnumpy(), num, rtol=1e-5, atol=1e-8)


def test_hawkesll_bad_input():
    mu, alpha, beta, state, lags, marks, vl, mt = _hawkes_inputs()
    with pytest.raises(MXNetError, match="int32"):
        nd.contrib.hawkesll(mu, alpha, beta, state, lags, marks.astype("float64"), vl, mt)
    with pytest.raises(MXNetError, match="not a mark"):
        nd.contrib.hawkesll(mu, alpha, beta, state, lags, marks + 1, vl, mt)[0].asnumpy()
    with pytest.raises(MXNetError, match="alpha"):
        nd.contrib.hawkesll(mu, alpha[:2], beta, state, lags, marks, vl, mt)


# ----------------------------------------------------------------- AdamW

def _adamw_ref(w, g, m, v, rescale, lr, eta, wd, b1=0.9, b2=0.999, eps=1e-8, clip=-1):
    g = g * rescale
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v


def _arrays(seed, shape=(3, 4)):
    rs = np.random.RandomState(seed)
    return [rs.uniform(-1, 1, shape).astype(np.float32) for _ in range(2)] + \
        [rs.uniform(0, 1, shape).astype(np.float32) for _ in range(2)]


def test_adamw_update_matches_reference():
    w, g, m, v = _arrays(0)
    W, G, M, V = (nd.array(a) for a in (w, g, m, v))
    nd.contrib.adamw_update(W, G, M, V, 2.0, lr=0.1, eta=0.5, wd=0.01, clip_gradient=1.5,
                            out=W)
    rw, rm, rv = _adamw_ref(w, g, m, v, 2.0, 0.1, 0.5, 0.01, clip=1.5)
    np.testing.assert_allclose(W.asnumpy(), rw, rtol=1e-5)
    np.testing.assert_allclose(M.asnumpy(), rm, rtol=1e-5)
    np.testing.assert_allclose(V.asnumpy(), rv, rtol=1e-5)


@pytest.mark.parametrize("scale", [0.0, float("nan"), float("inf")])
def test_adamw_update_skipped_for_bad_rescale(scale):
    w, g, m, v = _arrays(1)
    W, G, M, V = (nd.array(a) for a in (w, g, m, v))
    out = nd.contrib.adamw_update(W, G, M, V, nd.array([scale]), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), w)
    np.testing.assert_array_equal(M.asnumpy(), m)
    np.testing.assert_array_equal(V.asnumpy(), v)


def test_multi_and_mp_adamw_update():
    shapes = [(2, 3), (4,), (3, 1)]
    arrs = [_arrays(10 + i, s) for i, s in enumerate(shapes)]
    W, G, M, V = ([nd.array(a[k]) for a in arrs] for k in range(4))
    lrs, etas, wds = [0.1, 0.2, 0.3], [1.0, 0.9, 0.8], [0.0, 0.01, 0.1]
    nd.contrib.multi_adamw_update(W, G, M, V, 0.5, lrs=lrs, wds=wds, etas=etas, out=W)
    for i, a in enumerate(arrs):
        rw, rm, rv = _adamw_ref(*a, 0.5, lrs[i], etas[i], wds[i])
        np.testing.assert_allclose(W[i].asnumpy(), rw, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(M[i].asnumpy(), rm, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(V[i].asnumpy(), rv, rtol=1e-5, atol=1e-7)
    # multi-precision: float16 weights, float32 master copies carry the update
    arrs = [_arrays(20 + i, s) for i, s in enumerate(shapes)]
    W32, G, M, V = ([nd.array(a[k]) for a in arrs] for k in range(4))
    W16 = [w.astype("float16") for w in W32]
    G16 = [g.astype("float16") for g in G]
    nd.contrib.multi_mp_adamw_update(W16, G16, M, V, W32, 1.0, lrs=lrs, wds=wds, etas=etas,
                                     out=W16)
    for i, a in enumerate(arrs):
        g16 = a[1].astype(np.float16).astype(np.float32)
        rw, _, _ = _adamw_ref(a[0], g16, a[2], a[3], 1.0, lrs[i], etas[i], wds[i])
        np.testing.assert_allclose(W32[i].asnumpy(), rw, rtol=1e-5, atol=1e-7)
        assert W16[i].dtype == np.float16
        np.testing.assert_array_equal(W16[i].asnumpy(), rw.astype(np.float16))


def test_mp_adamw_update_single():
    w, g, m, v = _arrays(30)
    W32, M, V = nd.array(w), nd.array(m), nd.array(v)
    W16 = W32.astype("float16")
    out = nd.contrib.mp_adamw_update(W16, nd.array(g).astype("float16"), M, V, W32, 1.0,
                                     lr=0.05, eta=1.0, wd=0.1)
    rw, _, _ = _adamw_ref(w, g.astype(np.float16).astype(np.float32), m, v, 1.0, 0.05, 1.0, 0.1)
    np.testing.assert_allclose(W32.asnumpy(), rw, rtol=1e-5)
    np.testing.assert_array_equal(out.asnumpy(), rw.astype(np.float16))


def test_adamw_bad_input():
    W = [nd.ones((2,)), nd.ones((2,))]
    with pytest.raises(MXNetError, match="Number of learning rates"):
        nd.contrib.multi_adamw_update(W, W, [nd.ones((2,))] * 2, [nd.ones((2,))] * 2, 1.0,
                                      lrs=[0.1], wds=[0, 0], etas=[1, 1])
    with pytest.raises(MXNetError, match="one value"):
        nd.contrib.adamw_update(W[0], W[1], nd.ones((2,)), nd.ones((2,)), nd.ones((2,)),
                                lr=0.1, eta=1)
    with pytest.raises(MXNetError, match="float32"):
        nd.contrib.mp_adamw_update(W[0].astype("float16"), W[1].astype("float16"),
                                   nd.ones((2,), dtype="float16"), nd.ones((2,)), nd.ones((2,)),
                                   1.0, lr=0.1, eta=1)


# ----------------------------------------------------------- Group AdaGrad

def _group_ref(w, g, h, lr, rescale=1.0, clip=-1, eps=1e-5):
    g = g * rescale
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    h = h + (g * g).mean(axis=1, keepdims=True)
    return w - lr * g / np.sqrt(h + eps), h


def test_group_adagrad_update_dense_and_row_sparse():
    rs = np.random.RandomState(3)
    w, g = rs.uniform(-1, 1, (4, 3)).astype(np.float32), rs.uniform(-1, 1, (4, 3)).astype(
        np.float32)
    h = rs.uniform(0, 1, (4, 1)).astype(np.float32)
    W, H = nd.array(w), nd.array(h)
    nd.contrib.group_adagrad_update(W, nd.array(g), H, lr=0.1, rescale_grad=0.5,
                                    clip_gradient=0.2, out=W)
    rw, rh = _group_ref(w, g, h, 0.1, 0.5, 0.2)
    np.testing.assert_allclose(W.asnumpy(), rw, rtol=1e-5)
    np.testing.assert_allclose(H.asnumpy(), rh, rtol=1e-5)
    # a row_sparse gradient holding rows 1 and 3: the other rows stay as they were
    gs = g.copy()
    gs[[0, 2]] = 0
    W, H = nd.array(w), nd.array(h)
    nd.contrib.group_adagrad_update(W, nd.array(gs).tostype("row_sparse"), H, lr=0.1, out=W)
    rw, rh = _group_ref(w, gs, h, 0.1)
    np.testing.assert_allclose(W.asnumpy(), rw, rtol=1e-5)
    np.testing.assert_allclose(H.asnumpy(), rh, rtol=1e-5)
    np.testing.assert_array_equal(W.asnumpy()[[0, 2]], w[[0, 2]])


def test_group_adagrad_optimizer():
    opt = mx.optimizer.create("groupadagrad", learning_rate=0.2, eps=1e-6, rescale_grad=2.0)
    assert isinstance(opt, mx.optimizer.contrib.GroupAdaGrad)
    rs = np.random.RandomState(4)
    w, g = rs.rand(3, 2).astype(np.float32), rs.rand(3, 2).astype(np.float32)
    W = nd.array(w)
    state = opt.create_state(0, W)
    assert state.shape == (3, 1)
    opt.update(0, W, nd.array(g), state)
    rw, rh = _group_ref(w, g, np.zeros((3, 1), np.float32), 0.2, 2.0, eps=1e-6)
    np.testing.assert_allclose(W.asnumpy(), rw, rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), rh, rtol=1e-5)
    with pytest.raises(ValueError, match="Weight decay"):
        mx.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, W, nd.array(g), state)
    with pytest.raises(MXNetError, match="history"):
        nd.contrib.group_adagrad_update(W, nd.array(g), nd.zeros((3, 2)), lr=0.1)
