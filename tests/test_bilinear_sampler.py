"""BilinearSampler against a plain-loop reference of MXNet 1.9.1's kernel
(src/operator/bilinear_sampler.cc) and finite differences; imread's error
for a file it cannot open."""
import numpy as np
import pytest

import aiond as mx


def _reference(data, grid):
    n, c, h, w = data.shape
    _, _, oh, ow = grid.shape
    out = np.zeros((n, c, oh, ow))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                x = (grid[b, 0, i, j] + 1) * (w - 1) / 2
                y = (grid[b, 1, i, j] + 1) * (h - 1) / 2
                x0, y0 = int(np.floor(x)), int(np.floor(y))
                for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
                    for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
                        if 0 <= yy < h and 0 <= xx < w:
                            out[b, :, i, j] += wy * wx * data[b, :, yy, xx]
    return out


def test_forward_matches_the_reference():
    rng = np.random.RandomState(0)
    data = rng.rand(2, 3, 4, 5)
    grid = rng.uniform(-1.2, 1.2, size=(2, 2, 3, 6))     # some points fall outside
    out = mx.nd.BilinearSampler(mx.nd.array(data, dtype="float64"),
                                mx.nd.array(grid, dtype="float64"))
    assert out.shape == (2, 3, 3, 6) and out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), _reference(data, grid), rtol=1e-12, atol=1e-12)
    # the identity grid reproduces the input
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    ident = np.broadcast_to(np.stack([xs, ys]), (2, 2, 4, 5))
    same = mx.nd.BilinearSampler(mx.nd.array(data), mx.nd.array(ident))
    np.testing.assert_allclose(same.asnumpy(), data, rtol=1e-5)


def test_gradients_match_finite_differences():
    rng = np.random.RandomState(1)
    data = rng.rand(1, 2, 3, 4)
    grid = rng.uniform(-0.9, 0.9, size=(1, 2, 2, 3))
    og = rng.rand(1, 2, 2, 3)
    d, g = mx.nd.array(data, dtype="float64"), mx.nd.array(grid, dtype="float64")
    d.attach_grad()
    g.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BilinearSampler(d, g)
    y.backward(mx.nd.array(og, dtype="float64"))

    def loss(dd, gg):
        return float((_reference(dd, gg) * og).sum())
    eps = 1e-6
    num_d = np.zeros_like(data)
    for idx in np.ndindex(data.shape):
        p = data.copy()
        p[idx] += eps
        num_d[idx] = (loss(p, grid) - loss(data, grid)) / eps
    num_g = np.zeros_like(grid)
    for idx in np.ndindex(grid.shape):
        p, m = grid.copy(), grid.copy()
        p[idx] += eps
        m[idx] -= eps
        num_g[idx] = (loss(data, p) - loss(data, m)) / (2 * eps)
    np.testing.assert_allclose(d.grad.asnumpy(), num_d, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(g.grad.asnumpy(), num_g, rtol=1e-4, atol=1e-6)


def test_values_mxnet_gives():
    # MXNet 1.9.1: BilinearSampler(arange(16).reshape(1,1,4,4), grid) for these points
    data = mx.nd.array(np.arange(16).reshape(1, 1, 4, 4))
    grid = mx.nd.array([[[[-1, 0, 1, 1.5]], [[-1, 0, 1, 0]]]])
    out = mx.nd.BilinearSampler(data, grid)
    np.testing.assert_allclose(out.asnumpy().ravel(), [0, 7.5, 15, 2.25], rtol=1e-6)


def test_shape_errors():
    with pytest.raises(mx.base.MXNetError, match="grid has shape"):
        mx.nd.BilinearSampler(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((1, 3, 2, 2)))
    s = mx.sym.BilinearSampler(mx.sym.Variable("data"), mx.sym.Variable("grid"))
    assert s.list_arguments() == ["data", "grid"]
    _, out, _ = s.infer_shape(data=(2, 3, 8, 8), grid=(2, 2, 5, 6))
    assert out == [(2, 3, 5, 6)]


def test_imread_of_a_missing_file(tmp_path):
    missing = str(tmp_path / "nope" / "blah.jpg")
    with pytest.raises(mx.base.MXNetError, match="couldn't open file") as info:
        mx.image.imread(missing)
    assert isinstance(info.value, OSError) and info.value.errno == 2
    assert info.value.filename == missing
