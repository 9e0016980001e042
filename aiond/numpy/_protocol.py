"""NumPy's dispatch protocols for ``mx.np.ndarray`` (``mxnet.numpy_dispatch_protocol``):
the official NumPy functions (``__array_function__``, NumPy >= 1.17) and
ufuncs (``__array_ufunc__``, NumPy >= 1.15) that run the ``mx.np`` function
of the same name when given mx.np arrays, so ``numpy.mean(mx_array)`` is
MXNet's mean and returns an mx.np.ndarray. NumPy functions outside these
lists fall back to NumPy itself (see ``aiond.numpy._dispatch``, which
fills the tables on first use; ``aiond.numpy_dispatch_protocol`` re-exports
this module under MXNet's name).

A name of the lists that ``mx.np`` does not provide is left to that
fallback rather than refused, so importing this module never fails."""
from __future__ import annotations

import functools

import numpy as _np

from ._dispatch import _NUMPY_ARRAY_FUNCTION_DICT, _NUMPY_ARRAY_UFUNC_DICT

__all__ = ["with_array_function_protocol", "with_array_ufunc_protocol", "register_all"]


def _np_version():
    parts = []
    for p in _np.__version__.split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _find_duplicate(strs):
    seen = set()
    for s in strs:
        if s in seen:
            return s
        seen.add(s)
    return None


def _implements(numpy_function):
    """Register an ``__array_function__`` implementation of ``numpy_function``."""
    def decorator(func):
        _NUMPY_ARRAY_FUNCTION_DICT[numpy_function] = func
        return func
    return decorator


def _with_protocol(min_version, what):
    def deco(func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            if _np_version() >= min_version:
                try:
                    func(*args, **kwargs)
                except Exception as e:
                    raise RuntimeError("Running function {} with NumPy array {} protocol failed"
                                       " with exception {}".format(func.__name__, what, str(e)))
        return run
    return deco


def with_array_function_protocol(func):
    """Run ``func`` only where NumPy has the array function protocol (>= 1.17);
    its exceptions become a RuntimeError naming the protocol."""
    return _with_protocol((1, 17), "function")(func)


def with_array_ufunc_protocol(func):
    """Run ``func`` only where NumPy has the array ufunc protocol (>= 1.15);
    its exceptions become a RuntimeError naming the protocol."""
    return _with_protocol((1, 15), "ufunc")(func)


_NUMPY_ARRAY_FUNCTION_LIST = [
    "all", "any", "sometrue", "argmin", "argmax", "around", "round", "round_", "argsort",
    "sort", "append", "broadcast_arrays", "broadcast_to", "clip", "concatenate", "copy",
    "cumsum", "diag", "diagonal", "diagflat", "dot", "expand_dims", "fix", "flip", "flipud",
    "fliplr", "inner", "insert", "max", "amax", "mean", "min", "amin", "nonzero", "ones_like",
    "atleast_1d", "atleast_2d", "atleast_3d", "prod", "product", "ravel", "repeat", "reshape",
    "roll", "split", "array_split", "hsplit", "vsplit", "dsplit", "squeeze", "stack", "std",
    "sum", "swapaxes", "take", "tensordot", "tile", "transpose", "unique", "unravel_index",
    "diag_indices_from", "delete", "var", "vdot", "vstack", "column_stack", "hstack", "dstack",
    "zeros_like", "linalg.norm", "linalg.cholesky", "linalg.inv", "linalg.solve",
    "linalg.tensorinv", "linalg.tensorsolve", "linalg.pinv", "linalg.eigvals", "linalg.eig",
    "linalg.eigvalsh", "linalg.eigh", "shape", "trace", "tril", "meshgrid", "outer", "einsum",
    "polyval", "shares_memory", "may_share_memory", "quantile", "percentile", "diff",
    "ediff1d", "resize", "where", "full_like", "bincount", "empty_like", "nan_to_num", "isnan",
    "isfinite", "isposinf", "isneginf", "isinf", "pad",
]

# https://numpy.org/doc/stable/reference/ufuncs.html#available-ufuncs
_NUMPY_ARRAY_UFUNC_LIST = [
    "abs", "fabs", "add", "arctan2", "copysign", "degrees", "hypot", "lcm", "subtract",
    "multiply", "true_divide", "negative", "power", "mod", "matmul", "absolute", "rint",
    "sign", "exp", "log", "log2", "log10", "expm1", "sqrt", "square", "cbrt", "reciprocal",
    "invert", "bitwise_not", "remainder", "sin", "cos", "tan", "sinh", "cosh", "tanh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "maximum", "minimum",
    "ceil", "trunc", "floor", "bitwise_and", "bitwise_xor", "bitwise_or", "logical_not",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
]


def _lookup(module, dotted):
    for part in dotted.split("."):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


@with_array_function_protocol
def _register_array_function(mx_np):
    dup = _find_duplicate(_NUMPY_ARRAY_FUNCTION_LIST)
    if dup is not None:
        raise ValueError("Duplicate operator name {} in _NUMPY_ARRAY_FUNCTION_LIST".format(dup))
    for op_name in _NUMPY_ARRAY_FUNCTION_LIST:
        mx_np_op = _lookup(mx_np, op_name)
        onp_op = _lookup(_np, op_name)
        # (an mx.np name that is NumPy's own function is its fallback already)
        if mx_np_op is not None and onp_op is not None and mx_np_op is not onp_op:
            _implements(onp_op)(mx_np_op)


@with_array_ufunc_protocol
def _register_array_ufunc(mx_np):
    dup = _find_duplicate(_NUMPY_ARRAY_UFUNC_LIST)
    if dup is not None:
        raise ValueError("Duplicate operator name {} in _NUMPY_ARRAY_UFUNC_LIST".format(dup))
    for op_name in _NUMPY_ARRAY_UFUNC_LIST:
        mx_np_op = getattr(mx_np, op_name, None)
        if mx_np_op is None or mx_np_op is getattr(_np, op_name, None):
            continue
        _NUMPY_ARRAY_UFUNC_DICT[op_name] = mx_np_op
        # NumPy calls some ufuncs by another name (np.abs is 'absolute',
        # np.true_divide is 'divide', np.bitwise_not is 'invert')
        onp_ufunc = getattr(_np, op_name, None)
        alias = getattr(onp_ufunc, "__name__", op_name)
        _NUMPY_ARRAY_UFUNC_DICT.setdefault(alias, mx_np_op)


_done: list = []


def register_all():
    """Fill the dispatch tables, once (when NumPy first meets an mx.np array,
    or mx.numpy_dispatch_protocol is imported)."""
    if _done:
        return
    _done.append(True)
    from .. import numpy as mx_np
    _register_array_function(mx_np)
    _register_array_ufunc(mx_np)
