"""registry.memo_rule: the shape rules that a loop runs with the same
arguments every step (convolution, pooling, reductions, the fused loss)
answer from memory, and never remember an error."""
import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.ops import registry

F32 = np.dtype(np.float32)


def test_memoized_rule_answers_as_the_rule_and_keeps_no_error():
    calls = []

    def rule(attrs, shapes, dtypes):
        calls.append(shapes)
        if shapes[0][0] < 0:
            raise ValueError("negative")
        return ((shapes[0][0] * attrs["k"],),), (dtypes[0],)
    m = registry.memo_rule(rule, size=4)
    assert m({"k": 2}, [(3,)], [F32]) == (((6,),), (F32,))
    assert m({"k": 2}, ((3,),), (F32,)) == (((6,),), (F32,))       # lists or tuples alike
    assert len(calls) == 1
    assert m({"k": 3}, [(3,)], [F32]) == (((9,),), (F32,))         # other attrs: the rule
    assert len(calls) == 2
    for _ in range(2):
        with pytest.raises(ValueError):
            m({"k": 2}, [(-1,)], [F32])
    assert len(calls) == 4                                            # errors: asked again
    for n in range(10):                                               # bounded: still right
        assert m({"k": 1}, [(n,)], [F32]) == (((n,),), (F32,))


def test_an_unhashable_attribute_goes_to_the_rule_every_time():
    calls = []

    def rule(attrs, shapes, dtypes):
        calls.append(1)
        return (tuple(attrs["shape"]),), (dtypes[0],)
    m = registry.memo_rule(rule)
    for _ in range(3):
        assert m({"shape": [2, 3]}, [(6,)], [F32]) == (((2, 3),), (F32,))
    assert len(calls) == 3


@pytest.mark.parametrize("name", ["Convolution", "Pooling", "sum", "max",
                                  "_sparse_softmax_cross_entropy", "Deconvolution"])
def test_the_loop_rules_are_memoized(name):
    assert hasattr(registry.get(name).infer, "rule")


def test_a_bad_convolution_raises_every_time_between_good_ones():
    x = mx.nd.ones((2, 3, 8, 8))
    w = mx.nd.ones((4, 3, 3, 3))
    b = mx.nd.zeros((4,))
    for _ in range(2):
        y = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4)
        assert y.shape == (2, 4, 6, 6)
        with pytest.raises(MXNetError):
            mx.nd.Convolution(x, mx.nd.ones((4, 2, 3, 3)), b, kernel=(3, 3), num_filter=4)
    np.testing.assert_allclose(y.asnumpy(), np.full((2, 4, 6, 6), 27.0))
