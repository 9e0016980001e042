"""mx.operator: Python custom operators (CustomOp / CustomOpProp / register,
mx.nd.Custom, mx.sym.Custom), against numpy and MXNet 1.9.1's semantics."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


class _Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = 1
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        assert (aux[0].asnumpy() == 1).all()
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("t_sqr")
class _SqrProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ['data']

    def list_outputs(self):
        return ['output']

    def list_auxiliary_states(self):
        return ['aux']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _Sqr()


class _Mult(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        # a loss-like op: no out_grad (need_top_grad=False)
        assert out_grad[0] is None
        self.assign(in_grad[0], req[0], in_data[1])
        self.assign(in_grad[1], req[1], in_data[0])


@mx.operator.register("t_mult_no_grad")
class _MultProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ['lhs', 'rhs']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Mult()


class _Ones(mx.operator.CustomOp):
    def __init__(self, n, m):
        super().__init__()
        self.value = np.ones((n, m), dtype=np.float32)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.array(self.value))


@mx.operator.register("t_ones")
class _OnesProp(mx.operator.CustomOpProp):
    def __init__(self, n, m):
        super().__init__()
        assert isinstance(n, str) and isinstance(m, str)     # MXNet passes strings
        self.n, self.m = int(n), int(m)

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [(self.n, self.m)], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Ones(self.n, self.m)


def test_nd_forward_backward_with_aux():
    x = mx.nd.array(np.random.uniform(-1, 1, (4, 5)))
    aux = mx.nd.zeros_like(x)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, aux, op_type='t_sqr')
    assert y.shape == (4, 5) and y.dtype == np.float32
    y.backward(mx.nd.ones_like(y) * 3)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy(), rtol=1e-6)
    assert (aux.asnumpy() == 1).all()       # auxiliary states are written in place


def test_need_top_grad_false_and_two_inputs():
    a = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    b = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(a, b, op_type='t_mult_no_grad')
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), a.asnumpy() * b.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(a.grad.asnumpy(), b.asnumpy())
    np.testing.assert_allclose(b.grad.asnumpy(), a.asnumpy())


def test_no_input_op_string_kwargs():
    x = mx.nd.Custom(n=3, m=2, op_type='t_ones')
    assert x.shape == (3, 2)
    np.testing.assert_array_equal(x.asnumpy(), np.ones((3, 2)))


def test_symbol_custom_executor_and_inference():
    data = mx.sym.Variable('data')
    op = mx.sym.Custom(data=data, name='sq', op_type='t_sqr')
    assert op.list_arguments() == ['data']
    assert op.list_auxiliary_states() == ['sq_aux']
    assert op.list_outputs() == ['sq_output']
    arg, out, aux = op.infer_shape(data=(2, 3))
    assert arg == [(2, 3)] and out == [(2, 3)] and aux == [(2, 3)]
    x = np.random.uniform(-1, 1, (2, 3)).astype(np.float32)
    exe = op.simple_bind(mx.cpu(), data=(2, 3))
    exe.arg_dict['data'][:] = x
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), x * x, rtol=1e-6)
    exe.backward(mx.nd.ones((2, 3)))
    np.testing.assert_allclose(exe.grad_dict['data'].asnumpy(), 2 * x, rtol=1e-6)
    assert (exe.aux_dict['sq_aux'].asnumpy() == 1).all()


def test_errors_surface_at_wait():
    class Bad(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise ValueError("boom")

    @mx.operator.register("t_bad")
    class BadProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Bad()

    y = mx.nd.Custom(mx.nd.ones((2,)), op_type='t_bad')      # returns at once
    with pytest.raises(MXNetError, match="boom"):
        y.wait_to_read()

    class BadInner(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            # fails in an op pushed by the user code, not in the code itself
            out_data[0][:] = mx.nd.linalg.potrf(mx.nd.zeros((2, 2)) - 1)

    @mx.operator.register("t_bad_inner")
    class BadInnerProp(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [(2, 2)], []

        def create_operator(self, ctx, shapes, dtypes):
            return BadInner()

    z = mx.nd.Custom(mx.nd.ones((2,)), op_type='t_bad_inner')
    with pytest.raises(MXNetError):
        z.asnumpy()
    # the engine keeps working
    assert (mx.nd.Custom(mx.nd.ones((2, 2)), mx.nd.ones((2, 2)),
                         op_type='t_mult_no_grad').asnumpy() == 1).all()


def test_blocking_read_inside_forward_and_naive_engine():
    class Sig(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0].asnumpy()        # user code may block on results
            self.assign(out_data[0], req[0], mx.nd.array(1 / (1 + np.exp(-x))))

    @mx.operator.register("t_sig")
    class SigProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Sig()

    x = mx.nd.array([0., 1., -2.])
    want = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(mx.nd.Custom(x + 0, op_type='t_sig').asnumpy(), want, rtol=1e-6)
    with mx.engine.naive():
        np.testing.assert_allclose(mx.nd.Custom(x, op_type='t_sig').asnumpy(), want, rtol=1e-6)


def test_in_gluon_block():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.Custom(x, x, op_type='t_mult_no_grad') + 1

    net = Net()
    x = mx.nd.array([[1., 2.], [3., 4.]])
    np.testing.assert_allclose(net(x).asnumpy(), x.asnumpy() ** 2 + 1)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), x.asnumpy() ** 2 + 1)
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy())


def test_numpy_op():
    class Identity(mx.operator.NumpyOp):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] * 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = out_grad[0] * 2

    with pytest.warns(UserWarning):
        op = Identity()
    s = op.get_symbol(mx.sym.Variable('X'), name='np_op')
    x = mx.nd.ones((4,)) * 3
    dx = mx.nd.zeros((4,))
    exe = s.bind(mx.cpu(), args=[x], args_grad={'X': dx})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 6 * np.ones(4))
    exe.backward(mx.nd.ones((4,)))
    np.testing.assert_allclose(dx.asnumpy(), 2 * np.ones(4))


def test_unregistered_op_type():
    with pytest.raises(MXNetError):
        mx.nd.Custom(mx.nd.ones((2,)), op_type='t_never_registered')


def test_executor_grad_req_dict_ignores_other_names_and_casts_head_grads():
    a = mx.sym.Variable('a')
    b = mx.sym.Variable('b')
    c = mx.sym.cast(a, dtype='float64') * mx.sym.cast(b, dtype='float64')
    ga = mx.nd.zeros((2,))
    exe = c.bind(mx.cpu(), args={'a': mx.nd.array([1., 2.]), 'b': mx.nd.array([3., 4.])},
                 args_grad={'a': ga}, grad_req={'a': 'write', 'not_an_argument': 'write'})
    exe.forward(is_train=True)
    assert exe.outputs[0].dtype == np.float64
    exe.backward([mx.nd.array([1., 1.])])         # float32 head gradient, float64 output
    np.testing.assert_allclose(ga.asnumpy(), [3., 4.])


def test_op_fixes_found_by_mxnets_operator_tests():
    # dot gradient with transpose flags on N-d operands (contract lhs's first axis)
    a = mx.nd.array(np.random.uniform(-1, 1, (4, 3, 2)))
    b = mx.nd.array(np.random.uniform(-1, 1, (4, 5)))
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(a, b, transpose_a=True)
    g = np.random.uniform(-1, 1, y.shape)
    y.backward(mx.nd.array(g))
    an, bn = a.asnumpy(), b.asnumpy()
    np.testing.assert_allclose(y.asnumpy(), np.tensordot(an, bn, axes=([0], [0])), rtol=1e-5)
    np.testing.assert_allclose(a.grad.asnumpy(),
                               np.moveaxis(np.tensordot(g, bn, axes=([2], [1])), 2, 0), rtol=1e-4)
    np.testing.assert_allclose(b.grad.asnumpy(), np.tensordot(an, g, axes=([1, 2], [0, 1])),
                               rtol=1e-4)
    # nanprod gradient: out / x, 0 at NaNs
    x = mx.nd.array([[1., np.nan, 2.], [3., 4., 5.]])
    x.attach_grad()
    with mx.autograd.record():
        p = mx.nd.nanprod(x, axis=1)
    p.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [[2., 0., 1.], [20., 15., 12.]])
    # integer arange casts start and step first, as MXNet (and numpy)
    np.testing.assert_array_equal(mx.nd.arange(1.3, 10.6, 1.3, dtype='int32').asnumpy(),
                                  np.arange(1.3, 10.6, 1.3, dtype=np.int32))
    # the deprecated Reshape(target_shape=...) with one inferred 0; 'half' is float16
    s = mx.sym.Reshape(mx.sym.Variable('data'), target_shape=(2, 0))
    assert s.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]
    assert mx.nd.zeros((1,), dtype='half').dtype == np.float16
    # reverse reshape inference: an unknown input dim from a known output
    net = mx.sym.elemwise_add(mx.sym.Variable('data').reshape((6, -1)), mx.sym.ones((6, 5)))
    arg, out, _ = net.infer_shape_partial(data=(2, 0, 5))
    assert arg[0] == (2, 3, 5) and out[0] == (6, 5)


@pytest.mark.parametrize("use_linear", [True, False])
def test_svm_output(use_linear):
    x_np = np.random.uniform(-2, 2, (6, 4)).astype(np.float32)
    l_np = np.random.randint(0, 4, (6,))
    y = mx.sym.SVMOutput(data=mx.sym.Variable('X'), label=mx.sym.Variable('L'),
                         use_linear=use_linear, margin=0.5, regularization_coefficient=2.0)
    grad = mx.nd.zeros((6, 4))
    exe = y.bind(mx.cpu(), args=[mx.nd.array(x_np), mx.nd.array(l_np)], args_grad={'X': grad})
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), x_np)
    exe.backward()
    m = np.equal(l_np.reshape(6, 1), range(4)).astype(np.float32) * 2 - 1
    if use_linear:
        want = -m * (0.5 - m * x_np > 0) * 2.0
    else:
        want = -2 * m * np.maximum(0.5 - m * x_np, 0) * 2.0
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6)


def test_executor_backward_ignores_unread_head_grad_of_shape_array():
    y = mx.sym.shape_array(mx.sym.var('x'))
    xg = mx.nd.ones((2, 3))
    exe = y.bind(mx.cpu(), args={'x': mx.nd.ones((2, 3))}, args_grad={'x': xg})
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((2, 3))])      # MXNet never reads it (shape_array has no gradient)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [2, 3])
    np.testing.assert_array_equal(xg.asnumpy(), np.zeros((2, 3)))


def test_operator_introspection():
    args = mx.operator.get_operator_arguments('Activation')
    assert isinstance(args, mx.operator.OperatorArguments)
    assert args.narg == 2 and args.names == ['data', 'act_type']
    assert args.types == ['NDArray-or-Symbol',
                          "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    names = mx.operator.get_all_registered_operators()
    assert 'Activation' in names and 'Custom' in names


# --------------------------------------------------------- storage types

class _SqrSparse(mx.operator.CustomOp):
    seen = []

    def forward(self, is_train, req, in_data, out_data, aux):
        _SqrSparse.seen.append((in_data[0].stype, out_data[0].stype, aux[0].stype))
        if in_data[0].stype == "default":
            aux[0][:] = 1
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])
        else:
            x = in_data[0]
            sq = mx.nd.sparse.csr_matrix((x.data * x.data, x.indices, x.indptr), shape=x.shape)
            self.assign(out_data[0], req[0], sq)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * mx.nd.sparse.elemwise_mul(in_data[0], out_grad[0]))


@mx.operator.register("sqr_sparse_aiond")
class _SqrSparseProp(mx.operator.CustomOpProp):
    def list_auxiliary_states(self):
        return ["aux"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def infer_storage_type(self, in_stype):
        if in_stype[0] == "default":
            return ["default"], ["default"], ["default"]
        return ["csr"], ["csr"], ["csr"]

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        if in_stype[0] == "default":
            return ["default"] * 5
        return ["default"], ["csr"], ["csr"], ["csr"], ["csr"]

    def create_operator(self, ctx, shapes, dtypes):
        return _SqrSparse()


def _csr(a):
    return mx.nd.array(a).tostype("csr")


def test_custom_op_storage_fallback_hands_dense_copies_and_writes_aux_back():
    """MXNet's storage fallback: a sparse aux state the prop declares
    'default' reaches forward as a dense copy, and what forward writes to it
    lands in the caller's (still sparse) aux state."""
    _SqrSparse.seen.clear()
    x = np.random.RandomState(0).uniform(-1, 1, (4, 5)).astype(np.float32)
    aux = _csr(np.zeros((4, 5), np.float32))
    y = mx.nd.Custom(mx.nd.array(x), aux, op_type="sqr_sparse_aiond")
    np.testing.assert_allclose(y.asnumpy(), x * x, rtol=1e-6)
    assert _SqrSparse.seen == [("default", "default", "default")]
    assert aux.stype == "csr"
    np.testing.assert_array_equal(aux.asnumpy(), np.ones((4, 5)))


def test_custom_op_declared_sparse_outputs_and_gradients():
    _SqrSparse.seen.clear()
    a = np.random.RandomState(1).uniform(-1, 1, (4, 5)).astype(np.float32)
    a[a < 0.2] = 0
    x = _csr(a)
    x.attach_grad()
    aux = _csr(np.zeros((4, 5), np.float32))
    with mx.autograd.record():
        y = mx.nd.Custom(x, aux, op_type="sqr_sparse_aiond")
    y.backward()
    assert isinstance(y, mx.nd.sparse.CSRNDArray)
    np.testing.assert_allclose(y.asnumpy(), a * a, rtol=1e-6)
    assert _SqrSparse.seen == [("csr", "csr", "csr")]
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * a, rtol=1e-6)


class _Ident(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])


@mx.operator.register("ident_dense_aiond")
class _IdentProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Ident()


def test_custom_op_without_infer_storage_type_refuses_sparse_inputs():
    """The default infer_storage_type allows only dense arrays, as MXNet's."""
    with pytest.raises(MXNetError, match="infer_storage_type"):
        mx.nd.Custom(_csr(np.eye(2, dtype=np.float32)), op_type="ident_dense_aiond")
    y = mx.nd.Custom(mx.nd.ones((2, 2)), op_type="ident_dense_aiond")
    np.testing.assert_array_equal(y.asnumpy(), np.ones((2, 2)))
