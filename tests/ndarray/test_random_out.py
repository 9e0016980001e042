"""mx.nd.random samplers with out= and no shape: MXNet takes the shape and
dtype from out (GluonCV's initializers call random.uniform(0, s, out=arr))."""
import numpy as np

import aiond as mx


def test_sampler_shape_and_dtype_come_from_out():
    a = mx.nd.zeros((3, 4), dtype="float64")
    r = mx.nd.random.uniform(0, 2, out=a)
    assert r is a or r.shape == (3, 4)
    v = a.asnumpy()
    assert a.dtype == np.float64 and v.min() >= 0 and v.max() < 2 and v.std() > 0
    b = mx.nd.zeros((5,))
    mx.nd.random.normal(1.0, 0.5, out=b)
    assert b.shape == (5,) and b.asnumpy().std() > 0
    c = mx.nd.zeros((50,), dtype="int32")
    mx.nd.random.randint(0, 5, out=c)
    assert c.dtype == np.int32 and set(c.asnumpy().tolist()) <= {0, 1, 2, 3, 4}
    # an explicit shape still wins, and no out keeps MXNet's (1,) default
    assert mx.nd.random.uniform().shape == (1,)
