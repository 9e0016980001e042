"""boolean_mask (an op whose output shape is a value) inside hybridized
graphs, as MXNet 1.9.1's test_dynamic_shape runs it; expected values are
MXNet's."""
import numpy as np
import pytest

import aiond as mx


class _Mask(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, data, index):
        return F.contrib.boolean_mask(data, index)


class _MaskMiddle(mx.gluon.HybridBlock):
    # the mask is computed inside the graph, between other ops
    def hybrid_forward(self, F, x):
        y = F.relu(x) * 3
        return F.contrib.boolean_mask(y, F.sum(x, axis=1) > 0) * 2


@pytest.mark.parametrize("record", [True, False])
def test_boolean_mask_of_an_input_index(record):
    block = _Mask()
    block.hybridize()
    data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    data.attach_grad()
    if record:
        with mx.autograd.record():
            result = block(data, mx.nd.array([0, 1, 1]))
        result.backward()
        np.testing.assert_array_equal(data.grad.asnumpy(), [[0, 0, 0], [1, 1, 1], [1, 1, 1]])
    else:
        result = block(data, mx.nd.array([0, 1, 1]))
    np.testing.assert_array_equal(result.asnumpy(), [[4, 5, 6], [7, 8, 9]])
    # another mask, another output shape, same cached graph
    np.testing.assert_array_equal(block(data, mx.nd.array([1, 0, 0])).asnumpy(), [[1, 2, 3]])


def test_boolean_mask_of_a_mask_computed_in_the_graph():
    block = _MaskMiddle()
    block.hybridize()
    x = mx.nd.array([[1, -2], [-3, -4], [5, 6]])
    x.attach_grad()
    for _ in range(2):      # the second call replays the cached graph
        with mx.autograd.record():
            r = block(x)
        r.backward()
        np.testing.assert_array_equal(r.asnumpy(), [[30, 36]])
        np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 0], [0, 0], [6, 6]])
    np.testing.assert_array_equal(block(x).asnumpy(), [[30, 36]])


def test_bound_executor_output_whose_size_is_a_value():
    """A Symbol bound with simple_bind/bind: the output after boolean_mask has
    as many rows as the mask keeps, new at each forward; shape inference
    reports the row count unknown."""
    x, i = mx.sym.Variable("x"), mx.sym.Variable("i")
    y = mx.sym.contrib.boolean_mask(x, i) * 2
    _, outs, _ = y.infer_shape_partial(x=(3, 2), i=(3,))
    assert outs == [(0, 2)]
    ex = y.bind(mx.cpu(), {"x": mx.nd.array([[1, 2], [3, 4], [5, 6]]),
                           "i": mx.nd.array([0, 1, 1])})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[6, 8], [10, 12]])
    out = ex.forward(i=mx.nd.array([1, 0, 0]))
    np.testing.assert_array_equal(out[0].asnumpy(), [[2, 4]])
    assert ex.output_dict[y.list_outputs()[0]].shape == (1, 2)


def test_value_shaped_np_ops_in_a_bound_symbol():
    """np.unique and npx.nonzero in a Symbol: inference reports their
    value-sized axes as unknown, a bound executor runs them (MXNet's
    GraphExecutor refuses such graphs; its CachedOp runs them)."""
    x = mx.sym.var("x")
    u = mx.sym.np.unique(x.as_np_ndarray(), return_counts=True)
    _, outs, _ = u.infer_shape_partial(x=(3, 4))
    assert outs == [(0,), (0,)]
    assert u.infer_type(x="float32")[1] == [np.float32, np.int64]
    ex = u.bind(mx.cpu(), {"x": mx.nd.array([[1, 2, 2], [3, 1, 1]])})
    vals, counts = (o.asnumpy() for o in ex.forward())
    np.testing.assert_array_equal(vals, [1, 2, 3])
    np.testing.assert_array_equal(counts, [3, 2, 1])
    nz = mx.sym.transpose(mx.sym._internal._npx_nonzero(x))
    assert nz.infer_shape_partial(x=(2, 5))[1] == [(2, 0)]
    ex = nz.bind(mx.cpu(), {"x": mx.nd.array([[0, 1], [2, 0]])})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[0, 1], [1, 0]])
