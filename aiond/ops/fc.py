"""FullyConnected (MXNet 1.9.1): ``data @ weight.T + bias``, with a row
splitter so large products run as parallel row ranges."""
from __future__ import annotations

from ..base import ShapeError
from ._grad import set_grads, takes_need
from ._nn_util import _in_range, _num_inputs, _prod
from ._rules import fmt, same_dtype
from .matrix import MATMUL_SPLIT_MACS
from .registry import Param, p_bool, p_int, register
from .registry import optional as _optional


def _fc_cost(attrs, shapes, oshapes):
    n = 1
    for d in oshapes[0]:
        n *= d
    return n * (shapes[1][1] if len(shapes) > 1 and len(shapes[1]) > 1 else 1) // 8


def _fc_rule(attrs, shapes, dtypes):
    nh = attrs["num_hidden"]
    if attrs["no_bias"]:
        _num_inputs(shapes, ("data", "weight"), " when no_bias=True")
    else:
        _num_inputs(shapes, ("data", "weight", "bias"), " (pass no_bias=True to leave out bias)")
    d = tuple(shapes[0])
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    k = d[-1] if not attrs["flatten"] else _prod(d[1:])
    if tuple(shapes[1]) != (nh, k):
        raise ShapeError("weight has shape %s but expected %s: (num_hidden=%d, %d input feature%s "
                         "of data %s%s)" % (fmt(shapes[1]), fmt((nh, k)), nh, k,
                                            "" if k == 1 else "s", fmt(d),
                                            "" if attrs["flatten"] else ", flatten=False"))
    if not attrs["no_bias"] and tuple(shapes[2]) not in ((nh,), (nh, 1)):
        raise ShapeError("bias has shape %s but expected (%d,) (num_hidden=%d)"
                         % (fmt(shapes[2]), nh, nh))
    dt = same_dtype(dtypes)
    out = d[:-1] + (nh,) if not attrs["flatten"] else (d[0], nh)
    return (out,), (dt,)


def _fc_rows(xp, ins, out, attrs):
    """FullyConnected by ranges of rows of the flattened data."""
    data, weight = ins[0], ins[1]
    nh = attrs["num_hidden"]
    x2 = data.reshape(-1, weight.shape[1])
    if x2.shape[0] * x2.shape[1] * nh < MATMUL_SPLIT_MACS:
        return 0, None
    o2 = out.reshape(-1, nh)
    wt = weight.T
    bias = ins[2].reshape(-1) if len(ins) > 2 else None

    def run(lo, hi):
        xp.matmul(x2[lo:hi], wt, out=o2[lo:hi])
        if bias is not None:
            o2[lo:hi] += bias
    return o2.shape[0], run


@register("FullyConnected", inputs=("data", "weight", "bias"), params=[
    Param("num_hidden", p_int, doc="Number of hidden nodes of the output."),
    Param("no_bias", p_bool, False, "Whether to disable bias parameter."),
    Param("flatten", p_bool, True, "Whether to collapse all but the first axis of the input.")],
    infer=_fc_rule, inline=_fc_cost, rows=_fc_rows,
    attr_check=_in_range(("num_hidden", 1, None)))
@_optional("bias")
def fully_connected(xp, data, weight, *bias, out, num_hidden, no_bias=False, flatten=True):
    """FullyConnected(data, weight, bias, num_hidden, no_bias=False, flatten=True):
    ``data @ weight.T + bias``; flatten=True collapses all but the first axis
    of data, flatten=False applies the layer to the last axis."""
    o2 = out.reshape(-1, num_hidden)
    xp.matmul(data.reshape(-1, weight.shape[1]), weight.T, out=o2)
    if bias:
        o2 += bias[0].reshape(-1)


@takes_need
def _fc_grad(F, attrs, ins, outs, og, need=(True, True, True)):
    x, w = ins[0], ins[1]
    nh = attrs["num_hidden"]
    g2 = og[0].reshape((-1, nh))
    x2 = x.reshape((-1, w.shape[1]))
    res = [F.dot(g2, w).reshape(x.shape) if need[0] else None,
           F.dot(g2, x2, transpose_a=True) if need[1] else None]
    if len(ins) == 3:
        res.append(F.sum(g2, axis=0).reshape(ins[2].shape) if need[2] else None)
    return res


set_grads({"FullyConnected": _fc_grad})
