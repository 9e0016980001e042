"""Shape inference over partly known shapes (MXNet 1.9.1's FInferShape,
forward and backward), NumPy-shape semantics, and the JSON flag."""
import json

import numpy as np
import pytest

import aiond as mx


def _args(sym, **kw):
    arg, _, _ = sym.infer_shape(**kw) if kw else sym.infer_shape()
    return dict(zip(sym.list_arguments(), arg))


def test_fc_batch_comes_back_from_the_output():
    a = mx.sym.Variable('a', shape=(0, 10))
    # named: the automatic name depends on what earlier tests in the process made
    b = mx.sym.FullyConnected(data=a, num_hidden=21, name='fc')
    c = mx.sym.Variable('c', shape=(5, 0))
    shapes = _args(b + c)
    assert shapes['a'] == (5, 10)
    assert shapes['c'] == (5, 21)
    assert shapes['fc_weight'] == (21, 10)


def test_conv_back_infers_batch_and_stride1_spatial_dims():
    a = mx.sym.Variable('a', shape=(0, 10, 0, 0))
    b = mx.sym.Convolution(data=a, num_filter=21, kernel=(3, 3), dilate=(1, 1), pad=(1, 1))
    c = mx.sym.Variable('c', shape=(5, 21, 32, 32))
    assert _args(b + c)['a'] == (5, 10, 32, 32)
    # stride 2: the spatial dims cannot be recovered
    b2 = mx.sym.Convolution(data=a, num_filter=21, kernel=(3, 3), stride=(2, 2), pad=(1, 1))
    arg, _, _ = (b2 + mx.sym.Variable('c', shape=(5, 21, 16, 16))).infer_shape_partial()
    assert arg[0] == (5, 10, 0, 0)


def test_concat_and_slicechannel_fill_inputs_from_outputs():
    a = mx.sym.Variable('a', shape=(0, 10))
    b = mx.sym.Variable('b', shape=(0, 5))
    c = mx.sym.Concat(a, b, num_args=2, dim=1)
    d = mx.sym.Variable('d', shape=(2, 0)) + c
    shapes = _args(d)
    assert (shapes['a'], shapes['b'], shapes['d']) == ((2, 10), (2, 5), (2, 15))

    a = mx.sym.Variable('a', shape=(0, 15, 0))
    s = mx.sym.SliceChannel(data=a, num_outputs=3, squeeze_axis=False)
    assert _args(s[1] + mx.sym.Variable('c', shape=(3, 5, 2)))['a'] == (3, 15, 2)
    a = mx.sym.Variable('a', shape=(0, 10))
    s = mx.sym.SliceChannel(data=a, num_outputs=10, axis=1, squeeze_axis=True)
    assert _args(s[1] + mx.sym.Variable('c', shape=(5,)))['a'] == (5, 10)


def test_identity_with_attr_like_rhs_carries_shape_back():
    w = mx.sym.Variable("weight")
    wt = mx.sym.broadcast_add(w, mx.sym.Variable("wshift", shape=(1,)))
    wt = mx.sym._internal._identity_with_attr_like_rhs(wt, w)
    net = mx.sym.FullyConnected(data=mx.sym.Variable("data"), weight=wt, num_hidden=11,
                                no_bias=True)
    assert _args(net, data=(7, 100))['weight'] == (11, 100)
    # imperative: lhs's values, zero gradient for rhs
    x, y = mx.nd.array([1., 2.]), mx.nd.array([3., 4.])
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = mx.nd._internal._identity_with_attr_like_rhs(x, y)
    z.backward(mx.nd.array([5., 6.]))
    assert z.asnumpy().tolist() == [1., 2.]
    assert x.grad.asnumpy().tolist() == [5., 6.] and y.grad.asnumpy().tolist() == [0., 0.]


def test_unary_ops_infer_backward_through_cast():
    data = mx.sym.Variable('data', shape=(1, 0, 0, 0))
    weight = mx.sym.Variable('weight')
    conv = mx.sym.Convolution(data=mx.sym.cast(data, dtype='float16'),
                              weight=mx.sym.cast(weight, dtype='float16'), pad=(3, 3),
                              num_filter=64, stride=(2, 2), no_bias=True, kernel=(7, 7))
    arg, _, _ = conv.infer_shape_partial()
    assert dict(zip(conv.list_arguments(), arg))['weight'] == (64, 0, 7, 7)


def test_cast_output_dtype_known_without_its_input():
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data=mx.sym.Cast(data=data, dtype='float32'), num_hidden=4)
    mlp = mx.sym.SoftmaxOutput(data=fc, name='softmax')
    arg, out, _ = mlp.infer_type_partial()
    assert arg == [None, np.float32, np.float32, np.float32]
    assert out == [np.float32]


def test_a_graph_conflict_found_through_backward_inference_raises():
    v = mx.sym.Variable('V')
    s3 = mx.sym.transpose(v) + (mx.sym.Variable('x') + v)
    with pytest.raises(mx.MXNetError):
        s3.infer_shape(x=(2, 3))
    with pytest.raises(mx.MXNetError):
        s3.simple_bind(ctx=mx.cpu(), x=(2, 3), grad_req='null')


def test_where_needs_a_known_condition():
    w = mx.sym.where(mx.sym.Variable("cond"), mx.sym.Variable("x"), mx.sym.Variable("y"))
    assert w.infer_shape_partial(cond=(0, 2), x=(0, 2), y=(0, 2))[1] == [()]
    assert w.infer_shape_partial(cond=(3, 2), x=(0, 2), y=(0, 2))[1] == [(3, 2)]


def test_np_shape_semantics():
    data = mx.sym.var("data")
    ret = mx.sym.sin(data)
    assert ret.infer_shape_partial()[0] == [()]
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    z = mx.sym.batch_dot(x, y)
    with mx.np_shape(True):
        assert ret.infer_shape_partial()[0] == [None]
        assert z.infer_shape_partial(x=(-1, 3, 4), y=(-1, 4, 5))[1] == [(-1, 3, 5)]
        assert z.infer_shape_partial(x=(-1, 3, 4), y=(-1, -1, 5))[1] == [None]
        # 0 is a real, zero-size dimension
        assert z.infer_shape(x=(0, 3, 4), y=(0, 4, 5))[1] == [(0, 3, 5)]
        fc = mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=3)
        assert fc.infer_shape(d=(0, 4))[0] == [(0, 4), (3, 4), (3,)]
    assert z.infer_shape_partial(x=(0, 3, 4), y=(0, 4, 5))[1] == [(0, 3, 5)]


def test_json_is_np_shape_flag_and_legacy_load():
    def net():
        weight = mx.sym.var('weight', shape=(128, 0))
        return mx.sym.FullyConnected(mx.sym.var('data'), weight, num_hidden=128)
    legacy = net().tojson()
    assert "is_np_shape" not in json.loads(legacy)["attrs"]
    with mx.np_shape(True):
        flagged = json.loads(net().tojson())
        assert flagged["attrs"]["is_np_shape"] == ["int", 1]
        # a legacy graph loaded under NumPy shapes: its 0s still mean "unknown"
        loaded = mx.sym.load_json(legacy)
        arg, out, _ = loaded.infer_shape(data=(10, 784))
        assert arg[1] == (128, 784) and out == [(10, 128)]
    arg, out, _ = mx.sym.load_json(legacy).infer_shape(data=(10, 784))
    assert arg[1] == (128, 784)


def test_bool_of_symbol_raises_base_error():
    from aiond.base import NotImplementedForSymbol
    with pytest.raises(NotImplementedForSymbol):
        bool(mx.sym.Variable('x'))


def test_numpy_int_params_are_written_plainly():
    a = mx.sym.Variable('a')
    b = mx.sym.transpose(a, axes=tuple(np.array([1, 0])))
    assert b.list_attr()['axes'] == '(1, 0)'
    out = b.eval(ctx=mx.current_context(), a=mx.nd.array([[1, 2, 3]]))[0]
    assert out.shape == (3, 1)


def test_transpose_and_init_ops_infer_back_and_run_with_the_inferred_shape():
    o1 = mx.sym.ones(shape=[2, 3])
    o2 = mx.sym.ones(shape=[-1, -1])
    b = o1 + mx.sym.transpose(o2)
    assert b.infer_shape() == ([], [(2, 3)], [])
    y = b.bind(mx.cpu(), args={}).forward()[0]
    assert y.shape == (2, 3) and (y.asnumpy() == 2).all()
    b = mx.sym.ones(shape=[2, -1]) + mx.sym.transpose(mx.sym.zeros(shape=[3, -1]))
    assert b.bind(mx.cpu(), args={}).forward()[0].asnumpy().tolist() == [[1.] * 3] * 2


def test_slice_keeps_unknown_dims_unknown():
    v = mx.sym.var(name="data", shape=(0, 20))
    out = mx.sym.slice(v, begin=(None, 3), end=(5, 10))
    assert out.infer_shape_partial()[1] == [(0, 7)]
    out = mx.sym.slice_axis(mx.sym.var("d", shape=(10, 0)), axis=0, begin=0, end=5)
    assert out.infer_shape_partial()[1] == [(5, 0)]
    with mx.np_shape():
        v = mx.sym.var(name="data", shape=(-1, 20))
        assert mx.sym.slice(v, begin=(2, 3), end=(None, 10)).infer_shape_partial()[1] \
            == [(-1, 7)]


def test_reshape_infers_its_input_back_from_its_output():
    net = mx.sym.elemwise_add(mx.sym.var('data').reshape((0, -1)),
                              mx.sym.ones(shape=(2, 75)))
    arg, out, _ = net.infer_shape(data=(2, 0, 5, 5))
    assert arg == [(2, 3, 5, 5)] and out == [(2, 75)]
    # two unknown dims: nothing to say
    arg, _, _ = net.infer_shape_partial(data=(0, 0, 5, 5))
    assert arg == [(0, 0, 5, 5)]


def test_reshape_legacy_target_shape():
    net = mx.sym.load_json(mx.sym.Reshape(mx.sym.Variable("data"), target_shape=(2, 0)).tojson())
    assert net.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]
    x = mx.nd.arange(24).reshape((2, 3, 4))
    y = mx.nd.Reshape(x, target_shape=(5, 0), keep_highest=True)
    assert y.shape == (2, 12) and y.asnumpy().ravel().tolist() == list(range(24))
    with pytest.raises(mx.MXNetError, match="target_shape"):
        mx.nd.Reshape(x, target_shape=(5, 5))


def test_bilinear_upsampling_names_and_infers_its_weight():
    up = mx.sym.UpSampling(mx.sym.Variable('data'), mx.sym.Variable('w'),
                           sample_type='bilinear', scale=2, num_filter=3, num_args=2, name='up')
    assert up._outputs[0][0].input_names() == ['data', 'weight']
    args, outs, _ = up.infer_shape_partial(data=(1, 3, 4, 4))
    assert args == [(1, 3, 4, 4), (3, 1, 4, 4)] and outs == [(1, 3, 8, 8)]


def test_sampler_without_inputs_ignores_keywords_and_takes_its_shape_from_the_graph():
    # nnvm's Compose matches keywords only for ops with inputs, and MXNet 1.x
    # reads a sampler's shape () as unknown (MXNet's test_random::test_random)
    X = mx.sym.Variable("X")
    Y = mx.sym.random.normal(loc=10, scale=0.5, data=mx.sym.ones((2, 2)), dtype="float16") + X
    assert Y.list_arguments() == ["X"]
    args, outs, _ = Y.infer_shape(X=(3, 4))
    assert outs == [(3, 4)]
    x = mx.nd.zeros((3, 4), dtype="float16")
    g = mx.nd.zeros((3, 4), dtype="float16")
    exe = Y.bind(mx.current_context(), {"X": x}, {"X": g})
    mx.random.seed(128)
    exe.forward(is_train=True)
    exe.backward(exe.outputs[0])
    out = exe.outputs[0].asnumpy()
    assert out.dtype == np.float16 and out.shape == (3, 4)
    assert abs(float(out.mean()) - 10) < 1.5
    np.testing.assert_array_equal(g.asnumpy(), out)
    # a known shape still wins, and an op with inputs still rejects strangers
    assert mx.sym.random.normal(shape=(5,)).infer_shape()[1] == [(5,)]
    with pytest.raises(mx.base.MXNetError):
        mx.sym.relu(data=X, bogus=X)
