"""oneDNN chains in CPU inference plans (``ndarray/_plan_chain.py``,
``ops/onednn/chain.py``): runs of oneDNN steps exchange blocked layouts and
reorder only at their edges. Each net's hybridized (chained) result must
equal its op-by-op result and the plan's without chains, and the chain
must actually form (the plan's steps are inspected)."""
import numpy as np
import pytest

import aiond as mx
from aiond.gluon import nn
from aiond.ndarray import _plan_chain
from aiond.ops import onednn
from aiond.ops.onednn import chain as _chain

pytestmark = pytest.mark.skipif(not onednn.active(), reason="oneDNN is off or not installed")


@pytest.fixture
def plans(monkeypatch):
    """The step lists the chain pass returns, per plan made while the test runs."""
    made = []
    orig = _plan_chain.chain

    def spy(steps, outputs, written, shapes):
        out = orig(steps, outputs, written, shapes)
        made.append(out[0])
        return out
    monkeypatch.setattr(_plan_chain, "chain", spy)
    return made


def _chains(steps):
    return [st.attrs["chain"] for st in steps if st.name == "oneDNN chain"]


def _randomize(net, seed):
    rs = np.random.RandomState(seed)
    for name, p in sorted(net.collect_params().items()):
        if name.endswith("running_var"):
            v = rs.uniform(0.5, 2.0, p.shape)
        elif name.endswith("gamma"):
            v = rs.uniform(0.5, 1.5, p.shape)
        else:
            v = rs.standard_normal(p.shape) * (0.3 if name.endswith("weight") else 0.5)
        p.set_data(mx.nd.array(v.astype(np.float32)))


def _copy(src, dst):
    for (_, a), (_, b) in zip(sorted(src.collect_params().items()),
                              sorted(dst.collect_params().items())):
        b.set_data(a.data().copy())


def _check(make, xshape, plans, monkeypatch, seed=0):
    """Run ``make()``'s net hybridized with chains, hybridized without, and
    op by op; returns the chains formed. Every output must agree."""
    nets = [make() for _ in range(3)]
    x = mx.nd.array(np.random.RandomState(seed + 1).standard_normal(xshape).astype(np.float32))
    for n in nets:
        n.initialize()
        n(x)
    _randomize(nets[0], seed)
    _copy(nets[0], nets[1])
    _copy(nets[0], nets[2])
    nets[0].hybridize()
    nets[1].hybridize()

    def outs(n):
        y = n(x)
        return [a.asnumpy() for a in (y if isinstance(y, (list, tuple)) else [y])]
    del plans[:]
    got = outs(nets[0])
    got2 = outs(nets[0])                        # the second call: kept weights, reused buffers
    chains = [c for steps in plans for c in _chains(steps)]
    monkeypatch.setenv("AIOND_ONEDNN_CHAIN", "0")
    del plans[:]
    plain = outs(nets[1])
    assert not [c for steps in plans for c in _chains(steps)], "AIOND_ONEDNN_CHAIN=0 made a chain"
    monkeypatch.delenv("AIOND_ONEDNN_CHAIN")
    ref = outs(nets[2])
    for i, (g, g2, p, r) in enumerate(zip(got, got2, plain, ref)):
        tol = 1e-5 * max(1.0, float(np.abs(r).max()))
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=tol, err_msg="output %d vs op by op" % i)
        np.testing.assert_allclose(g, p, rtol=1e-4, atol=tol,
                                   err_msg="output %d vs the plan without chains" % i)
        np.testing.assert_array_equal(g, g2, err_msg="output %d: second call differs" % i)
    return chains


def _kinds(spec):
    return [(nd.kind, nd.sum is not None, nd.relu) for nd in spec.nodes]


class _Residual(nn.HybridBlock):
    """resnet v1's basic block: conv-BN-relu, conv-BN, + residual (through a
    1x1 stride-2 conv-BN when ``down``), relu."""

    def __init__(self, c, down, **kw):
        super().__init__(**kw)
        self.down = down
        cout = 2 * c if down else c
        with self.name_scope():
            self.c1 = nn.Conv2D(cout, 3, strides=2 if down else 1, padding=1, use_bias=False,
                                in_channels=c)
            self.b1 = nn.BatchNorm(in_channels=cout)
            self.c2 = nn.Conv2D(cout, 3, padding=1, use_bias=False, in_channels=cout)
            self.b2 = nn.BatchNorm(in_channels=cout)
            if down:
                self.cd = nn.Conv2D(cout, 1, strides=2, use_bias=False, in_channels=c)
                self.bd = nn.BatchNorm(in_channels=cout)

    def hybrid_forward(self, F, x):
        r = x
        if self.down:
            r = self.bd(self.cd(x))
        y = F.Activation(self.b1(self.c1(x)), act_type="relu")
        y = self.b2(self.c2(y))
        return F.Activation(r + y, act_type="relu")


class _ResNetish(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.stem = nn.Conv2D(16, 3, padding=1, in_channels=3)
            self.bn = nn.BatchNorm(in_channels=16)
            self.pool = nn.MaxPool2D(3, 2, 1)
            self.r1 = _Residual(16, False)
            self.r2 = _Residual(16, True)
            self.gap = nn.GlobalAvgPool2D()
            self.fc = nn.Dense(5, in_units=32)

    def hybrid_forward(self, F, x):
        y = self.pool(F.relu(self.bn(self.stem(x))))
        return self.fc(self.gap(self.r2(self.r1(y))))


@pytest.mark.parametrize("batch", [1, 3])
def test_residual_blocks(batch, plans, monkeypatch):
    chains = _check(_ResNetish, (batch, 3, 20, 20), plans, monkeypatch)
    assert len(chains) == 1, chains
    kinds = _kinds(chains[0])
    # stem conv-bn-relu, pool, block 1 (conv-bn-relu, conv-bn + sum + relu),
    # block 2 with its downsample (1x1 conv-bn), the global pool
    assert kinds == [("convbn", False, True), ("pool", False, False),
                     ("convbn", False, True), ("convbn", True, True),
                     ("convbn", False, False), ("convbn", False, True),
                     ("convbn", True, True), ("pool", False, False)], kinds
    assert len(chains[0].outs) == 1         # only the global pool's output leaves the chain


class _Single(nn.HybridBlock):
    def __init__(self, down, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.r = _Residual(8, down)

    def hybrid_forward(self, F, x):
        return self.r(x)


@pytest.mark.parametrize("down", [False, True])
def test_residual_block_alone(down, plans, monkeypatch):
    """The block's input is a chain input: the sum post-op adds a copy of it
    (an input is never written)."""
    chains = _check(lambda: _Single(down), (2, 8, 10, 10), plans, monkeypatch, seed=3)
    assert len(chains) == 1
    assert ("convbn", True, True) in _kinds(chains[0])


class _MobileNetish(nn.HybridBlock):
    """depthwise 3x3 conv-BN-relu then pointwise 1x1 conv-BN-relu, twice."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.body = nn.HybridSequential()
            for cin, cout, s in ((8, 16, 1), (16, 24, 2)):
                self.body.add(nn.Conv2D(cin, 3, strides=s, padding=1, groups=cin, use_bias=False,
                                        in_channels=cin),
                              nn.BatchNorm(in_channels=cin), nn.Activation("relu"),
                              nn.Conv2D(cout, 1, use_bias=False, in_channels=cin),
                              nn.BatchNorm(in_channels=cout), nn.Activation("relu"))

    def hybrid_forward(self, F, x):
        return self.body(x)


@pytest.mark.parametrize("batch", [1, 4])
def test_depthwise_and_pointwise(batch, plans, monkeypatch):
    chains = _check(_MobileNetish, (batch, 8, 14, 14), plans, monkeypatch, seed=5)
    assert len(chains) == 1
    spec = chains[0]
    assert [nd.kind for nd in spec.nodes] == ["convbn"] * 4
    groups = [nd.attrs["num_group"] for nd in spec.nodes]
    kernels = [nd.attrs["kernel"] for nd in spec.nodes]
    assert groups == [8, 1, 16, 1] and kernels[1] == (1, 1), (groups, kernels)


class _Pools(nn.HybridBlock):
    """Plain convolutions (bias, no BatchNorm) with ReLU, max and avg
    pooling inside, a standalone BatchNorm + ReLU at the start."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.bn0 = nn.BatchNorm(scale=False, in_channels=8)     # fix_gamma
            self.c1 = nn.Conv2D(16, 3, padding=1, in_channels=8)
            self.p1 = nn.MaxPool2D(2)
            self.c2 = nn.Conv2D(16, 3, padding=1, in_channels=16)
            self.p2 = nn.AvgPool2D(3, 2, 1)

    def hybrid_forward(self, F, x):
        y = F.relu(self.bn0(x))
        y = self.p1(F.relu(self.c1(y)))
        return self.p2(self.c2(y))


def test_pooling_and_plain_convolutions(plans, monkeypatch):
    chains = _check(_Pools, (2, 8, 16, 16), plans, monkeypatch, seed=7)
    assert len(chains) == 1
    assert _kinds(chains[0]) == [("bn", False, True), ("conv", False, False),
                                 ("relu", False, False), ("pool", False, False),
                                 ("conv", False, False), ("pool", False, False)]


class _PoolFirst(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(16, 3, padding=1, in_channels=16)
            self.b1 = nn.BatchNorm(in_channels=16)

    def hybrid_forward(self, F, x):
        return self.b1(self.c1(F.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max")))


def test_pooling_of_a_chain_input(plans, monkeypatch):
    chains = _check(_PoolFirst, (2, 16, 11, 11), plans, monkeypatch, seed=8)
    assert len(chains) == 1
    assert _kinds(chains[0]) == [("pool", False, False), ("convbn", False, False)]


class _Outputs(nn.HybridBlock):
    """A chain value that is also a plan output, and one read by an op
    oneDNN does not run (tanh), whose result then meets a chain value."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(16, 3, padding=1, in_channels=8)
            self.b1 = nn.BatchNorm(in_channels=16)
            self.c2 = nn.Conv2D(16, 1, in_channels=16)
            self.c3 = nn.Conv2D(16, 3, padding=1, in_channels=16)

    def hybrid_forward(self, F, x):
        a = F.relu(self.b1(self.c1(x)))
        b = self.c2(a)
        c = self.c3(b)
        t = F.tanh(a)
        return c, b, c + t


def test_chain_values_read_outside(plans, monkeypatch):
    chains = _check(_Outputs, (2, 8, 9, 9), plans, monkeypatch, seed=9)
    assert len(chains) == 1
    spec = chains[0]
    nin = spec.nin
    # a (read by tanh), b (a plan output) and c (an output, read by the add)
    assert sorted(v - nin for v in spec.outs) == [0, 1, 2], spec.outs


class _Short(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(8, 3, padding=1, in_channels=8)

    def hybrid_forward(self, F, x):
        return F.tanh(self.c1(x))


def test_a_lone_convolution_makes_no_chain(plans, monkeypatch):
    assert _check(_Short, (1, 8, 8, 8), plans, monkeypatch) == []


def test_weight_written_after_a_call_is_used(plans):
    net = _Pools()
    net.initialize()
    x = mx.nd.array(np.random.RandomState(11).standard_normal((2, 8, 16, 16)).astype(np.float32))
    net(x)
    _randomize(net, 12)
    ref = _Pools()
    ref.initialize()
    ref(x)
    net.hybridize()
    first = net(x).asnumpy()
    assert _chains(plans[-1])
    w = net.c2.weight
    w.data()[:] = mx.nd.array(np.random.RandomState(13).standard_normal(w.shape)
                              .astype(np.float32))
    got = net(x).asnumpy()
    _copy(net, ref)
    want = ref(x).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert not np.allclose(got, first)


def test_training_and_recording_make_no_chain(plans):
    net = _ResNetish()
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(14).standard_normal((2, 3, 12, 12)).astype(np.float32))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    with mx.autograd.train_mode():
        net(x).wait_to_read()
    assert not [c for steps in plans for c in _chains(steps)]


def test_a_refused_build_falls_back_to_the_steps(plans, monkeypatch):
    """When oneDNN refuses the chain for a range of samples, the original
    steps compute that range."""
    net = _ResNetish()
    net.initialize()
    x = mx.nd.array(np.random.RandomState(15).standard_normal((3, 3, 12, 12)).astype(np.float32))
    want = net(x).asnumpy()
    net.hybridize()
    net(x).wait_to_read()
    (spec,) = _chains(plans[-1])
    orig = _chain._Built

    def refuse(spec_, b):
        raise _chain.Refused("test")
    monkeypatch.setattr(_chain, "_Built", refuse)
    spec.built.clear()
    before = _chain.stats["fallbacks"]
    got = net(x).asnumpy()
    assert _chain.stats["fallbacks"] > before
    monkeypatch.setattr(_chain, "_Built", orig)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_kept_weight_lives_through_its_run(plans, monkeypatch):
    """A reordered weight the cache drops during a run (another range's
    insert of the same key, an eviction) is still the run's until it ends:
    here the cache is emptied after every lookup and the memory handed out
    again at once (as the allocator does with a freed block)."""
    from aiond.ops.onednn import _wcache
    net = _ResNetish()
    net.initialize()
    x = mx.nd.array(np.random.RandomState(16).standard_normal((1, 3, 20, 20)).astype(np.float32))
    net(x)
    _randomize(net, 17)
    want = net(x).asnumpy()
    net.hybridize()
    net(x).wait_to_read()
    assert _chains(plans[-1])
    orig = _wcache.get
    junk = []

    def get(key, st, nbytes, fill):
        buf = orig(key, st, nbytes, fill)
        _wcache.clear()
        junk.append(np.full(nbytes, 255, np.uint8))     # NaNs where a freed block is reused
        return buf
    monkeypatch.setattr(_wcache, "get", get)
    for _ in range(3):
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-4, atol=1e-4)
    assert junk


def test_a_plan_without_convolutions_does_not_load_onednn():
    import subprocess
    import sys
    code = ("import aiond as mx\n"
            "from aiond.gluon import nn\n"
            "from aiond.ops.onednn import _lib\n"
            "net = nn.HybridSequential()\n"
            "net.add(nn.Dense(8, activation='relu'), nn.Dense(2))\n"
            "net.initialize()\n"
            "net.hybridize()\n"
            "net(mx.nd.ones((2, 4))).wait_to_read()\n"
            "assert not _lib._state['tried'], 'oneDNN loaded for an MLP plan'\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
