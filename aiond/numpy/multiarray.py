"""``mx.np.ndarray``: an NDArray with NumPy semantics, and the creation functions.

An ``mx.np.ndarray`` is an :class:`~aiond.ndarray.NDArray` (same storage,
engine var, autograd link), so every engine guarantee holds; what changes is
the meaning: ``()`` is a scalar and ``0`` a zero-size dimension, a full
reduction has shape ``()``, an integer index drops its axis, binary ops
promote dtypes, comparisons give bool arrays and ``reshape`` follows NumPy.
``as_nd_ndarray()``/``as_np_ndarray()`` switch between the two views of one
buffer without a copy, as in MXNet 1.9.1.
"""
from __future__ import annotations

import numpy as _np

from ..base import MXNetError, OpError, integer_types, numeric_types
from ..context import Context, current_context
from ..ndarray import ndarray as _ndm
from ..ndarray._invoke import hooks as _hooks
from ..ndarray._invoke import invoke as _invoke
from ..ndarray._invoke import new_array as _new_array
from ..ndarray.ndarray import NDArray
from ..ops import registry as _reg
from ..ops.np_ops import np_newshape

__all__ = ["ndarray", "empty", "array", "shape", "asarray"]

_F32 = _np.dtype(_np.float32)
_OPS = {}


def _op(name):
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = _reg.get(name)
    return op


def _as_np(x):
    """Re-type a freshly made NDArray handle (or a list of them) as mx.np.ndarray."""
    if isinstance(x, NDArray):
        if type(x) is not ndarray:
            x.__class__ = ndarray
        return x
    if isinstance(x, (list, tuple)):
        return [_as_np(y) for y in x]
    return x


def invoke(name, inputs, attrs, out=None, ctx=None):
    """Push registry op ``name`` on ``inputs``; the result is an mx.np.ndarray."""
    op = _op(name)
    if len(attrs) < len(op.params):
        attrs = dict(attrs)
        for p in op.params:
            if p.name not in attrs and p.default is not _reg.Null:
                attrs[p.name] = p.default
    res = _invoke(op, inputs, attrs, out, ctx)
    return _as_np(res) if out is None else out


def _dtype_arg(dtype, default=_F32):
    if dtype is None:
        return default
    if dtype is bool:
        return _np.dtype(_np.bool_)
    if dtype is int:
        return _np.dtype(_np.int64)
    if dtype is float:
        return _np.dtype(_np.float64)
    if isinstance(dtype, str) and dtype in ("int", "float"):
        return _np.dtype(dtype)     # NumPy's meaning: int64, float64
    try:
        return _reg.to_dtype(dtype)
    except TypeError:
        # any other spelling NumPy reads ('l', '<f4', 'i8', ...) of a dtype aiond has
        try:
            dt = _np.dtype(dtype)
        except TypeError:
            dt = None
        if dt is None or dt.kind not in "biuf":
            raise
        return _reg.to_dtype(dt)


def _shape_arg(shape):
    if shape is None:
        return ()
    if isinstance(shape, integer_types):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    for d in shape:
        if d < 0:
            raise ValueError("negative dimensions are not allowed")
    return shape


def _ctx(ctx):
    if ctx is None:
        return current_context()
    return _ndm._ctx_arg(ctx)


class ndarray(NDArray):
    """An n-dimensional array with NumPy semantics (``mxnet.numpy.ndarray``)."""
    __slots__ = ()

    # ------------------------------------------------------------ views
    def as_nd_ndarray(self):
        """The same buffer as an ``mx.nd.NDArray`` (no copy)."""
        return _ndm.view_as(self, NDArray)

    def as_np_ndarray(self):
        return self

    def reshape_view(self, *shape, **kwargs):
        """A view of this array with a new shape (MXNet's legacy reshape
        rules, no data copied)."""
        return NDArray.reshape(self, *shape, **kwargs)

    @property
    def dtype(self):
        return self._dtype

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def T(self):
        return self.transpose()

    def tostype(self, stype):
        raise AttributeError("mxnet.numpy.ndarray object has no attribute tostype")

    # -------------------------------------------------------- conversion
    def item(self, *args):
        return self.asnumpy().item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        return self.item()

    def __bool__(self):
        n = self.size
        if n == 0:
            import warnings
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, "
                          "but in future this will result in an error.", DeprecationWarning)
            return False
        if n == 1:
            return bool(self.item())
        raise ValueError("The truth value of an ndarray with multiple elements is ambiguous.")

    __nonzero__ = __bool__

    def __float__(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return float(self.item())

    def __int__(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return int(self.item())

    def __index__(self):
        if self.ndim == 0 and self._dtype.kind in "iu":
            return int(self.item())
        raise TypeError("only integer scalar arrays can be converted to a scalar index")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._dispatch import array_ufunc
        return array_ufunc(self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ._dispatch import array_function
        return array_function(self, func, types, args, kwargs)

    def __repr__(self):
        s = repr(self.asnumpy())
        dt = self._dtype
        if "dtype=" in s:
            if dt == _F32:
                s = s[:s.rindex(",")] + ")"
        elif dt not in (_F32, _np.dtype(_np.bool_)):
            s = s[:-1] + ", dtype={})".format(dt)
        ctx = self.context
        if ctx.device_type == "cpu":
            return s
        return s[:-1] + ", ctx={})".format(ctx)

    def __str__(self):
        s = str(self.asnumpy())
        ctx = self.context
        if ctx.device_type == "cpu" or self.ndim == 0:
            return s
        return "{} @{}".format(s, ctx)

    def __format__(self, fmt):
        if self.ndim == 0:
            return self.item().__format__(fmt)
        if not fmt:
            return str(self)
        raise TypeError("Cannot format mxnet.numpy.ndarray with format_spec")

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), self.context.device_type, self.context.device_id))

    # ---------------------------------------------------------- autograd
    def attach_grad(self, grad_req="write", stype=None):
        NDArray.attach_grad(self, grad_req)
        g = NDArray.grad.fget(self)
        if g is not None:
            _as_np(g)

    @property
    def grad(self):
        g = NDArray.grad.fget(self)
        return None if g is None else _as_np(g)

    def detach(self):
        return _as_np(NDArray.detach(self))

    # ----------------------------------------------------------- copying
    def copy(self, order="C"):
        if order != "C":
            raise NotImplementedError("ndarray.copy only supports order='C'")
        return _as_np(NDArray.copy(self))

    def copyto(self, other):
        return _as_np(NDArray.copyto(self, other))

    def as_in_context(self, context):
        return _as_np(NDArray.as_in_context(self, context))

    as_in_ctx = as_in_context

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dt = _dtype_arg(dtype)
        if not copy and dt == self._dtype:
            return self
        return invoke("Cast", [self], {"dtype": dt})

    # ----------------------------------------------------------- shaping
    def reshape(self, *args, **kwargs):
        order = kwargs.pop("order", "C")
        if kwargs:
            raise TypeError("{} is an invalid keyword argument for this function"
                            .format(next(iter(kwargs))))
        if order != "C":
            raise NotImplementedError("only supports C-order, while received %s" % order)
        if not args:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        newshape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        return _reshape(self, newshape)

    def reshape_like(self, other):
        return _reshape(self, other.shape)

    def flatten(self, order="C"):
        return _reshape(self, (-1,))

    def ravel(self, order="C"):
        return _reshape(self, (-1,))

    def transpose(self, *axes):
        from . import transpose
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)

    def __getitem__(self, key):
        from ._indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value):
        from ._indexing import setitem
        setitem(self, key, value)

    # -------------------------------------------------------- arithmetic
    def __add__(self, other):
        return _bin("add", self, other)

    def __radd__(self, other):
        return _bin("add", other, self)

    def __sub__(self, other):
        return _bin("subtract", self, other)

    def __rsub__(self, other):
        return _bin("subtract", other, self)

    def __mul__(self, other):
        return _bin("multiply", self, other)

    def __rmul__(self, other):
        return _bin("multiply", other, self)

    def __truediv__(self, other):
        return _bin("true_divide", self, other)

    def __rtruediv__(self, other):
        return _bin("true_divide", other, self)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, other):
        return _bin("mod", self, other)

    def __rmod__(self, other):
        return _bin("mod", other, self)

    def __pow__(self, other):
        return _bin("power", self, other)

    def __rpow__(self, other):
        return _bin("power", other, self)

    def __matmul__(self, other):
        from . import matmul
        return matmul(self, other)

    def __rmatmul__(self, other):
        from . import matmul
        return matmul(other, self)

    def __eq__(self, other):
        return _bin("equal", self, other)

    def __ne__(self, other):
        return _bin("not_equal", self, other)

    def __gt__(self, other):
        return _bin("greater", self, other)

    def __ge__(self, other):
        return _bin("greater_equal", self, other)

    def __lt__(self, other):
        return _bin("less", self, other)

    def __le__(self, other):
        return _bin("less_equal", self, other)

    __hash__ = NDArray.__hash__

    def __neg__(self):
        from ._front import ND, table
        return table()["negative"](ND, self)

    def __pos__(self):
        return self

    def __abs__(self):
        from ._front import ND, table
        return table()["absolute"](ND, self)

    def __invert__(self):
        from ._front import ND, table
        return table()["invert"](ND, self)

    def __and__(self, other):
        return _bin("bitwise_and", self, other)

    def __rand__(self, other):
        return _bin("bitwise_and", other, self)

    def __or__(self, other):
        return _bin("bitwise_or", self, other)

    def __ror__(self, other):
        return _bin("bitwise_or", other, self)

    def __xor__(self, other):
        return _bin("bitwise_xor", self, other)

    def __rxor__(self, other):
        return _bin("bitwise_xor", other, self)

    def _inplace(self, name, other):
        to = type(other)
        if ((to is ndarray and other._dtype == self._dtype and other._shape == self._shape)
                or (to in (float, int) and self._dtype.kind == "f")):
            # the result has self's dtype and shape: one in-place push, as
            # mx.nd's ``a += b`` (a float array keeps its dtype with a number)
            return _bin(name, self, other, out=self)
        res = _bin(name, self, other)
        if res._dtype != self._dtype:
            raise TypeError("Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') "
                            "with casting rule 'same_kind'" % (name, res._dtype, self._dtype))
        self[...] = res
        return self

    def __iadd__(self, other):
        return self._inplace("add", other)

    def __isub__(self, other):
        return self._inplace("subtract", other)

    def __imul__(self, other):
        return self._inplace("multiply", other)

    def __itruediv__(self, other):
        return self._inplace("true_divide", other)

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return self._inplace("mod", other)

    # ------------------------------------------------- fluent reductions
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        from . import sum as f
        return f(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        from . import prod as f
        return f(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        from . import mean as f
        return f(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        from . import std as f
        return f(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        from . import var as f
        return f(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        from . import max as f
        return f(self, axis=axis, out=out, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        from . import min as f
        return f(self, axis=axis, out=out, keepdims=keepdims)

    def argmax(self, axis=None, out=None):
        from . import argmax as f
        return f(self, axis=axis, out=out)

    def argmin(self, axis=None, out=None):
        from . import argmin as f
        return f(self, axis=axis, out=out)

    def all(self, axis=None, out=None, keepdims=False):
        from . import all as f
        return f(self, axis=axis, out=out, keepdims=keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        from . import any as f
        return f(self, axis=axis, out=out, keepdims=keepdims)

    def clip(self, min=None, max=None, out=None):  # noqa: A002
        from ._front import ND, table
        return table()["clip"](ND, self, min, max, out=out)

    def dot(self, b, out=None):
        from . import dot as f
        return f(self, b, out=out)

    def squeeze(self, axis=None):
        from . import squeeze as f
        return f(self, axis=axis)

    def expand_dims(self, axis):
        from . import expand_dims as f
        return f(self, axis)

    def swapaxes(self, axis1, axis2):
        from . import swapaxes as f
        return f(self, axis1, axis2)

    def repeat(self, repeats, axis=None):
        from . import repeat as f
        return f(self, repeats, axis=axis)

    def take(self, indices, axis=None, mode="raise"):
        from . import take as f
        return f(self, indices, axis=axis, mode=mode)

    def sort(self, axis=-1, kind=None, order=None):
        from . import sort as f
        return f(self, axis=axis, kind=kind, order=order)

    def argsort(self, axis=-1, kind=None, order=None):
        from . import argsort as f
        return f(self, axis=axis, kind=kind, order=order)

    def tile(self, reps):
        from . import tile as f
        return f(self, reps)

    def round(self, decimals=0, out=None):
        from ._front import ND, table
        return table()["round"](ND, self, decimals=decimals, out=out)

    def nonzero(self):
        from . import nonzero as f
        return f(self)

    def cumsum(self, axis=None, dtype=None, out=None):
        from . import cumsum as f
        return f(self, axis=axis, dtype=dtype, out=out)

    def broadcast_to(self, shape):
        from . import broadcast_to as f
        return f(self, shape)

    def broadcast_like(self, other):
        from . import broadcast_to as f
        return f(self, other.shape)


_ndm.register_np_class(ndarray)     # NDArray.as_np_ndarray's class


def _reshape(a, newshape):
    """NumPy reshape: a view of ``a`` (an op on the tape while autograd records)."""
    try:
        new = np_newshape(a._shape, newshape)
    except OpError as e:
        raise OpError("reshape: %s" % e) from None
    if a._ag is not None and _hooks.record is not None:
        return invoke("_np_reshape", [a], {"newshape": new, "order": "C"})
    h = _ndm.view_of(a, new, a._off or 0)
    h.__class__ = ndarray
    return h


def _to_array(x, like=None):
    if isinstance(x, NDArray):
        return x
    if isinstance(x, _np.ndarray):
        return array(x, dtype=x.dtype, ctx=like.context if like is not None else None)
    if isinstance(x, (list, tuple)):
        return array(x, ctx=like.context if like is not None else None)
    raise TypeError("type %s not supported" % type(x).__name__)


_BIN_OPS = {}       # ufunc name -> its _npi_ op (array, array)
_SCALAR_OPS = {}    # ufunc name -> its _npi_*_scalar op, or False (the front function decides)
_NO_ATTRS = {}


def _bin(name, x1, x2, out=None):
    """A NumPy binary ufunc on arrays and/or Python scalars."""
    if type(x1) is ndarray and type(x2) is ndarray:
        # two arrays (``a + b``): straight to the push, as ``mx.nd``'s
        # operators do; the front function would reach the same op
        op = _BIN_OPS.get(name)
        if op is None:
            op = _BIN_OPS[name] = _reg.get("_npi_" + name)
        res = _invoke(op, [x1, x2], _NO_ATTRS, out, None)
        if out is not None:
            return out
        res.__class__ = ndarray
        return res
    if type(x1) is ndarray and type(x2) in (float, int):
        # an array and a Python number (``a + 1.0``), likewise
        op = _SCALAR_OPS.get(name)
        if op is None:
            op = _SCALAR_OPS[name] = _reg.get("_npi_%s_scalar" % name) \
                if "_npi_%s_scalar" % name in _reg.ops() and name not in _ARRAY_ONLY else False
        if op:
            res = _invoke(op, [x1], {"scalar": float(x2), "is_int": type(x2) is int},
                          out, None)
            if out is not None:
                return out
            res.__class__ = ndarray
            return res
    return _binary(_ND, name, x1, x2, out)


def _rebuild(value, dev_type, dev_id):
    ctx = Context(dev_type, dev_id) if dev_type == "gpu" else Context("cpu", 0)
    return array(value, dtype=value.dtype, ctx=ctx)


# ------------------------------------------------------------- creation
def empty(shape, dtype=_np.float32, order="C", ctx=None):
    """A new array of ``shape`` without initialising its entries (float32 by default)."""
    if order != "C":
        raise NotImplementedError("`empty` only supports order equal to `C`, while received %s"
                                  % order)
    ctx = _ctx(ctx)
    if ctx.device_typeid == 2:
        from ..ndarray._invoke import _no_gpu
        _no_gpu(ctx)
    return _as_np(_new_array(_shape_arg(shape), _dtype_arg(dtype), ctx))


def array(object, dtype=None, ctx=None):  # noqa: A002 - NumPy's argument name
    """An array holding a copy of ``object``; float32 unless ``dtype`` (or the
    dtype of an array ``object``)."""
    ctx = _ctx(ctx)
    if isinstance(object, NDArray):
        if not isinstance(object, ndarray):
            raise ValueError("If you're trying to create a mxnet.numpy.ndarray from "
                             "mx.nd.NDArray, please use the zero-copy as_np_ndarray function.")
        dt = object._dtype if dtype is None else _dtype_arg(dtype)
        out = _as_np(_new_array(object._shape, dt, ctx))
        return _as_np(_ndm.copy_into(object, out))
    if dtype is None:
        dt = object.dtype if hasattr(object, "dtype") else _F32
    else:
        dt = _dtype_arg(dtype)
    try:
        src = _np.array(object, dtype=dt, order="C")
    except Exception as e:  # noqa: BLE001 - NumPy's message, as MXNet shows it
        raise TypeError("{}".format(str(e))) from None
    # src is a C-ordered copy already (np.ascontiguousarray would make a 0-d one 1-d)
    if ctx.device_typeid == 2:
        from ..ndarray._gpu import from_numpy_value
        return _as_np(from_numpy_value(src, ctx, src.dtype))
    h = _as_np(_new_array(src.shape, src.dtype, ctx))
    h._st.set(_np.ascontiguousarray(src).reshape(src.shape))  # numpy<2 makes 0-d 1-d
    return h


def asarray(a, dtype=None, ctx=None):
    """``a`` itself when it is an mx.np.ndarray of ``dtype``, else :func:`array`."""
    if isinstance(a, ndarray) and (dtype is None or _dtype_arg(dtype) == a._dtype):
        return a
    if isinstance(a, NDArray):
        a = a.as_np_ndarray()
        return a if dtype is None else a.astype(dtype)
    return array(a, dtype=dtype, ctx=ctx)


def shape(a):
    """The shape of an array."""
    return _np.shape(a) if not isinstance(a, NDArray) else a.shape



_ = MXNetError


from ._f_binary import binary as _binary  # noqa: E402  (the front functions use ndarray)
from ._f_binary import _ARRAY_ONLY  # noqa: E402
from ._front import ND as _ND, _set_native  # noqa: E402
_set_native()
from ._front import bind as _front_bind  # noqa: E402
from . import _f_creation as _f_creation  # noqa: E402
diag_indices_from = _front_bind(_ND, _f_creation.diag_indices_from, "diag_indices_from",
                                "aiond.numpy")
unravel_index = _front_bind(_ND, _f_creation.unravel_index, "unravel_index", "aiond.numpy")
