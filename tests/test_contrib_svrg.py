"""mx.contrib.svrg_optimization: the optimizers' routing, the full gradient
and the SVRG step against numpy, and training with fit."""
import logging

import numpy as np
import pytest

import aiond as mx
from aiond.contrib.svrg_optimization.svrg_module import SVRGModule
from aiond.contrib.svrg_optimization.svrg_optimizer import _AssignmentOptimizer, _SVRGOptimizer


def _linreg(n=40, batch_size=10, seed=0):
    rs = np.random.RandomState(seed)
    x = rs.randint(1, 5, (n, 2)).astype(np.float32)
    y = x.dot(np.array([1.0, 2.0], np.float32))
    di = mx.io.NDArrayIter(x, y, batch_size=batch_size, shuffle=False,
                           label_name='lin_reg_label')
    fc = mx.sym.FullyConnected(mx.sym.var('data'), name='fc1', num_hidden=1)
    lro = mx.sym.LinearRegressionOutput(fc, mx.sym.var('lin_reg_label'), name='lro')
    mod = SVRGModule(lro, data_names=['data'], label_names=['lin_reg_label'], update_freq=2)
    mod.bind(data_shapes=di.provide_data, label_shapes=di.provide_label)
    mod.init_params(initializer=mx.init.Constant(0.5))
    return x, y, di, mod


def _batch_grads(x, y, w, b, batch_size):
    """Per batch: d/dw, d/db of LinearRegressionOutput (sum over the batch of
    (pred - label) * input)."""
    out = []
    for i in range(0, len(x), batch_size):
        xb, yb = x[i:i + batch_size], y[i:i + batch_size]
        r = xb.dot(w) + b - yb
        out.append((r.dot(xb), r.sum()))
    return out


def test_update_freq_is_checked():
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1)
    with pytest.raises(TypeError, match="update_freq"):
        SVRGModule(net, label_names=None)
    with pytest.raises(ValueError, match="positive"):
        SVRGModule(net, label_names=None, update_freq=0)


def test_full_gradient_and_svrg_step_match_numpy():
    x, y, di, mod = _linreg()
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.01),))
    assert isinstance(mod._optimizer, _SVRGOptimizer)
    arg, _ = mod.get_params()
    w, b = arg['fc1_weight'].asnumpy()[0], arg['fc1_bias'].asnumpy()[0]
    assert w.tolist() == [0.5, 0.5]       # the bias is initialized as a bias: 0
    grads = _batch_grads(x, y, w, b, 10)
    full_w = np.mean([g[0] for g in grads], axis=0)
    full_b = np.mean([g[1] for g in grads])
    mod.update_full_grads(di)
    np.testing.assert_allclose(mod._param_dict[0]['fc1_weight'].asnumpy(), [full_w], rtol=1e-5)
    np.testing.assert_allclose(mod._param_dict[0]['fc1_bias'].asnumpy(), [full_b], rtol=1e-5)
    # a second snapshot at the same weights gives the same full gradient
    mod.update_full_grads(di)
    np.testing.assert_allclose(mod._param_dict[0]['fc1_weight'].asnumpy(), [full_w], rtol=1e-5)

    # one step on the first batch: the weights are the snapshot's, so the SVRG
    # gradient is the full gradient; SGD rescales it by 1/batch_size
    di.reset()
    batch = next(iter(di))
    mod.forward_backward(batch)
    mod.update()
    w1 = w - 0.01 * full_w / 10
    b1 = b - 0.01 * full_b / 10
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg['fc1_weight'].asnumpy(), [w1], rtol=1e-5)
    np.testing.assert_allclose(arg['fc1_bias'].asnumpy(), [b1], rtol=1e-5)

    # the next step: g(w1) - g(w_snapshot) + full, on the second batch
    batch = next(iter(di))
    mod.forward_backward(batch)
    mod.update()
    g_now = _batch_grads(x[10:20], y[10:20], w1, b1, 10)[0]
    g_snap = grads[1]
    w2 = w1 - 0.01 * (g_now[0] - g_snap[0] + full_w) / 10
    b2 = b1 - 0.01 * (g_now[1] - g_snap[1] + full_b) / 10
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg['fc1_weight'].asnumpy(), [w2], rtol=1e-5)
    np.testing.assert_allclose(arg['fc1_bias'].asnumpy(), [b2], rtol=1e-5)


def test_fit_matches_mxnet_and_logs(caplog):
    # one snapshot (update_freq past num_epoch): MXNet 1.9.1 ends this run at
    # mse 0.1454257, weight [0.96234214, 1.9300519], bias 0.21579124
    x, y, di, _ = _linreg(n=100, batch_size=10, seed=1)
    fc = mx.sym.FullyConnected(mx.sym.var('data'), name='fc1', num_hidden=1)
    lro = mx.sym.LinearRegressionOutput(fc, mx.sym.var('lin_reg_label'), name='lro')
    logger = logging.getLogger('svrg_test')
    mod = SVRGModule(lro, data_names=['data'], label_names=['lin_reg_label'], update_freq=100,
                     logger=logger)
    metric = mx.metric.create('mse')
    with caplog.at_level(logging.INFO, logger='svrg_test'):
        mod.fit(di, eval_metric=metric, optimizer='sgd', initializer=mx.init.Constant(0.5),
                optimizer_params=(('learning_rate', 0.025),), num_epoch=30)
    np.testing.assert_allclose(metric.get()[1], 0.1454257, rtol=1e-4)
    arg = mod.get_params()[0]
    np.testing.assert_allclose(arg['fc1_weight'].asnumpy(), [[0.96234214, 1.9300519]], rtol=1e-4)
    np.testing.assert_allclose(arg['fc1_bias'].asnumpy(), [0.21579124], rtol=1e-4)
    assert any('Epoch[29] Train-mse=' in r.getMessage() for r in caplog.records)
    assert any('Epoch[29] Time cost=' in r.getMessage() for r in caplog.records)


def test_fit_with_snapshots_converges():
    x, y, di, mod = _linreg(n=100, batch_size=10, seed=1)
    metric = mx.metric.create('mse')
    mod.fit(di, eval_metric=metric, optimizer='sgd', optimizer_params=(('learning_rate', 0.025),),
            num_epoch=30)
    assert metric.get()[1] < 0.01


def test_svrg_optimizer_routes_full_keys_through_kvstore():
    opt = _SVRGOptimizer(default_optimizer='sgd', param_idx2name={0: 'w', 1: 'w_full'},
                         learning_rate=1.0)
    assert isinstance(opt.aux_opt, _AssignmentOptimizer) and opt.default_opt.lr == 1.0
    kv = mx.kv.create('local')
    kv.set_optimizer(opt)
    a, b = mx.nd.array([0, 0, 0]), mx.nd.array([1, 1, 1])
    kv.init(0, a)
    kv.push(0, mx.nd.array([1, 1, 1]))
    kv.pull(0, a)
    kv.init(1, b)
    kv.push(1, mx.nd.array([2, 5, 2]))
    kv.pull(1, b)
    np.testing.assert_array_equal(a.asnumpy(), [-1, -1, -1])     # SGD step
    np.testing.assert_array_equal(b.asnumpy(), [2, 5, 2])        # assigned
    with pytest.raises(KeyError, match="names no parameter"):
        opt.update(7, a, a, None)
