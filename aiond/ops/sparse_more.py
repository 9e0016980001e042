"""Storage rules of MXNet ops beyond those of ``sparse.py``:

- the elementwise binary ops that keep sparse storage when both inputs share
  it (``_maximum``, ``_minimum``, ``_hypot``, ``_grad_add``: MXNet's
  BINARY_WITH_SPARSE_CPU ops, for which f(0, 0) == 0). row_sparse inputs give
  a row_sparse result over the union of their stored rows (a row one side
  does not store counts as zeros there); csr inputs give the csr of the dense
  result. Mixed storage falls back to dense, as in MXNet;
- ``_contrib_quadratic`` keeps a csr input's storage when ``c == 0``;
- ``BatchNorm`` refuses sparse inputs with ``fix_gamma=True`` (MXNet's
  storage inference fails there) and otherwise falls back to dense."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from .sparse import CSR, RSP, SparseImpl, SPARSE, _unary_kernel, from_dense, to_dense

_I64 = np.dtype(np.int64)


def _same_sparse(attrs, st):
    if st[0] in ("row_sparse", "csr") and all(s == st[0] for s in st):
        return (st[0],)
    return None


def _rows_union(a, b, shape1, dtype):
    idx = np.union1d(a.indices, b.indices).astype(_I64)
    da = np.zeros((len(idx),) + tuple(shape1), dtype=dtype)
    db = np.zeros_like(da)
    if len(a.indices):
        da[np.searchsorted(idx, a.indices)] = a.data
    if len(b.indices):
        db[np.searchsorted(idx, b.indices)] = b.data
    return idx, da, db


def _binary_kernel(fn):
    def kern(vals, attrs, shapes, oshapes, odtypes, muts):
        a, b = vals
        if isinstance(a, RSP):
            idx, da, db = _rows_union(a, b, oshapes[0][1:], odtypes[0])
            return [RSP(fn(da, db).astype(odtypes[0], copy=False), idx)]
        assert isinstance(a, CSR)
        d = fn(to_dense(a, shapes[0], odtypes[0]), to_dense(b, shapes[1], odtypes[0]))
        return [from_dense(np.ascontiguousarray(d), "csr")]
    return kern


for _name, _fn in (("_maximum", np.maximum), ("_minimum", np.minimum), ("_hypot", np.hypot),
                   ("_grad_add", np.add)):
    SPARSE[_name] = SparseImpl(_same_sparse, _binary_kernel(_fn))


def _quadratic_stypes(attrs, st):
    return ("csr",) if st[0] == "csr" and attrs["c"] == 0.0 else None


SPARSE["_contrib_quadratic"] = SparseImpl(_quadratic_stypes, _unary_kernel("_contrib_quadratic"))


def _batchnorm_stypes(attrs, st):
    if attrs.get("fix_gamma") and any(s != "default" for s in st):
        raise OpError("BatchNorm: fix_gamma=True is not supported for sparse ndarrays (MXNet issue "
                      "#11647); pass fix_gamma=False or dense inputs")
    return None


SPARSE["BatchNorm"] = SparseImpl(_batchnorm_stypes, None)
