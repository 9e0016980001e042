"""``mx.nd.sparse``: MXNet 1.9.1's sparse NDArrays.

``CSRNDArray`` (stype 'csr', 2-D compressed sparse rows) and
``RowSparseNDArray`` (stype 'row_sparse': a few rows of a tensor, the rest
zero) live on the engine like dense arrays: one var each, ops on them return
at once, ``asnumpy()``/``await x.read()`` wait. Ops with a sparse kernel run
it (``dot`` with csr, ``elemwise_add`` of row_sparse arrays, ``retain``, the
lazy optimizer updates, ...); every other op runs on dense copies, as
MXNet's storage fallback does. ``.data``, ``.indices`` and ``.indptr`` wait
for the array and return dense copies of its parts, as in MXNet.
"""
from __future__ import annotations

import operator
import warnings
from builtins import slice as py_slice

import numpy as np

from ..base import MXNetError, NotSupportedForSparseNDArray, numeric_types
from ..context import Context, current_context
from ..ops import registry as _reg
from ..ops import sparse as _sp
from . import _sparse_invoke as _si
from ._invoke import invoke
from ._sparse_invoke import AUX_TYPES, assign, new_sparse, sparse_invoke, value_of
from . import _functions
from .ndarray import NDArray, _await_result, _ctx_arg, _engine
from .ndarray import array as _array
from .ndarray import zeros as _zeros_ndarray

__all__ = ["csr_matrix", "row_sparse_array", "BaseSparseNDArray", "CSRNDArray",
           "RowSparseNDArray", "add", "subtract", "multiply", "divide", "zeros", "empty",
           "array", "cast_storage", "retain"]  # retain: the _sparse_retain op

_STORAGE_AUX_TYPES = {"row_sparse": [np.int64], "csr": [np.int64, np.int64]}


def _is_scipy_csr(x):
    mod = type(x).__module__ or ""
    if not mod.startswith("scipy.sparse"):
        return False
    import scipy.sparse as spsp
    return isinstance(x, spsp.csr_matrix)


class BaseSparseNDArray(NDArray):
    """The base of sparse NDArrays (MXNet's ``BaseSparseNDArray``)."""
    __slots__ = ()
    _sparse = True

    def __repr__(self):
        shape_info = "x".join("%d" % x for x in self.shape)
        return "\n<%s %s @%s>" % (self.__class__.__name__, shape_info, self.context)

    __str__ = __repr__

    @property
    def stype(self):
        return self._st.stype

    @property
    def size(self):
        raise NotImplementedError()

    @property
    def _num_aux(self):
        return len(_STORAGE_AUX_TYPES[self.stype])

    @property
    def _aux_types(self):
        return [t.type for t in self._st.aux_types]

    def _aux_type(self, i):
        return self._st.aux_types[i].type

    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __mul__(self, other):
        return multiply(self, other)

    def __div__(self, other):
        return divide(self, other)

    def __iadd__(self, other):
        (self + other).copyto(self)
        return self

    def __isub__(self, other):
        (self - other).copyto(self)
        return self

    def __imul__(self, other):
        (self * other).copyto(self)
        return self

    def __itruediv__(self, other):
        (self / other).copyto(self)
        return self

    __idiv__ = __itruediv__

    def _sync_copyfrom(self, source_array):
        raise NotImplementedError()

    def _at(self, idx):
        raise NotSupportedForSparseNDArray(self._at, "[idx]", idx)

    def _slice(self, start, stop):
        raise NotSupportedForSparseNDArray(self._slice, None, start, stop)

    def reshape(self, *shape, **kwargs):
        raise NotSupportedForSparseNDArray(self.reshape, None, shape)

    def __reduce__(self):
        from aiond.ndarray.io import _sparse_from_state
        return (_sparse_from_state, (self.stype, self.shape, np.dtype(self._dtype).str,
                                     self._state(), self.context.device_type,
                                     self.context.device_id))

    def _state(self):
        v = self._value()
        if isinstance(v, _sp.RSP):
            return (v.data, v.indices)
        return (v.data, v.indices, v.indptr)

    # ------------------------------------------------------------ reading
    def _push_copy(self, on_done=None):
        shape, dtype = self._shape, self._dtype

        def copy():
            return _sp.to_dense(value_of(self), shape, dtype)
        return _engine.push(copy, (self._st.var,), (), "read", 0, False)

    def _value(self):
        """The current value (waits for pending writes)."""
        self.wait_to_read()
        return value_of(self)

    def read(self):
        """Await the dense value: ``await x.read()``."""
        return _await_result(self._push_copy(), "read()")

    def asnumpy(self):
        """A dense numpy copy; blocks until the value is computed."""
        return NDArray.asnumpy(self)

    def astype(self, dtype, copy=True):
        """A copy with dtype ``dtype`` and the same storage type."""
        if not copy and np.dtype(dtype) == self._dtype:
            return self
        res = zeros(self.stype, self.shape, ctx=self.context, dtype=dtype)
        self.copyto(res)
        return res

    def copyto(self, other):
        """Copy into ``other`` (an NDArray of a storage type this one converts to,
        or a Context: a copy there with the same storage type)."""
        if isinstance(other, NDArray):
            if other._st is self._st:
                warnings.warn("You are attempting to copy an array to itself", RuntimeWarning)
                return False
            return assign(self, other)
        if isinstance(other, Context):
            res = new_sparse(self.stype, self.shape, self._dtype, other, self._st.aux_types)
            return assign(self, res)
        raise TypeError("copyto does not support type " + str(type(other)))

    def copy(self):
        return self.copyto(self.context)

    def as_in_context(self, context):
        if self.context == context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def check_format(self, full_check=True):
        """Raise MXNetError when the array's parts are not a valid csr /
        row_sparse layout (``full_check`` also checks values of indices)."""
        v = self._value()
        _check_value(v, self.shape, full_check)

    def _data(self):
        v = self._value()
        return _array(v.data, ctx=self.context, dtype=v.data.dtype)

    def _aux_data(self, i):
        v = self._value()
        if isinstance(v, _sp.RSP):
            a = v.indices
        else:
            a = v.indptr if i == 0 else v.indices
        return _array(a, ctx=self.context, dtype=a.dtype)

    def tostype(self, stype):
        return cast_storage(self, stype=stype)

    def __getitem__(self, key):
        raise NotImplementedError()

    def __setitem__(self, key, value):
        raise NotImplementedError()


def _check_value(v, shape, full):
    if isinstance(v, _sp.RSP):
        if v.indices.ndim != 1 or v.data.shape != (len(v.indices),) + tuple(shape[1:]):
            raise MXNetError("check_format: row_sparse data of shape %s does not match %d "
                             "indices for shape %s" % (v.data.shape, len(v.indices), shape))
        if full and len(v.indices):
            if (np.diff(v.indices) <= 0).any():
                raise MXNetError("check_format: row_sparse indices are not sorted and unique")
            if v.indices[0] < 0 or v.indices[-1] >= shape[0]:
                raise MXNetError("check_format: row_sparse indices out of range")
        return
    if len(v.indptr) != shape[0] + 1 or v.indptr[0] != 0 or v.indptr[-1] != len(v.indices) \
            or len(v.data) != len(v.indices):
        raise MXNetError("check_format: csr indptr/indices/data lengths are inconsistent")
    if full:
        if (np.diff(v.indptr) < 0).any():
            raise MXNetError("check_format: csr indptr is not non-decreasing")
        if len(v.indices) and (v.indices.min() < 0 or v.indices.max() >= shape[1]):
            raise MXNetError("check_format: csr column indices out of range")
        for r in range(shape[0]):
            seg = v.indices[v.indptr[r]:v.indptr[r + 1]]
            if (np.diff(seg) <= 0).any():
                raise MXNetError("check_format: csr column indices of row %d are not sorted "
                                 "and unique" % r)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format (``stype == 'csr'``)."""
    __slots__ = ()

    def __getitem__(self, key):
        """Rows: ``x[i]`` and ``x[begin:end]`` (csr), ``x[:]`` (x itself)."""
        if isinstance(key, (int, np.integer)):
            begin = self.shape[0] - 1 if key == -1 else int(key)
            return _slice(self, begin, begin + 1)
        if isinstance(key, py_slice):
            if key.step is not None:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is not None or key.stop is not None:
                begin = key.start if key.start else 0
                end = key.stop if key.stop else self.shape[0]
                return _slice(self, begin, end)
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError("Undefined behaviour for {}".format(key))

    def __setitem__(self, key, value):
        """``x[:] = value`` (an NDArray or a numpy array)."""
        if isinstance(key, py_slice):
            if key.step is not None or key.start is not None or key.stop is not None:
                raise ValueError("Assignment with slice for CSRNDArray is not implemented yet.")
            if isinstance(value, NDArray):
                if value._st is not self._st:
                    value.copyto(self)
            elif isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
                raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
            elif isinstance(value, (np.ndarray, np.generic)):
                warnings.warn("Assigning non-NDArray object to CSRNDArray is not efficient",
                              RuntimeWarning)
                _array(value).copyto(self)
            else:
                raise TypeError("type %s not supported" % str(type(value)))
        else:
            assert isinstance(key, (int, tuple))
            raise Exception("CSRNDArray only supports [:] for assignment")

    @property
    def indices(self):
        """A copy of the column indices."""
        return self._aux_data(1)

    @property
    def indptr(self):
        """A copy of the row pointers."""
        return self._aux_data(0)

    @property
    def data(self):
        """A copy of the stored values."""
        return self._data()

    def tostype(self, stype):
        if stype == "row_sparse":
            raise ValueError("cast_storage from csr to row_sparse is not supported")
        return cast_storage(self, stype=stype)

    def copyto(self, other):
        if isinstance(other, NDArray) and other.stype not in ("default", "csr"):
            raise TypeError("copyto does not support destination NDArray stype " + other.stype)
        return BaseSparseNDArray.copyto(self, other)

    def asscipy(self):
        """The array as a ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as spsp
        v = self._value()
        return spsp.csr_matrix((v.data.copy(), v.indices.copy(), v.indptr.copy()),
                               shape=self.shape, dtype=self.dtype)


class RowSparseNDArray(BaseSparseNDArray):
    """A tensor stored as a few of its rows (``stype == 'row_sparse'``)."""
    __slots__ = ()

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            raise Exception("__getitem__ with int key is not implemented for RowSparseNDArray yet")
        if isinstance(key, py_slice):
            if key.step is not None or key.start is not None or key.stop is not None:
                raise Exception("RowSparseNDArray only supports [:] for __getitem__")
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError("Undefined behaviour for {}".format(key))

    def __setitem__(self, key, value):
        """``x[:] = value`` (an NDArray, a numpy array or a scalar)."""
        if isinstance(key, py_slice):
            if key.step is not None or key.start is not None or key.stop is not None:
                raise ValueError("Assignment with slice for RowSparseNDArray is not implmented yet.")
            if isinstance(value, NDArray):
                if value._st is not self._st:
                    value.copyto(self)
            elif isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
                _set_value(self, float(value))
            elif isinstance(value, (np.ndarray, np.generic)):
                warnings.warn("Assigning non-NDArray object to RowSparseNDArray is not efficient",
                              RuntimeWarning)
                _array(value).copyto(self)
            else:
                raise TypeError("type %s not supported" % str(type(value)))
        else:
            assert isinstance(key, (int, tuple))
            raise TypeError("RowSparseNDArray only supports [:] for assignment")

    @property
    def indices(self):
        """A copy of the stored row indices."""
        return self._aux_data(0)

    @property
    def data(self):
        """A copy of the stored rows."""
        return self._data()

    def tostype(self, stype):
        if stype == "csr":
            raise ValueError("cast_storage from row_sparse to csr is not supported")
        return cast_storage(self, stype=stype)

    def copyto(self, other):
        if isinstance(other, NDArray) and other.stype not in ("default", "row_sparse"):
            raise TypeError("copyto does not support destination NDArray stype " + other.stype)
        return BaseSparseNDArray.copyto(self, other)

    def retain(self, *args, **kwargs):
        """retain(indices): the rows at ``indices`` (a RowSparseNDArray)."""
        return retain(self, *args, **kwargs)


_si._CLASSES["row_sparse"] = RowSparseNDArray
_si._CLASSES["csr"] = CSRNDArray


def _set_value(h, value):
    """Every row of row_sparse ``h`` stored, with value ``value`` (MXNet's
    ``_set_value`` on a row_sparse out)."""
    shape, dtype = h._shape, h._dtype

    def fill():
        if value == 0:
            h._st.arr = _sp.empty_value("row_sparse", shape, dtype, h._st.aux_types)
        else:
            h._st.arr = _sp.RSP(np.full(shape, value, dtype=dtype),
                                np.arange(shape[0], dtype=h._st.aux_types[0]))
    _engine.push(fill, (), (h._st.var,), "_set_value", 0, False)


def _slice(x, begin, end):
    op = _reg.get("slice")
    return invoke(op, [x], op.parse({"begin": (begin,), "end": (end,)}))


# ----------------------------------------------------------- arithmetic

def _ufunc(lhs, rhs, same_op, bcast_op, py_fn, scalar_op, rscalar_op=None):
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
        return invoke(_reg.get(same_op), [lhs, rhs], {})
    return _functions._helper(lhs, rhs, bcast_op, py_fn, scalar_op, rscalar_op)


def add(lhs, rhs):
    """lhs + rhs: ``elemwise_add`` for same-shaped arrays (row_sparse + row_sparse
    stays row_sparse), else ``broadcast_add``; either side may be a scalar."""
    return _ufunc(lhs, rhs, "elemwise_add", "broadcast_add", operator.add, "_plus_scalar")


def subtract(lhs, rhs):
    """lhs - rhs (``elemwise_sub`` for same-shaped arrays)."""
    return _ufunc(lhs, rhs, "elemwise_sub", "broadcast_sub", operator.sub, "_minus_scalar",
                  "_rminus_scalar")


def multiply(lhs, rhs):
    """lhs * rhs (``elemwise_mul`` for same-shaped arrays)."""
    return _ufunc(lhs, rhs, "elemwise_mul", "broadcast_mul", operator.mul, "_mul_scalar")


def divide(lhs, rhs):
    """lhs / rhs (``elemwise_div`` for same-shaped arrays)."""
    return _ufunc(lhs, rhs, "elemwise_div", "broadcast_div", operator.truediv, "_div_scalar",
                  "_rdiv_scalar")


# -------------------------------------------------------------- creation

def _ctx(ctx):
    if ctx is None:
        return current_context()
    if isinstance(ctx, str):
        return _ctx_arg(ctx)
    return ctx


def _dtype(dtype):
    return np.dtype(np.float32) if dtype is None else _reg.to_dtype(dtype)


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage type ``stype`` ('default', 'row_sparse', 'csr')."""
    if stype == "default" or stype is None:
        return _zeros_ndarray(shape, ctx=ctx, dtype=dtype, **kwargs)
    if stype not in ("row_sparse", "csr"):
        raise ValueError("unknown storage type" + stype)
    shape = _shape(shape)
    if stype == "csr" and len(shape) != 2:
        raise MXNetError("a csr array must be 2-D, got shape %s" % (shape,))
    out = kwargs.pop("out", None)
    if out is not None:
        _set_value(out, 0.0) if out.stype == "row_sparse" else \
            assign(new_sparse(stype, shape, _dtype(dtype), _ctx(ctx)), out)
        return out
    return new_sparse(stype, shape, _dtype(dtype), _ctx(ctx))


def empty(stype, shape, ctx=None, dtype=None):
    """A new array of storage type ``stype`` (sparse arrays start all zero)."""
    if isinstance(shape, int):
        shape = (shape,)
    if stype in ("csr", "row_sparse"):
        return zeros(stype, shape, ctx=ctx, dtype=dtype)
    raise Exception("unknown stype : " + str(stype))


def _from_value(stype, value, shape, ctx, dtype):
    h = new_sparse(stype, shape, dtype, ctx)
    h._st.arr = value
    return h


def _np(x, dtype=None):
    if isinstance(x, NDArray):
        x = x.asnumpy()
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError("values must be array like object") from None


def _default_dtype(src, dtype):
    if dtype is not None:
        return _reg.to_dtype(dtype)
    if isinstance(src, (NDArray, np.ndarray)) or _is_scipy_csr(src):
        return np.dtype(src.dtype)
    return np.dtype(np.float32)


def _check_shape(s1, s2):
    if s1 and s2 and tuple(s1) != tuple(s2):
        raise ValueError("Shape mismatch detected. " + str(s1) + " v.s. " + str(s2))


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)``, ``(data, (row, col))``, a
    shape ``(M, N)`` (all zero), a dense array, a scipy csr_matrix or a
    CSRNDArray, as MXNet's ``csr_matrix``."""
    if isinstance(arg1, tuple):
        n = len(arg1)
        if n == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                import scipy.sparse as spsp
                data, (row, col) = arg1
                coo = spsp.coo_matrix((_np(data), (_np(row), _np(col))), shape=shape)
                _check_shape(coo.shape, shape)
                return array(coo.tocsr(), ctx=ctx, dtype=dtype)
            _check_shape(arg1, shape)
            return empty("csr", arg1, ctx=ctx, dtype=dtype)
        if n == 3:
            return _csr_matrix_from_definition(arg1[0], arg1[1], arg1[2], shape=shape, ctx=ctx,
                                               dtype=dtype)
        raise ValueError("Unexpected length of input tuple: " + str(n))
    if isinstance(arg1, CSRNDArray) or _is_scipy_csr(arg1):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray")
    dtype = _default_dtype(arg1, dtype)
    dns = _array(arg1, dtype=dtype)
    if ctx is not None and dns.context != ctx:
        dns = dns.as_in_context(ctx)
    _check_shape(dns.shape, shape)
    return dns.tostype("csr")


def _csr_matrix_from_definition(data, indices, indptr, shape=None, ctx=None, dtype=None,
                                indices_type=None, indptr_type=None):
    ctx = _ctx(ctx)
    dtype = _default_dtype(data, dtype)
    indptr_type = np.dtype(indptr_type or np.int64)
    indices_type = np.dtype(indices_type or np.int64)
    data = _np(data, dtype)
    indptr = _np(indptr, indptr_type)
    indices = _np(indices, indices_type)
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError("invalid shape")
        shape = (len(indptr) - 1, int(indices.max()) + 1)
    if data.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1 or indptr.shape[0] == 0 \
            or len(shape) != 2:
        raise ValueError("invalid shape")
    value = _sp.CSR(data.copy(), indices.copy(), indptr.copy())
    h = new_sparse("csr", tuple(int(d) for d in shape), dtype, ctx, (indptr_type, indices_type))
    h._st.arr = value
    return h


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from ``(data, indices)``, a shape (all zero), a dense
    array or a RowSparseNDArray, as MXNet's ``row_sparse_array``."""
    if isinstance(arg1, tuple):
        n = len(arg1)
        if n < 2:
            raise ValueError("Unexpected length of input tuple: " + str(n))
        if n > 2:
            _check_shape(arg1, shape)
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        if isinstance(arg1[0], (int, np.integer)) and isinstance(arg1[1], (int, np.integer)):
            _check_shape(arg1, shape)
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        return _row_sparse_ndarray_from_definition(arg1[0], arg1[1], shape=shape, ctx=ctx,
                                                   dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray")
    dtype = _default_dtype(arg1, dtype)
    dns = _array(arg1, dtype=dtype)
    if ctx is not None and dns.context != ctx:
        dns = dns.as_in_context(ctx)
    _check_shape(dns.shape, shape)
    return dns.tostype("row_sparse")


def _row_sparse_ndarray_from_definition(data, indices, shape=None, ctx=None, dtype=None,
                                        indices_type=None):
    ctx = _ctx(ctx)
    dtype = _default_dtype(data, dtype)
    indices_type = np.dtype(indices_type or np.int64)
    data = _np(data, dtype)
    indices = _np(indices, indices_type)
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError("invalid shape")
        shape = (int(indices[-1]) + 1,) + data.shape[1:]
    shape = tuple(int(d) for d in shape)
    if data.ndim != len(shape) or indices.ndim != 1 or int(np.prod(shape[1:])) == 0:
        raise ValueError("invalid shape")
    h = new_sparse("row_sparse", shape, dtype, ctx, (indices_type,))
    h._st.arr = _sp.RSP(np.ascontiguousarray(data).copy(), indices.copy())
    return h


def array(source_array, ctx=None, dtype=None):
    """A sparse array copied from a sparse NDArray or a scipy csr_matrix."""
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        assert source_array.stype != "default", \
            "Please use `tostype` to create RowSparseNDArray or CSRNDArray from an NDArray"
        dtype = _default_dtype(source_array, dtype)
        arr = empty(source_array.stype, source_array.shape, dtype=dtype, ctx=ctx)
        assign(source_array, arr)
        return arr
    if _is_scipy_csr(source_array):
        csr = source_array.sorted_indices()
        csr.sum_duplicates()
        dtype = _default_dtype(source_array, dtype)
        return csr_matrix((csr.data, csr.indices, csr.indptr), shape=csr.shape, dtype=dtype,
                          ctx=ctx)
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError("Please use mx.nd.array to create an NDArray with source_array of type ",
                         type(source_array))
    raise ValueError("Unexpected source_array type: ", type(source_array))


# ------------------------------------------------------------------- ops

def cast_storage(data, stype, out=None, name=None):
    """cast_storage(data, stype): ``data`` in storage type ``stype`` ('default',
    'row_sparse' or 'csr'); values unchanged."""
    if stype == "csr" and len(data.shape) != 2:
        raise ValueError("To convert to a CSR, the NDArray should be 2 Dimensional. Current "
                         "shape is %s" % str(data.shape))
    op = _reg.get("cast_storage")
    return sparse_invoke(op, [data], op.parse({"stype": stype}), out)


def _populate():
    # every public op, and the _sparse_* ones without the prefix, made on first use
    from ._namespace import populate_lazily
    populate_lazily(globals(), None, prefix=("", "_sparse_"), module="aiond.ndarray.sparse")


_populate()


def _install_names():
    # MXNet's private helpers of this module (_ndarray_cls, _contrib_*_ste)
    import sys
    from ._ndarray_names import install_sparse
    install_sparse(sys.modules[__name__])


_install_names()
