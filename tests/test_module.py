"""mx.mod.Module against MXNet 1.9.1: training figures, log lines,
predict/score, reshaping, several contexts, checkpoints both ways, errors.

MXNet's figures come from tests/data/module/expected.json, written by
make_fixtures.py in the MXNet venv on the problems of problem.py (fixed
data, weights and batch order, so the arithmetic is the same).
"""
import json
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "module")
MXNET_PY = os.path.join(os.path.dirname(HERE), ".venvs", "mxnet", "bin", "python")
sys.path.insert(0, DATA)
import problem  # noqa: E402

with open(os.path.join(DATA, "expected.json")) as _f:
    EXPECTED = json.load(_f)

# MXNet's own warnings on these paths (Module.load then fit; bind without labels)
pytestmark = [pytest.mark.filterwarnings("ignore:Parameters already initialized"),
              pytest.mark.filterwarnings("ignore:Data provided by label_shapes")]


def _assert_summary(got, want, rtol=2e-5):
    assert sorted(got) == sorted(want)
    for k in want:
        if k == "score":
            assert [n for n, _ in got[k]] == [n for n, _ in want[k]]
            np.testing.assert_allclose([v for _, v in got[k]], [v for _, v in want[k]],
                                       rtol=rtol)
        else:   # sums of the parameters: compare relative to the parameters' scale
            assert abs(got[k] - want[k]) <= rtol * max(1.0, abs(want[k])), (k, got[k], want[k])


def _iter(n=96, batch=32, seed=0, **kw):
    X, y = problem.data(n, seed)
    return mx.io.NDArrayIter(X, y, batch_size=batch, **kw)


def _bound(batch=32, for_training=True, **kw):
    mod = mx.mod.Module(problem.mlp(mx), **kw)
    mod.bind(data_shapes=[("data", (batch, problem.N_IN))],
             label_shapes=[("softmax_label", (batch,))], for_training=for_training)
    mod.init_params(arg_params=problem.params(mx))
    return mod


# ---------------------------------------------------------------- training
def test_fit_matches_mxnet_and_logs_its_lines(caplog):
    caplog.set_level(logging.INFO)
    mod, val = problem.fit(mx, mx.cpu(), batch_end_callback=mx.callback.Speedometer(32, 5))
    _assert_summary(problem.summary(mod, val), EXPECTED["fit_cpu"])
    mask = lambda s: re.sub(r"(Speed: |cost=)[0-9.]+", r"\1X", s)  # noqa: E731
    got = [mask(r.getMessage()) for r in caplog.records if r.name == "root"]
    assert got == [mask(s) for s in EXPECTED["fit_cpu_log"]]
    assert "Epoch[3] Train-accuracy=" in "\n".join(got)


def test_fit_on_two_contexts_sums_gradients_like_mxnet():
    mod, val = problem.fit(mx, [mx.cpu(0), mx.cpu(1)], num_epoch=4)
    _assert_summary(problem.summary(mod, val), EXPECTED["fit_2cpu"])
    execs = mod._exec_group.execs
    assert [e._ctx for e in execs] == [mx.cpu(0), mx.cpu(1)]
    assert [e.arg_dict["data"].shape for e in execs] == [(16, 20), (16, 20)]
    # the devices' copies of the weights stayed equal
    np.testing.assert_allclose(execs[0].arg_dict["fc1_weight"].asnumpy(),
                               execs[1].arg_dict["fc1_weight"].asnumpy(), rtol=1e-6)


def test_two_contexts_updating_on_the_devices_or_without_kvstore(monkeypatch):
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")     # sum in the store, update per device
    mod, val = problem.fit(mx, [mx.cpu(0), mx.cpu(1)])
    assert mod._update_on_kvstore is False and mod._kvstore is not None
    _assert_summary(problem.summary(mod, val), EXPECTED["fit_2cpu"])
    mod, val = problem.fit(mx, [mx.cpu(0), mx.cpu(1)], kvstore=None)   # devices drift apart
    _assert_summary(problem.summary(mod, val), EXPECTED["fit_2cpu_nokv"])


def test_two_contexts_with_work_load_and_merged_outputs():
    mod = mx.mod.Module(problem.mlp(mx), context=[mx.cpu(0), mx.cpu(1)], work_load_list=[3, 1])
    mod.bind(data_shapes=[("data", (32, 20))], label_shapes=[("softmax_label", (32,))])
    mod.init_params(arg_params=problem.params(mx))
    assert mod._exec_group.slices == [slice(0, 24), slice(24, 32)]
    X, y = problem.data(32, 5)
    batch = mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)])
    mod.forward(batch, is_train=False)
    merged = mod.get_outputs()[0]
    assert merged.shape == (32, 4)
    parts = mod.get_outputs(merge_multi_context=False)[0]
    assert [p.shape for p in parts] == [(24, 4), (8, 4)]
    single = _bound()
    single.forward(batch, is_train=False)
    np.testing.assert_allclose(merged.asnumpy(), single.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_manual_loop_with_inputs_need_grad():
    mod = mx.mod.Module(problem.mlp(mx))
    mod.bind(data_shapes=[("data", (32, 20))], label_shapes=[("softmax_label", (32,))],
             inputs_need_grad=True)
    mod.init_params(arg_params=problem.params(mx))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    assert mod._optimizer.rescale_grad == 1.0 / 32
    it = _iter()
    batch = next(it)
    before = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    mod.forward_backward(batch)
    grad = mod.get_input_grads()[0]
    assert grad.shape == (32, 20) and np.abs(grad.asnumpy()).sum() > 0
    mod.update()
    after = mod.get_params()[0]["fc1_weight"].asnumpy()
    assert not np.allclose(before, after)
    metric = mx.metric.create("acc")
    mod.update_metric(metric, batch.label)
    assert metric.get()[0] == "accuracy" and 0 <= metric.get()[1] <= 1
    assert mod.data_shapes[0].name == "data" and mod.label_shapes[0].shape == (32,)
    assert mod.output_shapes == [("softmax_output", (32, 4))]


def test_fixed_params_are_not_updated():
    mod = mx.mod.Module(problem.mlp(mx), fixed_param_names=["fc1_weight"])
    mod.fit(_iter(), num_epoch=1, arg_params=problem.params(mx),
            optimizer_params={"learning_rate": 0.5})
    arg, _ = mod.get_params()
    np.testing.assert_array_equal(arg["fc1_weight"].asnumpy(),
                                  problem.params(mx)["fc1_weight"].asnumpy())
    assert not np.allclose(arg["fc2_weight"].asnumpy(),
                           problem.params(mx)["fc2_weight"].asnumpy())


# ---------------------------------------------------------------- predict / score
def test_predict_score_and_iter_predict_drop_the_padding():
    mod = _bound()
    it = _iter(n=70)                      # 3 batches, the last one padded by 26
    out = mod.predict(it)
    assert out.shape == (70, 4)
    X, _ = problem.data(70, 0)
    direct = mod.predict(mx.nd.array(X[:32]))
    np.testing.assert_allclose(out.asnumpy()[:32], direct.asnumpy(), rtol=1e-6)
    per_batch = mod.predict(it, merge_batches=False)
    assert [[o.shape for o in b] for b in per_batch] == [[(32, 4)], [(32, 4)], [(6, 4)]]
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert mod.predict(it, num_batch=1).shape == (32, 4)
    seen = [(o[0].shape, i, b.pad) for o, i, b in mod.iter_predict(it)]
    assert seen == [((32, 4), 0, 0), ((32, 4), 1, 0), ((6, 4), 2, 26)]
    res = dict(mod.score(it, ["acc", "ce"]))
    assert set(res) == {"accuracy", "cross-entropy"}
    assert mod.score(it, "acc", num_batch=1)[0][0] == "accuracy"


def test_smaller_batches_reshape_and_share_memory():
    mod = _bound()
    X, y = problem.data(7, 1)
    mod.forward(mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)]), is_train=True)
    mod.backward()
    assert mod.get_outputs()[0].shape == (7, 4)
    assert mod.data_shapes[0].shape == (7, 20) and mod.label_shapes[0].shape == (7,)
    assert mod.output_shapes == [("softmax_output", (7, 4))]
    # no labels in the batch (predict on an array): MXNet cannot reshape here, aiond infers them
    assert mod.predict(mx.nd.array(X[:5])).shape == (5, 4)
    X32, y32 = problem.data(32, 1)
    mod.forward(mx.io.DataBatch([mx.nd.array(X32)], [mx.nd.array(y32)]))
    assert mod.get_outputs()[0].shape == (32, 4)
    group = mod._exec_group
    assert group.execs[0] is group._default_execs[0]      # back on the first binding
    # the reshaped executors share the parameters with the first one
    p = group._default_execs[0].arg_dict["fc1_weight"]
    mod.forward(mx.io.DataBatch([mx.nd.array(X)], [mx.nd.array(y)]))
    assert group.execs[0].arg_dict["fc1_weight"] is p


# ---------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip_with_optimizer_states(tmp_path):
    mod = mx.mod.Module(problem.mlp(mx))
    mod.fit(_iter(), num_epoch=2, arg_params=problem.params(mx),
            optimizer_params=problem.OPT)
    prefix = str(tmp_path / "m")
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ["m-0002.params", "m-0002.states", "m-symbol.json"]
    saved = mx.nd.load(prefix + "-0002.params")
    assert sorted(saved) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight"]
    sym, arg, aux = mx.model.load_checkpoint(prefix, 2)
    assert sym.tojson() == mod.symbol.tojson() and aux == {}
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(arg[k].asnumpy(), v.asnumpy())
    # resuming (params + momentum) gives what continuing the first module gives
    m2 = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    m2.fit(_iter(), begin_epoch=2, num_epoch=3, optimizer_params=problem.OPT)
    mod.fit(_iter(), begin_epoch=2, num_epoch=3, optimizer_params=problem.OPT)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_allclose(m2.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-6)
    mod.save_params(str(tmp_path / "p.params"))
    m3 = _bound()
    m3.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(m3.get_params()[0]["fc2_weight"].asnumpy(),
                                  mod.get_params()[0]["fc2_weight"].asnumpy())


def test_mxnet_checkpoint_loads_and_predicts_mxnets_outputs():
    mod = mx.mod.Module.load(os.path.join(DATA, "mlpbn"), 2)
    X, _ = problem.data(10, 3)
    mod.bind(data_shapes=[("data", X.shape)], for_training=False)
    got = mod.predict(mx.nd.array(X)).asnumpy()
    np.testing.assert_allclose(got, np.array(EXPECTED["mlpbn_predict"]), rtol=1e-5, atol=1e-6)
    _, aux = mod.get_params()
    assert sorted(aux) == ["bn1_moving_mean", "bn1_moving_var"]


def test_resume_from_mxnet_checkpoint_and_optimizer_states():
    X, y = problem.data(96, 0)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mx.mod.Module.load(os.path.join(DATA, "mlpbn"), 2, load_optimizer_states=True)
    mod.fit(it, begin_epoch=2, num_epoch=4, optimizer_params=problem.OPT)
    arg, aux = mod.get_params()
    got = {k: float(v.asnumpy().astype(np.float64).sum())
           for k, v in list(arg.items()) + list(aux.items())}
    want = EXPECTED["mlpbn_resume"]
    assert sorted(got) == sorted(want)
    for k in want:
        assert abs(got[k] - want[k]) <= 1e-4 * max(1.0, abs(want[k])), (k, got[k], want[k])


def _train_mlpbn():
    X, y = problem.data(96, 0)
    mod = mx.mod.Module(problem.mlp_bn(mx))
    mod.fit(mx.io.NDArrayIter(X, y, batch_size=32), num_epoch=2,
            arg_params=problem.params(mx), allow_missing=True, initializer=mx.init.Zero(),
            optimizer_params=problem.OPT)
    return mod


def test_training_with_batchnorm_matches_mxnets_checkpoint():
    """The recipe that wrote mlpbn-0002.params (make_fixtures.checkpoint_problem)."""
    arg, aux = _train_mlpbn().get_params()
    _, want_arg, want_aux = mx.model.load_checkpoint(os.path.join(DATA, "mlpbn"), 2)
    for k, v in list(want_arg.items()) + list(want_aux.items()):
        got = arg[k] if k in arg else aux[k]
        np.testing.assert_allclose(got.asnumpy(), v.asnumpy(), rtol=1e-4, atol=1e-5, err_msg=k)


def test_batchnorm_fixed_gamma_is_reset_to_one_like_mxnet():
    """MXNet writes ones into gamma on every forward with fix_gamma=True."""
    arg, _ = _train_mlpbn().get_params()
    _, want, _ = mx.model.load_checkpoint(os.path.join(DATA, "mlpbn"), 2)
    np.testing.assert_allclose(arg["bn1_gamma"].asnumpy(), want["bn1_gamma"].asnumpy(),
                               rtol=1e-5)


@pytest.mark.skipif(not os.path.exists(MXNET_PY), reason="no MXNet 1.9.1 venv")
def test_aiond_checkpoint_loads_in_mxnet(tmp_path):
    mod = mx.mod.Module(problem.mlp_bn(mx))
    X, y = problem.data(96, 0)
    mod.fit(mx.io.NDArrayIter(X, y, batch_size=32), num_epoch=2,
            arg_params=problem.params(mx), allow_missing=True, initializer=mx.init.Zero(),
            optimizer_params=problem.OPT)
    mod.save_checkpoint(str(tmp_path / "aiond"), 2)
    Xp, _ = problem.data(10, 3)
    m2 = mx.mod.Module.load(str(tmp_path / "aiond"), 2)
    m2.bind(data_shapes=[("data", Xp.shape)], for_training=False)
    np.save(str(tmp_path / "expected.npy"), m2.predict(mx.nd.array(Xp)).asnumpy())
    out = subprocess.run([MXNET_PY, os.path.join(DATA, "make_fixtures.py"), "--check",
                          str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-2000:]


# ---------------------------------------------------------------- errors
def test_unknown_data_name_is_a_clear_error():
    with pytest.raises(MXNetError, match=r"data_names=\['image'\].*'image' is not found.*\n\tdata"):
        mx.mod.Module(problem.mlp(mx), data_names=["image"])
    with pytest.raises(ValueError):   # MXNet raises ValueError: still one
        mx.mod.Module(problem.mlp(mx), data_names=["image"])
    mod = mx.mod.Module(problem.mlp(mx))
    with pytest.raises(MXNetError, match=r"data_shapes don't match names specified by "
                                         r"data_names"):
        mod.bind(data_shapes=[("img", (32, 20))])


def test_missing_label_shapes_is_a_clear_error():
    d = mx.sym.Variable("data")
    lab = mx.sym.Variable("lab")
    fc = mx.sym.FullyConnected(d, num_hidden=3, name="fc")
    loss = mx.sym.make_loss(mx.sym.sum(fc) + mx.sym.sum(lab))   # lab's shape is free
    mod = mx.mod.Module(loss, label_names=["lab"])
    with pytest.warns(UserWarning, match="label_shapes"), \
            pytest.raises(MXNetError, match=r"label input\(s\) \['lab'\].*label_shapes="):
        mod.bind(data_shapes=[("data", (4, 5))])
    # labels whose shape follows from the data need none (as in MXNet)
    mod = mx.mod.Module(problem.mlp(mx))
    with pytest.warns(UserWarning, match="label_shapes"):
        mod.bind(data_shapes=[("data", (4, 20))], for_training=False)
    assert mod._exec_group.execs[0].arg_dict["softmax_label"].shape == (4,)


def test_params_file_missing_a_weight_is_a_clear_error(tmp_path):
    mod = _bound()
    prefix = str(tmp_path / "m")
    mod.save_checkpoint(prefix, 1)
    saved = mx.nd.load(prefix + "-0001.params")
    del saved["arg:fc2_weight"]
    mx.nd.save(prefix + "-0001.params", saved)
    loaded = mx.mod.Module.load(prefix, 1)
    with pytest.raises(MXNetError, match=r"no value for the argument\(s\) fc2_weight"):
        loaded.bind(data_shapes=[("data", (32, 20))])
    fresh = mx.mod.Module(problem.mlp(mx))
    fresh.bind(data_shapes=[("data", (32, 20))], label_shapes=[("softmax_label", (32,))])
    _, arg, aux = mx.model.load_checkpoint(prefix, 1)
    with pytest.raises(MXNetError, match=r"fc2_weight is not presented.*allow_missing"):
        fresh.set_params(arg, aux)
    fresh.set_params(arg, aux, allow_missing=True)     # allowed: left as bound


def test_calls_out_of_order_say_what_is_missing():
    mod = mx.mod.Module(problem.mlp(mx))
    with pytest.raises(MXNetError, match="not bound; call bind"):
        mod.forward(next(_iter()))
    mod.bind(data_shapes=[("data", (32, 20))], label_shapes=[("softmax_label", (32,))])
    with pytest.raises(MXNetError, match="not initialized; call init_params"):
        mod.forward(next(_iter()))
    mod.init_params()
    with pytest.raises(MXNetError, match="no optimizer; call init_optimizer"):
        mod.update()
    with pytest.raises(ValueError, match="number of epochs"):
        mod.fit(_iter())
