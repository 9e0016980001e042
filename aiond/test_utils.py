"""``mx.test_utils``: the helpers MXNet users and MXNet's own unit tests
import (MXNet 1.9.1 names and defaults).

``check_numeric_gradient`` takes a Symbol (once ``aiond.symbol`` exists) or
any Python callable over NDArrays, and compares autograd's gradient with
central finite differences.
"""
from __future__ import annotations

import contextlib
import numbers
import os
import random as _pyrandom

import numpy as np
import numpy.testing as npt

from .base import MXNetError
from .context import Context, current_context, num_gpus
from . import context as _context

# No __all__: ``from mxnet.test_utils import *`` brings every public name of the
# module into the caller, ``mx`` and ``np`` included, as MXNet's module does.
import aiond as mx  # noqa: E402
import numpy.random as rnd  # noqa: E402,F401
try:
    import scipy.stats as ss  # noqa: F401
except ImportError:
    ss = None
from .ndarray import array, NDArray  # noqa: E402,F401
from .util import use_np, getenv, setenv, get_cuda_compute_capability  # noqa: E402,F401
from .runtime import Features  # noqa: E402,F401


def default_context() -> Context:
    """The context tests run on (``current_context()``)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default context of this thread / task."""
    _context._default_ctx.set(ctx)


def default_dtype():
    return np.float32


def default_rtols():
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0, np.dtype(np.int16): 0, np.dtype(np.uint16): 0}


def default_atols():
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0, np.dtype(np.int16): 0, np.dtype(np.uint16): 0}


def default_numeric_eps():
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def get_tolerance(dat, tol, default_tol):
    if isinstance(tol, numbers.Number):
        return tol
    dtype = np.dtype(getattr(dat, "dtype", np.float64))
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol.get(dtype, 0))


def get_tols(x, y, rtol, atol):
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def random_arrays(*shapes):
    """Random float32 numpy arrays of the given shapes (a scalar for ())."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, **kwargs):
    low, high = kwargs.pop("low", 0.0), kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    arrays = [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population, k):
    """k distinct elements of population, in random order."""
    population_copy = list(population)
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray (dense storage only: aiond has no sparse arrays)."""
    from . import ndarray as nd
    if stype != "default":
        raise MXNetError("rand_ndarray: stype=%r is not supported; aiond arrays are dense" % stype)
    return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` one axis at a time (MXNet's helper)."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret


def _as_np(x):
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return x


def same(a, b):
    return np.array_equal(_as_np(a), _as_np(b))


def same_array(array1, array2):
    """True if the two NDArrays share memory (writing one changes the other)."""
    if array1.shape != array2.shape:
        return False
    return array1._st is array2._st and (array1._off or 0) == (array2._off or 0)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    a, b = _as_np(a), _as_np(b)
    if not use_broadcast and np.shape(a) != np.shape(b):
        return False
    rtol, atol = get_tols(a, b, rtol, atol)
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _find_max_violation(a, b, rtol, atol):
    absdiff = np.where(np.equal(a, b), 0, np.abs(a - b))
    tol = atol + rtol * np.abs(b)
    violation = absdiff / (tol + 1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))
    return idx, np.max(violation)


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert two arrays (numpy or NDArray) are equal within tolerances
    (defaults by dtype, as in MXNet); the message points at the worst element."""
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_np(a), _as_np(b)
    if not use_broadcast and np.shape(a) != np.shape(b):
        raise AssertionError("%s.shape = %s and %s.shape = %s are not equal"
                             % (names[0], np.shape(a), names[1], np.shape(b)))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    index, rel = _find_max_violation(a64, b64, rtol, atol)
    msg = ("Error %f exceeds tolerance rtol=%e, atol=%e. Location of maximum error: %s, "
           "%s=%.8f, %s=%.8f" % (rel, rtol, atol, str(index), names[0], a64[index],
                                 names[1], b64[index]))
    raise AssertionError(npt.build_err_msg([a, b], err_msg=msg, names=names))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    a, b = np.copy(_as_np(a)), np.copy(_as_np(b))
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError("%s did not raise %s" % (getattr(f, "__name__", f), exception_type.__name__))


def collapse_sum_like(a, shape):
    """Sum a numpy array down to ``shape`` (the inverse of broadcasting)."""
    assert len(a.shape) >= len(shape)
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    axes = []
    ndiff = len(a.shape) - len(shape)
    for i in range(len(a.shape)):
        if i < ndiff or shape[i - ndiff] == 1 and a.shape[i] != 1:
            axes.append(i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


# --------------------------------------------------------- gradient checks


def _is_symbol(obj):
    return type(obj).__name__ == "Symbol" and hasattr(obj, "list_arguments")


def _as_np(v):
    # MXNet's _parse_location takes NDArrays as well as numpy arrays
    return v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)


def _locations(fn, location):
    if isinstance(location, dict):
        return list(location.keys()), [_as_np(v) for v in location.values()]
    if _is_symbol(fn):
        names = fn.list_arguments()
        return names, [_as_np(v) for v in location]
    return None, [_as_np(v) for v in location]


def _evaluate(fn, names, arrays, aux_states, is_train):
    """Run fn (callable or Symbol) on NDArrays; returns the output NDArray list."""
    from . import ndarray as nd
    if _is_symbol(fn):
        from .symbol import _test_hooks
        return _test_hooks.forward(fn, names, arrays, aux_states, is_train)
    outs = fn(**dict(zip(names, arrays))) if names is not None else fn(*arrays)
    if isinstance(outs, nd.NDArray):
        outs = [outs]
    return list(outs)


def numeric_grad(fn, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=np.float64, names=None):
    """Central finite differences of ``sum(out_i * proj_i)`` w.r.t. each input."""
    from . import autograd, ndarray as nd
    # C order: the perturbation loop edits the flat view in place
    arrays = [np.ascontiguousarray(v, dtype=dtype) for v in location]
    projs = None
    grads = []

    def f(vals):
        with autograd.predict_mode() if not use_forward_train else autograd.train_mode():
            xs = [nd.array(v, dtype=dtype) for v in vals]
            outs = _evaluate(fn, names, xs, aux_states, use_forward_train)
        return [o.asnumpy().astype(np.float64) for o in outs]

    base = f(arrays)
    projs = _PROJ.get(id(fn)) or [np.random.normal(0, 1, b.shape) for b in base]
    for k, a in enumerate(arrays):
        g = np.zeros(a.shape, dtype=np.float64)
        flat = a.reshape(-1)
        gf = g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2
            up = sum(float((o * p).sum()) for o, p in zip(f(arrays), projs))
            flat[i] = old - eps / 2
            down = sum(float((o * p).sum()) for o, p in zip(f(arrays), projs))
            flat[i] = old
            gf[i] = (up - down) / eps
        grads.append(g)
    return grads, projs


_PROJ: dict = {}


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float64):
    """Check the analytic gradient of ``sym`` against finite differences.

    ``sym`` is a Symbol or a callable taking NDArrays (positionally, or by
    name when ``location`` is a dict) and returning an NDArray or a list;
    ``location`` gives the input values. The check uses a random projection
    of the outputs, as MXNet does. ``grad_nodes`` limits the inputs checked
    (names, or indices for a callable).
    """
    from . import autograd, ndarray as nd
    names, arrays = _locations(sym, location)
    dtype = np.dtype(dtype)
    eps = numeric_eps if numeric_eps is not None else default_numeric_eps().get(dtype, 1e-4)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record(train_mode=use_forward_train):
        outs = _evaluate(sym, names, xs, aux_states, use_forward_train)
    projs = [np.random.normal(0, 1, o.shape) for o in outs]
    autograd.backward(outs, [nd.array(p, dtype=o.dtype, ctx=o.context) for o, p in zip(outs, projs)])
    analytic = [x.grad.asnumpy().astype(np.float64) for x in xs]
    _PROJ[id(sym)] = projs
    try:
        numeric, _ = numeric_grad(sym, arrays, aux_states, eps, use_forward_train, dtype, names)
    finally:
        _PROJ.pop(id(sym), None)
    check = range(len(xs))
    if grad_nodes is not None:
        keys = names if names is not None else list(range(len(xs)))
        # a dict maps names to grad_req: 'null' inputs get no gradient to check
        check = [keys.index(g) for g in grad_nodes
                 if not isinstance(grad_nodes, dict) or grad_nodes[g] != "null"]
    rtol = 1e-2 if rtol is None else rtol
    atol = 1e-4 if atol is None else atol
    for i in check:
        label = names[i] if names is not None else "input %d" % i
        assert_almost_equal(numeric[i], analytic[i], rtol=rtol, atol=atol,
                            names=("NUMERICAL_%s" % label, "BACKWARD_%s" % label))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Check ``sym``'s forward outputs (a Symbol, or a callable over NDArrays)."""
    from . import ndarray as nd
    names, arrays = _locations(sym, location)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    outs = _evaluate(sym, names, xs, aux_states, False)
    if isinstance(expected, dict):
        expected = list(expected.values())
    for i, (o, e) in enumerate(zip(outs, expected)):
        assert_almost_equal(o, e, rtol, atol, ("FORWARD_%d" % i, "EXPECTED_%d" % i), equal_nan)
    return [o.asnumpy() for o in outs]


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Check the gradients of ``sym`` for head gradients ``out_grads``."""
    from . import autograd, ndarray as nd
    names, arrays = _locations(sym, location)
    xs = [nd.array(a, dtype=dtype, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = _evaluate(sym, names, xs, aux_states, True)
    heads = [nd.array(g, dtype=o.dtype) for g, o in zip(out_grads, outs)]
    autograd.backward(outs, heads)
    grads = [x.grad.asnumpy() for x in xs]
    if isinstance(expected, dict):
        keys = names if names is not None else list(range(len(xs)))
        pairs = [(grads[keys.index(k)], v, k) for k, v in expected.items()]
    else:
        pairs = [(g, e, i) for i, (g, e) in enumerate(zip(grads, expected))]
    for g, e, k in pairs:
        if e is None:
            continue
        assert_almost_equal(g, e, rtol, atol, ("BACKWARD_%s" % k, "EXPECTED_%s" % k), equal_nan)
    return grads


@contextlib.contextmanager
def environment(*args):
    """``with environment('NAME', 'value'):`` or ``with environment({...}):`` -
    set environment variables inside the block, restoring them after."""
    if len(args) == 2:
        env = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    else:
        raise ValueError("environment() takes a name and a value, or a dict")
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def list_gpus():
    """The ids of the GPUs aiond can use."""
    return list(range(num_gpus()))


def set_seed(seed):
    """Seed numpy, Python and aiond's generators."""
    from . import random as mxrandom
    np.random.seed(seed)
    _pyrandom.seed(seed)
    mxrandom.seed(seed)
