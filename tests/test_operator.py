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
