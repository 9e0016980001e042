"""Everything above the engine on ``mx.gpu(i)``, on the CuPy test double:
autograd, Symbol executors, Gluon with one and two devices, Trainer with
the 'device' kvstore. Results are compared with the same work on the CPU."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd


def _net(seed=0):
    mx.random.seed(seed)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier(rnd_type="gaussian"), ctx=mx.cpu())
    net(nd.zeros((1, 5), ctx=mx.cpu()))
    return net


def _data():
    rs = np.random.RandomState(1)
    return rs.randn(8, 5).astype(np.float32), rs.randint(0, 3, (8,)).astype(np.float32)


def _train(ctxs, steps=3, hybridize=False):
    net = _net()
    params = [v.data().asnumpy() for v in net.collect_params().values()]
    net.collect_params().reset_ctx(ctxs)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                            kvstore="device")
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = _data()
    losses = []
    for _ in range(steps):
        xs = gluon.utils.split_and_load(nd.array(x), ctxs)
        ys = gluon.utils.split_and_load(nd.array(y), ctxs)
        with autograd.record():
            ls = [loss_fn(net(a), b) for a, b in zip(xs, ys)]
        for l in ls:
            l.backward()
        trainer.step(x.shape[0])
        losses.append(sum(float(l.sum().asscalar()) for l in ls))
    return params, [v.data(ctxs[0]).asnumpy() for v in net.collect_params().values()], \
        losses, net


def test_autograd_on_gpu(fake_gpu):
    x = nd.array([[1.0, 2.0], [3.0, 4.0]], ctx=mx.gpu(0))
    x.attach_grad()
    with autograd.record():
        y = (x * x + nd.sin(x)).sum()
    y.backward()
    assert x.grad.context == mx.gpu(0)
    xv = x.asnumpy()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * xv + np.cos(xv), rtol=1e-5)


def test_symbol_executor_on_gpu(fake_gpu):
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh")
    exe = net.simple_bind(mx.gpu(0), data=(2, 3))
    rs = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rs.randn(*arr.shape)
    cpu = net.simple_bind(mx.cpu(), data=(2, 3))
    for name, arr in exe.arg_dict.items():
        cpu.arg_dict[name][:] = arr.asnumpy()
    out = exe.forward(is_train=True)[0]
    assert out.context == mx.gpu(0)
    exe.backward(nd.ones((2, 4), ctx=mx.gpu(0)))
    want = cpu.forward(is_train=True)[0].asnumpy()
    cpu.backward(nd.ones((2, 4)))
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(),
                               cpu.grad_dict["fc1_weight"].asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybridize", [False, True])
def test_gluon_training_on_one_gpu_matches_cpu(fake_gpu, hybridize):
    p0, on_cpu, lc, _ = _train([mx.cpu()], hybridize=hybridize)
    q0, on_gpu, lg, net = _train([mx.gpu(0)], hybridize=hybridize)
    for a, b, c, d in zip(p0, q0, on_cpu, on_gpu):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(d, c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lg, lc, rtol=1e-4)
    assert lg[-1] < lg[0]
    assert all(p.data().context == mx.gpu(0) for p in net.collect_params().values())


def test_gluon_data_parallel_on_two_gpus(fake_gpu):
    _, on_cpu, lc, _ = _train([mx.cpu(0), mx.cpu(1)])
    _, on_gpu, lg, net = _train([mx.gpu(0), mx.gpu(1)])
    for c, d in zip(on_cpu, on_gpu):
        np.testing.assert_allclose(d, c, rtol=1e-4, atol=1e-5)
    for p in net.collect_params().values():
        a, b = p.data(mx.gpu(0)), p.data(mx.gpu(1))
        assert a.context == mx.gpu(0) and b.context == mx.gpu(1)
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    np.testing.assert_allclose(lg, lc, rtol=1e-4)


def test_module_fit_on_gpu(fake_gpu):
    rs = np.random.RandomState(0)
    x = rs.randn(40, 6).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    it = mx.io.NDArrayIter(x, y, batch_size=10, label_name="softmax_label")
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name="fc"),
                               name="softmax")
    mod = mx.mod.Module(net, context=mx.gpu(0))
    mod.fit(it, num_epoch=5, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
            initializer=mx.init.Xavier())
    score = mod.score(it, "acc")[0][1]
    assert score > 0.8
    arg, _ = mod.get_params()
    # MXNet keeps the module's copies in nd.zeros of the default context
    assert arg["fc_weight"].context == mx.current_context()
    out = mod.predict(it)
    assert out.shape == (40, 2)


def test_kvstore_device_reduces_gpu_arrays(fake_gpu):
    kv = mx.kv.create("device")
    kv.init("w", nd.zeros((2, 3), ctx=mx.gpu(0)))
    kv.push("w", [nd.ones((2, 3), ctx=mx.gpu(0)) * 2, nd.ones((2, 3), ctx=mx.gpu(1)) * 3])
    outs = [nd.zeros((2, 3), ctx=mx.gpu(0)), nd.zeros((2, 3), ctx=mx.gpu(1))]
    kv.pull("w", out=outs)
    for o, c in zip(outs, (mx.gpu(0), mx.gpu(1))):
        assert o.context == c
        np.testing.assert_array_equal(o.asnumpy(), 5)


def test_serving_batcher_runs_a_gpu_model(fake_gpu):
    import asyncio
    from aiond.serve import Batcher
    net = _net()
    x, _ = _data()
    want = net(nd.array(x, ctx=mx.cpu())).asnumpy()
    net.collect_params().reset_ctx(mx.gpu(0))

    async def main():
        async with Batcher(net, max_batch_size=8, ctx=mx.gpu(0)) as b:
            return await asyncio.gather(*[b(x[i:i + 1]) for i in range(len(x))])
    got = asyncio.run(main())
    np.testing.assert_allclose(np.concatenate([np.asarray(g) for g in got]), want,
                               rtol=1e-5, atol=1e-6)


def test_hybridized_graph_is_one_launch_on_gpu(fake_gpu):
    """A hybridized block's compiled plan runs every kernel in one launch of
    the GPU executor (one event), with no host synchronization."""
    from aiond.engine import gpu as g
    net = _net()
    net.collect_params().reset_ctx(mx.gpu(0))
    net.hybridize()
    x, _ = _data()
    xg = nd.array(x, ctx=mx.gpu(0))
    want = net(nd.array(x, ctx=mx.gpu(0))).asnumpy()
    ex = g.executor(mx.gpu(0))
    n0, s0 = ex.launched, fake_gpu.syncs
    y = net(xg)
    assert ex.launched - n0 == 1
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6)
    assert fake_gpu.syncs == s0
