"""NumPy's dispatch protocols on ``mx.np.ndarray`` (NEP 13 ``__array_ufunc__``
and NEP 18 ``__array_function__``), as MXNet 1.9.1 defines them: an official
NumPy function or ufunc called on mx.np arrays runs the ``mx.np`` function
registered for it (``aiond.numpy._protocol`` fills the tables), and
any other falls back to NumPy on copies of the data, its result coming back
as mx.np arrays on the inputs' device. A fallback cannot be differentiated,
so it is refused while autograd records."""
from __future__ import annotations

import numpy as _np

from ..base import numeric_types

__all__ = ["_NUMPY_ARRAY_FUNCTION_DICT", "_NUMPY_ARRAY_UFUNC_DICT", "array_ufunc",
           "array_function", "as_mx_np_array", "as_onp_array"]

# official NumPy function -> mx.np function; ufunc name -> mx.np function
_NUMPY_ARRAY_FUNCTION_DICT: dict = {}
_NUMPY_ARRAY_UFUNC_DICT: dict = {}
_registered = [False]


def _ensure_registered():
    if not _registered[0]:
        _registered[0] = True
        from ._protocol import register_all
        register_all()


def _ndarray():
    from .multiarray import ndarray
    return ndarray


def as_mx_np_array(obj, ctx=None):
    """A NumPy result as mx.np arrays (lists and tuples element by element;
    Python and NumPy scalars stay scalars)."""
    from .multiarray import array
    if isinstance(obj, _np.ndarray):
        return array(obj, dtype=obj.dtype, ctx=ctx)
    if isinstance(obj, (_np.bool_, bool)):
        return obj
    if isinstance(obj, numeric_types):
        return obj
    if isinstance(obj, (list, tuple)):
        items = [as_mx_np_array(x, ctx) for x in obj]
        # a named tuple (NumPy 2's QRResult, ...) takes its fields positionally
        return obj.__class__(*items) if hasattr(obj, "_fields") else obj.__class__(items)
    raise TypeError("Does not support converting {} to mx.np.ndarray.".format(str(type(obj))))


def as_onp_array(obj):
    """``(obj with every mx.np array replaced by a NumPy copy, their device)``."""
    nd = _ndarray()
    if isinstance(obj, nd):
        return obj.asnumpy(), obj.context
    if isinstance(obj, (list, tuple)):
        items, ctx = [], None
        for x in obj:
            x, c = as_onp_array(x)
            items.append(x)
            if ctx is None:
                ctx = c
            elif c is not None and c != ctx:
                raise ValueError("Ambiguous to set the context for the output ndarray since "
                                 "input ndarrays are allocated on different devices: {} and {}"
                                 .format(ctx, c))
        return obj.__class__(items), ctx
    return obj, None


def _refuse_while_recording(name):
    from ..ndarray._invoke import hooks
    if hooks.is_recording():    # autograd's (it sits above mx.np and installs it)
        raise ValueError("Falling back to NumPy operator {} with autograd active is not "
                         "supported. Please consider moving the operator to the outside of "
                         "the autograd scope.".format(name))


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``ndarray.__array_ufunc__``."""
    if method != "__call__":
        return NotImplemented
    _ensure_registered()
    out = kwargs.get("out")
    if out is not None:
        if len(out) != 1:
            raise ValueError("The `out` parameter must have exactly one ndarray")
        kwargs["out"] = out[0]
    name = ufunc.__name__
    mx_ufunc = _NUMPY_ARRAY_UFUNC_DICT.get(name)
    if mx_ufunc is not None:
        return mx_ufunc(*inputs, **kwargs)
    _refuse_while_recording(name)
    onp_inputs, ctx = as_onp_array(list(inputs))
    out = kwargs.pop("out", None)
    res = as_mx_np_array(getattr(_np, name)(*onp_inputs, **kwargs), ctx=ctx)
    if out is not None:
        out[...] = res
        return out
    return res


def array_function(self, func, types, args, kwargs):
    """``ndarray.__array_function__``."""
    _ensure_registered()
    mx_func = _NUMPY_ARRAY_FUNCTION_DICT.get(func)
    if mx_func is not None:
        nd = _ndarray()
        if not all(issubclass(t, nd) for t in types):
            return NotImplemented
        return mx_func(*args, **kwargs)
    _refuse_while_recording(getattr(func, "__name__", func))
    onp_args, ctx = as_onp_array(args)
    kw_values, kw_ctx = as_onp_array(list(kwargs.values()))
    onp_kwargs = dict(zip(kwargs, kw_values))
    return as_mx_np_array(func(*onp_args, **onp_kwargs), ctx=ctx or kw_ctx)
