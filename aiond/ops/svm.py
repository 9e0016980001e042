"""SVMOutput: MXNet's support-vector-machine loss layer.

Forward is the identity on ``data`` (n, ...) flattened to (n, classes);
backward ignores the head gradient and gives the hinge-loss gradient for
``label`` (n,) (class indices): with margin m and coefficient c, for the
label's class k and every other class j,

    L1 (use_linear=True):  dk = -c * (m > x_k)        dj = c * (m > -x_j)
    L2 (default):          dk = -2c * max(m - x_k, 0) dj = 2c * max(m + x_j, 0)
"""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._rules import fmt, same_dtype
from ._grad import set_grads
from .registry import Param, p_bool, p_float, register


def _svm_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise ShapeError("SVMOutput takes data and label, got %d input(s)" % len(shapes))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) < 2 or len(lab) != 1 or lab[0] != d[0]:
        raise ShapeError("label has shape %s but data has shape %s; the label needs shape "
                         "(%d,)" % (fmt(lab), fmt(d), d[0] if d else 0))
    return (d,), (same_dtype(dtypes[:1]),)


@register("SVMOutput", inputs=("data", "label"), params=[
    Param("margin", p_float, 1.0, "The loss function penalizes outputs that lie outside this "
          "margin. Default margin is 1."),
    Param("regularization_coefficient", p_float, 1.0, "Regularization parameter for the SVM. "
          "This balances the tradeoff between coefficient size and error."),
    Param("use_linear", p_bool, False, "Whether to use L1-SVM objective. L2-SVM objective is "
          "used by default.")], infer=_svm_rule)
def svm_output(xp, data, label, out, margin=1.0, regularization_coefficient=1.0,
               use_linear=False):
    """SVMOutput(data, label, margin=1, regularization_coefficient=1, use_linear=False):
    identity forward; the gradient is the L1 or L2 hinge loss's for the labels."""
    xp.copyto(out, data)


@register("_backward_SVMOutput", inputs=("data", "label"), params=[
    Param("margin", p_float, 1.0), Param("regularization_coefficient", p_float, 1.0),
    Param("use_linear", p_bool, False)], infer=lambda a, s, d: ((tuple(s[0]),), (d[0],)))
def _svm_backward(xp, data, label, out, margin=1.0, regularization_coefficient=1.0,
                  use_linear=False):
    n = data.shape[0]
    x = data.reshape(n, -1)
    g = out.reshape(n, -1)
    k = label.reshape(-1).astype(np.int64)
    own = np.zeros(x.shape, dtype=bool)
    valid = (k >= 0) & (k < x.shape[1])
    own[np.nonzero(valid)[0], k[valid]] = True
    c = regularization_coefficient
    if use_linear:
        res = np.where(own, -(margin > x).astype(x.dtype), (margin > -x).astype(x.dtype)) * c
    else:
        res = np.where(own, -2 * np.maximum(margin - x, 0), 2 * np.maximum(margin + x, 0)) * c
    g[...] = res


set_grads({"SVMOutput": lambda F, at, ins, outs, og: [
    F._internal._backward_SVMOutput(ins[0], ins[1], margin=at["margin"],
                                    regularization_coefficient=at["regularization_coefficient"],
                                    use_linear=at["use_linear"]), None]})
