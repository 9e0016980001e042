"""np.random / npx.random: shapes, dtypes, distributions (moments checked
against NumPy's formulas), reparameterised gradients, nd and sym/hybridized
calls, and MXNet's errors."""
import numpy as onp
import pytest

import aiond as mx
from aiond import autograd, gluon, np, npx
from aiond.base import MXNetError


@pytest.fixture(autouse=True)
def _np_mode():
    npx.set_np()
    yield
    npx.reset_np()


SHAPES = [((), ()), (None, ()), (3, (3,)), ((2, 0, 4), (2, 0, 4)), ((2, 3), (2, 3))]


@pytest.mark.parametrize("size,expected", SHAPES)
def test_sizes(size, expected):
    for fn in (lambda: np.random.uniform(size=size), lambda: np.random.normal(size=size),
               lambda: np.random.gamma(2.0, size=size), lambda: np.random.exponential(size=size),
               lambda: np.random.weibull(1.5, size=size), lambda: np.random.pareto(2.0, size=size),
               lambda: np.random.power(2.0, size=size), lambda: np.random.rayleigh(size=size),
               lambda: np.random.logistic(size=size), lambda: np.random.gumbel(size=size),
               lambda: np.random.lognormal(size=size), lambda: np.random.beta(2, 3, size=size),
               lambda: np.random.chisquare(3, size=size),
               lambda: npx.random.bernoulli(0.3, size=size)):
        out = fn()
        assert isinstance(out, np.ndarray)
        assert out.shape == expected
        assert out.dtype == onp.float32


def test_dtypes_and_broadcast_shape():
    assert np.random.uniform(size=(2,), dtype="float64").dtype == onp.float64
    assert np.random.normal(size=(2,), dtype="float16").dtype == onp.float16
    assert np.random.gamma(1, size=(2,), dtype="float64").dtype == onp.float64
    # float64 parameters still give float32 samples (MXNet's dtype default)
    assert np.random.normal(np.zeros((3, 1), dtype="float64"), np.ones((4,))).shape == (3, 4)
    assert np.random.normal(np.zeros((3, 1), dtype="float64"), 1.0).dtype == onp.float32
    assert np.random.randint(5, size=(3,)).dtype == onp.int64
    assert np.random.randint(0, 5, size=(3,), dtype="int32").dtype == onp.int32
    assert npx.random.bernoulli(logit=np.zeros((2,)), dtype="bool").dtype == onp.bool_
    assert npx.random.normal_n(np.zeros((2,)), 1.0, batch_shape=(3,)).shape == (3, 2)
    assert npx.random.uniform_n(0.0, np.ones((2, 2)), batch_shape=4).shape == (4, 2, 2)
    assert np.random.rand(2, 3).shape == (2, 3) and np.random.randn().shape == ()
    with pytest.raises(MXNetError):
        np.random.normal(np.zeros((3,)), 1.0, size=(2,))    # (3,) does not broadcast to (2,)


def test_moments():
    mx.random.seed(11)
    n = 200000
    checks = [
        (np.random.uniform(2, 5, size=n), 3.5, 9 / 12),
        (np.random.normal(1, 2, size=n), 1.0, 4.0),
        (np.random.gamma(3, 2, size=n), 6.0, 12.0),
        (np.random.exponential(2, size=n), 2.0, 4.0),
        (np.random.rayleigh(2, size=n), 2 * onp.sqrt(onp.pi / 2), (4 - onp.pi) / 2 * 4),
        (np.random.logistic(1, 2, size=n), 1.0, onp.pi ** 2 / 3 * 4),
        (np.random.gumbel(1, 2, size=n), 1 + 2 * onp.euler_gamma, onp.pi ** 2 / 6 * 4),
        (np.random.pareto(5, size=n), 1 / 4, 5 / (16 * 3)),
        (np.random.weibull(2, size=n), onp.sqrt(onp.pi) / 2, 1 - onp.pi / 4),
        (np.random.power(3, size=n), 3 / 4, 3 / (16 * 5)),
        (np.random.beta(2, 3, size=n), 0.4, 6 / (25 * 6)),
        (np.random.chisquare(4, size=n), 4.0, 8.0),
        (npx.random.bernoulli(0.3, size=n), 0.3, 0.21),
    ]
    for x, mean, var in checks:
        a = x.asnumpy().astype(onp.float64)
        assert abs(a.mean() - mean) < 0.02 * max(1, abs(mean)) + 4 * onp.sqrt(var / n)
        assert abs(a.var() - var) < 0.05 * var
    assert (np.random.power(3, size=1000).asnumpy() <= 1).all()
    u = np.random.rand(100000, dtype="float16").asnumpy()
    assert (u < 1).all() and (u >= 0).all()


def test_seed_reproducible():
    npx.random.seed(seed=5)
    a = np.random.normal(size=(4,)).asnumpy()
    npx.random.seed(5)
    assert (np.random.normal(size=(4,)).asnumpy() == a).all()


def test_choice_multinomial_mvn_shuffle():
    mx.random.seed(3)
    c = np.random.choice(30, size=(4, 5), replace=False)
    assert c.dtype == onp.int64 and len(onp.unique(c.asnumpy())) == 20
    w = np.array([0.0, 0.0, 1.0, 0.0])
    assert (np.random.choice(4, size=(10,), p=w).asnumpy() == 2).all()
    pool = np.array([5.0, 6.0, 7.0])
    assert set(np.random.choice(pool, size=(20,)).asnumpy().tolist()) <= {5.0, 6.0, 7.0}
    with pytest.raises(ValueError):
        np.random.choice(3, size=(4,), replace=False)
    m = np.random.multinomial(10, [0.2, 0.3, 0.5], size=(6,))
    assert m.shape == (6, 3) and m.dtype == onp.int64
    assert (m.asnumpy().sum(axis=1) == 10).all()
    assert np.random.multinomial(4, np.array([0.5, 0.5])).shape == (2,)
    mean = np.array([1.0, -1.0])
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    s = np.random.multivariate_normal(mean, cov, size=50000).asnumpy()
    assert s.shape == (50000, 2)
    onp.testing.assert_allclose(onp.cov(s.T), cov.asnumpy(), atol=0.05)
    assert np.random.multivariate_normal(np.zeros((3, 2)), np.eye(2), size=(4,)).shape == (4, 3, 2)
    x = np.arange(10)
    np.random.shuffle(x)
    assert sorted(x.asnumpy().tolist()) == list(range(10))


def test_bad_parameters():
    for fn in (lambda: np.random.normal(0, -1), lambda: np.random.rayleigh(-1),
               lambda: np.random.exponential(-1), lambda: np.random.weibull(0),
               lambda: np.random.pareto(-1), lambda: np.random.power(0),
               lambda: np.random.gamma(1, 0), lambda: np.random.gamma(np.array(0.0), 1),
               lambda: np.random.lognormal(sigma=-1),
               lambda: npx.random.bernoulli(np.array([0.5, 1.5]))):
        with pytest.raises(ValueError):
            fn().asnumpy()
    np.random.uniform(size=1).asnumpy()     # a good draw after the failures
    with pytest.raises(ValueError):
        npx.random.bernoulli(prob=0.5, logit=0.0)
    with pytest.raises(ValueError):
        np.random.randint(5, 5)
    with pytest.raises(MXNetError):
        np.random.uniform(size=(2,), dtype="int32")


@pytest.mark.parametrize("name", ["normal", "logistic", "gumbel"])
def test_loc_scale_gradient(name):
    loc = np.zeros((3, 2))
    scale = np.full((2,), 2.0)
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        y = getattr(np.random, name)(loc, scale, size=(4, 3, 2))
    y.backward()
    onp.testing.assert_allclose(loc.grad.asnumpy(), onp.full((3, 2), 4.0))
    # y = loc + scale * noise: d/dscale = sum of noise = sum((y - loc) / scale)
    want = ((y.asnumpy() - 0.0) / 2.0).sum(axis=(0, 1))
    onp.testing.assert_allclose(scale.grad.asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_one_parameter_gradients():
    a = np.full((5,), 2.0)
    a.attach_grad()
    for name, grad in (
            ("weibull", lambda y, a: -y * onp.log(y) / a),
            ("pareto", lambda y, a: -(y + 1) * onp.log1p(y) / a),
            ("exponential", lambda y, a: y / a),
            ("rayleigh", lambda y, a: y / a)):
        with autograd.record():
            y = getattr(np.random, name)(a, size=(3, 5))
        y.backward()
        yv = y.asnumpy().astype(onp.float64)
        onp.testing.assert_allclose(a.grad.asnumpy(), grad(yv, 2.0).sum(axis=0), rtol=1e-3,
                                    atol=1e-4)
    m = np.zeros((4,))
    m.attach_grad()
    with autograd.record():
        y = np.random.lognormal(m, 1.0)
    y.backward()
    onp.testing.assert_allclose(m.grad.asnumpy(), y.asnumpy(), rtol=1e-5)
    # MXNet's zero gradients
    low = np.zeros((3,))
    low.attach_grad()
    with autograd.record():
        y = np.random.uniform(low, 1.0)
    y.backward()
    assert (low.grad.asnumpy() == 0).all()


class _Sampler(gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, a, b):
        return self._fn(F, a, b)


@pytest.mark.parametrize("hybridize", [False, True])
def test_hybridized_samplers(hybridize):
    cases = [
        (lambda F, a, b: F.np.random.normal(a, b, size=(4, 3)), (4, 3)),
        (lambda F, a, b: F.np.random.gamma(a, b), (3,)),
        (lambda F, a, b: F.np.random.beta(a, b, size=(2, 3)), (2, 3)),
        (lambda F, a, b: F.np.random.chisquare(a, size=(3,)), (3,)),
        (lambda F, a, b: F.npx.random.normal_n(a, b, batch_shape=(2,)), (2, 3)),
        (lambda F, a, b: a + F.np.random.uniform(size=(3,)), (3,)),
        (lambda F, a, b: F.np.random.choice(a, size=(2,)), (2,)),
        (lambda F, a, b: F.np.random.rayleigh(a), (3,)),
        (lambda F, a, b: F.npx.random.bernoulli(logit=a, size=(2, 3)), (2, 3)),
    ]
    a, b = np.ones((3,)), np.full((3,), 2.0)
    for fn, shape in cases:
        net = _Sampler(fn)
        if hybridize:
            net.hybridize()
        out = net(a, b)
        assert isinstance(out, np.ndarray) and out.shape == shape
    # reparameterised gradient through a hybridized graph
    net = _Sampler(lambda F, a, b: F.np.random.normal(a, b, size=(5, 3)))
    if hybridize:
        net.hybridize()
    a.attach_grad()
    with autograd.record():
        y = net(a, b)
    y.backward()
    onp.testing.assert_allclose(a.grad.asnumpy(), onp.full((3,), 5.0))


def test_symbol_json_names():
    x = mx.sym.var("x").as_np_ndarray()
    s = mx.sym.np.random.normal(x, 1.0, size=(3,))
    js = s.tojson()
    assert "_npi_normal" in js
    out = s.as_nd_ndarray().eval(x=mx.nd.zeros((3,)))[0]
    assert out.shape == (3,)


def test_out_and_ctx():
    o = np.zeros((2, 3))
    assert np.random.normal(np.zeros((3,)), 1.0, size=(2, 3), out=o) is o
    assert (o.asnumpy() != 0).all()
    assert np.random.exponential(size=(2, 3), out=o) is o and (o.asnumpy() >= 0).all()
    assert np.random.uniform(size=(2, 3), out=o) is o
    c = mx.cpu(1)
    assert np.random.uniform(size=2, ctx=c).context == c
    assert np.random.randint(3, size=2, ctx=c).context == c
    assert npx.random.bernoulli(0.5, size=2, ctx=c).context == c


def test_device_samplers(fake_gpu):
    """On a GPU context (the CuPy double) the samplers draw on the device; those
    with a host kernel (gamma, choice, multinomial, mvn) round-trip the host."""
    g = mx.gpu(0)
    n = 100000
    cases = [
        (np.random.normal(1, 2, size=n, ctx=g), 1.0, 4.0),
        (np.random.uniform(2, 5, size=n, ctx=g), 3.5, 0.75),
        (np.random.exponential(np.full((n,), 2.0, ctx=g)), 2.0, 4.0),
        (np.random.gamma(3, 2, size=n, ctx=g), 6.0, 12.0),
        (np.random.logistic(0, 1, size=n, ctx=g), 0.0, onp.pi ** 2 / 3),
        (npx.random.bernoulli(0.3, size=n, ctx=g), 0.3, 0.21),
    ]
    for x, mean, var in cases:
        assert x.context == g
        a = x.asnumpy().astype(onp.float64)
        assert abs(a.mean() - mean) < 0.05 * max(1, abs(mean))
        assert abs(a.var() - var) < 0.05 * var
    loc = np.zeros((3,), ctx=g)
    loc.attach_grad()
    with autograd.record():
        y = np.random.normal(loc, 1.0, size=(4, 3))
    y.backward()
    onp.testing.assert_allclose(loc.grad.asnumpy(), [4.0, 4.0, 4.0])
    assert np.random.choice(5, size=(3,), ctx=g).context == g
    assert np.random.multivariate_normal(np.zeros((2,), ctx=g), np.eye(2, ctx=g)).shape == (2,)
