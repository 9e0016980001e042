"""Sparse storage behaviour MXNet 1.9.1 has (issue 31): the storage types a
bound executor's outputs get, the ops that keep sparse storage, the scatter
ops, SparseEmbedding, psi's poles, and the errors. Expected values are MXNet
1.9.1's outputs for the same calls."""
import numpy as np
import pytest

import aiond as mx


def _rsp(rows):
    return mx.nd.array(rows).tostype("row_sparse")


A = [[1, -2], [0, 0], [0, 0], [-4, 5]]
B = [[0, 0], [3, -1], [0, 0], [-2, 6]]


@pytest.mark.parametrize("lst, rst, want", [
    ("default", "row_sparse", "row_sparse"), ("row_sparse", "default", "row_sparse"),
    ("csr", "default", "csr"), ("default", "csr", "csr"),
    ("row_sparse", "row_sparse", "row_sparse"),
    ("csr", "csr", "csr"), ("row_sparse", "csr", "default"), ("default", "default", "default")])
def test_executor_output_storage_follows_the_op(lst, rst, want):
    lhs, rhs = mx.sym.Variable("lhs"), mx.sym.Variable("rhs")
    x = mx.nd.array(np.arange(6).reshape(2, 3)).tostype(lst)
    y = (mx.nd.ones((2, 3)) * 2).tostype(rst)
    ex = mx.sym.sparse.elemwise_mul(lhs, rhs).bind(
        mx.cpu(), {"lhs": x, "rhs": y}, args_grad={"lhs": mx.nd.zeros((2, 3)),
                                                    "rhs": mx.nd.zeros((2, 3))})
    out = ex.forward(is_train=True)[0]
    assert out.stype == want
    assert out.stype == mx.nd.sparse.elemwise_mul(x, y).stype
    np.testing.assert_array_equal(out.asnumpy(), np.arange(6).reshape(2, 3) * 2)
    ex.backward([mx.nd.ones((2, 3)).tostype(want)])
    np.testing.assert_array_equal(ex.grad_dict["lhs"].asnumpy(), np.full((2, 3), 2))
    np.testing.assert_array_equal(ex.grad_dict["rhs"].asnumpy(), np.arange(6).reshape(2, 3))


def test_executor_unary_and_chain_storage():
    data = mx.sym.Variable("data")
    x = _rsp(A)
    assert mx.sym.relu(data).bind(mx.cpu(), [x]).forward()[0].stype == "row_sparse"
    assert mx.sym.sigmoid(data).bind(mx.cpu(), [x]).forward()[0].stype == "default"
    # relu keeps row_sparse, + 1 is dense
    out = (mx.sym.relu(data) + 1).bind(mx.cpu(), [x]).forward()[0]
    assert out.stype == "default"
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(np.array(A), 0) + 1)


def test_csr_times_dense_keeps_the_csr_pattern():
    x = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype("csr")
    r = mx.nd.sparse.elemwise_mul(x, mx.nd.array([[5, 6, 7], [8, 9, 10]]))
    assert r.stype == "csr"
    np.testing.assert_array_equal(r.asnumpy(), [[0, 6, 0], [16, 0, 30]])
    np.testing.assert_array_equal(r.indices.asnumpy(), [1, 0, 2])
    # a dense inf where the csr stores nothing does not leak in
    r = mx.nd.sparse.elemwise_mul(x, mx.nd.array([[np.inf, 1, 1], [1, 1, 1]]))
    np.testing.assert_array_equal(r.asnumpy(), [[0, 1, 0], [2, 0, 3]])


@pytest.mark.parametrize("name, want", [
    ("_maximum", [[1, 0], [3, 0], [0, 0], [-2, 6]]),
    ("_minimum", [[0, -2], [0, -1], [0, 0], [-4, 5]]),
    ("_hypot", [[1, 2], [3, 1], [0, 0], [4.4721360206604, 7.8102498054504395]])])
def test_rsp_binary_keeps_row_sparse_over_the_union_of_rows(name, want):
    o = getattr(mx.nd._internal, name)(_rsp(A), _rsp(B))
    assert o.stype == "row_sparse"
    np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(o.indices.asnumpy(), [0, 1, 3])
    # mixed storage falls back to dense
    assert getattr(mx.nd._internal, name)(_rsp(A), mx.nd.array(B)).stype == "default"


def test_quadratic_on_csr():
    x = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype("csr")
    q = mx.nd.contrib.quadratic(x, a=2, b=3, c=0)
    assert q.stype == "csr"
    np.testing.assert_array_equal(q.asnumpy(), [[0, 5, 0], [14, 0, 27]])
    q = mx.nd.contrib.quadratic(x, a=2, b=3, c=1)
    assert q.stype == "default"
    np.testing.assert_array_equal(q.asnumpy(), [[1, 6, 1], [15, 1, 28]])


def test_scatter_ops():
    s = mx.nd._internal._scatter_elemwise_div(_rsp(A), mx.nd.array([[2, 4], [1, 1], [1, 1],
                                                                     [8, 10]]))
    assert s.stype == "row_sparse"
    np.testing.assert_array_equal(s.asnumpy(), [[0.5, -0.5], [0, 0], [0, 0], [-0.5, 0.5]])
    np.testing.assert_array_equal(s.indices.asnumpy(), [0, 3])
    x = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype("csr")
    s = mx.nd._internal._scatter_plus_scalar(x, scalar=9)
    assert s.stype == "csr"
    np.testing.assert_array_equal(s.asnumpy(), [[0, 10, 0], [11, 0, 12]])
    s = mx.nd._internal._scatter_minus_scalar(_rsp(A), scalar=1)
    assert s.stype == "row_sparse"
    np.testing.assert_array_equal(s.asnumpy(), [[0, -3], [0, 0], [0, 0], [-5, 4]])
    # dense inputs: the ordinary ops
    d = mx.nd._internal._scatter_plus_scalar(mx.nd.zeros((2,)), scalar=9)
    assert d.stype == "default" and d.asnumpy().tolist() == [9, 9]
    lhs, rhs = mx.sym.Variable("lhs"), mx.sym.Variable("rhs")
    ex = mx.sym._internal._scatter_elemwise_div(lhs, rhs).bind(
        mx.cpu(), {"lhs": _rsp(A), "rhs": mx.nd.ones((4, 2)) * 2})
    out = ex.forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), np.array(A) / 2)


def test_square_sum_of_an_empty_row_sparse():
    e = mx.nd._internal._square_sum(mx.nd.zeros((3, 4)).tostype("row_sparse"), axis=1,
                                    keepdims=True)
    assert e.stype == "row_sparse"
    np.testing.assert_array_equal(e.asnumpy(), np.zeros((3, 1)))


def test_batchnorm_fix_gamma_refuses_sparse():
    x = _rsp([[0, 1], [2, 0]])
    g, b, m, v = mx.nd.ones(2), mx.nd.ones(2), mx.nd.zeros(2), mx.nd.ones(2)
    with pytest.raises(mx.base.MXNetError, match="fix_gamma=True is not supported"):
        mx.nd.BatchNorm(x, g, b, m, v)
    data = mx.sym.Variable("data")
    with pytest.raises(mx.base.MXNetError, match="fix_gamma=True is not supported"):
        mx.sym.BatchNorm(data, fix_gamma=True).bind(
            mx.cpu(), [x, g.tostype("row_sparse"), b.tostype("row_sparse")],
            aux_states=[m, v])
    y = mx.nd.BatchNorm(x, g, b, m, v, fix_gamma=False)     # falls back to dense
    np.testing.assert_allclose(y.asnumpy(), [[1, 1.9995004], [2.9990008, 1]], rtol=1e-6)


def test_sparse_embedding():
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("embed_weight")
    embed = mx.sym.contrib.SparseEmbedding(data=data, weight=weight, input_dim=5, output_dim=2,
                                           deterministic=True, name="embed")
    ex = embed.simple_bind(mx.cpu(), grad_req={"data": "null", "embed_weight": "write"},
                           data=(3,))
    assert ex.grad_dict["embed_weight"].stype == "row_sparse"
    ex.arg_dict["data"][:] = mx.nd.array([1, 3, 1])
    ex.arg_dict["embed_weight"][:] = mx.nd.array(np.arange(10).reshape(5, 2))
    out = ex.forward(is_train=True)[0]
    np.testing.assert_array_equal(out.asnumpy(), [[2, 3], [6, 7], [2, 3]])
    ex.backward([mx.nd.array([[1, 2], [3, 4], [5, 6]])])
    g = ex.grad_dict["embed_weight"]
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(g.asnumpy(), [[0, 0], [6, 8], [0, 0], [3, 4], [0, 0]])
    with pytest.raises(mx.base.MXNetError, match="input_dim"):
        mx.nd.contrib.SparseEmbedding(mx.nd.zeros(2), mx.nd.zeros((1, 2)), input_dim=0,
                                      output_dim=2)


def test_gamma_gradients_at_the_poles():
    # MXNet's psi is the largest double at 0, -1, ... (inf in float32)
    x = mx.nd.array([0, -1, -2, 0.5, -0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gammaln(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [np.inf, np.inf, np.inf, -1.9635100,
                                                  0.03648997], rtol=1e-5)
    with mx.autograd.record():
        y = mx.nd.gamma(x)
    y.backward()
    got = x.grad.asnumpy()
    assert got[0] == np.inf and np.isnan(got[1]) and np.isnan(got[2])
    np.testing.assert_allclose(got[3:], [-3.480231, -0.1293536], rtol=1e-5)
    # a zero head gradient at a pole: 0 * inf, as MXNet computes it in float32
    z = mx.nd.zeros((2,))
    z.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gammaln(z)
    y.backward(mx.nd.zeros((2,)))
    assert np.isnan(z.grad.asnumpy()).all()


def test_a_missing_input_is_an_mxnet_error():
    a = mx.nd.ones((2, 2))
    with pytest.raises(mx.base.MXNetError, match="retain\\(\\) missing input 'indices'"):
        mx.nd.sparse.retain(a, invalid_arg="garbage_value")
    with pytest.raises(TypeError, match="expects 2 inputs, got 1"):
        mx.nd.elemwise_add(a)
