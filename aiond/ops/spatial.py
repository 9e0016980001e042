"""Spatial operators of MXNet 1.9.1 beyond convolution and pooling:
im2col / col2im (``src/operator/nn/im2col.*``), LRN (``nn/lrn-inl.h``),
GridGenerator (``grid_generator-inl.h``) and, in ``mx.nd.contrib``,
AdaptiveAvgPooling2D and BilinearResize2D (``contrib/adaptive_avg_pooling``,
``contrib/bilinear_resize``).

AdaptiveAvgPooling2D and BilinearResize2D are separable linear maps: the
output is ``Ah @ x @ Aw^T`` with per-axis weight matrices built as MXNet's
kernels index the input (window bounds, interpolation taps and lambdas), and
the gradient is ``Ah^T @ g @ Aw``."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._common import _n_inputs, _p_opt_shape
from ._grad import set_grads
from ._rules import fmt
from .conv import _col2im, _cols
from ._nn_util import _p_opt_float
from .registry import Param, p_bool, p_float, p_int, p_shape, p_str, register
from .registry import optional as _optional

_prod = math.prod

# ----------------------------------------------------------- im2col / col2im


def _i2c_fill(attrs, nd):
    out = {}
    for name, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = attrs[name] or ()
        if not v:
            v = (default,) * nd
        if len(v) != nd:
            raise OpError("%s=%s must have as many dimensions as kernel=%s"
                          % (name, fmt(v), fmt(attrs["kernel"])))
        out[name] = tuple(v)
    return out["stride"], out["dilate"], out["pad"]


def _i2c_out(L, k, s, d, p):
    o = []
    for Li, ki, si, di, pi in zip(L, k, s, d, p):
        n = (Li + 2 * pi - (di * (ki - 1) + 1)) // si + 1
        if n <= 0:
            raise ShapeError("kernel %s (dilate %s) does not fit the padded input %s"
                             % (fmt(k), fmt(d), fmt(L)))
        o.append(n)
    return tuple(o)


_I2C = [Param("kernel", p_shape, None, "Sliding kernel size: (w,), (h, w) or (d, h, w)."),
        Param("stride", p_shape, (), "The stride between adjacent sliding blocks in spatial "
              "dimension: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension."),
        Param("dilate", p_shape, (), "The spacing between adjacent kernel points: (w,), (h, w) "
              "or (d, h, w). Defaults to 1 for each dimension."),
        Param("pad", p_shape, (), "The zero-value padding size on both sides of spatial "
              "dimension: (w,), (h, w) or (d, h, w). Defaults to no padding.")]


def _im2col_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    k = attrs["kernel"]
    if len(d) != len(k) + 2:
        raise ShapeError("data must be %d-D for kernel=%s, got %s" % (len(k) + 2, fmt(k), fmt(d)))
    s, dl, p = _i2c_fill(attrs, len(k))
    o = _i2c_out(d[2:], k, s, dl, p)
    return ((d[0], d[1] * _prod(k), _prod(o)),), (dtypes[0],)


@register("im2col", params=_I2C, infer=_im2col_rule)
def im2col(xp, data, out, kernel, stride=(), dilate=(), pad=()):
    """im2col(data, kernel, stride=1, dilate=1, pad=0): the sliding blocks of
    data (N, C, *L) as columns, shape (N, C * prod(kernel), number of blocks)."""
    s, d, p = _i2c_fill({"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad},
                        len(kernel))
    o = _i2c_out(data.shape[2:], kernel, s, d, p)
    out[...] = _cols(xp, data, kernel, s, d, p, o, 1).reshape(out.shape)


def _col2im_rule(attrs, shapes, dtypes):
    c = tuple(shapes[0])
    k, L = attrs["kernel"], attrs["output_size"]
    if len(L) != len(k):
        raise ShapeError("output_size=%s must have as many dimensions as kernel=%s"
                         % (fmt(L), fmt(k)))
    s, dl, p = _i2c_fill(attrs, len(k))
    o = _i2c_out(L, k, s, dl, p)
    if len(c) != 3 or c[1] % _prod(k) or c[2] != _prod(o):
        raise ShapeError("data %s must be (N, C * %d, %d) for kernel=%s and output_size=%s"
                         % (fmt(c), _prod(k), _prod(o), fmt(k), fmt(L)))
    return ((c[0], c[1] // _prod(k)) + tuple(L),), (dtypes[0],)


@register("col2im", params=[Param("output_size", p_shape, None, "The spatial dimension of "
                                  "image outputs: (w,), (h, w) or (d, h, w).")] + _I2C,
          infer=_col2im_rule)
def col2im(xp, data, out, output_size, kernel, stride=(), dilate=(), pad=()):
    """col2im(data, output_size, kernel, stride=1, dilate=1, pad=0): sum the
    columns of data back into an image (N, C, *output_size) (im2col's adjoint)."""
    s, d, p = _i2c_fill({"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad},
                        len(kernel))
    o = _i2c_out(output_size, kernel, s, d, p)
    N, C = out.shape[:2]
    cols = data.reshape((N, C) + tuple(kernel) + o)
    tmp = xp.empty(out.shape, dtype=out.dtype)
    _col2im(xp, cols, tmp, kernel, s, d, p)
    out[...] = tmp


def _i2c_kw(attrs):
    return {k: attrs[k] for k in ("kernel", "stride", "dilate", "pad")}

# ------------------------------------------------------------------ LRN


def _lrn_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) != 4:
        raise ShapeError("LRN needs 4-D data (N, C, H, W), got %s" % fmt(d))
    return (d, d), (dtypes[0], dtypes[0])


def _chan_window_sum(xp, v, n):
    """Sum over channels c - n//2 .. c + n//2 (zero outside) of v (N, C, H, W)."""
    h = n // 2
    C = v.shape[1]
    c = xp.cumsum(xp.pad(v, ((0, 0), (1, 0), (0, 0), (0, 0))), axis=1)
    hi = xp.minimum(xp.arange(C) + h + 1, C)
    lo = xp.maximum(xp.arange(C) - h, 0)
    return c[:, hi] - c[:, lo]


_LRN = [Param("alpha", p_float, 1e-4, "The variance scaling parameter alpha in the "
              "LRN expression."),
        Param("beta", p_float, 0.75, "The power parameter beta in the LRN expression."),
        Param("knorm", p_float, 2.0, "The parameter k in the LRN expression."),
        Param("nsize", p_int, None, "normalization window width in elements.")]


@register("LRN", params=_LRN, infer=_lrn_rule, num_outputs=2,
          output_names=("output", "tmp_norm"), num_visible=lambda a: 1)
def lrn(xp, data, out, alpha=1e-4, beta=0.75, knorm=2.0, nsize=1):
    """LRN(data, nsize, alpha=1e-4, beta=0.75, knorm=2): data / (knorm +
    alpha / nsize * sum of squares over nsize neighbouring channels) ** beta."""
    x = data.astype(np.float64)
    norm = knorm + (alpha / nsize) * _chan_window_sum(xp, x * x, nsize)
    out[0][...] = x * norm ** -beta
    out[1][...] = norm


@register("_backward_LRN", inputs=("ograd", "data", "tmp_norm"), params=_LRN,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[1]),), (dtypes[1],)))
def _backward_lrn(xp, ograd, data, norm, out, alpha=1e-4, beta=0.75, knorm=2.0, nsize=1):
    """The gradient of LRN w.r.t. data."""
    g, x, n = (a.astype(np.float64) for a in (ograd, data, norm))
    t = _chan_window_sum(xp, g * x * n ** (-beta - 1), nsize)
    out[...] = g * n ** -beta - (2.0 * alpha * beta / nsize) * x * t

# --------------------------------------------------------- GridGenerator


def _grid_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if attrs["transform_type"] == "affine":
        if len(d) != 2 or d[1] != 6:
            raise ShapeError("affine GridGenerator needs data of shape (batch, 6), got %s"
                             % fmt(d))
        t = attrs["target_shape"]
        if len(t) != 2 or min(t) <= 0:
            raise OpError("target_shape=%s must be a positive (height, width)" % (t,))
        return ((d[0], 2) + tuple(t),), (dtypes[0],)
    if len(d) != 4 or d[1] != 2:
        raise ShapeError("warp GridGenerator needs a flow of shape (batch, 2, H, W), got %s"
                         % fmt(d))
    return (d,), (dtypes[0],)


def _grid_dst(xp, H, W, dtype):
    """(3, H*W): normalised x, y in [-1, 1] and ones (MXNet's grid_dst)."""
    i = xp.arange(H * W)
    x = -1.0 + (i % W) * (2.0 / (W - 1)) if W > 1 else xp.full(H * W, -1.0)
    y = -1.0 + (i // W) * (2.0 / (H - 1)) if H > 1 else xp.full(H * W, -1.0)
    return xp.stack([x, y, xp.ones(H * W)]).astype(dtype)


_GRID = [Param("transform_type", p_str, None, "The type of transformation. For `affine`, input "
               "data should be an affine matrix of size (batch, 6). For `warp`, input data "
               "should be an optical flow of size (batch, 2, h, w).", choices=("affine", "warp")),
         Param("target_shape", p_shape, (0, 0), "Specifies the output shape (H, W). This is "
               "required if transformation type is `affine`. If transformation type is `warp`, "
               "this parameter is ignored.")]


@register("GridGenerator", params=_GRID, infer=_grid_rule)
def grid_generator(xp, data, out, transform_type, target_shape=(0, 0)):
    """GridGenerator(data, transform_type, target_shape): the sampling grid
    (batch, 2, H, W) in [-1, 1] of an affine transform or an optical flow."""
    if transform_type == "affine":
        H, W = target_shape
        N = data.shape[0]
        r = xp.matmul(data.reshape(N, 2, 3), _grid_dst(xp, H, W, data.dtype))
        out[...] = r.reshape(out.shape)
    else:
        N, _, H, W = data.shape
        gx = xp.arange(W, dtype=data.dtype)[None, :]
        gy = xp.arange(H, dtype=data.dtype)[:, None]
        out[:, 0] = (data[:, 0] + gx) / ((W - 1.0) / 2.0) - 1
        out[:, 1] = (data[:, 1] + gy) / ((H - 1.0) / 2.0) - 1


@register("_backward_GridGenerator", inputs=("ograd", "data"), params=_GRID,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[1]),), (dtypes[1],)))
def _backward_grid_generator(xp, ograd, data, out, transform_type, target_shape=(0, 0)):
    """The gradient of GridGenerator w.r.t. data."""
    if transform_type == "affine":
        N, _, H, W = ograd.shape
        g = xp.matmul(ograd.reshape(N, 2, H * W), _grid_dst(xp, H, W, ograd.dtype).T)
        out[...] = g.reshape(out.shape)
    else:
        H, W = ograd.shape[2:]
        out[:, 0] = ograd[:, 0] / ((W - 1.0) / 2.0)
        out[:, 1] = ograd[:, 1] / ((H - 1.0) / 2.0)

# ------------------------------------------- separable linear resampling


def _apply_sep(xp, x, ah, aw):
    return xp.matmul(xp.matmul(ah.astype(x.dtype), x), aw.T.astype(x.dtype))


def _apply_sep_t(xp, g, ah, aw):
    return xp.matmul(xp.matmul(ah.T.astype(g.dtype), g), aw.astype(g.dtype))


def _adaptive_matrix(i, o):
    """(o, i): row k averages input [floor(k*i/o), ceil((k+1)*i/o))."""
    m = np.zeros((o, i))
    for k in range(o):
        a = int(math.floor(k * i / o))
        b = int(math.ceil((k + 1) * i / o))
        m[k, a:b] = 1.0 / (b - a)
    return m


def _adaptive_size(attrs):
    s = attrs["output_size"] or ()
    if len(s) == 0:
        return 1, 1
    if len(s) == 1:
        return s[0], s[0]
    if len(s) != 2:
        raise OpError("output_size=%s must be an int or a (height, width) pair" % (s,))
    return s


def _adaptive_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) != 4:
        raise ShapeError("AdaptiveAvgPooling2D needs 4-D data (N, C, H, W), got %s" % fmt(d))
    oh, ow = _adaptive_size(attrs)
    if oh <= 0 or ow <= 0:
        raise OpError("output_size must be positive, got %s" % ((oh, ow),))
    return ((d[0], d[1], oh, ow),), (dtypes[0],)


_ADAPTIVE = [Param("output_size", _p_opt_shape, (), "int (output size) or a tuple of int for "
                   "output (height,width).")]


@register("_contrib_AdaptiveAvgPooling2D", params=_ADAPTIVE, infer=_adaptive_rule)
def _contrib_adaptive_avg_pooling2d(xp, data, out, output_size=()):
    """AdaptiveAvgPooling2D(data, output_size=1): average pooling to a fixed
    output size, windows [floor(k*H/oh), ceil((k+1)*H/oh)) as MXNet."""
    oh, ow = out.shape[2:]
    out[...] = _apply_sep(xp, data, xp.asarray(_adaptive_matrix(data.shape[2], oh)),
                          xp.asarray(_adaptive_matrix(data.shape[3], ow)))


@register("_backward_contrib_AdaptiveAvgPooling2D", inputs=("ograd", "data"), params=_ADAPTIVE,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[1]),), (dtypes[1],)))
def _backward_adaptive(xp, ograd, data, out, output_size=()):
    """The gradient of AdaptiveAvgPooling2D w.r.t. data."""
    oh, ow = ograd.shape[2:]
    out[...] = _apply_sep_t(xp, ograd, xp.asarray(_adaptive_matrix(data.shape[2], oh)),
                            xp.asarray(_adaptive_matrix(data.shape[3], ow)))


def _bilinear_matrix(i, o, align_corners):
    """(o, i) interpolation taps of MXNet's bilinear resize along one axis."""
    if o > 1:
        scale = (i - 1) / (o - 1) if align_corners else i / o
    else:
        scale = 0.0
    m = np.zeros((o, i))
    for k in range(o):
        src = scale * k if align_corners else max(scale * (k + 0.5) - 0.5, 0.0)
        h1 = int(src)
        h1p = 1 if h1 < i - 1 else 0
        lam = src - h1
        m[k, h1] += 1.0 - lam
        m[k, h1 + h1p] += lam
    return m


_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")
_RESIZE = [
    Param("height", p_int, 1, "output height (required, but ignored if scale_height is defined "
          "or mode is not \"size\")"),
    Param("width", p_int, 1, "output width (required, but ignored if scale_width is defined or "
          "mode is not \"size\")"),
    Param("scale_height", _p_opt_float, None, "sampling scale of the height (optional, used in "
          "modes \"scale\" and \"odd_scale\")"),
    Param("scale_width", _p_opt_float, None, "sampling scale of the width (optional, used in "
          "modes \"scale\" and \"odd_scale\")"),
    Param("mode", p_str, "size", "resizing mode.", choices=_RESIZE_MODES),
    Param("align_corners", p_bool, True, "With align_corners = True, the interpolating doesn't "
          "proportionally align theoutput and input pixels, and thus the output values can "
          "depend on the input size.")]


def _resize_hw(attrs, d, like=None):
    H, W = d[2], d[3]
    mode = attrs["mode"]
    if mode == "size":
        if attrs["scale_height"] is not None:      # MXNet keys both on scale_height
            if attrs["scale_width"] is None:
                raise OpError("scale_width is required with scale_height")
            return int(attrs["scale_height"] * H), int(attrs["scale_width"] * W)
        return attrs["height"], attrs["width"]
    if mode == "odd_scale":
        if attrs["scale_height"] is None or attrs["scale_width"] is None:
            raise OpError("mode='odd_scale' needs scale_height and scale_width")
        sh, sw = attrs["scale_height"], attrs["scale_width"]
        return (int(H * sh) if H % 2 == 0 else int((H - 1) * sh) + 1,
                int(W * sw) if W % 2 == 0 else int((W - 1) * sw) + 1)
    if mode == "like":
        return like[2], like[3]
    up = mode.endswith("_up")
    par = 0 if mode.startswith("to_even") else 1

    def fix(n):
        return n if n % 2 == par else (n + 1 if up else n - 1)
    return fix(H), fix(W)


def _resize_rule(attrs, shapes, dtypes):
    want = ("data", "like") if attrs["mode"] == "like" else ("data",)
    _n_inputs(shapes, want, " with mode=%r" % attrs["mode"])
    d = tuple(shapes[0])
    if len(d) != 4:
        raise ShapeError("BilinearResize2D needs 4-D data (N, C, H, W), got %s" % fmt(d))
    h, w = _resize_hw(attrs, d, tuple(shapes[1]) if len(shapes) > 1 else None)
    if h <= 0 or w <= 0:
        raise ShapeError("the output size %s is not positive" % ((h, w),))
    return ((d[0], d[1], h, w),), (dtypes[0],)


def _resize_mats(xp, data_shape, out_hw, align_corners):
    return (xp.asarray(_bilinear_matrix(data_shape[2], out_hw[0], align_corners)),
            xp.asarray(_bilinear_matrix(data_shape[3], out_hw[1], align_corners)))


@register("_contrib_BilinearResize2D", inputs=("data", "like"), params=_RESIZE,
          infer=_resize_rule)
@_optional("like")
def _contrib_bilinear_resize2d(xp, data, *like, out, height=1, width=1, scale_height=None,
                               scale_width=None, mode="size", align_corners=True):
    """BilinearResize2D(data, like=None, height=1, width=1, scale_height=None,
    scale_width=None, mode='size', align_corners=True): bilinear resampling
    of (N, C, H, W) data to a new height and width."""
    ah, aw = _resize_mats(xp, data.shape, out.shape[2:], align_corners)
    out[...] = _apply_sep(xp, data, ah, aw)


@register("_backward_contrib_BilinearResize2D", inputs=("ograd", "data"), params=_RESIZE,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[1]),), (dtypes[1],)))
def _backward_bilinear_resize(xp, ograd, data, out, height=1, width=1, scale_height=None,
                              scale_width=None, mode="size", align_corners=True):
    """The gradient of BilinearResize2D w.r.t. data."""
    ah, aw = _resize_mats(xp, data.shape, ograd.shape[2:], align_corners)
    out[...] = _apply_sep_t(xp, ograd, ah, aw)


def _bwd(name, extra=0):
    def grad(F, attrs, ins, outs, og):
        g = getattr(F._internal, name)(og[0], ins[0], **attrs)
        return [g] + [F.zeros_like(x) for x in ins[1:]] if extra else [g]
    return grad


def _lrn_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_LRN(og[0], ins[0], outs[1], **attrs)]


set_grads({
    "im2col": lambda F, at, ins, outs, og: [
        F.col2im(og[0], output_size=ins[0].shape[2:], **_i2c_kw(at))],
    "col2im": lambda F, at, ins, outs, og: [F.im2col(og[0], **_i2c_kw(at))],
    "LRN": _lrn_grad,
    "GridGenerator": _bwd("_backward_GridGenerator"),
    "_contrib_AdaptiveAvgPooling2D": _bwd("_backward_contrib_AdaptiveAvgPooling2D"),
    "_contrib_BilinearResize2D": _bwd("_backward_contrib_BilinearResize2D", extra=1),
})
