"""MXNet 1.9.1's multi-weight optimizer ops (multi_sgd_update & co., their
preloaded_* forms, multi_sum_sq, multi_lars, multi_lamb_update) and their use
by SGD, LAMB and LARS: Trainer.step and Module.update update every parameter
in a handful of engine ops, with MXNet's numbers.

MX_REF and MX_LARS were produced by MXNet 1.9.1 running the code of the tests
below that use them (``mx`` being mxnet 1.9.1): aiond must reproduce them to
the last bit.
"""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

MX_REF = {'lamb_f16': [[-0.011322021484375, 0.666015625, 1.0087890625, 0.853515625, 0.30126953125,
               -0.3564453125],
              [0.87451171875, 1.05859375, 0.67626953125, -0.0394287109375]],
 'lamb_f32': [[-0.011305827647447586, 0.6660211086273193, 1.0084245204925537,
               0.8537683486938477, 0.30149978399276733, -0.3564274311065674],
              [0.8740696310997009, 1.0575703382492065, 0.6767581701278687,
               -0.03938843309879303]],
 'lamb_mp_f16': [[-0.0113067626953125, 0.666015625, 1.0087890625, 0.85400390625, 0.301513671875,
                  -0.3564453125],
                 [0.8740234375, 1.0576171875, 0.6767578125, -0.03936767578125]],
 'mp_sgd_f16': [[-0.1744384765625, 0.8720703125, 1.3046875, 0.818359375, -0.0310821533203125,
                 -0.4482421875],
                [0.90380859375, 1.173828125, 0.6865234375, -0.1270751953125]],
 'mp_sgd_mom_f16': [[-0.33154296875, 0.79345703125, 1.3935546875, 0.9267578125,
                     -0.043792724609375, -0.61865234375],
                    [0.85693359375, 1.1962890625, 0.7685546875, -0.112548828125]],
 'pre_mp_sgd_mom_f16': [[-0.6630859375, 0.9462890625, 1.806640625, 0.9951171875,
                         -0.420654296875, -0.888671875],
                        [0.873046875, 1.400390625, 0.8623046875, -0.2666015625]],
 'pre_sgd_f32': [[-0.10712620615959167, 0.7848219871520996, 1.1779277324676514,
                  0.8343567848205566, 0.09344378858804703, -0.40375077724456787],
                 [0.8777800798416138, 1.1097207069396973, 0.6833139061927795,
                  -0.06147519871592522]],
 'pre_sgd_mom_f16': [[-0.46435546875, 0.8544921875, 1.55859375, 0.95361328125, -0.1947021484375,
                      -0.72705078125],
                     [0.86376953125, 1.27734375, 0.806640625, -0.1744384765625]],
 'sgd_f32': [[-0.11216162145137787, 0.7808994650840759, 1.1688152551651, 0.8216899633407593,
              0.12683650851249695, -0.421623170375824],
             [0.8847628235816956, 1.0943925380706787, 0.6871304512023926,
              -0.054905135184526443]],
 'sgd_mom_f16': [[-0.46435546875, 0.8544921875, 1.55859375, 0.95361328125, -0.1947021484375,
                  -0.72705078125],
                 [0.86376953125, 1.27734375, 0.806640625, -0.1744384765625]],
 'sgd_mom_f32_clip': [[-0.2884161174297333, 0.7277456521987915, 1.3707727193832397,
                       0.9240295886993408, -0.11530563235282898, -0.616965115070343],
                      [0.8490709662437439, 1.2160648107528687, 0.7651722431182861,
                       -0.12496419250965118]],
 'sumsq_float16': [25000.318359375, 0.5853271484375],
 'sumsq_float32': [25000.40625, 0.5854299068450928]}

SH = [(2, 3), (4,)]


def _w0(dt):
    return [np.sin(np.arange(int(np.prod(s))).reshape(s) * 0.7 + i).astype(dt)
            for i, s in enumerate(SH)]


def _grads(step, dt):
    return [(np.cos(np.arange(int(np.prod(s))).reshape(s) * 1.3 + step + i) * 2).astype(dt)
            for i, s in enumerate(SH)]


def _flat(*lists):
    return [x for t in zip(*lists) for x in t]


SGD_REF = {
    'sgd_f32': ('multi_sgd_update', 'float32', False, False, False, dict(rescale_grad=0.5)),
    'sgd_mom_f32_clip': ('multi_sgd_mom_update', 'float32', True, False, False,
                         dict(momentum=0.9, clip_gradient=0.8)),
    'mp_sgd_mom_f16': ('multi_mp_sgd_mom_update', 'float16', True, True, False,
                       dict(momentum=0.9, rescale_grad=0.5)),
    'mp_sgd_f16': ('multi_mp_sgd_update', 'float16', False, True, False,
                   dict(clip_gradient=1.5)),
    'sgd_mom_f16': ('multi_sgd_mom_update', 'float16', True, False, False,
                    dict(momentum=0.9, rescale_grad=0.7)),
    'pre_sgd_mom_f16': ('preloaded_multi_sgd_mom_update', 'float16', True, False, True,
                        dict(momentum=0.9, rescale_grad=0.7)),
    'pre_sgd_f32': ('preloaded_multi_sgd_update', 'float32', False, False, True,
                    dict(rescale_grad=0.7, clip_gradient=0.9)),
    'pre_mp_sgd_mom_f16': ('preloaded_multi_mp_sgd_mom_update', 'float16', True, True, True,
                           dict(momentum=0.9)),
}


def _run_ref(fn, dt, mom, mp, pre, kw):
    """3 steps of ``fn`` on two weights, lrs (0.1, 0.05), wds (0.01, 0)."""
    w = [mx.nd.array(a, dtype=dt) for a in _w0(dt)]
    w32 = [x.astype('float32') for x in w]
    m = [mx.nd.zeros(s, dtype='float32' if mp else dt) for s in SH]
    for step in range(3):
        g = [mx.nd.array(a, dtype=dt) for a in _grads(step, dt)]
        ins = _flat(*([w, g] + ([m] if mom else []) + ([w32] if mp else [])))
        if pre:
            ins += [mx.nd.array([0.1, 0.05]), mx.nd.array([0.01, 0.0])]
        else:
            kw = dict(kw, lrs=[0.1, 0.05], wds=[0.01, 0.0])
        getattr(mx.nd, fn)(*ins, out=w, num_weights=2, **kw)
    return [[float(v) for v in x.asnumpy().ravel()] for x in w]


@pytest.mark.parametrize("key", sorted(SGD_REF))
def test_multi_sgd_ops_match_mxnet(key):
    assert _run_ref(*SGD_REF[key]) == MX_REF[key]


@pytest.mark.parametrize("key,dt,mp", [("lamb_f32", "float32", False),
                                       ("lamb_mp_f16", "float16", True),
                                       ("lamb_f16", "float16", False)])
def test_multi_lamb_update_matches_mxnet(key, dt, mp):
    # 5 steps: at t=4 MXNet's bias correction (pow in double) and powf differ
    w = [mx.nd.array(a, dtype=dt) for a in _w0(dt)]
    w32 = [x.astype('float32') for x in w]
    sdt = 'float32' if mp else dt
    mean = [mx.nd.zeros(s, dtype=sdt) for s in SH]
    var = [mx.nd.zeros(s, dtype=sdt) for s in SH]
    for step in range(5):
        g = [mx.nd.array(a, dtype=dt) for a in _grads(step, dt)]
        kw = dict(step_count=[step + 1] * 2, lrs=[0.01, 0.02], wds=[0.01, 0.0],
                  rescale_grad=0.5, out=w)
        if mp:
            mx.nd.contrib.multi_mp_lamb_update(w, g, mean, var, w32, **kw)
        else:
            mx.nd.contrib.multi_lamb_update(w, g, mean, var, **kw)
    assert [[float(v) for v in x.asnumpy().ravel()] for x in w] == MX_REF[key]


@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_multi_sum_sq_accumulates_sequentially_like_mxnet(dt):
    a = [mx.nd.array(np.sin(np.arange(n) * 0.37), dtype=dt) for n in (50000, 3)]
    out = mx.nd.multi_sum_sq(*a, num_arrays=2)
    assert out.dtype == np.float32 and out.shape == (2,)
    assert [float(v) for v in out.asnumpy()] == MX_REF['sumsq_' + dt]
    # a float32 running sum of the squares (float16 products rounded to float16)
    x = a[1].asnumpy()
    s = np.float32(0)
    for v in x:
        s = np.float32(s + np.float32(v * v))
    assert out.asnumpy()[1] == s


def _np_multi_sgd(w, g, mom, lr, wd, momentum, rescale, clip):
    """MultiSGDKernel in float32, operation by operation."""
    f = np.float32
    lr, wd, momentum, rescale = f(lr), f(wd), f(momentum), f(rescale)
    if clip >= 0:
        t = lr * np.clip(rescale * g, -f(clip), f(clip))
    else:
        t = (lr * rescale) * g
    m = (momentum * mom - (lr * wd) * w) - t
    return w + m, m


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("clip", [-1.0, 0.25])
def test_multi_sgd_update_numpy_reference(momentum, clip):
    r = np.random.RandomState(3)
    shapes = [(5, 4), (7,), (2, 3, 4), (1,), (30,)]
    lrs = [0.1, 0.02, 0.5, 0.3, 0.07]
    wds = [1e-3, 0.0, 0.05, 0.1, 1e-4]
    ws = [r.randn(*s).astype('float32') for s in shapes]
    moms = [r.randn(*s).astype('float32') * 0.1 for s in shapes]
    w = [mx.nd.array(a) for a in ws]
    m = [mx.nd.array(a) for a in moms]
    for step in range(3):
        gs = [r.randn(*s).astype('float32') for s in shapes]
        g = [mx.nd.array(a) for a in gs]
        if momentum:
            mx.nd.multi_sgd_mom_update(*_flat(w, g, m), lrs=lrs, wds=wds, momentum=momentum,
                                       rescale_grad=0.3, clip_gradient=clip,
                                       num_weights=len(shapes), out=w)
        else:
            mx.nd.multi_sgd_update(*_flat(w, g), lrs=lrs, wds=wds, rescale_grad=0.3,
                                   clip_gradient=clip, num_weights=len(shapes), out=w)
        for i in range(len(shapes)):
            mom0 = moms[i] if momentum else np.zeros_like(ws[i])
            ws[i], mom1 = _np_multi_sgd(ws[i], gs[i], mom0, lrs[i], wds[i], momentum, 0.3, clip)
            if momentum:
                moms[i] = mom1
    for i in range(len(shapes)):
        np.testing.assert_array_equal(w[i].asnumpy(), ws[i])
        if momentum:
            np.testing.assert_array_equal(m[i].asnumpy(), moms[i])


def test_mp_update_keeps_float32_master_and_casts():
    w16 = mx.nd.array(np.linspace(-1, 1, 12).reshape(3, 4), dtype='float16')
    w32 = w16.astype('float32')
    g = mx.nd.array(np.full((3, 4), 1e-4), dtype='float16')
    for _ in range(10):     # steps below float16 resolution accumulate in the master copy
        mx.nd.multi_mp_sgd_update(w16, g, w32, lrs=[0.5], wds=[0.0], num_weights=1, out=w16)
    ref = np.linspace(-1, 1, 12).reshape(3, 4).astype('float16').astype('float32')
    gg = np.float32(np.float16(1e-4))
    for _ in range(10):
        ref = ref - np.float32(0.5) * gg
    np.testing.assert_array_equal(w32.asnumpy(), ref)
    np.testing.assert_array_equal(w16.asnumpy(), ref.astype('float16'))


def test_preloaded_equals_tuple_form():
    r = np.random.RandomState(0)
    shapes = [(3, 3), (8,), (2, 5)]
    lrs, wds = [0.1, 0.2, 0.05], [0.01, 0.0, 0.3]
    a = [mx.nd.array(r.randn(*s)) for s in shapes]
    b = [x.copy() for x in a]
    ma = [mx.nd.array(r.randn(*s)) for s in shapes]
    mb = [x.copy() for x in ma]
    g = [mx.nd.array(r.randn(*s)) for s in shapes]
    mx.nd.multi_sgd_mom_update(*_flat(a, g, ma), lrs=lrs, wds=wds, momentum=0.8,
                               num_weights=3, out=a)
    mx.nd.preloaded_multi_sgd_mom_update(*(_flat(b, g, mb) + [mx.nd.array(lrs),
                                                              mx.nd.array(wds)]),
                                         momentum=0.8, num_weights=3, out=b)
    for x, y, p, q in zip(a, b, ma, mb):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy())


def test_out_none_returns_new_arrays_and_updates_states():
    w = [mx.nd.ones((2, 2)), mx.nd.ones((3,))]
    g = [mx.nd.ones((2, 2)), mx.nd.ones((3,))]
    m = [mx.nd.zeros((2, 2)), mx.nd.zeros((3,))]
    res = mx.nd.multi_sgd_mom_update(*_flat(w, g, m), lrs=[0.5, 0.25], wds=[0, 0],
                                     momentum=0.9, num_weights=2)
    assert isinstance(res, list) and len(res) == 2
    np.testing.assert_array_equal(res[0].asnumpy(), np.full((2, 2), 0.5, 'float32'))
    np.testing.assert_array_equal(res[1].asnumpy(), np.full((3,), 0.75, 'float32'))
    np.testing.assert_array_equal(w[0].asnumpy(), np.ones((2, 2)))      # weights untouched
    np.testing.assert_array_equal(m[1].asnumpy(), np.full((3,), -0.25, 'float32'))
    # in place, and later reads see it (the engine orders them after the update)
    mx.nd.multi_sgd_update(*_flat(w, g), lrs=[0.5, 0.25], wds=[0, 0], num_weights=2, out=w)
    assert (w[0] * 2).asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_multi_lars_numpy_reference():
    f = np.float32
    lrs = np.array([0.1, 0.2, 0.3, 0.05, 0.07], 'float32')
    wss = np.array([4.0, 0.0, 9.5, 1e-3, 7.0], 'float32')
    gss = np.array([1.0, 3.0, 0.0, 2e-4, 5.0], 'float32')
    wds = np.array([1e-3, 0.0, 0.1, 0.01, 0.0], 'float32')
    eta, eps, rescale = f(0.001), f(1e-8), f(0.25)
    out = mx.nd.multi_lars(mx.nd.array(lrs), mx.nd.array(wss), mx.nd.array(gss),
                           mx.nd.array(wds), eta=0.001, eps=1e-8, rescale_grad=0.25)
    wn = np.sqrt(wss)
    ref = np.where((wn > 0) & (gss > 0),
                   lrs * eta * wn / (np.sqrt(gss) * rescale + wds * wn + eps), lrs)
    np.testing.assert_array_equal(out.asnumpy(), ref.astype('float32'))
    # out= may be lrs itself (what LARS does)
    lr_nd = mx.nd.array(lrs)
    mx.nd.multi_lars(lr_nd, mx.nd.array(wss), mx.nd.array(gss), mx.nd.array(wds), eta=0.001,
                     eps=1e-8, rescale_grad=0.25, out=lr_nd)
    np.testing.assert_array_equal(lr_nd.asnumpy(), out.asnumpy())


def test_errors():
    w, g = mx.nd.ones((2, 3)), mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match="Number of learning rates is inconsistent"):
        mx.nd.multi_sgd_update(w, g, w, g, lrs=[0.1], wds=[0, 0], num_weights=2)
    with pytest.raises(MXNetError, match="Number of weight decays is inconsistent"):
        mx.nd.multi_sgd_update(w, g, lrs=[0.1], wds=[0, 0], num_weights=1)
    with pytest.raises(MXNetError, match=r"expected 4 inputs \(num_weights=2"):
        mx.nd.multi_sgd_update(w, g, w, lrs=[0.1, 0.1], wds=[0, 0], num_weights=2)
    with pytest.raises(MXNetError, match="num_weights=0 must be at least 1"):
        mx.nd.multi_sgd_update(lrs=[], wds=[], num_weights=0)
    with pytest.raises(ValueError, match=r"grad_1 has shape \(3,\) but weight_1 has \(2, 3\)"):
        mx.nd.multi_sgd_update(w, g, w, mx.nd.ones((3,)), lrs=[1, 1], wds=[0, 0],
                               num_weights=2)
    with pytest.raises(ValueError, match="mom_0 has shape"):
        mx.nd.multi_sgd_mom_update(w, g, mx.nd.ones((3, 2)), lrs=[1], wds=[0], num_weights=1)
    with pytest.raises(MXNetError, match="weight32_0 has dtype float16"):
        mx.nd.multi_mp_sgd_update(w.astype('float16'), g.astype('float16'),
                                  w.astype('float16'), lrs=[1], wds=[0], num_weights=1)
    with pytest.raises(MXNetError, match="grad_0 has dtype float16 but weight_0 has float32"):
        mx.nd.multi_sgd_update(w, g.astype('float16'), lrs=[1], wds=[0], num_weights=1)
    with pytest.raises(MXNetError, match="Expected number of learning rates: 1, and got 2"):
        mx.nd.preloaded_multi_sgd_update(w, g, mx.nd.ones((2,)), mx.nd.ones((1,)),
                                         num_weights=1)
    with pytest.raises(MXNetError, match="must be float32"):
        mx.nd.preloaded_multi_sgd_update(w, g, mx.nd.ones((1,), dtype='float64'),
                                         mx.nd.ones((1,)), num_weights=1)
    with pytest.raises(MXNetError, match="got 1 arrays but num_arrays=2"):
        mx.nd.multi_sum_sq(w, num_arrays=2)
    with pytest.raises(MXNetError, match="MultiLARS only support float"):
        x = mx.nd.ones((3,), dtype='float64')
        mx.nd.multi_lars(x, x, x, x, eta=1, eps=0)
    many = [mx.nd.ones((1,)) for _ in range(46)]
    with pytest.raises(MXNetError, match="maximum value is 45, and got 46"):
        mx.nd.contrib.multi_lamb_update(many, many, many, many, step_count=[1] * 46,
                                        lrs=[0.1] * 46, wds=[0] * 46)
    with pytest.raises(MXNetError, match="Number of step counts is inconsistent"):
        mx.nd.contrib.multi_lamb_update([w], [g], [w.copy()], [w.copy()], step_count=[1, 2],
                                        lrs=[0.1], wds=[0])


def test_names_in_every_namespace():
    for name in ("multi_sgd_update", "multi_sgd_mom_update", "multi_mp_sgd_update",
                 "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update",
                 "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
                 "preloaded_multi_mp_sgd_mom_update", "multi_sum_sq", "multi_lars"):
        assert callable(getattr(mx.nd, name)) and callable(getattr(mx.sym, name))
    assert callable(mx.nd._internal._multi_lamb_update)
    assert callable(mx.nd._internal._multi_mp_lamb_update)
    s = mx.sym.multi_sgd_update(mx.sym.var('w'), mx.sym.var('g'), lrs=[0.1], wds=[0.0],
                                num_weights=1)
    ex = s.bind(mx.cpu(), {'w': mx.nd.ones((2,)), 'g': mx.nd.ones((2,))})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), [0.9, 0.9], rtol=1e-7)


# ------------------------------------------------------ optimizers and Trainer

def _net(prefix):
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        for units in (64, 32, 32, 16, 16, 8, 8, 4, 4, 2):    # 20 parameters
            net.add(mx.gluon.nn.Dense(units))
    net.initialize(mx.init.Xavier(), force_reinit=True)
    net(mx.nd.ones((4, 10)))
    r = np.random.RandomState(5)
    for _, p in sorted(net.collect_params().items()):
        p.set_data(mx.nd.array(r.randn(*p.shape).astype('float32') * 0.3))
    return net


def _train(monkeypatch, size, optimizer, kw, steps=3, count_step=None):
    if size is None:
        monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    else:
        monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", str(size))
    net = _net("n%s_" % size)
    tr = mx.gluon.Trainer(net.collect_params(), optimizer, kw)
    x = mx.nd.array(np.random.RandomState(3).randn(4, 10))
    n_ops = None
    for step in range(steps):
        with mx.autograd.record():
            loss = (net(x) ** 2).mean()
        loss.backward()
        mx.nd.waitall()
        s = mx.engine.statistics()
        before = s.ops_pushed + s.ops_inline     # ops that ran at push count as inline
        tr.step(4)
        s = mx.engine.statistics()
        if step == count_step:
            n_ops = s.ops_pushed + s.ops_inline - before
    params = [p.data().asnumpy() for _, p in sorted(net.collect_params().items())]
    return params, n_ops


SGD_KW = {'learning_rate': 0.01, 'momentum': 0.9, 'wd': 1e-3}


@pytest.mark.parametrize("size,expect", [(None, 1), (4, 5), (1, 20)])
def test_trainer_step_pushes_one_op_per_group(monkeypatch, size, expect):
    # the second step: the momenta exist, only the update is pushed. Bulk
    # segments (which would gather the groups into one engine op) are off
    # here, so that the count is the number of update ops.
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", "0")
    mx.engine.reset_bulk_env()
    try:
        _, n_ops = _train(monkeypatch, size, 'sgd', SGD_KW, steps=2, count_step=1)
    finally:
        monkeypatch.delenv("MXNET_EXEC_BULK_EXEC_TRAIN")
        mx.engine.reset_bulk_env()
    assert n_ops == expect


def test_trainer_step_groups_are_one_bulk_segment(monkeypatch):
    _, n_ops = _train(monkeypatch, 1, 'sgd', SGD_KW, steps=2, count_step=1)
    assert n_ops == 2       # 20 update ops, as segments of at most 15


@pytest.mark.parametrize("optimizer,kw", [
    ('sgd', SGD_KW), ('sgd', {'learning_rate': 0.05, 'wd': 1e-2, 'clip_gradient': 0.5}),
    ('lamb', {'learning_rate': 0.01, 'wd': 1e-2})])
def test_trainer_values_do_not_depend_on_grouping(monkeypatch, optimizer, kw):
    # (LAMB with groups of 1 runs lamb_update_phase1/2 and norm(), in MXNet too)
    ref, _ = _train(monkeypatch, 1 if optimizer == 'sgd' else 2, optimizer, kw)
    assert all(np.isfinite(a).all() for a in ref)
    for size in (None, 3, 4):
        got, _ = _train(monkeypatch, size, optimizer, kw)
        for a, b in zip(ref, got):
            np.testing.assert_array_equal(a, b)


def test_lamb_groups_of_aggregation_size(monkeypatch):
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", "0")     # count ops, not segments
    mx.engine.reset_bulk_env()
    monkeypatch.setattr(mx.engine, "_BULK_ENV", {})
    _, n45 = _train(monkeypatch, None, 'lamb', {'learning_rate': 0.01}, steps=2, count_step=1)
    _, n6 = _train(monkeypatch, 6, 'lamb', {'learning_rate': 0.01}, steps=2, count_step=1)
    assert (n45, n6) == (1, 4)


def test_fused_groups_keep_mxnet_learning_rates_with_a_scheduler(monkeypatch):
    # per-group update counts drive the scheduler exactly as MXNet's loop does
    def run(size):
        if size is None:
            monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
        else:
            monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", str(size))
        o = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.5,
                                lr_scheduler=mx.lr_scheduler.FactorScheduler(1, 0.5))
        upd = mx.optimizer.get_updater(o)
        ws = [mx.nd.ones((3,)) * (i + 1) for i in range(9)]
        for step in range(3):
            idx = list(range(9)) if step != 1 else list(range(5))    # uneven counts
            upd(idx, [mx.nd.ones((3,)) for _ in idx], [ws[i] for i in idx])
        return [w.asnumpy() for w in ws], o.num_update
    ref, n_ref = run(4)
    got, n_got = run(None)
    assert n_ref == n_got
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)


def test_sparse_gradients_keep_the_per_weight_path():
    w_dense = [mx.nd.ones((4, 2)) for _ in range(3)]
    w_single = [w.copy() for w in w_dense]
    rows = mx.nd.sparse.row_sparse_array((np.ones((1, 2), 'float32'), [2]), shape=(4, 2))
    grads = [mx.nd.ones((4, 2)), rows, mx.nd.ones((4, 2))]
    o1 = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9, wd=0.1)
    o2 = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9, wd=0.1)
    u1, u2 = mx.optimizer.get_updater(o1), mx.optimizer.get_updater(o2)
    for _ in range(2):
        u1([0, 1, 2], grads, w_dense)
        for i in range(3):
            u2(i, grads[i], w_single[i])
    for a, b in zip(w_dense, w_single):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    # lazy update: rows without gradient keep their weight
    assert w_dense[1].asnumpy()[0].tolist() == [1.0, 1.0]


def test_subclass_overriding_update_is_called_per_group():
    calls = []

    class MySGD(mx.optimizer.SGD):
        def update_multi_precision(self, index, weight, grad, state):
            calls.append(len(index))
            super().update_multi_precision(index, weight, grad, state)

    upd = mx.optimizer.get_updater(MySGD(learning_rate=0.1))
    ws = [mx.nd.ones((2,)) for _ in range(6)]
    upd(list(range(6)), [mx.nd.ones((2,)) for _ in range(6)], ws)
    assert calls == [4, 2]
    assert ws[5].asnumpy().tolist() == pytest.approx([0.9, 0.9])


def test_module_update_uses_multi_ops(monkeypatch):
    monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    data = mx.sym.var('data')
    net = data
    for i, units in enumerate((16, 8, 8, 4, 2)):
        net = mx.sym.FullyConnected(net, num_hidden=units, name='fc%d' % i)
    net = mx.sym.LinearRegressionOutput(net, name='out')
    mod = mx.mod.Module(net, data_names=['data'], label_names=['out_label'])
    mod.bind(data_shapes=[('data', (4, 10))], label_shapes=[('out_label', (4, 2))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params=SGD_KW)
    batch = mx.io.DataBatch([mx.nd.ones((4, 10))], [mx.nd.ones((4, 2))])
    for step in range(2):
        mod.forward_backward(batch)
        mx.nd.waitall()
        s = mx.engine.statistics()
        before = s.ops_pushed + s.ops_inline
        mod.update()
        s = mx.engine.statistics()
    assert s.ops_pushed + s.ops_inline - before == 1      # 10 parameters, one op


# ------------------------------------------------------------------------- LARS

MX_LARS = {'clip_eps': [[-0.002351240022107959, 0.8427743911743164, 0.9132747650146484,
               0.1447671502828598, -0.7562446594238281, -0.9618829488754272],
              [0.9713465571403503, 1.2123243808746338, 0.3879736661911011],
              [0.9132600426673889, 0.1438659131526947, -0.757350504398346, -0.9623562693595886,
               -0.2831402122974396, 0.6557860970497131],
              [0.3451160788536072, -0.8150113224983215]],
 'mom': [[-0.0034126436803489923, 0.8414092063903809, 0.91263347864151, 0.1453295797109604,
          -0.7549051642417908, -0.9607752561569214],
         [0.9364066123962402, 1.9433574676513672, 1.331748604774475],
         [0.9128047823905945, 0.1446598768234253, -0.7559089660644531, -0.9613535404205322,
          -0.28332939743995667, 0.6545498967170715],
         [1.2334620952606201, -0.5511751174926758]],
 'mp': [[-0.0034122467041015625, 0.84130859375, 0.91259765625, 0.145263671875, -0.7548828125,
         -0.9609375],
        [0.93603515625, 1.943359375, 1.33203125],
        [0.91259765625, 0.1446533203125, -0.755859375, -0.96142578125, -0.283203125,
         0.65478515625],
        [1.2333984375, -0.55126953125]],
 'sched': [[-0.0001967480784514919, 0.8414182662963867, 0.909428596496582, 0.1413358747959137,
            -0.7566653490066528, -0.9589695930480957],
           [0.7383774518966675, 1.3351964950561523, 0.7736997604370117],
           [0.9094460010528564, 0.14131350815296173, -0.7567105293273926, -0.9590034484863281,
            -0.279605895280838, 0.6568290591239929],
           [0.7528015971183777, -0.5070488452911377]],
 'sparse': [[-0.0034126434475183487, 0.8414092063903809, 0.91263347864151, 0.1453295797109604,
             -0.7549051642417908, -0.9607752561569214],
            [0.9364066123962402, 1.9433574676513672, 1.331748604774475],
            [0.9128047823905945, 0.1446598768234253, -0.7559089660644531, -0.9613535404205322,
             -0.28332939743995667, 0.6545498967170715],
            [1.2334620952606201, -0.5511751174926758]]}

LSH = [(3, 2), (3,), (2, 3), (2,)]
LARS_CASES = {
    'mom': (dict(learning_rate=0.1, momentum=0.9, wd=1e-3, eta=0.01), 'float32', False),
    'clip_eps': (dict(learning_rate=0.1, wd=1e-2, eta=0.02, eps=1e-3, clip_gradient=2.0,
                      rescale_grad=0.5), 'float32', False),
    'sched': (dict(momentum=0.9, wd=1e-3,
                   lr_scheduler=mx.lr_scheduler.FactorScheduler(1, 0.5, base_lr=0.1)),
              'float32', False),
    'mp': (dict(learning_rate=0.1, momentum=0.9, wd=1e-3, eta=0.01, multi_precision=True),
           'float16', False),
    'sparse': (dict(learning_rate=0.1, momentum=0.9, wd=1e-3, eta=0.01), 'float32', True),
}


def _run_lars(kw, dt, sparse):
    """3 updater steps on 4 weights (the bias and gamma keep the plain lr);
    ``sparse``: the first gradient row_sparse (the per-weight path)."""
    names = {0: 'l0_weight', 1: 'l0_bias', 2: 'l1_weight', 3: 'l1_gamma'}
    o = mx.optimizer.create('lars', param_idx2name=names, **kw)
    u = mx.optimizer.get_updater(o)
    w = [mx.nd.array(np.sin(np.arange(int(np.prod(s))).reshape(s) + i), dtype=dt)
         for i, s in enumerate(LSH)]
    for step in range(3):
        g = [mx.nd.array(np.cos(np.arange(int(np.prod(s))).reshape(s) * 0.9 + step + i) * 3,
                         dtype=dt) for i, s in enumerate(LSH)]
        if sparse:
            g[0] = g[0].tostype('row_sparse')
        u(list(range(4)), g, w)
    return [[float(v) for v in x.asnumpy().ravel()] for x in w]


@pytest.mark.parametrize("key", sorted(LARS_CASES))
def test_lars_matches_mxnet(key):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the lr scheduler's / float16 notes
        kw, dt, sparse = LARS_CASES[key]
        kw = dict(kw)
        if 'lr_scheduler' in kw:                # a fresh scheduler per run
            kw['lr_scheduler'] = mx.lr_scheduler.FactorScheduler(1, 0.5, base_lr=0.1)
        assert _run_lars(kw, dt, sparse) == MX_LARS[key]


def test_lars_dense_group_runs_on_the_device(monkeypatch):
    monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    from aiond.ndarray import _invoke
    names = []
    real = _invoke._push

    def counting(call, *args, **kwargs):
        names.append(args[2])
        return real(call, *args, **kwargs)

    o = mx.optimizer.create('lars', learning_rate=0.1, momentum=0.9,
                            param_idx2name={0: 'a_weight', 1: 'a_bias'})
    u = mx.optimizer.get_updater(o)
    w = [mx.nd.ones((3, 2)), mx.nd.ones((2,))]
    u([0, 1], [mx.nd.ones((3, 2)), mx.nd.ones((2,))], w)
    monkeypatch.setattr(_invoke, "_push", counting)
    u([0, 1], [mx.nd.ones((3, 2)), mx.nd.ones((2,))], w)
    monkeypatch.setattr(_invoke, "_push", real)
    for op in ("multi_sum_sq", "multi_lars", "preloaded_multi_sgd_mom_update"):
        assert op in names, names
    assert names.count("multi_sum_sq") == 2 and names.count("preloaded_multi_sgd_mom_update") == 1


@pytest.mark.parametrize("name,kw", [
    ('lamb', {'learning_rate': 0.01, 'wd': 0.01}),
    ('lamb', {'learning_rate': 0.01, 'lower_bound': 0.5, 'upper_bound': 2.0}),
    ('lars', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.001})])
def test_lamb_and_lars_norms_stay_on_the_device(fake_gpu, monkeypatch, name, kw):
    # their sums of squares and trust ratios are 0-d device arrays: the same
    # numbers as on the CPU, and no host synchronization in the update
    monkeypatch.delenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", raising=False)
    rs = np.random.RandomState(3)
    w0 = [rs.uniform(-1, 1, s).astype(np.float32) for s in ((4, 3), (3,), (2, 2))]
    w0.append(np.zeros((2,), np.float32))              # a zero norm: ratio 1
    gs = [[rs.uniform(-1, 1, w.shape).astype(np.float32) for w in w0] for _ in range(3)]
    res = {}
    for ctx in (mx.cpu(), mx.gpu(0)):
        o = mx.optimizer.create(name, param_idx2name={i: "p%d_weight" % i for i in range(4)},
                                **kw)
        u = mx.optimizer.get_updater(o)
        ws = [mx.nd.array(w, ctx=ctx) for w in w0]
        for step in gs:
            if ctx != mx.cpu():
                before = fake_gpu.syncs
            u(list(range(4)), [mx.nd.array(g, ctx=ctx) for g in step], ws)
            if ctx != mx.cpu():
                assert fake_gpu.syncs == before, fake_gpu.sync_where[before:]
        res[str(ctx)] = [w.asnumpy() for w in ws]
    for a, b in zip(res["cpu(0)"], res["gpu(0)"]):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    sums = mx.nd.multi_sum_sq(*[mx.nd.array(w, ctx=mx.gpu(0)) for w in w0], num_arrays=4)
    assert sums.context == mx.gpu(0)
    np.testing.assert_allclose(sums.asnumpy(), [float((w * w).sum()) for w in w0], rtol=1e-6)
