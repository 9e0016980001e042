"""MXNet 1.9.1's contrib layers used by vision models (GluonCV's segmenters
and detectors): ``_contrib_BilinearResize2D``, ``_contrib_AdaptiveAvgPooling2D``
and ``_contrib_SyncBatchNorm`` (one process: BatchNorm over axis 1).

BilinearResize2D and AdaptiveAvgPooling2D are separable linear maps of the
last two axes, ``out = Wh @ x @ Ww.T``; their weight matrices follow MXNet's
CPU kernels (src/operator/contrib/bilinear_resize.cc with float32 source
indices, adaptive_avg_pooling.cc's ``floor(i*in/out)..ceil((i+1)*in/out)``
bins), and the gradients are the transposed maps.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._common import _p_opt_shape
from ._rules import fmt
from .registry import Param, p_bool, p_float, p_int, p_str, register
from .norm import BatchNorm as _bn_kernel


def _p_opt_float(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_float(v)


def _sep_apply(xp, x, wh, ww, out):
    """out[..., o, p] = sum_hw wh[o, h] x[..., h, w] ww[p, w]."""
    ct = x.dtype if x.dtype.kind == "f" else np.float32
    wh = xp.asarray(wh, dtype=ct)
    ww = xp.asarray(ww, dtype=ct)
    t = xp.matmul(wh, x.astype(ct, copy=False))           # (..., o, w)
    r = xp.matmul(t, ww.T)                                 # (..., o, p)
    out[...] = r.astype(out.dtype, copy=False)


def _need4(what, s):
    if len(s) != 4:
        raise ShapeError("%s needs 4-D input (batch, channel, height, width), got %s"
                         % (what, fmt(s)))


# ============================================================ BilinearResize2D

_BR_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
             "to_odd_up")


def _bilinear_weights(out_len, in_len, align_corners):
    """MXNet's CPU bilinear sampling along one axis (float32 index math)."""
    w = np.zeros((out_len, in_len), dtype=np.float64)
    if out_len == in_len:
        np.fill_diagonal(w, 1.0)
        return w
    f32 = np.float32
    if out_len > 1:
        scale = f32(in_len - 1) / f32(out_len - 1) if align_corners else f32(in_len) / f32(out_len)
    else:
        scale = f32(0)
    for o in range(out_len):
        if align_corners:
            r = f32(scale * f32(o))
        else:
            r = f32(scale * f32(o + 0.5) - f32(0.5))
            if r < 0:
                r = f32(0)
        i = int(r)
        ip = 1 if i < in_len - 1 else 0
        lam = float(f32(r - f32(i)))
        w[o, i] += 1.0 - lam
        w[o, i + ip] += lam
    return w


def _br_out_hw(attrs, d, like=None):
    mode = attrs["mode"]
    H, W = d[2], d[3]
    if mode == "size":
        sh, sw = attrs["scale_height"], attrs["scale_width"]
        if sh is not None:
            if sw is None:
                raise OpError("BilinearResize2D: scale_height is given, so scale_width is "
                              "needed too")
            return int(sh * H), int(sw * W)
        return attrs["height"], attrs["width"]
    if mode == "odd_scale":
        sh, sw = attrs["scale_height"], attrs["scale_width"]
        if sh is None or sw is None:
            raise OpError("BilinearResize2D: mode='odd_scale' needs scale_height and "
                          "scale_width")
        nh = int(H * sh) if H % 2 == 0 else int((H - 1) * sh) + 1
        nw = int(W * sw) if W % 2 == 0 else int((W - 1) * sw) + 1
        return nh, nw
    if mode == "like":
        return like[2], like[3]
    even = {"to_even_down": (0, -1), "to_even_up": (0, 1), "to_odd_down": (1, -1),
            "to_odd_up": (1, 1)}[mode]

    def adj(n):
        return n if n % 2 == even[0] else n + even[1]
    return adj(H), adj(W)


def _br_rule(attrs, shapes, dtypes):
    want = 2 if attrs["mode"] == "like" else 1
    if len(shapes) != want:
        raise OpError("BilinearResize2D with mode=%r takes %d input(s), got %d"
                      % (attrs["mode"], want, len(shapes)))
    d = tuple(shapes[0])
    _need4("BilinearResize2D", d)
    if want == 2:
        _need4("BilinearResize2D (like)", tuple(shapes[1]))
    nh, nw = _br_out_hw(attrs, d, shapes[1] if want == 2 else None)
    if nh < 1 or nw < 1:
        raise ShapeError("BilinearResize2D: output size (%d, %d) must be positive" % (nh, nw))
    return ((d[0], d[1], nh, nw),), (dtypes[0],)


_BR_PARAMS = [
    Param("height", p_int, 1, "output height (ignored if scale_height is defined or mode is "
          "not 'size')"),
    Param("width", p_int, 1, "output width (ignored if scale_width is defined or mode is not "
          "'size')"),
    Param("scale_height", _p_opt_float, None, "sampling scale of the height"),
    Param("scale_width", _p_opt_float, None, "sampling scale of the width"),
    Param("mode", p_str, "size", "resizing mode", choices=_BR_MODES),
    Param("align_corners", p_bool, True, "align the corner pixels of input and output"),
]


def _br_optional(kernel):
    kernel.optional_inputs = frozenset({"like"})
    return kernel


@register("_contrib_BilinearResize2D", inputs=("data", "like"), params=_BR_PARAMS,
          infer=_br_rule, inline=False)
@_br_optional
def _contrib_BilinearResize2D(xp, data, *rest, out, align_corners=True, **_attrs):
    """BilinearResize2D(data, like=None, height=1, width=1, scale_height=None,
    scale_width=None, mode='size', align_corners=True): bilinear resize of the
    last two axes of NCHW data."""
    H, W = data.shape[2:]
    oh, ow = out.shape[2:]
    _sep_apply(xp, data, _bilinear_weights(oh, H, align_corners),
               _bilinear_weights(ow, W, align_corners), out)


def _br_bwd_rule(attrs, shapes, dtypes):
    return (tuple(shapes[1]),), (dtypes[1],)


@register("_backward_contrib_BilinearResize2D", inputs=("ograd", "data"),
          params=_BR_PARAMS, infer=_br_bwd_rule, inline=False)
def _backward_contrib_BilinearResize2D(xp, ograd, data, out, align_corners=True, **_attrs):
    """Gradient of BilinearResize2D w.r.t. its data (the transposed map)."""
    H, W = data.shape[2:]
    oh, ow = ograd.shape[2:]
    _sep_apply(xp, ograd, _bilinear_weights(oh, H, align_corners).T,
               _bilinear_weights(ow, W, align_corners).T, out)


# ========================================================= AdaptiveAvgPooling2D


def _adaptive_weights(out_len, in_len):
    w = np.zeros((out_len, in_len), dtype=np.float64)
    for o in range(out_len):
        s = int(math.floor(o * in_len / out_len))
        e = int(math.ceil((o + 1) * in_len / out_len))
        w[o, s:e] = 1.0 / (e - s)
    return w


def _ap_out(attrs):
    osz = attrs["output_size"]
    if not osz:
        return 1, 1
    if len(osz) == 1:
        return osz[0], osz[0]
    if len(osz) != 2:
        raise OpError("AdaptiveAvgPooling2D: output_size must have 1 or 2 values, got %s"
                      % (osz,))
    return osz


def _ap_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("AdaptiveAvgPooling2D takes 1 input, got %d" % len(shapes))
    d = tuple(shapes[0])
    _need4("AdaptiveAvgPooling2D", d)
    oh, ow = _ap_out(attrs)
    return ((d[0], d[1], oh, ow),), (dtypes[0],)


_AP_PARAMS = [Param("output_size", _p_opt_shape, (), "int (output size) or a tuple of int "
                    "for output (height, width).")]


@register("_contrib_AdaptiveAvgPooling2D", params=_AP_PARAMS, infer=_ap_rule, inline=False)
def _contrib_AdaptiveAvgPooling2D(xp, data, out, output_size=()):
    """AdaptiveAvgPooling2D(data, output_size=()): average pooling to a fixed
    output size (default 1x1) over NCHW data."""
    H, W = data.shape[2:]
    oh, ow = out.shape[2:]
    _sep_apply(xp, data, _adaptive_weights(oh, H), _adaptive_weights(ow, W), out)


@register("_backward_contrib_AdaptiveAvgPooling2D", inputs=("ograd", "data"),
          params=_AP_PARAMS, infer=_br_bwd_rule, inline=False)
def _backward_contrib_AdaptiveAvgPooling2D(xp, ograd, data, out, output_size=()):
    """Gradient of AdaptiveAvgPooling2D w.r.t. its data."""
    H, W = data.shape[2:]
    oh, ow = ograd.shape[2:]
    _sep_apply(xp, ograd, _adaptive_weights(oh, H).T, _adaptive_weights(ow, W).T, out)


# ============================================================== SyncBatchNorm


def _sbn_rule(attrs, shapes, dtypes):
    from .norm import _bn_rule
    return _bn_rule(dict(attrs, axis=1), shapes, dtypes)


_SBN_PARAMS = [
    Param("eps", p_float, 1e-3, "Epsilon to prevent div 0"),
    Param("momentum", p_float, 0.9, "Momentum for moving average"),
    Param("fix_gamma", p_bool, True, "Fix gamma while training"),
    Param("use_global_stats", p_bool, False, "Whether use global moving statistics instead "
          "of local batch-norm."),
    Param("output_mean_var", p_bool, False, "Output All,normal mean and var"),
    Param("ndev", p_int, 1, "The count of GPU devices (one process here: statistics are "
          "the local batch's)"),
    Param("key", p_str, doc="Hash key for synchronization (required, as in MXNet)"),
]


@register("_contrib_SyncBatchNorm", inputs=("data", "gamma", "beta", "moving_mean",
                                            "moving_var"),
          params=_SBN_PARAMS, infer=_sbn_rule, num_outputs=3,
          output_names=("output", "mean", "var"), train_aware=True,
          aux=("moving_mean", "moving_var"),
          num_visible=lambda a: 3 if a["output_mean_var"] else 1, inline=False, mutates=(1,))
def _contrib_SyncBatchNorm(xp, data, gamma, beta, moving_mean, moving_var, *, out, eps=1e-3,
                           momentum=0.9, fix_gamma=True, use_global_stats=False, _train=False,
                           **_ignored):
    """SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3,
    momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
    ndev=1, key=''): batch normalisation over axis 1 whose statistics MXNet
    shares across the devices of one process; aiond runs one device per
    process, so it normalises with the local batch, like BatchNorm. Its third
    output is the batch variance (BatchNorm's is 1/sqrt(var + eps))."""
    _bn_kernel(xp, data, gamma, beta, moving_mean, moving_var, out=out, eps=eps,
               momentum=momentum, fix_gamma=fix_gamma, use_global_stats=use_global_stats,
               axis=1, _train=_train)
    if _train and not use_global_stats:
        inv = out[2]
        inv[...] = 1.0 / (inv * inv) - eps


# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _br_grad(F, attrs, ins, outs, og):
    g = F._internal._backward_contrib_BilinearResize2D(og[0], ins[0], **attrs)
    return [g] + [None] * (len(ins) - 1)


def _ap_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_contrib_AdaptiveAvgPooling2D(og[0], ins[0], **attrs)]


def _sbn_grad(F, attrs, ins, outs, og):
    kw = {k: attrs[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats")}
    invstd = 1.0 / F.sqrt(outs[2] + attrs["eps"])    # outs[2] is the batch variance
    dx, dgamma, dbeta = F._internal._backward_BatchNorm(
        og[0], ins[0], ins[1], outs[1], invstd, ins[3], ins[4], axis=1, **kw)
    return [dx, dgamma, dbeta, None, None]


set_grads({"_contrib_BilinearResize2D": _br_grad,
           "_contrib_AdaptiveAvgPooling2D": _ap_grad,
           "_contrib_SyncBatchNorm": _sbn_grad})
