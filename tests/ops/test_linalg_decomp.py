"""linalg.gelqf and linalg.syevd: factorisations and gradients."""
import numpy as np

import aiond as mx
from aiond.test_utils import check_numeric_gradient


def test_gelqf_matches_mxnet_example_and_reconstructs():
    a = np.array([[1., 2., 3.], [4., 5., 6.]])
    q, l = mx.nd.linalg.gelqf(mx.nd.array(a, dtype="float64"))
    np.testing.assert_allclose(q.asnumpy(), [[-0.26726124, -0.53452248, -0.80178373],
                                             [0.87287156, 0.21821789, -0.43643578]], atol=1e-7)
    np.testing.assert_allclose(l.asnumpy(), [[-3.74165739, 0.], [-8.55235974, 1.96396101]],
                               atol=1e-7)
    b = np.random.normal(size=(3, 2, 4))
    q, l = mx.nd.linalg.gelqf(mx.nd.array(b, dtype="float64"))
    np.testing.assert_allclose(np.matmul(l.asnumpy(), q.asnumpy()), b, atol=1e-10)


def test_gelqf_gradient():
    x = mx.sym.Variable("x")
    q, l = mx.sym.linalg.gelqf(x)
    sym = mx.sym.broadcast_add(q, mx.sym.sum(mx.sym.BlockGrad(l), axis=(), keepdims=True) * 0.0)
    check_numeric_gradient(sym, [np.random.normal(0, 10, (3, 5))], numeric_eps=1e-6,
                           rtol=1e-5, atol=1e-6, dtype=np.float64)


def test_syevd_example_and_gradient():
    a = np.array([[1., 2.], [2., 4.]])
    u, lam = mx.nd.linalg.syevd(mx.nd.array(a, dtype="float64"))
    np.testing.assert_allclose(u.asnumpy(), [[0.89442718, -0.44721359],
                                             [0.44721359, 0.89442718]], atol=1e-7)
    np.testing.assert_allclose(lam.asnumpy(), [0., 5.], atol=1e-12)
    x = mx.sym.Variable("x")
    s = 0.5 * (x + mx.sym.transpose(x))
    u, lam = mx.sym.linalg.syevd(s)
    sym = mx.sym.broadcast_add(lam, mx.sym.sum(mx.sym.BlockGrad(u), axis=(), keepdims=True) * 0.0)
    m = np.random.normal(0, 10, (4, 4))
    check_numeric_gradient(sym, [0.5 * (m + m.T)], numeric_eps=1e-4, rtol=1e-2, atol=1e-2,
                           dtype=np.float64)
