"""Ops are silent about floating-point exceptions, as MXNet's kernels are:
1/0, sqrt(-1), log(0), overflow give inf/nan without a numpy RuntimeWarning,
even with warnings turned into errors, and the caller's own numpy error
state is left as it was."""
import threading
import warnings

import numpy as np
import pytest

import aiond as mx


@pytest.fixture
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


X = [0.0, -1.0, 1e30, np.inf, np.nan, 2.0]
Y = [0.0, 0.0, 1e-30, np.inf, 1.0, 0.0]


CASES = {
    "div": (lambda x, y: x / y, np.divide),
    "rdiv": (lambda x, y: 1 / x, lambda x, y: 1 / x),
    "div0": (lambda x, y: x / 0, lambda x, y: x / np.float32(0)),
    "0div": (lambda x, y: 0 / y, lambda x, y: np.float32(0) / y),
    "elemwise_div": (lambda x, y: mx.nd.elemwise_div(x, y), np.divide),
    "broadcast_div": (lambda x, y: mx.nd.broadcast_div(x, y), np.divide),
    "pow": (lambda x, y: x ** -1, lambda x, y: x ** np.float32(-1)),
    "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply),
    "sqrt": (lambda x, y: mx.nd.sqrt(x), lambda x, y: np.sqrt(x)),
    "rsqrt": (lambda x, y: mx.nd.rsqrt(x), lambda x, y: 1 / np.sqrt(x)),
    "log": (lambda x, y: mx.nd.log(x), lambda x, y: np.log(x)),
    "exp": (lambda x, y: mx.nd.exp(x), lambda x, y: np.exp(x)),
    "square": (lambda x, y: mx.nd.square(x), lambda x, y: np.square(x)),
    "arcsin": (lambda x, y: mx.nd.arcsin(x), lambda x, y: np.arcsin(x)),
    "reciprocal": (lambda x, y: mx.nd.reciprocal(x), lambda x, y: 1 / x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ops_say_nothing_and_give_what_numpy_gives(warnings_are_errors, name):
    f, ref = CASES[name]
    got = f(mx.nd.array(X), mx.nd.array(Y)).asnumpy()
    with np.errstate(all="ignore"):
        want = ref(np.array(X, np.float32), np.array(Y, np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_norm_and_cast_of_inf_and_nan_are_silent(warnings_are_errors):
    assert mx.nd.norm(mx.nd.array([1e30, 1e30])).asscalar() == np.inf
    mx.nd.array(X).astype("int32").asnumpy()        # the values are undefined, as in C


def test_division_by_zero_is_inf_and_nan_as_in_mxnet(warnings_are_errors):
    got = (mx.nd.array([1.0, -1.0, 0.0]) / mx.nd.zeros(3)).asnumpy()
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])


def test_batchnorm_with_a_negative_moving_var_is_nan_silently(warnings_are_errors):
    # a GluonCV SSD forward hit this: inference with running statistics
    x = mx.nd.ones((1, 2, 3))
    y = mx.nd.BatchNorm(x, mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2),
                        mx.nd.array([-1.0, 1.0]), fix_gamma=False, eps=1e-5).asnumpy()
    assert np.isnan(y[0, 0]).all()
    np.testing.assert_allclose(y[0, 1], 1 / np.sqrt(1 + 1e-5), rtol=1e-6)


def test_the_callers_numpy_error_state_is_kept():
    with np.errstate(divide="raise"):
        (mx.nd.ones(3) / mx.nd.zeros(3)).asnumpy()      # runs on this thread or a worker
        with pytest.raises(FloatingPointError):
            np.ones(3) / np.zeros(3)
    assert np.geterr()["divide"] == "warn"


def test_in_a_thread_with_warnings_as_errors(warnings_are_errors):
    out = {}

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out["y"] = mx.nd.log(mx.nd.zeros(4)).asnumpy()
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert (out["y"] == -np.inf).all()
