"""The NDArray handle: properties, copies, reshaping, container protocol,
pickling and arithmetic, each checked against MXNet 1.9.1's behaviour."""
from __future__ import annotations

import operator
import os
import pickle
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError


def check(arr, want, dtype=None):
    got = arr.asnumpy()
    want = np.asarray(want, dtype=dtype if dtype is not None else got.dtype)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def a23():
    return mx.nd.array(np.arange(6).reshape(2, 3))


def a234():
    return mx.nd.array(np.arange(24).reshape(2, 3, 4))


# -------------------------------------------------------------- properties


def test_properties():
    a = a23()
    assert a.shape == (2, 3) and a.size == 6 and a.ndim == 2
    assert a.dtype is np.float32           # a numpy type class, as MXNet's
    assert a.context == mx.cpu(0) and a.ctx == mx.cpu(0)
    assert a.stype == "default"
    check(a.T, np.arange(6).reshape(2, 3).T, np.float32)
    assert a234().T.shape == (4, 3, 2)
    v = mx.nd.array([1, 2, 3])
    assert v.T is v                         # MXNet: T of a <2-D array is itself


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64",
                                   "uint8", "bool"])
def test_dtype_is_numpy_type_class(dtype):
    assert mx.nd.zeros((1,), dtype=dtype).dtype is np.dtype(dtype).type


# repr strings taken from MXNet 1.9.1
@pytest.mark.parametrize("make,want", [
    (lambda: mx.nd.array(np.arange(6).reshape(2, 3)),
     "\n[[0. 1. 2.]\n [3. 4. 5.]]\n<NDArray 2x3 @cpu(0)>"),
    (lambda: mx.nd.array([1, 2, 3], dtype="int32"), "\n[1 2 3]\n<NDArray 3 @cpu(0)>"),
    (lambda: mx.nd.array(np.arange(24).reshape(2, 3, 4)),
     "\n[[[ 0.  1.  2.  3.]\n  [ 4.  5.  6.  7.]\n  [ 8.  9. 10. 11.]]\n\n"
     " [[12. 13. 14. 15.]\n  [16. 17. 18. 19.]\n  [20. 21. 22. 23.]]]\n<NDArray 2x3x4 @cpu(0)>"),
    (lambda: mx.nd.array(5), "\n5.0\n<NDArray  @cpu(0)>"),
    (lambda: mx.nd.array([]), "\n[]\n<NDArray 0 @cpu(0)>"),
    (lambda: mx.nd.zeros((2, 3), ctx=mx.cpu(1)), "\n[[0. 0. 0.]\n [0. 0. 0.]]\n<NDArray 2x3 @cpu(1)>"),
    (lambda: mx.nd.array([1.5, 2.25], dtype="float64"), "\n[1.5  2.25]\n<NDArray 2 @cpu(0)>"),
    (lambda: mx.nd.array([True, False], dtype="bool"), "\n[ True False]\n<NDArray 2 @cpu(0)>"),
    (lambda: mx.nd.array([1.5, -2], dtype="float16"), "\n[ 1.5 -2. ]\n<NDArray 2 @cpu(0)>"),
    (lambda: mx.nd.array([np.nan, np.inf, -np.inf]), "\n[ nan  inf -inf]\n<NDArray 3 @cpu(0)>"),
    (lambda: mx.nd.array(np.arange(2000)),
     "\n[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]\n<NDArray 2000 @cpu(0)>"),
])
def test_repr_matches_mxnet(make, want):
    a = make()
    assert repr(a) == want
    assert str(a) == want


# ----------------------------------------------------------------- reading


def test_asnumpy_is_a_private_copy():
    a = mx.nd.array([1, 2])
    n = a.asnumpy()
    assert type(n) is np.ndarray and n.dtype == np.float32
    n[0] = 100
    check(a, [1, 2], np.float32)


@pytest.mark.parametrize("src,dtype,want", [
    ([3.5], None, np.float32(3.5)), ([[3]], "int32", np.int32(3)), (5, None, np.float32(5)),
])
def test_asscalar(src, dtype, want):
    v = mx.nd.array(src, dtype=dtype).asscalar()
    assert v == want and type(v) is type(want)


@pytest.mark.parametrize("src", [[1, 2], []])
def test_asscalar_needs_size_one(src):
    with pytest.raises(ValueError, match="not a scalar"):
        mx.nd.array(src).asscalar()


def test_wait_to_read():
    a = mx.nd.ones((3,)) * 2
    assert a.wait_to_read() is None
    check(a, [2, 2, 2], np.float32)


# ----------------------------------------------------------------- copying


def test_copyto_ndarray_returns_target():
    a = mx.nd.array([1, 2, 3])
    b = mx.nd.zeros((3,))
    assert a.copyto(b) is b
    check(b, [1, 2, 3], np.float32)
    c = a.copyto(mx.nd.zeros((3,), dtype="int32"))     # casts into the target's dtype
    check(c, [1, 2, 3], np.int32)


def test_copyto_context_and_independence():
    a = mx.nd.array([1, 2, 3])
    c = a.copyto(mx.cpu(1))
    assert c.context == mx.cpu(1)
    c *= 3
    check(a, [1, 2, 3], np.float32)
    check(c, [3, 6, 9], np.float32)


def test_copyto_shape_mismatch():
    with pytest.raises(MXNetError, match=r"\(3,\).*\(4,\)"):
        mx.nd.array([1, 2, 3]).copyto(mx.nd.zeros((4,)))


def test_copyto_self_and_bad_type():
    a = mx.nd.array([1, 2])
    with pytest.warns(RuntimeWarning, match="itself"):
        assert a.copyto(a) is False
    with pytest.raises(TypeError, match="copyto does not support type"):
        a.copyto(5)


def test_copy_and_as_in_context():
    a = mx.nd.array([1, 2])
    d = a.copy()
    assert d is not a
    d[:] = 0
    check(a, [1, 2], np.float32)
    assert a.as_in_context(mx.cpu(0)) is a
    b = a.as_in_context(mx.cpu(1))
    assert b.context == mx.cpu(1) and b is not a
    check(b, [1, 2], np.float32)


@pytest.mark.parametrize("src,dtype,want", [
    ([1.7, -1.7, 2.5], "int32", np.array([1, -1, 2], np.int32)),          # toward zero
    ([300, -1], "uint8", np.array([44, 255], np.uint8)),                   # C cast wraps
    ([0, 2.5], "bool", np.array([False, True])),
    ([1, 2], np.float64, np.array([1, 2], np.float64)),
    ([1, 2], "float16", np.array([1, 2], np.float16)),
])
def test_astype(src, dtype, want):
    check(mx.nd.array(src).astype(dtype), want)


def test_astype_copy_flag():
    a = mx.nd.array([1, 2, 3])
    assert a.astype("float32") is not a
    assert a.astype("float32", copy=False) is a
    assert a.astype(np.float32, copy=False) is a
    b = a.astype("int32", copy=False)
    assert b is not a and b.dtype is np.int32


# ------------------------------------------------------------------ reshape

# (args, kwargs, MXNet 1.9.1 result shape) for an input of shape (2, 3, 4)
RESHAPES = [
    (((4, 6),), {}, (4, 6)),
    ((4, 6), {}, (4, 6)),
    ((), {"shape": (4, 6)}, (4, 6)),
    (((0, -1),), {}, (2, 12)),
    (((-1,),), {}, (24,)),
    (((-1, 4),), {}, (6, 4)),
    (((0, 0, -1),), {}, (2, 3, 4)),
    (((-2,),), {}, (2, 3, 4)),
    (((2, -2),), {}, (2, 3, 4)),
    (((0, -2),), {}, (2, 3, 4)),
    (((-2, 1, 1),), {}, (2, 3, 4, 1, 1)),
    (((-3, 4),), {}, (6, 4)),
    (((2, -3),), {}, (2, 12)),
    (((-3, -2),), {}, (6, 4)),
    (((-4, 1, 2, -2),), {}, (1, 2, 3, 4)),
    (((-4, 2, -1, -2),), {}, (2, 1, 3, 4)),
    (((-4, -1, 1, -2),), {}, (2, 1, 3, 4)),
    (((0, -4, 3, 1, -2),), {}, (2, 3, 1, 4)),
    (((0, -4, -1, 1, 0),), {}, (2, 3, 1, 4)),
    (((-1, 0),), {}, (8, 3)),
    (((6, -1, 2),), {}, (6, 2, 2)),
    (((-1, 3, 0),), {}, (2, 3, 4)),
    (((0, -1, 2),), {}, (2, 6, 2)),
    (((2, 3, 4, 1),), {}, (2, 3, 4, 1)),
    (((-1,),), {"reverse": True}, (24,)),
    (((0, -1),), {"reverse": True}, (3, 8)),
    (((-1, 0),), {"reverse": True}, (6, 4)),
    (((-3, 0),), {"reverse": True}, (6, 4)),
    (((-1, 0, 0),), {"reverse": True}, (2, 3, 4)),
]


@pytest.mark.parametrize("args,kwargs,want", RESHAPES)
def test_reshape_codes(args, kwargs, want):
    a = a234()
    r = a.reshape(*args, **kwargs)
    assert r.shape == want
    np.testing.assert_array_equal(r.asnumpy().ravel(), np.arange(24))
    shape = kwargs["shape"] if not args else args[0] if len(args) == 1 else args
    assert mx.nd.reshape(a, shape=shape, reverse=kwargs.get("reverse", False)).shape == want


@pytest.mark.parametrize("shape,match", [
    ((5, 5), "24 elements vs 25"), ((-1, -1), "only one dimension can be -1"),
    ((-1, 5), "cannot infer"), ((-5,), "invalid dimension -5"),
    ((0, 0, 0, 0), "more dimensions"), ((-4, 5, -1, -2), "do not divide"), ((), "24 elements vs 1"),
])
def test_reshape_errors_at_the_call(shape, match):
    with pytest.raises(MXNetError, match=match):
        a234().reshape(shape)


def test_reshape_unknown_keyword():
    with pytest.raises(TypeError):
        a234().reshape((24,), order="F")


def test_reshape_is_a_view_both_ways():
    a = a23()
    b = a.reshape((3, 2))
    b[0, 0] = 100
    check(a, [[100, 1, 2], [3, 4, 5]], np.float32)
    a[1, 1] = 50
    check(b, [[100, 1], [2, 3], [50, 5]], np.float32)
    c = a.reshape((6,))
    c[:] = 7
    check(a, np.full((2, 3), 7), np.float32)
    s = mx.nd.array([3]).reshape(())
    assert s.shape == ()


def test_reshape_of_a_view_shares_memory():
    a = a234()
    v = a[1]                        # contiguous view
    r = v.reshape((12,))
    r[:] = -1
    assert (a.asnumpy()[1] == -1).all() and (a.asnumpy()[0] != -1).all()


# -------------------------------------------------- flatten/expand/squeeze


def test_flatten_expand_squeeze_broadcast_shapes():
    a = a234()
    assert a.flatten().shape == (2, 12)
    np.testing.assert_array_equal(a.flatten().asnumpy()[1], np.arange(12, 24))
    assert mx.nd.array([1, 2]).flatten().shape == (2, 1)
    assert a.expand_dims(0).shape == (1, 2, 3, 4)
    assert a.expand_dims(3).shape == (2, 3, 4, 1)
    assert a.expand_dims(-1).shape == (2, 3, 4, 1)
    assert a.expand_dims(axis=1).shape == (2, 1, 3, 4)
    z = mx.nd.zeros((1, 3, 1))
    assert z.squeeze().shape == (3,)
    assert z.squeeze(axis=0).shape == (3, 1)
    assert z.squeeze(axis=(0, 2)).shape == (3,)
    assert z.squeeze(axis=-1).shape == (1, 3)
    assert mx.nd.zeros((1, 1)).squeeze().shape == (1,)       # never 0-d
    check(mx.nd.array([1, 2, 3]).broadcast_to((2, 3)), [[1, 2, 3], [1, 2, 3]], np.float32)
    check(mx.nd.array([[1], [2]]).broadcast_to((2, 3)), [[1, 1, 1], [2, 2, 2]], np.float32)
    assert mx.nd.array([1, 2, 3]).reshape_like(mx.nd.zeros((3, 1))).shape == (3, 1)
    assert mx.nd.array([1, 2, 3]).broadcast_like(mx.nd.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("call,match", [
    (lambda a: a.expand_dims(4), "axis=4"),
    (lambda a: a.expand_dims(-5), "axis=-5"),
    (lambda a: a.squeeze(axis=1), "squeeze axis 1 of size 3"),
    (lambda a: a.broadcast_to((2, 4, 5)), "cannot broadcast"),
])
def test_shape_method_errors(call, match):
    a = a234() if "squeeze" not in match else mx.nd.zeros((1, 3, 1))
    with pytest.raises(MXNetError, match=match):
        call(a)


def test_copying_shape_methods_do_not_alias():
    # MXNet: flatten()/squeeze() without inplace=True return copies
    a = a23()
    f = a.flatten()
    f[0, 0] = 77
    s = mx.nd.zeros((1, 3))
    t = s.squeeze()
    t[0] = 5
    check(a, np.arange(6).reshape(2, 3), np.float32)
    check(s, [[0, 0, 0]], np.float32)


def test_expand_dims_default_is_a_copy():
    a = a23()
    e = a.expand_dims(0)
    e[0, 0, 0] = 99
    check(a, np.arange(6).reshape(2, 3), np.float32)


def test_inplace_shape_methods_are_views():
    a = a23()
    f = a.flatten(inplace=True)
    f[0, 0] = 76
    s = mx.nd.zeros((1, 3))
    t = s.squeeze(inplace=True)
    t[0] = 6
    assert a.asnumpy()[0, 0] == 76 and s.asnumpy()[0, 0] == 6


def test_expand_dims_inplace_is_a_view():
    a = a23()
    f = a.expand_dims(0, inplace=True)
    f[0, 0, 0] = 98
    assert a.asnumpy()[0, 0] == 98


# --------------------------------------------------------------- container


def test_len_iter_bool():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert len(a) == 2
    rows = list(a)
    assert [r.shape for r in rows] == [(2,), (2,)]
    check(rows[1], [3, 4], np.float32)
    assert [x.shape for x in mx.nd.array([1, 2, 3])] == [(1,)] * 3   # elements have shape (1,)
    assert bool(mx.nd.array([2])) is True
    assert bool(mx.nd.array([0])) is False
    assert bool(mx.nd.array(1)) is True
    assert bool(mx.nd.array([[0.5]])) is True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert bool(mx.nd.array([])) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.array([1, 2]))


def test_len_and_iter_of_zero_dim_raise():
    s = mx.nd.array(5)
    with pytest.raises((TypeError, IndexError)):
        len(s)
    with pytest.raises((TypeError, IndexError)):
        list(s)


def test_hash_is_identity():
    a = mx.nd.array([1])
    assert hash(a) == hash(a)
    assert len({a, a, mx.nd.array([1])}) == 2


# --------------------------------------------------------- pickling, files


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "float16"])
def test_pickle_round_trip(dtype):
    a = mx.nd.array([[1, 2], [3, 4]], dtype=dtype)
    b = pickle.loads(pickle.dumps(a))
    assert b.dtype is a.dtype and b.shape == a.shape
    check(b, a.asnumpy())
    b[:] = 0
    check(a, [[1, 2], [3, 4]], dtype)


def test_unpickle_lands_on_cpu0_like_mxnet():
    a = mx.nd.array([1, 2], ctx=mx.cpu(1))
    assert pickle.loads(pickle.dumps(a)).context == mx.cpu(0)


def test_save_load_basic(tmp_path):
    a = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    b = mx.nd.ones((3,))
    fn = os.fspath(tmp_path / "x.nd")
    mx.nd.save(fn, {"a": a, "b": b})
    got = mx.nd.load(fn)
    assert sorted(got) == ["a", "b"]
    check(got["a"], a.asnumpy())
    check(got["b"], b.asnumpy())
    mx.nd.save(fn, [a, b])
    got = mx.nd.load(fn)
    assert isinstance(got, list) and len(got) == 2
    check(got[0], a.asnumpy())
    mx.nd.save(fn, a)
    got = mx.nd.load(fn)
    assert isinstance(got, list) and len(got) == 1
    check(got[0], a.asnumpy())


# -------------------------------------------------------------- arithmetic

M = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
V = np.array([10, 20, 30], np.float32)

ARRAY_OPS = [
    ("+", operator.add), ("-", operator.sub), ("*", operator.mul), ("/", operator.truediv),
    ("%", operator.mod), ("**", operator.pow),
]


@pytest.mark.parametrize("name,fn", ARRAY_OPS, ids=[n for n, _ in ARRAY_OPS])
@pytest.mark.parametrize("ls,rs", [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)),
                                   ((2, 1), (1, 3)), ((2, 3), (1,)), ((0, 3), (3,))])
def test_array_array_broadcasting(name, fn, ls, rs):
    rng = np.random.default_rng(0)
    l = rng.uniform(0.5, 3, ls).astype(np.float32)
    r = rng.uniform(0.5, 3, rs).astype(np.float32)
    got = fn(mx.nd.array(l), mx.nd.array(r))
    assert got.dtype is np.float32
    np.testing.assert_allclose(got.asnumpy(), fn(l, r), rtol=1e-5)


@pytest.mark.parametrize("name,fn", ARRAY_OPS, ids=[n for n, _ in ARRAY_OPS])
@pytest.mark.parametrize("scalar", [2, 2.5, -1.5, np.float64(1.5), np.int32(3), True])
def test_array_scalar_both_sides(name, fn, scalar):
    a = mx.nd.array(M)
    got = fn(a, scalar)
    assert got.dtype is np.float32
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got.asnumpy(), fn(M, np.float32(scalar)), rtol=1e-5)
        np.testing.assert_allclose(fn(scalar, a).asnumpy(), fn(np.float32(scalar), M), rtol=1e-5)


def test_reflected_values():
    a = mx.nd.array(M)
    check(10 - a, 10 - M)
    check(6 / a, 6 / M)
    check(7 % a, 7 % M)
    check(2 ** a, 2 ** M)
    check(1 + a, 1 + M)
    check(2 * a, 2 * M)


@pytest.mark.parametrize("op,scalar,want", [
    ("iadd", 1, [2, 3]), ("isub", 1, [0, 1]), ("imul", 3, [3, 6]), ("itruediv", 2, [0.5, 1]),
    ("imod", 2, [1, 0]),
])
def test_inplace_ops_keep_the_object(op, scalar, want):
    x = mx.nd.array([1, 2])
    y = x
    x = getattr(operator, op)(x, scalar)
    assert x is y
    check(y, want, np.float32)


def test_inplace_with_arrays_and_broadcast():
    z = mx.nd.array([[1, 2], [3, 4]])
    zz = z
    z += mx.nd.array([10, 20])
    assert z is zz
    check(z, [[11, 22], [13, 24]], np.float32)
    z -= mx.nd.array([[1, 1], [1, 1]])
    check(zz, [[10, 21], [12, 23]], np.float32)
    w = mx.nd.array([1, 2])
    with pytest.raises(MXNetError, match=r"\(2,\).*\(2, 2\)"):
        w += mx.nd.array([[1, 2], [3, 4]])            # result does not fit w
    check(w, [1, 2], np.float32)


def test_inplace_on_a_view_writes_the_base():
    x = mx.nd.array([5, 6])
    v = x[0:1]
    v += 10
    check(x, [15, 6], np.float32)


def test_ipow_rebinds_like_mxnet():
    x = mx.nd.array([1, 2])
    y = x
    x **= 2
    assert x is not y
    check(y, [1, 2], np.float32)
    check(x, [1, 4], np.float32)


CMP = [("==", operator.eq), ("!=", operator.ne), (">", operator.gt), (">=", operator.ge),
       ("<", operator.lt), ("<=", operator.le)]


@pytest.mark.parametrize("name,fn", CMP, ids=[n for n, _ in CMP])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8", "int64"])
def test_comparisons_return_input_dtype(name, fn, dtype):
    a = mx.nd.array([1, 2, 3], dtype=dtype)
    b = mx.nd.array([1, 0, 3], dtype=dtype)
    want = fn(np.array([1, 2, 3]), 2).astype(dtype)
    check(fn(a, 2), want)
    check(fn(2, a), fn(2, np.array([1, 2, 3])).astype(dtype))
    check(fn(a, b), fn(np.array([1, 2, 3]), np.array([1, 0, 3])).astype(dtype))


def test_comparison_broadcasting_and_float_scalar_on_ints():
    a = mx.nd.array([1, 2, 3])
    check(a > mx.nd.array([[0], [2]]), [[1, 1, 1], [0, 0, 1]], np.float32)
    i = mx.nd.array([1, 2, 3], dtype="int32")
    check(i > 1.5, [0, 1, 1], np.int32)      # the scalar is cast to int32 first: i > 1
    check(i == 2.5, [0, 1, 0], np.int32)     # ... i == 2


def test_neg_abs_pos():
    a = mx.nd.array([[-1.5, 2], [0, -3]])
    check(-a, [[1.5, -2], [0, 3]], np.float32)
    check(abs(a), [[1.5, 2], [0, 3]], np.float32)
    i = mx.nd.array([-3, 4], dtype="int32")
    check(-i, [3, -4], np.int32)
    check(abs(i), [3, 4], np.int32)


# integer arrays: values from MXNet 1.9.1
@pytest.mark.parametrize("expr,want", [
    (lambda i: i * 2.5, [2, 4, -6]),          # scalar cast to int first: i * 2
    (lambda i: i + 0.7, [1, 2, -3]),
    (lambda i: i - 0.7, [1, 2, -3]),
    (lambda i: i / 2, [0, 1, -1]),            # integer division truncates toward zero
    (lambda i: i / 2.5, [0, 1, -1]),
    (lambda i: 7 / i, [7, 3, -2]),
    (lambda i: i % 2, [1, 0, 1]),             # Python-style modulo (sign of the divisor)
    (lambda i: i % -2, [-1, 0, -1]),
    (lambda i: -7 % i, [0, 1, -1]),
    (lambda i: i ** 2, [1, 4, 9]),
    (lambda i: i ** 0.5, [1, 1, 1]),          # 0.5 -> int 0, x ** 0 == 1
    (lambda i: 2 ** i, [2, 4, 0]),            # 2 ** -3 == 0.125 -> 0
    (lambda i: i ** -1, [1, 0, 0]),
])
def test_int_array_with_scalars(expr, want):
    i = mx.nd.array([1, 2, -3], dtype="int32")
    r = expr(i)
    check(r, want, np.int32)


@pytest.mark.parametrize("lhs,rhs,op,want", [
    ([-7, 7], [2, -2], operator.truediv, [-3, -3]),
    ([-7, 7], [2, -2], operator.mod, [1, -1]),
    ([-2, -1, 0, 1, 2], [-1] * 5, operator.pow, [0, -1, np.iinfo(np.int32).min, 1, 0]),
    ([-2, -1, 0, 1, 2], [3] * 5, operator.pow, [-8, -1, 0, 1, 8]),
    ([7], [11], operator.pow, [1977326720]),       # powf in float32, as MXNet
])
def test_int_array_with_int_arrays(lhs, rhs, op, want):
    r = op(mx.nd.array(lhs, dtype="int32"), mx.nd.array(rhs, dtype="int32"))
    check(r, want, np.int32)


@pytest.mark.parametrize("expr,want", [
    (lambda u: u + 10, [4, 20]),              # wraps
    (lambda u: u + 300, [38, 54]),            # 300 -> uint8 44 first
    (lambda u: u * 1.5, [250, 10]),           # 1.5 -> 1
    (lambda u: u - 5, [245, 5]),
    (lambda u: u == 266, [0, 1]),             # 266 -> 10
])
def test_uint8_scalar_casts(expr, want):
    check(expr(mx.nd.array([250, 10], dtype="uint8")), want, np.uint8)


def test_float_mod_and_div_edge_values():
    check(mx.nd.array([-7.5, 7.5]) % 2, [0.5, 1.5], np.float32)
    check(mx.nd.array([-7.0, 7.0]) % mx.nd.array([2.0, -2.0]), [1, -1], np.float32)
    check(mx.nd.array([5.0, 5.0]) % 0, [0, 0], np.float32)          # MXNet: x % 0 == 0
    check(mx.nd.array([5.0, 5.0]) % mx.nd.array([0.0, 2.0]), [0, 1], np.float32)
    with np.errstate(all="ignore"):
        check(mx.nd.array([1.0, -1.0, 0.0]) / 0, np.array([1.0, -1, 0]) / 0, np.float32)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64", "int8"])
def test_scalar_ops_keep_dtype(dtype):
    a = mx.nd.array([1, 2], dtype=dtype)
    for r in (a + 1, a * 2.5, a - 1, a / 2, a ** 2, 3 - a, a > 1):
        assert r.dtype is np.dtype(dtype).type


def test_bool_arrays_with_scalars_give_int64():
    b = mx.nd.array([True, False], dtype="bool")
    check(b + 1, [2, 1], np.int64)
    check(b * 2, [2, 0], np.int64)
    check(b == 1, [1, 0], np.int64)
    check(b - 1, [0, -1], np.int64)
    check(1 - b, [0, 1], np.int64)
    check(b / 2, [0, 0], np.int64)
    check(b ** 2, [1, 0], np.int64)
    check(b % 2, [1, 0], np.int64)
    assert (b + b).dtype is np.bool_


def test_neg_of_bool_is_int64():
    check(-mx.nd.array([True, False], dtype="bool"), [-1, 0], np.int64)


@pytest.mark.parametrize("lhs,rhs", [("int32", "int64"), ("float32", "float64"),
                                     ("float32", "int32"), ("float16", "float32")])
def test_dtype_mismatch_between_arrays_is_an_error(lhs, rhs):
    a = mx.nd.array([1, 2], dtype=lhs)
    b = mx.nd.array([1, 2], dtype=rhs)
    for fn in (operator.add, operator.sub, operator.mul, operator.eq):
        with pytest.raises(MXNetError, match="dtype %s but input 0 has %s" % (rhs, lhs)):
            fn(a, b)


@pytest.mark.parametrize("other", [np.array([1, 2, 3]), [1, 2, 3], "x", None])
def test_non_ndarray_operands_raise_type_error(other):
    a = mx.nd.array(M)
    with pytest.raises(TypeError, match="not supported"):
        a + other
    with pytest.raises(TypeError, match="not supported"):
        a == other


def test_numpy_array_on_the_left_raises():
    a = mx.nd.array(M)
    with pytest.raises(TypeError, match="not supported"):
        np.array([1, 2, 3]) + a


def test_broadcast_shape_error_names_op_and_shapes():
    with pytest.raises(MXNetError, match=r"broadcast_add.*\(2, 3\).*\(2,\)"):
        mx.nd.array(M) + mx.nd.array([1, 2])


def test_reshape_method_refuses_non_integer_dims_at_the_call():
    a = mx.nd.ones((2, 2))
    for bad in ((1.0, 4), ("1", 4), (None, 4)):
        with pytest.raises(TypeError, match="shape dims must be integers"):
            a.reshape(bad)
    assert a.reshape((np.int64(1), 4)).shape == (1, 4)
    assert a.reshape((True, -1)).shape == (1, 4)      # bool is an int, as in MXNet
    assert a.reshape(1, 4).asnumpy().tolist() == [[1, 1, 1, 1]]
