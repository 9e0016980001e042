"""Hybridized calls as one forward op and one backward tape node (aiond/graph/fused.py):
the same values as the op-by-op path, errors that name the op, and the
engine rules (ordering, concurrency) kept."""
import json
import threading

import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd

pytestmark = pytest.mark.timeout(120)


def _mlp(hybridize, seed=0, dropout=0.0, bn=False):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu", in_units=8))
    if bn:
        net.add(gluon.nn.BatchNorm(in_channels=16))
    if dropout:
        net.add(gluon.nn.Dropout(dropout))
    net.add(gluon.nn.Dense(4, in_units=16))
    net.initialize()
    for i, p in enumerate(net.collect_params().values()):
        lo = 0.5 if p.name.endswith("var") else -1     # running variances stay positive
        p.set_data(nd.array(np.random.RandomState(seed + i).uniform(lo, 1, p.shape)))
    if hybridize:
        net.hybridize()
    return net


def _train(net, steps=3, grad_req="write", seed=1):
    x = nd.array(np.random.RandomState(7).rand(6, 8))
    y = nd.array([0, 1, 2, 3, 1, 0])
    for p in net.collect_params().values():
        p.grad_req = grad_req
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    mx.random.seed(seed)
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(6)
    return [p.data().asnumpy() for p in net.collect_params().values()] + [net(x).asnumpy()]


@pytest.mark.parametrize("kw", [{}, {"bn": True}, {"dropout": 0.5}, {"grad_req": "add"}],
                         ids=["mlp", "batchnorm", "dropout", "grad_add"])
def test_training_matches_the_op_by_op_path(kw):
    grad_req = kw.pop("grad_req", "write")
    ref = _train(_mlp(False, **kw), grad_req=grad_req)
    got = _train(_mlp(True, **kw), grad_req=grad_req)
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)


def test_one_forward_op_and_one_tape_node():
    net = _mlp(True)
    x = nd.ones((2, 8))
    net(x).wait_to_read()           # compiles the inference plan
    mx.nd.waitall()
    before = mx.engine.statistics()
    y = net(x)
    after = mx.engine.statistics()
    assert (after.ops_pushed + after.ops_inline) - (before.ops_pushed + before.ops_inline) == 1
    with autograd.record():
        z = net(x)
    node = z._ag.node
    assert getattr(node.fn, "fused", False)
    assert len(node.edges) == 5     # data + 4 parameters
    np.testing.assert_allclose(y.asnumpy(), z.asnumpy())


def test_gradient_wrt_an_input_and_retain_graph():
    ref_net, net = _mlp(False), _mlp(True)
    grads = []
    for n in (ref_net, net):
        x = nd.array(np.random.RandomState(3).rand(3, 8))
        x.attach_grad()
        with autograd.record():
            out = n(x)
        out.backward(nd.ones_like(out) * 2, retain_graph=True)
        g1 = x.grad.asnumpy().copy()
        out.backward(nd.ones_like(out))
        grads.append((g1, x.grad.asnumpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-6)
    np.testing.assert_allclose(grads[1][0], 2 * grads[1][1], rtol=1e-6)


def test_new_input_shapes_get_their_own_plan():
    net = _mlp(True)
    ref = _mlp(False)
    for b in (1, 5, 2, 5):
        x = nd.array(np.random.RandomState(b).rand(b, 8))
        np.testing.assert_allclose(net(x).asnumpy(), ref(x).asnumpy(), rtol=1e-6)
    assert len(net._cached_op._fused.cache) == 3


def test_get_symbol_shows_one_cached_op_node():
    net = gluon.nn.HybridSequential()
    for _ in range(3):
        net.add(gluon.nn.Dense(10))
    net.initialize()
    net.hybridize(inline_limit=3)
    with autograd.record():
        y = net(nd.zeros((1, 10)))
    inlined = json.loads(autograd.get_symbol(y).tojson())["nodes"]
    net.hybridize(inline_limit=0)
    with autograd.record():
        y = net(nd.zeros((1, 10)))
    fused = json.loads(autograd.get_symbol(y).tojson())["nodes"]
    assert [n["op"] for n in inlined].count("FullyConnected") == 3
    assert [n["op"] for n in fused if n["op"] != "null"] == ["_CachedOp"]
    assert len(inlined) == len(fused) + 2


def test_create_graph_through_a_fused_call_raises_as_in_mxnet():
    net = _mlp(True)
    x = nd.ones((2, 8))
    x.attach_grad()
    with autograd.record():
        y = net(x)
    with pytest.raises(mx.base.MXNetError, match="cannot be differentiated again"):
        autograd.grad(y, [x], create_graph=True)


class _Chol(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.linalg.potrf(F.dot(x, x, transpose_b=True))


def test_a_failing_kernel_names_the_op_and_the_users_line():
    net = _Chol()
    net.hybridize()
    y = net(nd.zeros((3, 3)))       # not positive definite: fails in the kernel
    with pytest.raises(mx.base.MXNetError) as ei:
        y.asnumpy()
    msg = str(ei.value)
    assert "_linalg_potrf" in msg and "test_fused_graph.py" in msg
    # the block still works on good input
    good = net(nd.array(np.eye(3) * 2))
    np.testing.assert_allclose(good.asnumpy(), np.eye(3) * 2)


def test_threads_calling_one_hybridized_block():
    """Eight threads call a fresh hybridized block at once: one builds its
    graph, all get the right answers."""
    net = _mlp(True)
    ref = _mlp(False)
    xs = [nd.array(np.random.RandomState(i).rand(4, 8)) for i in range(8)]
    want = [ref(x).asnumpy() for x in xs]
    got = [None] * len(xs)
    start = threading.Event()

    def run(i):
        start.wait(10)
        for _ in range(20):
            got[i] = net(xs[i]).asnumpy()
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    start.set()
    for t in ts:
        t.join(60)
    for a, b in zip(want, got):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_plan_orders_with_later_writes_to_parameters():
    """A parameter overwritten after the call must not change its result."""
    net = _mlp(True)
    x = nd.ones((2, 8))
    first = net(x)
    w = net[0].weight.data()
    w[:] = 0
    second = net(x)
    ref = _mlp(False)
    np.testing.assert_allclose(first.asnumpy(), ref(x).asnumpy(), rtol=1e-6)
    assert not np.allclose(first.asnumpy(), second.asnumpy())


def test_fusion_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("AIOND_FUSE_GRAPHS", "0")
    net = _mlp(True)
    x = nd.ones((2, 8))
    net(x)
    assert net._cached_op._fused is None
    np.testing.assert_allclose(net(x).asnumpy(), _mlp(False)(x).asnumpy(), rtol=1e-6)


def _bound(fuse, monkeypatch):
    monkeypatch.setenv("AIOND_FUSE_GRAPHS", "1" if fuse else "0")
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=16, name="fc1"), act_type="relu")
    h = mx.sym.BatchNorm(h, name="bn")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fc2"), label,
                               name="softmax")
    exe = out.simple_bind(mx.cpu(), data=(5, 8), softmax_label=(5,),
                          grad_req={"data": "null", "softmax_label": "null", "fc1_weight": "add",
                                    "fc1_bias": "write", "fc2_weight": "write",
                                    "fc2_bias": "write", "bn_gamma": "write", "bn_beta": "write"})
    for k, a in sorted(exe.arg_dict.items()):
        a[:] = np.random.RandomState(len(k)).uniform(-1, 1, a.shape)
    exe.arg_dict["softmax_label"][:] = np.array([0, 1, 2, 3, 1])
    return exe


def test_executor_forward_and_backward_are_one_op_each(monkeypatch):
    exes = [_bound(False, monkeypatch), _bound(True, monkeypatch)]
    assert exes[0]._fused is None and exes[1]._fused is not None
    counts = []
    for exe in exes:
        for _ in range(3):
            mx.nd.waitall()
            s0 = mx.engine.statistics()
            exe.forward(is_train=True)
            s1 = mx.engine.statistics()
            exe.backward()
            s2 = mx.engine.statistics()
            counts.append(((s1.ops_pushed + s1.ops_inline) - (s0.ops_pushed + s0.ops_inline),
                           (s2.ops_pushed + s2.ops_inline) - (s1.ops_pushed + s1.ops_inline)))
    assert counts[-1] == (1, 1)
    a, b = exes
    np.testing.assert_array_equal(a.outputs[0].asnumpy(), b.outputs[0].asnumpy())
    for k in a.grad_dict:
        if a.grad_dict[k] is not None:
            np.testing.assert_array_equal(a.grad_dict[k].asnumpy(), b.grad_dict[k].asnumpy())
    for k in a.aux_dict:        # BatchNorm's running stats, updated in place by the plan
        np.testing.assert_array_equal(a.aux_dict[k].asnumpy(), b.aux_dict[k].asnumpy())
    a.forward(is_train=False)
    b.forward(is_train=False)
    np.testing.assert_array_equal(a.outputs[0].asnumpy(), b.outputs[0].asnumpy())


def test_executor_with_a_monitor_runs_op_by_op(monkeypatch):
    exe = _bound(True, monkeypatch)
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append(name))
    exe.forward(is_train=False)
    mx.nd.waitall()
    assert "fc1_output" in seen and "softmax_output" in seen


def test_await_read_of_a_fused_output_and_cancelling_it():
    import asyncio
    net = _mlp(True)
    ref = _mlp(False)
    x = nd.array(np.random.RandomState(5).rand(3, 8))
    want = ref(x).asnumpy()

    async def main():
        outs = [net(x) for _ in range(4)]
        t = asyncio.ensure_future(outs[0].read())
        t.cancel()
        got = await asyncio.gather(*[o.read() for o in outs])
        return got, await outs[0].read()
    got, again = asyncio.run(main())
    for g in got + [again]:
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_workspaces_are_reused_and_not_shared_by_concurrent_runs():
    net = _mlp(True)
    x = nd.array(np.random.RandomState(1).rand(64, 8))
    outs = [net(x * (i + 1)) for i in range(16)]        # many runs in flight at once
    ref = _mlp(False)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), ref(x * (i + 1)).asnumpy(), rtol=1e-5)
    plan = next(iter(net._cached_op._fused.cache.values())).fwd
    assert 1 <= len(plan.workspaces) <= 4


class _Chain(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        for i in range(10):
            x = F.relu(x * 2 - 1)
        return x


def test_a_deep_chain_reuses_intermediate_buffers():
    net = _Chain()
    net.hybridize()
    x = nd.array(np.random.RandomState(0).rand(64, 32))
    y = net(x)
    xn = x.asnumpy()
    for _ in range(10):
        xn = np.maximum(xn * 2 - 1, 0)
    np.testing.assert_allclose(y.asnumpy(), xn, rtol=1e-6)
    plan = next(iter(net._cached_op._fused.cache.values())).fwd
    assert len(plan.steps) == 30
    assert len(plan.phys_bytes) <= 3        # 29 intermediates in at most 3 buffers
    assert plan.workspace_bytes <= 3 * 64 * 32 * 4


def test_an_imperative_block_call_is_one_bulk_segment():
    net = _mlp(False)
    x = nd.ones((2, 8))
    net(x).wait_to_read()
    s0 = mx.engine.statistics()
    y = net(x)
    s1 = mx.engine.statistics()
    assert (s1.ops_pushed + s1.ops_inline) - (s0.ops_pushed + s0.ops_inline) == 1
    np.testing.assert_allclose(y.asnumpy(), _mlp(True)(x).asnumpy(), rtol=1e-6)
