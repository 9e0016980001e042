"""BatchNorm with fix_gamma=True writes ones into gamma when it writes its
mean/var outputs, as MXNet 1.9.1 does: always when called on NDArrays; as a
node of a graph (SymbolBlock, hybridized block, bound executor) only in
training, so SymbolBlock.initialize() keeps the gamma its initializer drew
while the block predicts. (Each case checked against MXNet 1.9.1.)"""
import numpy as np

import aiond as mx
from aiond import autograd, gluon


def _symbolblock(hybridize=False):
    data = mx.sym.var("data")
    y = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=4, name="fc"), name="bn")
    blk = gluon.SymbolBlock(y, [data])
    blk.initialize(mx.init.Uniform(0.5))
    if hybridize:
        blk.hybridize()
    return blk


def test_symbolblock_draws_gamma_and_prediction_keeps_it():
    for hybridize in (False, True):
        blk = _symbolblock(hybridize)
        x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 3)))
        out = blk(x).asnumpy()
        p = {k: v.data().asnumpy() for k, v in blk.collect_params().items()}
        gamma = p["bn_gamma"]
        assert np.all(np.abs(gamma) <= 0.5) and len(set(gamma.tolist())) == 4   # drawn, kept
        h = x.asnumpy() @ p["fc_weight"].T + p["fc_bias"]
        with np.errstate(invalid="ignore"):     # Uniform(0.5) draws negative variances too
            want = (h - p["bn_moving_mean"]) / np.sqrt(p["bn_moving_var"] + 1e-3) \
                + p["bn_beta"]
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)    # used as gamma = 1


def test_training_a_symbolblock_writes_ones_into_gamma():
    for hybridize in (False, True):
        blk = _symbolblock(hybridize)
        with autograd.record():
            blk(mx.nd.array([[1, 2, 3], [4, 5, 6]])).wait_to_read()
        np.testing.assert_array_equal(blk.collect_params()["bn_gamma"].data().asnumpy(),
                                      np.ones(4, np.float32))


def test_gluon_batchnorm_without_scale():
    g = [0.5, 2.0, 3.0]
    hyb = gluon.nn.HybridSequential()
    hyb.add(gluon.nn.BatchNorm(scale=False, in_channels=3))
    hyb.initialize()
    hyb.hybridize()
    hyb[0].gamma.set_data(mx.nd.array(g))
    hyb(mx.nd.ones((2, 3))).wait_to_read()
    np.testing.assert_array_equal(hyb[0].gamma.data().asnumpy(), g)     # MXNet: kept
    imp = gluon.nn.BatchNorm(scale=False, in_channels=3)
    imp.initialize()
    imp.gamma.set_data(mx.nd.array(g))
    imp(mx.nd.ones((2, 3))).wait_to_read()
    np.testing.assert_array_equal(imp.gamma.data().asnumpy(), [1, 1, 1])  # MXNet: ones


def test_a_bound_executor_predicting_keeps_gamma():
    y = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    ex = y.simple_bind(mx.cpu(), data=(2, 3), grad_req="null")
    ex.arg_dict["bn_gamma"][:] = mx.nd.array([0.5, 2.0, 3.0])
    ex.forward(is_train=False, data=mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(ex.arg_dict["bn_gamma"].asnumpy(), [0.5, 2.0, 3.0])


def test_nd_batchnorm_writes_ones_into_gamma_in_prediction_too():
    g = mx.nd.array([0.5, 2.0])
    mx.nd.BatchNorm(mx.nd.array([[1.0, 2.0], [3.0, 5.0]]), g, mx.nd.zeros(2), mx.nd.zeros(2),
                    mx.nd.ones(2)).wait_to_read()
    np.testing.assert_array_equal(g.asnumpy(), [1.0, 1.0])
