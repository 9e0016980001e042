"""bind/simple_bind with group2ctx across cpu(0) and cpu(1) (MXNet 1.9.1's
model parallelism): ops run on their ctx_group's context, arrays cross
contexts through differentiable copies. Expected values are MXNet's."""
import numpy as np
import pytest

import aiond as mx

C0, C1 = mx.cpu(0), mx.cpu(1)


def _net(vars_in_groups=False):
    if vars_in_groups:
        with mx.AttrScope(ctx_group="dev1"):
            d1, d2 = mx.sym.Variable("d1"), mx.sym.Variable("d2")
            net = (d1 + d2) * 3
        with mx.AttrScope(ctx_group="dev2"):
            d3 = mx.sym.Variable("d3")
            return net * d3
    d1, d2, d3 = (mx.sym.Variable(n) for n in ("d1", "d2", "d3"))
    with mx.AttrScope(ctx_group="dev1"):
        net = (d1 + d2) * 3
    with mx.AttrScope(ctx_group="dev2"):
        return net * d3


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_bind_across_two_cpu_contexts(dtype):
    args = [mx.nd.array([[1, 2]], ctx=C0, dtype=dtype), mx.nd.array([[3, 4]], ctx=C0, dtype=dtype),
            mx.nd.array([[5, 6]], ctx=C1, dtype=dtype)]
    grads = [mx.nd.zeros((1, 2), ctx=c, dtype=dtype) for c in (C0, C0, C1)]
    ex = _net().bind(C0, args=args, args_grad=grads, group2ctx={"dev1": C0, "dev2": C1})
    out = ex.forward(is_train=True)[0]
    assert out.context == C1            # made by the dev2 op
    np.testing.assert_array_equal(out.asnumpy(), [[60, 108]])
    ex.backward([mx.nd.array([[1, 10]], ctx=C0, dtype=dtype)])
    assert [g.context for g in grads] == [C0, C0, C1]
    np.testing.assert_array_equal(grads[0].asnumpy(), [[15, 180]])
    np.testing.assert_array_equal(grads[1].asnumpy(), [[15, 180]])
    np.testing.assert_array_equal(grads[2].asnumpy(), [[12, 180]])


def test_simple_bind_allocates_group_variables_on_their_context():
    ex = _net(vars_in_groups=True).simple_bind(C0, d1=(1, 2), d2=(1, 2), d3=(1, 2),
                                                group2ctx={"dev1": C0, "dev2": C1})
    assert [a.context for a in ex.arg_arrays] == [C0, C0, C1]
    assert [a.context for a in ex.grad_arrays] == [C0, C0, C1]
    for a, v in zip(ex.arg_arrays, ([1, 2], [3, 4], [5, 6])):
        a[:] = mx.nd.array([v], ctx=a.context)
    ex.forward(is_train=True)
    ex.backward([mx.nd.array([[1, 10]])])
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), [[60, 108]])
    np.testing.assert_array_equal(ex.grad_arrays[2].asnumpy(), [[12, 180]])


def test_without_group2ctx_arrays_must_be_on_the_executor_context():
    args = [mx.nd.ones((1, 2), ctx=C0), mx.nd.ones((1, 2), ctx=C0), mx.nd.ones((1, 2), ctx=C1)]
    with pytest.raises(mx.base.MXNetError, match="d3 is on cpu\\(1\\)"):
        _net().bind(C0, args=args)
