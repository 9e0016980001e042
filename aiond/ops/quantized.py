"""MXNet's int8 inference ops (``src/operator/quantization``), which
``mx.contrib.quantization`` puts in a graph:

* ``_contrib_quantize_v2``: float32 -> int8 (symmetric, over max|x|) or uint8
  (over [0, max]); the range comes from calibration or from the data;
* ``_contrib_quantized_fully_connected`` / ``_contrib_quantized_conv``: int8
  data and weights, exact int32 accumulation; the int32 result stands for
  ``value * (R_data/127) * (R_weight/127)`` and its range is that unit times
  the int32 limits (MXNet's QuantizationRangeForS8S8Multiplication);
* ``_contrib_requantize``: int32 -> int8 over the calibrated range, or over
  the range the data actually spans;
* ``_contrib_quantized_act`` (relu), ``_contrib_quantized_pooling``,
  ``_contrib_quantized_flatten``: int8 in, int8 out, range passed through;
* ``_contrib_calibrate_entropy``: the threshold minimising the KL divergence
  between a histogram and its 255-bin quantization (entropy calibration).

Every op returns ``(out, min, max)``, the ranges being (1,) float32 arrays.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import (Op, Param, _REGISTRY, host_kernels, p_bool, p_int, p_shape, p_str,
                       register)

_F32 = np.dtype(np.float32)
_I8, _U8, _I32 = np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)
_INT32_MAX = float(np.iinfo(np.int32).max)
_INT32_MIN = float(np.iinfo(np.int32).min)


def _p_opt_float(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return float(v)


def _level(dtype, lo, hi):
    """Float value of one quantized step of ``dtype`` data over [lo, hi]."""
    r = max(abs(float(lo)), abs(float(hi)))
    return r / (255.0 if np.dtype(dtype) == _U8 else 127.0)


def _ranges(shapes, start, names):
    for name, s in zip(names, shapes[start:]):
        if tuple(s) != (1,):
            raise ShapeError("%s must have shape (1,), got %s" % (name, fmt(s)))


def _quantize_into(xp, x, out_dtype, real, out):
    if out_dtype == _U8:
        scale = np.float32(255.0 / real) if real > 0 else np.float32(0)
        q = xp.clip(xp.trunc(x * scale + np.float32(0.5)), 0, 255)
        out[0][...] = q.astype(np.uint8)
        out[1][...] = 0.0
    else:
        scale = np.float32(127.0 / real) if real > 0 else np.float32(0)
        q = xp.sign(x) * xp.minimum(xp.abs(x) * scale + np.float32(0.5), np.float32(127.0))
        out[0][...] = xp.trunc(q).astype(np.int8)
        out[1][...] = -real
    out[2][...] = real


# ------------------------------------------------------------- quantize_v2


def _v2_out_type(attrs):
    t, lo = attrs["out_type"], attrs["min_calib_range"]
    if t == "auto":
        return _U8 if (lo is not None and attrs["max_calib_range"] is not None
                       and lo >= 0) else _I8
    return np.dtype(t)


def _quantize_v2_rule(attrs, shapes, dtypes):
    if dtypes[0] not in (_F32, _I8, _U8):
        raise OpError("data must be float32 (or already int8/uint8), got %s" % dtypes[0].name)
    t = dtypes[0] if dtypes[0] != _F32 else _v2_out_type(attrs)
    return (tuple(shapes[0]), (1,), (1,)), (t, _F32, _F32)


_CALIB = [Param("min_calib_range", _p_opt_float, None,
                "The minimum scalar value of the calibrated range (None: from the data)."),
          Param("max_calib_range", _p_opt_float, None,
                "The maximum scalar value of the calibrated range (None: from the data).")]


@register("_contrib_quantize_v2", params=[
    Param("out_type", p_str, "int8", "Output data type.", choices=("auto", "int8", "uint8"))]
    + _CALIB, infer=_quantize_v2_rule, num_outputs=3,
    output_names=("output", "min_output", "max_output"))
def _contrib_quantize_v2(xp, data, out, out_type="int8", min_calib_range=None,
                         max_calib_range=None):
    """quantize_v2(data, out_type='int8', min_calib_range=None, max_calib_range=None):
    (quantized data, min, max). int8 is symmetric over R = max(|min|, |max|);
    uint8 covers [0, R]. Without a calibrated range R comes from the data."""
    if data.dtype != _F32:      # already quantized: passed through with its full range
        out[0][...] = data
        out[1][...] = float(np.iinfo(data.dtype).min)
        out[2][...] = float(np.iinfo(data.dtype).max)
        return
    if min_calib_range is not None and max_calib_range is not None:
        lo, hi = min_calib_range, max_calib_range
    else:
        lo, hi = (float(data.min()), float(data.max())) if data.size else (0.0, 0.0)
    t = _v2_out_type({"out_type": out_type, "min_calib_range": min_calib_range,
                      "max_calib_range": max_calib_range})
    _quantize_into(xp, data.astype(np.float32), t, np.float32(max(abs(lo), abs(hi))), out)


# ------------------------------------------------------------- requantize


def _requantize_rule(attrs, shapes, dtypes):
    _ranges(shapes, 1, ("min_range", "max_range"))
    if dtypes[0] != _I32:
        raise OpError("data must be int32, got %s" % dtypes[0].name)
    return (tuple(shapes[0]), (1,), (1,)), (_v2_out_type(attrs), _F32, _F32)


@register("_contrib_requantize", inputs=("data", "min_range", "max_range"), params=[
    Param("out_type", p_str, "int8", "Output data type.", choices=("auto", "int8", "uint8"))]
    + _CALIB, infer=_requantize_rule, num_outputs=3,
    output_names=("output", "min_output", "max_output"))
def _contrib_requantize(xp, data, min_range, max_range, out, out_type="int8",
                        min_calib_range=None, max_calib_range=None):
    """requantize(data, min_range, max_range, out_type='int8', min_calib_range=None,
    max_calib_range=None): int32 data whose int32 limits stand for
    [min_range, max_range], as int8 over the calibrated range (or the range
    the values span)."""
    unit = max(abs(float(min_range[0])), abs(float(max_range[0]))) / _INT32_MAX
    real = data.astype(np.float64) * unit
    if min_calib_range is not None and max_calib_range is not None:
        lo, hi = min_calib_range, max_calib_range
    else:
        lo, hi = (float(real.min()), float(real.max())) if real.size else (0.0, 0.0)
    t = _v2_out_type({"out_type": out_type, "min_calib_range": min_calib_range,
                      "max_calib_range": max_calib_range})
    _quantize_into(xp, real.astype(np.float32), t, np.float32(max(abs(lo), abs(hi))), out)


# ------------------------------------------------- fully connected / conv


def _int_inputs(names, no_bias):
    base = [n for n in names if not (no_bias and n == "bias")]
    rng = []
    for n in base:
        rng += ["min_" + n, "max_" + n]
    return base + rng


def _split(inputs, no_bias):
    k = 2 if no_bias else 3
    if len(inputs) != 3 * k:
        raise OpError("expected %d inputs (%s), got %d"
                      % (3 * k, ", ".join(_int_inputs(("data", "weight", "bias"), no_bias)),
                         len(inputs)))
    arrays = inputs[:k]
    ranges = [(inputs[k + 2 * i], inputs[k + 2 * i + 1]) for i in range(k)]
    return arrays, ranges


def _check_int8(dtypes, names):
    for d, n in zip(dtypes, names):
        if d not in (_I8, _U8):
            raise OpError("%s must be int8 (or uint8 data), got %s" % (n, d.name))


def _out_range(dtypes, shapes, no_bias):
    return ((1,), (1,)), (_F32, _F32)


def _int_result(xp, acc, data_dt, wt_dt, ranges, bias, bias_range, out, bias_axis):
    """Round the exact float64 sums to int32, add the rescaled int8 bias, and
    write the range the int32 values stand for."""
    unit = _level(data_dt, *[float(r[0]) for r in ranges[0]]) * \
        _level(wt_dt, *[float(r[0]) for r in ranges[1]])
    if bias is not None and unit > 0:
        b_unit = _level(bias.dtype, float(bias_range[0][0]), float(bias_range[1][0]))
        shape = [1] * acc.ndim
        shape[bias_axis] = -1
        acc = acc + xp.rint(bias.astype(np.float64) * (b_unit / unit)).reshape(shape)
    out[0][...] = xp.clip(xp.rint(acc), _INT32_MIN, _INT32_MAX).astype(np.int32)
    out[1][...] = unit * _INT32_MIN
    out[2][...] = unit * _INT32_MAX


def _qfc_rule(attrs, shapes, dtypes):
    nb = attrs["no_bias"]
    (d, w, *rest), _ = _split(list(shapes), nb)
    _ranges(shapes, 2 if nb else 3, _int_inputs(("data", "weight", "bias"), nb)[2 if nb else 3:])
    _check_int8(dtypes[:2], ("data", "weight"))
    n = attrs["num_hidden"]
    k = int(np.prod(d[1:])) if attrs["flatten"] else d[-1]
    if tuple(w) != (n, k):
        raise ShapeError("weight has shape %s but data %s with num_hidden=%d needs %s"
                         % (fmt(w), fmt(d), n, fmt((n, k))))
    oshape = (d[0], n) if attrs["flatten"] else tuple(d[:-1]) + (n,)
    return (oshape, (1,), (1,)), (_I32, _F32, _F32)


@register("_contrib_quantized_fully_connected", inputs=("*data",), variadic=True, params=[
    Param("num_hidden", p_int, None, "Number of hidden nodes of the output."),
    Param("no_bias", p_bool, False, "Whether to disable bias parameter."),
    Param("flatten", p_bool, True, "Whether to collapse all but the first axis of the input "
          "data tensor.")], infer=_qfc_rule, num_outputs=3,
    output_names=("output", "min_output", "max_output"), inline=False)
def _contrib_quantized_fully_connected(xp, *inputs, out, num_hidden, no_bias=False, flatten=True):
    """quantized_fully_connected(data, weight, [bias], min_data, max_data, min_weight,
    max_weight, [min_bias, max_bias], num_hidden, no_bias=False, flatten=True):
    int8 x int8 -> int32 fully connected layer, with its output range."""
    arrays, ranges = _split(inputs, no_bias)
    data, weight = arrays[0], arrays[1]
    x = data.reshape(data.shape[0], -1) if flatten else data
    acc = x.astype(np.float64) @ weight.astype(np.float64).T      # exact for int8 sums
    bias = None if no_bias else arrays[2]
    _int_result(xp, acc, data.dtype, weight.dtype, ranges, bias,
                None if no_bias else ranges[2], out, acc.ndim - 1)


def _conv_geom():
    from . import conv as _conv
    return _conv


def _qconv_rule(attrs, shapes, dtypes):
    nb = attrs["no_bias"]
    arrays, _ = _split(list(shapes), nb)
    _check_int8(dtypes[:2], ("data", "weight"))
    conv = _conv_geom()
    (oshape,), _ = conv._conv_rule(attrs, [tuple(s) for s in arrays],
                                   [_F32] * len(arrays))
    return (oshape, (1,), (1,)), (_I32, _F32, _F32)


def _conv_params():
    return _conv_geom()._conv_params(1024, False)


@register("_contrib_quantized_conv", inputs=("*data",), variadic=True, params=_conv_params(),
          infer=_qconv_rule, attr_check=lambda op, a: _conv_geom()._conv_check(op, a),
          num_outputs=3, output_names=("output", "min_output", "max_output"), inline=False)
def _contrib_quantized_conv(xp, *inputs, out, kernel, stride, dilate, pad, num_filter,
                            num_group=1, no_bias=False, workspace=1024, **_ignored):
    """quantized_conv(data, weight, [bias], min_data, max_data, min_weight, max_weight,
    [min_bias, max_bias], kernel, num_filter, ...): int8 x int8 -> int32
    convolution (NCHW), with its output range."""
    arrays, ranges = _split(inputs, no_bias)
    data, weight = arrays[0], arrays[1]
    conv = _conv_geom()
    n, f = data.shape[0], weight.shape[0]
    ospatial = conv._conv_out({"kernel": kernel, "stride": stride, "dilate": dilate,
                               "pad": pad}, data.shape)
    acc = xp.empty((n, f) + tuple(ospatial), dtype=np.float64)
    conv._conv_fwd(xp, data.astype(np.float64), weight.astype(np.float64), acc, kernel,
                   stride, dilate, pad, num_group, workspace)
    bias = None if no_bias else arrays[2]
    _int_result(xp, acc, data.dtype, weight.dtype, ranges, bias,
                None if no_bias else ranges[2], out, 1)


class _IntMatmulOp(Op):
    """quantized FC/conv: inputs named by MXNet's FListInputNames, which
    depend on no_bias (data, weight, [bias], then a min/max pair for each)."""
    __slots__ = ()

    def input_names_for(self, params):
        return _int_inputs(("data", "weight", "bias"), params.get("no_bias", False))

    def fill_inputs(self, params, in_shapes):
        """Shapes of weight, bias and the (1,) ranges from data's shape."""
        d = in_shapes[0]
        if d is None or any(x < 0 for x in d):
            return None
        nb = params.get("no_bias", False)
        if self.name == "_contrib_quantized_fully_connected":
            n = params["num_hidden"]
            k = int(np.prod(d[1:])) if params.get("flatten", True) else d[-1]
            w, b = (n, k), (n,)
        else:
            f = params["num_filter"]
            w, b = (f, d[1] // params.get("num_group", 1)) + tuple(params["kernel"]), (f,)
        arrays = [tuple(d), w] + ([] if nb else [b])
        return arrays + [(1,)] * (2 * len(arrays))


for _n in ("_contrib_quantized_fully_connected", "_contrib_quantized_conv"):
    _REGISTRY[_n].__class__ = _IntMatmulOp


# --------------------------------------------------- int8 pass-through ops


def _passthrough_rule(shape_of):
    def rule(attrs, shapes, dtypes):
        _ranges(shapes, 1, ("min_data", "max_data"))
        if dtypes[0] not in (_I8, _U8):
            raise OpError("data must be int8 or uint8, got %s" % dtypes[0].name)
        return (shape_of(attrs, shapes[0]), (1,), (1,)), (dtypes[0], _F32, _F32)
    return rule


def _copy_range(min_data, max_data, out):
    out[1][...] = min_data
    out[2][...] = max_data


@register("_contrib_quantized_act", inputs=("data", "min_data", "max_data"), params=[
    Param("act_type", p_str, None, "Activation function to be applied.",
          choices=("relu",))], infer=_passthrough_rule(lambda a, s: tuple(s)), num_outputs=3,
    output_names=("output", "min_output", "max_output"))
def _contrib_quantized_act(xp, data, min_data, max_data, out, act_type="relu"):
    """quantized_act(data, min_data, max_data, act_type='relu'): relu of int8 data
    (the range is unchanged)."""
    out[0][...] = xp.maximum(data, 0).astype(data.dtype)
    _copy_range(min_data, max_data, out)


def _flat_shape(attrs, s):
    # Flatten's shape: (d0, d1*...*dn); a 1-D array becomes (d0, 1), as in MXNet
    return (s[0], int(np.prod(s[1:]))) if len(s) >= 1 else tuple(s)


@register("_contrib_quantized_flatten", inputs=("data", "min_data", "max_data"),
          infer=_passthrough_rule(_flat_shape), num_outputs=3,
          output_names=("output", "min_output", "max_output"))
def _contrib_quantized_flatten(xp, data, min_data, max_data, out):
    """quantized_flatten(data, min_data, max_data): Flatten of int8 data."""
    out[0][...] = data.reshape(out[0].shape)
    _copy_range(min_data, max_data, out)


def _pool_shape(attrs, s):
    conv = _conv_geom()
    (o,), _ = conv._pool_rule(attrs, [tuple(s)], [_F32])
    return o


def _pool_params():
    return _conv_geom()._POOL_PARAMS


@register("_contrib_quantized_pooling", inputs=("data", "min_data", "max_data"),
          params=_pool_params(), infer=_passthrough_rule(_pool_shape), num_outputs=3,
          attr_check=lambda op, a: _conv_geom()._pool_check(op, a),
          output_names=("output", "min_output", "max_output"), inline=False)
def _contrib_quantized_pooling(xp, data, min_data, max_data, out, **attrs):
    """quantized_pooling(data, min_data, max_data, kernel, pool_type='max', ...):
    max or avg pooling of int8 data (avg rounds to the nearest step)."""
    if attrs.get("pool_type", "max") not in ("max", "avg"):
        raise OpError("quantized_pooling supports pool_type 'max' and 'avg', got %r"
                      % attrs.get("pool_type"))
    conv = _conv_geom()
    tmp = xp.empty(out[0].shape, dtype=np.float32)
    conv.Pooling(xp, data.astype(np.float32), out=tmp, **attrs)
    out[0][...] = xp.rint(tmp).astype(data.dtype)
    _copy_range(min_data, max_data, out)


# ---------------------------------------------------- entropy calibration


def _smooth(p, eps=0.0001):
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = eps * n_zeros / n_nonzeros
    if eps1 >= 1.0:
        return None
    return p + np.where(zeros, eps, -eps1).astype(np.float32)


def _kl(p, q):
    p = p / p.sum()
    q = q / q.sum()
    return float(np.sum(p * np.log(p / q)))


def _calib_rule(attrs, shapes, dtypes):
    h, e = shapes
    if len(h) != 1 or tuple(e) != (h[0] + 1,):
        raise ShapeError("hist must be 1-D and hist_edges one longer, got %s and %s"
                         % (fmt(h), fmt(e)))
    if h[0] // 2 < attrs["num_quantized_bins"] // 2:
        raise ShapeError("hist has %d bins, fewer than num_quantized_bins=%d: no threshold "
                         "to choose" % (h[0], attrs["num_quantized_bins"]))
    return ((1,), (1,)), (_F32, _F32)


@register("_contrib_calibrate_entropy", inputs=("hist", "hist_edges"), params=[
    Param("num_quantized_bins", p_int, 255, "The number of quantized bins.")],
    infer=_calib_rule, num_outputs=2, output_names=("threshold", "divergence"), inline=False)
def _contrib_calibrate_entropy(xp, hist, hist_edges, out, num_quantized_bins=255):
    """calibrate_entropy(hist, hist_edges, num_quantized_bins=255): (threshold,
    divergence): of the symmetric thresholds at the histogram's bin edges,
    the one whose clipped distribution loses least (KL divergence) when
    merged into num_quantized_bins bins."""
    hist = np.asarray(hist, dtype=np.float32)
    edges = np.asarray(hist_edges, dtype=np.float32)
    nb = hist.size
    zero = nb // 2
    half = num_quantized_bins // 2
    best_t, best_d = 0.0, np.finfo(np.float32).max
    csum = np.concatenate([[0.0], np.cumsum(hist, dtype=np.float64)])
    for i in range(half, zero + 1):
        start, stop = zero - i, zero + i + 1
        t = float(edges[stop])
        sliced = np.trunc(hist[start:stop]).astype(np.int64)
        sliced[0] = 0
        p = hist[start:stop].astype(np.float32).copy()
        p[0] = np.float32(csum[start + 1])
        p[-1] = np.float32(hist[stop - 1] + (csum[nb] - csum[stop]))
        merged = sliced.size // num_quantized_bins
        qb = np.zeros(num_quantized_bins, dtype=np.float32)
        if merged:
            qb[:] = sliced[:num_quantized_bins * merged].reshape(num_quantized_bins, merged).sum(1)
        qb[-1] += sliced[num_quantized_bins * merged:].sum()
        if merged:
            seg = np.minimum(np.arange(sliced.size) // merged, num_quantized_bins - 1)
        else:   # fewer bins than quantized bins: all but the last segment are empty
            seg = np.full(sliced.size, num_quantized_bins - 1)
        norm = np.bincount(seg, weights=(sliced != 0), minlength=num_quantized_bins)
        share = np.where(norm > 0, qb / np.maximum(norm, 1), 0).astype(np.float32)
        q = np.where((p != 0) & (norm[seg] > 0), share[seg], np.float32(0)).astype(np.float32)
        ps, qs = _smooth(p), _smooth(q)
        d = float("inf") if qs is None or ps is None else _kl(ps, qs)
        if d < best_d:
            best_t, best_d = t, d
    out[0][...] = best_t
    out[1][...] = best_d


_NONE = {n: (lambda F, at, ins, outs, og: [None] * len(ins)) for n in (
    "_contrib_quantize_v2", "_contrib_requantize", "_contrib_quantized_fully_connected",
    "_contrib_quantized_conv", "_contrib_quantized_act", "_contrib_quantized_flatten",
    "_contrib_quantized_pooling", "_contrib_calibrate_entropy")}
set_grads(_NONE)
host_kernels(*_NONE)    # ranges are read as Python numbers; the sums run in float64
