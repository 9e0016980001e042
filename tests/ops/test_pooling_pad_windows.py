"""Pooling windows that lie wholly in the padding ('full' convention): MXNet
1.9.1 gives the dtype's lowest value for max and 0 for avg without
count_include_pad (checked against MXNet 1.9.1)."""
import numpy as np
import pytest

import aiond as mx


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_window_in_padding_is_lowest(dtype):
    x = mx.nd.array(np.arange(60 * 60).reshape(1, 1, 60, 60), dtype=dtype)
    y = mx.nd.Pooling(x, kernel=(3, 3), stride=(4, 5), pool_type="max",
                      pooling_convention="full").asnumpy()
    assert y.shape == (1, 1, 16, 13)
    assert y[0, 0, 0, -1] == np.finfo(dtype).min
    assert np.isfinite(y).all()
    assert y[0, 0, 0, 0] == x.asnumpy()[0, 0, :3, :3].max()


def test_avg_window_without_cells_is_zero():
    x = mx.nd.ones((1, 1, 60, 60))
    y = mx.nd.Pooling(x, kernel=(3, 3), stride=(4, 5), pool_type="avg",
                      pooling_convention="full", count_include_pad=False).asnumpy()
    assert y[0, 0, 0, -1] == 0
    assert not np.isnan(y).any()
    np.testing.assert_array_equal(y[0, 0, :-1, :-1], 1)
    np.testing.assert_array_equal(y[0, 0, -1, :], 0)
