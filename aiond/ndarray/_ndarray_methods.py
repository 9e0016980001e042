"""NDArray methods MXNet 1.9.1 has and aiond adds here: ``depth_to_space``,
``space_to_depth``, ``slice_assign`` and ``slice_assign_scalar`` (each the
registry op of that name; its function is made on first call)."""
from __future__ import annotations

from ..ops import registry as _reg
from ._namespace import make_function
from .ndarray import NDArray

# ------------------------------------------------------------- NDArray methods
def _depth_to_space(self, *args, **kwargs):
    """Convenience fluent method for :py:func:`depth_to_space`."""
    return _nd_fn("depth_to_space")(self, *args, **kwargs)


def _space_to_depth(self, *args, **kwargs):
    """Convenience fluent method for :py:func:`space_to_depth`."""
    return _nd_fn("space_to_depth")(self, *args, **kwargs)


def _slice_assign_scalar(self, value, begin, end, step):
    """Assign the scalar ``value`` to the cropped subset ``[begin:end:step]``
    of this NDArray in place (cast to its dtype); returns this NDArray."""
    return _nd_fn("_slice_assign_scalar")(self, scalar=value, begin=begin, end=end, step=step,
                                          out=self)


def _slice_assign(self, rhs, begin, end, step):
    """Assign ``rhs`` (the cropped shape, same dtype and device) to the
    subset ``[begin:end:step]`` of this NDArray in place; returns this NDArray."""
    return _nd_fn("_slice_assign")(self, rhs, begin=begin, end=end, step=step, out=self)


_FNS = {}


def _nd_fn(name):
    fn = _FNS.get(name)
    if fn is None:
        fn = _FNS[name] = make_function(_reg.get(name), name)
    return fn


for _name, _meth in (("depth_to_space", _depth_to_space), ("space_to_depth", _space_to_depth),
                     ("slice_assign_scalar", _slice_assign_scalar),
                     ("slice_assign", _slice_assign)):
    _meth.__name__ = _name
    _meth.__qualname__ = "NDArray." + _name
    if not hasattr(NDArray, _name):
        setattr(NDArray, _name, _meth)
