"""_sparse_softmax_cross_entropy: Gluon's SoftmaxCrossEntropyLoss with class
labels as one op each way, bit for bit the ops it replaces."""
import numpy as np
import pytest

import aiond as mx
from aiond import autograd, gluon, nd
from aiond.base import MXNetError

L = gluon.loss
RS = np.random.RandomState(7)


def _composed(pred, label, axis, batch_axis):
    """The loss as SoftmaxCrossEntropyLoss wrote it before the fused op."""
    lp = nd.log_softmax(pred, axis)
    return nd.mean(-nd.pick(lp, label, axis=axis, keepdims=True), axis=batch_axis,
                   exclude=True)


def _fused(pred, label, axis, batch_axis):
    return nd._internal._sparse_softmax_cross_entropy(pred, label, axis=axis,
                                                      batch_axis=batch_axis)


def _run(f, x, label, head, axis, batch_axis):
    a = x.copy()
    a.attach_grad()
    with autograd.record():
        out = f(a, label, axis, batch_axis)
    out.backward(head)
    return out.asnumpy(), a.grad.asnumpy()


CASES = [((128, 10), -1, 0), ((64, 3), 1, 0), ((4, 7, 5), -1, 0), ((6, 3, 4), 1, 0),
         ((5, 8, 3), -1, 1), ((9,), -1, 0), ((3, 1), -1, 0)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape,axis,batch_axis", CASES)
def test_bitwise_the_composed_ops(ctx, dtype, shape, axis, batch_axis):
    x = RS.randn(*shape) * 4
    x.flat[0] = 30.0                # a row whose max dominates
    nd_ = len(shape)
    lshape = tuple(s for i, s in enumerate(shape) if i != axis % nd_) or (1,)
    # out-of-range and fractional labels: pick's 'clip' and truncation
    lab = RS.randint(-2, shape[axis] + 2, lshape) + RS.choice([0, 0.7], lshape)
    nb = shape[batch_axis] if nd_ > 1 else 1
    head = nd.array(RS.randn(nb), dtype=dtype)
    xa = nd.array(x, dtype=dtype)
    for lab_dt in ("float32", "int32"):
        la = nd.array(lab, dtype=lab_dt)
        got = _run(_fused, xa, la, head, axis, batch_axis)
        want = _run(_composed, xa, la, head, axis, batch_axis)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_against_numpy_with_non_finite_rows(ctx):
    x = RS.randn(5, 4).astype(np.float32)
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    lab = np.array([0, 1, 2, 3, 0], np.float32)
    xa = nd.array(x)
    xa.attach_grad()
    with autograd.record():
        out = L.SoftmaxCrossEntropyLoss()(xa, nd.array(lab))
    out.backward()
    with np.errstate(all="ignore"):
        z = x - x.max(1, keepdims=True)
        lp = z - np.log(np.exp(z).sum(1, keepdims=True))
        p = np.exp(lp)
    onehot = np.eye(4, dtype=np.float32)[lab.astype(int)]
    np.testing.assert_allclose(out.asnumpy(), -lp[np.arange(5), lab.astype(int)], rtol=1e-6)
    np.testing.assert_allclose(xa.grad.asnumpy(), p - onehot, rtol=1e-6, atol=1e-7)
    assert np.isnan(out.asnumpy()[1:3]).all() and np.isfinite(out.asnumpy()[[0, 3, 4]]).all()


def _node_op(arr):
    return arr._ag.node.op.name


def test_the_gluon_loss_takes_the_fused_op_only_where_it_is_the_same():
    x = nd.array(RS.randn(6, 4))
    lab = nd.array([0, 1, 2, 3, 0, 1])
    x.attach_grad()
    with autograd.record():
        assert _node_op(L.SoftmaxCrossEntropyLoss()(x, lab)) == "_sparse_softmax_cross_entropy"
        assert _node_op(L.SoftmaxCELoss(axis=0, batch_axis=1)(x, nd.array([0, 1, 2, 3]))) \
            == "_sparse_softmax_cross_entropy"
        # weights, sample weights, log-probabilities and dense labels keep the composed ops
        assert _node_op(L.SoftmaxCELoss(weight=2.0)(x, lab)) != "_sparse_softmax_cross_entropy"
        assert _node_op(L.SoftmaxCELoss()(x, lab, nd.ones((6, 1)))) \
            != "_sparse_softmax_cross_entropy"
        assert _node_op(L.SoftmaxCELoss(from_logits=True)(x, lab)) \
            != "_sparse_softmax_cross_entropy"
        assert _node_op(L.SoftmaxCELoss(sparse_label=False)(x, nd.softmax(x))) \
            != "_sparse_softmax_cross_entropy"


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_training_step_matches_the_composed_loss(hybridize):
    def step(loss_fn):
        mx.random.seed(3)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(16, activation="relu", in_units=8), gluon.nn.Dense(5, in_units=16))
        net.initialize(mx.init.Xavier())
        if hybridize:
            net.hybridize()
            loss_fn.hybridize()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        x = nd.array(np.random.RandomState(0).randn(12, 8))
        y = nd.array(np.random.RandomState(1).randint(0, 5, 12))
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(12)
        return loss.asnumpy(), [p.data().asnumpy() for p in net.collect_params().values()]

    class Composed(gluon.loss.Loss):
        def __init__(self):
            super().__init__(None, 0)

        def hybrid_forward(self, F, pred, label):
            return F.mean(-F.pick(F.log_softmax(pred, -1), label, axis=-1, keepdims=True),
                          axis=0, exclude=True)

    got, want = step(L.SoftmaxCrossEntropyLoss()), step(Composed())
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1], want[1]):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape,axis,batch_axis", [((6, 4), -1, 0), ((3, 4, 5), 1, 0),
                                                   ((4, 3, 2), -1, 1)])
def test_second_order_against_calculus(shape, axis, batch_axis):
    """The composed ops have no second order (pick's gradient has none); the
    fused op's is checked against the closed form: with loss
    sum(w * mean(-log p[label])), the gradient is s * (p - onehot) with s = w/n
    spread, so along v: d/dx = s * p * (v - sum(p * v)) and d/dw is the mean
    of sum((p - onehot) * v)."""
    ax = axis % len(shape)
    x0 = RS.randn(*shape)
    lshape = tuple(s for i, s in enumerate(shape) if i != ax)
    lab = RS.randint(0, shape[ax], lshape)
    v0 = RS.randn(*shape)
    w0 = RS.uniform(0.5, 2, shape[batch_axis])
    x, w, v = (nd.array(a, dtype="float64") for a in (x0, w0, v0))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        loss = nd.sum(_fused(x, nd.array(lab), axis, batch_axis) * w)
        (gx,) = autograd.grad(loss, [x], create_graph=True)
        z = nd.sum(gx * v)
    z.backward()

    p = np.exp(x0 - x0.max(ax, keepdims=True))
    p /= p.sum(ax, keepdims=True)
    onehot = np.zeros(shape)
    np.put_along_axis(onehot, np.expand_dims(lab, ax), 1.0, axis=ax)
    n = np.prod(shape) / shape[ax] / shape[batch_axis]
    bshape = [1] * len(shape)
    bshape[batch_axis] = shape[batch_axis]
    s = w0.reshape(bshape) / n
    others = tuple(i for i in range(len(shape)) if i != batch_axis)
    np.testing.assert_allclose(gx.asnumpy(), s * (p - onehot), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(x.grad.asnumpy(), s * p * (v0 - (p * v0).sum(ax, keepdims=True)),
                               rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(w.grad.asnumpy(), ((p - onehot) * v0).sum(others) / n,
                               rtol=1e-10, atol=1e-13)


def test_a_symbol_graph_binds_and_runs_it():
    data, label = mx.sym.var("data"), mx.sym.var("label")
    out = mx.sym._internal._sparse_softmax_cross_entropy(data, label)
    _, out_shapes, _ = out.infer_shape(data=(5, 3), label=(5,))
    assert out_shapes == [(5,)]
    x = RS.randn(5, 3).astype(np.float32)
    lab = np.array([0, 2, 1, 1, 0], np.float32)
    ex = out.simple_bind(mx.cpu(), data=(5, 3), label=(5,))
    ex.forward(is_train=True, data=nd.array(x), label=nd.array(lab))
    ex.backward(nd.ones((5,)))
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), -np.log(p[np.arange(5), [0, 2, 1, 1, 0]]),
                               rtol=1e-5)
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(),
                               p - np.eye(3, dtype=np.float32)[[0, 2, 1, 1, 0]], rtol=1e-5,
                               atol=1e-6)


def test_bad_input_is_named():
    x = nd.array(RS.randn(4, 3))
    with pytest.raises(MXNetError, match=r"label has shape \(5,\) but pred \(4, 3\)"):
        _fused(x, nd.zeros((5,)), -1, 0).wait_to_read()
    with pytest.raises(MXNetError, match="floating point.*pred"):
        _fused(nd.ones((4, 3), dtype="int32"), nd.zeros((4,)), -1, 0).wait_to_read()
    with pytest.raises(MXNetError, match="axis=2 is out of range"):
        _fused(x, nd.zeros((4,)), 2, 0).wait_to_read()
    with pytest.raises(MXNetError, match=r"ograd has shape \(3,\) but the loss has shape \(4,\)"):
        nd._internal._backward_sparse_softmax_cross_entropy(nd.ones((3,)), x,
                                                            nd.zeros((4,))).wait_to_read()
