"""``npx`` ops with no legacy counterpart, named as MXNet 1.9.1 names them:
``_npx_constraint_check`` (a runtime assertion inside a graph; ``_npx_nonzero``
is in ``np_sorting``)."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import zeros_grad
from .registry import Param, register

_BOOL = np.dtype(np.bool_)


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
