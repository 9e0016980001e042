"""mx.nd surface found missing by MXNet 1.9.1's test_ndarray: checked against numpy."""
import os

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def test_choose_and_fill_element_0index():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = np.array([2, 0, 1, 2])
    got = mx.nd.choose_element_0index(mx.nd.array(a), mx.nd.array(idx)).asnumpy()
    np.testing.assert_array_equal(got, a[np.arange(4), idx])
    val = np.array([9, 8, 7, 6], dtype=np.float32)
    want = a.copy()
    want[np.arange(4), idx] = val
    got = mx.nd.fill_element_0index(mx.nd.array(a), mx.nd.array(val), mx.nd.array(idx))
    np.testing.assert_array_equal(got.asnumpy(), want)


def test_split_v2_rcbrt_softmin():
    x = np.arange(30, dtype=np.float32).reshape(5, 6) + 1
    parts = mx.nd.split_v2(mx.nd.array(x), (1, 3, 5), axis=1)
    for p, q in zip(parts, np.split(x, (1, 3, 5), axis=1)):
        np.testing.assert_array_equal(p.asnumpy(), q)
    assert [p.shape for p in mx.nd.array(x).split_v2(3, axis=1)] == [(5, 2)] * 3
    with pytest.raises(ValueError):
        mx.nd.split_v2(mx.nd.array(x), 4, axis=1)
    np.testing.assert_allclose(mx.nd.rcbrt(mx.nd.array(x)).asnumpy(), 1 / np.cbrt(x), rtol=1e-6)
    e = np.exp(-(x - x.min(axis=1, keepdims=True)))
    np.testing.assert_allclose(mx.nd.array(x).softmin().asnumpy(),
                               e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_contrib_isinf_isnan_isfinite():
    d = mx.nd.array([np.inf, -np.inf, np.nan, 1.0])
    assert mx.nd.contrib.isinf(d).asnumpy().tolist() == [1, 1, 0, 0]
    assert mx.nd.contrib.isnan(d).asnumpy().tolist() == [0, 0, 1, 0]
    assert mx.nd.contrib.isfinite(d).asnumpy().tolist() == [0, 0, 0, 1]


def test_dlpack_shares_memory():
    a = mx.nd.array([1.0, 2.0, 3.0])
    b = mx.nd.from_dlpack(a.to_dlpack_for_read())
    np.testing.assert_array_equal(b.asnumpy(), [1, 2, 3])
    c = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(a))
    c[:] = 7
    np.testing.assert_array_equal(a.asnumpy(), [7, 7, 7])


def test_save_load_follow_np_shape_semantics(tmp_path):
    f = str(tmp_path / "a")
    with mx.np_shape(True):
        mx.nd.save(f, [mx.nd.array(np.ones((2, 0, 1))), mx.nd.ones(())])
        got = mx.nd.load(f)
        assert [g.shape for g in got] == [(2, 0, 1), ()]
    with pytest.raises(MXNetError, match="np shape semantics"):
        mx.nd.load(f)
    mx.nd.save(f, [mx.nd.ones((2,))])
    with mx.np_shape(True):
        with pytest.raises(MXNetError, match="not saved in np shape"):
            mx.nd.load(f)
    assert mx.nd.load(f)[0].shape == (2,)


def test_getstate_setstate_roundtrip_and_mxnet_bytes():
    a = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    b = mx.nd.zeros((1,))
    b.__setstate__(a.__getstate__())
    assert b.dtype == np.int32 and b.asnumpy().tolist() == [[1, 2], [3, 4]]
    # MXNet's state of mx.nd.arange(1, ctx=mx.gpu()): loads on the CPU here
    raw = bytearray(b'\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00'
                    b'\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
                    b'\x00\x00')
    b.__setstate__({"handle": raw})
    assert b.shape == (1,) and b.asnumpy().tolist() == [0.0]


def test_mxnet_argument_errors():
    x = mx.nd.ones((1, 2, 3))
    with pytest.raises(ValueError):
        mx.nd.moveaxis(x, [0, 1], [1, 1])
    with pytest.raises(MXNetError, match="Empty axes"):
        mx.nd.broadcast_like(x, x, lhs_axes=(), rhs_axes=())
    assert mx.nd.ones((2, 1)).broadcast_to(np.array([2, 4])).shape == (2, 4)
    assert mx.nd.ones((6,)).reshape_like(rhs=mx.nd.ones((2, 3))).shape == (2, 3)


def test_basic_indexing_slice_is_contiguous_matches_numpy():
    x = np.arange(6 * 7).reshape(6, 7)
    f = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    for key in [(slice(None), slice(2)), (slice(1, 2), slice(1, 4)), (slice(None, None, 2),
                slice(None)), (slice(1, 4), slice(None)), (slice(0, 1), slice(None, None, -1))]:
        assert f(key, x.shape) == x[key].flags.contiguous, key


def test_advanced_setitem_and_getitem_with_none_follow_numpy():
    a = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    key = (slice(None), None, [1, 2], None, [3, 4])
    x = mx.nd.array(a)
    np.testing.assert_array_equal(x[key].asnumpy(), a[key])
    v = np.arange(a[key].size, dtype=np.float32).reshape(a[key].shape)
    a[key] = v
    x[key] = mx.nd.array(v)
    np.testing.assert_array_equal(x.asnumpy(), a)


def test_freed_graph_is_constant_in_a_later_record():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        b = x + 1
        (b * 2).backward()
    with mx.autograd.record():
        b = b + 1          # b's graph was freed: a constant now, as in MXNet
        y = b * x
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3])


def test_cached_op_from_symbol():
    data = mx.sym.Variable("data")
    sym = mx.sym.FullyConnected(data, num_hidden=3, name="fc") + 2
    op = mx.nd.CachedOp(sym)
    d, w, b = mx.nd.ones((2, 4)), mx.nd.ones((3, 4)), mx.nd.zeros((3,))
    o = op(d, w, b)
    np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 6.0))
    out = mx.nd.zeros((2, 3))
    op(d, w, b, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 3), 6.0))


_ = os
