"""A hybridized block called again on one NDArray (the serving call) takes
a short path that repeats its last plan; everything that changes what the
call must do sends it back to the general path."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, nd
from aiond.gluon import nn

from ._dense_mlp import CPU, mlp
from ._dense_mlp import arr as _arr
from ._dense_mlp import ref as _ref


def _mlp(dropout=0.0):
    return mlp(16, dropout)


def _x(n=3, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).uniform(-1, 1, (n, 8)).astype(dtype)


def test_repeated_calls_take_the_short_path_and_are_right():
    net = _mlp()
    x = _x()
    first = net(_arr(x)).asnumpy()
    assert net._fast is not None
    for seed in range(4):
        xs = _x(seed=seed)
        np.testing.assert_allclose(net(_arr(xs)).asnumpy(), _ref(net, xs), rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(first, _ref(net, x), rtol=1e-5, atol=1e-6)


def test_new_parameter_arrays_are_seen():
    net = _mlp()
    x = _x()
    before = net(_arr(x)).asnumpy()
    net.initialize(mx.init.Uniform(1.0), ctx=CPU, force_reinit=True)   # new arrays
    after = net(_arr(x)).asnumpy()
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, _ref(net, x), rtol=1e-5, atol=1e-6)
    # set_data writes the same arrays: the next call reads the new values
    net[0].weight.set_data(nd.ones((16, 8), ctx=CPU))
    np.testing.assert_allclose(net(_arr(x)).asnumpy(), _ref(net, x), rtol=1e-5, atol=1e-6)


def test_recording_after_inference_records():
    net = _mlp()
    x = _arr(_x())
    net(x).wait_to_read()
    assert net._fast is not None
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    g = net[0].weight.grad().asnumpy()
    assert np.abs(g).sum() > 0
    # and back to inference: still right
    np.testing.assert_allclose(net(x).asnumpy(), _ref(net, x.asnumpy()), rtol=1e-5, atol=1e-6)


def test_train_mode_switches_dropout_on_and_off():
    mx.random.seed(7)
    net = _mlp(dropout=0.5)
    x = _arr(np.ones((64, 8), np.float32))
    ref = _ref(net, x.asnumpy())
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with autograd.train_mode():
        dropped = net(x).asnumpy()
    assert not np.allclose(dropped, ref)
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_new_shape_dtype_and_cast():
    net = _mlp()
    np.testing.assert_allclose(net(_arr(_x(3))).asnumpy(), _ref(net, _x(3)), rtol=1e-5,
                               atol=1e-6)
    out = net(_arr(_x(5)))
    assert out.shape == (5, 4)
    np.testing.assert_allclose(out.asnumpy(), _ref(net, _x(5)), rtol=1e-5, atol=1e-6)
    net.cast("float64")
    x64 = _x(5, dtype=np.float64)
    out = net(_arr(x64, dtype="float64"))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), _ref(net, x64), rtol=1e-10)


def test_wrong_input_after_a_fast_call_still_raises():
    net = _mlp()
    net(_arr(_x())).wait_to_read()
    with pytest.raises(Exception, match="8|shape"):
        net(_arr(np.ones((3, 5), np.float32))).wait_to_read()
    np.testing.assert_allclose(net(_arr(_x())).asnumpy(), _ref(net, _x()), rtol=1e-5,
                               atol=1e-6)


class _Two(mx.gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.d = nn.Dense(4, in_units=8)

    def hybrid_forward(self, F, x):
        y = self.d(x)
        return y, F.relu(y)


def test_several_outputs_keep_their_structure():
    net = _Two()
    net.initialize(ctx=CPU)
    net.hybridize()
    x = _x()
    for _ in range(3):
        y, r = net(_arr(x))
        w, b = net.d.weight.data().asnumpy(), net.d.bias.data().asnumpy()
        np.testing.assert_allclose(y.asnumpy(), x @ w.T + b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r.asnumpy(), np.maximum(x @ w.T + b, 0), rtol=1e-5,
                                   atol=1e-6)


def test_threads_and_coroutines_share_one_net():
    net = _mlp()
    net(_arr(_x())).wait_to_read()
    inputs = [_x(seed=s) for s in range(16)]
    refs = [_ref(net, x) for x in inputs]
    errors = []
    start = threading.Barrier(5)

    def thread(k):
        start.wait()
        for i in range(40):
            j = (k + i) % 16
            got = net(_arr(inputs[j])).asnumpy()
            if not np.allclose(got, refs[j], rtol=1e-5, atol=1e-6):
                errors.append((k, j))

    async def client(k):
        for i in range(40):
            j = (k * 3 + i) % 16
            got = await net(_arr(inputs[j])).read()
            if not np.allclose(got, refs[j], rtol=1e-5, atol=1e-6):
                errors.append(("co", k, j))
            await asyncio.sleep(0)

    async def clients():
        start.wait()
        await asyncio.gather(*(client(k) for k in range(8)))

    threads = [threading.Thread(target=thread, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    asyncio.run(clients())
    for t in threads:
        t.join()
    assert errors == []


# ------------------------------------------------ the recorded (training) call

def _grads(net):
    return [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def _step(net, x, train_mode=True, head=None):
    with autograd.record(train_mode=train_mode):
        out = net(x)
        loss = (out * out).sum() if head is None else (out * head).sum()
    loss.backward()
    return out


def test_recorded_calls_take_the_short_path_bit_for_bit(monkeypatch):
    """Steps after the first skip the general path (no flatten, no format or
    signature check) and give the gradients the general path gives."""
    nets = [_mlp(), _mlp()]
    for a, b in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        b.set_data(a.data())
    calls = []
    general = type(nets[0])._call_cached_op

    def counting(self, *args):
        calls.append(self)
        return general(self, *args)
    monkeypatch.setattr(type(nets[0]), "_call_cached_op", counting)
    for seed in range(4):
        x = _x(seed=seed)
        _step(nets[0], _arr(x))
        nets[1]._fast_rec = None        # the twin always takes the general path
        _step(nets[1], _arr(x))
        for g0, g1 in zip(_grads(nets[0]), _grads(nets[1])):
            np.testing.assert_array_equal(g0, g1)
    assert nets[0]._fast_rec is not None
    assert calls.count(nets[0]) == 1 and calls.count(nets[1]) == 4


def test_what_changes_a_recorded_call_sends_it_back():
    """An input that needs its own gradient, the other training mode, a
    parameter that stops needing gradients, new parameter arrays and a new
    shape each take the general path, with the general path's results."""
    net = _mlp()
    x = _x()
    _step(net, _arr(x))
    assert net._fast_rec is not None
    # the input needs a gradient: the plans that compute it
    xa = _arr(x)
    xa.attach_grad()
    _step(net, xa)
    w = net[0].weight.data().asnumpy()
    b = net[0].bias.data().asnumpy()
    h = x @ w.T + b
    y = np.maximum(h, 0) @ net[1].weight.data().asnumpy().T + net[1].bias.data().asnumpy()
    dx = ((2 * y) @ net[1].weight.data().asnumpy() * (h > 0)) @ w
    np.testing.assert_allclose(xa.grad.asnumpy(), dx, rtol=1e-4, atol=1e-5)
    net = _mlp(dropout=0.5)
    _step(net, _arr(x))
    assert net._fast_rec is not None
    # predict mode (no dropout) against the numpy forward, then train mode again
    out = _step(net, _arr(x), train_mode=False)
    np.testing.assert_allclose(out.asnumpy(), _ref(net, x), rtol=1e-5, atol=1e-6)
    out = _step(net, _arr(x), train_mode=True)
    assert (out.asnumpy() != _ref(net, x)).any()       # dropout drew a mask
    # a parameter that stops needing gradients keeps its old gradient buffer
    net[0].bias.grad_req = "null"
    before = net[0].weight.grad().asnumpy().copy()
    _step(net, _arr(_x(seed=3)), train_mode=False)
    assert not np.array_equal(before, net[0].weight.grad().asnumpy())
    # new arrays, then a new batch size
    net.initialize(mx.init.Uniform(1.0), ctx=CPU, force_reinit=True)
    for n in (3, 5):
        xs = _x(n=n, seed=n)
        out = _step(net, _arr(xs), train_mode=False)
        np.testing.assert_allclose(out.asnumpy(), _ref(net, xs), rtol=1e-5, atol=1e-6)
        y = _ref(net, xs)
        h = xs @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy()
        gw2 = (2 * y).T @ np.maximum(h, 0)
        np.testing.assert_allclose(net[2].weight.grad().asnumpy(), gw2, rtol=1e-4, atol=1e-4)
