"""Shape inference details of MXNet 1.9.1: shapes flowing backward through
transpose into init ops given -1 dims, slice leaving unknown dims unknown,
and -1 as the unknown dim under NumPy shapes."""
import numpy as np

import aiond as mx


def test_ones_with_unknown_dims_inferred_through_transpose():
    o1 = mx.sym.ones(shape=[2, 3])
    o2 = mx.sym.ones(shape=[-1, -1])
    b = o1 + mx.sym.transpose(o2)
    y = b.bind(mx.cpu(), args={}).forward()
    assert y[0].shape == (2, 3) and np.all(y[0].asnumpy() == 2)
    o3 = mx.sym.ones(shape=[3, -1])
    c = mx.sym.ones(shape=[2, -1]) + mx.sym.transpose(o3, axes=(1, 0))
    assert c.bind(mx.cpu(), args={}).forward()[0].shape == (2, 3)


def test_slice_partial_infer_keeps_unknown_dims():
    data = mx.sym.var("data", shape=(0, 20))
    out = mx.sym.slice(data, begin=(None, 3), end=(5, 10))
    assert out.infer_shape_partial()[1][0] == (0, 7)
    out = mx.sym.slice_axis(mx.sym.var("d", shape=(10, 0)), axis=1, begin=0, end=5)
    assert out.infer_shape_partial()[1][0] == (10, 0)
    with mx.np_shape():
        data = mx.sym.var("data", shape=(-1, 20))
        out = mx.sym.slice(data, begin=(None, None), end=(None, 10), step=(None, 2))
        assert out.infer_shape_partial()[1][0] == (-1, 5)
