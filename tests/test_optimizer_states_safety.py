"""Optimizer-state files never run code from the file (issue 15): aiond
writes a format with no code in it, and MXNet's pickles are read by an
unpickler that allows only the classes they contain. Every bad file is an
MXNetError."""
from __future__ import annotations

import base64
import pickle

import numpy as np
import pytest

import aiond as mx
from aiond import optimizer as opt
from aiond.base import MXNetError
from aiond.gluon import Trainer, nn

from test_optimizer import MX_STATES

CALLED = []


def _record(*args):
    CALLED.append(args)


PRINT = b"cbuiltins\nprint\n(Vcalled from a .states file\ntR."


def _evil_pickles():
    class Evil:
        def __reduce__(self):
            return (_record, ("evil",))
    yield PRINT
    yield pickle.dumps(Evil(), protocol=2)
    yield pickle.dumps({0: Evil()}, protocol=4)
    yield pickle.dumps(({0: None}, Evil()), protocol=4)
    yield b"cos\nsystem\n(Vtrue\ntR."
    yield b"\x80\x04\x95\x1a\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94."


@pytest.mark.parametrize("blob", list(_evil_pickles()))
def test_set_states_runs_no_code(blob, capsys):
    CALLED.clear()
    upd = opt.get_updater(opt.create("sgd"))
    with pytest.raises(MXNetError):
        upd.set_states(blob)
    assert CALLED == []
    assert "called from" not in capsys.readouterr().out


def test_trainer_load_states_runs_no_code(tmp_path, capsys):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    tr = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    f = tmp_path / "evil.states"
    f.write_bytes(PRINT)
    with pytest.raises(MXNetError, match="refusing builtins.print"):
        tr.load_states(str(f))
    assert "called from" not in capsys.readouterr().out


def test_mxnet_pickle_still_loads():
    upd = opt.get_updater(opt.create("sgd"))
    upd.set_states(base64.b64decode(MX_STATES))
    assert type(upd.optimizer) is opt.SGD
    assert isinstance(upd.states[0], mx.nd.NDArray)
    assert type(upd.optimizer.lr_scheduler) is mx.lr_scheduler.FactorScheduler


def test_mxnet_module_states_fixture_loads():
    import os
    here = os.path.join(os.path.dirname(__file__), "data", "module", "mlpbn-0002.states")
    states = opt.updater.loads(open(here, "rb").read())
    assert isinstance(states, dict) and states
    assert all(v is None or isinstance(v, mx.nd.NDArray) for v in states.values())


@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop", "nag", "ftrl", "adagrad"])
def test_own_format_round_trips_with_optimizer(name):
    o = opt.create(name, learning_rate=0.05, wd=0.01, multi_precision=False,
                   lr_scheduler=mx.lr_scheduler.MultiFactorScheduler([2, 4], 0.5))
    upd = opt.get_updater(o)
    w = mx.nd.array(np.arange(6).reshape(2, 3))
    for k in range(3):
        upd(0, mx.nd.ones((2, 3)) * (k + 1), w)
        upd("w1", mx.nd.ones((2, 3)), w)
    blob = upd.get_states(dump_optimizer=True)
    fresh = opt.get_updater(opt.create("sgd"))
    fresh.set_states(blob)
    assert type(fresh.optimizer) is type(o)
    assert fresh.optimizer.num_update == o.num_update
    assert type(fresh.optimizer.lr_scheduler) is mx.lr_scheduler.MultiFactorScheduler
    assert set(fresh.states) == {0, "w1"}

    def flat(s):
        if isinstance(s, mx.nd.NDArray):
            return [s.asnumpy()]
        if isinstance(s, (tuple, list)):
            return [x for v in s for x in flat(v)]
        return [s]
    for k in upd.states:
        a, b = flat(upd.states[k]), flat(fresh.states[k])
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_own_format_keeps_non_finite_and_numpy_values():
    o = opt.create("sgd", learning_rate=0.1)
    o.rescale_grad = np.float32(0.5)
    o.clip_gradient = float("inf")
    upd = opt.get_updater(o)
    upd.states = {0: (None, mx.nd.ones((2,), dtype="float16"))}
    fresh = opt.get_updater(opt.create("sgd"))
    fresh.set_states(upd.get_states(True))
    assert fresh.optimizer.rescale_grad == np.float32(0.5)
    assert type(fresh.optimizer.rescale_grad) is np.float32
    assert fresh.optimizer.clip_gradient == float("inf")
    assert fresh.states[0][0] is None and fresh.states[0][1].dtype == np.float16


def test_own_format_refuses_unknown_classes_and_bad_headers():
    from aiond.optimizer._states import MAGIC
    import json
    import struct

    from aiond.ndarray import io as ndio

    def make(doc):
        h = json.dumps(doc).encode()
        return MAGIC + struct.pack("<Q", len(h)) + h + ndio.dumps([])
    bad = [
        {"$t": [{"$d": []}, {"$o": "optimizer", "cls": "Evil", "state": {"$d": []}}]},
        {"$d": [[0, {"$a": 3}]]},
        {"$d": [[0, {"$x": 1}]]},
        {"$d": [[{"$t": [[]]}, 1]]},
        [1, 2],
        {"$d": [[0, {"$n": "O", "v": 1}]]},
        {"$d": [[0, {"$f": "1e999"}]]},
    ]
    for doc in bad:
        with pytest.raises(MXNetError):
            opt.updater.loads(make(doc))
    with pytest.raises(MXNetError):
        opt.updater.loads(MAGIC + struct.pack("<Q", 1 << 60))
    with pytest.raises(MXNetError):
        opt.updater.loads(MAGIC + b"\x05\x00\x00\x00\x00\x00\x00\x00[[[[[" + ndio.dumps([]))
    with pytest.raises(MXNetError):
        opt.updater.loads(b"")
    with pytest.raises(MXNetError):
        opt.updater.loads(b"\x80\x04" + b"[" * 100000)
