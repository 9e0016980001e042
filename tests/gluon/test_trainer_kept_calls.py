"""Trainer.step pushes the update call it checked at the last step again
when the weights, gradients and numbers are the same (no attribute parse,
no shape rule): bit for bit what a fresh call computes, and a fresh call
whenever anything it depends on changed."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.gluon import nn
from aiond.ops import registry
from aiond.optimizer import updater as _updater

X = np.sin(np.arange(48, dtype=np.float32)).reshape(8, 6)
Y = np.array([0, 2, 1, 2, 0, 1, 1, 2], dtype=np.float32)


@pytest.fixture(autouse=True)
def _on_cpu():
    # kept calls are the CPU's: a device's update goes through invoke each step
    with mx.cpu():
        yield


def _net(dtype="float32"):
    net = nn.HybridSequential()
    net.add(nn.Dense(6, activation="relu", in_units=6), nn.Dense(3, in_units=6))
    net.initialize(mx.init.Xavier(rnd_type="gaussian"))
    for k, p in enumerate(net.collect_params().values()):
        p.set_data(nd.array(np.cos(np.arange(np.prod(p.shape)) + k).reshape(p.shape) * 0.3))
    if dtype != "float32":
        net.cast(dtype)
    return net


def _train(net, trainer, steps, x=X, y=Y, on_step=None):
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    dt = net[0].weight.dtype
    for i in range(steps):
        if on_step is not None:
            on_step(i, net, trainer)
        with autograd.record():
            loss = ce(net(nd.array(x, dtype=dt)), nd.array(y, dtype=dt))
        loss.backward()
        trainer.step(len(x))
    return [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize("opt", [
    {"learning_rate": 0.1},
    {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
    {"learning_rate": 0.1, "clip_gradient": 0.05},
])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_kept_calls_update_bit_for_bit_as_fresh_calls(opt, dtype):
    opt = dict(opt, multi_precision=dtype == "float16")

    def run(keep):
        net = _net(dtype)
        tr = gluon.Trainer(net.collect_params(), "sgd", dict(opt))
        if not keep:
            tr._optimizer._call_cache = lambda: None
        return _train(net, tr, 5)
    for a, b in zip(run(True), run(False)):
        assert a.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(a, b)


def test_after_the_first_step_nothing_is_parsed_or_shape_checked(monkeypatch):
    op = registry.get("multi_sgd_update")
    counts = {"parse": 0, "infer": 0}
    parse, infer = registry.parse_attrs, op.infer

    def counting_parse(o, kwargs):
        if o is op:
            counts["parse"] += 1
        return parse(o, kwargs)

    def counting_infer(*a):
        counts["infer"] += 1
        return infer(*a)
    monkeypatch.setattr(registry, "parse_attrs", counting_parse)
    monkeypatch.setattr(op, "infer", counting_infer)
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _train(net, tr, 1)
    assert counts == {"parse": 1, "infer": 1}
    _train(net, tr, 4)
    assert counts == {"parse": 1, "infer": 1}
    tr.set_learning_rate(0.05)          # new numbers: one fresh call, kept again
    _train(net, tr, 3)
    assert counts == {"parse": 2, "infer": 2}


def test_changed_numbers_and_new_arrays_get_a_fresh_call():
    """The learning rate changes, a scheduler moves it every step, and the
    parameters are replaced by new arrays (cast): each step computes what a
    trainer with no kept calls computes."""
    def changes(i, net, tr):
        if i == 2:
            tr.set_learning_rate(0.03)
        if i == 4:
            net.cast("float64")
            net.cast("float32")         # new arrays of the old dtype and values
        if i == 5:
            net[1].cast("float64")      # the first weight stays, the others are new
            net[1].cast("float32")

    def run(keep, sched):
        net = _net()
        opt = {"learning_rate": 0.1, "momentum": 0.5}
        if sched:
            opt["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=1, factor=0.9)
        tr = gluon.Trainer(net.collect_params(), "sgd", opt)
        if not keep:
            tr._optimizer._call_cache = lambda: None
        return _train(net, tr, 8, on_step=None if sched else changes)
    for sched in (False, True):
        for a, b in zip(run(True, sched), run(False, sched)):
            np.testing.assert_array_equal(a, b)


def test_a_step_while_recording_is_still_refused():
    """Under record the update goes through invoke, which refuses to write
    arrays that need gradients, as MXNet does: a kept call must not slip by."""
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    before = _train(net, tr, 2)         # the call is kept
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        loss = ce(net(nd.array(X)), nd.array(Y))
        loss.backward()
        with pytest.raises(mx.base.MXNetError, match="Inplace operations"):
            tr.step(len(X))
    for b, p in zip(before, net.collect_params().values()):
        np.testing.assert_array_equal(b, p.data().asnumpy())


def test_a_poisoned_gradient_poisons_the_weights_through_a_kept_call():
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _train(net, tr, 2)                  # the call is kept
    w = net[0].weight                   # (6, 6)
    nd.linalg.potrf(-nd.array(np.eye(6)), out=w.grad())     # fails in its kernel
    for p in net.collect_params().values():
        p.data()._fresh_grad = True
    tr.step(len(X))
    with pytest.raises(mx.base.MXNetError, match="potrf"):
        w.data().asnumpy()
    # the other weights of the same fused call were poisoned with it, as MXNet's
    # multi_sgd_update fails as one op
    with pytest.raises(mx.base.MXNetError, match="potrf"):
        net[1].bias.data().asnumpy()
    mx.nd.waitall()


def test_saved_states_hold_no_kept_calls(tmp_path):
    net = _net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    _train(net, tr, 2)
    assert tr._optimizer._calls
    assert "_calls" not in tr._optimizer.__getstate__()
    f = str(tmp_path / "t.states")
    tr.save_states(f)
    tr2 = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    tr2.load_states(f)
    assert not getattr(tr2._optimizer, "_calls", None)
    _train(net, tr2, 2)                 # a loaded optimizer keeps calls of its own
    assert tr2._optimizer._calls


def test_a_subclass_that_overrides_update_is_judged_again_when_patched():
    class MySGD(mx.optimizer.SGD):
        pass
    opt = MySGD(learning_rate=0.1)
    assert _updater.fused_update(opt) is not None

    def update(self, index, weight, grad, state):
        mx.optimizer.SGD.update(self, index, weight, grad, state)
    MySGD.update = update
    assert _updater.fused_update(opt) is None
    del MySGD.update
    assert _updater.fused_update(opt) is not None


# ------------------------------------------- the Trainer's repeated update groups

def _deep_net():
    """Six parameters (more than MXNET_OPTIMIZER_AGGREGATION_SIZE's 4): two groups."""
    net = nn.HybridSequential()
    net.add(nn.Dense(7, activation="relu", in_units=6), nn.Dense(5, activation="relu", in_units=7),
            nn.Dense(3, in_units=5))
    net.initialize(mx.init.Xavier(rnd_type="gaussian"))
    for k, p in enumerate(net.collect_params().values()):
        p.set_data(nd.array(np.sin(np.arange(np.prod(p.shape)) + k).reshape(p.shape) * 0.4))
    return net


def _twin_runs(events, steps=7, opt=None, make=_deep_net):
    """The same training with the Trainer's repeated groups and without
    them (every step derives the groups anew); ``events(i, net, trainer)``
    changes things before step i. Returns both runs' parameters."""
    out = []
    for express in (True, False):
        net = make()
        tr = gluon.Trainer(net.collect_params(), "sgd",
                           dict(opt or {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}))
        out.append(_train_ev(net, tr, steps, events, express))
    return out


def _train_ev(net, tr, steps, events, express):
    from aiond.gluon import trainer as _tr
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    for i in range(steps):
        if not express:
            tr._express = None
        events(i, net, tr)
        with autograd.record():
            loss = ce(net(nd.array(X)), nd.array(Y))
        loss.backward()
        tr.step(len(X))
        if express and i == 1:
            assert isinstance(tr._express, _tr._Express)
    return [p.data().asnumpy() for p in net.collect_params().values()]


def test_repeated_groups_update_bit_for_bit_as_the_general_path(tmp_path):
    f = str(tmp_path / "t.states")
    saved = {}

    def events(i, net, tr):
        if i == 2:
            tr.set_learning_rate(0.05)
        if i == 3:
            net[1].weight.lr_mult = 0.5
            net[2].bias.wd_mult = 3.0
        if i == 4:
            tr.save_states(f)
            saved[id(tr)] = tr._updaters[0].get_states()    # the momenta alone
        if i == 5:
            tr._updaters[0].set_states(saved[id(tr)])       # back a step: new states
        if i == 6:
            tr.load_states(f)       # a new optimizer too
    a, b = _twin_runs(events, steps=8)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_the_general_path_runs_only_when_something_changed(monkeypatch):
    from aiond.optimizer.updater import Updater
    calls = []
    orig = Updater.__call__

    def counting(self, *a):
        calls.append(1)
        return orig(self, *a)
    monkeypatch.setattr(Updater, "__call__", counting)
    net = _deep_net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    _train(net, tr, 4)
    assert len(calls) == 1
    net[0].bias.grad_req = "add"        # new gradient arrays
    _train(net, tr, 1)
    assert len(calls) == 2
    _train(net, tr, 2)
    assert len(calls) == 2


def test_a_stale_gradient_still_raises_or_is_skipped():
    net = _deep_net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _train(net, tr, 2)
    before = [p.data().asnumpy().copy() for p in net.collect_params().values()]
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        tr.step(len(X))             # no backward since the last step
    after = [p.data().asnumpy() for p in net.collect_params().values()]
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
    # a backward through part of the net: the rest is skipped when asked
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        h = net[0](nd.array(X))
        loss = ce(h[:, :3], nd.array(Y))
    loss.backward()
    tr.step(len(X), ignore_stale_grad=True)
    after2 = [p.data().asnumpy() for p in net.collect_params().values()]
    assert not np.array_equal(after2[0], after[0])
    for x, y in zip(after[2:], after2[2:]):
        np.testing.assert_array_equal(x, y)


def test_mixed_dtypes_take_the_general_path():
    def make():
        net = _deep_net()
        net[2].cast("float64")
        return net

    def run(net, tr):
        ce = gluon.loss.SoftmaxCrossEntropyLoss()
        for _ in range(3):
            with autograd.record():
                h = net[1](net[0](nd.array(X)))
                loss = ce(net[2](h.astype("float64")), nd.array(Y, dtype="float64"))
            loss.backward()
            tr.step(len(X))
        return tr
    net = make()
    tr = run(net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1}))
    assert tr._express is None
    assert net[2].weight.data().dtype == np.float64


def test_a_reinitialized_models_old_arrays_are_let_go():
    """Kept calls hold their arrays; one that no update used for
    _KEEP_STEPS updates is dropped, so replaced parameters are freed."""
    import gc
    import weakref
    from aiond.optimizer import optimizer as _opt
    net = _deep_net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    _train(net, tr, 2)
    old = weakref.ref(net[0].weight.data())
    net.initialize(mx.init.Xavier(), force_reinit=True)      # new arrays
    _train(net, tr, _opt._KEEP_STEPS + 1)
    mx.nd.waitall()
    gc.collect()
    assert old() is None
    assert len(tr._optimizer._calls) <= 2       # this model's calls only


def test_a_trainer_with_a_copy_per_device_keeps_hitting():
    """Two contexts, updated outside the store: one fused update per device
    each step; both devices' calls stay kept and give the general path's
    numbers."""
    op = registry.get("multi_sgd_update")
    ctxs = [mx.cpu(0), mx.cpu(1)]

    def run(keep):
        net = _net()
        net.collect_params().reset_ctx(ctxs)
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1},
                           update_on_kvstore=False)
        if not keep:
            tr._optimizer._call_cache = lambda: None
        ce = gluon.loss.SoftmaxCrossEntropyLoss()
        xs = gluon.utils.split_and_load(nd.array(X), ctxs)
        ys = gluon.utils.split_and_load(nd.array(Y), ctxs)
        infers = []
        for _ in range(12):
            before = counts[0]
            with autograd.record():
                losses = [ce(net(x), y) for x, y in zip(xs, ys)]
            autograd.backward(losses)
            tr.step(len(X))
            infers.append(counts[0] - before)
        return [p.data(c).asnumpy() for p in net.collect_params().values() for c in ctxs], infers
    counts = [0]
    infer = op.infer

    def counting(*a):
        counts[0] += 1
        return infer(*a)
    op.infer = counting
    try:
        a, infers = run(True)
        b, _ = run(False)
    finally:
        op.infer = infer
    assert infers[0] == 2 and sum(infers[1:]) == 0
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_weights_past_one_fused_op_update_as_the_general_path():
    """Over FUSE_ELEMS elements the update is several ops in one segment."""
    from aiond.gluon import trainer as _tr
    from aiond.optimizer.optimizer import FUSE_ELEMS

    def make():
        net = nn.HybridSequential()
        net.add(nn.Dense(1024, activation="relu", in_units=6), nn.Dense(1024, in_units=1024),
                nn.Dense(3, in_units=1024))
        net.initialize(mx.init.Xavier(rnd_type="gaussian"))
        return net
    mx.random.seed(7)
    runs = []
    for express in (True, False):
        mx.random.seed(7)
        net = make()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
        runs.append(_train_ev(net, tr, 3, lambda i, n, t: None, express))
        if express:
            assert isinstance(tr._express, _tr._Express) and not tr._express.single
            assert sum(p.data().size for p in net.collect_params().values()) >= FUSE_ELEMS
    for x, y in zip(*runs):
        np.testing.assert_array_equal(x, y)


# --------------------------------------------- the Updater's repeated groups (Module)

def _module(keep):
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=7, name="fc1")
    h = mx.sym.Activation(h, act_type="relu")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"),
                               name="softmax")
    mod = mx.mod.Module(out, context=mx.cpu())
    it = mx.io.NDArrayIter(X, Y, batch_size=4)
    mod.bind(it.provide_data, it.provide_label)
    rs = np.random.RandomState(5)
    mod.init_params(arg_params={
        "fc1_weight": nd.array(rs.randn(7, 6) * 0.3), "fc1_bias": nd.zeros((7,)),
        "fc2_weight": nd.array(rs.randn(3, 7) * 0.3), "fc2_bias": nd.zeros((3,))})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9,
                                                          "wd": 0.001})
    chunks = []
    for epoch in range(3):
        it.reset()
        for batch in it:
            if not keep:
                mod._updater._express = None
            mod.forward(batch, is_train=True)
            mod.backward()
            mod.update()
            if keep:
                chunks.append(mod._updater._express[3])
        if epoch == 1:
            mod._optimizer.lr = 0.05
    args, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in args.items()}, chunks


def test_module_updates_repeat_the_updaters_groups_bit_for_bit():
    """Module.update calls the Updater with the same weights every batch: its
    groups are formed once and handed to the optimizer again, which still
    counts and schedules (the learning rate changes after epoch 2)."""
    a, chunks = _module(True)
    b, _ = _module(False)
    assert all(c is chunks[0] for c in chunks)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_an_updater_with_new_states_forms_its_groups_again():
    net = _deep_net()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    upd = tr._updaters[0]
    ws = [p.data() for p in net.collect_params().values()]
    gs = [p.grad() for p in net.collect_params().values()]
    idx = list(range(len(ws)))
    upd(idx, gs, ws)
    first = upd._express[3]
    upd(idx, gs, ws)
    assert upd._express[3] is first
    upd.set_states(upd.get_states())        # new states dict: new groups
    upd(idx, gs, ws)
    assert upd._express[3] is not first
    assert upd._express[3][0][3][0] is upd.states[0]
