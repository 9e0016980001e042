"""MXNet 1.9.1's remaining int8 ops: quantized_elemwise_add/mul,
quantized_concat, quantized_embedding, quantized_batch_norm and
quantize_asym. Expected values were recorded from MXNet 1.9.1's CPU (oneDNN)
build on the same inputs (quantized_elemwise_mul through a bound symbol:
MXNet's imperative call of that op fails its own shape check)."""
import numpy as np
import pytest

import aiond as mx

nd = mx.nd


@pytest.fixture(autouse=True)
def _own_names():
    # node names start from 0 here and the global counters are left as found
    with mx.name.NameManager():
        yield


def f(v):
    return nd.array([v])


A = [[-127, -50, 0], [3, 64, 127]]
B = [[100, -20, 7], [-128, 33, 1]]
U = [[0, 17, 255], [128, 200, 9]]


def _i8(x):
    return nd.array(x, dtype="int8")


def _u8(x):
    return nd.array(x, dtype="uint8")


def _check(outs, dtype, values, lo, hi):
    out, omin, omax = outs
    assert out.dtype == np.dtype(dtype)
    assert out.asnumpy().tolist() == values
    assert (omin.asscalar(), omax.asscalar()) == pytest.approx((lo, hi))


def test_quantized_elemwise_add_int32_and_calibrated():
    _check(nd.contrib.quantized_elemwise_add(_i8(A), _i8(B), f(-2.0), f(3.0), f(-1.0), f(0.5)),
           "int32", [[-1183221248, -715827904, 29475268], [-501079552, 947419264, 1608507392]],
           -4.0, 4.0)
    _check(nd.contrib.quantized_elemwise_add(_i8(A), _i8(B), f(-2.0), f(3.0), f(-1.0), f(0.5),
                                             min_calib_range=-3.0, max_calib_range=3.0),
           "int8", [[-94, -57, 2], [-40, 75, 127]], -3.0, 3.0)


def test_quantized_elemwise_add_mixed_and_uint8():
    _check(nd.contrib.quantized_elemwise_add(_i8(A), _u8(U), f(-2.0), f(3.0), f(0.0), f(0.5),
                                             min_calib_range=-3.0, max_calib_range=3.0),
           "int8", [[-127, -49, 21], [14, 81, 127]], -3.0, 3.0)
    _check(nd.contrib.quantized_elemwise_add(_u8(U), _u8(U), f(0.0), f(0.5), f(0.0), f(2.0),
                                             min_calib_range=0.0, max_calib_range=2.5),
           "uint8", U, 0.0, 2.5)


def test_quantized_elemwise_add_value_meaning():
    # dequantized, the int8 sum is the float sum (to a quantization step)
    a = np.array([-1.0, 0.25, 0.5], np.float32)
    b = np.array([0.5, -0.5, 1.0], np.float32)
    qa, alo, ahi = nd.contrib.quantize_v2(nd.array(a), out_type="int8")
    qb, blo, bhi = nd.contrib.quantize_v2(nd.array(b), out_type="int8")
    out, lo, hi = nd.contrib.quantized_elemwise_add(qa, qb, alo, ahi, blo, bhi,
                                                    min_calib_range=-2.0, max_calib_range=2.0)
    np.testing.assert_allclose(out.asnumpy() * (2.0 / 127.5), a + b, atol=0.03)


def test_quantized_elemwise_add_errors():
    with pytest.raises(mx.base.MXNetError, match="equal shapes"):
        nd.contrib.quantized_elemwise_add(_i8(A), _i8([[1, 2]]), f(-1.), f(1.), f(-1.), f(1.))
    with pytest.raises(mx.base.MXNetError, match="lhs must be int8 or uint8"):
        nd.contrib.quantized_elemwise_add(nd.array(A), _i8(B), f(-1.), f(1.), f(-1.), f(1.))
    with pytest.raises(mx.base.MXNetError, match=r"lhs_min must have shape \(1,\)"):
        nd.contrib.quantized_elemwise_add(_i8(A), _i8(B), nd.array([1., 2.]), f(1.), f(-1.),
                                          f(1.))


def _mul(**kw):
    s = mx.sym.contrib.quantized_elemwise_mul(*[mx.sym.var(n) for n in "lrabcd"], **kw)
    e = s.bind(mx.cpu(), {"l": _i8(A), "r": _i8(B), "a": f(-2.), "b": f(3.), "c": f(-1.),
                          "d": f(0.5)})
    return s, e.forward()


def test_quantized_elemwise_mul_matches_mxnet():
    s, outs = _mul()
    assert s.list_outputs() == ["quantized_elemwise_mul0_output",
                                "quantized_elemwise_mul0_min_output",
                                "quantized_elemwise_mul0_max_output"]
    _check(outs, "int32", [[-12700, 1000, 0], [-384, 2112, 127]], -399432.75, 399432.75)
    _, outs = _mul(min_calib_range=-1.5, max_calib_range=1.5)
    # -199.2 does not fit int8: MXNet's cast keeps its low 8 bits (57)
    _check(outs, "int8", [[57, 15, 0], [-6, 33, 1]], -1.5, 1.5)
    s, outs = _mul(enable_float_output=True)
    assert len(outs) == 1 and s.list_outputs() == ["quantized_elemwise_mul2_output"]
    np.testing.assert_allclose(outs[0].asnumpy(), [[-2.3437140, 0.1845444, 0.0],
                                                   [-0.0708650, 0.3897578, 0.0234371]],
                               rtol=2e-5)
    # imperative calls work too (and give what the graph gives)
    out = nd.contrib.quantized_elemwise_mul(_i8(A), _i8(B), f(-2.), f(3.), f(-1.), f(.5))
    assert out[0].asnumpy().tolist() == [[-12700, 1000, 0], [-384, 2112, 127]]
    out = nd.contrib.quantized_elemwise_mul(_i8(A), _i8(B), f(-2.), f(3.), f(-1.), f(.5),
                                            enable_float_output=True)
    assert isinstance(out, nd.NDArray) and out.dtype == np.float32


def test_quantized_elemwise_mul_errors():
    with pytest.raises(mx.base.MXNetError, match="does not broadcast"):
        nd.contrib.quantized_elemwise_mul(_i8(A), _i8([[1, 2, 3]]), f(-1.), f(1.), f(-1.),
                                          f(1.))
    with pytest.raises(mx.base.MXNetError, match="rhs must be int8"):
        nd.contrib.quantized_elemwise_mul(_i8(A), _u8(U), f(-1.), f(1.), f(-1.), f(1.))


def test_quantized_concat():
    _check(nd.contrib.quantized_concat(_i8(A), _i8(B), f(-2.0), f(3.0), f(-1.0), f(0.5),
                                       num_args=2, dim=1),
           "int8", [[-127, -50, 0, 33, -7, 2], [3, 64, 127, -43, 11, 0]], -2.0, 3.0)
    _check(nd.contrib.quantized_concat(_u8(U), _i8(A), f(0.0), f(0.5), f(-1.0), f(1.0),
                                       num_args=2, dim=0),
           "int8", [[0, 4, 64], [32, 50, 2], [-127, -50, 0], [3, 64, 127]], -1.0, 1.0)
    s = mx.sym.contrib.quantized_concat(*[mx.sym.var(n, dtype="int8" if n in "ab" else None)
                                          for n in "abcdef"], num_args=2, dim=1)
    assert s.list_arguments() == list("abcdef")
    assert s.infer_shape(a=(2, 3), b=(2, 4))[1] == [(2, 7), (1,), (1,)]
    s = mx.sym.contrib.quantized_elemwise_add(*[mx.sym.var(n, dtype="int8" if n in "ab" else None)
                                                for n in "abcdef"])
    assert s.infer_shape(a=(2, 3))[0] == [(2, 3), (2, 3), (1,), (1,), (1,), (1,)]
    with pytest.raises(mx.base.MXNetError, match="3 inputs per array"):
        nd.contrib.quantized_concat(_i8(A), _i8(B), f(-2.0), f(3.0), dim=1)
    with pytest.raises(mx.base.MXNetError, match="may differ only on dim 0"):
        nd.contrib.quantized_concat(_i8(A), _i8([[1, 2]]), f(-1.), f(1.), f(-1.), f(1.),
                                    num_args=2, dim=0)


def test_quantized_embedding():
    w = _i8([[1, -2, 3], [4, 5, -6], [7, 8, 9], [-10, 11, 12]])
    _check(nd.contrib.quantized_embedding(nd.array([[0, 3], [9, -1]]), w, f(-0.5), f(0.7),
                                          input_dim=4, output_dim=3),
           "int8", [[[1, -2, 3], [-10, 11, 12]], [[-10, 11, 12], [1, -2, 3]]], -0.5, 0.7)
    s = mx.sym.contrib.quantized_embedding(mx.sym.var("d"), mx.sym.var("w", dtype="int8"),
                                           input_dim=4, output_dim=3)
    assert s.infer_shape(d=(2, 5))[0][1:] == [(4, 3), (1,), (1,)]
    with pytest.raises(mx.base.MXNetError, match="int8 weight"):
        nd.contrib.quantized_embedding(nd.array([0]), nd.ones((4, 3)), f(-1.), f(1.),
                                       input_dim=4, output_dim=3)
    with pytest.raises(mx.base.MXNetError, match=r"expected \(5, 3\)"):
        nd.contrib.quantized_embedding(nd.array([0]), w, f(-1.), f(1.), input_dim=5,
                                       output_dim=3)


_BN = (nd.array([0.5, 2.0]), nd.array([0.1, -0.2]), nd.array([0.2, -0.1]), nd.array([1.5, 0.5]))


def test_quantized_batch_norm():
    x = _i8([[[[-100, 20]], [[5, 127]]]])
    _check(nd.contrib.quantized_batch_norm(x, *_BN, f(-1.0), f(2.0), min_calib_range=-4.0,
                                           max_calib_range=4.0),
           "int8", [[[[-20, 5]], [[10, 127]]]], -4.0, 4.0)
    xu = _u8([[[[0, 200]], [[77, 255]]]])
    _check(nd.contrib.quantized_batch_norm(xu, *_BN, f(0.0), f(2.0), eps=0.01,
                                           min_calib_range=-4.0, max_calib_range=4.0),
           "int8", [[[[1, 21]], [[55, 127]]]], -4.0, 4.0)
    s = mx.sym.contrib.quantized_batch_norm(mx.sym.var("data", dtype="int8"), name="qbn",
                                            min_calib_range=-4.0, max_calib_range=4.0)
    assert s.list_auxiliary_states() == ["qbn_moving_mean", "qbn_moving_var"]
    args, outs, auxs = s.infer_shape(data=(1, 2, 1, 2))
    assert args[1:] == [(2,), (2,), (1,), (1,)] and auxs == [(2,), (2,)]
    e = s.bind(mx.cpu(), {"data": x, "qbn_gamma": _BN[0], "qbn_beta": _BN[1],
                          "qbn_min_data": f(-1.0), "qbn_max_data": f(2.0)},
               aux_states={"qbn_moving_mean": _BN[2], "qbn_moving_var": _BN[3]})
    assert e.forward()[0].asnumpy().tolist() == [[[[-20, 5]], [[10, 127]]]]
    with pytest.raises(mx.base.MXNetError, match="needs min_calib_range"):
        nd.contrib.quantized_batch_norm(x, *_BN, f(-1.0), f(2.0))
    with pytest.raises(mx.base.MXNetError, match="int8/uint8 data"):
        nd.contrib.quantized_batch_norm(nd.ones((1, 2, 1, 2)), *_BN, f(-1.0), f(2.0),
                                        min_calib_range=-4.0, max_calib_range=4.0)


def test_quantize_asym():
    xf = nd.array([[[-1.0, 0.25, 2.0], [0.5, 1.5, -0.75]]])
    _check(nd.contrib.quantize_asym(xf), "uint8", [[[0, 106, 255], [128, 212, 21]]], 85.0, 85.0)
    _check(nd.contrib.quantize_asym(xf, min_calib_range=-0.5, max_calib_range=1.0),
           "uint8", [[[0, 128, 255], [170, 255, 0]]], 170.0, 85.0)
    out, scale, shift = nd.contrib.quantize_asym(_i8([[-128, 0, 127]]))
    assert out.asnumpy().tolist() == [[0, 128, 255]]
    assert (scale.asscalar(), shift.asscalar()) == (1.0, 128.0)
    s = mx.sym.contrib.quantize_asym(mx.sym.var("x"), name="qa")
    assert s.list_outputs() == ["qa_output", "qa_scale", "qa_shift"]
    with pytest.raises(mx.base.MXNetError, match="min < max"):
        nd.contrib.quantize_asym(nd.ones((2, 2)))[0].asnumpy()  # the range is the data's


def _qrnn_inputs(D):
    T, N, C, H = 3, 1, 3, 2
    n = D * 4 * H * (C + H) + D * 8 * H
    w = nd.array((np.arange(n) % 7 - 3) / 5.0)
    data = np.array([[[-1.0, 0.5, 0.25]], [[0.75, -0.5, 1.0]], [[0.0, 0.3, -0.6]]], np.float32)
    q = nd.array(np.rint(data * 64 + 64), dtype="uint8")
    return q, w, nd.array(np.full((D, N, H), 0.1)), nd.array(np.full((D, N, H), -0.2))


def test_quantized_rnn_matches_mxnet():
    # uint8 data with scale 64, shift 64; the hidden states come out on that grid
    q, w, st, ce = _qrnn_inputs(1)
    out, hy, cy = nd.contrib.quantized_rnn(q, w, st, ce, f(64.0), f(64.0), state_size=2,
                                           num_layers=1, mode="lstm", state_outputs=True)
    assert out.asnumpy().tolist() == [[[-0.203125, 0.140625]], [[-0.375, -0.03125]],
                                      [[0.0, -0.03125]]]
    assert hy.asnumpy().tolist() == [[[0.0, -0.03125]]]
    np.testing.assert_allclose(cy.asnumpy(), [[[-0.0001622, -0.0438247]]], atol=1e-6)
    q, w, st, ce = _qrnn_inputs(2)
    out, hy, cy = nd.contrib.quantized_rnn(q, w, st, ce, f(64.0), f(64.0), state_size=2,
                                           num_layers=1, bidirectional=True, mode="lstm",
                                           state_outputs=True)
    assert out.asnumpy().tolist() == [[[-0.265625, -0.203125, 0.0, -0.171875]],
                                      [[-0.453125, -0.234375, -0.03125, 0.140625]],
                                      [[-0.34375, -0.3125, -0.21875, 0.0625]]]
    np.testing.assert_allclose(cy.asnumpy(), [[[-1.0515672, -0.6512516]],
                                              [[-0.010286, -0.2653686]]], atol=1e-6)


def test_quantized_rnn_close_to_float_lstm():
    rs = np.random.RandomState(0)
    T, N, C, H, L = 5, 2, 8, 6, 2
    data = rs.uniform(-1, 1, (T, N, C)).astype(np.float32)
    n = 4 * H * (C + H) + 4 * H * (H + H) + L * 8 * H
    w = nd.array(rs.uniform(-1, 1, (n,)))
    st, ce = nd.array(rs.uniform(-1, 1, (L, N, H))), nd.array(rs.uniform(-1, 1, (L, N, H)))
    scale = np.float32(128.0) / (data.max() - data.min())
    shift = np.float32(128.0) - data.max() * scale
    q = nd.array((data * scale + shift + np.float32(0.5)).astype(np.uint8), dtype="uint8")
    qo = nd.contrib.quantized_rnn(q, w, st, ce, f(scale), f(shift), state_size=H,
                                  num_layers=L, mode="lstm")
    ref = nd.RNN(nd.array(data), w, st, ce, state_size=H, num_layers=L, mode="lstm")
    assert qo.shape == ref.shape == (T, N, H)
    assert np.mean((qo.asnumpy() - ref.asnumpy()) ** 2) < 1e-3   # MXNet's own bound
    s = mx.sym.contrib.quantized_rnn(mx.sym.var("d", dtype="uint8"), state_size=H,
                                     num_layers=L, mode="lstm", state_outputs=True, name="qr")
    assert s.list_outputs() == ["qr_output", "qr_state_output", "qr_statecell_ouput"]
    assert s.infer_shape(d=(T, N, C))[0][1:] == [(n,), (L, N, H), (L, N, H), (1,), (1,)]


def test_quantized_rnn_errors():
    q, w, st, ce = _qrnn_inputs(1)
    with pytest.raises(mx.base.MXNetError, match="only supports LSTM"):
        nd.contrib.quantized_rnn(q, w, st, ce, f(64.0), f(64.0), state_size=2, num_layers=1,
                                 mode="gru")
    with pytest.raises(mx.base.MXNetError, match="only supports uint8 input"):
        nd.contrib.quantized_rnn(q.astype("float32"), w, st, ce, f(64.0), f(64.0),
                                 state_size=2, num_layers=1, mode="lstm")


def test_quantized_flatten_of_1d_and_smooth_distribution():
    out, _, _ = nd.contrib.quantized_flatten(_i8([1, 2, 3]), f(-1.0), f(1.0))
    assert out.shape == (3, 1)          # as Flatten (and MXNet) give a 1-D array
    from aiond.contrib import quantization as q
    with pytest.raises(ValueError, match="All entries are 0"):
        q._smooth_distribution(np.zeros(2), eps=1e-3)
    h = q._smooth_distribution(np.array([0, 0, 1, 0, 0]), eps=1e-3)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, [1e-3, 1e-3, 1 - 4e-3, 1e-3, 1e-3], rtol=1e-6)
    assert mx.contrib.quant is q
