"""Shape inference details of MXNet 1.9.1: shapes flowing backward through
transpose into init ops given -1 dims, slice leaving unknown dims unknown,
and -1 as the unknown dim under NumPy shapes."""
import numpy as np
import pytest

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


# infer_type with dtypes alone (no shapes), as MXNet 1.9.1 gives them: the
# output dtype comes from the op's own rule, not from its first input
_S = mx.sym
_X, _Y, _C, _W = _S.var("x"), _S.var("y"), _S.var("c"), _S.var("w")


@pytest.mark.parametrize("sym, given, outs", [
    (_S.shape_array(_X), dict(x="float32"), ["int64"]),
    (_S.size_array(_X), dict(x="float32"), ["int64"]),
    (_S.contrib.index_array(_X), dict(x="float32"), ["int64"]),
    (_S.where(_C, _X, _Y), dict(c="int32", x="float32", y="float32"), ["float32"]),
    (_S.where(_C, _X, _Y), dict(c="float32", x="float64", y="float64"), ["float64"]),
    (_S.topk(_X, k=2, ret_typ="value"), dict(x="float64"), ["float64"]),
    (_S.topk(_X, k=2, ret_typ="both"), dict(x="float64"), ["float64", "float32"]),
    (_S.topk(_X, k=2, dtype="int32"), dict(x="float64"), ["int32"]),
    (_S.Embedding(_X, _W, input_dim=3, output_dim=4), dict(x="int32", w="int32"), ["int32"]),
    (_S.Embedding(_X, _W, input_dim=3, output_dim=4), dict(x="float32", w="float64"),
     ["float64"]),
    (_S.histogram(_X, bins=3, range=(0, 1)), dict(x="float64"), ["int64", "float64"]),
    (_S.Cast(_X, dtype="int8"), dict(x="float32"), ["int8"]),
    (_S.mean(_X), dict(x="int32"), ["int32"]),
])
def test_infer_type_without_shapes_uses_the_ops_rule(sym, given, outs):
    _, out, _ = sym.infer_type(**given)
    assert [np.dtype(d).name for d in out] == outs
