"""Imperative backward with gradient rules replayed as plans (aiond/autograd/_plans.py):
the values of the op-by-op rules, one op per node, gradients computed in
the leaves' buffers when nothing else adds to them."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, nd
from aiond.autograd import _plans as _grad_plans


@pytest.fixture
def plans_off(monkeypatch):
    monkeypatch.setenv("AIOND_FUSE_GRAPHS", "0")
    _grad_plans.refresh()
    yield
    monkeypatch.delenv("AIOND_FUSE_GRAPHS")
    _grad_plans.refresh()


def _grads(build, shapes, seed=0):
    rs = np.random.RandomState(seed)
    xs = [nd.array(rs.uniform(0.5, 1.5, s)) for s in shapes]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = build(*xs)
    y.backward(nd.array(rs.uniform(-1, 1, y.shape)))
    return [x.grad.asnumpy() for x in xs]


CASES = [
    ("fc", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=5), [(4, 6), (5, 6), (5,)]),
    ("conv", lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), num_filter=2, pad=(1, 1)),
     [(2, 3, 5, 5), (2, 3, 3, 3), (2,)]),
    ("softmax_log", lambda x: nd.log_softmax(x * 2, axis=1), [(3, 4)]),
    ("square_twice", lambda x: x * x + nd.sin(x), [(3, 3)]),
    ("broadcast", lambda a, b: nd.broadcast_mul(a, b) / (a + 1), [(3, 1), (1, 4)]),
    ("reduce", lambda x: nd.sum(nd.exp(x), axis=1, keepdims=True) * x, [(2, 5)]),
]


@pytest.mark.parametrize("name,build,shapes", CASES, ids=[c[0] for c in CASES])
def test_planned_rules_match_op_by_op(name, build, shapes, request):
    got = _grads(build, shapes)
    got2 = _grads(build, shapes)                     # second call: from the cached plan
    request.getfixturevalue("plans_off")
    want = _grads(build, shapes)
    for a, b, c in zip(got, got2, want):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


def test_leaf_gradient_is_computed_in_its_buffer():
    x = nd.array(np.random.rand(4, 6))
    w = nd.array(np.random.rand(5, 6))
    w.attach_grad()
    buf = w.grad
    for _ in range(2):
        with autograd.record():
            y = nd.FullyConnected(x, w, no_bias=True, num_hidden=5)
        y.backward()
    assert w.grad is buf
    np.testing.assert_allclose(buf.asnumpy(), np.ones((4, 5)).T @ x.asnumpy(), rtol=1e-6)


def test_grad_req_add_and_a_leaf_used_twice_accumulate():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = x * x
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * 2 * np.array([1.0, 2, 3]))


def test_a_rule_that_cannot_be_planned_runs_as_before():
    from aiond.ops import registry
    op = registry.get("exp")
    good = op.grad

    def reads_a_value(F, attrs, ins, outs, og):
        scale = float(og[0].asnumpy().sum())        # a value read: not traceable
        return [og[0] * outs[0] * scale / scale]
    op.grad = reads_a_value
    try:
        g = _grads(lambda x: nd.exp(x), [(3,)])
        g2 = _grads(lambda x: nd.exp(x), [(3,)])
    finally:
        op.grad = good
    want = _grads(lambda x: nd.exp(x), [(3,)])
    np.testing.assert_allclose(g[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(g2[0], want[0], rtol=1e-6)


def test_backward_is_one_engine_op():
    x = nd.array(np.random.rand(4, 6))
    w = nd.array(np.random.rand(5, 6))
    b = nd.zeros((5,))
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.relu(nd.FullyConnected(x, w, b, num_hidden=5))
    mx.nd.waitall()
    s0 = mx.engine.statistics()
    y.backward()
    s1 = mx.engine.statistics()
    assert (s1.ops_pushed + s1.ops_inline) - (s0.ops_pushed + s0.ops_inline) == 1
    xn, wn = x.asnumpy(), w.asnumpy()
    mask = (xn @ wn.T > 0).astype(np.float32)
    np.testing.assert_allclose(w.grad.asnumpy(), mask.T @ xn, rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), mask.sum(0), rtol=1e-6)


def test_a_failing_planned_rule_poisons_only_its_gradients():
    """A kernel of a planned rule fails: that input's gradient reads raise
    (naming the op and the user's line), the other input's gradient is right."""
    from aiond.ops import registry
    op = registry.get("exp")
    good = op.grad
    # a rule whose kernel fails when it runs (Cholesky of a negative matrix)
    op.grad = lambda F, attrs, ins, outs, og: [F.linalg.potrf(og[0] * 0 - 1)]
    try:
        x = nd.ones((2, 2))
        w = nd.ones((2, 2))
        x.attach_grad()
        w.attach_grad()
        with autograd.record():
            y = nd.exp(x) + w * 3
        y.backward()
        np.testing.assert_array_equal(w.grad.asnumpy(), np.full((2, 2), 3.0))
        with pytest.raises(mx.base.MXNetError) as ei:
            x.grad.asnumpy()
        assert "potrf" in str(ei.value) and "test_grad_plans.py" in str(ei.value)
    finally:
        op.grad = good


def test_a_gradient_that_is_a_view_of_a_head_gradient_view():
    # Reshape's rule returns its head gradient reshaped (a view, no op); the
    # head gradient given here is itself a view into a bigger array
    big = nd.array(np.arange(24, dtype=np.float32).reshape(4, 6))
    for _ in range(2):                          # the second time from the cached plan
        x = nd.ones((2, 3))
        x.attach_grad()
        with autograd.record():
            y = nd.Reshape(x * 1, shape=(3, 2))
        head = big.reshape((12, 2))[5:8]        # rows 5..7: an offset view
        y.backward(head)
        np.testing.assert_array_equal(x.grad.asnumpy(),
                                      np.arange(10, 16, dtype=np.float32).reshape(2, 3))


# ----------------------------------------------- whole tapes as one plan

@pytest.fixture
def node_by_node(monkeypatch):
    """The walk that replays one rule plan per node (what a tape the
    whole-tape plan cannot take runs)."""
    monkeypatch.setattr(_grad_plans, "tape_via_plan", lambda *a: False)


def _mlp_steps(steps=3):
    rs = np.random.RandomState(11)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(16, activation="relu", in_units=12),
            mx.gluon.nn.Dense(5, in_units=16))
    net.initialize()
    for p in net.collect_params().values():
        p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    tr = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.3})
    out = []
    for _ in range(steps):
        x = nd.array(rs.uniform(-1, 1, (8, 12)))
        y = nd.array(rs.randint(0, 5, 8))
        with autograd.record():
            L = loss(net(x), y)
        L.backward()
        out.append([p.grad().asnumpy() for p in net.collect_params().values()])
        tr.step(8)
    return out


def test_tape_plan_matches_the_node_by_node_walk_bit_for_bit(request):
    _grad_plans._tapes.clear()
    with mx.cpu():                  # (device tapes keep the node-by-node walk)
        got = _mlp_steps()
        assert len(_grad_plans._tapes) == 1       # built once, replayed after
        request.getfixturevalue("node_by_node")
        want = _mlp_steps()
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)


def test_imperative_mlp_backward_is_one_engine_op():
    with mx.cpu():                  # (device tapes keep the node-by-node walk)
        _imperative_mlp_backward_is_one_engine_op()


def _imperative_mlp_backward_is_one_engine_op():
    rs = np.random.RandomState(2)
    x = nd.array(rs.rand(4, 6))
    w1, w2 = nd.array(rs.rand(7, 6)), nd.array(rs.rand(3, 7))
    for a in (w1, w2):
        a.attach_grad()
    for _ in range(2):
        with autograd.record():
            h = nd.relu(nd.FullyConnected(x, w1, no_bias=True, num_hidden=7))
            y = nd.sum(nd.FullyConnected(h, w2, no_bias=True, num_hidden=3) * h.sum())
        mx.nd.waitall()
        s0 = mx.engine.statistics()
        y.backward()
        s1 = mx.engine.statistics()
        assert (s1.ops_pushed + s1.ops_inline) - (s0.ops_pushed + s0.ops_inline) == 1
    xn, w1n, w2n = x.asnumpy(), w1.asnumpy(), w2.asnumpy()
    pre = xn @ w1n.T
    hn = np.maximum(pre, 0)
    s = hn.sum()
    o = hn @ w2n.T
    np.testing.assert_allclose(w2.grad.asnumpy(), s * np.ones_like(o).T @ hn, rtol=1e-5)
    dh = s * np.ones_like(o) @ w2n + o.sum()
    np.testing.assert_allclose(w1.grad.asnumpy(), ((pre > 0) * dh).T @ xn, rtol=1e-5)


def test_same_ops_and_shapes_wired_differently_get_their_own_plans():
    _grad_plans._tapes.clear()
    with mx.cpu():                  # (device tapes keep the node-by-node walk)
        _three_wirings()
    # y = a*b + a, y = a*b + b and y = a*a + a: three tapes, three plans
    assert [bool(e) for e in _grad_plans._tapes.values()] == [True, True, True]


def _three_wirings():
    a0, b0 = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    for _ in range(2):
        for which in (0, 1):
            a, b = nd.array(a0), nd.array(b0)
            a.attach_grad()
            b.attach_grad()
            with autograd.record():
                y = a * b + (a if which == 0 else b)
            y.backward()
            np.testing.assert_array_equal(a.grad.asnumpy(), b0 + (1 - which))
            np.testing.assert_array_equal(b.grad.asnumpy(), a0 + which)
        # one array as both inputs of an op is a third wiring
        a = nd.array(a0)
        a.attach_grad()
        with autograd.record():
            y = a * a + a
        y.backward()
        np.testing.assert_array_equal(a.grad.asnumpy(), 2 * a0 + 1)


def test_tape_plan_retain_graph_then_freed():
    x = nd.array([0.5, 1.5])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x) * 2
    y.backward(retain_graph=True)
    first = x.grad.asnumpy().copy()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), first)
    np.testing.assert_allclose(first, 2 * np.exp([0.5, 1.5]), rtol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="already freed"):
        y.backward()


@pytest.mark.parametrize("path", ["tape", "nodes"])
def test_a_poisoned_forward_value_poisons_only_the_gradients_that_read_it(path, request):
    if path == "nodes":
        request.getfixturevalue("node_by_node")
    a = nd.array(-np.eye(2))           # not positive-definite: potrf fails
    w = nd.ones((2, 2))
    a.attach_grad()
    w.attach_grad()
    for _ in range(2):                 # built, then from the cached plan
        with autograd.record():
            y = nd.linalg.potrf(a) + w * 3
        # an explicit head gradient: the (poisoned) head itself is never read
        y.backward(nd.ones((2, 2)))
        np.testing.assert_array_equal(w.grad.asnumpy(), np.full((2, 2), 3.0))
        with pytest.raises(mx.base.MXNetError, match="potrf"):
            a.grad.asnumpy()
    mx.nd.waitall()                    # each failure was reported once, by its reader


def test_cached_tapes_are_bounded_by_the_bytes_they_keep(monkeypatch):
    """One tape per sequence length must not keep a workspace per length."""
    monkeypatch.setattr(_grad_plans, "_MAX_TAPE_BYTES", 64 << 10)
    _grad_plans.refresh()
    with mx.cpu():                  # (device tapes keep the node-by-node walk)
        _variable_lengths()
    kept = sum(e[0].workspace_bytes for e in _grad_plans._tapes.values() if e)
    assert kept == _grad_plans._tapes.nbytes <= 64 << 10
    assert 0 < len(_grad_plans._tapes) < 39


def _variable_lengths():
    w = nd.ones((32,))
    w.attach_grad()
    for n in range(1, 40):
        x = nd.ones((n, 32))
        with autograd.record():
            y = nd.exp(nd.broadcast_mul(x, w)) * 2
        y.backward()
        np.testing.assert_allclose(w.grad.asnumpy(), np.full(32, 2 * np.e * n), rtol=1e-5)


def test_naive_engine_raises_a_failing_tape_step_at_backward():
    from aiond.ops import registry
    op = registry.get("exp")
    good = op.grad
    op.grad = lambda F, attrs, ins, outs, og: [F.linalg.potrf(og[0] * 0 - 1)]
    try:
        x = nd.ones((2, 2))
        x.attach_grad()
        with mx.engine.naive():
            with autograd.record():
                y = nd.exp(x) * 2
            with pytest.raises(mx.base.MXNetError, match="potrf"):
                y.backward()
    finally:
        op.grad = good
    mx.nd.waitall()


def _bn_net(x, g, b):
    mm, mv = nd.zeros((3,)), nd.ones((3,))
    return nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False) * x


TAPES = [
    ("split_one_output_used", lambda x: nd.split(x * 2, num_outputs=2, axis=1)[1] * x[:, :2],
     [(3, 4)]),
    ("batchnorm_training", _bn_net, [(4, 3), (3,), (3,)]),
    ("dropout_like_mask", lambda x, w: nd.relu(nd.dot(x, w)) * nd.sigmoid(x).sum(), [(3, 5), (5, 2)]),
]


@pytest.mark.parametrize("name,build,shapes", TAPES, ids=[t[0] for t in TAPES])
def test_tapes_match_the_node_by_node_walk(name, build, shapes, request):
    with mx.cpu():
        got = [_grads(build, shapes, seed=s) for s in (0, 1)]   # built, then cached
        request.getfixturevalue("node_by_node")
        want = [_grads(build, shapes, seed=s) for s in (0, 1)]
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)


def test_several_heads_the_same_head_twice_and_mixed_head_gradients():
    def run():
        x = nd.array([1.0, 2.0, 3.0])
        x.attach_grad()
        with autograd.record():
            y = x * x
            z = nd.exp(x)
        autograd.backward([y, y, z], [None, nd.array([1.0, 0.5, 0.0]), None])
        return x.grad.asnumpy()
    for _ in range(2):
        xv = np.array([1.0, 2.0, 3.0])
        np.testing.assert_allclose(run(), 2 * xv * (1 + np.array([1.0, 0.5, 0.0])) + np.exp(xv),
                                   rtol=1e-6)


def _accumulated(steps=3):
    rs = np.random.RandomState(4)
    net = mx.gluon.nn.Dense(3, in_units=5)
    net.initialize()
    net.weight.set_data(nd.array(rs.uniform(-1, 1, (3, 5))))
    net.collect_params().setattr("grad_req", "add")
    x0 = nd.array(rs.uniform(-1, 1, (4, 5)))
    x0.attach_grad()                # a 'write' leaf beside the 'add' ones
    out = []
    for _ in range(steps):
        x = nd.array(rs.uniform(-1, 1, (4, 5)))
        with autograd.record():
            y = (net(x) * net(x0)).sum()
        y.backward()
        out.append([net.weight.grad().asnumpy(), net.bias.grad().asnumpy(),
                    x0.grad.asnumpy()])
    return out


def test_grad_req_add_accumulates_in_the_tape_plan_as_the_walk_does(request):
    with mx.cpu():
        _grad_plans._tapes.clear()
        got = _accumulated()
        assert [bool(e) for e in _grad_plans._tapes.values()] == [True]
        request.getfixturevalue("node_by_node")
        want = _accumulated()
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
