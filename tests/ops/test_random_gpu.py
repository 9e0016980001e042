"""Random numbers drawn on the device: each GPU context's samplers draw from
that device's CuPy generator on the op's stream (never its host generator,
never a host synchronization), seeded per device as MXNet seeds them.

Most tests run on the CuPy test double (``fake_gpu``: its ``RandomState``
draws from numpy into device arrays and counts what it was asked); the
``ctx`` ones run on the CPU always and on a real device under ``-m gpu``.
"""
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.engine import gpu as _gpu
from aiond.ops import registry
from aiond.ops.random import rng_state

N = (200000,)

DISTS = [  # (name, function, kwargs, mean, variance)
    ("uniform", mx.nd.random.uniform, dict(low=-1, high=3), 1.0, 16 / 12),
    ("normal", mx.nd.random.normal, dict(loc=1, scale=2), 1.0, 4.0),
    ("exponential", mx.nd.random.exponential, dict(scale=2.0), 2.0, 4.0),
    ("gamma", mx.nd.random.gamma, dict(alpha=2.0, beta=1.5), 3.0, 4.5),
    ("poisson", mx.nd.random.poisson, dict(lam=3.5), 3.5, 3.5),
    ("negative_binomial", mx.nd.random.negative_binomial, dict(k=3, p=0.4),
     3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    ("generalized_negative_binomial", mx.nd.random.generalized_negative_binomial,
     dict(mu=2.0, alpha=0.5), 2.0, 2.0 + 0.5 * 4.0),
    ("bernoulli", mx.nd.random.bernoulli, dict(prob=0.3), 0.3, 0.21),
    ("randint", mx.nd.random.randint, dict(low=-3, high=7), 1.5, (10 ** 2 - 1) / 12),
]
IDS = [d[0] for d in DISTS]


def _host_state(ctx):
    return rng_state(ctx).gen.bit_generator.state


def _draw(ctx, shape=(64,)):
    return [fn(shape=shape, ctx=ctx, **kw).asnumpy() for _, fn, kw, _, _ in DISTS]


class _Gate:
    def __init__(self, stream):
        self.ev = threading.Event()
        stream.block(self.ev)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.ev.set()


def _check_moments(v, mean, var):
    v = v.astype(np.float64)
    assert abs(v.mean() - mean) < 0.03 * max(1.0, abs(mean)) + 4 * np.sqrt(var / v.size)
    assert abs(v.var() - var) < 0.05 * var


@pytest.mark.parametrize("name,fn,kw,mean,var", DISTS, ids=IDS)
def test_device_draws_have_the_distributions_moments(fake_gpu, name, fn, kw, mean, var):
    x = fn(shape=N, ctx=mx.gpu(0), **kw)
    assert x.shape == N and x.context == mx.gpu(0)
    assert x.dtype == (np.int32 if name == "randint" else np.float32)
    v = x.asnumpy()
    _check_moments(v, mean, var)
    if name == "randint":
        assert v.min() == -3 and v.max() == 6
    if name == "uniform":
        assert v.min() >= -1 and v.max() < 3


def test_samplers_draw_on_the_device_without_a_host_sync(fake_gpu):
    """Every sampler is launched while the device is still busy with an
    earlier kernel (so nothing waited on the host), from the device's
    generator on the compute stream: the host generator is never touched."""
    g = mx.gpu(0)
    x = mx.nd.ones((8,), ctx=g)
    x.wait_to_read()
    ex = _gpu.executor(g)
    host_before = _host_state(g)
    syncs, launched = fake_gpu.syncs, ex.launched
    with _Gate(ex.compute):
        outs = [fn(shape=(16,), ctx=g, **kw) for _, fn, kw, _, _ in DISTS]
        outs.append(mx.nd.random.shuffle(mx.nd.arange(16, ctx=g)))
        outs.append(mx.nd.random.multinomial(mx.nd.array([[0.2, 0.8]], ctx=g), shape=(8,)))
        outs.append(mx.nd.Dropout(x, p=0.5, mode="always"))
        outs.append(mx.nd.random_normal_like(x))
        outs.append(mx.nd.random.normal(x, x, shape=(2,)))
        assert ex.launched - launched >= len(outs)
        assert fake_gpu.syncs == syncs
    for o in outs:
        o.asnumpy()
    assert _host_state(g) == host_before
    (gen,) = [r for r in fake_gpu.generators if r._dev == 0]
    assert gen.draws >= len(outs)
    assert not [r for r in fake_gpu.generators if r._dev == 1]


def test_seed_gives_each_device_its_own_reproducible_stream(fake_gpu):
    mx.random.seed(7)
    a0, a1 = _draw(mx.gpu(0)), _draw(mx.gpu(1))
    mx.random.seed(7)
    b0, b1 = _draw(mx.gpu(0)), _draw(mx.gpu(1))
    for x, y in zip(a0 + a1, b0 + b1):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a0[0], a1[0])     # devices do not share a stream
    mx.random.seed(8)
    assert not np.array_equal(_draw(mx.gpu(0))[0], a0[0])


def test_seeding_one_device_leaves_the_others_alone(fake_gpu):
    g0, g1 = mx.gpu(0), mx.gpu(1)
    mx.random.seed(7)
    first = mx.nd.random.normal(shape=(32,), ctx=g0).asnumpy()
    cont = mx.nd.random.normal(shape=(32,), ctx=g0).asnumpy()
    cpu_ref = mx.nd.random.normal(shape=(32,)).asnumpy()

    mx.random.seed(7)
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(32,), ctx=g0).asnumpy(), first)
    mx.random.seed(99, ctx=g1)           # gpu(0) and the CPU go on where they were
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(32,), ctx=g0).asnumpy(), cont)
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(32,)).asnumpy(), cpu_ref)

    mx.random.seed(99, ctx=g1)
    z = mx.nd.random.normal(shape=(32,), ctx=g1).asnumpy()
    mx.random.seed(99, ctx=g1)
    np.testing.assert_array_equal(mx.nd.random.normal(shape=(32,), ctx=g1).asnumpy(), z)
    mx.random.seed(99, ctx=g0)
    assert not np.array_equal(mx.nd.random.normal(shape=(32,), ctx=g0).asnumpy(), z)


def test_reseed_pushed_between_device_draws_takes_effect_between_them(fake_gpu):
    """The reseed is an engine op on the generator's var: pushed while the
    device is busy, it still lands exactly between the draws around it."""
    g = mx.gpu(0)
    ex = _gpu.executor(g)
    with _Gate(ex.compute):
        mx.random.seed(5, ctx=g)
        a = mx.nd.random.uniform(shape=(16,), ctx=g)
        b = mx.nd.random.uniform(shape=(16,), ctx=g)
        mx.random.seed(5, ctx=g)
        c = mx.nd.random.uniform(shape=(16,), ctx=g)
    a, b, c = a.asnumpy(), b.asnumpy(), c.asnumpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


SAMPLE_OPS = ["_sample_uniform", "_sample_normal", "_sample_exponential", "_sample_gamma",
              "_sample_poisson", "_sample_negative_binomial",
              "_sample_generalized_negative_binomial"]


def test_per_element_parameters_draw_on_the_device(fake_gpu):
    for name in SAMPLE_OPS:
        assert not registry.get(name).host_kernel, name
    g = mx.gpu(0)
    host_before = _host_state(g)
    syncs = fake_gpu.syncs
    rows = 20000

    def means(x):
        assert x.context == g
        return x.asnumpy().reshape(2, rows).mean(axis=1)
    p = lambda v: mx.nd.array(v, ctx=g)     # noqa: E731
    np.testing.assert_allclose(means(mx.nd.random.uniform(p([0, 10]), p([1, 20]), shape=(rows,))),
                               [0.5, 15], rtol=0.02)
    np.testing.assert_allclose(means(mx.nd.random.normal(p([0, 10]), p([1, 2]), shape=(rows,))),
                               [0, 10], atol=0.05)
    np.testing.assert_allclose(means(mx.nd.random.exponential(p([1, 4]), shape=(rows,))),
                               [1, 4], rtol=0.05)   # scale, as MXNet's exponential takes
    np.testing.assert_allclose(means(mx.nd.random.gamma(p([1, 50]), p([1, 0.1]), shape=(rows,))),
                               [1, 5], rtol=0.05)
    np.testing.assert_allclose(means(mx.nd.random.poisson(p([1, 10]), shape=(rows,))),
                               [1, 10], rtol=0.05)
    np.testing.assert_allclose(
        means(mx.nd.random.negative_binomial(p([3, 5]), p([0.4, 0.5]), shape=(rows,))),
        [4.5, 5], rtol=0.05)
    np.testing.assert_allclose(
        means(mx.nd.random.generalized_negative_binomial(p([2, 6]), p([0.5, 0]),
                                                         shape=(rows,))), [2, 6], rtol=0.05)
    assert _host_state(g) == host_before
    assert fake_gpu.syncs == syncs      # reads wake the host by callback: no sync at all


def test_shuffle_on_the_device_permutes_rows_reproducibly(fake_gpu):
    g = mx.gpu(0)
    data = mx.nd.array(np.arange(200).reshape(100, 2), ctx=g)
    mx.random.seed(3)
    a = mx.nd.random.shuffle(data).asnumpy()
    mx.random.seed(3)
    b = mx.nd.random.shuffle(data).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, data.asnumpy())
    np.testing.assert_array_equal(np.sort(a[:, 0]), np.arange(0, 200, 2))
    np.testing.assert_array_equal(a[:, 1], a[:, 0] + 1)     # rows move whole
    one = mx.nd.array([[1.0, 2.0]], ctx=g)
    np.testing.assert_array_equal(mx.nd.random.shuffle(one).asnumpy(), [[1, 2]])


def test_dropout_masks_come_from_the_device_generator(fake_gpu):
    g = mx.gpu(0)
    x = mx.nd.ones((20000,), ctx=g)
    mx.random.seed(11)
    mx.nd.waitall()
    host_before = _host_state(g)
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.25)
    v = y.asnumpy()
    assert _host_state(g) == host_before
    assert abs((v == 0).mean() - 0.25) < 0.02
    np.testing.assert_allclose(v[v != 0], 1 / 0.75, rtol=1e-6)
    mx.random.seed(11)
    with mx.autograd.record():
        np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.25).asnumpy(), v)


def test_hybridized_dropout_draws_on_the_device(fake_gpu):
    """A hybridized block's compiled plan (``_plan.py``; op by op with
    AIOND_FUSE_GRAPHS=0) draws its Dropout masks on the device too."""
    g = mx.gpu(0)
    net = mx.gluon.nn.HybridSequential(prefix="rndgpu_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(8, in_units=4), mx.gluon.nn.Dropout(0.5))
    net.initialize(ctx=g)
    net.hybridize()
    x = mx.nd.ones((256, 4), ctx=g)
    mx.nd.waitall()
    host_before = _host_state(g)
    syncs = fake_gpu.syncs
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert 0.4 < (y.asnumpy() == 0).mean() < 0.6
    assert _host_state(g) == host_before and fake_gpu.syncs == syncs


def test_float16_and_float64_outputs(fake_gpu):
    g = mx.gpu(0)
    for dt in ("float16", "float64"):
        for fn, kw in ((mx.nd.random.uniform, {}), (mx.nd.random.normal, {}),
                       (mx.nd.random.gamma, dict(alpha=2.0))):
            x = fn(shape=(1000,), dtype=dt, ctx=g, **kw)
            assert x.dtype == np.dtype(dt)
            assert np.isfinite(x.asnumpy()).all()


NP_DISTS = [  # mx.np.random samplers with a device sampler: (call, mean, variance)
    (lambda g: mx.np.random.uniform(2, 4, size=N, ctx=g), 3.0, 4 / 12),
    (lambda g: mx.np.random.normal(1, 2, size=N, ctx=g), 1.0, 4.0),
    (lambda g: mx.np.random.lognormal(0, 0.5, size=N, ctx=g), np.exp(0.125),
     (np.exp(0.25) - 1) * np.exp(0.25)),
    (lambda g: mx.np.random.gamma(2, 1.5, size=N, ctx=g), 3.0, 4.5),
    (lambda g: mx.np.random.exponential(2, size=N, ctx=g), 2.0, 4.0),
    (lambda g: mx.np.random.randint(0, 10, size=N, ctx=g), 4.5, 99 / 12),
]


def test_numpy_style_samplers_draw_on_the_device(fake_gpu):
    g = mx.gpu(0)
    host_before = _host_state(g)
    syncs = fake_gpu.syncs
    for call, mean, var in NP_DISTS:
        x = call(g)
        assert x.ctx == g
        _check_moments(x.asnumpy(), mean, var)
    loc = mx.np.array([0.0, 10.0], ctx=g)
    v = mx.np.random.normal(loc, 1.0, size=(20000, 2), ctx=g).asnumpy()
    np.testing.assert_allclose(v.mean(axis=0), [0, 10], atol=0.05)
    assert _host_state(g) == host_before and fake_gpu.syncs == syncs
    mx.random.seed(6)
    a = mx.np.random.normal(0, 1, size=(16,), ctx=g).asnumpy()
    mx.random.seed(6)
    np.testing.assert_array_equal(mx.np.random.normal(0, 1, size=(16,), ctx=g).asnumpy(), a)


def test_distributions_without_a_device_sampler_still_work_on_a_gpu(fake_gpu):
    # the rest keep the context's host generator; array parameters come to
    # the host for it (CuPy arrays never reach numpy)
    g = mx.gpu(0)
    mx.random.seed(4)
    a = mx.np.random.choice(10, size=(5000,), ctx=g)
    assert a.ctx == g
    assert abs(float(a.asnumpy().mean()) - 4.5) < 0.2
    p = mx.np.array([0.1, 0.0, 0.9], dtype="float64", ctx=g)
    b = mx.np.random.choice(3, size=(20000,), p=p, ctx=g).asnumpy()
    assert (b != 1).all()
    np.testing.assert_allclose((b == 2).mean(), 0.9, atol=0.02)


# --------------------------------------- on the CPU, and on a real GPU with -m gpu

@pytest.mark.parametrize("name,fn,kw,mean,var", [d for d in DISTS if d[0] in
                                                  ("uniform", "normal", "gamma", "poisson")],
                         ids=["uniform", "normal", "gamma", "poisson"])
def test_seeded_draws_on_ctx(ctx, name, fn, kw, mean, var):
    mx.random.seed(21)
    a = fn(shape=(100000,), ctx=ctx, **kw)
    mx.random.seed(21)
    b = fn(shape=(100000,), ctx=ctx, **kw)
    assert a.context == ctx
    a = a.asnumpy()
    np.testing.assert_array_equal(a, b.asnumpy())
    _check_moments(a, mean, var)
