"""``mx.nd.contrib``: MXNet's contrib operators (the ``_contrib_*`` registry
entries, without the prefix) and ``boolean_mask``, whose output shape is
read from an already-computed mask."""
from __future__ import annotations

import numpy as np

from ..base import MXNetError, OpError
from ..ops.dynamic import ValueShaped as _ValueShaped, dynamic_shape as _dynamic_shape
from ._namespace import populate_lazily as _populate_lazily
from ._control_flow import cond, foreach, while_loop  # noqa: F401

# the _contrib_* ops without the prefix, made on first use
_populate_lazily(globals(), None, {}, prefix="_contrib_", exclude=("_contrib_boolean_mask",))


@_dynamic_shape("_contrib_boolean_mask")
def boolean_mask(data, index, axis=0, out=None, name=None):
    """``mx.nd.contrib.boolean_mask(data, index, axis=0)``: the slices of data
    along axis where index is nonzero (MXNet 1.9.1 supports axis 0 only).

    The result's shape depends on index's values, so index must already be
    computed when this is called: the count is read through an inline engine
    read that never blocks. If index is still pending (an op running on an
    engine thread), this raises; wait first with ``index.wait_to_read()`` or,
    in a coroutine, ``await index.read()``. (A graph runs it through the
    op's entry in ``ops.dynamic.DYNAMIC``.)"""
    from ..engine import get as _get_engine
    from ..ops.registry import get
    from ._invoke import data_of, invoke
    from .ndarray import NDArray
    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise TypeError("boolean_mask(): data and index must be NDArrays")
    op = get("_contrib_boolean_mask")
    attrs = op.parse({"axis": axis})
    # the shape checks first, so a bad call raises before the mask is read
    try:
        op.infer(dict(attrs, _count=0), (data.shape, index.shape), (data._dtype, index._dtype))
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    eng = _get_engine()
    opr = eng.push(lambda: int(np.count_nonzero(data_of(index))), (index._st.var,), (),
                   "boolean_mask_count", 0, True)
    if not opr.done:
        if eng.tracing():
            # a graph being traced into a plan: its caller runs it op by op instead
            from ..engine.segments import TraceError
            raise TraceError("boolean_mask reads index's values")
        raise MXNetError(
            "_contrib_boolean_mask: the result's shape depends on the values of index, which "
            "is still being computed; aiond infers shapes without waiting, so call "
            "index.wait_to_read() (or `await index.read()` in a coroutine) first")
    if opr.failure is not None:
        raise opr.failure.error("boolean_mask()")
    attrs["_count"] = opr.result
    return invoke(op, [data, index], attrs, out)


@_dynamic_shape("_onnx_non_max_suppression")
def _onnx_non_max_suppression(boxes, scores, max_output_boxes_per_class=0, iou_threshold=0.0,
                              score_threshold=None, center_point_box=0, out=None, name=None,
                              **hidden):
    """ONNX's NonMaxSuppression on computed boxes (B, N, 4) and scores (B, C, N):
    int64 (selected, 3) rows of (batch, class, box) (``ops/onnx_nms.py``).
    ``mx.contrib.onnx`` imports the operator as this; a graph runs it here."""
    from ..ops.onnx_nms import select
    from .ndarray import NDArray, array
    if not isinstance(boxes, NDArray) or not isinstance(scores, NDArray):
        raise TypeError("NonMaxSuppression: boxes and scores must be NDArrays")
    from ..ops.registry import get
    op = get("_onnx_non_max_suppression")
    try:
        op.infer({}, (boxes.shape, scores.shape), (boxes._dtype, scores._dtype))
    except _ValueShaped:
        pass
    except OpError as e:
        raise type(e)("%s: %s" % (op.name, e)) from None
    from ..engine import get as _get_engine
    if _get_engine().tracing():
        from ..engine.segments import TraceError
        raise TraceError("NonMaxSuppression reads the values of boxes and scores")
    r = select(boxes.asnumpy(), scores.asnumpy(), max_output_boxes_per_class, iou_threshold,
               score_threshold, center_point_box)
    res = array(r, dtype=np.int64, ctx=boxes.context)
    if out is not None:
        out[:] = res
        return out
    return res


def isinf(data):
    """1 where ``data`` is +-inf, else 0 (in data's dtype)."""
    return data.abs() == float("inf")


def isfinite(data):
    """1 where ``data`` is neither NaN nor +-inf, else 0."""
    from ._functions import logical_and
    return logical_and(data.abs() != float("inf"), data == data)


def isnan(data):
    """1 where ``data`` is NaN, else 0."""
    return data != data


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes from the log-uniform (Zipfian) distribution
    over [0, range_max), with replacement; returns (sampled classes (int64),
    expected counts of ``true_classes``, expected counts of the sampled ones).
    P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1)."""
    import math
    from ..context import current_context
    from .random import uniform
    if ctx is None:
        ctx = current_context()
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_cls = true_classes.as_in_context(ctx).astype("float64")
    expected_count_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled_cls_fp64 = sampled_classes.astype("float64")
    expected_prob_sampled = ((sampled_cls_fp64 + 2.0) / (sampled_cls_fp64 + 1.0)).log() / log_range
    return sampled_classes, expected_count_true, expected_prob_sampled * num_sampled


def _flatten_list(nested_list):
    return [item for sublist in nested_list for item in sublist]


def multi_lamb_update(weights, grads, mean, var, step_count,
                      lrs, wds, out=None, num_tensors=0, **kwargs):
    """LAMB updates of several tensors in one op (``_multi_lamb_update``): lists of
    weights, grads, mean and var (updated in place), per-tensor ``step_count``,
    ``lrs`` and ``wds``; ``out`` receives the updated weights."""
    from . import _internal
    if not num_tensors:
        num_tensors = len(weights)
    temp_list = _flatten_list(zip(weights, grads, mean, var))
    return _internal._multi_lamb_update(*temp_list, out=out, num_tensors=num_tensors,
                                        step_count=step_count, learning_rates=lrs, wds=wds,
                                        **kwargs)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count,
                         lrs, wds, out=None, num_tensors=0, **kwargs):
    """``multi_lamb_update`` with float32 master copies ``weights32`` of float16
    weights (``_multi_mp_lamb_update``)."""
    from . import _internal
    if not num_tensors:
        num_tensors = len(weights)
    temp_list = _flatten_list(zip(weights, grads, mean, var, weights32))
    return _internal._multi_mp_lamb_update(*temp_list, out=out, num_tensors=num_tensors,
                                           step_count=step_count, learning_rates=lrs,
                                           wds=wds, **kwargs)


from .contrib_adamw import (adamw_update, mp_adamw_update, multi_adamw_update,  # noqa: E402,F401
                            multi_mp_adamw_update)
