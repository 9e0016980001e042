"""Bilinear UpSampling is MXNet's depthwise Deconvolution with the weight input."""
import numpy as np

import aiond as mx


def test_bilinear_upsampling_is_depthwise_deconvolution():
    rng = np.random.RandomState(0)
    for scale in (2, 3):
        k = 2 * scale - scale % 2
        p = (scale - 1 + 1) // 2
        x = mx.nd.array(rng.rand(2, 3, 4, 5))
        w = mx.nd.array(rng.rand(3, 1, k, k))
        y = mx.nd.UpSampling(x, w, scale=scale, sample_type='bilinear', num_filter=3)
        assert y.shape == (2, 3, 4 * scale, 5 * scale)
        want = mx.nd.Deconvolution(x, w, kernel=(k, k), stride=(scale, scale), pad=(p, p),
                                   num_filter=3, num_group=3, no_bias=True)
        np.testing.assert_allclose(y.asnumpy(), want.asnumpy(), rtol=1e-5)
    sym = mx.sym.UpSampling(mx.sym.Variable('data'), mx.sym.Variable('weight'), scale=2,
                            sample_type='bilinear', num_filter=3, num_args=2)
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(1, 3, 4, 4))
    assert arg_shapes == [(1, 3, 4, 4), (3, 1, 4, 4)] and out_shapes == [(1, 3, 8, 8)]
    grads = []
    for bilinear in (True, False):
        x.attach_grad()
        w.attach_grad()
        with mx.autograd.record():
            if bilinear:
                y = mx.nd.UpSampling(x, w, scale=3, sample_type='bilinear', num_filter=3)
            else:
                y = mx.nd.Deconvolution(x, w, kernel=(5, 5), stride=(3, 3), pad=(1, 1),
                                        num_filter=3, num_group=3, no_bias=True)
        y.backward(mx.nd.array(np.arange(y.size).reshape(y.shape) % 7))
        grads.append((x.grad.asnumpy(), w.grad.asnumpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5)
