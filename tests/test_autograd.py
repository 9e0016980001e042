"""autograd: grad_req, retain_graph, head_grads, higher order, Function,
training vs predict, errors, and backward returning at once (engine ops)."""
import asyncio

import numpy as np
import pytest

import aiond as mx
from aiond import autograd as ag
from aiond.base import MXNetError


def test_backward_values_and_grad_req_write_add_null():
    x = mx.nd.array([[1., 2.], [3., 4.]])
    w = mx.nd.array([[0.5, -1.], [2., 1.]])
    x.attach_grad()
    w.attach_grad(grad_req="add")
    for _ in range(2):
        with ag.record():
            y = (mx.nd.dot(x, w) * 2).sum()
        y.backward()
    xn, wn = x.asnumpy(), w.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.ones((2, 2)) @ wn.T)       # write
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * 2 * xn.T @ np.ones((2, 2)))    # add, twice
    z = mx.nd.ones((2,))
    z.attach_grad(grad_req="null")
    np.testing.assert_array_equal(z.grad.asnumpy(), [0, 0])
    with ag.record():
        (z * x[0]).sum().backward()
    assert z.grad is None           # MXNet: a 'null' variable has no grad after a backward


def test_head_grads_and_mark_variables():
    x = mx.nd.array([1., 2., 3.])
    g = mx.nd.zeros((3,))
    ag.mark_variables([x], [g])
    with ag.record():
        y = x * x
    ag.backward([y], [mx.nd.array([1., 10., 100.])])
    np.testing.assert_allclose(g.asnumpy(), [2., 40., 600.])
    assert x.grad is g
    with pytest.raises(MXNetError, match="head_grad of shape"):
        with ag.record():
            y = x * 2
        y.backward(mx.nd.ones((4,)))


def test_retain_graph_and_freed_graph_error():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with ag.record():
        y = mx.nd.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp([2.0]), rtol=1e-6)
    with pytest.raises(MXNetError, match="already freed"):
        y.backward()


def test_higher_order_elementwise_and_dot():
    x = mx.nd.array([0.3, -0.7, 1.1])
    x.attach_grad()
    with ag.record():
        y = mx.nd.tanh(x) * x
        dy = ag.grad(y, x, create_graph=True)[0]       # a list, as MXNet's
        s = dy.sum()
    s.backward()
    xn = x.asnumpy()
    t = np.tanh(xn)
    np.testing.assert_allclose(dy.asnumpy(), t + xn * (1 - t * t), rtol=1e-5)
    d2 = 2 * (1 - t * t) - 2 * xn * t * (1 - t * t)
    np.testing.assert_allclose(x.grad.asnumpy(), d2, rtol=1e-4)


def test_grad_of_unmarked_variable_and_unrecorded_head():
    x = mx.nd.ones((2,))
    with pytest.raises(MXNetError, match="was not marked"):
        ag.grad(x * 2, x)
    y = mx.nd.ones((2,))
    y.attach_grad()
    with pytest.raises(MXNetError, match="not part of a recorded graph"):
        (y * 2).backward()


def test_inplace_on_recorded_array_is_refused():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with ag.record():
        y = x * 2
        with pytest.raises(MXNetError, match="Inplace operations|in-place|already in a computational graph"):
            y += 1


def test_custom_function():
    class Sigmoid(ag.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    x = mx.nd.array([-1., 0., 2.])
    x.attach_grad()
    with ag.record():
        z = Sigmoid()(x) * 3
    z.backward()
    s = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-6)


def test_training_vs_predict_mode_flags():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
    with ag.train_mode():
        assert ag.is_training() and not ag.is_recording()
    with ag.predict_mode():
        assert not ag.is_training()
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True


def test_dropout_train_vs_predict_and_batchnorm_stats():
    x = mx.nd.ones((200, 50))
    np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())
    with ag.record():
        d = mx.nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(d)) <= {0.0, 2.0} and 0.3 < (d == 0).mean() < 0.7


def test_non_differentiable_op_in_path_raises():
    from aiond.ops import registry
    assert registry.get("sgd_update").grad is None
    x = mx.nd.array([1., 2.])
    x.attach_grad()
    with ag.record():
        y = mx.nd.sgd_update(x * 1, mx.nd.ones((2,)), lr=0.1)
    with pytest.raises(MXNetError, match="sgd_update is not differentiable"):
        y.backward()


def test_backward_returns_at_once_and_grad_can_be_awaited():
    x = mx.nd.array(np.random.uniform(size=(64, 64)).astype(np.float32))
    x.attach_grad()

    async def main():
        with ag.record():
            y = mx.nd.dot(x, x).sum()
        y.backward()
        return await x.grad.read()

    g = asyncio.run(main())
    xn = x.asnumpy()
    np.testing.assert_allclose(g, np.ones((64, 64)) @ xn.T + xn.T @ np.ones((64, 64)), rtol=1e-4)


def test_gradient_nobody_needs_is_not_computed():
    """The first layer's data needs no gradient: FullyConnected's rule skips
    that matmul (one fewer dot op pushed), and results are unchanged."""
    x = mx.nd.array(np.random.rand(4, 6))
    w = mx.nd.array(np.random.rand(3, 6))
    b = mx.nd.zeros((3,))
    w.attach_grad()
    b.attach_grad()

    def dots_in_backward(with_data_grad):
        if with_data_grad:
            x.attach_grad()
        else:
            x._ag = None
        mx.profiler.set_state("run")
        try:
            with ag.record():
                y = mx.nd.FullyConnected(x, w, b, num_hidden=3)
            y.backward()
            mx.nd.waitall()
        finally:
            mx.profiler.set_state("stop")
        names = [e["name"] for e in mx.profiler._prof.trace()["traceEvents"]]
        mx.profiler._prof.events.clear()
        return names.count("dot")

    assert dots_in_backward(False) == dots_in_backward(True) - 1
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((3, 4)) @ x.asnumpy(), rtol=1e-5)


def test_reshape_and_basic_slices_are_recorded():
    """x.reshape(...), x[1:3] and x[1] inside record() are on the tape (MXNet
    records Reshape/slice), so gradients flow through them."""
    x = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    x.attach_grad()
    with ag.record():
        y = (x.reshape((4, 3)) * 2).sum() + (x[1:3] * 3).sum() + (x[0] * 5).sum()
    y.backward()
    want = np.full((3, 4), 2.0)
    want[1:3] += 3
    want[0] += 5
    np.testing.assert_allclose(x.grad.asnumpy(), want)
    # outside record() they stay views sharing memory, as in MXNet
    v = x.reshape((4, 3))
    x[:] = 0
    assert v.asnumpy().sum() == 0


def test_fresh_grad_flag_follows_backward():
    x = mx.nd.ones((2, 2))
    dx = mx.nd.zeros_like(x)
    mx.autograd.mark_variables([x], [dx])
    assert x._fresh_grad is False
    with mx.autograd.record():
        y = x + 2
    y.backward()
    assert x._fresh_grad is True
    x._fresh_grad = False
    assert x._fresh_grad is False
    assert mx.nd.ones((1,))._fresh_grad is False      # not a variable


def test_get_symbol_of_a_recorded_graph():
    x = mx.nd.ones((1,))
    x.attach_grad()
    z = mx.nd.ones((1,))
    z.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * z - 1
    s = mx.autograd.get_symbol(y)
    assert sorted(s.list_arguments()) == ["var0", "var1"]
    ops = [n["op"] for n in __import__("json").loads(s.tojson())["nodes"] if n["op"] != "null"]
    assert sorted(ops) == ["_minus_scalar", "_mul_scalar", "broadcast_add", "broadcast_mul"]
    names = s.list_arguments()
    vals = {names[0]: mx.nd.array([3.0]), names[1]: mx.nd.array([3.0])}
    assert s.eval(**vals)[0].asscalar() == 14.0              # 9 + 6 - 1
    with pytest.raises(mx.MXNetError, match="not part of a computation graph"):
        mx.autograd.get_symbol(mx.nd.ones((1,)))
