"""Every op in the registry, called through ``mx.nd`` (or ``mx.nd._internal``),
forward against numpy: one table row per op, run over dtypes and shapes
(0-size and broadcast shapes included). MXNet 1.9.1 semantics that differ
from numpy (integer casts, rint ties, clip with a_min > a_max, dot's
transpose flags on N-D arrays, ...) were checked against MXNet itself.
``test_every_registered_op_is_covered`` fails when an op is added without a row.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.ops import registry

# MXNet computes x / 0 and friends silently, and so do aiond's kernels
# (aiond/ops/_quiet.py): a RuntimeWarning here is a bug
pytestmark = [pytest.mark.filterwarnings("error::RuntimeWarning")]

nd = mx.nd
_int = mx.nd._internal
COVERED: set = set()


def covers(*names):
    COVERED.update(names)
    return names


def fn_of(name):
    return getattr(nd, name, None) or getattr(_int, name)


def check(arr, want, rtol=1e-5, atol=1e-6, dtype=None):
    got = arr.asnumpy()
    want = np.asarray(want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


def tol(dtype):
    return {"float16": (2e-3, 2e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}.get(
        np.dtype(dtype).name, (0, 0))


RNG = np.random.default_rng(1234)
FLOATS = ["float32", "float64", "float16"]
SHAPES = [(0,), (5,), (2, 3), (2, 1, 3)]


def rand(shape, lo, hi, dtype):
    return RNG.uniform(lo, hi, shape).astype(dtype)


# ===================================================================== unary


def _mx_round(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)           # half away from zero


def _mx_rint(x):
    fl, ce = np.floor(x), np.ceil(x)
    return np.where(x - fl <= ce - x, fl, ce)                   # ties to floor


UNARY = {
    # name: (numpy reference, (lo, hi) of the test values)
    "negative": (np.negative, (-3, 3)), "abs": (np.abs, (-3, 3)), "sign": (np.sign, (-3, 3)),
    "exp": (np.exp, (-3, 3)), "log": (np.log, (0.1, 5)), "log2": (np.log2, (0.1, 5)),
    "log10": (np.log10, (0.1, 5)), "log1p": (np.log1p, (-0.5, 3)), "expm1": (np.expm1, (-2, 2)),
    "sqrt": (np.sqrt, (0, 5)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.2, 5)),
    "cbrt": (np.cbrt, (-8, 8)), "rcbrt": (lambda x: 1 / np.cbrt(x), (0.5, 8)),
    "square": (np.square, (-3, 3)),
    "reciprocal": (np.reciprocal, (0.2, 3)), "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)), "round": (_mx_round, (-3, 3)), "rint": (_mx_rint, (-3, 3)),
    "fix": (np.trunc, (-3, 3)), "trunc": (np.trunc, (-3, 3)), "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1.2, 1.2)), "arcsin": (np.arcsin, (-0.99, 0.99)),
    "arccos": (np.arccos, (-0.99, 0.99)), "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "tanh": (np.tanh, (-3, 3)),
    "arcsinh": (np.arcsinh, (-3, 3)), "arccosh": (np.arccosh, (1.01, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)), "degrees": (np.degrees, (-3, 3)),
    "radians": (np.radians, (-180, 180)), "relu": (lambda x: np.maximum(x, 0), (-3, 3)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-5, 5)),
    "softsign": (lambda x: x / (1 + np.abs(x)), (-3, 3)), "_copy": (lambda x: x, (-3, 3)),
    "identity": (lambda x: x, (-3, 3)),
}
covers(*UNARY)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name, dtype, shape, ctx):
    ref, (lo, hi) = UNARY[name]
    x = rand(shape, lo, hi, dtype)
    got = fn_of(name)(nd.array(x, dtype=dtype))
    assert got.dtype is np.dtype(dtype).type and got.shape == shape
    want = ref(x.astype(np.float64))
    rtol, atol = tol(dtype)
    check(got, want.astype(dtype).astype(np.float64), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("name,x,want", [
    ("round", [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4999], [-3, -2, -1, 1, 2, 3, 0]),
    ("rint", [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7], [-3, -2, -1, 0, 1, 2, 4]),
    ("fix", [-1.7, 1.7], [-1, 1]),
    ("sign", [-2, 0, 3], [-1, 0, 1]),
    ("relu", [-1, 0, 2], [0, 0, 2]),
])
def test_unary_exact_values_from_mxnet(name, x, want, ctx):
    check(fn_of(name)(nd.array(x)), np.array(want, np.float32), dtype=np.float32)


# integer inputs: float32 math cast back, values from MXNet 1.9.1
@pytest.mark.parametrize("name,dtype,x,want", [
    ("sqrt", "int32", [4, 9], [2, 3]), ("exp", "int32", [1, 2], [2, 7]),
    ("sigmoid", "int32", [-3, 4], [0, 0]), ("log", "int32", [1, 10], [0, 2]),
    ("sin", "int32", [1, 2], [0, 0]), ("rsqrt", "int32", [4], [0]),
    ("degrees", "int32", [1], [57]), ("softsign", "int32", [1], [0]), ("cbrt", "int32", [27], [3]),
    ("reciprocal", "int32", [2, 1, -1], [0, 1, -1]), ("exp", "uint8", [1, 2], [2, 7]),
    ("tanh", "int64", [1, 2], [0, 0]), ("log2", "int8", [8, 2], [3, 1]),
    ("round", "int32", [-3, 4], [-3, 4]), ("rint", "int32", [-3, 4], [-3, 4]),
    ("floor", "int32", [-3, 4], [-3, 4]), ("abs", "int32", [-3, 4], [3, 4]),
    ("sign", "int32", [-3, 4], [-1, 1]), ("square", "int32", [-3, 4], [9, 16]),
    ("relu", "int32", [-3, 4], [0, 4]), ("negative", "int32", [-3, 4], [3, -4]),
])
def test_unary_int(name, dtype, x, want, ctx):
    check(fn_of(name)(nd.array(x, dtype=dtype)), np.array(want, dtype), dtype=dtype)


# ==================================================================== binary


def _mx_mod(a, b):
    with np.errstate(all="ignore"):
        r = np.mod(a, b)
    return np.where(b == 0, 0, r)                    # MXNet: x % 0 == 0


def _int_div(a, b):
    return np.trunc(a / b)


BINARY = {
    # suffix: float reference, int reference (None: same)
    "add": (np.add, None), "sub": (np.subtract, None), "mul": (np.multiply, None),
    "div": (np.true_divide, _int_div), "mod": (_mx_mod, None),
    "power": (np.power, lambda a, b: np.power(a.astype(np.float32), b.astype(np.float32))),
    "maximum": (np.maximum, None), "minimum": (np.minimum, None), "hypot": (np.hypot, None),
    "equal": (np.equal, None), "not_equal": (np.not_equal, None), "greater": (np.greater, None),
    "greater_equal": (np.greater_equal, None), "lesser": (np.less, None),
    "lesser_equal": (np.less_equal, None),
    "logical_and": (lambda a, b: np.logical_and(a != 0, b != 0), None),
    "logical_or": (lambda a, b: np.logical_or(a != 0, b != 0), None),
    "logical_xor": (lambda a, b: np.logical_xor(a != 0, b != 0), None),
}
BROADCAST_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((0, 3), (1, 3)),
                    ((3, 1, 2), (4, 1)), ((1,), (2, 2)), ((4,), (1,))]
ALIASES = {"broadcast_plus": "broadcast_add", "broadcast_minus": "broadcast_sub"}
covers(*["broadcast_" + k for k in BINARY], *ALIASES)


def _binary_ref(suffix, a, b, dtype):
    fref, iref = BINARY[suffix]
    ref = iref if (iref is not None and np.dtype(dtype).kind in "iu") else fref
    with np.errstate(all="ignore"):
        return np.asarray(ref(a.astype(np.float64) if np.dtype(dtype).kind == "f" else a,
                              b.astype(np.float64) if np.dtype(dtype).kind == "f" else b))


def _operands(ls, rs, dtype, suffix):
    if np.dtype(dtype).kind in "iu":
        a = RNG.integers(1, 5, ls).astype(dtype)
        b = RNG.integers(1, 4, rs).astype(dtype)
    else:
        a = rand(ls, 0.5, 3, dtype)
        b = rand(rs, 0.5, 3, dtype)
        if suffix in ("equal", "not_equal", "greater_equal", "lesser_equal", "maximum"):
            b = np.round(b)
            a = np.round(a)
    return a, b


@pytest.mark.parametrize("ls,rs", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("suffix", sorted(BINARY))
def test_broadcast_binary(suffix, dtype, ls, rs, ctx):
    a, b = _operands(ls, rs, dtype, suffix)
    got = fn_of("broadcast_" + suffix)(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype))
    want = _binary_ref(suffix, a, b, dtype).astype(dtype)
    assert got.dtype is np.dtype(dtype).type            # comparisons too: 1/0 in the input dtype
    check(got, want, *tol(dtype) if dtype != "float16" else (1e-2, 1e-2))


@pytest.mark.parametrize("alias,name", sorted(ALIASES.items()))
def test_broadcast_aliases(alias, name):
    a, b = nd.array([[1, 2], [3, 4]]), nd.array([10, 20])
    check(fn_of(alias)(a, b), fn_of(name)(a, b).asnumpy())


ELEMWISE = {"elemwise_add": "add", "elemwise_sub": "sub", "elemwise_mul": "mul",
            "elemwise_div": "div", "_plus": "add", "_add": "add", "_minus": "sub", "_sub": "sub",
            "_mul": "mul", "_div": "div", "_Power": "power", "_Maximum": "maximum",
            "_Minimum": "minimum", "_Hypot": "hypot", "_Mod": "mod"}
ELEMWISE.update({"_" + k: k for k in BINARY if k not in ("add", "sub", "mul", "div")})
covers(*ELEMWISE)


@pytest.mark.parametrize("shape", [(0,), (4,), (2, 3)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("name", sorted(ELEMWISE))
def test_elemwise_binary(name, dtype, shape, ctx):
    suffix = ELEMWISE[name]
    a, b = _operands(shape, shape, dtype, suffix)
    got = fn_of(name)(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype))
    check(got, _binary_ref(suffix, a, b, dtype).astype(dtype), dtype=dtype)


@pytest.mark.parametrize("name", ["elemwise_add", "_mod", "_equal", "_Power"])
def test_elemwise_binary_needs_equal_shapes(name):
    with pytest.raises(MXNetError, match=r"(?i)%s: .*\(2, 3\).*\(2, 2\)" % name):
        fn_of(name)(nd.ones((2, 2)), nd.ones((2, 3)))


# ================================================================ scalar ops

SCALAR = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": lambda x, s: _mx_mod(x, np.full_like(x, s)),
    "_rmod_scalar": lambda x, s: _mx_mod(np.full_like(x, s), x),
    "_power_scalar": lambda x, s: x ** s, "_rpower_scalar": lambda x, s: s ** x,
    "_maximum_scalar": np.maximum, "_minimum_scalar": np.minimum, "_hypot_scalar": np.hypot,
    "_equal_scalar": np.equal, "_not_equal_scalar": np.not_equal, "_greater_scalar": np.greater,
    "_greater_equal_scalar": np.greater_equal, "_lesser_scalar": np.less,
    "_lesser_equal_scalar": np.less_equal,
    "_logical_and_scalar": lambda x, s: np.logical_and(x != 0, s != 0),
    "_logical_or_scalar": lambda x, s: np.logical_or(x != 0, s != 0),
    "_logical_xor_scalar": lambda x, s: np.logical_xor(x != 0, s != 0),
}
SCALAR_ALIASES = {"_PlusScalar": "_plus_scalar", "_MinusScalar": "_minus_scalar",
                  "_RMinusScalar": "_rminus_scalar", "_MulScalar": "_mul_scalar",
                  "_DivScalar": "_div_scalar", "_RDivScalar": "_rdiv_scalar"}
covers(*SCALAR, *SCALAR_ALIASES)


@pytest.mark.parametrize("scalar", [2.0, 0.5, -1.5, 0.0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(SCALAR) + sorted(SCALAR_ALIASES))
def test_scalar_ops(name, dtype, scalar, ctx):
    ref = SCALAR[SCALAR_ALIASES.get(name, name)]
    x = np.array([[0.5, 1.0, 2.0], [3.0, 0.0, 1.5]], dtype)
    got = getattr(_int, name)(nd.array(x, dtype=dtype), scalar=scalar)
    assert got.dtype is np.dtype(dtype).type
    s = np.dtype(dtype).type(scalar)
    with np.errstate(all="ignore"):
        want = np.asarray(ref(x, s)).astype(dtype)
    check(got, want, *tol(dtype))


@pytest.mark.parametrize("name,scalar,x,want", [
    ("_mul_scalar", 2.5, [1, 2, -3], [2, 4, -6]),            # the scalar is cast to int32 first
    ("_plus_scalar", 0.7, [1, 2, -3], [1, 2, -3]),
    ("_div_scalar", 2.0, [1, 2, -3], [0, 1, -1]),            # truncates toward zero
    ("_rdiv_scalar", 7.0, [1, 2, -3], [7, 3, -2]),
    ("_mod_scalar", -2.0, [1, 2, -3], [-1, 0, -1]),
    ("_rmod_scalar", -7.0, [1, 2, -3], [0, 1, -1]),
    ("_power_scalar", -1.0, [1, 2, -3], [1, 0, 0]),
    ("_rpower_scalar", 2.0, [1, 2, -3], [2, 4, 0]),
    ("_greater_scalar", 1.5, [1, 2, -3], [0, 1, 0]),
    ("_hypot_scalar", 4.0, [3, 0, -3], [5, 4, 5]),
])
def test_scalar_ops_int32(name, scalar, x, want, ctx):
    check(getattr(_int, name)(nd.array(x, dtype="int32"), scalar=scalar),
          np.array(want, np.int32), dtype=np.int32)


def test_scalar_op_string_attrs_from_symbol_json():
    r = _int._plus_scalar(nd.array([1, 2]), scalar="2.5", is_int="0")
    check(r, [3.5, 4.5], dtype=np.float32)


# ================================================================ reductions

REDUCE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
          "nansum": np.nansum, "nanprod": np.nanprod}
REDUCE_ALIASES = {"sum_axis": "sum", "max_axis": "max", "min_axis": "min"}
covers(*REDUCE, *REDUCE_ALIASES)
AXES = [  # (kwargs, numpy axis, keepdims) for an input of shape (2, 3, 4)
    ({}, None, False), ({"axis": 1}, 1, False), ({"axis": -1}, 2, False),
    ({"axis": (0, 2)}, (0, 2), False), ({"axis": 1, "keepdims": True}, 1, True),
    ({"keepdims": True}, None, True), ({"axis": 1, "exclude": True}, (0, 2), False),
    ({"axis": (0, 1), "exclude": True}, 2, False), ({"axis": ()}, None, False),
    ({"axis": (0, 1, 2), "exclude": True}, (), False), ({"axis": 0, "exclude": True,
                                                         "keepdims": True}, (1, 2), True),
]


def _np_reduce(fn, x, axis, keepdims):
    r = np.asarray(fn(x, axis=axis, keepdims=keepdims))
    return r.reshape(1) if r.ndim == 0 else r        # MXNet: a full reduction has shape (1,)


@pytest.mark.parametrize("kwargs,axis,keepdims", AXES, ids=[str(k) for k, _, _ in AXES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(REDUCE) + sorted(REDUCE_ALIASES))
def test_reductions(name, dtype, kwargs, axis, keepdims, ctx):
    fn = REDUCE[REDUCE_ALIASES.get(name, name)]
    x = rand((2, 3, 4), 0.5, 1.5, dtype)
    if name.startswith("nan"):
        x[0, 1, 2] = np.nan
    got = fn_of(name)(nd.array(x, dtype=dtype), **kwargs)
    want = _np_reduce(fn, x.astype(np.float64), axis, keepdims)
    assert got.dtype is np.dtype(dtype).type
    check(got, want, rtol=1e-5)


def test_nanprod_gradient_skips_nans(ctx):
    x = nd.array([[1., 2., np.nan], [3., np.nan, 4.]])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.nanprod(x, axis=1)
    y.backward(nd.array([1., 2.]))
    check(y, np.array([2., 12.], np.float32))
    check(x.grad, np.array([[2., 1., 0.], [8., 0., 6.]], np.float32))


@pytest.mark.parametrize("name", ["sum", "prod", "nansum", "nanprod", "mean", "max"])
def test_reductions_0_size(name, ctx):
    x = np.zeros((0, 3), np.float32)
    if name in ("mean", "max"):
        check(fn_of(name)(nd.array(x), axis=1), np.zeros((0,), np.float32))
    else:
        check(fn_of(name)(nd.array(x), axis=0), REDUCE[name](x, axis=0))


@pytest.mark.parametrize("name,dtype,x,kwargs,want", [
    ("sum", "int32", [1, 2], {}, [3]), ("mean", "int32", [1, 2], {}, [1]),
    ("sum", "uint8", [100, 100], {}, [200]), ("sum", "uint8", [200, 100], {}, [44]),
    ("sum", "float16", [1, 2], {}, [3]), ("max", "int64", [[1, 5], [7, 2]], {"axis": 0}, [7, 5]),
    ("prod", "int32", [[1, 2], [3, 4]], {"axis": 1}, [2, 12]),
])
def test_reductions_keep_dtype(name, dtype, x, kwargs, want, ctx):
    check(fn_of(name)(nd.array(x, dtype=dtype), **kwargs), np.array(want, dtype), dtype=dtype)


@pytest.mark.parametrize("kwargs,axis,keepdims", [
    ({}, None, False), ({"axis": 1}, 1, False), ({"axis": 0, "keepdims": True}, 0, True),
    ({"ord": 1, "axis": 1}, 1, False), ({"ord": 1}, None, False), ({"axis": (0, 1)}, (0, 1), False),
])
def test_norm(kwargs, axis, keepdims, ctx):
    covers("norm")
    x = np.array([[3, -4], [6, 8]], np.float32)
    ordv = kwargs.get("ord", 2)
    want = np.sum(np.abs(x) ** ordv, axis=axis, keepdims=keepdims) ** (1.0 / ordv)
    want = np.asarray(want).reshape(1) if np.ndim(want) == 0 else want
    check(nd.norm(nd.array(x), **kwargs), want)


def test_norm_ord_must_be_1_or_2():
    with pytest.raises(MXNetError, match="norm: ord=3"):
        nd.norm(nd.ones((2,)), ord=3)


ARGS = covers("argmax", "argmin")


@pytest.mark.parametrize("name", ARGS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8"])
def test_argmax_argmin(name, dtype, ctx):
    x = np.array([[1, 5, 3], [7, 2, 7]], dtype)
    f = getattr(np, name)
    fn = fn_of(name)
    # MXNet: the indices come in the input's dtype (float32 for float32 data)
    check(fn(nd.array(x, dtype=dtype)), np.array([f(x)], dtype), dtype=dtype)
    check(fn(nd.array(x, dtype=dtype), axis=1), f(x, axis=1).astype(dtype), dtype=dtype)
    check(fn(nd.array(x, dtype=dtype), axis=-1), f(x, axis=1).astype(dtype), dtype=dtype)
    check(fn(nd.array(x, dtype=dtype), axis=0), f(x, axis=0).astype(dtype), dtype=dtype)
    assert fn(nd.array(x, dtype=dtype), axis=1, keepdims=True).shape == (2, 1)
    assert fn(nd.array([5.0]), axis=0).shape == (1,)


def test_argmax_nan_and_empty_axis():
    check(nd.argmax(nd.array([[1, np.nan, 3]]), axis=1), [1.0], dtype=np.float32)
    with pytest.raises(MXNetError, match="argmax"):
        nd.argmax(nd.array(np.zeros((0, 3))), axis=0)
    assert nd.argmax(nd.array(np.zeros((2, 0))), axis=0).shape == (0,)


# ==================================================================== matrix

covers("dot", "batch_dot")
DOTS = [  # lhs shape, rhs shape, transpose_a, transpose_b, numpy contraction axes
    ((2, 3), (3, 4), False, False, (1, 0)), ((2, 3), (2, 4), True, False, (0, 0)),
    ((2, 3), (4, 3), False, True, (1, 1)), ((3, 2), (4, 3), True, True, (0, 1)),
    ((3,), (3,), False, False, (0, 0)), ((2, 3), (3,), False, False, (1, 0)),
    ((2,), (2, 3), False, False, (0, 0)), ((2,), (3, 2), False, True, (0, 1)),
    ((3, 2), (3,), True, False, (0, 0)), ((2, 3, 4), (4, 5), False, False, (2, 0)),
    ((2, 3, 4), (2, 5), True, False, (0, 0)), ((2, 3), (5, 2, 3), False, True, (1, 2)),
    ((2, 3, 4), (4, 5, 6), False, False, (2, 0)), ((0, 3), (3, 4), False, False, (1, 0)),
    ((2, 0), (0, 4), False, False, (1, 0)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ls,rs,ta,tb,axes", DOTS, ids=[str(d[:4]) for d in DOTS])
def test_dot(ls, rs, ta, tb, axes, dtype, ctx):
    a, b = rand(ls, -1, 1, dtype), rand(rs, -1, 1, dtype)
    got = nd.dot(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype), transpose_a=ta,
                 transpose_b=tb)
    want = np.tensordot(a.astype(np.float64), b.astype(np.float64), axes=([axes[0]], [axes[1]]))
    want = want.reshape(1) if want.ndim == 0 else want
    check(got, want, rtol=1e-4, atol=1e-5, dtype=dtype)


@pytest.mark.parametrize("ls,rs,ta,tb", [
    ((2, 3), (4, 3), False, False), ((2, 3), (3, 4), True, False), ((2, 3, 4), (2, 4), True, True),
    ((3,), (4,), False, False),
])
def test_dot_shape_errors_at_the_call(ls, rs, ta, tb):
    with pytest.raises(MXNetError, match=r"dot: shapes %s and %s do not match"
                       % (str(ls).replace("(", r"\(").replace(")", r"\)"),
                          str(rs).replace("(", r"\(").replace(")", r"\)"))):
        nd.dot(nd.ones(ls), nd.ones(rs), transpose_a=ta, transpose_b=tb)


@pytest.mark.parametrize("ls,rs,ta,tb", [
    ((2, 3, 4), (2, 4, 5), False, False), ((2, 3, 4), (2, 5, 4), False, True),
    ((2, 4, 3), (2, 4, 5), True, False), ((2, 4, 3), (2, 5, 4), True, True),
    ((2, 2, 3, 4), (2, 2, 4, 5), False, False), ((2, 2, 3, 4), (2, 2, 3, 4), True, False),
    ((0, 3, 4), (0, 4, 2), False, False),
])
def test_batch_dot(ls, rs, ta, tb, ctx):
    a, b = rand(ls, -1, 1, "float32"), rand(rs, -1, 1, "float32")
    want = np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)
    got = nd.batch_dot(nd.array(a), nd.array(b), transpose_a=ta, transpose_b=tb)
    check(got, want, rtol=1e-5, dtype=np.float32)


@pytest.mark.parametrize("ls,rs,match", [
    ((2, 3, 4), (2, 3, 5), "do not match"), ((2, 3, 4), (3, 4, 5), "do not match"),
    ((2, 3), (2, 3), "N >= 3"), ((2, 2, 3, 4), (2, 4, 5), "N >= 3"),
])
def test_batch_dot_errors(ls, rs, match):
    with pytest.raises(MXNetError, match="batch_dot: .*" + match):
        nd.batch_dot(nd.ones(ls), nd.ones(rs))


def test_dot_dtype_mismatch():
    with pytest.raises(MXNetError, match="dot: input 1 has dtype float64"):
        nd.dot(nd.ones((2, 2)), nd.ones((2, 2), dtype="float64"))


covers("Reshape", "reshape", "Flatten", "flatten", "expand_dims", "squeeze", "transpose",
       "broadcast_to", "Cast", "cast", "clip", "slice", "crop", "slice_axis")
SHAPE_OPS = [  # (op, kwargs, numpy function of x) on x of shape (2, 3, 4)
    ("Reshape", {"shape": (4, -1)}, lambda x: x.reshape(4, 6)),
    ("reshape", {"shape": (-3, 0)}, lambda x: x.reshape(6, 4)),
    ("reshape", {"shape": (-1, 0), "reverse": True}, lambda x: x.reshape(6, 4)),
    ("Flatten", {}, lambda x: x.reshape(2, 12)),
    ("flatten", {}, lambda x: x.reshape(2, 12)),
    ("expand_dims", {"axis": 1}, lambda x: x[:, None]),
    ("expand_dims", {"axis": -1}, lambda x: x[..., None]),
    ("squeeze", {}, lambda x: x),
    ("transpose", {}, lambda x: x.transpose()),
    ("transpose", {"axes": (1, 0, 2)}, lambda x: x.transpose(1, 0, 2)),
    ("transpose", {"axes": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1)),
    ("broadcast_to", {"shape": (3, 2, 3, 4)}, lambda x: np.broadcast_to(x, (3, 2, 3, 4))),
    ("slice", {"begin": (0, 1), "end": (2, 3)}, lambda x: x[0:2, 1:3]),
    ("slice", {"begin": (None, 1), "end": (None, 3)}, lambda x: x[:, 1:3]),
    ("slice", {"begin": (0, 0, 0), "end": (2, 3, 4), "step": (1, 2, -1)}, lambda x: x[0:2, 0:3:2, 0:4:-1]),
    ("slice", {"begin": (None, None, None), "end": (None, None, None), "step": (-1, -1, -2)},
     lambda x: x[::-1, ::-1, ::-2]),
    ("slice", {"begin": (1,), "end": (2,)}, lambda x: x[1:2]),
    ("slice", {"begin": (0, -2), "end": (2, None)}, lambda x: x[0:2, -2:]),
    ("crop", {"begin": (0, 1), "end": (2, 3)}, lambda x: x[0:2, 1:3]),
    ("slice_axis", {"axis": 1, "begin": 0, "end": 2}, lambda x: x[:, 0:2]),
    ("slice_axis", {"axis": -1, "begin": 1, "end": None}, lambda x: x[..., 1:]),
    ("slice_axis", {"axis": 2, "begin": -3, "end": -1}, lambda x: x[..., -3:-1]),
    ("Cast", {"dtype": "int32"}, lambda x: x.astype(np.int32)),
    ("cast", {"dtype": "float16"}, lambda x: x.astype(np.float16)),
    ("clip", {"a_min": 3, "a_max": 20}, lambda x: np.clip(x, 3, 20)),
]


@pytest.mark.parametrize("name,kwargs,ref", SHAPE_OPS, ids=["%s%s" % (n, k) for n, k, _ in SHAPE_OPS])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_shape_ops(name, kwargs, ref, dtype, ctx):
    x = np.arange(24).reshape(2, 3, 4).astype(dtype)
    got = fn_of(name)(nd.array(x, dtype=dtype), **kwargs)
    want = ref(x)
    check(got, want, dtype=want.dtype)


def test_squeeze_and_broadcast_to_cases(ctx):
    check(nd.squeeze(nd.zeros((1, 2, 1))), np.zeros((2,)))
    check(nd.squeeze(nd.zeros((1, 2, 1)), axis=2), np.zeros((1, 2)))
    check(nd.squeeze(nd.zeros((1, 1))), np.zeros((1,)))                  # never 0-d
    check(nd.broadcast_to(nd.array([[1, 2]]), shape=(3, 0)), np.array([[1, 2]] * 3))  # 0 keeps
    check(nd.broadcast_to(nd.array([1, 2]), shape=(3, 2)), np.array([[1, 2]] * 3))


@pytest.mark.parametrize("call,match", [
    (lambda: nd.transpose(nd.ones((2, 3, 4)), axes=(0, 1)), "transpose: axes"),
    (lambda: nd.transpose(nd.ones((2, 3, 4)), axes=(0, 0, 1)), "transpose: axes"),
    (lambda: nd.squeeze(nd.ones((1, 3)), axis=1), "squeeze: cannot squeeze axis 1"),
    (lambda: nd.expand_dims(nd.ones((2, 3)), axis=3), "expand_dims: axis=3"),
    (lambda: nd.broadcast_to(nd.ones((2,)), shape=(3, 3)), "broadcast_to: cannot broadcast"),
    (lambda: nd.reshape(nd.ones((2, 2)), shape=(3, 3)), "Reshape: cannot reshape"),
    (lambda: nd.slice(nd.ones((2, 3)), begin=(0, 1, 2), end=(1, 2, 3)), "slice: begin"),
    (lambda: nd.slice(nd.ones((2, 3)), begin=(0,), end=(1, 2)), "slice: begin"),
    (lambda: nd.slice(nd.ones((2, 3)), begin=(0,), end=(1,), step=(0,)), "slice: slice step cannot be 0"),
    (lambda: nd.slice_axis(nd.ones((2, 3)), axis=2, begin=0, end=1), "slice_axis: axis=2"),
    (lambda: nd.Cast(nd.ones((2,)), dtype="complex64"), "Cast: argument dtype='complex64'"),
])
def test_shape_op_errors_at_the_call(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


@pytest.mark.parametrize("dtype,x,lo,hi,want", [
    ("float32", [-2, -0.5, 0.5, 3], -1, 1, [-1, -0.5, 0.5, 1]),
    ("float32", [-2, -0.5, 0.5, 3], 1, -1, [1, -1, -1, -1]),     # MXNet: a_min > a_max
    ("int32", [-5, 5], -1.5, 2.5, [-1, 2]),                      # bounds cast to int first
    ("uint8", [0, 200], 10, 300, [10, 200]),                     # compared as floats
    ("uint8", [0, 200], -1, 100, [0, 100]),
    ("float16", [-2, 2], -1, 1, [-1, 1]),
])
def test_clip(dtype, x, lo, hi, want, ctx):
    check(nd.clip(nd.array(x, dtype=dtype), lo, hi), np.array(want, dtype), dtype=dtype)
    check(nd.array(x, dtype=dtype).clip(a_min=lo, a_max=hi), np.array(want, dtype))


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float32", "uint8"), ("float64", "float16"),
                                     ("int32", "float32"), ("float32", "bool"), ("int64", "int8")])
def test_cast(src, dst, ctx):
    x = np.array([-1.7, 0, 2.5, 300], src) if src.startswith("float") else np.array([-2, 0, 3, 300], src)
    with np.errstate(all="ignore"):
        want = x.astype(dst)
    check(nd.Cast(nd.array(x, dtype=src), dtype=dst), want, dtype=dst)


covers("_slice_assign", "_crop_assign", "_slice_assign_scalar", "_crop_assign_scalar")


@pytest.mark.parametrize("name", ["_slice_assign", "_crop_assign"])
def test_slice_assign(name, ctx):
    x = np.zeros((3, 4), np.float32)
    r = np.arange(4, dtype=np.float32).reshape(2, 2)
    got = getattr(_int, name)(nd.array(x), nd.array(r), begin=(0, 1), end=(None, 4), step=(2, 2))
    want = x.copy()
    want[0::2, 1:4:2] = r
    check(got, want)


@pytest.mark.parametrize("name", ["_slice_assign_scalar", "_crop_assign_scalar"])
def test_slice_assign_scalar(name, ctx):
    x = nd.zeros((3, 4), dtype="uint8")
    got = getattr(_int, name)(x, scalar=300, begin=(1,), end=(3,))
    want = np.zeros((3, 4), np.uint8)
    want[1:3] = 44
    check(got, want, dtype=np.uint8)
    check(x, np.zeros((3, 4), np.uint8))       # a new array: the input is untouched


covers("_index", "_index_assign", "_index_assign_scalar", "_index_add")


def test_index_ops(ctx):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = nd.array([2, 0], dtype="int64")
    key = (("a", 0), ("s", None, None, 2))
    check(_int._index(nd.array(x), idx, key=key), x[[2, 0], ::2])
    v = nd.array([[1, 2], [3, 4]])
    want = x.copy()
    want[[2, 0], ::2] = [[1, 2], [3, 4]]
    check(_int._index_assign(nd.array(x), v, idx, key=key), want)
    want = x.copy()
    want[[2, 0], ::2] = 7
    check(_int._index_assign_scalar(nd.array(x), idx, key=key, scalar=7), want)
    want = x.copy()
    np.add.at(want, ([0, 0], slice(None, None, 2)), [[1, 2], [3, 4]])
    check(_int._index_add(nd.array(x), v, nd.array([0, 0], dtype="int64"), key=key), want)


# ====================================================================== init

covers("_zeros", "_ones", "_full", "_arange", "_linspace", "_eye", "zeros_like", "ones_like")


@pytest.mark.parametrize("name,kwargs,want", [
    ("_zeros", {"shape": (2, 3)}, np.zeros((2, 3), np.float32)),
    ("_zeros", {"shape": (2, 0), "dtype": "int32"}, np.zeros((2, 0), np.int32)),
    ("_ones", {"shape": (3,), "dtype": "float64"}, np.ones((3,))),
    ("_full", {"shape": (2,), "value": 2.5}, np.full((2,), 2.5, np.float32)),
    ("_full", {"shape": (2,), "value": 300, "dtype": "uint8"}, np.full((2,), 44, np.uint8)),
    ("_arange", {"start": 1, "stop": 7, "step": 2, "repeat": 2},
     np.array([1, 1, 3, 3, 5, 5], np.float32)),
    ("_arange", {"start": 4}, np.arange(4, dtype=np.float32)),
    ("_linspace", {"start": 0, "stop": 1, "num": 3}, np.array([0, 0.5, 1], np.float32)),
    ("_eye", {"N": 2, "M": 3, "k": 1}, np.eye(2, 3, 1, dtype=np.float32)),
])
def test_init_ops(name, kwargs, want):
    check(getattr(_int, name)(**kwargs), want, dtype=want.dtype)


@pytest.mark.parametrize("name,fill", [("zeros_like", 0), ("ones_like", 1)])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float16", "bool"])
def test_like_ops(name, fill, dtype, ctx):
    x = nd.array([[5, 6, 7]], dtype=dtype)
    check(fn_of(name)(x), np.full((1, 3), fill, dtype), dtype=dtype)


# ==================================================================== random

covers("_random_uniform", "uniform", "random_uniform", "_random_normal", "normal",
       "random_normal", "_random_randint", "random_randint", "_random_exponential",
       "random_exponential", "_shuffle", "shuffle")


@pytest.mark.parametrize("name", ["_random_uniform", "uniform", "random_uniform"])
@pytest.mark.parametrize("dtype", [None, "float16", "float32", "float64"])
def test_uniform(name, dtype):
    kw = {"dtype": dtype} if dtype else {}
    r = fn_of(name)(low=2, high=3, shape=(50, 4), **kw)
    assert r.shape == (50, 4) and r.dtype is np.dtype(dtype or "float32").type
    v = r.asnumpy()
    assert (v >= 2).all() and (v <= 3).all() and v.std() > 0


@pytest.mark.parametrize("name", ["_random_normal", "normal", "random_normal"])
@pytest.mark.parametrize("dtype", [None, "float16", "float64"])
def test_normal(name, dtype):
    kw = {"dtype": dtype} if dtype else {}
    r = fn_of(name)(loc=5, scale=0.1, shape=(1000,), **kw)
    assert r.shape == (1000,) and r.dtype is np.dtype(dtype or "float32").type
    assert abs(float(r.asnumpy().astype(np.float64).mean()) - 5) < 0.05


@pytest.mark.parametrize("name", ["_random_randint", "random_randint"])
@pytest.mark.parametrize("dtype", [None, "int32", "int64"])
def test_randint(name, dtype):
    kw = {"dtype": dtype} if dtype else {}
    r = fn_of(name)(low=-3, high=3, shape=(1000,), **kw)
    assert r.dtype is np.dtype(dtype or "int32").type
    v = r.asnumpy()
    assert v.min() == -3 and v.max() == 2


@pytest.mark.parametrize("name", ["_random_exponential", "random_exponential"])
def test_exponential(name):
    r = fn_of(name)(lam=4.0, shape=(2000,))
    v = r.asnumpy()
    assert r.dtype is np.float32 and (v >= 0).all() and abs(v.mean() - 0.25) < 0.03


@pytest.mark.parametrize("name", ["_shuffle", "shuffle"])
def test_shuffle(name):
    x = nd.array(np.arange(20).reshape(10, 2))
    r = fn_of(name)(x)
    v = r.asnumpy()
    assert v.shape == (10, 2)
    np.testing.assert_array_equal(np.sort(v[:, 0]), np.arange(0, 20, 2))
    np.testing.assert_array_equal(v[:, 1] - v[:, 0], np.ones(10))     # rows stay whole


def test_random_namespace_shapes_and_defaults():
    assert nd.random.uniform().shape == (1,)
    assert nd.random.uniform(shape=5).shape == (5,)
    assert nd.random.uniform(0, 1, (2,)).dtype is np.float32
    assert nd.random.normal(shape=(0, 3)).shape == (0, 3)
    assert nd.random.randint(0, 10).shape == (1,)
    assert nd.random.randint(0, 10, shape=(3,)).dtype is np.int32
    assert nd.random.randn(2, 3).shape == (2, 3)
    assert nd.random.exponential(2, shape=(3,)).dtype is np.float32
    assert nd.random.normal(shape=(2,), ctx=mx.cpu(1)).context == mx.cpu(1)
    out = nd.zeros((3,))
    assert nd.random.uniform(5, 6, shape=(3,), out=out) is out
    assert (out.asnumpy() >= 5).all()


def test_seed_reproducibility():
    def draw():
        return (nd.random.uniform(shape=(4,)).asnumpy(), nd.random.normal(shape=(4,)).asnumpy(),
                nd.random.randint(0, 100, shape=(4,)).asnumpy(),
                nd.random.shuffle(nd.arange(10)).asnumpy())
    mx.random.seed(42)
    first = draw()
    mx.random.seed(42)
    second = draw()
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(draw()[0], first[0])
    mx.random.seed(42, ctx=mx.cpu(0))
    np.testing.assert_array_equal(nd.random.uniform(shape=(4,)).asnumpy(), first[0])
    with pytest.raises(ValueError, match="seed_state"):
        mx.random.seed(1.5)


covers("_sample_uniform", "sample_uniform", "_sample_normal", "sample_normal",
       "_sample_exponential", "sample_exponential")


def test_ndarray_parameters_draw_per_element():
    # MXNet: NDArray parameters give shape(param) + shape, block i from parameter i
    low, high = nd.array([0, 10]), nd.array([1, 11])
    r = nd.random.uniform(low, high, shape=(300,))
    assert r.shape == (2, 300) and r.dtype is np.float32
    v = r.asnumpy()
    assert (v[0] >= 0).all() and (v[0] < 1).all() and (v[1] >= 10).all() and (v[1] < 11).all()
    assert nd.random.uniform(low, high).shape == (2,)
    assert nd.random.uniform(low, high, dtype="float16").dtype is np.float16
    n = nd.random.normal(nd.array([[0, 100]]), nd.array([[1, 0.01]]), shape=(500,)).asnumpy()
    assert n.shape == (1, 2, 500) and abs(n[0, 1].mean() - 100) < 0.01 and abs(n[0, 0].mean()) < 0.2
    e = nd.random.exponential(nd.array([1.0, 0.01]), shape=(1000,)).asnumpy()
    assert e.shape == (2, 1000) and e[1].mean() < 0.02 < e[0].mean()
    for name in ("_sample_uniform", "sample_uniform"):
        assert fn_of(name)(low, high, shape=(2, 2)).shape == (2, 2, 2)
    for name in ("_sample_normal", "sample_normal"):
        assert fn_of(name)(low, high).shape == (2,)
    for name in ("_sample_exponential", "sample_exponential"):
        assert fn_of(name)(high, shape=3).shape == (2, 3)
    mx.random.seed(7)
    a = nd.random.normal(low, high, shape=(3,)).asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(nd.random.normal(low, high, shape=(3,)).asnumpy(), a)
    with pytest.raises(MXNetError, match="_sample_normal: parameter 1 has shape"):
        nd.random.normal(low, nd.array([1]))
    with pytest.raises(TypeError, match="same type"):
        nd.random.uniform(low, 1)


@pytest.mark.parametrize("call,match", [
    (lambda: nd.random.randint(5, 5, shape=(2,)), "_random_randint: low must be < high"),
    (lambda: nd.random.uniform(shape=(2,), dtype="int32"), "_random_uniform: dtype=int32"),
    (lambda: nd.random.randint(0, 3, shape=(2,), dtype="float32"), "_random_randint: dtype=float32"),
    (lambda: nd.random.normal(shape=(-1,)), "negative"),
])
def test_random_argument_errors_at_the_call(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: nd.random.normal(0, -1, shape=(2,)), "scale parameter in gaussian"),
    (lambda: nd.random.uniform(1, 0, shape=(2,)), "low must be <= high"),
])
def test_random_bad_values_fail_in_the_kernel_as_mxnet(call, match):
    # MXNet checks these in the sampler: the push succeeds, the read raises
    x = call()
    with pytest.raises(MXNetError, match=match):
        x.asnumpy()
    assert nd.ones((2,)).asnumpy().tolist() == [1, 1]


# ========================================================= fluent, out=, API

FLUENT = [  # method, args, kwargs
    ("sum", (), {"axis": 1}), ("sum", (1, True), {}), ("mean", (), {}), ("prod", (), {"axis": 0}),
    ("max", (), {"axis": (0, 1)}), ("min", (), {"exclude": True, "axis": 0}),
    ("nansum", (), {}), ("nanprod", (), {}), ("norm", (), {"ord": 1}), ("argmax", (), {"axis": 1}),
    ("argmin", (1,), {}), ("exp", (), {}), ("log", (), {}), ("sqrt", (), {}), ("square", (), {}),
    ("abs", (), {}), ("sign", (), {}), ("floor", (), {}), ("round", (), {}), ("sin", (), {}),
    ("tanh", (), {}), ("relu", (), {}), ("sigmoid", (), {}), ("clip", (0.5, 1.5), {}),
    ("transpose", (), {"axes": (1, 0)}), ("slice", (), {"begin": (0,), "end": (1,)}),
    ("slice_axis", (0, 0, 1), {}), ("zeros_like", (), {}), ("ones_like", (), {}),
    ("reciprocal", (), {}), ("log1p", (), {}), ("expm1", (), {}), ("rsqrt", (), {}),
    ("cbrt", (), {}), ("degrees", (), {}), ("fix", (), {}), ("trunc", (), {}), ("rint", (), {}),
]


@pytest.mark.parametrize("method,args,kwargs", FLUENT, ids=["%s%s%s" % f for f in FLUENT])
def test_fluent_methods(method, args, kwargs):
    x = nd.array(rand((2, 3), 0.5, 1.5, "float32"))
    got = getattr(x, method)(*args, **kwargs)
    want = getattr(nd, method)(x, *args, **kwargs)
    check(got, want.asnumpy())


def test_generated_functions_have_signatures_and_docs():
    sig = inspect.signature(nd.sum)
    assert list(sig.parameters)[:4] == ["data", "axis", "keepdims", "exclude"]
    assert sig.parameters["keepdims"].default is False
    assert "out" in sig.parameters and "name" in sig.parameters
    assert "axis" in nd.sum.__doc__ and nd.sum.__name__ == "sum"
    assert list(inspect.signature(nd.broadcast_add).parameters)[:2] == ["lhs", "rhs"]
    assert nd.exp(nd.ones((1,)), name="e").shape == (1,)        # name= is accepted


def test_out_argument(ctx):
    a = nd.array([[1, 2], [3, 4]])
    o = nd.zeros((2, 2))
    assert nd.exp(a, out=o) is o
    check(o, np.exp(a.asnumpy()))
    r = nd.sum(a, axis=0, out=nd.zeros((2,)))
    check(r, [4, 6])
    check(nd.broadcast_add(a, a, out=a), [[2, 4], [6, 8]])       # out= may alias an input
    check(a, [[2, 4], [6, 8]])
    v = nd.zeros((4,))
    nd.exp(nd.zeros((2,)), out=v[1:3])                           # into a view: base changes
    check(v, [0, 1, 1, 0])
    o2 = nd.zeros((2, 2))
    assert nd.exp(a, o2) is o2                                   # MXNet: next positional is out
    r = nd.random.uniform(shape=(2,), out=nd.zeros((2,)))
    assert r.shape == (2,)


@pytest.mark.parametrize("out,match", [
    (lambda: nd.zeros((3,)), r"sum: out= has shape \(3,\) but the result has shape \(2,\)"),
    (lambda: nd.zeros((2,), dtype="float64"), "sum: out= has dtype float64 but the result has "
                                              "dtype float32"),
    (lambda: nd.zeros((2,), ctx=mx.cpu(1)), "sum: out= is on cpu"),
])
def test_bad_out(out, match):
    with pytest.raises(MXNetError, match=match):
        nd.sum(nd.ones((2, 2)), axis=0, out=out())


BAD_CALLS = [
    (lambda: nd.sum(nd.ones((2, 2)), axes=1), MXNetError,
     "sum got an unexpected argument 'axes'; its arguments are data, axis, keepdims, exclude"),
    (lambda: nd.Cast(nd.ones((2,)), dtype="int32", foo=2), MXNetError, "Cast got an unexpected argument 'foo'"),
    (lambda: nd.clip(nd.ones((2,)), a_min=0), MXNetError, "clip: required argument 'a_max' is missing"),
    (lambda: nd.clip(nd.ones((2,))), MXNetError, "clip: required argument 'a_min' is missing"),
    (lambda: nd.Cast(nd.ones((2,))), MXNetError, "Cast: required argument 'dtype' is missing"),
    (lambda: nd.slice_axis(nd.ones((2,)), axis=0, begin=0), MXNetError,
     "slice_axis: required argument 'end' is missing"),
    (lambda: nd.expand_dims(nd.ones((2,))), MXNetError, "expand_dims: required argument 'axis'"),
    (lambda: nd.exp(), TypeError, r"exp\(\) missing input 'data'"),
    (lambda: nd.broadcast_add(nd.ones((2,))), TypeError, r"broadcast_add\(\) missing input 'rhs'"),
    (lambda: nd.exp(np.array([1.0])), TypeError, r"exp\(\): input data must be an NDArray"),
    (lambda: nd.exp([1.0]), TypeError, r"exp\(\): input data must be an NDArray"),
    (lambda: nd.exp(nd.ones((1,)), nd.ones((1,)), "n", 4), TypeError, "positional"),
    (lambda: nd.sum(nd.ones((2, 2)), axis=5), MXNetError,
     r"sum: axis=5 is out of range for an array of 2 dimension"),
    (lambda: nd.sum(nd.ones((2, 2)), axis=-3), MXNetError, "sum: axis=-3 is out of range"),
    (lambda: nd.argmax(nd.ones((2, 2)), axis=2), MXNetError, "argmax: axis=2 is out of range"),
    (lambda: nd.mean(nd.ones((2, 2)), axis="x"), MXNetError, "mean: argument axis='x' is invalid"),
    (lambda: nd.sum(nd.ones((2, 2)), keepdims="maybe"), MXNetError, "sum: argument keepdims"),
    (lambda: nd.broadcast_mul(nd.ones((2, 3)), nd.ones((3, 2))), MXNetError,
     r"broadcast_mul: shapes \(2, 3\) and \(3, 2\) cannot be broadcast together"),
    (lambda: nd.elemwise_add(nd.ones((2, 2)), nd.ones((2, 3))), MXNetError,
     r"elemwise_add: input 1 has shape \(2, 3\) but input 0 has \(2, 2\)"),
    (lambda: nd.broadcast_add(nd.ones((2,)), nd.ones((2,), ctx=mx.cpu(1))), MXNetError,
     "broadcast_add: all inputs must be on the same context"),
    (lambda: nd.norm(nd.ones((2,)), ord=3), MXNetError, "norm: ord=3 is not supported"),
    (lambda: nd.dot(nd.array(np.ones(())), nd.ones((2,))), MXNetError,
     "dot: needs arrays of at least 1"),
]


@pytest.mark.parametrize("call,exc,match", BAD_CALLS, ids=[m[:40] for _, _, m in BAD_CALLS])
def test_bad_input_errors_at_the_call(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_string_attrs_like_symbol_json():
    x = nd.array(np.arange(6).reshape(2, 3))
    check(nd.sum(x, axis="1"), [3, 12])
    check(nd.sum(x, axis="(0, 1)"), [15])
    assert nd.sum(x, keepdims="True").shape == (1, 1)
    check(nd.clip(x, a_min="1", a_max="3"), np.clip(np.arange(6).reshape(2, 3), 1, 3))


# ================================================================ coverage


BASIC_MODULES = ("elemwise", "reduce", "matrix", "init", "random")


# distributions tested by their moments in tests/ops/test_random_dists.py
COVERED_ELSEWHERE = {
    p + n for p in ("_random_", "random_") for n in
    ("gamma", "poisson", "negative_binomial", "generalized_negative_binomial", "bernoulli")
} | {p + n for p in ("_sample_", "sample_") for n in
     ("gamma", "poisson", "negative_binomial", "generalized_negative_binomial", "multinomial")}
# tests/symbol/test_infer_partial.py (values, gradient and shape inference)
COVERED_ELSEWHERE |= {"_identity_with_attr_like_rhs"}
# tests/mxnp/test_elemwise.py (mx.np.clip: the NumPy-interface name of clip)
COVERED_ELSEWHERE |= {"_npi_clip"}
# tests/mxnp/test_random.py (mx.np.random.randint and shuffle, the legacy kernels
# under their NumPy-interface names)
COVERED_ELSEWHERE |= {"_npi_random_randint", "_npi_shuffle"}


def test_every_registered_op_is_covered():
    basic = {name for name, op in registry.ops().items()
             if op.kernel.__module__.rsplit(".", 1)[-1] in BASIC_MODULES}
    assert len(basic) > 150
    missing = sorted(basic - COVERED - COVERED_ELSEWHERE)
    assert not missing, "ops without a row in tests/ops/test_basic_ops.py: %s" % missing


def test_zeros_ones_need_np_shape_for_scalar_or_zero_size():
    # MXNet 1.x: () and 0 dimensions mean "unknown" outside NumPy-shape semantics
    for shape in ((), (0, 3)):
        with pytest.raises(MXNetError):
            nd.zeros(shape)
        with pytest.raises(MXNetError):
            nd.ones(shape)
        with mx.np_shape():
            assert nd.ones(shape).shape == shape


def test_zero_size_min_max_raise_at_push():
    x = nd.array(np.zeros((5, 0)))
    for f in (nd.min, nd.max):
        with pytest.raises(MXNetError):
            f(x)
    assert nd.sum(x).asnumpy().tolist() == [0.0]


def test_tile_zero_reps_needs_np_shape():
    with pytest.raises(MXNetError):
        nd.tile(nd.ones((2, 2)), (1, 0))
    with pytest.raises(MXNetError):
        nd.tile(nd.ones((2, 2)), (1, -3))


def test_op_without_parameters_ignores_keyword_attributes():
    # MXNet: ops with no parameter struct (no attr_parser) ignore extra keyword
    # attributes (MXNet's own test_loss passes axis= to broadcast_maximum);
    # ops with parameters still reject unknown ones
    a, b = nd.array([0.0]), nd.array([[-1.0], [2.0]])
    assert nd.broadcast_maximum(a, b, axis=1).asnumpy().tolist() == [[0.0], [2.0]]
    with pytest.raises(MXNetError, match="unexpected argument"):
        nd.sum(b, axes=1)


def test_attach_grad_on_zero_size_array_outside_np_shape():
    # MXNet's attach_grad uses zeros_like, which accepts zero-size arrays
    x = nd.array(np.zeros((0, 3)))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    y.backward()
    assert x.grad.shape == (0, 3)


covers("reset_arrays")


def test_reset_arrays_zeroes_every_input_in_place():
    a = nd.ones((2, 3))
    b = nd.full((4,), 7, dtype="float16")
    c = nd.arange(6).reshape((2, 3))
    view = c[1:]
    pending = a * 2            # a read of a pushed before the reset sees the ones
    assert nd.reset_arrays(a, b, view, num_arrays=3) == []
    assert pending.asnumpy().tolist() == [[2.0] * 3] * 2
    assert not a.asnumpy().any() and not b.asnumpy().any() and b.dtype == np.float16
    assert c.asnumpy().tolist() == [[0, 1, 2], [0, 0, 0]]
    with pytest.raises(MXNetError, match="num_arrays=3"):
        nd.reset_arrays(a, b, num_arrays=3)


covers("_backward_slice")


def test_slice_gradient_is_one_backward_slice_op():
    from aiond import autograd
    x = nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    x.attach_grad()
    with autograd.record():
        y = nd.slice(x, begin=(1, None, 1), end=(None, 2, None), step=(1, 1, 2))
    y.backward(nd.ones(y.shape) * 3)
    want = np.zeros((2, 3, 4), np.float32)
    want[1:, :2, 1::2] = 3
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    g = nd._internal._backward_slice(nd.ones((1, 2, 2)), x, begin=(1, None, 1),
                                     end=(None, 2, None), step=(1, 1, 2))
    np.testing.assert_array_equal(g.asnumpy(), want / 3)
    # second order: the gradient of the gradient w.r.t. ograd is a slice again
    og = nd.ones((1, 2, 2))
    og.attach_grad()
    with autograd.record():
        g = nd._internal._backward_slice(og, x, begin=(1, None, 1), end=(None, 2, None),
                                         step=(1, 1, 2))
    g.backward(nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4)))
    np.testing.assert_array_equal(og.grad.asnumpy(), np.arange(24).reshape(2, 3, 4)[1:, :2, 1::2])


def test_mod_gradients_are_zero_for_integer_types_as_mxnets():
    """MXNet's mod_grad/mod_rgrad/rmod_grad are 0 for integer types (1 and
    -floor(a/b) for floats), whatever the out-grad, in every mod op."""
    a = nd.array([5, 7, -9, 3], dtype="int32")
    b = nd.array([2, 3, 4, -5], dtype="int32")
    for x in (a, b):
        x.attach_grad()
    with mx.autograd.record():
        ys = [a % b, nd.broadcast_mod(a, b), a % 3, 13 % a]
    mx.autograd.backward(ys, [nd.ones((4,), dtype="int32") * 2] * 4)
    np.testing.assert_array_equal(a.grad.asnumpy(), 0)
    np.testing.assert_array_equal(b.grad.asnumpy(), 0)
    # float mod keeps its gradients
    af, bf = a.astype("float32"), b.astype("float32")
    for x in (af, bf):
        x.attach_grad()
    with mx.autograd.record():
        y = af % bf
    y.backward()
    np.testing.assert_array_equal(af.grad.asnumpy(), 1)
    np.testing.assert_array_equal(bf.grad.asnumpy(),
                                  -np.floor(af.asnumpy() / bf.asnumpy()))
