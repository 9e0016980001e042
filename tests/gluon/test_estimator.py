"""gluon.contrib.estimator: the fit/evaluate loop, its handlers' order,
checkpoints, early stopping, log lines and argument errors (MXNet 1.9.1)."""
import logging
import os
import re
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond import gluon, nd
from aiond.gluon import nn
from aiond.gluon.contrib import estimator as est_mod
from aiond.gluon.contrib.estimator import (
    BatchBegin, BatchEnd, BatchProcessor, CheckpointHandler, EarlyStoppingHandler,
    EpochBegin, EpochEnd, Estimator, GradientUpdateHandler, LoggingHandler,
    MetricHandler, StoppingHandler, TrainBegin, TrainEnd, ValidationHandler)

CPU = mx.cpu()


def _blobs(n=64, seed=0):
    """Two well separated 2-D gaussian classes (labels 0/1)."""
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, size=n)
    x = rng.randn(n, 2).astype('float32') * 0.5 + np.where(y[:, None] == 1, 2.0, -2.0)
    return x.astype('float32'), y.astype('float32')


def _loader(x, y, batch_size=16, shuffle=False):
    ds = gluon.data.ArrayDataset(nd.array(x, ctx=CPU), nd.array(y, ctx=CPU))
    return gluon.data.DataLoader(ds, batch_size=batch_size, shuffle=shuffle)


def _classifier(lr=0.5, hybrid=False, ctx=CPU):
    net = nn.HybridSequential() if hybrid else nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(2, in_units=2))
    net.initialize(mx.init.Xavier(), ctx=ctx)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr})
    return net, trainer


def _estimator(lr=0.5, hybrid=False, **kw):
    net, trainer = _classifier(lr, hybrid)
    est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                    context=CPU, **kw)
    return est


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _capture(est):
    cap = _Lines()
    est.logger.addHandler(cap)
    return cap


# ----- training ------------------------------------------------------------
def test_fit_learns_separable_blobs_and_default_metrics():
    x, y = _blobs()
    est = _estimator()
    # SoftmaxCrossEntropyLoss suggests Accuracy; a Loss metric follows it.
    names = [m.name for m in est.train_metrics]
    assert names == ['training accuracy', 'training softmaxcrossentropyloss']
    assert isinstance(est.train_metrics[0], mx.metric.Accuracy)
    assert isinstance(est.train_metrics[1], mx.metric.Loss)
    assert [m.name for m in est.val_metrics] == \
        ['validation accuracy', 'validation softmaxcrossentropyloss']
    assert est.val_metrics[0] is not est.train_metrics[0]

    est.fit(_loader(x, y, shuffle=True), epochs=10)
    assert est.train_metrics[0].get()[1] >= 0.95

    xv, yv = _blobs(40, seed=1)
    est.evaluate(_loader(xv, yv, batch_size=8))
    acc = est.val_metrics[0].get()[1]
    pred = est.net(nd.array(xv, ctx=CPU)).asnumpy().argmax(axis=1)
    assert acc == pytest.approx((pred == yv).mean())
    assert acc >= 0.95
    # The validation loss metric is the mean per-sample loss of the net.
    out = est.net(nd.array(xv, ctx=CPU)).asnumpy()
    logp = out - out.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    want = -logp[np.arange(len(yv)), yv.astype(int)].mean()
    assert est.val_metrics[1].get()[1] == pytest.approx(want, rel=1e-3)


def test_fit_by_batches_stops_mid_epoch():
    x, y = _blobs(64)
    est = _estimator()
    seen = []

    class Count(BatchEnd, EpochEnd):
        def batch_end(self, estimator, *args, **kwargs):
            seen.append('b')

        def epoch_end(self, estimator, *args, **kwargs):
            seen.append('e')

    est.fit(_loader(x, y), batches=6, event_handlers=[Count()])   # 4 batches/epoch
    assert seen == ['b'] * 4 + ['e'] + ['b'] * 2 + ['e']
    assert est.max_batch == 6 and est.max_epoch is None


def test_val_loss_and_val_net_are_used_in_evaluate():
    x, y = _blobs(32)
    net = nn.Sequential(prefix='shared_')
    with net.name_scope():
        net.add(nn.Dense(1, in_units=2))
    val_net = nn.Sequential(prefix='shared_', params=net.collect_params())
    with val_net.name_scope():
        val_net.add(nn.Dense(1, in_units=2))
    net.initialize(ctx=CPU)
    est = Estimator(net, loss=gluon.loss.L2Loss(), val_loss=gluon.loss.L1Loss(),
                    train_metrics=mx.metric.MAE(), val_net=val_net,
                    trainer=gluon.Trainer(net.collect_params(), 'sgd',
                                          {'learning_rate': 0.0}), context=CPU)
    assert est.val_net is val_net and isinstance(est.val_loss, gluon.loss.L1Loss)
    est.evaluate(_loader(x, y[:, None], batch_size=8))
    out = net(nd.array(x, ctx=CPU)).asnumpy()
    assert est.val_metrics[0].name == 'validation mae'
    assert est.val_metrics[0].get()[1] == pytest.approx(
        np.abs(out - y[:, None]).mean(), rel=1e-4)


def test_context_list_splits_batches_and_steps_with_whole_batch():
    x, y = _blobs(32)
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net, trainer = _classifier(lr=0.0, ctx=ctxs)
    steps = []
    orig = trainer.step
    trainer.step = lambda bs, **kw: (steps.append(bs), orig(bs, **kw))
    shapes = []

    class Shapes(BatchEnd):
        def batch_end(self, estimator, *args, **kwargs):
            shapes.append([p.shape for p in kwargs['pred']])

    est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                    context=ctxs)
    est.fit(_loader(x, y, batch_size=8), epochs=1, event_handlers=[Shapes()])
    assert shapes == [[(4, 2), (4, 2)]] * 4
    assert steps == [8] * 4


def test_batch_axis_one():
    x, y = _blobs(32)

    class Cols(gluon.data.Dataset):
        def __getitem__(self, i):
            return nd.array(x[i][:, None], ctx=CPU), nd.array(y[i:i + 1], ctx=CPU)

        def __len__(self):
            return len(y)

    loader = gluon.data.DataLoader(Cols(), batch_size=8,
                                   batchify_fn=lambda s: (nd.concat(*[a for a, _ in s], dim=1),
                                                          nd.concat(*[b for _, b in s], dim=0)))
    got = []

    class Proc(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
            got.append((data[0].shape, batch_axis))
            return super().fit_batch(estimator, (train_batch[0].T, train_batch[1]), 0)

    est = _estimator(batch_processor=Proc())
    est.fit(loader, epochs=1, batch_axis=1)
    assert got == [((2, 8), 1)] * 4 and est.batch_axis == 1


# ----- handler order -------------------------------------------------------
def test_handlers_fire_in_mxnet_order():
    x, y = _blobs(32)
    est = _estimator()
    events = []

    class Rec(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
        def __init__(self, tag, priority):
            self.tag, self.priority = tag, priority

        def train_begin(self, estimator, *args, **kwargs):
            events.append((self.tag, 'train_begin'))

        def train_end(self, estimator, *args, **kwargs):
            events.append((self.tag, 'train_end'))

        def epoch_begin(self, estimator, *args, **kwargs):
            events.append((self.tag, 'epoch_begin'))

        def epoch_end(self, estimator, *args, **kwargs):
            events.append((self.tag, 'epoch_end'))

        def batch_begin(self, estimator, *args, **kwargs):
            events.append((self.tag, 'batch_begin'))

        def batch_end(self, estimator, *args, **kwargs):
            # -1500 runs after the gradient update (-2000), before the
            # metrics (-1000); 0 runs after both.
            events.append((self.tag, 'batch_end', est.train_metrics[0].num_inst))

    est.fit(_loader(x, y, batch_size=16), epochs=2,
            event_handlers=[Rec('late', 0), Rec('early', -1500)])
    per_epoch = [('early', 'epoch_begin'), ('late', 'epoch_begin')]
    for i in range(2):
        per_epoch += [('early', 'batch_begin'), ('late', 'batch_begin'),
                      ('early', 'batch_end', 16 * i), ('late', 'batch_end', 16 * (i + 1))]
    per_epoch += [('early', 'epoch_end'), ('late', 'epoch_end')]
    assert events == ([('early', 'train_begin'), ('late', 'train_begin')] + per_epoch * 2
                      + [('early', 'train_end'), ('late', 'train_end')])


def test_default_handlers_sorted_by_priority():
    x, y = _blobs(16)
    est = _estimator()
    est.max_epoch, est.max_batch = 1, None
    es = EarlyStoppingHandler(monitor=est.val_metrics[0], mode='max')
    handlers = est._prepare_default_handlers(_loader(x, y), [es])
    kinds = [type(h) for h in handlers]
    assert kinds == [GradientUpdateHandler, MetricHandler, ValidationHandler,
                     EarlyStoppingHandler, StoppingHandler, LoggingHandler]
    cats = est._categorize_handlers(handlers)
    assert [len(c) for c in cats] == [4, 2, 1, 5, 4, 2]


def test_validation_handler_periods():
    x, y = _blobs(32)
    est = _estimator()
    calls = []
    vh = ValidationHandler(_loader(x, y), eval_fn=lambda **kw: calls.append(kw['batch_axis']),
                           epoch_period=2, batch_period=3)
    est.fit(_loader(x, y, batch_size=8), epochs=4, event_handlers=[vh])
    # 16 batches: batch-period calls at 3,6,..,15 (5) + epochs 2 and 4 (2)
    assert len(calls) == 7 and set(calls) == {0}


def test_custom_stop_handler_stops_at_batch_end():
    x, y = _blobs(32)
    est = _estimator()

    class StopAt(BatchEnd):
        n = 0

        def batch_end(self, estimator, *args, **kwargs):
            self.n += 1
            return self.n == 3

    h = StopAt()
    est.fit(_loader(x, y, batch_size=8), epochs=5, event_handlers=[h])
    # The batch stop ends the epoch; StoppingHandler ends training at epoch 5.
    assert h.n == 3 + 4 * 4


# ----- checkpoints ---------------------------------------------------------
def _files(d):
    return sorted(os.listdir(d))


def test_checkpoint_epoch_names_best_and_max_checkpoints(tmp_path):
    x, y = _blobs(32)
    est = _estimator()
    acc = est.train_metrics[0]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ck = CheckpointHandler(str(tmp_path), model_prefix='m', monitor=acc, save_best=True,
                               max_checkpoints=2)
    assert ck.monitor_op is np.greater      # 'auto' on accuracy
    est.fit(_loader(x, y, batch_size=8), epochs=3, event_handlers=[ck])
    assert _files(tmp_path) == ['m-best.params', 'm-best.states',
                                'm-epoch1batch8.params', 'm-epoch1batch8.states',
                                'm-epoch2batch12.params', 'm-epoch2batch12.states']
    assert ck.current_epoch == 3 and ck.current_batch == 12
    # the best parameters are the ones of the best-scoring epoch: reloadable
    net2, _ = _classifier()
    net2.load_parameters(str(tmp_path / 'm-best.params'), ctx=CPU)


def test_checkpoint_batch_period_names_and_symbol(tmp_path):
    x, y = _blobs(32)
    est = _estimator(hybrid=True)
    est.net.hybridize()
    ck = CheckpointHandler(str(tmp_path), model_prefix='b', epoch_period=None,
                           batch_period=2, max_checkpoints=2)
    est.fit(_loader(x, y, batch_size=8), batches=10, event_handlers=[ck])
    assert _files(tmp_path) == ['b-epoch1batch7.params', 'b-epoch1batch7.states',
                                'b-epoch2batch9.params', 'b-epoch2batch9.states',
                                'b-symbol.json']
    sym = mx.sym.load(str(tmp_path / 'b-symbol.json'))
    assert any(n.endswith('weight') for n in sym.list_arguments())


def test_checkpoint_resume_continues_numbering_and_loads(tmp_path):
    x, y = _blobs(32)
    est = _estimator()
    ck = CheckpointHandler(str(tmp_path), model_prefix='r', max_checkpoints=1)
    est.fit(_loader(x, y, batch_size=8), epochs=2, event_handlers=[ck])
    assert _files(tmp_path) == ['r-epoch1batch8.params', 'r-epoch1batch8.states']
    saved = {k: v.data().asnumpy().copy() for k, v in est.net.collect_params().items()}

    net2, trainer2 = _classifier()
    est2 = Estimator(net2, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer2,
                     context=CPU)
    loaded = []

    class Peek(TrainBegin):
        priority = 10   # after the checkpoint handler (0) loaded the files

        def train_begin(self, estimator, *args, **kwargs):
            loaded.append({k: v.data().asnumpy().copy()
                           for k, v in estimator.net.collect_params().items()})

    cap = _capture(est2)
    ck2 = CheckpointHandler(str(tmp_path), model_prefix='r', max_checkpoints=1,
                            resume_from_checkpoint=True)
    est2.fit(_loader(x, y, batch_size=8), epochs=5, event_handlers=[ck2, Peek()])
    assert est2.max_epoch == 3
    assert _files(tmp_path) == ['r-epoch4batch20.params', 'r-epoch4batch20.states']
    for (k, v), (k2, v2) in zip(saved.items(), loaded[0].items()):
        np.testing.assert_array_equal(v, v2)
    assert ('CheckpointHandler: Checkpoint resumed from epoch 1 batch 8, continue to '
            'train for 3 epochs ') in cap.lines

    # everything already trained: a clear error instead of training 0 epochs
    ck3 = CheckpointHandler(str(tmp_path), model_prefix='r', resume_from_checkpoint=True)
    with pytest.raises(ValueError, match='maximum number of epoch 5 reached'):
        est2.fit(_loader(x, y, batch_size=8), epochs=5, event_handlers=[ck3])


def test_checkpoint_resume_in_batch_mode(tmp_path):
    x, y = _blobs(32)
    est = _estimator()
    ck = CheckpointHandler(str(tmp_path), model_prefix='q', epoch_period=None, batch_period=3)
    est.fit(_loader(x, y, batch_size=8), batches=6, event_handlers=[ck])
    assert _files(tmp_path) == ['q-epoch0batch2.params', 'q-epoch0batch2.states',
                                'q-epoch1batch5.params', 'q-epoch1batch5.states']
    ck2 = CheckpointHandler(str(tmp_path), model_prefix='q', epoch_period=None,
                            batch_period=3, resume_from_checkpoint=True)
    est.fit(_loader(x, y, batch_size=8), batches=9, event_handlers=[ck2])
    assert est.max_batch == 3
    assert 'q-epoch2batch8.params' in _files(tmp_path)
    # resuming needs the same kind of period as the training run
    ck3 = CheckpointHandler(str(tmp_path), model_prefix='q', resume_from_checkpoint=True)
    with pytest.raises(ValueError, match='same kind of period'):
        est.fit(_loader(x, y, batch_size=8), batches=20, event_handlers=[ck3])


def test_checkpoint_rejects_unparsable_names(tmp_path):
    (tmp_path / 'z-epochXbatch1.params').write_text('')
    x, y = _blobs(16)
    est = _estimator()
    ck = CheckpointHandler(str(tmp_path), model_prefix='z', resume_from_checkpoint=True)
    with pytest.raises(ValueError, match='Error parsing checkpoint file'):
        est.fit(_loader(x, y), epochs=2, event_handlers=[ck])


# ----- early stopping -----------------------------------------------------
def test_early_stopping_on_flat_loss():
    x, y = _blobs(32)
    est = _estimator(lr=0.0)          # nothing learns: the loss stays put
    loss_metric = est.train_metrics[1]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        es = EarlyStoppingHandler(monitor=loss_metric, patience=2)
    assert es.monitor_op is np.less   # 'auto' on a loss
    cap = _capture(est)
    est.fit(_loader(x, y, batch_size=8), epochs=10, event_handlers=[es])
    assert es.current_epoch == 3 and es.stopped_epoch == 2
    assert ('[Epoch 2] EarlyStoppingHandler: early stopping due to training '
            'softmaxcrossentropyloss not improving') in cap.lines


def test_early_stopping_min_delta_and_baseline():
    x, y = _blobs(32)
    est = _estimator(lr=0.5)
    acc = est.train_metrics[0]
    # accuracy cannot exceed the baseline 1.0 by more than 0: stop after patience 1
    es = EarlyStoppingHandler(monitor=acc, mode='max', patience=1, baseline=1.0)
    est.fit(_loader(x, y, batch_size=8), epochs=10, event_handlers=[es])
    assert es.current_epoch == 1 and es.stopped_epoch == 0 and es.stop_training
    # learning keeps improving by more than 0 at first
    es2 = EarlyStoppingHandler(monitor=acc, mode='max', patience=0, min_delta=2.0)
    est.fit(_loader(x, y, batch_size=8), epochs=10, event_handlers=[es2])
    assert es2.current_epoch == 2   # epoch 0 beats -inf, epoch 1 can't gain 2.0


# ----- logging --------------------------------------------------------------
def test_logging_lines_epoch_interval():
    x, y = _blobs(32)
    est = _estimator(lr=0.1)
    cap = _capture(est)
    est.fit(_loader(x, y, batch_size=8), epochs=2)
    lines = cap.lines
    assert lines[0] == 'Training begin: using optimizer SGD with current learning rate 0.1000 '
    assert lines[1] == 'Train for 2 epochs.'
    assert lines[2] == '[Epoch 0] Begin, current learning rate: 0.1000'
    metric_re = r'training accuracy: \d\.\d{4}, training softmaxcrossentropyloss: \d+\.\d{4}'
    assert re.fullmatch(r'\[Epoch 0\] Finished in \d+\.\d{3}s, ' + metric_re, lines[3])
    assert lines[4] == '[Epoch 1] Begin, current learning rate: 0.1000'
    assert re.fullmatch(r'\[Epoch 1\] Finished in \d+\.\d{3}s, ' + metric_re, lines[5])
    assert re.fullmatch(r'Train finished using total \d+s with 2 epochs\. ' + metric_re,
                        lines[6])
    assert len(lines) == 7


def test_logging_lines_batch_interval_and_validation():
    x, y = _blobs(40)
    est = _estimator(lr=0.1)
    cap = _capture(est)
    lh = LoggingHandler(log_interval=2, metrics=est.train_metrics)
    est.fit(_loader(x, y, batch_size=8), val_data=_loader(x, y, batch_size=8), epochs=1,
            event_handlers=[lh])
    batch_lines = [l for l in cap.lines if l.startswith('[Epoch 0][Batch')]
    assert [re.match(r'\[Epoch 0\]\[Batch (\d+)\]\[Samples (\d+)\] time/interval: '
                     r'\d+\.\d{3}s training accuracy', l).groups() for l in batch_lines] == \
        [('0', '8'), ('2', '24'), ('4', '40')]
    assert 'Validation Begin' in cap.lines
    assert any(re.fullmatch(r'\[Epoch 0\] Finished in \d+\.\d{3}s, validation accuracy: '
                            r'\d\.\d{4}, validation softmaxcrossentropyloss: \d+\.\d{4}', l)
               for l in cap.lines)
    assert lh.batch_index == 0 and lh.current_epoch == 1 and lh.processed_samples == 40


def test_batches_mode_logs_train_for_batches():
    x, y = _blobs(32)
    est = _estimator()
    cap = _capture(est)
    est.fit(_loader(x, y, batch_size=8), batches=3)
    assert cap.lines[1] == 'Train for 3 batches.'


# ----- bad arguments -------------------------------------------------------
def test_bad_arguments_give_clear_errors():
    x, y = _blobs(16)
    net, trainer = _classifier()
    ce = gluon.loss.SoftmaxCrossEntropyLoss()
    with pytest.raises(ValueError, match='loss must be a gluon.loss.Loss'):
        Estimator(net, loss='mse', trainer=trainer, context=CPU)
    with pytest.raises(ValueError, match='metrics must be an EvalMetric'):
        Estimator(net, loss=ce, train_metrics='acc', trainer=trainer, context=CPU)
    with pytest.raises(ValueError, match='trainer must be a gluon.Trainer'):
        Estimator(net, loss=ce, trainer='sgd', context=CPU)
    with pytest.raises(ValueError, match='context must be a Context'):
        Estimator(net, loss=ce, trainer=trainer, context='cpu')
    if mx.context.num_gpus() < 8:
        with pytest.raises(AssertionError, match='gpu\\(7\\) is not available'):
            Estimator(net, loss=ce, trainer=trainer, context=[mx.gpu(7)])
    with pytest.raises(ValueError, match='fit_batch\\(\\) and evaluate_batch\\(\\)'):
        Estimator(net, loss=ce, trainer=trainer, context=CPU, batch_processor=object())

    est = Estimator(net, loss=ce, trainer=trainer, context=CPU)
    loader = _loader(x, y)
    with pytest.raises(ValueError, match='DataLoader as train_data, got NDArray'):
        est.fit(nd.array(x), epochs=1)
    with pytest.raises(ValueError, match='DataLoader as val_data'):
        est.evaluate([nd.array(x)])
    steps = []
    est.trainer.step = lambda *a, **k: steps.append(a)
    with pytest.raises(ValueError, match='DataLoader as val_data, got list'):
        est.fit(loader, val_data=[nd.array(x)], epochs=1)
    assert steps == []   # refused before any training
    del est.trainer.step
    with pytest.raises(ValueError, match='exactly one of epochs or batches'):
        est.fit(loader, epochs=1, batches=2)
    with pytest.raises(ValueError, match='exactly one of epochs or batches'):
        est.fit(loader)
    with pytest.raises(ValueError, match='EventHandler or a list of EventHandler'):
        est.fit(loader, epochs=1, event_handlers=[object()])
    with pytest.raises(ValueError, match='outside of the known training and validation'):
        est.fit(loader, epochs=1, event_handlers=[LoggingHandler(metrics=[mx.metric.RMSE()])])
    with pytest.raises(ValueError, match="log_interval must be either a positive integer"):
        LoggingHandler(log_interval='batch')
    with pytest.raises(ValueError, match="log_interval must be either a positive integer"):
        LoggingHandler(log_interval=0)
    with pytest.raises(ValueError, match='as monitor'):
        EarlyStoppingHandler(monitor='accuracy')
    with pytest.raises(ValueError, match='CompositeEvalMetric is not supported'):
        EarlyStoppingHandler(monitor=mx.metric.CompositeEvalMetric([mx.metric.Accuracy()]))
    with pytest.raises(ValueError, match='save best model only'):
        CheckpointHandler('/tmp/unused_ck_dir_h5', save_best=True)
    with pytest.raises(ValueError, match='eval_fn must be callable'):
        ValidationHandler(loader, eval_fn=None)


def test_initializer_warnings_and_default_trainer():
    net = nn.Sequential()
    net.add(nn.Dense(3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        est = Estimator(net, loss=gluon.loss.L2Loss(), context=CPU)
    assert any('No trainer specified' in str(m.message) for m in w)
    assert est.trainer.learning_rate == pytest.approx(0.001)
    assert type(est.trainer.optimizer).__name__ == 'SGD'
    # deferred-initialized by the estimator; a second initializer is refused
    # with a warning once everything is initialized
    net(nd.ones((2, 4), ctx=CPU))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        Estimator(net, loss=gluon.loss.L2Loss(), trainer=est.trainer, context=CPU,
                  initializer=mx.init.Zero())
    assert any('Network already fully initialized' in str(m.message) for m in w)
    assert np.abs(net[0].weight.data().asnumpy()).sum() > 0
    # a L2 loss suggests no metric: just the loss metric
    assert [m.name for m in est.train_metrics] == ['training l2loss']


def test_composite_metrics_are_flattened():
    net, trainer = _classifier()
    comp = mx.metric.CompositeEvalMetric([mx.metric.Accuracy(), mx.metric.TopKAccuracy(2)])
    est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                    train_metrics=comp, context=CPU)
    assert [m.name for m in est.train_metrics] == ['training accuracy',
                                                   'training top_k_accuracy_2']
    assert est_mod.event_handler._check_event_handlers(None) == []


# ----- GPU contexts (CuPy test double: two devices) ----------------------
def test_gpu_default_context_and_two_gpu_fit(fake_gpu):
    x, y = _blobs(32)
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss())
    # several GPUs: gpu(0) only, with a warning naming how to use them all
    assert est.context == [mx.gpu(0)]
    assert any('multiple GPUs' in str(m.message) for m in w)
    assert net[0].weight.list_ctx() == [mx.gpu(0)]

    gpus = [mx.gpu(0), mx.gpu(1)]
    net2 = nn.Sequential()
    net2.add(nn.Dense(2, in_units=2))
    net2.initialize(mx.init.Xavier(), ctx=gpus)
    trainer = gluon.Trainer(net2.collect_params(), 'sgd', {'learning_rate': 0.5})
    est2 = Estimator(net2, loss=gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer,
                     context=gpus)
    ctxs = []

    class Where(BatchEnd):
        def batch_end(self, estimator, *args, **kwargs):
            ctxs.append([p.context for p in kwargs['pred']])

    est2.fit(_loader(x, y, batch_size=8, shuffle=True), epochs=8, event_handlers=[Where()])
    assert ctxs[0] == gpus
    assert est2.train_metrics[0].get()[1] >= 0.9
    with pytest.raises(AssertionError, match='gpu\\(2\\) is not available'):
        Estimator(net2, loss=gluon.loss.L2Loss(), trainer=trainer, context=[mx.gpu(2)])
