"""Array creation with MXNet 1.9.1's names, defaults and dtypes.

Expected values were checked against MXNet 1.9.1 (``mx.nd.array``,
``empty``, ``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``,
``zeros_like``, ``ones_like``, ``ctx=`` and ``with mx.cpu(i):``).
"""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]


def check(arr, want, dtype=None):
    got = arr.asnumpy()
    want = np.asarray(want, dtype=dtype if dtype is not None else got.dtype)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ array


@pytest.mark.parametrize("src", [
    np.arange(6.0).reshape(2, 3),                 # float64 numpy
    np.arange(6).reshape(2, 3),                   # int64 numpy
    np.array([1, 2], dtype=np.int8),
    [[1, 2, 3], [4, 5, 6]],                       # python ints
    [1.5, 2.0],
    (1, 2),
    [True, False],
])
def test_array_defaults_to_float32(src):
    a = mx.nd.array(src)
    assert a.dtype is np.float32
    check(a, np.asarray(src, dtype=np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_array_dtype_argument(dtype):
    a = mx.nd.array([0, 1, 2], dtype=dtype)
    assert a.dtype is np.dtype(dtype).type
    check(a, np.array([0, 1, 2], dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, "uint8", np.dtype("int64")])
def test_array_dtype_spellings(dtype):
    assert mx.nd.array([1, 2], dtype=dtype).dtype is np.dtype(dtype).type


def test_array_from_ndarray_keeps_dtype_and_copies():
    src = mx.nd.array([1, 2], dtype="int32")
    a = mx.nd.array(src)
    assert a.dtype is np.int32
    src[:] = 7
    check(a, [1, 2], np.int32)
    b = mx.nd.array(src, dtype="float64")
    assert b.dtype is np.float64
    check(b, [7, 7], np.float64)


def test_array_copies_its_source():
    src = np.array([1.0, 2.0])
    a = mx.nd.array(src)
    src[0] = 100
    check(a, [1, 2], np.float32)


def test_array_zero_dim_has_shape_empty_tuple():
    # MXNet 1.9.1: mx.nd.array(5).shape == () and repr shows the scalar
    a = mx.nd.array(5)
    assert a.shape == () and a.ndim == 0 and a.size == 1
    check(a, np.array(5, dtype=np.float32))
    assert a.asscalar() == 5.0
    assert repr(a) == "\n5.0\n<NDArray  @cpu(0)>"


@pytest.mark.parametrize("src,shape", [([], (0,)), ([[]], (1, 0)), (np.zeros((0, 3)), (0, 3))])
def test_array_empty_sources(src, shape):
    a = mx.nd.array(src)
    assert a.shape == shape and a.dtype is np.float32


@pytest.mark.parametrize("src", ["abc", [[1, 2], [3]]])
def test_array_rejects_non_array_like(src):
    with pytest.raises(TypeError, match="source_array must be array like object"):
        mx.nd.array(src)


def test_array_out_of_range_ints_wrap_like_mxnet():
    check(mx.nd.array([300, -1], dtype="uint8"), [44, 255], np.uint8)


# ------------------------------------------------- empty/zeros/ones/full


@pytest.mark.parametrize("shape,want", [((2, 3), (2, 3)), (3, (3,)), ((1,), (1,)), ((2, 0), (2, 0))])
def test_empty_zeros_ones_shapes(shape, want):
    with mx.np_shape(0 in want):   # MXNet 1.x: zero-size zeros/ones need NumPy shapes
        _check_empty_zeros_ones(shape, want)


def _check_empty_zeros_ones(shape, want):
    for fn in (mx.nd.empty, mx.nd.zeros, mx.nd.ones):
        a = fn(shape)
        assert a.shape == want and a.dtype is np.float32
    check(mx.nd.zeros(shape), np.zeros(want, np.float32))
    check(mx.nd.ones(shape), np.ones(want, np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_empty_dtype(dtype):
    check(mx.nd.zeros((2, 2), dtype=dtype), np.zeros((2, 2), dtype))
    check(mx.nd.ones((3,), dtype=dtype), np.ones((3,), dtype))
    assert mx.nd.empty((2,), dtype=dtype).dtype is np.dtype(dtype).type


def test_negative_shape_is_an_error_at_the_call():
    with pytest.raises(MXNetError, match="negative"):
        mx.nd.zeros((2, -1))


@pytest.mark.parametrize("val,dtype,want", [
    (7, None, np.full((2, 2), 7, np.float32)),              # full defaults to float32
    (7.5, "int32", np.full((2, 2), 7, np.int32)),           # cast toward zero
    (-2.7, "int32", np.full((2, 2), -2, np.int32)),
    (300, "uint8", np.full((2, 2), 44, np.uint8)),          # C cast wraps, as MXNet
    (-1, "uint8", np.full((2, 2), 255, np.uint8)),
    (200, "int8", np.full((2, 2), -56, np.int8)),
    (2.5, "float16", np.full((2, 2), 2.5, np.float16)),
    (1, "bool", np.full((2, 2), True)),
])
def test_full(val, dtype, want):
    a = mx.nd.full((2, 2), val) if dtype is None else mx.nd.full((2, 2), val, dtype=dtype)
    check(a, want)


def test_full_int_shape_and_out():
    assert mx.nd.full(3, 2).shape == (3,)
    out = mx.nd.zeros((2,), dtype="int32")
    r = mx.nd.full((2,), 9, out=out)
    assert r is out
    check(out, [9, 9], np.int32)


# ----------------------------------------------------------------- arange


@pytest.mark.parametrize("args,kwargs,want", [
    ((5,), {}, np.arange(5, dtype=np.float32)),
    ((2, 5), {}, np.arange(2, 5, dtype=np.float32)),
    ((0, 1, 0.25), {}, np.arange(0, 1, 0.25, dtype=np.float32)),
    ((5, 0, -1), {}, np.arange(5, 0, -1, dtype=np.float32)),
    ((0, 10, 3), {}, np.array([0, 3, 6, 9], np.float32)),
    ((0.5, 3), {}, np.array([0.5, 1.5, 2.5], np.float32)),
    ((0, 3), {"repeat": 2}, np.array([0, 0, 1, 1, 2, 2], np.float32)),
    ((0, 2.5, 0.5), {"repeat": 3}, np.repeat(np.arange(0, 2.5, 0.5), 3).astype(np.float32)),
    ((0, 3), {"dtype": "int32"}, np.arange(3, dtype=np.int32)),
    ((0, 3), {"dtype": "int64"}, np.arange(3, dtype=np.int64)),
    ((0, 3), {"dtype": np.float64}, np.arange(3, dtype=np.float64)),
])
def test_arange(args, kwargs, want):
    check(mx.nd.arange(*args, **kwargs), want)


def test_arange_float_step_length():
    assert mx.nd.arange(0, 1, 0.1).shape == (10,)


def test_arange_zero_step_is_an_error_at_the_call():
    with pytest.raises(MXNetError, match="step"):
        mx.nd.arange(0, 5, 0)


# --------------------------------------------------------- linspace / eye


@pytest.mark.parametrize("args,kwargs", [
    ((0, 1, 5), {}), ((0, 1, 5), {"endpoint": False}), ((2, -2, 5), {}), ((0, 1, 1), {}),
    ((0, 1, 0), {}),
])
def test_linspace(args, kwargs):
    a = mx.nd.linspace(*args, **kwargs)
    assert a.dtype is np.float32
    np.testing.assert_allclose(a.asnumpy(), np.linspace(*args, **kwargs).astype(np.float32))


def test_linspace_int_dtype_truncates():
    check(mx.nd.linspace(0, 10, 5, dtype="int32"), [0, 2, 5, 7, 10], np.int32)


@pytest.mark.parametrize("args,kwargs", [
    ((3,), {}), ((2, 3), {}), ((3, 2, 1), {}), ((3,), {"k": -1}), ((3, 3, 5), {}), ((0,), {}),
    ((4,), {"M": 2, "k": 1}),
])
def test_eye(args, kwargs):
    n = args[0]
    m = args[1] if len(args) > 1 else kwargs.get("M", 0)
    k = args[2] if len(args) > 2 else kwargs.get("k", 0)
    check(mx.nd.eye(*args, **kwargs), np.eye(n, m or n, k, dtype=np.float32))


def test_eye_dtype():
    check(mx.nd.eye(2, dtype="int32"), np.eye(2, dtype=np.int32))


# ----------------------------------------------------------------- *_like


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_like_ones_like_keep_shape_and_dtype(dtype):
    x = mx.nd.array([[1, 2], [3, 4]], dtype=dtype)
    check(mx.nd.zeros_like(x), np.zeros((2, 2), dtype))
    check(mx.nd.ones_like(x), np.ones((2, 2), dtype))
    check(x.zeros_like(), np.zeros((2, 2), dtype))
    check(x.ones_like(), np.ones((2, 2), dtype))


# ---------------------------------------------------------------- contexts


CREATORS = {
    "array": lambda **kw: mx.nd.array([1, 2], **kw),
    "empty": lambda **kw: mx.nd.empty((2,), **kw),
    "zeros": lambda **kw: mx.nd.zeros((2,), **kw),
    "ones": lambda **kw: mx.nd.ones((2,), **kw),
    "full": lambda **kw: mx.nd.full((2,), 3, **kw),
    "arange": lambda **kw: mx.nd.arange(3, **kw),
    "linspace": lambda **kw: mx.nd.linspace(0, 1, 3, **kw),
    "eye": lambda **kw: mx.nd.eye(2, **kw),
    "uniform": lambda **kw: mx.nd.random.uniform(shape=(2,), **kw),
}


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_ctx_argument(name):
    a = CREATORS[name](ctx=mx.cpu(1))
    assert a.context == mx.cpu(1) and a.ctx == mx.cpu(1)


@pytest.mark.parametrize("name", sorted(CREATORS))
def test_with_context_sets_the_default(name):
    assert mx.current_context() == mx.cpu(0)
    with mx.cpu(1):
        assert mx.current_context() == mx.cpu(1)
        a = CREATORS[name]()
    assert a.context == mx.cpu(1)
    assert mx.current_context() == mx.cpu(0)
    assert CREATORS[name]().context == mx.cpu(0)


def test_context_values():
    assert str(mx.cpu(1)) == "cpu(1)"
    assert mx.cpu(1) == mx.cpu(1) and mx.cpu(0) != mx.cpu(1)
    check(mx.nd.zeros((2,), ctx=mx.cpu(2)) + 1, [1, 1], np.float32)


def test_context_default_ctx_is_mxnets_deprecated_spelling():
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert mx.Context.default_ctx == mx.current_context()
        with mx.cpu(3):
            assert mx.Context.default_ctx == mx.cpu(3)
    assert any(issubclass(x.category, DeprecationWarning) for x in w)


def test_from_numpy_zero_copy_shares_memory_and_locks_the_numpy_array():
    a = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    m = mx.nd.from_numpy(a)                   # MXNet's default: zero_copy=True
    with pytest.raises(ValueError):
        a[2, 1] = 0                           # the numpy side is read-only now
    m[2, 1] = 100
    assert a[2, 1] == 100 and (m * 2).asnumpy()[2, 1] == 200
    m2 = mx.nd.from_numpy(a)                  # shared twice: still writable through mx
    m2[0, 0] = 7
    assert a[0, 0] == 7 and m.asnumpy()[0, 0] == 7 and not a.flags.writeable
    c = np.ones((2, 2), dtype="float32")
    mc = mx.nd.from_numpy(c, zero_copy=False)
    mc[:] = 3
    assert c.flags.writeable and (c == 1).all()
    with pytest.raises(ValueError, match="c-contiguous"):
        mx.nd.from_numpy(np.ones((2, 3)).T)
