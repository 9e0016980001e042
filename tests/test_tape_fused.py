"""A tape through hybridized graphs (a hybridized net, an imperative loss)
replayed as ONE backward plan: the graph's compiled backward joins the
tape's trace step by step (Plan.replay), bit for bit the node-by-node walk
that pushes the graph's backward plan as a node of its own."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.autograd import _plans as _grad_plans
from aiond.base import MXNetError


@pytest.fixture
def node_by_node(monkeypatch):
    monkeypatch.setattr(_grad_plans, "tape_via_plan", lambda *a: False)


def _net(bn=False, dropout=False):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu", in_units=8))
    if bn:
        net.add(gluon.nn.BatchNorm(in_channels=16))
    if dropout:
        net.add(gluon.nn.Dropout(0.3))
    net.add(gluon.nn.Dense(5, in_units=16))
    net.initialize()
    rs = np.random.RandomState(4)
    for p in net.collect_params().values():
        p.set_data(nd.array(rs.uniform(-0.5, 0.5, p.shape)))
    net.hybridize()
    return net


_LOSSES = {
    "sigmoid_bce": (gluon.loss.SigmoidBCELoss, lambda rs: rs.randint(0, 2, (12, 5))),
    "l2": (gluon.loss.L2Loss, lambda rs: rs.rand(12, 5)),
    "softmax_ce": (gluon.loss.SoftmaxCrossEntropyLoss, lambda rs: rs.randint(0, 5, 12)),
}


def _train(loss_name, bn=False, dropout=False, grad_req="write", steps=3):
    mx.random.seed(8)
    net = _net(bn, dropout)
    if grad_req != "write":
        for p in net.collect_params().values():
            if p.grad_req != "null":
                p.grad_req = grad_req
    make_loss, make_label = _LOSSES[loss_name]
    loss_fn = make_loss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.2})
    rs = np.random.RandomState(0)
    out = []
    for _ in range(steps):
        x = nd.array(rs.randn(12, 8))
        y = nd.array(make_label(rs))
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        params = list(net.collect_params().values())
        out.append([p.grad().asnumpy() for p in params if p.grad_req != "null"])
        tr.step(12)
        out.append([p.data().asnumpy() for p in params])    # running stats too
    return out


def _check_same(got, want):
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)


def _same_as_the_walk(request, run, planned=True):
    """``run()`` on the CPU with the whole-tape plan, then with the walk:
    one tape cached (a plan, or refused when not ``planned``), and the same
    values bit for bit."""
    with mx.cpu():                  # (device tapes keep the node-by-node walk)
        _grad_plans._tapes.clear()
        got = run()
        # one tape, built once and replayed after (or refused, and walked)
        assert [bool(e) for e in _grad_plans._tapes.values()] == [planned]
        request.getfixturevalue("node_by_node")
        want = run()
    _check_same(got, want)


@pytest.mark.parametrize("loss_name", sorted(_LOSSES))
@pytest.mark.parametrize("bn,dropout", [(False, False), (True, False), (False, True)])
def test_a_hybridized_net_and_an_imperative_loss_match_the_walk(loss_name, bn, dropout,
                                                                 request):
    _same_as_the_walk(request, lambda: _train(loss_name, bn, dropout))


def test_grad_req_add_through_a_hybridized_net(request):
    _same_as_the_walk(request, lambda: _train("l2", grad_req="add"))


def _siamese():
    net = _net()
    rs = np.random.RandomState(1)
    x1, x2 = nd.array(rs.randn(4, 8)), nd.array(rs.randn(4, 8))
    out = []
    for _ in range(2):
        with autograd.record():
            y = nd.sum(net(x1) * net(x2)) + nd.sum(nd.square(net(x1)))
        y.backward()
        out.append([p.grad().asnumpy() for p in net.collect_params().values()])
    return out


def test_one_graph_called_three_times_in_a_tape(request):
    _same_as_the_walk(request, _siamese)


def test_backward_through_a_hybridized_net_is_one_engine_op():
    with mx.cpu():
        net = _net()
        loss_fn = gluon.loss.SigmoidBCELoss()
        x, y = nd.array(np.random.RandomState(2).randn(12, 8)), nd.ones((12, 5))
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(x), y)
            mx.nd.waitall()
            s0 = mx.engine.statistics()
            loss.backward()
            s1 = mx.engine.statistics()
            assert (s1.ops_pushed + s1.ops_inline) - (s0.ops_pushed + s0.ops_inline) == 1
        mx.nd.waitall()


def test_retain_graph_then_freed_and_the_saved_values_released():
    with mx.cpu():
        net = _net()
        x = nd.array(np.random.RandomState(3).randn(6, 8))
        with autograd.record():
            out = net(x)
            y = nd.sum(out * out)
        node = out._ag.node
        y.backward(retain_graph=True)
        first = [p.grad().asnumpy().copy() for p in net.collect_params().values()]
        assert node.fn.saved is not None
        y.backward()
        assert node.freed and node.fn.saved is None
        _check_same([[p.grad().asnumpy() for p in net.collect_params().values()]], [first])
        with pytest.raises(MXNetError, match="already freed"):
            y.backward()


@pytest.mark.parametrize("path", ["tape", "nodes"])
def test_a_failing_step_poisons_only_the_gradients_that_read_it(path, request):
    """potrf fails on a matrix that is not positive-definite: a's gradient
    fails, the hybridized net's gradients (which never read it) do not."""
    if path == "nodes":
        request.getfixturevalue("node_by_node")
    with mx.cpu():
        _grad_plans._tapes.clear()
        net = _net()
        a = nd.array(-np.eye(5))
        a.attach_grad()
        x = nd.array(np.random.RandomState(7).randn(5, 8))
        for _ in range(2):              # built, then from the cached plan
            with autograd.record():
                y = nd.linalg.potrf(a) + net(x)
            # an explicit head gradient: the (poisoned) head itself is never read
            y.backward(nd.ones((5, 5)))
            with pytest.raises(MXNetError, match="potrf"):
                a.grad.asnumpy()
            h = np.maximum(x.asnumpy() @ net[0].weight.data().asnumpy().T
                           + net[0].bias.data().asnumpy(), 0)
            np.testing.assert_allclose(net[1].weight.grad().asnumpy(), np.ones((5, 5)).T @ h,
                                       rtol=1e-5)
        assert [bool(e) for e in _grad_plans._tapes.values()] == ([True] if path == "tape" else [])
        mx.nd.waitall()


def test_backward_in_the_other_training_mode_takes_the_walk(request):
    """BatchNorm's backward kernel runs in backward's mode: a tape traced in
    another mode than its graph's backward is refused and walked (same values)."""
    def run():
        mx.random.seed(8)
        net = _net(bn=True)
        x = nd.array(np.random.RandomState(5).randn(12, 8))
        with autograd.record():
            y = nd.sum(nd.square(net(x)))
        y.backward(train_mode=False)
        return [[p.grad().asnumpy() for p in net.collect_params().values()
                 if p.grad_req != "null"],
                [p.data().asnumpy() for p in net.collect_params().values()]]
    _same_as_the_walk(request, run, planned=False)


def test_a_custom_function_in_the_tape_keeps_the_walk():
    class Twice(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    with mx.cpu():
        net = _net()
        x = nd.array(np.random.RandomState(6).randn(3, 8))
        _grad_plans._tapes.clear()
        with autograd.record():
            y = nd.sum(Twice()(net(x)))
        y.backward()
        assert not _grad_plans._tapes
        w = net[1].weight.data().asnumpy()
        b0 = net[0].bias.grad().asnumpy()
        h_pre = x.asnumpy() @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy()
        want = ((h_pre > 0) * (2 * np.ones((3, 5)) @ w)).sum(0)
        np.testing.assert_allclose(b0, want, rtol=1e-5)
