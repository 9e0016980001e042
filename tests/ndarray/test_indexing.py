"""``NDArray.__getitem__``/``__setitem__`` with MXNet 1.9.1's rules.

Shapes, values and which results are views (contiguous basic slices share
memory, everything else copies) were checked against MXNet 1.9.1. MXNet's
legacy NDArray differs from numpy in a few places that are kept here on
purpose: a scalar element has shape (1,), numpy bool arrays are 0/1 integer
indices (not masks), NDArray bool masks raise, and ``None`` after an
adjacent block of advanced indices lands before the block.
"""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def a234():
    return mx.nd.array(BASE)


def check(arr, want, dtype=None):
    got = arr.asnumpy()
    want = np.asarray(want, dtype=dtype if dtype is not None else got.dtype)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


S = slice

# key -> numpy-equal result; a scalar result has shape (1,) as in MXNet
BASIC = [
    1, -1, (1, 2), (-1, -1), S(0, 1), (S(None), 1), (S(None), S(None), 1), (Ellipsis, 1),
    (1, Ellipsis), Ellipsis, None, (S(None), None), (1, None), (None, 1, None), (Ellipsis, None),
    S(None, None, 2), (S(None), S(None, None, 2)), (S(None), S(None, None, -1)),
    (S(None), S(None), S(None, None, -2)), (S(None), S(1, 3), S(1, None, 2)), S(-5, None),
    (0, S(None), S(0, 2)), (1, S(0, 3, 2)), (S(None, None, -1), 1, S(None)), np.int64(1),
    (np.int32(-1), 0), (S(1, 2), S(None), S(None)), (0, S(1, 3), S(None)),
]


@pytest.mark.parametrize("key", BASIC, ids=[repr(k) for k in BASIC])
def test_basic_getitem_values(key, ctx):
    got = a234()[key]
    want = BASE[key]
    check(got, want)


@pytest.mark.parametrize("key", [(1, 2, 3), (-1, -1, -1), (0, 0, S(2, 3)), (0, 1, 2)])
def test_scalar_element_has_shape_1(key):
    r = a234()[key]
    assert r.shape == (1,)
    check(r, np.asarray(BASE[key]).reshape(1))


@pytest.mark.parametrize("key,axis", [(2, 0), (-3, 0), ((0, 3), 1), ((0, 0, 4), 2), ((1, -4), 1)])
def test_out_of_range_int_raises_index_error(key, axis):
    with pytest.raises(IndexError, match="out of bounds"):
        a234()[key]
    with pytest.raises(IndexError, match="out of bounds"):
        a234()[key] = 1


@pytest.mark.parametrize("key", [[2], [-3], ([0, 1], [0, 3]), (S(None), [3]), np.array([5])])
def test_out_of_range_index_list_raises_at_the_call(key):
    with pytest.raises(IndexError, match="out of bounds"):
        a234()[key]


def test_out_of_range_ndarray_index_raises_at_read():
    r = a234()[mx.nd.array([5])]          # values unknown at push (as in MXNet)
    with pytest.raises(MXNetError, match="out of bounds") as ei:
        r.asnumpy()
    assert isinstance(ei.value.__cause__, IndexError)


def test_too_many_indices():
    with pytest.raises(IndexError, match="too many indices"):
        a234()[1, 2, 3, 0]


@pytest.mark.parametrize("key", [0.5, "a", (0, 1.5)])
def test_unsupported_key_types(key):
    with pytest.raises(ValueError, match="does not support slicing with key"):   # as MXNet
        a234()[key]


# ------------------------------------------------------------------ views

# (key, view?) -- from MXNet 1.9.1: a contiguous basic result shares memory
VIEWS = [
    (0, True), (-1, True), (S(1, 2), True), (S(None, 1), True), (S(None), True),
    (Ellipsis, True), (None, True), ((0, 0), True), ((0, 1, 2), True), ((1, S(1, 3)), True),
    ((S(0, 1), S(0, 1)), True), (S(None, None, 2), True), ((1, 1, S(2, 3)), True),
    ((None, 0), True), ((0, None, 1), True), ((1, Ellipsis), True),
    ((S(1, 2), S(None), S(None)), True), ((0, S(1, 3), S(None)), True),
    ((1, S(1, 3), S(0, 4, 1)), True),
    ((S(None), 1), False), ((0, S(None), 1), False), (S(None, None, -1), False),
    ((1, S(None, None, -1)), False), ((0, S(None), S(0, 2)), False), ((Ellipsis, 1), False),
    ((S(0, 2), 1, S(None)), False), ((1, S(0, 3, 2)), False), ((1, 2, S(0, 4, 2)), False),
    ([0], False), ((0, [1]), False), (np.array([1]), False), (mx.nd.array([1]), False),
    ((S(0, 2), S(0, 3), S(1, 2)), False),
]


@pytest.mark.parametrize("key,is_view", VIEWS, ids=[repr(k) for k, _ in VIEWS])
def test_view_or_copy_like_mxnet(key, is_view):
    a = a234()
    v = a[key]
    before = v.asnumpy()
    a[:] = -1                            # write the base afterwards
    changed = not np.array_equal(v.asnumpy(), before)
    assert changed is is_view
    b = a234()
    w = b[key]
    w[:] = 100                           # write the result: reaches the base only for views
    assert bool((b.asnumpy() == 100).any()) is is_view


def test_empty_slice_result():
    r = a234()[0:0]
    assert r.shape == (0, 3, 4)


# --------------------------------------------------------------- advanced

ADVANCED = [
    [1, 0], ([0, 1], [1, 2]), ([0, 1], S(None), [1, 2]), (S(None), [0, 2]), (S(None), [0, 2], 1),
    np.array([1, 0]), np.array([[0, 1], [1, 0]]), [-1], (1, [0, 1], S(None, None, 2)),
    (Ellipsis, [0, 1]), (None, [0, 1]), range(2), ([0, 1], S(1, 3), 0), (0, S(None), [1, 2]),
    ([1, 0], S(None, None, -1)), (S(None, None, -1), [0, 2]), ([0, 1], [[0], [2]]),
    ([0, 1], Ellipsis, [1, 3]), (-1, [-1, 0]), ([0, -1], [0, -1], [0, -1]), [[0, 1]],
    np.array([1, 0], dtype=np.int32), np.array([1, 0], dtype=np.uint8),
]


@pytest.mark.parametrize("key", ADVANCED, ids=[repr(k) for k in ADVANCED])
def test_advanced_getitem_matches_numpy(key, ctx):
    np_key = tuple(list(k) if isinstance(k, range) else k for k in key) \
        if isinstance(key, tuple) else (list(key) if isinstance(key, range) else key)
    check(a234()[key], BASE[np_key])


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "uint8"])
def test_ndarray_indices(dtype, ctx):
    idx = mx.nd.array([1, 0], dtype=dtype)
    check(a234()[idx], BASE[[1, 0]])
    check(a234()[idx, 1], BASE[[1, 0], 1])
    check(a234()[:, mx.nd.array([2, 0], dtype=dtype), 1:3], BASE[:, [2, 0], 1:3])


def test_float_indices_truncate():
    check(a234()[np.array([1.7, 0.2])], BASE[[1, 0]])
    check(a234()[mx.nd.array([1.7, 0.2])], BASE[[1, 0]])


def test_tuple_inside_the_key_is_a_list():
    # MXNet: a[(0, 1),] indexes like a[[0, 1]] (numpy would too)
    check(a234()[(0, 1), ], BASE[[0, 1]])
    check(a234()[(0, 1), (1, 2)], BASE[[0, 1], [1, 2]])
    check(a234()[(0, 1)], BASE[0, 1])            # a bare tuple is the key itself


def test_numpy_bool_arrays_are_integer_indices():
    # MXNet 1.9.1 (legacy mode) turns a numpy bool array into 0/1 integer indices
    check(a234()[np.array([True, False])], BASE[[1, 0]])
    check(a234()[[True, False]], BASE[[1, 0]])
    m = mx.nd.array([[1, 2], [3, 4]])
    check(m[np.array([[True, False], [False, True]])], np.array([[1, 2], [3, 4]])[[[1, 0], [0, 1]]],
          np.float32)


def test_python_bool_is_an_int():
    check(a234()[True], BASE[1])
    check(a234()[False], BASE[0])


def test_ndarray_bool_mask_raises_like_mxnet():
    a = a234()
    with pytest.raises(ValueError, match="boolean"):
        a[mx.nd.array([1, 0], dtype="bool")]
    with pytest.raises(ValueError, match="boolean"):
        a[mx.nd.array([1, 0], dtype="bool")] = 1


def test_float_ndarray_mask_is_integer_indices():
    m = mx.nd.array([[1, 2], [3, 4]])
    r = m[m > 2]                       # [[0, 0], [1, 1]] used as row indices
    check(r, np.array([[1, 2], [3, 4]], np.float32)[[[0, 0], [1, 1]]])


def test_zero_dim_ndarray_index_is_an_int():
    a = a234()
    v = a[mx.nd.array(1)]
    check(v, BASE[1])


# shapes from MXNet 1.9.1: None after an adjacent advanced block goes before it
NEWAXES = [
    (([0, 1], None), (1, 2, 3, 4)), ((None, [0, 1]), (1, 2, 3, 4)),
    (([0, 1], None, 1), (2, 1, 4)), ((1, None, [0, 2]), (2, 1, 4)),
    (([0, 1], S(None), None), (2, 1, 3, 4)), ((None, [0, 1], None), (1, 1, 2, 3, 4)),
    ((Ellipsis, None, [0, 1]), (2, 3, 1, 2)), (([0, 1], [1, 2], None), (1, 2, 4)),
    ((S(None), None, [0, 2]), (2, 1, 2, 4)), ((S(None), [0, 2], None), (2, 1, 2, 4)),
    (([[0], [1]], None, [1, 2]), (2, 2, 1, 4)), ((None, [0, 1], S(None), None), (1, 2, 1, 3, 4)),
    (([0, 1], None, None), (1, 1, 2, 3, 4)), ((0, None, [1, 2], None), (2, 1, 1, 4)),
]


@pytest.mark.parametrize("key,shape", NEWAXES, ids=[repr(k) for k, _ in NEWAXES])
def test_none_with_advanced_indices_like_mxnet(key, shape, ctx):
    r = a234()[key]
    assert r.shape == shape
    # the values are numpy's, only the unit axes move
    np_key = tuple(k for k in key if k is not None)
    np.testing.assert_array_equal(r.asnumpy().ravel(), BASE[np_key].ravel())


def test_zero_dim_indexing(ctx):
    s = mx.nd.array(5)
    assert s[()] is s
    with pytest.raises(IndexError):
        s[0]


# ---------------------------------------------------------------- setitem


@pytest.mark.parametrize("key,value", [
    (0, 1), ((1, 2), np.array([9, 8, 7, 6])), ((S(None), 0), [[1], [2]]),
    ((S(None), S(None), 1), mx.nd.array([[1, 2, 3], [4, 5, 6]])),
    ((1, S(None), S(None, None, 2)), 3), (([0, 1], [1, 2]), 4),
    ((0, [0, 2], S(1, 3)), mx.nd.array([[11, 12], [13, 14]])),
    ((Ellipsis, 3), mx.nd.array([[1], [2]])), ((S(None), S(None, None, -1), 0), np.array([1, 2, 3])),
    ([1, 0], mx.nd.array(np.arange(24).reshape(2, 3, 4))), ((mx.nd.array([1]), 1), 7),
    (([0, 0], [1, 1]), np.array([[3, 3, 3, 3], [4, 4, 4, 4]])), ((S(None), [2]), 9),
    ([0], mx.nd.array([1, 1, 1, 1])), ((0, [0, 1, 2]), mx.nd.array([[5, 6, 7, 8]])),
    ((S(None), 1), np.ones((1, 1, 4)) * 3), ((0, 0, 0), mx.nd.array([42])),
    ((0, 0, S(1, 3)), mx.nd.array([[1, 2]])), (S(0, 1), np.float64(2.5)), (1, True),
    (None, mx.nd.ones((1, 2, 3, 4)) * 2), ((S(None), S(0, 2), S(1, 3)), mx.nd.array([[1, 2], [3, 4]])),
    ((0, S(None), S(None)), mx.nd.zeros((3, 4), dtype="int32") + 5), ((range(2),), 1),
    (((0, 1), (1, 2)), -5), (S(None), mx.nd.ones((1, 1, 2, 3, 4))), (Ellipsis, 6), ((), 4),
])
def test_setitem_like_numpy(key, value, ctx):
    a = a234()
    a[key] = value
    want = BASE.copy()
    np_key = key
    if isinstance(key, tuple):
        np_key = tuple(k.asnumpy().astype(int) if isinstance(k, mx.nd.NDArray) else
                       list(k) if isinstance(k, (range, tuple)) else k for k in key)
    np_value = value.asnumpy() if isinstance(value, mx.nd.NDArray) else np.asarray(value)
    if np_value.ndim > want[np_key].ndim:
        np_value = np_value.reshape(np_value.shape[np_value.ndim - want[np_key].ndim:])
    want[np_key] = np_value
    check(a, want)


def test_setitem_with_numpy_bool_array_sets_rows_0_and_1():
    a = a234()
    a[np.array([True, False])] = 5          # rows 1 and 0, like MXNet
    check(a, np.full((2, 3, 4), 5, np.float32))


def test_setitem_none_with_advanced_key():
    a = a234()
    a[[0, 1], None] = 1
    check(a, np.ones((2, 3, 4), np.float32))


@pytest.mark.parametrize("key,value,match", [
    (S(None), np.array([1, 2]), "shape"), (S(None), mx.nd.array([1, 2]), r"\(2,\)"),
    (0, np.array([1, 2]), r"\(2,\)"), (0, [1, 2, 3, 4, 5], r"\(5,\)"),
    ((S(None), 1), np.array([1, 2, 3]), r"\(3,\)"), ([0, 1], np.array([1, 2, 3, 4, 5]), r"\(5,\)"),
])
def test_setitem_shape_mismatch_raises_at_the_call(key, value, match):
    a = a234()
    with pytest.raises(ValueError, match=match):         # MXNet raises ValueError here
        a[key] = value
    check(a, BASE)


def test_setitem_rejects_strings():
    with pytest.raises(TypeError, match="non-array-like"):
        a234()[:] = "x"


@pytest.mark.parametrize("key", [S(None), 0, (S(None), 0), (S(None), S(None, None, 2)), [0, 1]])
def test_setitem_copies_numpy_value_at_the_call(key):
    a = mx.nd.zeros((2, 3))
    want = np.zeros((2, 3), np.float32)
    src = np.ones(want[key].shape)
    a[key] = src
    want[key] = 1
    src[...] = 50                 # later changes to the source must not leak in
    check(a, want)


def test_setitem_int_array_casts_values(ctx):
    i = mx.nd.zeros((2, 2), dtype="int32")
    i[0] = 2.7
    i[1] = np.array([1.9, -1.9])
    check(i, [[2, 2], [1, -1]], np.int32)
    i[:] = -3.5
    check(i, [[-3, -3], [-3, -3]], np.int32)
    i[0, 0] = 7.9
    check(i, [[7, -3], [-3, -3]], np.int32)


def test_setitem_uint8_wraps_like_mxnet():
    u = mx.nd.zeros((4,), dtype="uint8")
    u[1:3] = 300
    check(u, [0, 44, 44, 0], np.uint8)
    u[::2] = -1
    check(u, [255, 44, 255, 0], np.uint8)
    u[[0]] = 257
    check(u, [1, 44, 255, 0], np.uint8)
    u[:] = 300
    check(u, [44, 44, 44, 44], np.uint8)


def test_setitem_none_value_gives_nan_like_mxnet():
    a = mx.nd.zeros((2,))
    a[:] = None
    assert np.isnan(a.asnumpy()).all()


def test_setitem_through_views_and_ordering(ctx):
    a = a234()
    v = a[1]
    v[0] = 0                      # write through a view
    a[1, 1] += 1                  # read-modify-write via getitem + setitem
    want = BASE.copy()
    want[1, 0] = 0
    want[1, 1] += 1
    check(a, want)
    s = a[:, 1]                   # a copy: later writes to it do not reach a
    s[:] = -7
    check(a, want)


def test_zero_dim_setitem():
    s = mx.nd.array(5)
    s[()] = 3
    check(s, np.array(3, np.float32))
