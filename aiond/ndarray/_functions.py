"""MXNet's module-level arithmetic (``mx.nd.add``, ``mx.nd.maximum``, ...):
array/array goes to the broadcast_* op, array/scalar to the scalar op (the
split that drives symbol auto-names), scalar/scalar to Python."""
from __future__ import annotations

import operator

import numpy as np

from ..base import numeric_types
from ..ops import registry as _reg
from ._invoke import invoke
from .ndarray import NDArray

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power",
           "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser",
           "lesser_equal", "logical_and", "logical_or", "logical_xor", "moveaxis",
           "onehot_encode", "split_v2", "histogram"]


def _is_num(x):
    return isinstance(x, numeric_types) and not isinstance(x, np.ndarray)


def _helper(lhs, rhs, array_op, py_fn, lscalar, rscalar):
    if _is_num(lhs):
        if _is_num(rhs):
            return py_fn(lhs, rhs)
        return invoke(_reg.get(rscalar or lscalar), [rhs], {"scalar": float(lhs)})
    if _is_num(rhs):
        return invoke(_reg.get(lscalar), [lhs], {"scalar": float(rhs)})
    if isinstance(rhs, NDArray) and isinstance(lhs, NDArray):
        return invoke(_reg.get(array_op), [lhs, rhs], {})
    raise TypeError("type %s not supported" % str(type(rhs if isinstance(lhs, NDArray) else lhs)))


def _make(name, array_op, py_fn, lscalar, rscalar=None, doc=""):
    def fn(lhs, rhs):
        return _helper(lhs, rhs, array_op, py_fn, lscalar, rscalar)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or ("%s(lhs, rhs): elementwise, with broadcasting; either side may "
                         "be a scalar." % name)
    return fn


def _b(f):
    return lambda x, y: 1 if f(x, y) else 0


add = _make("add", "broadcast_add", operator.add, "_plus_scalar")
subtract = _make("subtract", "broadcast_sub", operator.sub, "_minus_scalar", "_rminus_scalar")
multiply = _make("multiply", "broadcast_mul", operator.mul, "_mul_scalar")
divide = _make("divide", "broadcast_div", operator.truediv, "_div_scalar", "_rdiv_scalar")
true_divide = _make("true_divide", "broadcast_div", operator.truediv, "_div_scalar", "_rdiv_scalar")
modulo = _make("modulo", "broadcast_mod", operator.mod, "_mod_scalar", "_rmod_scalar")
power = _make("power", "broadcast_power", operator.pow, "_power_scalar", "_rpower_scalar")
maximum = _make("maximum", "broadcast_maximum", lambda x, y: x if x > y else y, "_maximum_scalar")
minimum = _make("minimum", "broadcast_minimum", lambda x, y: x if x < y else y, "_minimum_scalar")
equal = _make("equal", "broadcast_equal", _b(operator.eq), "_equal_scalar")
not_equal = _make("not_equal", "broadcast_not_equal", _b(operator.ne), "_not_equal_scalar")
greater = _make("greater", "broadcast_greater", _b(operator.gt), "_greater_scalar",
                "_lesser_scalar")
greater_equal = _make("greater_equal", "broadcast_greater_equal", _b(operator.ge),
                      "_greater_equal_scalar", "_lesser_equal_scalar")
lesser = _make("lesser", "broadcast_lesser", _b(operator.lt), "_lesser_scalar", "_greater_scalar")
lesser_equal = _make("lesser_equal", "broadcast_lesser_equal", _b(operator.le),
                     "_lesser_equal_scalar", "_greater_equal_scalar")
logical_and = _make("logical_and", "broadcast_logical_and", lambda x, y: 1 if x and y else 0,
                    "_logical_and_scalar")
logical_or = _make("logical_or", "broadcast_logical_or", lambda x, y: 1 if x or y else 0,
                   "_logical_or_scalar")
logical_xor = _make("logical_xor", "broadcast_logical_xor",
                    lambda x, y: 1 if bool(x) != bool(y) else 0, "_logical_xor_scalar")


def moveaxis(tensor, source, destination):
    """Move axes of an array to new positions (a transposed copy)."""
    nd = tensor.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    try:
        src = tuple(s % nd if -nd <= s < nd else _bad() for s in src)
    except IndexError:
        raise ValueError("Source should verify 0 <= source < tensor.ndim Got %s" % (source,)) from None
    try:
        dst = tuple(d % nd if -nd <= d < nd else _bad() for d in dst)
    except IndexError:
        raise ValueError("Destination should verify 0 <= destination < tensor.ndim (%d). Got %s"
                         % (nd, destination)) from None
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke(_reg.get("transpose"), [tensor], {"axes": tuple(order)})


def _bad():
    raise IndexError


def onehot_encode(indices, out):
    """One-hot encode ``indices`` into ``out`` (shape (n, depth)); returns out."""
    idx = indices.asnumpy().astype(np.int64).reshape(-1)
    depth = out.shape[1]
    res = np.zeros(out.shape, dtype=np.dtype(out.dtype))
    res[np.arange(idx.size), idx % depth] = 1
    out[:] = res
    return out


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split an array into sub-arrays along ``axis`` (MXNet's ``nd.split_v2``):
    ``indices_or_sections`` is a number of equal sections or a tuple of the
    indices at which to split."""
    from . import _internal
    axis_size = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if axis_size % sections:
            raise ValueError('array split does not result in an equal division')
        section_size = int(axis_size / sections)
        indices = [i * section_size for i in range(sections)]
    elif isinstance(indices_or_sections, tuple):
        indices = [0] + list(indices_or_sections)
    else:
        raise ValueError('indices_or_sections must either int or tuple of ints')
    return _internal._split_v2(ary, indices, axis, squeeze_axis)


def histogram(a, bins=10, range=None):  # noqa: A002 - MXNet's name
    """Histogram of ``a`` (MXNet's ``nd.histogram``): ``bins`` is a number of
    equal bins over ``range`` or an NDArray of bin edges; returns (counts, edges)."""
    from . import _internal
    from .ndarray import array
    if isinstance(bins, NDArray):
        return _internal._histogram(data=a, bins=bins)
    if isinstance(bins, (int, np.integer)):
        if range is None:
            import warnings
            warnings.warn("range is not specified, using numpy's result "
                          "to ensure consistency with numpy")
            res, bin_bounds = np.histogram(a.asnumpy(), bins=bins)
            return array(res), array(bin_bounds)
        return _internal._histogram(data=a, bin_cnt=bins, range=range)
    raise ValueError("bins argument should be either an integer or an NDArray")
