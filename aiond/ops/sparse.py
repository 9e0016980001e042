"""Sparse storage (MXNet 1.9.1's ``row_sparse`` and ``csr``): the values a
sparse array's storage holds, the conversions between storage types, and the
storage-aware kernels of the ops that have them (MXNet's ``FComputeEx``).

A sparse array's storage holds one value, replaced whole by the op that
writes it (the engine orders those writes like any other):

- ``RSP(data, indices)``: the rows ``indices`` (sorted, unique, int64) of a
  tensor whose other rows are zero; ``data`` has shape ``(nnz,) + shape[1:]``;
- ``CSR(data, indices, indptr)``: a 2-D compressed sparse row matrix.

``SPARSE[name]`` holds an op's storage rule and kernel. The rule takes
``(attrs, in_stypes)`` and returns the output storage types, or None when the
op has no kernel for that combination: the caller then falls back to the
dense kernel on dense copies of the inputs (MXNet's storage fallback). A
kernel takes ``(vals, attrs, shapes, oshapes, odtypes, muts)`` (``vals``: the
inputs' values, numpy arrays for dense inputs) and returns the outputs'
values; ops that update inputs in place (optimizer states) store the new
values of those inputs in the dict ``muts`` by input index.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from . import registry as _reg
from ._rules import unary
from .registry import Param, p_axis, p_bool, p_float, register

__all__ = ["RSP", "CSR", "SPARSE", "STYPES", "to_dense", "from_dense", "empty_value"]

STYPES = ("default", "row_sparse", "csr")
_I64 = np.dtype(np.int64)


class RSP:
    """A row_sparse value: ``data`` rows at sorted unique ``indices``."""
    __slots__ = ("data", "indices")
    stype = "row_sparse"

    def __init__(self, data, indices):
        self.data, self.indices = data, indices

    @property
    def nbytes(self):       # what the engine's pending-bytes bound counts
        return self.data.nbytes + self.indices.nbytes


class CSR:
    """A csr value: ``data``, column ``indices`` and row pointers ``indptr``."""
    __slots__ = ("data", "indices", "indptr")
    stype = "csr"

    def __init__(self, data, indices, indptr):
        self.data, self.indices, self.indptr = data, indices, indptr

    @property
    def nbytes(self):
        return self.data.nbytes + self.indices.nbytes + self.indptr.nbytes


def stype_of(v):
    return getattr(v, "stype", "default")


def empty_value(stype, shape, dtype, aux_types=None):
    """The all-zero value of a sparse array (no stored rows / elements)."""
    if stype == "row_sparse":
        it = np.dtype(aux_types[0]) if aux_types else _I64
        return RSP(np.zeros((0,) + tuple(shape[1:]), dtype=dtype), np.zeros((0,), dtype=it))
    if stype == "csr":
        pt = np.dtype(aux_types[0]) if aux_types else _I64
        it = np.dtype(aux_types[1]) if aux_types else _I64
        return CSR(np.zeros((0,), dtype=dtype), np.zeros((0,), dtype=it),
                   np.zeros((shape[0] + 1,), dtype=pt))
    raise OpError("unknown storage type %r" % (stype,))


def to_dense(v, shape, dtype=None):
    """A new dense numpy array of the value ``v`` (an RSP, a CSR or an array)."""
    if isinstance(v, RSP):
        out = np.zeros(shape, dtype=dtype or v.data.dtype)
        if len(v.indices):
            out[v.indices] = v.data
        return out
    if isinstance(v, CSR):
        out = np.zeros(shape, dtype=dtype or v.data.dtype)
        if len(v.data):
            rows = np.repeat(np.arange(shape[0]), np.diff(v.indptr))
            np.add.at(out, (rows, v.indices), v.data)
        return out
    return np.array(v, dtype=dtype or v.dtype, copy=True)


def from_dense(a, stype, aux_types=None):
    """The ``stype`` value of dense array ``a`` (zeros are not stored; a
    row_sparse value stores every row with a non-zero element)."""
    if stype == "row_sparse":
        it = np.dtype(aux_types[0]) if aux_types else _I64
        if a.ndim == 0:
            raise OpError("a row_sparse array needs at least one dimension")
        mask = (a != 0).reshape(a.shape[0], -1).any(axis=1) if a.size else \
            np.zeros(a.shape[0], dtype=bool)
        idx = np.nonzero(mask)[0]
        return RSP(np.ascontiguousarray(a[idx]), idx.astype(it))
    if stype == "csr":
        if a.ndim != 2:
            raise OpError("a csr array must be 2-D, got shape %s" % (a.shape,))
        pt = np.dtype(aux_types[0]) if aux_types else _I64
        it = np.dtype(aux_types[1]) if aux_types else _I64
        mask = a != 0
        rows, cols = np.nonzero(mask)
        indptr = np.zeros(a.shape[0] + 1, dtype=pt)
        np.cumsum(mask.sum(axis=1), out=indptr[1:])
        return CSR(np.ascontiguousarray(a[rows, cols]), cols.astype(it), indptr)
    return np.array(a, copy=True)


def convert(v, shape, stype, dtype=None, aux_types=None):
    """The value ``v`` in storage ``stype`` (and ``dtype``)."""
    src = stype_of(v)
    if src == stype:
        if stype == "row_sparse":
            return RSP(v.data.astype(dtype or v.data.dtype, copy=True),
                       v.indices.astype(aux_types[0] if aux_types else v.indices.dtype, copy=True))
        if stype == "csr":
            return CSR(v.data.astype(dtype or v.data.dtype, copy=True), v.indices.copy(),
                       v.indptr.copy())
        return np.array(v, dtype=dtype or v.dtype, copy=True)
    d = to_dense(v, shape, dtype)
    return d if stype == "default" else from_dense(d, stype, aux_types)


# ------------------------------------------------------------- registry

class SparseImpl:
    __slots__ = ("stypes", "kernel")

    def __init__(self, stypes, kernel):
        self.stypes, self.kernel = stypes, kernel


SPARSE: dict = {}
# ops whose output storage follows their attrs even on dense inputs (mx.nd
# functions route them through the storage-aware path)
ATTR_STYPE_OPS = frozenset({"_backward_Embedding"})


def sparse_impl(*names, stypes):
    def deco(kernel):
        for n in names:
            SPARSE[n] = SparseImpl(stypes, kernel)
        return kernel
    return deco


# ------------------------------------------------------------- new ops

@register("cast_storage", params=[Param("stype", str, doc="output storage type",
                                        choices=STYPES)], infer=unary)
def cast_storage(xp, data, out, stype):
    """cast_storage(data, stype): data in storage type stype ('default',
    'row_sparse' or 'csr'); the values are unchanged."""
    xp.copyto(out, data)


@sparse_impl("cast_storage", stypes=lambda attrs, st: (attrs["stype"],))
def _cast_storage_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    stype = attrs["stype"]
    src = stype_of(vals[0])
    if {src, stype} == {"row_sparse", "csr"}:
        raise OpError("cast_storage from %s to %s is not supported" % (src, stype))
    return [convert(vals[0], shapes[0], stype)]


def _retain_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("expects 2 inputs (data, indices), got %d" % len(shapes))
    return (shapes[0],), (dtypes[0],)


@register("_sparse_retain", inputs=("data", "indices"), infer=_retain_rule)
def _sparse_retain(xp, data, indices, out):
    """retain(data, indices): the rows of row_sparse data at indices; the
    other rows become zero."""
    out[...] = 0
    idx = indices.astype(np.int64)
    out[idx] = data[idx]


def _retain_value(v, idx):
    idx = np.asarray(idx).astype(np.int64).reshape(-1)
    keep = np.isin(v.indices, idx)
    return RSP(v.data[keep].copy(), v.indices[keep].copy())


@sparse_impl("_sparse_retain", stypes=lambda attrs, st: ("row_sparse",)
             if st[0] == "row_sparse" and st[1] == "default" else None)
def _retain_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    return [_retain_value(vals[0], vals[1])]


_SQSUM_PARAMS = [Param("axis", p_axis, None), Param("keepdims", p_bool, False),
                 Param("exclude", p_bool, False)]


def _square_sum_rule(attrs, shapes, dtypes):
    rule = _reg.get("sum").infer
    return rule(attrs, shapes, dtypes)


@register("_square_sum", params=_SQSUM_PARAMS, infer=_square_sum_rule)
def _square_sum(xp, data, out, axis=None, keepdims=False, exclude=False):
    """_square_sum(data, axis, keepdims): sum(data * data) over axis."""
    sq = xp.square(data)
    _reg.get("sum").kernel(xp, sq, out=out, axis=axis, keepdims=keepdims, exclude=exclude)


def _sqsum_stypes(attrs, st):
    if st[0] != "row_sparse":
        return None
    ax = attrs["axis"]
    ax = (ax,) if isinstance(ax, int) else ax
    if ax == (1,) and attrs["keepdims"]:
        return ("row_sparse",)
    return None


@sparse_impl("_square_sum", stypes=_sqsum_stypes)
def _square_sum_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    v = vals[0]
    # (n, -1) cannot be reshaped when no row is stored: give the columns explicitly
    d = np.square(v.data).reshape(len(v.indices), int(np.prod(shapes[0][1:]))).sum(axis=1)
    d = d.astype(odtypes[0])
    return [RSP(d.reshape((-1, 1)), v.indices.copy())]


# --------------------------------------------------- storage-aware kernels

def _same(st, *allowed):
    return all(s in allowed for s in st)


def _rsp_union(a, b, fa, fb, shape1, dtype):
    idx = np.union1d(a.indices, b.indices).astype(_I64)
    data = np.zeros((len(idx),) + tuple(shape1), dtype=dtype)
    if len(a.indices):
        data[np.searchsorted(idx, a.indices)] = fa(a.data)
    if len(b.indices):
        pos = np.searchsorted(idx, b.indices)
        data[pos] = fb(data[pos], b.data)
    return RSP(data, idx)


@sparse_impl("elemwise_add", "_plus", "_add", stypes=lambda attrs, st: ("row_sparse",)
             if _same(st, "row_sparse") else ("csr",) if _same(st, "csr") else None)
def _add_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    a, b = vals
    if isinstance(a, CSR):
        return [from_dense(to_dense(a, shapes[0]) + to_dense(b, shapes[1]), "csr")]
    return [_rsp_union(a, b, lambda x: x, np.add, oshapes[0][1:], odtypes[0])]


@sparse_impl("elemwise_sub", "_minus", "_sub", stypes=lambda attrs, st: ("row_sparse",)
             if _same(st, "row_sparse") else ("csr",) if _same(st, "csr") else None)
def _sub_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    a, b = vals
    if isinstance(a, CSR):
        return [from_dense(to_dense(a, shapes[0]) - to_dense(b, shapes[1]), "csr")]
    return [_rsp_union(a, b, lambda x: x, np.subtract, oshapes[0][1:], odtypes[0])]


def _mul_stypes(attrs, st):
    if "row_sparse" in st and all(s in ("row_sparse", "default") for s in st):
        return ("row_sparse",)
    if "csr" in st and all(s in ("csr", "default") for s in st):
        return ("csr",)     # MXNet: csr * dense keeps the csr's pattern
    return None


@sparse_impl("elemwise_mul", "_mul", stypes=_mul_stypes)
def _mul_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    a, b = vals
    if isinstance(a, CSR) and isinstance(b, CSR):
        return [from_dense(to_dense(a, shapes[0]) * to_dense(b, shapes[1]), "csr")]
    if isinstance(a, CSR) or isinstance(b, CSR):
        c, d = (a, b) if isinstance(a, CSR) else (b, a)
        rows = _csr_rows(c, shapes[0][0])
        data = (c.data * d[rows, c.indices.astype(_I64)]).astype(odtypes[0])
        return [CSR(data, c.indices.copy(), c.indptr.copy())]
    if not isinstance(a, RSP):
        a, b = b, a
    if isinstance(b, RSP):
        idx = np.intersect1d(a.indices, b.indices).astype(_I64)
        return [RSP(a.data[np.searchsorted(a.indices, idx)] *
                    b.data[np.searchsorted(b.indices, idx)], idx)]
    return [RSP(a.data * b[a.indices], a.indices.copy())]


def _unary_stypes(attrs, st):
    return (st[0],) if st[0] in ("row_sparse", "csr") else None


def _map_value(v, fn):
    if isinstance(v, RSP):
        return RSP(np.ascontiguousarray(fn(v.data)), v.indices.copy())
    return CSR(np.ascontiguousarray(fn(v.data)), v.indices.copy(), v.indptr.copy())


# unary ops with f(0) == 0 keep their input's storage type (MXNet's sparse unary ops)
_ZERO_PRESERVING = ("abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square",
                    "sqrt", "relu", "tanh", "arcsin", "arctan", "arcsinh", "arctanh", "sin",
                    "sinh", "tan", "expm1", "log1p", "degrees", "radians", "negative", "_copy",
                    "cbrt", "identity")


def _unary_kernel(name):
    def kern(vals, attrs, shapes, oshapes, odtypes, muts):
        op = _reg.get(name)

        def fn(d):
            out = np.empty(d.shape, dtype=odtypes[0])
            op.kernel(np, d, out=out, **attrs)
            return out
        return [_map_value(vals[0], fn)]
    return kern


for _n in _ZERO_PRESERVING:
    SPARSE[_n] = SparseImpl(_unary_stypes, _unary_kernel(_n))


def _scalar_stypes(attrs, st):
    return (st[0],) if st[0] in ("row_sparse", "csr") else None


for _n in ("_mul_scalar", "_div_scalar"):
    SPARSE[_n] = SparseImpl(_scalar_stypes, _unary_kernel(_n))


def _plus_minus_stypes(attrs, st):
    # MXNet: sparse only when the scalar is 0 (else a dense result)
    if st[0] in ("row_sparse", "csr") and attrs["scalar"] == 0:
        return (st[0],)
    return None


for _n in ("_plus_scalar", "_minus_scalar"):
    SPARSE[_n] = SparseImpl(_plus_minus_stypes, _unary_kernel(_n))


def _logic_stypes(name):
    def rule(attrs, st):
        # MXNet: sparse when op(0, scalar) == 0, so the zeros stay zeros
        if st[0] not in ("row_sparse", "csr"):
            return None
        out = np.zeros((1,), dtype=np.float64)
        _reg.get(name).kernel(np, np.zeros((1,), dtype=np.float64), out=out, **attrs)
        return (st[0],) if out[0] == 0 else None
    return rule


for _n in ("_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
           "_lesser_scalar", "_lesser_equal_scalar"):
    SPARSE[_n] = SparseImpl(_logic_stypes(_n), _unary_kernel(_n))


def _clip_stypes(attrs, st):
    if st[0] in ("row_sparse", "csr") and attrs["a_min"] <= 0 <= attrs["a_max"]:
        return (st[0],)
    return None


SPARSE["clip"] = SparseImpl(_clip_stypes, _unary_kernel("clip"))


@sparse_impl("zeros_like", stypes=_unary_stypes)
def _zeros_like_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    return [empty_value(stype_of(vals[0]), oshapes[0], odtypes[0])]


@sparse_impl("add_n", "ElementWiseSum", stypes=lambda attrs, st: ("row_sparse",)
             if _same(st, "row_sparse") else None)
def _add_n_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    acc = vals[0]
    for v in vals[1:]:
        acc = _rsp_union(acc, v, lambda x: x, np.add, oshapes[0][1:], odtypes[0])
    if len(vals) == 1:
        acc = convert(acc, shapes[0], "row_sparse")
    return [acc]


def _slice_stypes(attrs, st):
    if st[0] != "csr":
        return None
    step = attrs.get("step") or ()
    if any(s not in (None, 1) for s in step) or len(attrs["begin"]) != 1 and \
            (len(attrs["begin"]) != 2 or attrs["begin"][1] not in (None, 0)
             or attrs["end"][1] is not None):
        return None
    return ("csr",)


@sparse_impl("slice", stypes=_slice_stypes)
def _slice_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    v = vals[0]
    n = shapes[0][0]
    b = attrs["begin"][0]
    b = 0 if b is None else (b + n if b < 0 else b)
    e = b + oshapes[0][0]
    lo, hi = v.indptr[b], v.indptr[e]
    return [CSR(v.data[lo:hi].copy(), v.indices[lo:hi].copy(), v.indptr[b:e + 1] - lo)]


def _dot_stypes(attrs, st):
    a, b = st
    if attrs.get("transpose_b"):
        if a == "default" and b == "csr":
            return ("default",)
        return None
    if a == "csr" and b in ("default", "row_sparse"):
        if attrs.get("transpose_a") and b == "default":
            fs = attrs.get("forward_stype")
            return ("default",) if fs == "default" else ("row_sparse",)
        return ("default",)
    if a == "default" and b == "csr" and not attrs.get("transpose_a"):
        fs = attrs.get("forward_stype")
        return ("default",) if fs == "default" else ("csr",)
    return None


def _slice_axis_stypes(attrs, st):
    return ("csr",) if st[0] == "csr" and attrs["axis"] == 0 else None


@sparse_impl("slice_axis", stypes=_slice_axis_stypes)
def _slice_axis_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    v = vals[0]
    n = shapes[0][0]
    b = attrs["begin"] or 0
    b = b + n if b < 0 else b
    e = b + oshapes[0][0]
    lo, hi = v.indptr[b], v.indptr[e]
    return [CSR(v.data[lo:hi].copy(), v.indices[lo:hi].copy(), v.indptr[b:e + 1] - lo)]


def _csr_rows(v, nrows):
    return np.repeat(np.arange(nrows, dtype=_I64), np.diff(v.indptr).astype(_I64))


def _csr_matmul(v, shape, rhs, transpose):
    """csr (or its transpose) times a dense 2-D ``rhs``, without scipy."""
    rows = _csr_rows(v, shape[0])
    cols = v.indices.astype(_I64)
    if transpose:
        rows, cols = cols, rows
        nout = shape[1]
    else:
        nout = shape[0]
    out = np.zeros((nout, rhs.shape[1]), dtype=np.result_type(v.data.dtype, rhs.dtype))
    if len(v.data):
        np.add.at(out, rows, v.data[:, None] * rhs[cols])
    return out


@sparse_impl("dot", stypes=_dot_stypes)
def _dot_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    a, b = vals
    ta, tb = attrs.get("transpose_a"), attrs.get("transpose_b")
    if isinstance(a, CSR):
        rhs = to_dense(b, shapes[1]) if isinstance(b, RSP) else b
        res = _csr_matmul(a, shapes[0], rhs.reshape(rhs.shape[0], -1), ta)
    else:
        # x @ B = (B.T @ x.T).T ; x @ B.T = (B @ x.T).T
        lhs = a.T if ta else a
        res = _csr_matmul(b, shapes[1], lhs.reshape(lhs.shape[0], -1).T, not tb).T
    res = res.reshape(oshapes[0]).astype(odtypes[0], copy=False)
    ost = _dot_stypes(attrs, (stype_of(a), stype_of(b)))[0]
    return [res if ost == "default" else from_dense(np.ascontiguousarray(res), ost)]


def _emb_back_stypes(attrs, st):
    return ("row_sparse",) if attrs.get("sparse_grad") and _same(st, "default") else None


@sparse_impl("_backward_Embedding", stypes=_emb_back_stypes)
def _emb_back_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    data, ograd = vals
    k = attrs["input_dim"]
    idx = np.clip(data.reshape(-1).astype(_I64), 0, k - 1)
    rows = np.unique(idx)
    out = np.zeros((len(rows), attrs["output_dim"]), dtype=odtypes[0])
    np.add.at(out, np.searchsorted(rows, idx), ograd.reshape(-1, attrs["output_dim"]))
    return [RSP(out, rows)]


from . import sparse_update as _sparse_update  # noqa: E402,F401  (lazy optimizer updates)
from . import sparse_more as _sparse_more  # noqa: E402,F401  (maximum, quadratic, BatchNorm)


def _take_stypes(attrs, st):
    return ("csr",) if st[0] == "csr" and st[1] == "default" and attrs["axis"] == 0 else None


@sparse_impl("take", stypes=_take_stypes)
def _take_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    v, idx = vals
    n = shapes[0][0]
    rows = idx.reshape(-1).astype(_I64)
    rows = rows % n if attrs["mode"] == "wrap" else np.clip(rows, 0, n - 1)
    counts = np.diff(v.indptr)
    starts = v.indptr[:-1][rows]
    sel = np.concatenate([np.arange(a, a + c) for a, c in zip(starts, counts[rows])]) \
        if len(rows) else np.zeros((0,), _I64)
    sel = sel.astype(_I64)
    indptr = np.zeros(len(rows) + 1, dtype=v.indptr.dtype)
    np.cumsum(counts[rows], out=indptr[1:])
    return [CSR(v.data[sel].astype(odtypes[0]), v.indices[sel].copy(), indptr)]


def _getnnz_rule(attrs, shapes, dtypes):
    if len(shapes[0]) != 2:
        raise OpError("getnnz expects a 2-D input, got shape %s" % (shapes[0],))
    ax = attrs["axis"]
    if ax is None:
        return ((1,),), (_I64,)
    if ax not in (0, 1, -1, -2):
        raise OpError("axis=%d is out of range for a 2-D input" % ax)
    return ((shapes[0][1 - (ax % 2)],),), (_I64,)


@register("_contrib_getnnz", params=[Param("axis", _reg.p_any, None,
                                           "None (all), 0 or 1")], infer=_getnnz_rule)
def _getnnz(xp, data, out, axis=None):
    """getnnz(data, axis=None): the number of stored values of a csr matrix, in all
    (axis None) or per column (0) / row (1); the non-zeros of a dense input."""
    nz = data != 0
    out[...] = nz.sum() if axis is None else nz.sum(axis=axis % 2)


@sparse_impl("_contrib_getnnz", stypes=lambda attrs, st: ("default",) if st[0] == "csr" else None)
def _getnnz_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    v = vals[0]
    ax = attrs["axis"]
    if ax is None:
        return [np.array([len(v.indices)], dtype=_I64)]
    if ax % 2 == 1:
        return [np.diff(v.indptr).astype(_I64)]
    return [np.bincount(v.indices.astype(_I64), minlength=shapes[0][1]).astype(_I64)]


# ------------------------------------------------------------- gradients

def _square_sum_grad(F, attrs, ins, outs, og):
    x = ins[0]
    g = og[0]
    if not attrs["keepdims"]:
        ax = attrs["axis"]
        nd = len(x.shape)
        axes = range(nd) if ax is None else [a % nd for a in ((ax,) if isinstance(ax, int) else ax)]
        if attrs["exclude"]:
            axes = [a for a in range(nd) if a not in axes]
        g = g.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return [F.broadcast_mul(x * 2, g)]


def _grads():
    from ._grad import set_grads
    set_grads({
        "cast_storage": lambda F, attrs, ins, outs, og: [F._internal._copy(og[0])],
        "_sparse_retain": lambda F, attrs, ins, outs, og: [
            F._internal._sparse_retain(og[0], ins[1]), None],
        "_square_sum": _square_sum_grad,
    })


_grads()
