"""_random_pdf_*, _random_*_like, _sample_unique_zipfian and the sym.random helpers."""
import math
import threading

import numpy as np
import pytest

import aiond as mx


def _lgamma(x):
    return np.vectorize(math.lgamma)(x)


def test_pdf_values_match_closed_forms():
    x = np.array([[0.5, 1.5, 2.0], [0.2, 3.0, 1.0]])
    a = np.array([2.0, 0.5])
    b = np.array([1.5, 2.0])
    nd = mx.nd
    got = nd.random_pdf_normal(nd.array(x, dtype="float64"), nd.array(a, dtype="float64"),
                               nd.array(b, dtype="float64")).asnumpy()
    want = np.exp(-0.5 * ((x - a[:, None]) / b[:, None]) ** 2) / (np.sqrt(2 * np.pi) * b[:, None])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    got = nd.random_pdf_gamma(nd.array(x, dtype="float64"), nd.array(a, dtype="float64"),
                              nd.array(b, dtype="float64"), is_log=True).asnumpy()
    al, be = a[:, None], b[:, None]
    want = al * np.log(be) + (al - 1) * np.log(x) - be * x - _lgamma(al)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    k = np.array([[0, 1, 4], [2, 3, 0]], dtype="float64")
    got = nd.random_pdf_poisson(nd.array(k, dtype="float64"), nd.array(a, dtype="float64"))
    want = np.exp(k * np.log(a[:, None]) - a[:, None] - _lgamma(k + 1))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-7)


def test_dirichlet_pdf():
    s = np.array([[[0.2, 0.8], [0.5, 0.5]]])       # (1, 2 samples, k=2)
    alpha = np.array([[2.0, 3.0]])
    got = mx.nd.random_pdf_dirichlet(mx.nd.array(s, dtype="float64"),
                                     mx.nd.array(alpha, dtype="float64"), is_log=True).asnumpy()
    want = (math.lgamma(5) - math.lgamma(2) - math.lgamma(3)
            + (1 * np.log(s[..., 0]) + 2 * np.log(s[..., 1])))
    np.testing.assert_allclose(got, want, rtol=1e-7)


@pytest.mark.parametrize("dist,params", [("normal", (0.3, 1.2)), ("gamma", (2.0, 1.5)),
                                          ("exponential", (1.7,)),
                                          ("negative_binomial", (3.0, 0.4)),
                                          ("generalized_negative_binomial", (2.0, 0.5))])
def test_pdf_gradients_match_finite_differences(dist, params):
    x = np.array([[1.0, 2.0]])
    op = getattr(mx.nd, "random_pdf_" + dist)
    ins = [mx.nd.array(x, dtype="float64")] + [mx.nd.array([p], dtype="float64") for p in params]
    for v in ins:
        v.attach_grad()
    with mx.autograd.record():
        y = op(*ins)
    y.backward()
    discrete = "binomial" in dist
    eps = 1e-6
    for i, v in enumerate(ins):
        if i == 0 and discrete:
            continue
        base = [w.asnumpy() for w in ins]
        up = [w.copy() for w in base]
        dn = [w.copy() for w in base]
        up[i] = up[i] + eps
        dn[i] = dn[i] - eps
        fu = op(*[mx.nd.array(w, dtype="float64") for w in up]).asnumpy().sum()
        fd = op(*[mx.nd.array(w, dtype="float64") for w in dn]).asnumpy().sum()
        num = (fu - fd) / (2 * eps)
        np.testing.assert_allclose(v.grad.asnumpy().sum(), num, rtol=1e-4, atol=1e-8)


def test_like_samplers_and_unique_zipfian():
    mx.random.seed(3)
    d = mx.nd.ones((200, 50), dtype="float64")
    s = mx.nd.random.normal_like(d, loc=5.0, scale=0.5).asnumpy()
    assert s.shape == (200, 50) and s.dtype == np.float64 and abs(s.mean() - 5) < 0.05
    u = mx.nd.random.uniform_like(d, low=2, high=3).asnumpy()
    assert u.min() >= 2 and u.max() < 3
    classes, tries = mx.nd._internal._sample_unique_zipfian(1000, shape=(3, 100))
    c = classes.asnumpy()
    assert c.shape == (3, 100) and all(len(set(r)) == 100 for r in c.tolist())
    assert (tries.asnumpy() >= 100).all() and c.max() < 1000
    true = mx.nd.array([0, 3], dtype="int32")
    sampled, cnt_true, cnt_sampled = mx.nd.contrib.rand_zipfian(true, 50, 10)
    p = lambda c: np.log((c + 2.0) / (c + 1.0)) / np.log(11)  # noqa: E731
    np.testing.assert_allclose(cnt_true.asnumpy(), p(np.array([0, 3])) * 50)
    np.testing.assert_allclose(cnt_sampled.asnumpy(), p(sampled.asnumpy()) * 50)


def test_sym_random_dispatches_on_parameter_type():
    v1, v2 = mx.sym.var("v1"), mx.sym.var("v2")
    assert mx.sym.random.normal(v1, v2, shape=(3,)).list_arguments() == ["v1", "v2"]
    assert "_random_normal" in mx.sym.random.normal(1, 2, shape=(3,)).name
    with pytest.raises(TypeError):
        mx.sym.random.uniform(v1, 1)
    out = mx.sym.random.shuffle(v1).eval(v1=mx.nd.arange(5), ctx=mx.cpu())[0].asnumpy()
    assert sorted(out.tolist()) == [0, 1, 2, 3, 4]


def test_negative_seed_is_a_c_int():
    mx.random.seed(-5)
    a = mx.nd.random.uniform(shape=(3,)).asnumpy()
    mx.random.seed(-5 & 0xFFFFFFFF)
    assert (mx.nd.random.uniform(shape=(3,)).asnumpy() == a).all()


def test_current_scopes_are_settable_per_thread():
    seen = {}
    old = mx.AttrScope.current
    try:
        mx.AttrScope.current = mx.AttrScope(x="main")

        def f():
            seen["attr"] = mx.AttrScope.current._attr
            seen["ctx"] = mx.Context.default_ctx
        t = threading.Thread(target=f)
        t.start()
        t.join()
        assert mx.AttrScope.current._attr == {"x": "main"}
        assert seen["attr"] == {} and seen["ctx"] == mx.cpu(0)
    finally:
        mx.AttrScope.current = old
