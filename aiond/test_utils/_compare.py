"""Tolerances, random inputs and array comparisons (``assert_almost_equal`` ...)."""
# Ported from Apache MXNet 1.9.1 python/mxnet/test_utils.py (Apache License 2.0),
# adapted to aiond: same names, arguments and behaviour.
# pylint: disable=too-many-lines
from __future__ import annotations

import time  # noqa: F401
import gzip  # noqa: F401
import struct  # noqa: F401
import traceback  # noqa: F401
import numbers  # noqa: F401
import sys  # noqa: F401
import os  # noqa: F401
import platform  # noqa: F401
import errno  # noqa: F401
import logging  # noqa: F401
import bz2  # noqa: F401
import zipfile  # noqa: F401
import json  # noqa: F401
from contextlib import contextmanager  # noqa: F401
from collections import OrderedDict  # noqa: F401

import numpy as np
import numpy.testing as npt  # noqa: F401
import numpy.random as rnd  # noqa: F401
try:
    import scipy.stats as ss
except ImportError:
    ss = None

from .. import ndarray as _nd
from ..context import Context, current_context  # noqa: F401
from ..ndarray import array, NDArray  # noqa: F401
from ..util import use_np, getenv, setenv, get_cuda_compute_capability  # noqa: F401
from ..runtime import Features  # noqa: F401


def default_context():
    """Get default context for regression test."""
    # _TODO: get context from environment variable to support
    # testing with GPUs
    return current_context()


def set_default_context(ctx):
    """Set default context."""
    from .. import context as _context
    _context._default_ctx.set(ctx)


def default_dtype():
    """Get default data type for regression test."""
    # _TODO: get default dtype from environment variable
    return np.float32

def default_rtols():
    """Get default relative tolerances for data comparisons involving each data type."""
    return {np.dtype(np.float16): 1e-2,
            np.dtype(np.float32): 1e-4,
            np.dtype(np.float64): 1e-5,
            np.dtype(np.bool): 0,
            np.dtype(np.int8): 0,
            np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0,
            np.dtype(np.uint32): 0,
            np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}

def default_atols():
    """Get default absolute tolerances for data comparisons involving each data type."""
    return {np.dtype(np.float16): 1e-1,
            np.dtype(np.float32): 1e-3,
            np.dtype(np.float64): 1e-20,
            np.dtype(np.bool): 0,
            np.dtype(np.int8): 0,
            np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0,
            np.dtype(np.uint32): 0,
            np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}

def default_numeric_eps():
    """Get default epsilon for finite difference gradient calculations with data type."""
    # prefer a power-of-two eps, since no bits are dropped when serving as an input delta
    return {np.dtype(np.float16): 1.0 / 2**6,
            np.dtype(np.float32): 1.0 / 2**9,
            np.dtype(np.float64): 1.0 / 2**14}


def effective_dtype(dat):
    """ Return the most appropriate dtype for determining the tolerance used in dat comparisons
    Parameters
    ----------
    dat : np.ndarray or mx.nd.array or mx.np.ndarray
    """
    # On arch 80 gpus, a float32-io gemm or conv op will trim the mantissa of data
    # inputs to be of comparable precision to a float16, so float16 becomes the
    # 'effective dtype' for tolerance tests involving such op outputs.

    # Is TF32 enabled in the ctx (the default on arch 80 GPUs)
    def is_TF32_enabled(ctx):
        try:
            return (ctx.device_type == 'gpu' and
                    get_cuda_compute_capability(ctx) >= 80 and
                    os.environ.get('NVIDIA_TF32_OVERRIDE') != '0')
        except:  # pylint: disable=bare-except
            return False

    ctx = dat.ctx if hasattr(dat, 'ctx') else None
    dtype = np.dtype(dat.dtype)
    if dtype == np.dtype(np.float32) and is_TF32_enabled(ctx):
        return np.dtype(np.float16)
    else:
        return dtype


def get_tolerance(dat, tol, default_tol):
    """ Return the tolerance to be used for dat comparisons based on the given tol, datatype and context.
    Parameters
    ----------
    dat : np.ndarray or mx.nd.array or mx.np.ndarray
    tol : float, or a dict of dtype->float
    default_tol : default dict of dtype->float for all types
    """

    if isinstance(tol, numbers.Number):
        return tol

    # If the caller has supplied a tol dict, use that if it has an entry for dtype,
    # else use the supplied default tol dict.
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    return tol.get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol):
    """For comparing two datasets 'x' and 'y', what relative and absolute tolerances should be used."""
    # Tolerance analysis needs 'dtype' of 'x' and 'y', so convert numbers to numpy scalars as needed
    if isinstance(x, numbers.Number):
        x = np.array(x)
    if isinstance(y, numbers.Number):
        y = np.array(y)

    # If tols are not specified, use the largest default tol for 'x' and 'y' based on their ctx and dtype.
    rtol = max(get_tolerance(x, rtol, default_rtols()),
               get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()),
               get_tolerance(y, atol, default_atols()))

    return rtol, atol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """Get default numerical threshold for regression test."""
    return default_atols()[dtype] if atol is None else atol

def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """Get default numerical threshold for regression test."""
    return default_rtols()[dtype] if rtol is None else rtol

def get_etol(etol=None):
    """Get default numerical threshold for regression test."""
    # _TODO: get from env variable, different threshold might
    # be needed for different device and dtype
    return 0 if etol is None else etol

def random_arrays(*shapes):
    """Generate some random numpy arrays."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype())
              if len(s) == 0 else np.random.randn(*s).astype(default_dtype())
              for s in shapes]
    if len(arrays) == 1:
        return arrays[0]
    return arrays


def random_uniform_arrays(*shapes, **kwargs):
    """Generate some random numpy arrays."""
    low = kwargs.pop('low', 0.0)
    high = kwargs.pop('high', 1.0)
    dtype = kwargs.pop('dtype', default_dtype())
    if len(kwargs) > 0:
        raise TypeError('Got unexpected argument/s : ' + str(kwargs.keys()))
    arrays = [np.random.uniform(low, high, size=s).astype(dtype)
              for s in shapes]
    return arrays


def random_sample(population, k):
    """Return a k length list of the elements chosen from the population sequence."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


def _sorted_items(d):
    """Return (key, value) pairs of dict 'd' in a deterministic order (sorted by key)."""
    return sorted(d.items(), key=lambda t: t[0])


def _sorted_dict(d):
    """Return ordered dictionary containing items ordered by their keys."""
    return OrderedDict(_sorted_items(d))


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return rnd.randint(low, dim0 + 1), rnd.randint(low, dim1 + 1), rnd.randint(low, dim2 + 1)


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(rnd.randint(low, dim+1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Compatible reduce for old version of NumPy.

    Parameters
    ----------
    dat : np.ndarray
        Same as NumPy.

    axis : None or int or list-like
        Same as NumPy.

    keepdims : bool
        Same as NumPy.

    numpy_reduce_func : function
        A NumPy reducing function like ``np.sum`` or ``np.max``.
    """
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


def _find_max_violation(a, b, rtol, atol):
    """Finds and returns the location of maximum violation."""
    # 'smart' absdiff that considers inf's as equals (to match np.allclose)
    absdiff = np.where(np.equal(a, b), 0, np.abs(a-b))
    tol = atol + rtol*np.abs(b)
    violation = absdiff/(tol+1e-20)
    loc = np.argmax(violation)
    idx = tuple(int(i) for i in np.unravel_index(loc, violation.shape))
    return idx, np.max(violation)


def same(a, b):
    """Test if two NumPy arrays are the same.

    Parameters
    ----------
    a : np.ndarray
    b : np.ndarray
    """
    return np.array_equal(a, b)


def checkShapes(a, b):
    if a.shape != b.shape:
        msg = npt.build_err_msg([a, b],
                                err_msg="a.shape = {} and b.shape = {} are not equal"
                                .format(str(a.shape), str(b.shape)))
        raise AssertionError(msg)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Test if two numpy arrays are almost equal."""
    # pylint: disable=unexpected-keyword-arg
    if not use_broadcast:
        checkShapes(a, b)

    rtol, atol = get_rtol(rtol), get_atol(atol)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape \
            and a.size > _CHUNK:
        # the same elementwise test in slices: np.allclose on arrays of 10^8
        # elements spends most of its time faulting in full-size temporaries
        fa, fb = a.reshape(-1), b.reshape(-1)
        return all(np.allclose(fa[i:i + _CHUNK], fb[i:i + _CHUNK], rtol=rtol, atol=atol,
                               equal_nan=equal_nan) for i in range(0, fa.size, _CHUNK))
    return np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # pylint: enable=unexpected-keyword-arg


_CHUNK = 1 << 20

def locationError(a, b, index, names, maxError=False):
    """Create element mismatch comment

    Parameters
    ----------
    a, b : compared np.ndarray's
    index : tuple of coordinate arrays
        Location of violation
    names : tuple of names
        The names of compared arrays.
    maxError: boolean, optional
        Flag indicating that maximum error is reporting.
    """
    maximum = "maximum " if maxError else ""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" \
            % (maximum, str(index), names[0], a[index], names[1], b[index])

def _mismatch_report(a, b, index, rel, rtol, atol, names, equal_nan, mismatches):
    """MXNet's message for arrays that differ: the worst errors printed, the
    share of mismatched elements and the location of the maximum error."""
    indexErr, relErr = index, rel
    print('\n*** Maximum errors for vector of size {}:  rtol={}, atol={}\n'.format(a.size, rtol, atol))
    aTmp = a.copy()
    bTmp = b.copy()
    i = 1
    while i <= a.size:
        if i <= mismatches[0]:
            print("%3d: Error %f  %s" % (i, rel, locationError(a, b, index, names)))
        aTmp[index] = bTmp[index] = 0
        if almost_equal(aTmp, bTmp, rtol, atol, equal_nan=equal_nan):
            break
        i += 1
        if i <= mismatches[1] or mismatches[1] <= 0:
            index, rel = _find_max_violation(aTmp, bTmp, rtol, atol)
        else:
            break
    mismatchDegree = "at least " if mismatches[1] > 0 and i > mismatches[1] else ""
    return "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %s%f%%).\n%s" % \
        (relErr, rtol, atol, mismatchDegree, 100 * i / a.size,
         locationError(a, b, indexErr, names, maxError=True))


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Test that two numpy arrays are almost equal. Raise exception message if not.

    Parameters
    ----------
    a : np.ndarray or mx.nd.array
    b : np.ndarray or mx.nd.array
    rtol : None or float or dict of dtype -> float
        The relative threshold. Default threshold will be used if set to ``None``.
    atol : None or float or dict of dtype -> float
        The absolute threshold. Default threshold will be used if set to ``None``.
    names : tuple of names, optional
        The names used in error message when an exception occurs
    equal_nan : boolean, optional
        The flag determining how to treat NAN values in comparison
    mismatches : tuple of mismatches
        Maximum number of mismatches to be printed (mismatches[0]) and determine (mismatches[1])
    """
    if not use_broadcast:
        checkShapes(a, b)

    rtol, atol = get_tols(a, b, rtol, atol)

    # MXNet compares two arrays of one context and dtype on the device
    # (contrib.allclose); the host comparison below gives the same answer.
    a = a.asnumpy() if hasattr(a, 'asnumpy') else a
    b = b.asnumpy() if hasattr(b, 'asnumpy') else b
    if hasattr(a, 'dtype') and a.dtype == np.bool_ and hasattr(b, 'dtype') and b.dtype == np.bool_:
        np.testing.assert_equal(a, b)
        return
    if almost_equal(a, b, rtol, atol, equal_nan=equal_nan):
        return
    a = np.asarray(a)
    b = np.asarray(b)

    index, rel = _find_max_violation(a, b, rtol, atol)
    if index != ():
        # a, b are the numpy arrays
        errMsg = _mismatch_report(a, b, index, rel, rtol, atol, names, equal_nan, mismatches)
    else:
        errMsg = "Error %f exceeds tolerance rtol=%e, atol=%e.\n" % (rel, rtol, atol)

    np.set_printoptions(threshold=4, suppress=True)
    msg = npt.build_err_msg([a, b], err_msg=errMsg)

    raise AssertionError(msg)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None,
                                 names=('a', 'b'), equal_nan=False, mismatches=(10, 10)):
    """Test that two numpy arrays are almost equal within given error rate. Raise exception message if not.

    Parameters
    ----------
    a : np.ndarray
    b : np.ndarray
    rtol : None or float or dict of dtype -> float
        The relative threshold. Default threshold will be used if set to ``None``.
    atol : None or float or dict of dtype -> float
        The absolute threshold. Default threshold will be used if set to ``None``.
    threshold : None or float
        The checking threshold. Default threshold will be used if set to ``None``.
    etol : None or float
        The error rate threshold. If etol is float, return true if error_rate < etol even if
        any error is found.
    names : tuple of names, optional
        The names used in error message when an exception occurs
    equal_nan : boolean, optional
        The flag determining how to treat NAN values in comparison
    mismatches : tuple of mismatches
        Maximum number of mismatches to be printed (mismatches[0]) and determine (mismatches[1])
    """
    etol = get_etol(etol)
    if etol > 0:
        rtol, atol = get_tols(a, b, rtol, atol)
        if isinstance(a, _nd.NDArray):
            a = a.asnumpy()
        if isinstance(b, _nd.NDArray):
            b = b.asnumpy()
        equals = np.isclose(a, b, rtol=rtol, atol=atol)
        err = 1 - np.count_nonzero(equals) / equals.size
        if err > etol:
            index, rel = _find_max_violation(a, b, rtol, atol)
            errMsg = _mismatch_report(a, b, index, rel, rtol, atol, names, equal_nan,
                                      mismatches)
            np.set_printoptions(threshold=4, suppress=True)
            msg = npt.build_err_msg([a, b], err_msg=errMsg)
            raise AssertionError(msg)
    else:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """Test that two NumPy arrays are almost equal (ignoring NaN in either array).
    Combines a relative and absolute measure of approximate eqality.
    If either the relative or absolute check passes, the arrays are considered equal.
    Including an absolute check resolves issues with the relative check where all
    array values are close to zero.

    Parameters
    ----------
    a : np.ndarray
    b : np.ndarray
    rtol : None or float
        The relative threshold. Default threshold will be used if set to ``None``.
    atol : None or float
        The absolute threshold. Default threshold will be used if set to ``None``.
    """
    a = np.copy(a)
    b = np.copy(b)
    nan_mask = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan_mask] = 0
    b[nan_mask] = 0

    assert_almost_equal(a, b, rtol, atol, names)

def assert_exception(f, exception_type, *args, **kwargs):
    """Test that function f will throw an exception of type given by `exception_type`"""
    try:
        f(*args, **kwargs)
        assert(False)
    except exception_type:
        return

def retry(n):
    """Retry n times before failing for stochastic test cases."""
    assert n > 0
    def decorate(f):
        """Decorate a test case."""
        def wrapper(*args, **kwargs):
            """Wrapper for tests function."""
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError as e:
                    if i == n-1:
                        raise e
                    _nd.waitall()
        return wrapper
    return decorate
