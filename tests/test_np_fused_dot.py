"""np.dot(x, w.T) in a hybridized block: one product reading w in place
(aiond/numpy/_fuse_dot.py), with NumPy's values and gradients, and the
legacy dot's gradient skipping inputs nobody differentiates."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon


class Dense(gluon.HybridBlock):
    def __init__(self, w, b, trans=True, **kw):
        super().__init__(**kw)
        self.trans = trans
        with self.name_scope():
            self.w = self.params.get("w", shape=w.shape)
            self.b = self.params.get("b", shape=b.shape)
        self.initialize()
        self.w.set_data(mx.np.array(w, dtype=w.dtype))
        self.b.set_data(mx.np.array(b, dtype=b.dtype))

    def hybrid_forward(self, F, x, w, b):
        wt = w.T if self.trans else w
        return F.np.dot(x, wt) + b


def _graph_ops(net, x):
    out = net._cached_graph[1] if getattr(net, "_cached_graph", None) else None
    js = out.tojson() if out is not None else ""
    return js


@pytest.fixture
def np_mode():
    mx.npx.set_np()
    yield
    mx.npx.reset_np()


@pytest.mark.parametrize("xshape", [(5, 7), (2, 3, 7)])
def test_dot_transpose_values_and_grads(np_mode, xshape):
    rs = np.random.RandomState(0)
    w = rs.randn(4, 7).astype(np.float32)
    b = rs.randn(4).astype(np.float32)
    xv = rs.randn(*xshape).astype(np.float32)
    for hyb in (False, True):
        net = Dense(w, b)
        if hyb:
            net.hybridize()
        x = mx.np.array(xv)
        x.attach_grad()
        with autograd.record():
            y = net(x)
            loss = (y * y).sum()
        loss.backward()
        ref = xv @ w.T + b
        np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5, atol=1e-5)
        g = 2 * ref
        g2 = g.reshape(-1, 4)
        np.testing.assert_allclose(x.grad.asnumpy(), (g2 @ w).reshape(xshape), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(net.w.grad().asnumpy(), g2.T @ xv.reshape(-1, 7),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(net.b.grad().asnumpy(), g2.sum(0), rtol=1e-4, atol=1e-4)


def test_fused_graph_has_no_transpose(np_mode):
    import json
    from aiond.numpy._fuse_dot import fused_dot
    from aiond.symbol.numpy._symbol import SYM, _Symbol
    x = mx.sym.var("x").as_np_ndarray()
    w = mx.sym.var("w", shape=(5, 4), dtype="float32").as_np_ndarray()
    # x's dtype unknown (no graph being traced): no fusion, the literal graph
    assert fused_dot(SYM, x, w.T) is None
    hooks = SYM.shape_hook, SYM.dtype_hook
    SYM.dtype_hook = lambda s: np.float32 if s.name == "x" else None
    try:
        s = mx.sym.np.dot(x, w.T)
        assert isinstance(s, _Symbol)
        ops = [n["op"] for n in json.loads(s.tojson())["nodes"]]
        assert "_np_transpose" not in ops and "dot" in ops
        # w not 2-D, w not a variable, w of another dtype, w's shape not known: literal
        w3 = mx.sym.var("w3", shape=(2, 5, 4), dtype="float32").as_np_ndarray()
        assert fused_dot(SYM, x, w3.T) is None
        assert fused_dot(SYM, x, (w * 2).T) is None
        w64 = mx.sym.var("w64", shape=(5, 4), dtype="float64").as_np_ndarray()
        assert fused_dot(SYM, x, w64.T) is None
        wd = mx.sym.var("wd", shape=(5, 0), dtype="float32").as_np_ndarray()
        assert fused_dot(SYM, x, wd.T) is None
    finally:
        SYM.shape_hook, SYM.dtype_hook = hooks
    ex = mx.sym.np.dot(x, w.T).as_nd_ndarray().bind(
        mx.cpu(), {"x": mx.nd.ones((3, 4)), "w": mx.nd.ones((5, 4))})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.full((3, 5), 4.0))


def test_fusion_keeps_graph_shape_free(np_mode):
    # a fused dense layer does not make gluon re-trace per batch size
    rs = np.random.RandomState(3)
    w = rs.randn(4, 7).astype(np.float32)
    b = rs.randn(4).astype(np.float32)
    net = Dense(w, b)
    net.hybridize()
    for n in (5, 2):
        xv = rs.randn(n, 7).astype(np.float32)
        np.testing.assert_allclose(net(mx.np.array(xv)).asnumpy(), xv @ w.T + b,
                                   rtol=1e-5, atol=1e-5)
    assert net._shape_dependent is False


def test_float64_and_shape_mismatch(np_mode):
    rs = np.random.RandomState(1)
    w = rs.randn(3, 6)
    b = np.zeros(3)
    net = Dense(w, b)
    net.hybridize()
    xv = rs.randn(2, 6)
    y = net(mx.np.array(xv, dtype=np.float64))
    assert y.dtype == np.float64
    np.testing.assert_allclose(y.asnumpy(), xv @ w.T, rtol=1e-6)  # params held as float32
    net2 = Dense(w.astype(np.float32), b.astype(np.float32))
    net2.hybridize()
    with pytest.raises(Exception, match="not aligned|match|expected"):
        net2(mx.np.ones((2, 5)))


def test_legacy_dot_skips_unneeded_grad():
    from aiond.ops.matrix import _dot_grad
    calls = []

    class FakeF:
        @staticmethod
        def dot(a, b, **kw):
            calls.append(kw)
            return mx.nd.dot(a, b, **kw)
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((4, 3))
    g = mx.nd.ones((2, 4))
    r = _dot_grad(FakeF, {"transpose_a": False, "transpose_b": True}, [a, b], None, [g],
                  need=[False, True])
    assert r[0] is None and len(calls) == 1
    np.testing.assert_allclose(r[1].asnumpy(), np.full((4, 3), 2.0))


def _ops(net):
    import json
    return [n["op"] for n in json.loads(net._cached_graph[1].tojson())["nodes"]
            if n["op"] != "null"]


@pytest.mark.parametrize("bshape", [(4,), (1, 4)])
def test_dense_layer_graph(np_mode, bshape):
    rs = np.random.RandomState(2)
    w = rs.randn(4, 7).astype(np.float32)
    b = rs.randn(*bshape).astype(np.float32)
    net = Dense(w, b)
    net.hybridize()
    xv = rs.randn(3, 7).astype(np.float32)
    y = net(mx.np.array(xv))
    np.testing.assert_allclose(y.asnumpy(), xv @ w.T + b, rtol=1e-5, atol=1e-5)
    ops = _ops(net)
    assert "_np_transpose" not in ops
    if bshape == (4,):
        # a 1-D bias of the product's width: one FullyConnected, as npx.fully_connected
        assert ops == ["FullyConnected"]
    else:
        assert "_npi_add" in ops and "dot" in ops
