"""mx.mon.Monitor on executors and modules, and mx.executor_manager's
data-parallel group/manager; figures checked against MXNet 1.9.1."""
import logging

import numpy as np
import pytest

import aiond as mx


def _fc_relu_exec():
    x = mx.sym.Variable('x')
    z = mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=2, name='fc'), name='r')
    return z.bind(mx.cpu(), {'x': mx.nd.array([[1., -2.]]),
                             'fc_weight': mx.nd.array([[1., 2.], [3., -4.]]),
                             'fc_bias': mx.nd.array([0.5, -0.5])})


def test_monitor_default_stat_is_rms():
    ex = _fc_relu_exec()
    mon = mx.mon.Monitor(1)
    mon.install(ex)
    mon.tic()
    ex.forward()
    res = mon.toc()
    # MXNet 1.9.1 gives these values (its fc output is named after MKLDNN's fused op)
    assert [k for _, k, _ in res] == ['fc_output', 'r_output', 'x', 'fc_weight', 'fc_bias']
    vals = {k: float(v.strip()) for _, k, v in res}
    fc = np.array([1 - 4 + 0.5, 3 + 8 - 0.5])
    assert vals['fc_output'] == pytest.approx(np.sqrt((fc ** 2).mean()), rel=1e-6)
    assert vals['r_output'] == pytest.approx(np.sqrt((np.maximum(fc, 0) ** 2).mean()), rel=1e-6)
    assert vals['x'] == pytest.approx(1.5811388, rel=1e-6)
    assert vals['fc_weight'] == pytest.approx(2.738613, rel=1e-6)
    assert all(n == 1 for n, _, _ in res)


def test_monitor_interval_pattern_sort_and_print(caplog):
    ex = _fc_relu_exec()
    mon = mx.mon.Monitor(2, pattern='fc.*', sort=True)
    mon.install(ex)
    got = []
    for _ in range(3):
        mon.tic()
        ex.forward()
        got.append(mon.toc())
    assert [k for _, k, _ in got[0]] == ['fc_bias', 'fc_output', 'fc_weight']
    assert got[1] == []                     # not a collected batch
    assert [n for n, _, _ in got[2]] == [3, 3, 3]
    mon.tic()
    ex.forward()
    mon.toc()
    mon.tic()
    ex.forward()
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    assert 'Batch:       5 fc_bias' in caplog.text


def test_monitor_all_sees_inputs_and_custom_stat():
    ex = _fc_relu_exec()
    mon = mx.mon.Monitor(1, stat_func=lambda a: [a.max(), a.min()], pattern='.*',
                         monitor_all=True)
    mon.install(ex)
    mon.tic()
    ex.forward()
    res = mon.toc()
    names = [k for _, k, _ in res]
    assert names[:2] == ['x', 'fc_data'] and 'r_data' in names and 'r_output' in names
    r_out = [v for _, k, v in res if k == 'r_output'][0]
    assert r_out.split('\t')[:2] == ['10.5', '0.0']
    bad = mx.mon.Monitor(1, stat_func=lambda a: 3.0)
    bad.install(ex)
    bad.tic()
    ex.forward()
    with pytest.raises(TypeError, match='stat_func must return'):
        bad.toc()


def test_monitor_on_module_fit(caplog):
    x = np.random.RandomState(0).uniform(-1, 1, (8, 3)).astype('f')
    it = mx.io.NDArrayIter(x, (x[:, 0] > 0).astype('f'), batch_size=4)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2,
                                                     name='fc'), name='softmax')
    mod = mx.mod.Module(net)
    mon = mx.mon.Monitor(1, pattern='fc_weight')
    with caplog.at_level(logging.INFO):
        mod.fit(it, num_epoch=1, monitor=mon)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith('Batch:')]
    assert len(lines) == 2 and all('fc_weight' in ln for ln in lines)


def test_executor_manager_two_devices_matches_numpy():
    from aiond.executor_manager import DataParallelExecutorManager, _split_input_slice
    assert _split_input_slice(10, [1, 1]) == [slice(0, 5), slice(5, 10)]
    assert _split_input_slice(10, [3, 1, 1]) == [slice(0, 6), slice(6, 8), slice(8, 10)]
    with pytest.raises(ValueError, match='Too many slices'):
        _split_input_slice(2, [1, 1, 1])

    rng = np.random.RandomState(3)
    xs = rng.uniform(-1, 1, (6, 3)).astype('f')
    ys = rng.uniform(-1, 1, (6, 2)).astype('f')
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable('data'), num_hidden=2, name='fc'),
        mx.sym.Variable('lro_label'), name='lro')
    it = mx.io.NDArrayIter(xs, ys, batch_size=6, label_name='lro_label')
    args = net.list_arguments()
    params = [a for a in args if a not in ('data', 'lro_label')]
    mgr = DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], it, args, params,
                                      net.list_auxiliary_states(), work_load_list=[2, 1])
    assert mgr.slices == [slice(0, 4), slice(4, 6)]
    w = rng.uniform(-1, 1, (2, 3)).astype('f')
    b = np.array([0.1, -0.2], 'f')
    mgr.set_params({'fc_weight': mx.nd.array(w), 'fc_bias': mx.nd.array(b)}, {})
    batch = next(iter(it))
    mgr.load_data_batch(batch)
    mgr.forward(is_train=True)
    mgr.backward()
    # LinearRegressionOutput: d/dpred = (pred - label) / 2 outputs, per device on its slice
    for dev, sl in enumerate(mgr.slices):
        pred = xs[sl] @ w.T + b
        g = (pred - ys[sl]) / 2
        np.testing.assert_allclose(mgr.grad_arrays[0][dev].asnumpy(), g.T @ xs[sl], rtol=1e-5)
        np.testing.assert_allclose(mgr.grad_arrays[1][dev].asnumpy(), g.sum(0), rtol=1e-5)
    assert mgr.param_arrays[0][1].context == mx.cpu(1)
    metric = mx.metric.MSE()
    mgr.update_metric(metric, batch.label)
    # MXNet's MSE averages the per-update means: one update per device slice
    per_dev = [np.mean((xs[sl] @ w.T + b - ys[sl]) ** 2) for sl in mgr.slices]
    assert metric.get()[1] == pytest.approx(np.mean(per_dev), rel=1e-5)
    out = {'fc_weight': mx.nd.zeros((2, 3)), 'fc_bias': mx.nd.zeros(2)}
    mgr.copy_to(out, {})
    np.testing.assert_allclose(out['fc_weight'].asnumpy(), w, rtol=1e-6)
    mon = mx.mon.Monitor(1)
    mgr.install_monitor(mon)
    assert len(mon.exes) == 2
    with pytest.raises(ValueError, match='work_load_list'):
        DataParallelExecutorManager(net, [mx.cpu(0)], it, args, params, [],
                                    work_load_list=[1, 1])


def test_executor_manager_buckets_share_parameters():
    from aiond.executor_manager import DataParallelExecutorManager

    def sym_gen(n):
        d = mx.sym.Variable('data')
        x = mx.sym.reshape(mx.sym.sum(d, axis=1), shape=(-1, 1))
        return mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(x, num_hidden=1, name='fc'),
                                             name='lro')

    class It(object):
        batch_size = 2
        default_bucket_key = 5
        provide_data = [mx.io.DataDesc('data', (2, 5))]
        provide_label = [mx.io.DataDesc('lro_label', (2, 1))]

    net = sym_gen(5)
    args = net.list_arguments()
    mgr = DataParallelExecutorManager(net, [mx.cpu()], It(), args, ['fc_weight', 'fc_bias'], [],
                                      sym_gen=sym_gen)
    mgr.set_params({'fc_weight': mx.nd.array([[2.]]), 'fc_bias': mx.nd.array([1.])}, {})
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2, 1))], bucket_key=3,
                            provide_data=[mx.io.DataDesc('data', (2, 3))],
                            provide_label=[mx.io.DataDesc('lro_label', (2, 1))])
    mgr.load_data_batch(batch)
    mgr.forward()
    assert sorted(mgr.execgrp_bucket) == [3, 5]
    np.testing.assert_allclose(mgr.curr_execgrp.train_execs[0].outputs[0].asnumpy(),
                               [[7.], [7.]])
    assert mx.test_utils.same_array(mgr.curr_execgrp.param_arrays[0][0],
                                    mgr.execgrp.param_arrays[0][0])
    with pytest.raises(NotImplementedError, match='bucketing'):
        mgr.install_monitor(mx.mon.Monitor(1))


def test_monitor_sees_backward_nodes_like_mxnet():
    """MXNet 1.9.1's list for this net (values of the real gradients match;
    MXNet reports uninitialised memory for inputs that need no gradient,
    aiond zeros)."""
    x = mx.sym.Variable('data')
    x = mx.sym.FullyConnected(name='fc_0', data=x, num_hidden=2)
    x = mx.sym.Activation(name='act_0', data=x, act_type='sigmoid')
    x = mx.sym.LinearRegressionOutput(data=x, name='lro', grad_scale=2)
    mod = mx.mod.Module(x, label_names=['lro_label'])
    mod.bind([('data', (1, 2))], [('lro_label', (1, 2))])
    mon = mx.mon.Monitor(1, pattern='.*')
    mod.install_monitor(mon)
    mod.init_params(arg_params={'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]),
                                'fc_0_bias': mx.nd.array([.35, .35])})
    batch = mx.io.DataBatch([mx.nd.array([[0.05, .10]])], [mx.nd.array([[.01, .99]])])
    mon.tic()
    mod.forward_backward(batch)
    res = mon.toc()
    assert [k for _, k, _ in res] == [
        'fc_0_output', 'act_0_output', 'lro_output', 'lro_backward_output0',
        'lro_backward_output1', 'act_0_backward_output', 'fc_0_backward_output0',
        'fc_0_backward_output1', 'fc_0_backward_output2', 'data', 'fc_0_weight', 'fc_0_bias',
        'lro_label']
    vals = {k: float(v.split('\t')[0]) for _, k, v in res}
    a = 1 / (1 + np.exp(-(np.array([.05, .10]) @ np.array([[.15, .20], [.25, .30]]).T + .35)))
    g_out = 2 * (a - [.01, .99]) / 2            # grad_scale / number of outputs
    g_pre = g_out * a * (1 - a)
    rms = lambda v: np.sqrt(np.mean(np.square(v)))      # noqa: E731
    assert vals['lro_backward_output0'] == pytest.approx(rms(g_out), rel=1e-5)
    assert vals['lro_backward_output1'] == 0.0
    assert vals['fc_0_backward_output2'] == pytest.approx(rms(g_pre), rel=1e-5)
    assert vals['fc_0_backward_output1'] == pytest.approx(
        rms(np.outer(g_pre, [.05, .10])), rel=1e-5)
    # without a monitor, backward reports nothing and gradients are the same
    mod2 = mx.mod.Module(x, label_names=['lro_label'])
    mod2.bind([('data', (1, 2))], [('lro_label', (1, 2))])
    mod2.init_params(arg_params=mod.get_params()[0])
    mod2.forward_backward(batch)
    np.testing.assert_allclose(mod2._exec_group.grad_arrays[0][0].asnumpy(),
                               mod._exec_group.grad_arrays[0][0].asnumpy(), rtol=1e-6)
