"""mx.mod.BucketingModule, SequentialModule, PythonModule/PythonLossModule
(MXNet 1.9.1 semantics): shared parameters across buckets, fit's log lines,
checkpoints, chaining with take_labels/auto_wiring, Python losses, errors."""
import logging
import os

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def _sym_gen(seq_len):
    """A net over sequences of any length whose only parameters (fc) do not
    depend on the length: sum over time, then a 2-way softmax."""
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('softmax_label')
    x = mx.sym.reshape(mx.sym.sum(data, axis=1), shape=(-1, 1))
    fc = mx.sym.FullyConnected(x, num_hidden=2, name='fc')
    return mx.sym.SoftmaxOutput(fc, label, name='softmax'), ('data',), ('softmax_label',)


class _BucketIter(mx.io.DataIter):
    """Batches of 4 sequences, lengths cycling through ``lengths``; label 1
    where the sequence sums to more than 0."""

    def __init__(self, lengths=(10, 5, 7), nbatch=6, seed=0):
        super().__init__(batch_size=4)
        self.lengths, self.nbatch = lengths, nbatch
        self.default_bucket_key = max(lengths)
        self.provide_data = [mx.io.DataDesc('data', (4, self.default_bucket_key))]
        self.provide_label = [mx.io.DataDesc('softmax_label', (4,))]
        rng = np.random.RandomState(seed)
        self.batches = []
        for i in range(nbatch):
            n = lengths[i % len(lengths)]
            d = rng.uniform(-1, 1, (4, n)).astype('f')
            self.batches.append((n, d, (d.sum(1) > 0).astype('f')))
        self.i = 0

    def reset(self):
        self.i = 0

    def next(self):
        if self.i >= self.nbatch:
            raise StopIteration
        n, d, lab = self.batches[self.i]
        self.i += 1
        return mx.io.DataBatch([mx.nd.array(d)], [mx.nd.array(lab)], bucket_key=n,
                               provide_data=[mx.io.DataDesc('data', d.shape)],
                               provide_label=[mx.io.DataDesc('softmax_label', lab.shape)])


def _softmax_grad_step(w, b, batches, lr):
    """numpy SGD on the same net: softmax cross-entropy gradient (p - onehot),
    rescaled by 1/batch_size as Module does."""
    for _, d, lab in batches:
        x = d.sum(1, keepdims=True)
        z = x @ w.T + b
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = p.copy()
        g[np.arange(len(lab)), lab.astype(int)] -= 1
        g /= len(lab)
        w = w - lr * g.T @ x
        b = b - lr * g.sum(0)
    return w, b


def test_bucketing_fit_shares_parameters_and_logs(caplog):
    it = _BucketIter()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=it.default_bucket_key)
    w0 = np.array([[0.3], [-0.2]], 'f')
    b0 = np.array([0.1, -0.1], 'f')
    with caplog.at_level(logging.INFO):
        mod.fit(it, num_epoch=2, optimizer_params={'learning_rate': 0.5},
                arg_params={'fc_weight': mx.nd.array(w0), 'fc_bias': mx.nd.array(b0)},
                batch_end_callback=mx.callback.Speedometer(4, 2))
    assert sorted(mod._buckets) == [5, 7, 10]
    # one set of parameters: every bucket's executor reads the same weight
    weights = [m._exec_group.execs[0].arg_dict['fc_weight'] for m in mod._buckets.values()]
    for w in weights[1:]:
        assert mx.test_utils.same_array(w, weights[0])
    arg, _ = mod.get_params()
    w, b = _softmax_grad_step(w0, b0, it.batches * 2, 0.5)
    np.testing.assert_allclose(arg['fc_weight'].asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arg['fc_bias'].asnumpy(), b, rtol=1e-4, atol=1e-5)
    text = caplog.text
    assert 'Epoch[0] Train-accuracy=' in text and 'Epoch[1] Time cost=' in text
    assert 'Speed: ' in text and 'samples/sec' in text


def test_bucketing_score_predict_switch_bucket():
    it = _BucketIter(lengths=(6, 3), nbatch=4)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=6)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Constant(0.1))
    assert mod.data_names == ['data'] and mod.output_names == ['softmax_output']
    mod.switch_bucket(3, [('data', (4, 3))], [('softmax_label', (4,))])
    assert mod.data_shapes[0].shape == (4, 3)
    assert mod.symbol.list_outputs() == ['softmax_output']
    res = dict(mod.score(it, 'acc'))
    # constant weights: both classes score alike, softmax picks class 0
    expected = np.mean(np.concatenate([lab for _, _, lab in it.batches]) == 0)
    assert res['accuracy'] == pytest.approx(expected)
    # data_names and output_names are known before bind
    assert mx.mod.BucketingModule(_sym_gen, default_bucket_key=4).output_names == \
        ['softmax_output']


def test_bucketing_checkpoint_round_trip(tmp_path):
    it = _BucketIter(lengths=(8, 4), nbatch=4)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=8)
    mod.fit(it, num_epoch=1, optimizer_params={'learning_rate': 0.3})
    prefix = str(tmp_path / 'bm')
    mod.save_checkpoint(prefix, 1)
    assert os.path.exists(prefix + '-0001.params')
    assert os.path.exists(prefix + '-8-symbol.json') and os.path.exists(prefix + '-4-symbol.json')
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=8)
    assert sorted(loaded._buckets) == [4, 8]
    loaded.bind(it.provide_data, it.provide_label, for_training=False)
    a, b = mod.get_params()[0], loaded.get_params()[0]
    for k in a:
        np.testing.assert_array_equal(a[k].asnumpy(), b[k].asnumpy())
    batch = it.batches[1]
    db = mx.io.DataBatch([mx.nd.array(batch[1])], None, bucket_key=batch[0],
                         provide_data=[mx.io.DataDesc('data', batch[1].shape)])
    mod.forward(db, is_train=False)
    loaded.forward(db, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(),
                               mod.get_outputs()[0].asnumpy(), rtol=1e-6)


def test_bucketing_errors():
    with pytest.raises(ValueError, match='default_bucket_key'):
        mx.mod.BucketingModule(_sym_gen)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=5)
    with pytest.raises(MXNetError, match='not bound'):
        mod.forward(mx.io.DataBatch([mx.nd.ones((4, 5))], bucket_key=5))
    mod.bind([('data', (4, 5))], [('softmax_label', (4,))])
    with pytest.raises(MXNetError, match='shared_module'):
        mod.bind([('data', (4, 5))], force_rebind=True, shared_module=mod)
    with pytest.raises(MXNetError, match='no bucket'):
        mx.mod.BucketingModule(_sym_gen, default_bucket_key=5).save_checkpoint('x', 0)


def _two_layer():
    d = mx.sym.Variable('data')
    h = mx.sym.FullyConnected(d, num_hidden=3, name='fc1')
    h = mx.sym.Activation(h, act_type='tanh', name='t1')
    h2 = mx.sym.Variable('h')
    out = mx.sym.FullyConnected(h2, num_hidden=2, name='fc2')
    out = mx.sym.SoftmaxOutput(out, name='softmax')
    return h, out


def test_sequential_module_matches_single_module():
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (8, 4)).astype('f')
    y = (x[:, 0] > 0).astype('f')
    params = {'fc1_weight': rng.uniform(-.5, .5, (3, 4)), 'fc1_bias': np.zeros(3),
              'fc2_weight': rng.uniform(-.5, .5, (2, 3)), 'fc2_bias': np.zeros(2)}
    params = {k: mx.nd.array(v) for k, v in params.items()}

    h, out = _two_layer()
    seq = mx.mod.SequentialModule()
    r = seq.add(mx.mod.Module(h, label_names=None))
    assert r is seq
    seq.add(mx.mod.Module(out, data_names=('h',)), take_labels=True, auto_wiring=True)
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    seq.fit(it, num_epoch=3, arg_params=params, optimizer_params={'learning_rate': 0.5})

    d = mx.sym.Variable('data')
    full = mx.sym.FullyConnected(d, num_hidden=3, name='fc1')
    full = mx.sym.Activation(full, act_type='tanh', name='t1')
    full = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(full, num_hidden=2, name='fc2'),
                                name='softmax')
    single = mx.mod.Module(full)
    it.reset()
    single.fit(it, num_epoch=3, arg_params=params, optimizer_params={'learning_rate': 0.5})
    a, b = seq.get_params()[0], single.get_params()[0]
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_allclose(a[k].asnumpy(), b[k].asnumpy(), rtol=1e-5, atol=1e-6)
    assert seq.data_names == ['data'] and seq.output_names == ['softmax_output']
    assert seq.output_shapes[0][1] == (4, 2)
    assert [d.name for d in seq.label_shapes] == ['softmax_label']


def test_sequential_module_errors():
    seq = mx.mod.SequentialModule()
    with pytest.raises(ValueError, match='Unknown meta "take_label"'):
        seq.add(mx.mod.Module(_two_layer()[0], label_names=None), take_label=True)
    with pytest.raises(MXNetError, match='empty SequentialModule'):
        seq.bind([('data', (2, 4))])
    h, _ = _two_layer()
    seq.add(mx.mod.Module(h, label_names=None, context=mx.cpu()))
    seq.add(mx.mod.Module(h, label_names=None), auto_wiring=True)   # fc1 twice
    seq.bind([('data', (2, 4))], for_training=False)
    with pytest.raises(MXNetError, match='Duplicated parameter names'):
        seq.init_params()


def test_python_loss_module_in_sequential():
    """A PythonLossModule with the softmax-CE gradient trains the same as
    SoftmaxOutput does."""
    rng = np.random.RandomState(2)
    x = rng.uniform(-1, 1, (8, 4)).astype('f')
    y = (x[:, 1] > 0).astype('f')
    w0 = rng.uniform(-.5, .5, (2, 4))
    params = {'fc_weight': mx.nd.array(w0), 'fc_bias': mx.nd.zeros(2)}

    def softmax_ce_grad(scores, labels):
        s = scores.asnumpy()
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
        return p        # a numpy array: the module turns it into an NDArray

    net = mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc')
    loss = mx.mod.PythonLossModule(grad_func=softmax_ce_grad)
    assert loss.output_names == ['pyloss_output'] and loss.get_params() == ({}, {})
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(net, label_names=None))
    seq.add(loss, take_labels=True, auto_wiring=True)
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    seq.fit(it, num_epoch=2, arg_params=params, optimizer_params={'learning_rate': 0.2})

    ref = mx.mod.Module(mx.sym.SoftmaxOutput(net, name='softmax'))
    it.reset()
    ref.fit(it, num_epoch=2, arg_params=params, optimizer_params={'learning_rate': 0.2})
    a, b = seq.get_params()[0], ref.get_params()[0]
    for k in ('fc_weight', 'fc_bias'):
        np.testing.assert_allclose(a[k].asnumpy(), b[k].asnumpy(), rtol=1e-5, atol=1e-6)
    assert loss.output_shapes == [('pyloss_output', (4, 2))]


def test_python_module_errors():
    with pytest.raises(ValueError, match='one data and one label'):
        mx.mod.PythonLossModule(data_names=('a', 'b'))
    with pytest.raises(TypeError, match='callable'):
        mx.mod.PythonLossModule(grad_func=3)
    loss = mx.mod.PythonLossModule()
    with pytest.raises(MXNetError, match='data_names'):
        loss.bind([('x', (2, 3))])
    with pytest.raises(MXNetError, match="grad_req='write'"):
        loss.bind([('data', (2, 3))], grad_req='add')
    loss.bind([('data', (2, 3))], [('softmax_label', (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros(2)]))
    with pytest.raises(NotImplementedError, match='grad_func'):
        loss.backward()
    with pytest.raises(MXNetError, match='out_grads should be None'):
        loss.backward(out_grads=[mx.nd.ones((2, 3))])
    # a PythonModule subclass must say its output shapes
    with pytest.raises(NotImplementedError):
        mx.mod.PythonModule(['data'], None, ['out']).bind([('data', (2, 3))])


def test_module_module_nd_is_ndarray():
    import aiond.module.module as mm
    assert mm.nd is mx.nd


def test_bucketing_two_devices_same_as_one():
    it = _BucketIter(lengths=(6, 4), nbatch=4, seed=5)
    init = {'fc_weight': mx.nd.array([[0.2], [-0.1]]), 'fc_bias': mx.nd.array([0.0, 0.1])}
    got = []
    for ctx in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=6, context=ctx)
        it.reset()
        mod.fit(it, num_epoch=2, arg_params=init, optimizer_params={'learning_rate': 0.4})
        got.append(mod.get_params()[0])
    for k in init:
        np.testing.assert_allclose(got[1][k].asnumpy(), got[0][k].asnumpy(), rtol=1e-5,
                                   atol=1e-6)
