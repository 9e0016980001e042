"""``npx`` ops with no legacy counterpart, named as MXNet 1.9.1 names them:
``_npx_constraint_check`` (a runtime assertion inside a graph) and
``_npx_nonzero`` (the indices of nonzero elements, a value-dependent shape)."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import zeros_grad
from .dynamic import dynamic_shape
from .registry import Param, register

_BOOL = np.dtype(np.bool_)
_I64 = np.dtype(np.int64)


def _constraint_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("_npx_constraint_check takes one boolean input, got %d" % len(shapes))
    if dtypes[0] != _BOOL:
        raise OpError("_npx_constraint_check: the input must be a boolean array, got %s"
                      % dtypes[0].name)
    return ((),), (_BOOL,)


@register("_npx_constraint_check", inputs=("input",),
          params=[Param("msg", str, "Constraint violated.",
                        "the message of the ValueError raised when a value is False")],
          infer=_constraint_rule, grad=zeros_grad)
def _npx_constraint_check(xp, data, out, msg="Constraint violated."):
    """_npx_constraint_check(input, msg): True (shape ()) when every element of the
    boolean input is True; otherwise fails with ValueError(msg), raised when the
    result (or anything computed from it) is read."""
    if not bool(xp.all(data)):
        raise ValueError(msg)
    out[...] = True


# ------------------------------------------------------------------ nonzero
def _nonzero_rule(attrs, shapes, dtypes):
    n = attrs.get("_count")
    if n is None:
        raise OpError("_npx_nonzero: the result's shape depends on the input's values; call "
                      "it as npx.nonzero(a), which reads a computed input")
    return ((n, len(shapes[0])),), (_I64,)


@register("_npx_nonzero", inputs=("x",), infer=_nonzero_rule, grad=zeros_grad)
def _npx_nonzero(xp, x, out, _count=None):
    """_npx_nonzero(x): the indices of x's nonzero elements, one row per element
    (shape (N, x.ndim), int64, row-major order)."""
    if out.size:
        out[...] = xp.stack(xp.nonzero(x), axis=-1)


@dynamic_shape("_npx_nonzero")
def nonzero(x, out=None, name=None):
    """Imperative ``_npx_nonzero``: counts x's nonzero elements (an inline engine
    read when x is computed; otherwise it waits for x, as MXNet's nonzero does),
    then pushes the op with that count as its shape."""
    from ..engine import get as _get_engine
    from ..ndarray._invoke import data_of, invoke
    from ..ndarray.ndarray import NDArray
    from .registry import get
    if not isinstance(x, NDArray):
        raise TypeError("nonzero(): x must be an array, got %s" % type(x).__name__)
    eng = _get_engine()
    opr = eng.push(lambda: int(np.count_nonzero(data_of(x))), (x._st.var,), (),
                   "nonzero_count", 0, True)
    if opr.done:
        if opr.failure is not None:
            raise opr.failure.error("nonzero()")
        count = opr.result
    elif eng.tracing():
        from ..engine.segments import TraceError
        raise TraceError("nonzero reads x's values")
    else:
        # pending (or gathered in a segment): MXNet's nonzero waits for x too
        count = int(np.count_nonzero(x.asnumpy()))
    return invoke(get("_npx_nonzero"), [x], {"_count": count}, out)

