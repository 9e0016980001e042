"""Sampling ops: moments against the distributions, seeded reproducibility,
per-element NDArray parameters, and invalid parameters named at the call."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

N = (200000,)

CASES = [  # (function, kwargs, mean, variance)
    (mx.nd.random.gamma, dict(alpha=2.0, beta=1.5), 3.0, 4.5),
    (mx.nd.random.poisson, dict(lam=3.5), 3.5, 3.5),
    (mx.nd.random.negative_binomial, dict(k=3, p=0.4), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    (mx.nd.random.generalized_negative_binomial, dict(mu=2.0, alpha=0.5), 2.0, 2.0 + 0.5 * 4.0),
    (mx.nd.random.bernoulli, dict(prob=0.3), 0.3, 0.21),
    (mx.nd.random.exponential, dict(scale=2.0), 2.0, 4.0),
    (mx.nd.random.uniform, dict(low=-1, high=3), 1.0, 16 / 12),
    (mx.nd.random.normal, dict(loc=1, scale=2), 1.0, 4.0),
]


@pytest.mark.parametrize("fn,kw,mean,var", CASES, ids=[c[0].__name__ for c in CASES])
def test_moments_and_dtype(fn, kw, mean, var):
    x = fn(shape=N, **kw)
    assert x.shape == N and x.dtype == np.float32
    v = x.asnumpy().astype(np.float64)
    assert abs(v.mean() - mean) < 0.03 * max(1.0, abs(mean)) + 4 * np.sqrt(var / N[0])
    assert abs(v.var() - var) < 0.05 * var


def test_seed_reproduces_every_distribution():
    def draw():
        mx.random.seed(7)
        return [fn(shape=(50,), **kw).asnumpy() for fn, kw, _, _ in CASES]
    for a, b in zip(draw(), draw()):
        np.testing.assert_array_equal(a, b)


def test_ndarray_parameters_draw_per_element():
    alpha = mx.nd.array([1.0, 50.0])
    beta = mx.nd.array([1.0, 0.1])
    g = mx.nd.random.gamma(alpha, beta, shape=(20000,)).asnumpy()
    assert g.shape == (2, 20000)
    np.testing.assert_allclose(g.mean(axis=1), [1.0, 5.0], rtol=0.05)
    lam = mx.nd.array([[1.0], [10.0]])
    p = mx.nd.random.poisson(lam, shape=(10000,)).asnumpy()
    assert p.shape == (2, 1, 10000)
    np.testing.assert_allclose(p.mean(axis=-1).ravel(), [1.0, 10.0], rtol=0.05)


def test_multinomial_frequencies_shapes_and_log_probs():
    probs = mx.nd.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    s = mx.nd.random.multinomial(probs, shape=(30000,))
    assert s.shape == (2, 30000) and s.dtype == np.int32
    v = s.asnumpy()
    np.testing.assert_allclose(np.bincount(v[0], minlength=3) / 30000, [0.1, 0.2, 0.7], atol=0.015)
    assert (v[1] != 2).all()
    one = mx.nd.random.multinomial(mx.nd.array([0.0, 1.0]))
    assert one.shape == (1,) and one.asscalar() == 1
    idx, logp = mx.nd.random.multinomial(probs, shape=(4,), get_prob=True)
    np.testing.assert_allclose(logp.asnumpy(), np.log(probs.asnumpy()[[[0], [1]], idx.asnumpy()]),
                               rtol=1e-6)


@pytest.mark.parametrize("call,match", [
    (lambda: mx.nd.random.gamma(alpha=-1, shape=(2,)), "alpha must be > 0"),
    (lambda: mx.nd.random.gamma(beta=0, shape=(2,)), "beta must be > 0"),
    (lambda: mx.nd.random.poisson(lam=-0.5, shape=(2,)), "lam must be >= 0"),
    (lambda: mx.nd.random.negative_binomial(k=2, p=1.5, shape=(2,)), r"p must be in \(0, 1\]"),
    (lambda: mx.nd.random.negative_binomial(k=0, p=0.5, shape=(2,)), "k must be > 0"),
    (lambda: mx.nd.random.generalized_negative_binomial(mu=-1, shape=(2,)), "mu must be >= 0"),
    (lambda: mx.nd.random.bernoulli(prob=1.2, shape=(2,)), r"prob must be in \[0, 1\]"),
])
def test_invalid_parameters_raise_at_the_call(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
