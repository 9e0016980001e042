"""A bound executor's backward pushes the backward plan of its last recorded
fused forward straight away (Executor._fused_grads) instead of walking the
one-node tape: the gradients must be bit for bit the tape walk's, under
every grad_req, head gradient and order of calls, and every case the
direct path does not cover must still reach the tape walk."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd
from aiond.symbol import executor as _exe

RS = np.random.RandomState(7)


def _mlp(out="softmax"):
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=5, name="fc2")
    if out == "softmax":
        return mx.sym.SoftmaxOutput(fc2, name="softmax")
    if out == "group":      # two outputs: a loss and a plain one
        return mx.sym.Group([mx.sym.SoftmaxOutput(fc2, name="softmax"), act * 2])
    return fc2               # a plain output: backward needs head gradients


def _bind(sym, grad_req="write"):
    exe = sym.simple_bind(mx.cpu(), data=(8, 12), grad_req=grad_req)
    rs = np.random.RandomState(3)
    for name, arr in exe.arg_dict.items():
        if name.endswith("label"):
            arr[:] = rs.randint(0, 5, arr.shape)
        else:
            arr[:] = rs.randn(*arr.shape).astype(np.float32) * 0.3
    return exe


def _grads(exe):
    return {k: (None if v is None else v.asnumpy()) for k, v in exe.grad_dict.items()}


def _run(sym, steps, grad_req="write", direct=True, monkeypatch=None):
    exe = _bind(sym, grad_req)
    if not direct:
        monkeypatch.setattr(_exe.Executor, "_fused_grads", lambda self, *a: None)
    out = []
    for step in steps:
        step(exe)
        out.append(_grads(exe))
    if not direct:
        monkeypatch.undo()
    return out


def _same(a, b):
    assert len(a) == len(b)
    for ga, gb in zip(a, b):
        assert ga.keys() == gb.keys()
        for k in ga:
            if ga[k] is None:
                assert gb[k] is None, k
            else:
                assert ga[k].dtype == gb[k].dtype
                np.testing.assert_array_equal(ga[k], gb[k], err_msg=k)


def _fwd_bwd(exe, og=None):
    exe.forward(is_train=True)
    exe.backward(og)


OG = mx.nd.array(RS.randn(8, 5).astype(np.float32))


@pytest.mark.parametrize("sym,grad_req,steps", [
    ("softmax", "write", [_fwd_bwd, _fwd_bwd]),
    ("softmax", "add", [_fwd_bwd, _fwd_bwd, _fwd_bwd]),
    ("softmax", {"data": "null", "fc1_weight": "write", "fc1_bias": "add",
                 "fc2_weight": "add", "fc2_bias": "write", "softmax_label": "null"},
     [_fwd_bwd, _fwd_bwd]),
    ("plain", "write", [lambda e: _fwd_bwd(e, OG), lambda e: _fwd_bwd(e, [OG * 2])]),
    ("plain", "add", [lambda e: _fwd_bwd(e, OG), lambda e: _fwd_bwd(e, OG)]),
    ("plain", "write", [_fwd_bwd]),          # no head gradient given: ones
    ("group", "write", [lambda e: _fwd_bwd(e, [None, mx.nd.ones((8, 16))])]),
    # two backwards of one forward: 'add' accumulates both, as MXNet's
    ("softmax", "add", [lambda e: (e.forward(is_train=True), e.backward(), e.backward())]),
    # backward after an inference forward replays it recorded
    ("softmax", "write", [lambda e: (e.forward(is_train=False), e.backward())]),
])
def test_gradients_are_bit_for_bit_the_tape_walks(sym, grad_req, steps, monkeypatch):
    s = _mlp(sym)
    _same(_run(s, steps, grad_req), _run(s, steps, grad_req, False, monkeypatch))


def test_the_direct_path_is_taken_and_walks_no_tape(monkeypatch):
    exe = _bind(_mlp())
    _fwd_bwd(exe)
    calls = []
    real = autograd._run_backward
    monkeypatch.setattr(autograd, "_run_backward",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    pushed = []
    real_fused = _exe.Executor._fused_grads
    monkeypatch.setattr(_exe.Executor, "_fused_grads",
                        lambda self, *a: pushed.append(1) or real_fused(self, *a))
    for _ in range(3):
        _fwd_bwd(exe)
    assert calls == [] and len(pushed) == 3
    # the loss output's head gradient is never read: no ones_like is pushed for it
    ops = []
    from aiond.ops import registry
    op = registry.get("ones_like")
    k = op.kernel
    monkeypatch.setattr(op, "kernel", lambda *a, **kw: ops.append(1) or k(*a, **kw))
    _fwd_bwd(exe)
    mx.nd.waitall()
    assert ops == []


def _walks_tape(exe, monkeypatch, step):
    calls = []
    real = autograd._run_backward
    monkeypatch.setattr(autograd, "_run_backward",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    step(exe)
    monkeypatch.setattr(autograd, "_run_backward", real)
    return bool(calls)


def test_cases_the_direct_path_leaves_to_the_tape_walk(monkeypatch):
    exe = _bind(_mlp())
    _fwd_bwd(exe)

    def under_record(e):
        e.forward(is_train=True)
        with autograd.record():
            e.backward()
    assert _walks_tape(exe, monkeypatch, under_record)
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append(name))     # runs op by op
    assert _walks_tape(exe, monkeypatch, _fwd_bwd)
    assert seen
    # the same results either way
    ref = _bind(_mlp())
    _fwd_bwd(ref)
    _same([_grads(exe)], [_grads(ref)])


def test_a_sparse_head_gradient_takes_the_tape_walk(monkeypatch):
    exe = _bind(_mlp("plain"))
    og = OG.tostype("csr")
    assert _walks_tape(exe, monkeypatch, lambda e: _fwd_bwd(e, og))
    ref = _bind(_mlp("plain"))
    _fwd_bwd(ref, OG)
    _same([_grads(exe)], [_grads(ref)])


def test_a_bad_head_gradient_still_raises():
    exe = _bind(_mlp("plain"))
    exe.forward(is_train=True)
    with pytest.raises(mx.base.MXNetError, match="out_grad of shape"):
        exe.backward(mx.nd.ones((8, 4)))


def test_module_training_matches_the_tape_walk(monkeypatch):
    X = RS.rand(64, 12).astype(np.float32)
    y = RS.randint(0, 5, 64).astype(np.float32)

    def train():
        it = mx.io.NDArrayIter(X, y, batch_size=16)
        mod = mx.mod.Module(_mlp(), context=mx.cpu())
        mod.bind(it.provide_data, it.provide_label)
        mod.init_params(mx.init.Xavier(rnd_type="uniform", magnitude=1))
        arg, aux = mod.get_params()
        rs = np.random.RandomState(1)
        mod.set_params({k: mx.nd.array(rs.randn(*v.shape).astype(np.float32) * 0.2)
                        for k, v in arg.items()}, aux)
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1,
                                                              "momentum": 0.9})
        for _ in range(2):
            it.reset()
            for batch in it:
                mod.forward(batch, is_train=True)
                mod.backward()
                mod.update()
        return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    a = train()
    monkeypatch.setattr(_exe.Executor, "_fused_grads", lambda self, *a: None)
    b = train()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
