"""im2col/col2im, LRN, GridGenerator, AdaptiveAvgPooling2D and
BilinearResize2D against direct numpy references."""
import numpy as np

import aiond as mx
from aiond.test_utils import check_numeric_gradient


def test_im2col_is_convolution_and_col2im_its_adjoint():
    x = np.random.uniform(size=(2, 3, 7, 6)).astype(np.float32)
    w = np.random.uniform(size=(4, 3, 3, 3)).astype(np.float32)
    kw = dict(kernel=(3, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1))
    col = mx.nd.im2col(mx.nd.array(x), **kw)
    conv = mx.nd.Convolution(mx.nd.array(x), mx.nd.array(w), num_filter=4, no_bias=True, **kw)
    c1 = np.matmul(w.reshape(4, -1), col.asnumpy()).reshape(conv.shape)
    np.testing.assert_allclose(c1, conv.asnumpy(), rtol=1e-4, atol=1e-5)
    # <im2col(x), c> == <x, col2im(c)>
    c = np.random.uniform(size=col.shape).astype(np.float32)
    back = mx.nd.col2im(mx.nd.array(c), output_size=(7, 6), **kw).asnumpy()
    np.testing.assert_allclose((col.asnumpy() * c).sum(), (x * back).sum(), rtol=1e-4)
    check_numeric_gradient(lambda a: mx.nd.im2col(a, kernel=(2, 2)), [x[:1, :1, :4, :4]],
                           numeric_eps=1e-3, rtol=1e-2, atol=1e-3)


def test_lrn_forward_and_gradient():
    x = np.random.uniform(size=(2, 5, 3, 3))
    y = mx.nd.LRN(mx.nd.array(x, dtype="float64"), nsize=3, alpha=0.1, beta=0.5, knorm=1.5)
    sq = np.pad(x * x, ((0, 0), (1, 1), (0, 0), (0, 0)))
    win = sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:]
    np.testing.assert_allclose(y.asnumpy(), x / (1.5 + 0.1 / 3 * win) ** 0.5, rtol=1e-10)
    check_numeric_gradient(mx.sym.LRN(mx.sym.Variable("d"), nsize=3, alpha=0.1, beta=0.5),
                           [x], numeric_eps=1e-5, rtol=1e-4, atol=1e-6, dtype=np.float64)


def test_grid_generator_affine_identity_and_warp():
    g = mx.nd.GridGenerator(mx.nd.array([[1., 0, 0, 0, 1., 0]]), transform_type="affine",
                            target_shape=(3, 5)).asnumpy()
    np.testing.assert_allclose(g[0, 0], np.tile(np.linspace(-1, 1, 5), (3, 1)), atol=1e-6)
    np.testing.assert_allclose(g[0, 1], np.tile(np.linspace(-1, 1, 3)[:, None], (1, 5)),
                               atol=1e-6)
    flow = np.zeros((1, 2, 3, 5))
    w = mx.nd.GridGenerator(mx.nd.array(flow), transform_type="warp").asnumpy()
    np.testing.assert_allclose(w, g, atol=1e-6)
    check_numeric_gradient(mx.sym.GridGenerator(mx.sym.Variable("a"), transform_type="affine",
                                                target_shape=(3, 4)),
                           [np.random.normal(size=(2, 6))], numeric_eps=1e-4, rtol=1e-3,
                           atol=1e-5, dtype=np.float64)


def test_adaptive_avg_pooling_windows():
    x = np.random.uniform(size=(1, 2, 5, 7))
    y = mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.array(x), output_size=(2, 3)).asnumpy()
    for i, (a, b) in enumerate([(0, 3), (2, 5)]):
        for j, (c, d) in enumerate([(0, 3), (2, 5), (4, 7)]):
            np.testing.assert_allclose(y[..., i, j], x[..., a:b, c:d].mean(axis=(-1, -2)),
                                       rtol=1e-5)
    check_numeric_gradient(lambda a: mx.nd.contrib.AdaptiveAvgPooling2D(a, output_size=2),
                           [x], numeric_eps=1e-4, rtol=1e-3, atol=1e-5)


def test_bilinear_resize_align_corners_and_modes():
    x = mx.nd.array(np.array([64, 32, 32, 64, 50, 100], dtype=np.float32).reshape(1, 1, 3, 2))
    y = mx.nd.contrib.BilinearResize2D(x, height=6, width=4, align_corners=False).asnumpy()
    np.testing.assert_allclose(y.ravel()[:4], [64., 56., 40., 32.], atol=1e-3)
    y = mx.nd.contrib.BilinearResize2D(x, height=6, width=4).asnumpy()
    np.testing.assert_allclose(y.ravel()[:4], [64., 53.333, 42.667, 32.], atol=1e-3)
    assert mx.nd.contrib.BilinearResize2D(x, mode="to_even_up").shape == (1, 1, 4, 2)
    assert mx.nd.contrib.BilinearResize2D(x, mx.nd.ones((1, 1, 5, 5)), mode="like").shape == \
        (1, 1, 5, 5)
    check_numeric_gradient(lambda a: mx.nd.contrib.BilinearResize2D(a, height=5, width=3),
                           [np.random.uniform(size=(1, 2, 3, 4))], numeric_eps=1e-4,
                           rtol=1e-3, atol=1e-5)


def test_executor_monitor_all_reports_inputs_then_outputs():
    data = mx.sym.Variable("data", shape=(2, 3))
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    act = mx.sym.Activation(fc, act_type="relu", name="act")
    exe = act.simple_bind(ctx=mx.cpu(), grad_req="null")
    names = []
    exe.set_monitor_callback(lambda n, a: names.append(n), monitor_all=True)
    exe.forward()
    mx.nd.waitall()
    assert names == ["data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias",
                     "fc_output", "act_input0", "act_output"]
