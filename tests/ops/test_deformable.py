"""contrib DeformableConvolution: zero offsets give Convolution; gradients
w.r.t. data, offset, weight and bias against finite differences."""
import numpy as np
import pytest

import aiond as mx
from aiond.test_utils import check_numeric_gradient


@pytest.mark.slow
@pytest.mark.parametrize("dg,dil,G", [(1, (1, 1), 1), (2, (2, 2), 1), (1, (1, 1), 2)])
def test_deformable_convolution(dg, dil, G):
    N, C, H, W = 1, 4, 4, 5
    im = np.random.rand(N, C, H, W)
    off = np.random.rand(N, dg * 18, H, W) * 0.8 + 0.1
    w = np.random.normal(0, 0.1, (4, C // G, 3, 3))
    b = np.random.normal(size=4)
    kw = dict(num_filter=4, pad=dil, kernel=(3, 3), dilate=dil, num_deformable_group=dg,
              num_group=G)
    y0 = mx.nd.contrib.DeformableConvolution(mx.nd.array(im), mx.nd.zeros((N, dg * 18, H, W)),
                                             mx.nd.array(w), mx.nd.array(b), **kw)
    yc = mx.nd.Convolution(mx.nd.array(im), mx.nd.array(w), mx.nd.array(b), num_filter=4,
                           pad=dil, kernel=(3, 3), dilate=dil, num_group=G)
    np.testing.assert_allclose(y0.asnumpy(), yc.asnumpy(), atol=1e-5)
    sym = mx.sym.contrib.DeformableConvolution(
        data=mx.sym.Variable("im"), offset=mx.sym.Variable("off"), weight=mx.sym.Variable("w"),
        bias=mx.sym.Variable("b"), **kw)
    assert sym.infer_shape(im=(N, C, H, W))[0][1] == (N, dg * 18, H, W)
    check_numeric_gradient(sym, [im, off, w, b], rtol=0.05, atol=1e-3, numeric_eps=1e-4,
                           dtype=np.float64)
