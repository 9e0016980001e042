"""MXNet's "scatter" elementwise ops: on a sparse left-hand side they compute
only the values the sparse array stores and leave its missing values out
(zero), where the ordinary op would fill them (x + 9 on a csr gives a dense
array of 9s; ``_scatter_plus_scalar`` a csr with 9 added to its stored values).

- ``_scatter_elemwise_div(lhs, rhs)``: lhs / rhs; row_sparse when lhs is
  row_sparse (its stored rows divided by rhs's rows), otherwise dense;
- ``_scatter_plus_scalar(data, scalar)``, ``_scatter_minus_scalar``: the
  result keeps data's storage type.

On dense inputs each is its ordinary op."""
from __future__ import annotations

import numpy as np

from ._rules import elemwise_same
from .elemwise import BINARY, _SCALAR, _scalar_rule, cast_scalar
from .registry import register
from .sparse import CSR, RSP, SPARSE, SparseImpl, to_dense

_I64 = np.dtype(np.int64)


@register("_scatter_elemwise_div", inputs=("lhs", "rhs"), infer=elemwise_same, elemwise=True)
def _scatter_elemwise_div(xp, lhs, rhs, out):
    """_scatter_elemwise_div(lhs, rhs): lhs / rhs, computed only on the rows a
    row_sparse lhs stores (its other rows stay zero)."""
    BINARY["div"](xp, lhs, rhs, out)


def _div_stypes(attrs, st):
    return ("row_sparse",) if st[0] == "row_sparse" else None


def _div_ex(vals, attrs, shapes, oshapes, odtypes, muts):
    a, b = vals
    rows = a.indices.astype(_I64)
    if isinstance(b, RSP) or isinstance(b, CSR):
        b = to_dense(b, shapes[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.asarray(a.data / b[rows]).astype(odtypes[0], copy=False)
    return [RSP(np.ascontiguousarray(data), a.indices.copy())]


SPARSE["_scatter_elemwise_div"] = SparseImpl(_div_stypes, _div_ex)


def _scalar_op(name, fn):
    def kernel(xp, data, out, scalar, is_int=True):
        fn(xp, data, cast_scalar(scalar, out.dtype), out)
    kernel.__doc__ = ("%s(data, scalar): elementwise %s of a scalar, on the stored values only "
                      "of a sparse data (its storage type kept)" % (name, name.split("_")[2]))
    register(name, params=_SCALAR, infer=_scalar_rule, elemwise=True)(kernel)

    def ex(vals, attrs, shapes, oshapes, odtypes, muts):
        v = vals[0]
        d = np.empty(v.data.shape, dtype=odtypes[0])
        fn(np, v.data, cast_scalar(attrs["scalar"], d.dtype), d)
        if isinstance(v, RSP):
            return [RSP(d, v.indices.copy())]
        return [CSR(d, v.indices.copy(), v.indptr.copy())]
    SPARSE[name] = SparseImpl(lambda attrs, st: (st[0],) if st[0] != "default" else None, ex)


_scalar_op("_scatter_plus_scalar", BINARY["add"])
_scalar_op("_scatter_minus_scalar", BINARY["sub"])


def _grads():
    from ._grad import set_grads
    set_grads({
        "_scatter_elemwise_div": lambda F, attrs, ins, outs, og: [
            og[0] / ins[1], -og[0] * ins[0] / (ins[1] * ins[1])],
        "_scatter_plus_scalar": lambda F, attrs, ins, outs, og: [og[0]],
        "_scatter_minus_scalar": lambda F, attrs, ins, outs, og: [og[0]],
    })


_grads()
