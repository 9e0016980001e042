import numpy as np
import pytest

import aiond as mx
from aiond import test_utils as tu


def test_assert_almost_equal_passes_and_fails_with_location():
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    tu.assert_almost_equal(a, mx.nd.array(a) + 1e-6)
    with pytest.raises(AssertionError, match=r"Location of maximum error: \(2,\)"):
        tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.5], dtype=np.float32))
    assert tu.almost_equal(a, a) and not tu.almost_equal(a, a + 1)
    assert tu.same(mx.nd.array(a).asnumpy(), a)


@pytest.mark.parametrize("fn,wshape", [
    (lambda x, w: mx.nd.dot(x, w).sin().sum(), (4, 2)),
    (lambda x, w: (x * w).exp() / (1 + w * w), (3, 4)),
    (lambda x, w: mx.nd.broadcast_mul(x, w).mean(axis=1), (1, 4)),
])
def test_check_numeric_gradient_on_callables(fn, wshape):
    x = np.random.uniform(-1, 1, (3, 4))
    w = np.random.uniform(-1, 1, wshape)
    tu.check_numeric_gradient(fn, [x, w])


def test_check_numeric_gradient_catches_a_wrong_gradient():
    from aiond.ops import registry
    op = registry.get("sin")
    good = op.grad
    op.grad = lambda F, attrs, ins, outs, og: [og[0] * F.sin(ins[0])]   # wrong on purpose
    try:
        with pytest.raises(AssertionError):
            tu.check_numeric_gradient(lambda x: mx.nd.sin(x), [np.random.uniform(0.5, 1, (5,))])
    finally:
        op.grad = good


def test_check_symbolic_forward_and_backward_on_a_callable():
    x = np.random.uniform(-1, 1, (2, 3))
    tu.check_symbolic_forward(lambda a: a * 2 + 1, [x], [x * 2 + 1])
    g = np.random.uniform(-1, 1, (2, 3))
    tu.check_symbolic_backward(lambda a: a * a, [x], [g], [2 * x * g], rtol=1e-5, atol=1e-6)


def test_helpers():
    assert tu.np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape == (1, 3, 1)
    assert len(tu.rand_shape_nd(4)) == 4 and all(d >= 1 for d in tu.rand_shape_3d())
    assert tu.rand_ndarray((2, 3)).shape == (2, 3)
    assert tu.default_context() == mx.cpu()
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    tu.assert_exception(lambda: 1 / 0, ZeroDivisionError)
    with pytest.raises(AssertionError):
        tu.assert_exception(lambda: 1, ZeroDivisionError)
    import os
    with tu.environment("AIOND_TEST_ENV_X", "1"):
        assert os.environ["AIOND_TEST_ENV_X"] == "1"
    assert "AIOND_TEST_ENV_X" not in os.environ
    np.testing.assert_array_equal(tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)), np.full((3, 1), 8))
    a = mx.nd.ones((4,))
    assert tu.same_array(a, a.reshape((4,))) and not tu.same_array(a, a.copy())


def test_check_numeric_gradient_on_non_contiguous_input_catches_wrong_gradient():
    # a transposed (Fortran-order) input must still be perturbed, not a copy of it
    from aiond.ops import registry
    op = registry.get("exp")
    good = op.grad
    op.grad = lambda F, attrs, ins, outs, og: [og[0] * 0]
    try:
        x = np.random.uniform(-1, 1, (3, 4)).T
        with pytest.raises(AssertionError):
            tu.check_numeric_gradient(lambda a: mx.nd.exp(a), [x])
    finally:
        op.grad = good
    tu.check_numeric_gradient(lambda a: mx.nd.exp(a), [x])


def test_verify_generator_accepts_right_and_rejects_wrong_distribution():
    ss = pytest.importorskip("scipy.stats")
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda x: ss.norm.ppf(x, 0, 1), 5)
    assert len(buckets) == 5 and abs(sum(probs) - 1) < 1e-9
    tu.verify_generator(lambda n: np.random.normal(0, 1, size=n), buckets, probs,
                        nsamples=20000, nrepeat=3)
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.random.normal(0.5, 1, size=n), buckets, probs,
                            nsamples=20000, nrepeat=3)
    assert tu.mean_check(lambda n: np.random.normal(0, 1, size=n), 0, 1, nsamples=20000)


def test_compare_optimizer_detects_a_different_update():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                             mx.optimizer.SGD(learning_rate=0.2), (3, 4), np.float32)


def test_check_consistency_across_contexts_and_dtypes():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    ctx_list = [{"ctx": mx.cpu(0), "data": (2, 4), "type_dict": {"data": np.float64}},
                {"ctx": mx.cpu(1), "data": (2, 4), "type_dict": {"data": np.float32}}]
    gt = tu.check_consistency(sym, ctx_list)
    assert set(gt) >= {"fc_output", "data", "fc_weight", "fc_bias"}


def test_retry_and_discard_stderr_and_simple_forward():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 2

    flaky()
    assert len(calls) == 2
    with tu.discard_stderr():
        import sys
        sys.stderr.write("hidden\n")
    x = np.random.rand(2, 3).astype(np.float32)
    out = tu.simple_forward(mx.sym.exp(mx.sym.var("a")), a=x)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)


def test_check_numeric_gradient_on_a_symbol_catches_a_wrong_gradient():
    from aiond.ops import registry
    op = registry.get("exp")
    good = op.grad
    op.grad = lambda F, attrs, ins, outs, og: [og[0] * 0]
    try:
        with pytest.raises(AssertionError, match="NUMERICAL_a"):
            tu.check_numeric_gradient(mx.sym.exp(mx.sym.var("a")), [np.random.rand(3, 2)])
    finally:
        op.grad = good
    tu.check_numeric_gradient(mx.sym.exp(mx.sym.var("a")), [np.random.rand(3, 2)])


def test_discard_stderr_silences_stderr(capfd):
    import os
    import sys
    from aiond.test_utils import discard_stderr
    with discard_stderr():
        os.write(sys.stderr.fileno(), b"hidden\n")
        print("hidden too", file=sys.stderr)
    os.write(sys.stderr.fileno(), b"shown\n")
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_numeric_gradient_same_array_for_two_inputs():
    # one numpy array given for two inputs, read-only like asnumpy()'s: each
    # input is perturbed on its own (MXNet copies location values)
    a = mx.nd.array([[0.1, -0.2], [0.3, 0.4]]).asnumpy()
    a.setflags(write=False)
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    tu.check_numeric_gradient(mx.sym.linalg.gemm2(x, y, transpose_a=True), [a, a],
                              numeric_eps=1e-3, rtol=1e-2, atol=1e-4)


def test_symbolic_checks_asnumpy_dtype_and_ndarray_locations():
    data, idx = mx.sym.Variable("data"), mx.sym.Variable("idx")
    loc = {"data": mx.nd.array([[1., 2.], [3., 4.]], dtype="float16"),
           "idx": mx.nd.array([1, 0], dtype="int32")}
    out = tu.check_symbolic_forward(mx.sym.take(data, idx), loc, [np.array([[3., 4.], [1., 2.]])],
                                    dtype="asnumpy")
    assert out[0].dtype == np.float16


def test_numeric_gradient_grad_nodes_dict_skips_null():
    # MXNet: grad_nodes={name: grad_req}; a 'null' input is not compared
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    sym = x * mx.sym.BlockGrad(y)
    tu.check_numeric_gradient(sym, [np.ones((2,)), np.full((2,), 3.0)],
                              grad_nodes={"x": "write", "y": "null"}, numeric_eps=1e-3)


def test_almost_equal_on_large_arrays_compares_in_slices():
    from aiond.test_utils import _compare
    n = _compare._CHUNK * 3 + 5
    a = np.zeros(n, dtype=np.float32)
    b = a.copy()
    assert _compare.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    b[-1] = 1.0                                     # the last, partial slice counts
    assert not _compare.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    b[-1] = np.nan
    a[-1] = np.nan
    assert not _compare.almost_equal(a, b, rtol=1e-5, atol=1e-6)
    assert _compare.almost_equal(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    with pytest.raises(AssertionError):
        mx.test_utils.assert_almost_equal(a.reshape(-1, 1)[:, :1], np.ones((n, 1), np.float32))
