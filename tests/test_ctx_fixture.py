"""The suite's ``ctx`` fixture (``conftest.py``): the test body runs with it
as the default context, so converted operator tests really run there."""
import numpy as np

import aiond as mx


def test_ctx_is_the_default_context_inside_the_test(ctx):
    assert mx.current_context() == ctx
    a = mx.nd.array(np.arange(6.0).reshape(2, 3))
    y = mx.nd.softmax(a) + mx.nd.ones((2, 3))
    assert a.context == ctx and y.context == ctx
    e = np.exp(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(y.asnumpy(), e / e.sum(axis=1, keepdims=True) + 1, rtol=1e-6)
