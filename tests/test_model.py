"""mx.model: checkpoints in MXNet's files, and the old FeedForward estimator
checked against MXNet 1.9.1's figures (tests/data/module/expected.json)."""
import json
import logging
import os
import sys

import numpy as np
import pytest

import aiond as mx

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "module")
sys.path.insert(0, DATA)
import problem  # noqa: E402

with open(os.path.join(DATA, "expected.json")) as _f:
    EXPECTED = json.load(_f)


def test_save_and_load_checkpoint_use_mxnets_names(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    net = problem.mlp_bn(mx)
    arg = problem.params(mx)
    aux = {"bn1_moving_mean": mx.nd.ones((16,)), "bn1_moving_var": mx.nd.ones((16,)) * 2}
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 7, net, arg, aux)
    assert sorted(os.listdir(tmp_path)) == ["net-0007.params", "net-symbol.json"]
    assert caplog.records[-1].getMessage() == 'Saved checkpoint to "%s-0007.params"' % prefix
    raw = mx.nd.load(prefix + "-0007.params")
    assert sorted(raw) == ["arg:fc1_bias", "arg:fc1_weight", "arg:fc2_bias", "arg:fc2_weight",
                           "aux:bn1_moving_mean", "aux:bn1_moving_var"]
    sym, arg2, aux2 = mx.model.load_checkpoint(prefix, 7)
    assert sym.tojson() == net.tojson()
    assert sorted(arg2) == sorted(arg) and sorted(aux2) == sorted(aux)
    np.testing.assert_array_equal(aux2["bn1_moving_var"].asnumpy(), np.full(16, 2, np.float32))
    assert mx.model.load_params(prefix, 7)[0].keys() == arg2.keys()
    # symbol=None writes only the parameters
    mx.model.save_checkpoint(str(tmp_path / "only"), 1, None, arg, {})
    assert not os.path.exists(str(tmp_path / "only-symbol.json"))


def test_mxnet_checkpoint_loads():
    sym, arg, aux = mx.model.load_checkpoint(os.path.join(DATA, "mlpbn"), 2)
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "bn1_gamma", "bn1_beta",
                                    "fc2_weight", "fc2_bias", "softmax_label"]
    assert sorted(aux) == ["bn1_moving_mean", "bn1_moving_var"]
    assert arg["fc1_weight"].shape == (16, 20)


def test_bad_param_file_names_the_array(tmp_path):
    mx.nd.save(str(tmp_path / "x-0001.params"), {"fc1_weight": mx.nd.ones((2,))})
    with pytest.raises(ValueError, match=r"'fc1_weight' is named neither arg:<name> nor"):
        mx.model.load_params(str(tmp_path / "x"), 1)
    mx.nd.save(str(tmp_path / "y-0001.params"), [mx.nd.ones((2,))])
    with pytest.raises(ValueError, match="unnamed arrays"):
        mx.model.load_params(str(tmp_path / "y"), 1)


def test_batch_end_param_is_mxnets_namedtuple():
    p = mx.model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals=None)
    assert p._fields == ("epoch", "nbatch", "eval_metric", "locals")
    assert type(p).__name__ == "BatchEndParams"


def _feedforward(**kw):
    return mx.model.FeedForward(problem.mlp(mx), num_epoch=3, learning_rate=0.5, momentum=0.9,
                                numpy_batch_size=50, arg_params=problem.params(mx), **kw)


def test_feedforward_fit_predict_score_match_mxnet(caplog):
    caplog.set_level(logging.INFO)
    Xtr, ytr = problem.data(500, 0)
    Xte, yte = problem.data(200, 1)
    np.random.seed(0)         # NDArrayIter(shuffle=True) draws from numpy's global RNG
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated"):
        ff = _feedforward()
    ff.fit(Xtr, ytr, eval_data=(Xte, yte))
    want = EXPECTED["feedforward"]
    prob = ff.predict(Xte)
    assert prob.shape == (200, 4)
    assert float((prob.argmax(axis=1) == yte).mean()) == want["acc"]
    assert abs(float(prob[:, 0].astype(np.float64).sum()) - want["prob_sum0"]) < 1e-3
    assert ff.score(mx.io.NDArrayIter(Xte, yte, 50)) == want["score"]
    for k, v in ff.arg_params.items():
        assert abs(float(v.asnumpy().astype(np.float64).sum()) - want[k]) <= \
            2e-5 * max(1.0, abs(want[k])), k
    msgs = [r.getMessage() for r in caplog.records]
    assert "Epoch[0] Resetting Data Iterator" in msgs
    assert any(m.startswith("Epoch[2] Time cost=") for m in msgs)
    assert any(m.startswith("Epoch[2] Validation-accuracy=") for m in msgs)
    out, data, label = ff.predict(Xte, return_data=True)
    np.testing.assert_array_equal(data, Xte)
    np.testing.assert_array_equal(label, np.zeros(200))    # predict labels with zeros
    assert ff.predict(Xte, num_batch=2).shape == (100, 4)


def test_feedforward_save_load_create(tmp_path):
    Xtr, ytr = problem.data(200, 0)
    ff = mx.model.FeedForward.create(problem.mlp(mx), Xtr, ytr, num_epoch=1, learning_rate=0.1,
                                     numpy_batch_size=50)
    prefix = str(tmp_path / "ff")
    ff.save(prefix)
    assert os.path.exists(prefix + "-0001.params")
    ff2 = mx.model.FeedForward.load(prefix, 1)
    assert ff2.begin_epoch == 1
    np.testing.assert_allclose(ff2.predict(Xtr), ff.predict(Xtr), rtol=1e-6)


def test_feedforward_bad_input():
    ff = _feedforward()
    with pytest.raises(ValueError, match="y must be specified"):
        ff.fit(np.zeros((10, 20), np.float32))
    with pytest.raises(ValueError, match="numbers of data points and labels not equal"):
        ff.fit(np.zeros((10, 20), np.float32), np.zeros(9))
    with pytest.raises(TypeError, match="X must be DataIter"):
        ff.fit([[0.0] * 20])
