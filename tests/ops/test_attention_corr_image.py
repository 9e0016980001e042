"""interleaved attention matmuls, Correlation and image.normalize against
numpy references; gradients against finite differences."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.test_utils import check_numeric_gradient


def _heads(x, h, parts):
    L, B, E = x.shape
    d = E // (parts * h)
    v = x.reshape(L, B * h, parts, d)
    return [v[:, :, i].transpose(1, 0, 2) for i in range(parts)], d


def test_selfatt_qk_and_valatt():
    L, B, H, D = 4, 2, 3, 5
    qkv = np.random.normal(size=(L, B, 3 * H * D))
    (q, k, v), _ = _heads(qkv, H, 3)
    s = mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.array(qkv, dtype="float64"), heads=H)
    np.testing.assert_allclose(s.asnumpy(), q @ k.transpose(0, 2, 1) / np.sqrt(D), rtol=1e-10)
    att = np.random.uniform(size=(B * H, L, L))
    o = mx.nd.contrib.interleaved_matmul_selfatt_valatt(
        mx.nd.array(qkv, dtype="float64"), mx.nd.array(att, dtype="float64"), heads=H)
    want = (att @ v).transpose(1, 0, 2).reshape(L, B, H * D)
    np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-10)
    check_numeric_gradient(
        lambda a, b: mx.nd.contrib.interleaved_matmul_selfatt_valatt(
            a, mx.nd.contrib.interleaved_matmul_selfatt_qk(a, heads=1) + b, heads=1),
        [np.random.normal(size=(3, 1, 6)), np.random.normal(size=(1, 3, 3))],
        numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_encdec_qk_and_valatt_gradients():
    q = np.random.normal(size=(3, 2, 4))
    kv = np.random.normal(size=(5, 2, 8))
    check_numeric_gradient(
        lambda a, b: mx.nd.contrib.interleaved_matmul_encdec_valatt(
            b, mx.nd.contrib.interleaved_matmul_encdec_qk(a, b, heads=2), heads=2),
        [q, kv], numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_correlation_forward_and_errors():
    a = np.random.uniform(size=(1, 2, 6, 6))
    b = np.random.uniform(size=(1, 2, 6, 6))
    y = mx.nd.Correlation(mx.nd.array(a), mx.nd.array(b), kernel_size=1, max_displacement=1,
                          pad_size=1).asnumpy()
    assert y.shape == (1, 9, 6, 6)
    pa, pb = (np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))) for x in (a, b))
    # centre displacement (channel 4): mean over channels of a * b
    np.testing.assert_allclose(y[0, 4], (a * b).mean(axis=1)[0], rtol=1e-5)
    # displacement (+1, 0) (channel 5): b shifted one column right
    np.testing.assert_allclose(y[0, 5], (pa[:, :, 1:7, 1:7] * pb[:, :, 1:7, 2:8]).mean(1)[0],
                               rtol=1e-5)
    with pytest.raises(MXNetError):
        mx.nd.Correlation(mx.nd.array(a), mx.nd.array(b), kernel_size=7)
    check_numeric_gradient(
        lambda u, v: mx.nd.Correlation(u, v, kernel_size=3, max_displacement=1, pad_size=1,
                                       is_multiply=True),
        [a[:, :1, :4, :4], b[:, :1, :4, :4]], numeric_eps=1e-4, rtol=1e-3, atol=1e-5,
        dtype=np.float64)


def test_image_normalize_nd_and_sym():
    x = np.random.uniform(size=(2, 3, 4, 4)).astype(np.float32)
    y = mx.nd.image.normalize(mx.nd.array(x), mean=(0, 1, 2), std=(3, 2, 1)).asnumpy()
    m = np.array([0, 1, 2.]).reshape(3, 1, 1)
    s = np.array([3, 2, 1.]).reshape(3, 1, 1)
    np.testing.assert_allclose(y, (x - m) / s, rtol=1e-6)
    sym = mx.sym.image.normalize(mx.sym.Variable("d"), mean=1.0, std=2.0)
    check_numeric_gradient(sym, [x[0]], numeric_eps=1e-3, rtol=1e-2, atol=1e-4)
    with pytest.raises(MXNetError):
        mx.nd.image.normalize(mx.nd.ones((2, 4, 4)))
