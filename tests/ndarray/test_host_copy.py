"""nd.array and x[:] = numpy copy small contiguous arrays while holding the
GIL (host_copy); the copy must be exact and independent of the source."""
import numpy as np
import pytest

import aiond as mx
from aiond.ndarray._invoke import host_copy


@pytest.mark.parametrize("a", [
    np.array(7, np.int32), np.array(3, np.uint8), np.array(2.5, np.float32),
    np.zeros((0, 3), np.float32), np.array([True, False]),
    np.arange(12, dtype=np.float64).reshape(3, 4),
    np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],      # not contiguous
    np.arange(200000, dtype=np.float32),                         # over the held-copy size
    np.ma.masked_array(np.arange(4.0)),                           # a subclass
])
@pytest.mark.parametrize("dtype", ["same", "float32"])
def test_host_copy_is_an_exact_independent_copy(a, dtype):
    dt = a.dtype if dtype == "same" else np.dtype(dtype)
    b = host_copy(a, dt)
    assert type(b) is np.ndarray and b.dtype == dt and b.shape == a.shape
    assert b.flags.c_contiguous and b.flags.writeable
    np.testing.assert_array_equal(b, np.asarray(a).astype(dt))
    if a.size:
        assert not np.shares_memory(b, np.asarray(a))


def test_nd_array_and_assignment_do_not_see_later_changes():
    x = np.arange(784, dtype=np.float32).reshape(1, 784)
    a = mx.nd.array(x)
    b = mx.nd.zeros((1, 784))
    b[:] = x
    x[:] = -1
    np.testing.assert_array_equal(a.asnumpy(), np.arange(784, dtype=np.float32)[None])
    np.testing.assert_array_equal(b.asnumpy(), np.arange(784, dtype=np.float32)[None])
    assert mx.nd.array(np.array(9, np.int64), dtype="int64").asnumpy() == 9
