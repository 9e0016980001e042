"""``khatri_rao`` (src/operator/contrib/krprod.cc): the column-wise
Khatri-Rao product of matrices with one number of columns.

Row ``(i_1, ..., i_n)`` of the result (the first matrix's index most
significant) is the elementwise product of row ``i_k`` of each matrix.
MXNet registers no gradient for it; aiond gives the exact one (the product
of the other factors, summed over their rows), so a graph that uses it can
be trained."""
from __future__ import annotations

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt, same_dtype
from .registry import Param, p_int, register


def _krprod_rule(attrs, shapes, dtypes):
    n = len(shapes)
    if n == 0:
        raise OpError("needs at least one input matrix")
    if attrs["num_args"] and attrs["num_args"] != n:
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], n))
    rows = 1
    for i, s in enumerate(shapes):
        if len(s) != 2:
            raise ShapeError("input %d has shape %s; khatri_rao takes matrices (2-d arrays)"
                             % (i, fmt(s)))
        if s[1] != shapes[0][1]:
            raise ShapeError("input %d has %d columns but input 0 has %d; the matrices must "
                             "have the same number of columns" % (i, s[1], shapes[0][1]))
        rows *= s[0]
    return ((rows, shapes[0][1]),), (same_dtype(dtypes),)


@register("khatri_rao", inputs=("*args",), variadic=True,
          params=[Param("num_args", p_int, 0, "Number of input matrices (filled in from the "
                        "inputs given).")], infer=_krprod_rule)
def khatri_rao(xp, *args, out, num_args=0):
    """khatri_rao(*args): the column-wise Khatri-Rao product of matrices
    A_1 (M_1, N), ..., A_n (M_n, N): an (M_1*...*M_n, N) matrix whose column k
    is the outer product of the k-th columns, flattened (A_1's row index varies
    slowest)."""
    acc = args[0]
    for a in args[1:]:
        acc = (acc[:, None, :] * a[None, :, :]).reshape(-1, a.shape[1])
    xp.copyto(out, acc, casting="unsafe")


def _krprod_grad(F, attrs, ins, outs, og):
    n = len(ins)
    cols = ins[0].shape[1]
    # the head gradient as an n+1-d tensor: one axis per factor's rows, then columns
    g = og[0].reshape(tuple(x.shape[0] for x in ins) + (cols,))
    grads = []
    for i in range(n):
        t = g
        for j in range(n):
            if j == i:
                continue
            shape = [1] * (n + 1)
            shape[j], shape[n] = ins[j].shape[0], cols
            t = F.broadcast_mul(t, ins[j].reshape(tuple(shape)))
        axes = tuple(j for j in range(n) if j != i)
        grads.append(F.sum(t, axis=axes) if axes else t)
    return grads


set_grads({"khatri_rao": _krprod_grad})
