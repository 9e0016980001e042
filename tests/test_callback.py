"""mx.callback: the log lines below were printed by MXNet 1.9.1's callbacks
driven the same way (same fake clock)."""
import collections
import logging
import sys
import time
import types

import pytest

import aiond as mx
import aiond.callback  # noqa: F401  (until aiond/__init__ imports it)
import aiond.metric  # noqa: F401

callback = aiond.callback
metric = aiond.metric

# aiond.model (another engineer's) defines the real one; same fields as MXNet's
BatchEndParam = collections.namedtuple('BatchEndParams',
                                       ['epoch', 'nbatch', 'eval_metric', 'locals'])

LAB = [mx.nd.array([0, 1])]
PRED = [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])]


@pytest.fixture
def clock(monkeypatch):
    t = [100.0]
    monkeypatch.setattr(time, "time", lambda: t[0])
    return t


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO)

    def get():
        out = [r.getMessage() for r in caplog.records]
        caplog.clear()
        return out
    return get


def test_speedometer_auto_reset(clock, logs):
    m = metric.create(['acc', 'mse'])
    s = callback.Speedometer(batch_size=4, frequent=2)
    for ep in range(2):
        for nb in range(5):
            m.update(LAB, PRED)
            clock[0] += 0.5
            s(BatchEndParam(ep, nb, m, None))
    line = 'Epoch[%d] Batch [%d-%d]\tSpeed: 8.00 samples/sec\taccuracy=1.000000\tmse=0.375000'
    assert logs() == [line % (0, 0, 2), line % (0, 2, 4), line % (1, 0, 2), line % (1, 2, 4)]
    # auto_reset reset the local part only
    assert m.get_metric(0).num_inst == 0 and m.get_metric(0).global_num_inst == 20


def test_speedometer_no_auto_reset_and_no_metric(clock, logs):
    m = metric.create(['acc', 'mse'])
    s2 = callback.Speedometer(batch_size=4, frequent=2, auto_reset=False)
    for nb in range(5):
        clock[0] += 0.25
        s2(BatchEndParam(0, nb, m, None))
    assert logs() == [
        'Epoch[0] Batch [0-2]\tSpeed: 16.00 samples/sec\taccuracy=nan\tmse=nan',
        'Epoch[0] Batch [0-4]\tSpeed: 16.00 samples/sec\taccuracy=nan\tmse=nan']
    s3 = callback.Speedometer(3, 1)
    for nb in range(3):
        clock[0] += 1
        s3(BatchEndParam(1, nb, None, None))
    assert logs() == ['Iter[1] Batch [1]\tSpeed: 3.00 samples/sec',
                      'Iter[1] Batch [2]\tSpeed: 3.00 samples/sec']
    s4 = callback.Speedometer(3, 1)  # no time passed: inf, not ZeroDivisionError
    s4(BatchEndParam(0, 0, None, None))
    s4(BatchEndParam(0, 1, None, None))
    assert logs() == ['Iter[0] Batch [1]\tSpeed: inf samples/sec']


def test_speedometer_real_clock(logs):
    s = callback.Speedometer(batch_size=8, frequent=1)
    m = metric.Accuracy()
    m.update(LAB, PRED)
    s(BatchEndParam(0, 0, m, None))
    time.sleep(0.01)
    s(BatchEndParam(0, 1, m, None))
    (line,) = logs()
    assert line.startswith('Epoch[0] Batch [0-1]\tSpeed: ')
    assert line.endswith(' samples/sec\taccuracy=1.000000')


def test_log_train_metric(logs):
    cb = callback.log_train_metric(2, auto_reset=True)
    m2 = metric.Accuracy()
    m2.update(LAB, PRED)
    for nb in range(4):
        cb(BatchEndParam(3, nb, m2, None))
    assert logs() == ['Iter[3] Batch[0] Train-accuracy=1.000000',
                      'Iter[3] Batch[2] Train-accuracy=nan']
    cb = callback.log_train_metric(1)
    cb(BatchEndParam(0, 0, None, None))
    assert logs() == []


def test_progress_bar(logs):
    pb = callback.ProgressBar(total=3, length=10)
    for nb in range(4):
        pb(BatchEndParam(0, nb, None, None))
    assert logs() == ['[----------] 0%\r', '[===-------] 34%\r', '[=======---] 67%\r',
                      '[==========] 100%\r']


def test_log_validation_metrics(logs):
    m = metric.create(['acc', 'mse'])
    v = callback.LogValidationMetricsCallback()
    v(BatchEndParam(2, 0, m, None))
    v(BatchEndParam(2, 0, None, None))
    m3 = metric.Accuracy()
    m3.update(LAB, PRED)
    v(BatchEndParam(1, 0, m3, None))
    assert logs() == ['Epoch[2] Validation-accuracy=nan', 'Epoch[2] Validation-mse=nan',
                      'Epoch[1] Validation-accuracy=1.000000']


def test_do_checkpoint_calls_model_save_checkpoint(monkeypatch):
    # mx.model.save_checkpoint is aiond.checkpoint's (callback.py imports it there)
    calls = []
    fake = types.ModuleType('aiond.checkpoint')
    fake.save_checkpoint = lambda *a: calls.append(a)
    monkeypatch.setitem(sys.modules, 'aiond.checkpoint', fake)
    cb = callback.do_checkpoint('/tmp/prefix', period=2)
    for epoch in range(5):
        cb(epoch, 'sym', {'w': 1}, {'a': 2})
    assert calls == [('/tmp/prefix', 2, 'sym', {'w': 1}, {'a': 2}),
                     ('/tmp/prefix', 4, 'sym', {'w': 1}, {'a': 2})]
    calls.clear()
    cb = callback.do_checkpoint('p', period=0)  # period clamps to 1
    cb(0, None, None, None)
    assert calls == [('p', 1, None, None, None)]


def test_module_checkpoint():
    class Mod:
        def __init__(self):
            self.calls = []

        def save_checkpoint(self, *a):
            self.calls.append(a)

    mod = Mod()
    cb = callback.module_checkpoint(mod, 'pre', period=3, save_optimizer_states=True)
    for epoch in range(7):
        cb(epoch)
    assert mod.calls == [('pre', 3, True), ('pre', 6, True)]
