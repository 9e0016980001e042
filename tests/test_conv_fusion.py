"""Inference Convolution + BatchNorm (+ ReLU) fused in hybridized graphs,
and oneDNN's reordered weights kept between calls: the results equal the
op-by-op ones, and a weight (or BatchNorm statistic) written after a call
is used by the next one. Run with oneDNN on and, by test_onednn_off.py,
with AIOND_ONEDNN=0 (the numpy kernels take the fused step then)."""
import numpy as np
import pytest

import aiond as mx
from aiond.gluon import nn
from aiond.ops import conv_bn
from aiond.ops.onednn import _wcache


class _Net(nn.HybridBlock):
    """conv-BN-relu, conv-BN (fix_gamma, no bias) + residual, relu; a
    grouped conv-BN-relu; a 1x1 conv whose output is also returned (so it
    must not fuse with its BN)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.c1 = nn.Conv2D(16, 3, padding=1, in_channels=8)
            self.b1 = nn.BatchNorm(in_channels=16)
            self.c2 = nn.Conv2D(16, 3, padding=1, use_bias=False, in_channels=16)
            self.b2 = nn.BatchNorm(scale=False, in_channels=16)
            self.c3 = nn.Conv2D(16, 3, padding=1, groups=4, use_bias=False, in_channels=16)
            self.b3 = nn.BatchNorm(in_channels=16)
            self.c4 = nn.Conv2D(8, 1, in_channels=16)
            self.b4 = nn.BatchNorm(in_channels=8)

    def hybrid_forward(self, F, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)) + y)
        y = F.Activation(self.b3(self.c3(y)), act_type="relu")
        c = self.c4(y)
        z = self.b4(c)
        return z, F.relu(z), c


def _randomize(net, seed):
    rs = np.random.RandomState(seed)
    for name, p in sorted(net.collect_params().items()):
        shape = p.shape
        if name.endswith("running_var"):
            v = rs.uniform(0.5, 2.0, shape)
        elif name.endswith("gamma"):
            v = rs.uniform(0.5, 1.5, shape)
        else:
            v = rs.standard_normal(shape) * (0.3 if name.endswith("weight") else 0.5)
        p.set_data(mx.nd.array(v.astype(np.float32)))


def _nets():
    net = _Net()
    net.initialize()
    ref = _Net()
    ref.initialize()
    x = mx.nd.zeros((1, 8, 12, 12))
    net(x)
    ref(x)
    return net, ref


def _copy(src, dst):
    for (_, a), (_, b) in zip(sorted(src.collect_params().items()),
                              sorted(dst.collect_params().items())):
        b.set_data(a.data().copy())


@pytest.fixture(params=["onednn", "numpy"])
def dnn(request, monkeypatch):
    monkeypatch.setenv("AIOND_ONEDNN", "1" if request.param == "onednn" else "0")
    return request.param


@pytest.mark.parametrize("batch", [1, 3])
def test_fused_inference_matches_op_by_op(batch, dnn):
    net, ref = _nets()
    _randomize(net, 1)
    _copy(net, ref)
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(2).standard_normal((batch, 8, 12, 12))
                    .astype(np.float32))
    folds = conv_bn.stats["folds"]
    got = [y.asnumpy() for y in net(x)]
    # three pairs fuse (c1-b1-relu, c2-b2, c3-b3-relu); c4's output is returned too
    assert conv_bn.stats["folds"] - folds == 3
    want = [y.asnumpy() for y in ref(x)]       # not hybridized: op by op
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_parameter_writes_after_a_call_are_seen(dnn):
    net, ref = _nets()
    _randomize(net, 3)
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(4).standard_normal((2, 8, 12, 12)).astype(np.float32))
    first = net(x)[0].asnumpy()
    net(x)[0].wait_to_read()                    # a second call: served from the caches
    for seed, part in ((5, "c1.weight"), (6, "b1.running_var"), (7, "b2.beta"),
                       (8, "c3.weight")):
        blk, attr = part.split(".")
        p = getattr(getattr(net, blk), attr)
        # written in place through the engine (as an optimizer's update does)
        p.data()[:] = mx.nd.array(np.random.RandomState(seed).uniform(0.5, 1.5, p.shape)
                                  .astype(np.float32))
        got = net(x)[0].asnumpy()
        _copy(net, ref)
        want = ref(x)[0].asnumpy()
        # float32 rounding of values that grew large: tolerance by their size
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max(),
                                   err_msg=part)
        assert not np.allclose(got, first), "the write to %s changed nothing" % part
        first = got


def test_training_is_not_fused(dnn):
    net, ref = _nets()
    _randomize(net, 9)
    _copy(net, ref)
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(10).standard_normal((4, 8, 12, 12))
                    .astype(np.float32))
    folds = conv_bn.stats["folds"]
    with mx.autograd.train_mode():
        got = net(x)[0].asnumpy()               # batch statistics
        want = ref(x)[0].asnumpy()
    assert conv_bn.stats["folds"] == folds
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_imperative_convolution_sees_a_weight_written_in_place(dnn):
    rs = np.random.RandomState(11)
    x = mx.nd.array(rs.standard_normal((2, 16, 32, 32)).astype(np.float32))
    w = mx.nd.array(rs.standard_normal((32, 16, 3, 3)).astype(np.float32))

    def ref(wv):
        return mx.nd.Convolution(x, mx.nd.array(wv), kernel=(3, 3), pad=(1, 1),
                                 num_filter=32, no_bias=True).asnumpy()
    for seed in (12, 13):
        y = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=32,
                              no_bias=True).asnumpy()
        np.testing.assert_allclose(y, ref(w.asnumpy()), rtol=1e-4, atol=1e-4)
        w[:] = mx.nd.array(np.random.RandomState(seed).standard_normal(w.shape)
                           .astype(np.float32))
    y = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=32,
                          no_bias=True).asnumpy()
    np.testing.assert_allclose(y, ref(w.asnumpy()), rtol=1e-4, atol=1e-4)


def test_weight_cache_holds_variables_not_ids():
    """A stamp names the variable object and its version; an entry for a
    variable that is gone is never served to a new one at the same address."""
    class Var:
        version = 0

    class H:
        def __init__(self):
            self._st = type("St", (), {})()
            self._st.var = Var()
    a = np.zeros(4, np.float32)
    h1, h2 = H(), H()
    with _wcache.scope([a], [h1]):
        s1 = _wcache.stamp(a)
    with _wcache.scope([a], [h2]):
        s2 = _wcache.stamp(a)
    assert s1[0] is h1._st.var and s2[0] is h2._st.var
    assert _wcache.stamp(a) is None            # outside any executor's scope
    made = []
    key = ("test", a.ctypes.data)
    _wcache.get(key, s1, 16, lambda b: made.append(1))
    _wcache.get(key, s1, 16, lambda b: made.append(1))
    assert made == [1]
    _wcache.get(key, s2, 16, lambda b: made.append(2))
    h2._st.var.version += 1
    _wcache.get(key, (h2._st.var, h2._st.var.version), 16, lambda b: made.append(3))
    assert made == [1, 2, 3]
