"""MXNet 1.9.1's int8 BatchNorm and Embedding (src/operator/quantization),
beside the int8 family in ``quantized``:

* ``_contrib_quantized_batch_norm``: inference BatchNorm of int8/uint8 data
  with the moving statistics folded into one per-channel scale and shift,
  giving int8 over the calibrated output range (MXNet's oneDNN kernel; a
  calibrated range is required, as there);
* ``_contrib_quantized_embedding``: rows of an int8 weight at the (clipped)
  indices; the output range is the weight's.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .embedding import _EMB_PARAMS, _clip_index
from .norm import _BN_PARAMS
from .registry import _REGISTRY, Op, host_kernels, register

_F32 = np.dtype(np.float32)
_I8, _U8 = np.dtype(np.int8), np.dtype(np.uint8)
_INT8_RANGE, _UINT8_RANGE = 127.5, 255.5     # MXNet's kInt8Range, kUint8Range
_OUT3 = ("output", "min_output", "max_output")


def _check_range_shapes(shapes, start, names):
    for name, s in zip(names, shapes[start:]):
        if tuple(s) != (1,):
            raise ShapeError("%s must have shape (1,), got %s" % (name, fmt(s)))


# -------------------------------------------------------------- batch norm


def _bn_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    ax = attrs["axis"]
    if not -len(d) <= ax < len(d):
        raise OpError("Channel axis out of range: %d for data of shape %s" % (ax, fmt(d)))
    c = d[ax % len(d)]
    for name, s in zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:5]):
        if tuple(s) != (c,):
            raise ShapeError("%s must have shape (%d,) (the channels of data %s), got %s"
                             % (name, c, fmt(d), fmt(s)))
    _check_range_shapes(shapes, 5, ("min_data", "max_data"))
    if dtypes[0] not in (_I8, _U8):
        raise OpError("quantized_batch_norm only supports int8/uint8 data, got %s"
                      % dtypes[0].name)
    _need_calib(attrs.get("min_calib_range"), attrs.get("max_calib_range"))
    return (d, (1,), (1,)), (_I8, _F32, _F32)


def _need_calib(lo, hi):
    if lo is None or hi is None:
        raise OpError("quantized_batch_norm needs min_calib_range and max_calib_range (a "
                      "calibrated output range); MXNet has no uncalibrated int8 BatchNorm")


@register("_contrib_quantized_batch_norm",
          inputs=("data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"),
          params=_BN_PARAMS, infer=_bn_rule, num_outputs=3, output_names=_OUT3,
          aux=("moving_mean", "moving_var"))
def _contrib_quantized_batch_norm(xp, data, gamma, beta, moving_mean, moving_var, min_data,
                                  max_data, out, eps=1e-3, axis=1, min_calib_range=None,
                                  max_calib_range=None, **_unused):
    """quantized_batch_norm(data, gamma, beta, moving_mean, moving_var, min_data,
    max_data, eps=1e-3, axis=1, min_calib_range, max_calib_range, ...): the
    inference BatchNorm of quantized data as int8 over the calibrated range.
    gamma is used as given (MXNet's int8 kernel ignores fix_gamma)."""
    _need_calib(min_calib_range, max_calib_range)
    x = data.astype(np.float32)
    if data.dtype == _U8:
        # oneDNN brings uint8 data to int8 first (rounded, saturated)
        x = np.clip(np.rint(x * np.float32(_INT8_RANGE / _UINT8_RANGE)), -128, 127)
    d_abs = max(abs(float(min_data[0])), abs(float(max_data[0])))
    o_abs = max(abs(float(min_calib_range)), abs(float(max_calib_range)))
    if o_abs == 0:
        raise OpError("quantized_batch_norm: the calibrated range [%g, %g] is empty"
                      % (min_calib_range, max_calib_range))
    invstd = np.float32(1.0) / np.sqrt(moving_var.astype(np.float32) + np.float32(eps))
    g = gamma.astype(np.float32)
    w = g * invstd * np.float32(d_abs / o_abs)
    b = (beta.astype(np.float32) - moving_mean.astype(np.float32) * g * invstd) * \
        np.float32(_INT8_RANGE / o_abs)
    shape = [1] * data.ndim
    shape[axis % data.ndim] = -1
    # the folded statistics run as a BatchNorm with mean 0 and variance 1,
    # whose eps still applies (oneDNN's global-stats normalization)
    norm = np.float32(1.0) / np.sqrt(np.float32(1.0) + np.float32(eps))
    y = x * norm * w.reshape(shape) + b.reshape(shape)
    out[0][...] = np.clip(np.rint(y), -128, 127).astype(np.int8)
    out[1][...] = min_calib_range
    out[2][...] = max_calib_range


# --------------------------------------------------------------- embedding


def _emb_rule(attrs, shapes, dtypes):
    want = (attrs["input_dim"], attrs["output_dim"])
    if tuple(shapes[1]) != want:
        raise ShapeError("weight has shape %s but expected %s (input_dim, output_dim)"
                         % (fmt(shapes[1]), fmt(want)))
    _check_range_shapes(shapes, 2, ("min_weight", "max_weight"))
    if dtypes[1] != _I8:
        raise OpError("quantized_embedding needs an int8 weight, got %s" % dtypes[1].name)
    return (tuple(shapes[0]) + (attrs["output_dim"],), (1,), (1,)), (_I8, _F32, _F32)


@register("_contrib_quantized_embedding", inputs=("data", "weight", "min_weight", "max_weight"),
          params=_EMB_PARAMS, infer=_emb_rule, num_outputs=3, output_names=_OUT3)
def _contrib_quantized_embedding(xp, data, weight, min_weight, max_weight, out, input_dim,
                                 output_dim, dtype=None, sparse_grad=False):
    """quantized_embedding(data, weight, min_weight, max_weight, input_dim,
    output_dim): rows of the int8 weight at the indices in data (clipped to
    [0, input_dim - 1]); the output range is the weight's."""
    out[0][...] = xp.take(weight, _clip_index(xp, data, input_dim), axis=0).reshape(
        out[0].shape)
    out[1][...] = min_weight
    out[2][...] = max_weight


class _BNOp(Op):
    """Graph inference gives gamma, beta and the moving statistics the
    channel count of data, and the ranges (1,)."""
    __slots__ = ()

    def fill_inputs(self, params, in_shapes):
        d = in_shapes[0]
        if d is None or len(d) == 0:
            return [None] * 5 + [(1,), (1,)]
        c = d[params.get("axis", 1) % len(d)]
        return [None] + ([(c,)] * 4 if c >= 0 else [None] * 4) + [(1,), (1,)]


class _EmbOp(Op):
    """Graph inference gives weight (input_dim, output_dim) and the ranges (1,)."""
    __slots__ = ()

    def fill_inputs(self, params, in_shapes):
        return [None, (params["input_dim"], params["output_dim"]), (1,), (1,)]


_REGISTRY["_contrib_quantized_batch_norm"].__class__ = _BNOp
_REGISTRY["_contrib_quantized_embedding"].__class__ = _EmbOp

_NAMES = ("_contrib_quantized_batch_norm", "_contrib_quantized_embedding")
set_grads({n: (lambda F, at, ins, outs, og: [None] * len(ins)) for n in _NAMES})
host_kernels(*_NAMES)
