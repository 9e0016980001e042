"""NDArray fluent methods (``x.sum(axis=1)``, ``x.exp()``): each forwards to
the ``mx.nd`` function of the same name with ``self`` as first input."""
from __future__ import annotations

from ..ops import _lazy, registry as _reg
from ._namespace import make_function
from .ndarray import NDArray

FLUENT = (
    "sum mean prod max min nansum nanprod norm argmax argmin exp log log2 log10 log1p expm1 "
    "sqrt rsqrt cbrt square reciprocal abs sign floor ceil round rint fix trunc sin cos tan "
    "arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh degrees radians relu "
    "sigmoid softsign clip transpose slice slice_axis zeros_like ones_like tile repeat pad "
    "split swapaxes take pick one_hot topk sort argsort diag softmax log_softmax shape_array "
    "size_array flip reverse nanprod sum_axis max_axis min_axis dot reshape_like slice_like "
    "broadcast_axes argmax_channel rcbrt softmin"
).split()


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _deferred(name):
    # the method is made, and NDArray's attribute replaced by it, on first
    # call, so importing aiond loads no op module for it
    def method(self, *args, **kwargs):
        real = _method(make_function(_reg.get(name), name))
        setattr(NDArray, name, real)
        return real(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = "x.%s(...) is mx.nd.%s(x, ...)." % (name, name)
    return method


for _name in FLUENT:
    if _lazy.known(_name) and not hasattr(NDArray, _name):
        setattr(NDArray, _name, _deferred(_name))


def _split_v2_method(self, *args, **kwargs):
    from ._functions import split_v2
    return split_v2(self, *args, **kwargs)


NDArray.split_v2 = _split_v2_method
