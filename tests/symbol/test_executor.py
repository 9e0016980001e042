"""Executors: bind / simple_bind / forward / backward against numpy, the
MXNet 1.9.1 semantics of grad_req, shared arrays, reshape, bad input, and
an executor awaited from a coroutine."""
from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.ndarray._invoke import data_of
from aiond.test_utils import (check_numeric_gradient, check_symbolic_backward,
                              check_symbolic_forward)


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield


def ctx():
    """The context the test binds on: cpu(0), or gpu(0) where the suite runs
    with a GPU default (AIOND_TEST_CTX)."""
    return mx.current_context()


def nd(x):
    return mx.nd.array(np.asarray(x, dtype=np.float32))


def abcd():
    return (mx.sym.Variable("A") + mx.sym.Variable("B")) / 10 + 1


def mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=5, name="fc1")
    net = mx.sym.Activation(net, act_type="tanh", name="a1")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="sm")


def mlp_numpy(p):
    h = np.tanh(p["data"] @ p["fc1_weight"].T + p["fc1_bias"])
    z = h @ p["fc2_weight"].T + p["fc2_bias"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    dz = prob - np.eye(3)[p["sm_label"].astype(int)]     # SoftmaxOutput's gradient
    dh = dz @ p["fc2_weight"] * (1 - h ** 2)
    grads = {"fc2_weight": dz.T @ h, "fc2_bias": dz.sum(0), "fc1_weight": dh.T @ p["data"],
             "fc1_bias": dh.sum(0), "data": dh @ p["fc1_weight"],
             "sm_label": np.zeros_like(p["sm_label"])}
    return prob, grads


def mlp_params(seed=0):
    rng = np.random.RandomState(seed)
    shapes = {"data": (4, 6), "fc1_weight": (5, 6), "fc1_bias": (5,), "fc2_weight": (3, 5),
              "fc2_bias": (3,)}
    p = {k: rng.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}
    p["sm_label"] = np.array([0, 1, 2, 1], np.float32)
    return p


# ---------------------------------------------------------------- forward


def test_bind_forward_in_place_and_same_outputs():
    A, B = np.random.rand(10).astype(np.float32), np.random.rand(10).astype(np.float32)
    args = {"A": nd(A), "B": nd(B)}
    exe = abcd().bind(ctx=ctx(), args=args, grad_req="null")
    assert sorted(exe.arg_dict) == ["A", "B"] and exe.arg_dict["A"] is args["A"]
    outs = exe.forward()
    assert outs is exe.outputs and len(outs) == 1
    first = exe.outputs[0]
    np.testing.assert_allclose(first.asnumpy(), (A + B) / 10 + 1, rtol=1e-6)
    exe.arg_dict["A"][:] = 0
    exe.arg_dict["B"][:] = 0
    exe.forward()
    assert exe.outputs[0] is first
    np.testing.assert_allclose(first.asnumpy(), np.ones(10))
    exe.forward(A=np.full(10, 5, np.float32), B=nd(np.ones(10)))     # copied in first
    np.testing.assert_allclose(first.asnumpy(), np.full(10, 1.6), rtol=1e-6)
    np.testing.assert_allclose(args["A"].asnumpy(), np.full(10, 5))
    assert list(exe.output_dict) == ["_plusscalar0_output"]
    # list args in list_arguments() order
    exe2 = abcd().bind(ctx(), [nd([1, 2]), nd([3, 4])])
    np.testing.assert_allclose(exe2.forward()[0].asnumpy(), [1.4, 1.6], rtol=1e-6)


def test_two_executors_share_arrays():
    net = mlp()
    train = net.simple_bind(ctx(), data=(4, 6), sm_label=(4,))
    test = net.bind(ctx(), args=train.arg_arrays, grad_req="null")
    p = mlp_params()
    for k, v in p.items():
        train.arg_dict[k][:] = v
    prob, _ = mlp_numpy(p)
    np.testing.assert_allclose(test.forward()[0].asnumpy(), prob, rtol=1e-5, atol=1e-6)
    train.forward(is_train=True)
    train.backward()
    for name, W, G in zip(net.list_arguments(), train.arg_arrays, train.grad_arrays):
        if name not in ("data", "sm_label"):
            W[:] = W - G * 0.5
    p2 = {k: v.asnumpy() for k, v in train.arg_dict.items()}
    assert not np.allclose(p2["fc1_weight"], p["fc1_weight"])
    np.testing.assert_allclose(test.forward()[0].asnumpy(), mlp_numpy(p2)[0], rtol=1e-5,
                               atol=1e-6)


def test_dropout_sees_is_train():
    exe = mx.sym.Dropout(mx.sym.var("x"), p=0.5).bind(ctx(), {"x": mx.nd.ones((200,))})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), np.ones(200))
    y = exe.forward(is_train=True)[0].asnumpy()
    assert 20 < (y == 0).sum() < 180 and set(np.unique(y)) <= {0.0, 2.0}


def test_batchnorm_aux_states_follow_mxnet():
    x = np.random.RandomState(1).rand(4, 3).astype(np.float32)
    bn = mx.sym.BatchNorm(mx.sym.var("x"), fix_gamma=False, momentum=0.5, eps=1e-3, name="bn")
    aux = {"bn_moving_mean": mx.nd.zeros(3), "bn_moving_var": mx.nd.ones(3)}
    exe = bn.bind(ctx(), {"x": nd(x), "bn_gamma": mx.nd.ones(3), "bn_beta": mx.nd.zeros(3)},
                  args_grad={"x": mx.nd.zeros((4, 3))}, aux_states=aux)
    assert exe.aux_dict["bn_moving_mean"] is aux["bn_moving_mean"]
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), x / np.sqrt(1 + 1e-3), rtol=1e-5)
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), rtol=1e-4,
                               atol=1e-5)
    exe.backward(nd(np.ones((4, 3))))
    # MXNet (CPU) updates the moving statistics in the backward pass
    np.testing.assert_allclose(aux["bn_moving_mean"].asnumpy(), 0.5 * x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(aux["bn_moving_var"].asnumpy(), 0.5 + 0.5 * x.var(0), rtol=1e-5)


# ---------------------------------------------------------------- backward


def test_backward_write_add_null_and_dict_reqs():
    net = mlp()
    p = mlp_params()
    _, g = mlp_numpy(p)
    args = {k: nd(v) for k, v in p.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in p.items()}
    exe = net.bind(ctx(), args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward()
    for k in p:
        assert exe.grad_dict[k] is grads[k]
        np.testing.assert_allclose(grads[k].asnumpy(), g[k], rtol=1e-4, atol=1e-5, err_msg=k)
    exe.backward()                                   # 'write' again: unchanged
    np.testing.assert_allclose(grads["fc1_bias"].asnumpy(), g["fc1_bias"], rtol=1e-4,
                               atol=1e-5)
    add = {k: mx.nd.ones(v.shape) for k, v in p.items()}
    exe = net.bind(ctx(), args, args_grad=add, grad_req="add")
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_allclose(add["fc2_weight"].asnumpy(), 1 + 2 * g["fc2_weight"], rtol=1e-4)
    some = {k: mx.nd.ones(v.shape) for k, v in p.items()}
    exe = net.bind(ctx(), args, args_grad=some,
                   grad_req={"fc2_weight": "write", "fc1_bias": "write"})
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(some["fc1_bias"].asnumpy(), g["fc1_bias"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(some["fc1_weight"].asnumpy(), 1)           # 'null'
    reqs = ["null"] * 5 + ["write"]
    exe = net.bind(ctx(), args, args_grad=some, grad_req=reqs)
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_array_equal(some["sm_label"].asnumpy(), 0)


def test_write_gradients_are_computed_in_their_buffers(monkeypatch):
    # MXNet's kWriteTo: a gradient that one edge makes is computed in the
    # bound gradient array, not computed elsewhere and copied in
    import aiond.ndarray._indexing as indexing
    copied = []
    real = indexing._copy_into

    def spy(src, dst):
        copied.append(dst)
        return real(src, dst)
    monkeypatch.setattr(indexing, "_copy_into", spy)
    net = mlp()
    p = mlp_params()
    _, g = mlp_numpy(p)
    grads = {k: mx.nd.zeros(v.shape) for k, v in p.items()}
    exe = net.bind(ctx(), {k: nd(v) for k, v in p.items()}, args_grad=grads)
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
        for k in p:
            np.testing.assert_allclose(grads[k].asnumpy(), g[k], rtol=1e-4, atol=1e-5,
                                       err_msg=k)
    assert not [d for d in copied if any(d is a for a in grads.values())]


def test_gradients_that_cannot_be_computed_in_place_are_still_written():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    net = a * b + a                      # a reaches the head twice: summed, then written
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    y = x[::-1] - 2
    whole = mx.nd.zeros((4, 3))
    ga = whole[1:3]                      # a view: not a buffer of its own
    gb = mx.nd.zeros((2, 3), dtype="float64")     # another dtype than b's
    exe = net.bind(ctx(), {"a": nd(x), "b": nd(y)}, args_grad={"a": ga, "b": gb})
    exe.forward(is_train=True)
    exe.backward(nd(np.full((2, 3), 2.0)))
    np.testing.assert_allclose(ga.asnumpy(), 2 * (y + 1))
    np.testing.assert_array_equal(whole.asnumpy()[[0, 3]], 0)
    assert gb.dtype == np.float64
    np.testing.assert_allclose(gb.asnumpy(), 2 * x)
    # two arguments bound to one gradient array: each gradient is written,
    # in argument order, as before in-place gradients existed
    shared = mx.nd.zeros((2, 3))
    exe = (a + 2 * b).bind(ctx(), {"a": nd(x), "b": nd(y)},
                           args_grad={"a": shared, "b": shared})
    exe.forward(is_train=True)
    exe.backward(nd(np.ones((2, 3))))
    np.testing.assert_array_equal(shared.asnumpy(), 2)


def test_backward_head_gradients():
    d = abcd()
    grads = {"A": mx.nd.ones(10), "B": mx.nd.ones(10)}
    exe = d.bind(ctx(), {"A": mx.nd.ones(10), "B": mx.nd.ones(10)}, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones(10)])
    for g in exe.grad_arrays:
        np.testing.assert_allclose(g.asnumpy(), np.full(10, 0.1), rtol=1e-6)
    exe.backward(mx.nd.ones(10) * 5)
    np.testing.assert_allclose(grads["B"].asnumpy(), np.full(10, 0.5), rtol=1e-6)
    exe.backward()                                   # ones by default
    np.testing.assert_allclose(grads["A"].asnumpy(), np.full(10, 0.1), rtol=1e-6)
    exe.backward({"_plusscalar0_output": mx.nd.ones(10) * 2})
    np.testing.assert_allclose(grads["A"].asnumpy(), np.full(10, 0.2), rtol=1e-6)
    # several outputs, one of them a variable
    a = mx.sym.var("A")
    g = mx.sym.Group([a, a * mx.sym.var("B")])
    ga = mx.nd.zeros(2)
    exe = g.bind(ctx(), {"A": nd([1, 2]), "B": nd([3, 4])}, args_grad={"A": ga})
    outs = exe.forward(is_train=True)
    assert [o.asnumpy().tolist() for o in outs] == [[1, 2], [3, 8]]
    exe.backward([nd([1, 1]), nd([10, 10])])
    np.testing.assert_allclose(ga.asnumpy(), [31, 41])
    assert exe.grad_dict["B"] is None


def test_backward_after_inference_forward_works_as_in_mxnet():
    # seed 003 does exactly this: forward() then backward([out_grad])
    exe = abcd().bind(ctx(), {"A": mx.nd.ones(2), "B": mx.nd.ones(2)},
                      args_grad={"A": mx.nd.zeros(2), "B": mx.nd.zeros(2)})
    exe.forward()
    exe.backward(mx.nd.ones(2) * 5)
    for g in exe.grad_arrays:
        np.testing.assert_allclose(g.asnumpy(), [0.5, 0.5], rtol=1e-6)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [1.2, 1.2], rtol=1e-6)
    nograd = abcd().bind(ctx(), {"A": mx.nd.ones(2), "B": mx.nd.ones(2)}, grad_req="null")
    nograd.forward(is_train=True)
    nograd.backward(mx.nd.ones(2))                   # nothing to compute, as in MXNet


# ---------------------------------------------------------------- simple_bind


def test_simple_bind_allocates_everything():
    net = mlp()
    exe = net.simple_bind(ctx(), data=(4, 6))
    assert {k: v.shape for k, v in exe.arg_dict.items()} == {
        "data": (4, 6), "fc1_weight": (5, 6), "fc1_bias": (5,), "fc2_weight": (3, 5),
        "fc2_bias": (3,), "sm_label": (4,)}
    assert all(g is not None and g.shape == a.shape
               for a, g in zip(exe.arg_arrays, exe.grad_arrays))
    assert all(a.dtype == np.float32 for a in exe.arg_arrays)
    assert exe.outputs[0].shape == (4, 3)
    exe = net.simple_bind(ctx(), grad_req="null", data=(4, 6))
    assert exe.grad_arrays == [None] * 6
    exe = net.simple_bind(ctx(), grad_req={"fc1_weight": "write"}, data=(4, 6))
    assert [g is not None for g in exe.grad_arrays] == [False, True] + [False] * 4
    exe = abcd().simple_bind(ctx(), type_dict={"A": "float64"}, A=(3,), zzz=(3,))
    assert [a.dtype for a in exe.arg_arrays] == [np.float64, np.float64]
    assert exe.outputs[0].dtype == np.float64
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    exe = bn.simple_bind(ctx(), x=(2, 3))
    assert [a.shape for a in exe.aux_arrays] == [(3,), (3,)]
    base = net.simple_bind(ctx(), data=(4, 6))
    shared = net.simple_bind(ctx(), data=(4, 6), shared_arg_names=["fc1_weight"],
                             shared_exec=base)
    assert shared.arg_dict["fc1_weight"] is base.arg_dict["fc1_weight"]
    assert shared.grad_dict["fc1_weight"] is base.grad_dict["fc1_weight"]
    assert shared.arg_dict["fc2_weight"] is not base.arg_dict["fc2_weight"]
    buf = {}
    net.simple_bind(ctx(), data=(4, 6), shared_buffer=buf)
    assert sorted(buf) == sorted(net.list_arguments())
    small = net.simple_bind(ctx(), data=(2, 6), shared_buffer=buf)
    small.arg_dict["data"][:] = 7                     # a view of the buffer's memory
    assert buf["data"].asnumpy()[:2].tolist() == [[7] * 6] * 2
    with pytest.raises(MXNetError, match="cannot infer"):
        net.simple_bind(ctx())


def test_reshape_shares_memory():
    d = mx.sym.var("A") * mx.sym.var("B") + 1
    exe = d.simple_bind(ctx(), A=(4,), B=(4,))
    exe.arg_dict["A"][:] = 2
    exe.arg_dict["B"][:] = 3
    small = exe.reshape(A=(2,), B=(2,))
    assert small.arg_dict["A"].shape == (2,) and small.outputs[0].shape == (2,)
    np.testing.assert_allclose(small.forward()[0].asnumpy(), [7, 7])
    small.arg_dict["A"][:] = 5                        # the same memory as exe's A
    np.testing.assert_allclose(exe.arg_dict["A"].asnumpy(), [5, 5, 2, 2])
    assert exe.reshape(A=(4,), B=(4,)).arg_dict["A"] is exe.arg_dict["A"]
    with pytest.raises(MXNetError, match="allow_up_sizing"):
        exe.reshape(A=(8,), B=(8,))
    big = exe.reshape(allow_up_sizing=True, A=(8,), B=(8,))
    assert big.outputs[0].shape == (8,)
    with pytest.raises(MXNetError, match="partial_shaping"):
        exe.reshape(A=(2,))
    assert exe.reshape(partial_shaping=True, A=(2,)).arg_dict["B"].shape == (2,)


def test_copy_params_from():
    exe = abcd().simple_bind(ctx(), A=(2,), B=(2,))
    exe.copy_params_from({"A": mx.nd.ones(2) * 10, "B": mx.nd.ones(2, dtype="float64")})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), [2.1, 2.1], rtol=1e-6)
    with pytest.raises(ValueError, match="Z"):
        exe.copy_params_from({"Z": mx.nd.ones(2)})
    exe.copy_params_from({"Z": mx.nd.ones(2)}, allow_extra_params=True)


# ---------------------------------------------------------------- bad input


def test_bad_input_errors():
    d = abcd()
    with pytest.raises(ValueError, match="B"):
        d.bind(ctx(), {"A": mx.nd.ones(3)})
    with pytest.raises(ValueError, match="Length of args"):
        d.bind(ctx(), [mx.nd.ones(3)])
    with pytest.raises(MXNetError) as e:
        d.bind(ctx(), {"A": mx.nd.ones(3), "B": mx.nd.ones(4)})
    assert "_plus0" in str(e.value) and "(3,)" in str(e.value) and "(4,)" in str(e.value)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    with pytest.raises(MXNetError) as e:
        fc.bind(ctx(), {"data": mx.nd.ones((2, 3)), "fc_weight": mx.nd.ones((4, 5)),
                           "fc_bias": mx.nd.ones(4)})
    assert "fc_weight" in str(e.value) and "(4, 5)" in str(e.value) and "(4, 3)" in str(e.value)
    with pytest.raises(TypeError):
        d.bind("cpu", {"A": mx.nd.ones(3), "B": mx.nd.ones(3)})
    with pytest.raises(TypeError):
        d.bind(ctx(), {"A": np.ones(3), "B": mx.nd.ones(3)})
    with pytest.raises(ValueError, match="gradient"):
        d.bind(ctx(), {"A": mx.nd.ones(3), "B": mx.nd.ones(3)},
               args_grad={"A": mx.nd.ones(4)})
    with pytest.raises(ValueError, match="grad_req"):
        d.bind(ctx(), {"A": mx.nd.ones(3), "B": mx.nd.ones(3)}, grad_req="sometimes")
    with pytest.raises(MXNetError, match="cpu\\(1\\)"):
        d.bind(ctx(), {"A": mx.nd.ones(3, ctx=mx.cpu(1)), "B": mx.nd.ones(3)})
    exe = d.bind(ctx(), {"A": mx.nd.ones(3), "B": mx.nd.ones(3)})
    with pytest.raises(TypeError, match="Unknown argument Z"):
        exe.forward(Z=mx.nd.ones(3))
    with pytest.raises(ValueError, match="Shape not match"):
        exe.forward(A=mx.nd.ones(4))
    with pytest.raises(TypeError):
        exe.backward([np.ones(3)])


# ---------------------------------------------------------------- async


def test_forward_returns_at_once_and_is_awaited_in_a_coroutine():
    if mx.engine.is_naive():
        pytest.skip("naive engine runs every op at push")
    a, b = mx.nd.zeros(3), mx.nd.ones(3)
    exe = (mx.sym.var("A") * mx.sym.var("B") + 1).bind(ctx(), {"A": a, "B": b})
    started, release = threading.Event(), threading.Event()

    def gate():                                       # holds A until released
        started.set()
        release.wait(10)
        data_of(a)[...] = 2

    try:
        mx.engine.push(gate, writes=(a,), name="gate")
        assert started.wait(10)
        outs = exe.forward()                          # must not wait for the gate
        assert not release.is_set()

        async def main():
            fut = asyncio.ensure_future(outs[0].read())
            await asyncio.sleep(0.01)
            assert not fut.done()
            release.set()
            return await asyncio.wait_for(fut, 10)

        result = asyncio.run(main())
    finally:
        release.set()
    np.testing.assert_array_equal(result, [3, 3, 3])


# ---------------------------------------------------------------- test_utils


def test_test_utils_take_symbols():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.exp(a) * b + a / 2
    x, y = np.random.rand(2, 3), np.random.rand(2, 3)
    check_numeric_gradient(s, [x, y])
    check_symbolic_forward(s, [x, y], [np.exp(x) * y + x / 2], rtol=1e-5)
    check_symbolic_backward(s, {"a": x, "b": y}, [np.ones((2, 3))],
                            {"a": np.exp(x) * y + 0.5, "b": np.exp(x)}, rtol=1e-4)
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    check_numeric_gradient(fc, [np.random.rand(2, 4), np.random.rand(3, 4), np.random.rand(3)])
    bn = mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=False, name="bn")
    # as in MXNet, a Symbol with auxiliary states binds only when they are given
    with pytest.raises(mx.MXNetError, match="aux_states"):
        check_symbolic_forward(bn, [np.ones((2, 3)), np.ones(3), np.zeros(3)], [np.ones((2, 3))])
    check_symbolic_forward(bn, [np.ones((2, 3)), np.ones(3), np.zeros(3)],
                           [np.ones((2, 3)) / np.sqrt(1 + 1e-3)], rtol=1e-4,
                           aux_states=[np.zeros(3), np.ones(3)])


def test_monitor_callback_sees_every_op():
    seen = []
    exe = abcd().bind(ctx(), {"A": mx.nd.ones(2), "B": mx.nd.ones(2)})
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)))
    exe.forward()
    assert seen == [("_plus0_output", (2,)), ("_divscalar0_output", (2,)),
                    ("_plusscalar0_output", (2,))]


def test_reshaped_executor_writes_into_its_parents_outputs():
    y = mx.sym.FullyConnected(mx.sym.Variable('x'), num_hidden=4)
    exe = y.simple_bind(ctx(), x=(5, 4), grad_req='null')
    exe.arg_arrays[0][:] = 1
    exe.arg_arrays[1][:] = mx.nd.ones((4, 4))
    exe.arg_arrays[2][:] = 0
    small = exe.reshape(x=(3, 4))
    small.forward(is_train=False)
    assert (small.outputs[0].asnumpy() == 4).all()
    assert (exe.outputs[0].asnumpy()[:3] == 4).all()      # shared memory, as in MXNet
    big = exe.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_arrays[0][:] = 2                # a new data array; the weight is shared
    big.forward(is_train=False)
    assert big.outputs[0].shape == (6, 4) and (big.outputs[0].asnumpy() == 8).all()
    assert (exe.arg_arrays[0].asnumpy() == 1).all()


def _internals(exe):
    return len(exe.get_optimized_symbol().get_internals())


def test_common_subexpressions_are_computed_once(monkeypatch):
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    x = mx.nd.array([[1., 2.], [3., 4.]])
    y = mx.nd.array([[5., 6.], [7., 8.]])
    d = a + 1
    cases = [((a + 1) + (a + 2), 0), ((a + b) + (a + b), 1),
             (mx.sym.Group([a * d, a * d]), 0),   # merged, then a copy per output
             (mx.sym.Dropout(a) + mx.sym.Dropout(a), 0)]      # random: never merged
    for sym, saved in cases:
        kw = {k: v for k, v in (('a', x), ('b', y)) if k in sym.list_arguments()}
        monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
        orig = sym.bind(ctx(), dict(kw), args_grad={k: mx.nd.zeros_like(v)
                                                       for k, v in kw.items()})
        monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "1")
        cse = sym.bind(ctx(), dict(kw), args_grad={k: mx.nd.zeros_like(v)
                                                      for k, v in kw.items()})
        assert _internals(cse) + saved == _internals(orig), sym.list_outputs()
        assert cse.get_optimized_symbol().list_arguments() == sym.list_arguments()
        if saved or len(sym.list_outputs()) > 1:
            o1 = orig.forward(is_train=True)
            o2 = cse.forward(is_train=True)
            for p, q in zip(o1, o2):
                np.testing.assert_allclose(p.asnumpy(), q.asnumpy())
            orig.backward([mx.nd.ones_like(o) for o in o1])
            cse.backward([mx.nd.ones_like(o) for o in o2])
            for p, q in zip(orig.grad_arrays, cse.grad_arrays):
                np.testing.assert_allclose(p.asnumpy(), q.asnumpy())
    g = cases[2][0].bind(ctx(), {'a': x}).get_optimized_symbol()
    assert g.list_outputs()[1].endswith("_0_copy_output")


def test_binding_for_gradients_through_an_op_without_one_fails_at_bind():
    if "batch_take" not in mx.ops.ops():
        pytest.skip("batch_take (no gradient, as in MXNet) is registered on main")
    x, idx = mx.sym.Variable('x'), mx.sym.Variable('idx')
    y = mx.sym.batch_take(x, idx)
    types = {'x': np.float32, 'idx': np.int32}
    with pytest.raises(mx.MXNetError, match="batch_take is non-differentiable"):
        y.simple_bind(ctx(), x=(3, 4), idx=(3,), type_dict=types)
    y.simple_bind(ctx(), x=(3, 4), idx=(3,), type_dict=types, grad_req='null')
    exe = mx.sym.stop_gradient(y).simple_bind(ctx(), x=(3, 4), idx=(3,), type_dict=types)
    exe.arg_dict['x'][:] = mx.nd.arange(12).reshape((3, 4))
    exe.arg_dict['idx'][:] = mx.nd.array([0, 3, 7])     # 7 is clipped to 3
    out = exe.forward(is_train=True)[0]
    exe.backward([mx.nd.ones((3,))])
    assert out.asnumpy().tolist() == [0., 7., 11.]
    assert (exe.grad_dict['x'].asnumpy() == 0).all()


def test_gen_atomic_symbol_recomposes_by_input_name():
    fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, name='fc')
    atom = fc._gen_atomic_symbol()
    assert atom.list_arguments() == ['data', 'weight', 'bias']
    assert atom.list_attr() == fc.list_attr()
    c = atom(data=mx.sym.var('z'))
    assert c.infer_shape(z=(2, 4))[1] == [(2, 3)]
    with pytest.raises(mx.MXNetError, match="variable"):
        mx.sym.var('v')._gen_atomic_symbol()



def test_backward_ignores_extra_head_gradients_like_mxnet():
    # MXNet's GraphExecutor reads one head gradient per output (test_prelu
    # passes one per input)
    x = mx.sym.var("x")
    exe = (x * 2).bind(ctx(), {"x": mx.nd.ones((2,))}, args_grad={"x": mx.nd.zeros((2,))})
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((2,)), mx.nd.ones((5,))])
    assert exe.grad_dict["x"].asnumpy().tolist() == [2.0, 2.0]


def _allocated_mb(exe):
    import re
    m = re.search(r"Total (\d+) MB allocated", exe.debug_str())
    assert m, exe.debug_str()[-300:]
    return int(m.group(1))


def test_debug_str_reports_planned_memory_as_mxnet_zero_prop():
    # MXNet's test_symbol::test_zero_prop: gradients keep the forward's
    # intermediates alive; without them (grad_req null or stop_gradient)
    # buffers are reused and the report is the same for both
    data = mx.sym.Variable("data")
    for _ in range(10):
        data = data * data
    shape = (10, 3, 64, 64)                          # 0.47 MB per intermediate
    big = _allocated_mb(data.simple_bind(ctx(), data=shape))
    small1 = _allocated_mb(data.simple_bind(ctx(), data=shape, grad_req="null"))
    small2 = _allocated_mb(mx.sym.stop_gradient(data).simple_bind(ctx(), data=shape))
    assert big > small2
    assert small1 == small2
    # 9 saved intermediates of 0.47 MB and more for backward's workspace
    assert big >= 4


def test_block_grad_in_a_plan_writes_through_and_keeps_values():
    x = mx.sym.Variable("x")
    w = mx.sym.Variable("w")
    h = mx.sym.BlockGrad(x * 2) * w           # identity in the middle
    y = mx.sym.make_loss(mx.sym.sum(h * h))   # and at the head
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    wv = np.full((2, 3), 0.5, np.float32)
    exe = y.bind(ctx(), {"x": mx.nd.array(xv), "w": mx.nd.array(wv)},
                 args_grad={"x": mx.nd.zeros((2, 3)), "w": mx.nd.zeros((2, 3))})
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), [np.sum((2 * xv * wv) ** 2)],
                               rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), 2 * (2 * xv * wv) * 2 * xv,
                               rtol=1e-6)
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.zeros((2, 3)))
    plans = [c for c in exe._fused.cache.values() if c]
    assert plans and all(s.name != "BlockGrad" for c in plans for s in c.fwd.steps)
    # forward only: make_loss's input is read by nothing else, so it goes too
    # and sum writes straight into the executor's output
    inf = y.bind(ctx(), {"x": mx.nd.array(xv), "w": mx.nd.array(wv)}, grad_req="null")
    inf.forward()
    np.testing.assert_allclose(inf.outputs[0].asnumpy(), exe.outputs[0].asnumpy())
    steps = [s.name for c in inf._fused.cache.values() if c for s in c.fwd.steps]
    assert steps and "make_loss" not in steps and "BlockGrad" not in steps


def test_block_grad_into_an_array_read_before_it_is_kept_in_order():
    # y = BlockGrad(x + 1) written where an earlier step still reads the old
    # value: the identity may not be folded into its producer then
    from aiond.ndarray._plan import Plan, placeholder, trace
    a = mx.nd.array([1.0, 2.0])
    dst = mx.nd.array([10.0, 20.0])

    def fn(a, dst):
        t = a + 1                           # the producer comes first,
        s = dst * 3                         # a read of dst's old value next,
        mx.nd.BlockGrad(t, out=dst)         # and only then dst is overwritten
        return [s, dst]
    ph = [placeholder((2,), np.float32, ctx()) for _ in range(2)]
    outs, members, inline = trace(fn, *ph)
    plan = Plan(members, ph, list(outs), "t", inline)
    assert [st.name for st in plan.steps].count("BlockGrad") == 1
    s, d = plan.push([a, dst], ctx())
    np.testing.assert_array_equal(s.asnumpy(), [30, 60])
    np.testing.assert_array_equal(dst.asnumpy(), [2, 3])
