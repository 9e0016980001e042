"""MXNet 1.9.1 behaviours that surprise numpy users, kept on purpose by aiond.

Each was checked against MXNet 1.9.1 itself; MXNet code depends on them, so
aiond must not "fix" them for inputs MXNet accepts.

Shapes
 1. A full reduction (sum, mean, max, norm, argmax ...) has shape (1,), not ().
 2. A scalar element ``a[1, 2, 3]`` has shape (1,); iterating a 1-D array yields (1,) arrays.
 3. ``mx.nd.array(5)`` is 0-d (shape ()), but ``squeeze`` never returns 0-d.
 4. Reshape's special codes: 0 copies a dim, -2 copies the rest, -3 merges two, -4 splits one.
 5. ``dot(..., transpose_a=True)`` on N-D arrays contracts lhs's *first* axis.
 6. ``x[[0, 1], None]`` puts the new axis before the advanced block: (1, 2, ...).
Dtypes
 7. ``mx.nd.array`` makes float32 from float64/int numpy arrays and lists.
 8. ``mx.nd.array(ndarray)`` keeps the NDArray's dtype.
 9. Comparisons return the input dtype holding 1/0, never bool.
10. argmax/argmin return indices in the input dtype: float32 indices for float32 data.
11. Two arrays of different dtypes never promote: int32 + int64 is an error.
12. A bool array with a scalar gives int64.
13. Reductions keep the dtype: uint8 sums wrap, int means truncate.
Integer arithmetic
14. A scalar is cast to the array's dtype first: int32 * 2.5 == int32 * 2; uint8 + 300 adds 44.
15. Integer division truncates toward zero: -3 / 2 == -1.
16. Integer % follows Python's sign rule: -3 % 2 == 1; float x % 0 == 0 (not nan).
17. Integer ** runs as float32 powf: 2 ** -1 == 0 and 7 ** 11 == 1977326720.
18. Casts and fills to integers are C casts: 2.7 -> 2, -1.7 -> -1, 300 -> uint8 44.
Rounding and clipping
19. round() rounds half away from zero; rint() ties go to floor (rint(1.5) == 1).
20. clip(a_min > a_max) is ``x > a_max ? a_max : (x < a_min ? a_min : x)``.
Indexing and memory
21. Contiguous basic slices (``a[1]``, ``a[1:2]``) are views; ``a[:, 1]`` is a copy.
22. A numpy bool array index is an array of 0/1 integers, not a mask.
23. An NDArray bool mask raises ValueError (legacy mode has no boolean indexing).
24. ``a[:] = numpy_array`` copies at the call: later changes to the source do not leak in.
Operands
25. numpy arrays, lists and None are not NDArray operands: TypeError.
"""
from __future__ import annotations

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def val(a):
    return a.asnumpy().tolist()


# ------------------------------------------------------------------ shapes


def test_full_reduction_has_shape_1():
    # 1. MXNet 1.x has no 0-d results from ops: a full reduction is (1,)
    a = mx.nd.ones((2, 3))
    for r in (a.sum(), a.mean(), a.max(), a.norm(), a.argmax(), mx.nd.sum(a, axis=(0, 1))):
        assert r.shape == (1,)


def test_scalar_element_has_shape_1():
    # 2. basic indexing down to one element reshapes to [1]
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert a[1, 2, 3].shape == (1,)
    assert [x.shape for x in mx.nd.array([1, 2, 3])] == [(1,), (1,), (1,)]


def test_zero_dim_array_but_squeeze_keeps_one_dim():
    # 3. the array constructor keeps numpy's 0-d shape; squeeze falls back to (1,)
    assert mx.nd.array(5).shape == ()
    assert mx.nd.zeros((1, 1)).squeeze().shape == (1,)


def test_reshape_special_codes():
    # 4. MXNet's Reshape codes, not numpy's
    a = mx.nd.zeros((2, 3, 4))
    assert a.reshape((0, -1)).shape == (2, 12)
    assert a.reshape((-2, 1)).shape == (2, 3, 4, 1)
    assert a.reshape((-3, 4)).shape == (6, 4)
    assert a.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert a.reshape((-1, 0), reverse=True).shape == (6, 4)


def test_dot_transpose_a_on_nd_contracts_first_axis():
    # 5. lhs is seen as (d0, rest) and transposed: out shape is lhs[1:] + rhs[1:]
    r = mx.nd.dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 5)), transpose_a=True)
    assert r.shape == (3, 4, 5)
    assert val(r)[0][0][0] == 2.0


def test_none_after_advanced_block_goes_first():
    # 6. MXNet counts no axes for an adjacent advanced block when placing None
    a = mx.nd.zeros((2, 3, 4))
    assert a[[0, 1], None].shape == (1, 2, 3, 4)          # numpy: (2, 1, 3, 4)
    assert a[:, [0, 2], None].shape == (2, 1, 2, 4)       # numpy: (2, 2, 1, 4)


# ------------------------------------------------------------------ dtypes


def test_array_defaults_to_float32():
    # 7. the default dtype is float32 whatever the source holds
    assert mx.nd.array(np.arange(3.0)).dtype is np.float32
    assert mx.nd.array(np.arange(3)).dtype is np.float32
    assert mx.nd.array([1, 2]).dtype is np.float32


def test_array_from_ndarray_keeps_dtype():
    # 8. only non-NDArray sources default to float32
    assert mx.nd.array(mx.nd.array([1], dtype="int32")).dtype is np.int32


def test_comparison_returns_input_dtype():
    # 9. 1.0 / 0.0 (or 1 / 0) in the input's dtype
    r = mx.nd.array([1, 2, 3]) > 1
    assert r.dtype is np.float32 and val(r) == [0.0, 1.0, 1.0]
    assert (mx.nd.array([1, 2], dtype="int32") == 2).dtype is np.int32


def test_argmax_returns_floats_for_float_data():
    # 10. indices have the data's dtype
    r = mx.nd.argmax(mx.nd.array([[1, 5, 3]]), axis=1)
    assert r.dtype is np.float32 and val(r) == [1.0]
    assert mx.nd.argmax(mx.nd.array([1, 3], dtype="int32"), axis=0).dtype is np.int32


def test_no_dtype_promotion_between_arrays():
    # 11. binary ops need equal dtypes
    with pytest.raises(MXNetError, match="int32.*int64|int64.*int32"):
        mx.nd.array([1], dtype="int32") + mx.nd.array([1], dtype="int64")
    with pytest.raises(MXNetError, match="float32.*float64|float64.*float32"):
        mx.nd.array([1.0]) * mx.nd.array([1.0], dtype="float64")


def test_bool_with_scalar_gives_int64():
    # 12. scalar ops on bool arrays output int64 (is_int=True)
    r = mx.nd.array([True, False], dtype="bool") + 1
    assert r.dtype is np.int64 and val(r) == [2, 1]


def test_reductions_keep_dtype():
    # 13. no accumulator promotion in the result dtype
    assert val(mx.nd.sum(mx.nd.array([200, 100], dtype="uint8"))) == [44]
    assert val(mx.nd.mean(mx.nd.array([1, 2], dtype="int32"))) == [1]


# ------------------------------------------------------- integer arithmetic


def test_scalar_cast_to_array_dtype_first():
    # 14. the scalar becomes DType before the op
    r = mx.nd.array([1, 2, -3], dtype="int32") * 2.5
    assert r.dtype is np.int32 and val(r) == [2, 4, -6]
    assert val(mx.nd.array([250, 10], dtype="uint8") + 300) == [38, 54]


def test_int_division_truncates():
    # 15. C integer division
    assert val(mx.nd.array([-3, 3], dtype="int32") / 2) == [-1, 1]
    assert val(mx.nd.array([-7], dtype="int32") / mx.nd.array([2], dtype="int32")) == [-3]


def test_modulo_rules():
    # 16. Python's sign rule for %; x % 0 is 0 for floats
    assert val(mx.nd.array([-3, 3], dtype="int32") % 2) == [1, 1]
    assert val(mx.nd.array([-3.0, 3.0]) % -2) == [-1.0, -1.0]
    assert val(mx.nd.array([5.0]) % 0) == [0.0]


def test_int_power_is_float32_powf():
    # 17. pow in float32, cast back
    assert val(2 ** mx.nd.array([-1, 0, 3], dtype="int32")) == [0, 1, 8]
    assert val(mx.nd.array([7], dtype="int32") ** 11) == [1977326720]


def test_casts_to_int_are_c_casts():
    # 18. truncation toward zero; out-of-range wraps
    assert val(mx.nd.array([2.7, -1.7]).astype("int32")) == [2, -1]
    assert val(mx.nd.array([300.0]).astype("uint8")) == [44]
    assert val(mx.nd.full((1,), 300, dtype="uint8")) == [44]
    u = mx.nd.zeros((1,), dtype="uint8")
    u[:] = -1
    assert val(u) == [255]


# ---------------------------------------------------- rounding and clipping


def test_round_and_rint():
    # 19. round: half away from zero; rint: ties to floor
    x = mx.nd.array([-1.5, -0.5, 0.5, 1.5, 2.5])
    assert val(mx.nd.round(x)) == [-2, -1, 1, 2, 3]
    assert val(mx.nd.rint(x)) == [-2, -1, 0, 1, 2]


def test_clip_with_crossed_bounds():
    # 20. the a_max test comes first
    assert val(mx.nd.clip(mx.nd.array([-2, -0.5, 0.5, 3]), 1, -1)) == [1, -1, -1, -1]


# ------------------------------------------------------ indexing and memory


def test_views_and_copies():
    # 21. only contiguous basic results share memory
    a = mx.nd.zeros((2, 3))
    row, col = a[1], a[:, 1]
    a[:] = 5
    assert val(row) == [5, 5, 5]
    assert val(col) == [0, 0]


def test_numpy_bool_index_is_integers():
    # 22. np.array([True, False]) indexes rows 1 and 0
    a = mx.nd.array([[1, 2], [3, 4]])
    assert val(a[np.array([True, False])]) == [[3, 4], [1, 2]]


def test_ndarray_bool_mask_raises():
    # 23. legacy NDArrays have no boolean mask indexing
    a = mx.nd.array([1, 2])
    with pytest.raises(ValueError):
        a[mx.nd.array([1, 0], dtype="bool")]


def test_setitem_from_numpy_copies_now():
    # 24. the value is copied before the call returns
    a = mx.nd.zeros((3,))
    src = np.array([1.0, 2.0, 3.0])
    a[:] = src
    src[:] = 0
    assert val(a) == [1, 2, 3]


# ----------------------------------------------------------------- operands


@pytest.mark.parametrize("other", [np.array([1.0, 2.0]), [1.0, 2.0], None])
def test_non_ndarray_operands(other):
    # 25. no implicit conversion of array-likes in arithmetic
    with pytest.raises(TypeError):
        mx.nd.array([1, 2]) + other
