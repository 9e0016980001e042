"""Arrays on another device reaching a compiled graph (``graph/fused.py``) or a
bound executor: MXNet's behaviour where it has one (GraphExecutor copies head
gradients in), otherwise an error at the call naming the array, its
context and the graph's - never a foreign array failing inside a kernel."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def _fc_executor(ctx):
    x, w = mx.sym.var("x"), mx.sym.var("w")
    y = mx.sym.FullyConnected(x, w, num_hidden=3, no_bias=True, name="fc")
    ex = y.simple_bind(ctx, x=(2, 4), w=(3, 4))
    ex.arg_dict["x"][:] = np.arange(8.0).reshape(2, 4)
    ex.arg_dict["w"][:] = 1.0
    return ex


HEAD = np.arange(6.0).reshape(2, 3)
WANT_W = HEAD.T @ np.arange(8.0).reshape(2, 4)      # d(sum(head * x w^T)) / dw


@pytest.mark.parametrize("exe_ctx,head_ctx", [(0, 1), (1, 0), (1, 2)],
                         ids=["cpu-exe-gpu-head", "gpu-exe-cpu-head", "gpu0-exe-gpu1-head"])
def test_executor_backward_copies_a_head_gradient_from_another_device(fake_gpu, exe_ctx,
                                                                       head_ctx):
    ctxs = [mx.cpu(), mx.gpu(0), mx.gpu(1)]
    ex = _fc_executor(ctxs[exe_ctx])
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(HEAD, ctx=ctxs[head_ctx]))      # as MXNet's CopyFromTo
    assert ex.grad_dict["w"].context == ctxs[exe_ctx]
    np.testing.assert_allclose(ex.grad_dict["w"].asnumpy(), WANT_W, rtol=1e-6)


def test_compiled_graph_names_an_input_on_another_device(fake_gpu):
    ex = _fc_executor(mx.cpu())
    ex.forward()
    if ex._fused is None:
        pytest.skip("graph plans are off (AIOND_FUSE_GRAPHS=0)")
    ex.arg_arrays[0] = mx.nd.ones((2, 4), ctx=mx.gpu(0))    # slipped past bind's check
    with pytest.raises(MXNetError, match=r"fc: x is on gpu\(0\) but the graph runs on cpu\(0\)"):
        ex.forward()


def test_hybridized_backward_names_a_head_gradient_on_another_device(fake_gpu):
    # explicit prefixes: the automatic names are counted suite-wide
    net = mx.gluon.nn.HybridSequential(prefix="ctxmm_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(5, in_units=4, activation="relu"),
                mx.gluon.nn.Dense(3, in_units=5))
    net.initialize(ctx=mx.cpu())
    net.hybridize()
    a = mx.nd.ones((2, 4), ctx=mx.cpu())
    a.attach_grad()
    with mx.autograd.record():
        z = net(a)
    if type(z._ag.node.fn).__name__ != "_Backward":
        pytest.skip("graph plans are off (AIOND_FUSE_GRAPHS=0)")
    # autograd refuses it before the graph's backward sees it
    with pytest.raises(MXNetError, match=r"head gradient 0 is on gpu\(0\) but its head is on "
                                         r"cpu\(0\)"):
        z.backward(mx.nd.ones((2, 3), ctx=mx.gpu(0)))
    with mx.autograd.record():
        z = net(a)
    z.backward(mx.nd.ones((2, 3), ctx=mx.cpu()))            # the graph is still usable
    assert a.grad.asnumpy().shape == (2, 4)


def test_fused_graph_without_names_says_which_input(fake_gpu):
    from aiond.graph.fused import FusedGraph
    fg = FusedGraph(lambda xs: [xs[0] + xs[1]], "add_graph")
    a, b = mx.nd.ones((2,), ctx=mx.cpu()), mx.nd.ones((2,), ctx=mx.gpu(1))
    with pytest.raises(MXNetError, match=r"add_graph: input 1 is on gpu\(1\) but the graph "
                                         r"runs on cpu\(0\)"):
        fg([a, b], mx.cpu())


def test_imperative_backward_names_a_head_gradient_on_another_device(fake_gpu):
    x = mx.nd.array(np.arange(4.0), ctx=mx.gpu(0))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    with pytest.raises(MXNetError, match=r"head gradient 0 is on cpu\(0\) but its head is on "
                                         r"gpu\(0\)"):
        y.backward(mx.nd.ones((4,), ctx=mx.cpu()))
    y.backward(mx.nd.ones((4,), ctx=mx.gpu(0)))      # the graph is intact after the refusal
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2, 2])
