"""Convolution, Deconvolution and Pooling (1-D, 2-D and 3-D, channel-first
layouts) with MXNet 1.9.1's arguments, defaults, shapes and checks.

The convolution kernels live in ``conv_gemm`` (im2col into per-thread
scratch + batched GEMM, col2im by kernel offsets, each a plan over work
units); this module registers the ops, their shape rules, their costs in
MACs and their ``rows`` hooks, through which the engine runs one large
convolution as one range of units per CPU worker:

* Deconvolution is the data gradient of the matching Convolution, and its
  gradients are a Convolution (data) and a weight gradient;
* like MXNet, ``workspace`` (MB) bounds the column buffer (conv_gemm uses
  cache-sized chunks below it).

Pooling loops over kernel offsets (vectorised over the whole output), which
beats a reduction over a strided window view for small kernels; when windows
are disjoint (stride >= kernel, no padding) the gradient writes each cell
once; global pooling reduces the spatial axes directly. Pooling and its
gradient split over (sample, channel) planes.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..base import OpError, ShapeError
from ._fast import channel_sum
from ._rules import fmt
from . import onednn as _dnn
from .conv_gemm import (bwd_data_plan, bwd_weight_plan, col2im as _col2im, fwd_plan,  # noqa: F401
                        run_all, windows)
from .registry import window_cost, Param, memo_rule, p_any, p_bool, p_int, p_shape, register

_prod = math.prod
_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}

# ------------------------------------------------------------------ params


def _p_opt_int(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_int(v)


def _p_opt_bool(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_bool(v)


def _conv_params(workspace, no_bias, deconv=False):
    ps = [Param("kernel", p_shape, doc="kernel size: (w,), (h, w) or (d, h, w)"),
          Param("stride", p_shape, (), "stride per spatial axis; default 1"),
          Param("dilate", p_shape, (), "dilation per spatial axis; default 1"),
          Param("pad", p_shape, (), "zero padding per spatial axis; default 0")]
    if deconv:
        ps += [Param("adj", p_shape, (), "extra output size at the end of each axis "
                                         "(< stride); ignored with target_shape"),
               Param("target_shape", p_shape, (), "output spatial shape; overrides pad/adj")]
    ps += [Param("num_filter", p_int, doc="number of output channels"),
           Param("num_group", p_int, 1, "number of groups"),
           Param("workspace", p_int, workspace, "MB of column buffer per chunk of the batch"),
           Param("no_bias", p_bool, no_bias, "no bias input"),
           Param("cudnn_tune", p_any, None, "ignored (cuDNN)",
                 choices=(None, "off", "limited_workspace", "fastest")),
           Param("cudnn_off", p_bool, False, "ignored (cuDNN)"),
           Param("layout", p_any, None, "NCW, NCHW or NCDHW (the default for the kernel's rank)",
                 choices=(None, "NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"))]
    return ps


def _fill_spatial(op, attrs, name, nd, default, low):
    v = attrs[name]
    if v is None or len(v) == 0:
        attrs[name] = (default,) * nd
        return
    if len(v) != nd:
        raise OpError("%s: %s=%s must have as many dimensions as kernel=%s"
                      % (op.name, name, fmt(v), fmt(attrs["kernel"])))
    if any(x < low for x in v):
        raise OpError("%s: %s=%s must be >= %d on every axis" % (op.name, name, fmt(v), low))


def _check_layout(op, layout, nd):
    if layout is None or layout == _LAYOUTS[nd]:
        return
    if layout in ("NHWC", "NDHWC", "NWC"):
        raise OpError("%s: layout=%r is not supported (MXNet 1.9.1 runs it on GPU only); use %r "
                      "and transpose the data" % (op.name, layout, _LAYOUTS[nd]))
    raise OpError("%s: layout=%r does not match a %d-D kernel; expected %r"
                  % (op.name, layout, nd, _LAYOUTS[nd]))


def _conv_check(op, attrs):
    k = attrs["kernel"]
    if k is None or not 1 <= len(k) <= 3:
        raise OpError("%s: kernel=%s must have 1, 2 or 3 dimensions (1-D, 2-D or 3-D)"
                      % (op.name, k if k is None else fmt(k)))
    if any(x < 1 for x in k):
        raise OpError("%s: kernel=%s must be >= 1 on every axis" % (op.name, fmt(k)))
    nd = len(k)
    _fill_spatial(op, attrs, "stride", nd, 1, 1)
    _fill_spatial(op, attrs, "dilate", nd, 1, 1)
    _fill_spatial(op, attrs, "pad", nd, 0, 0)
    if "adj" in attrs:
        _fill_spatial(op, attrs, "adj", nd, 0, 0)
        _fill_spatial(op, attrs, "target_shape", nd, 0, 0)
    if attrs["num_filter"] < 1:
        raise OpError("%s: num_filter=%d must be >= 1" % (op.name, attrs["num_filter"]))
    g = attrs["num_group"]
    if g < 1:
        raise OpError("%s: num_group=%d must be >= 1" % (op.name, g))
    if attrs["num_filter"] % g:
        raise OpError("%s: num_filter=%d is not divisible by num_group=%d"
                      % (op.name, attrs["num_filter"], g))
    if attrs["workspace"] < 0:
        raise OpError("%s: workspace=%d must be >= 0" % (op.name, attrs["workspace"]))
    _check_layout(op, attrs["layout"], nd)


def _dk(k, d):
    """Dilated kernel sizes."""
    return tuple((ki - 1) * di + 1 for ki, di in zip(k, d))


def _float_dtype(dtypes, names):
    d0 = dtypes[0]
    for n, d in zip(names, dtypes):
        if d != d0:
            raise OpError("%s has dtype %s but data has %s; all inputs must have the same dtype"
                          % (n, d.name, d0.name))
    if d0.kind not in "fiu":
        raise OpError("data dtype %s is not supported" % d0.name)
    return d0


def _check_inputs(attrs, shapes):
    n = len(shapes)
    if attrs["no_bias"]:
        if n != 2:
            raise OpError("no_bias=True takes 2 inputs (data, weight), got %d; leave bias out "
                          "or pass no_bias=False" % n)
    elif n != 3:
        raise OpError("takes 3 inputs (data, weight, bias) unless no_bias=True, got %d" % n)


def _check_data(attrs, d):
    k = attrs["kernel"]
    nd = len(k)
    if len(d) != nd + 2:
        raise ShapeError("data must be %d-D (%s) for kernel=%s, got shape %s"
                         % (nd + 2, _LAYOUTS[nd], fmt(k), fmt(d)))
    g = attrs["num_group"]
    if d[1] % g:
        raise ShapeError("data has %d channels (shape %s), which num_group=%d does not divide"
                         % (d[1], fmt(d), g))


def _conv_out(attrs, d):
    k, s, dl, p = attrs["kernel"], attrs["stride"], attrs["dilate"], attrs["pad"]
    o = []
    for i, (L, dk, si, pi) in enumerate(zip(d[2:], _dk(k, dl), s, p)):
        if dk > L + 2 * pi:
            raise ShapeError("kernel=%s (dilate=%s) spans %d along spatial axis %d but the "
                             "padded input is only %d (%d + 2*pad %d); data shape %s"
                             % (fmt(k), fmt(dl), dk, i, L + 2 * pi, L, pi, fmt(d)))
        o.append((L + 2 * pi - dk) // si + 1)
    return tuple(o)


def _conv_rule(attrs, shapes, dtypes):
    _check_inputs(attrs, shapes)
    d = shapes[0]
    _check_data(attrs, d)
    k, F, g = attrs["kernel"], attrs["num_filter"], attrs["num_group"]
    wexp = (F, d[1] // g) + tuple(k)
    if shapes[1] != wexp:
        raise ShapeError("weight has shape %s but data %s with kernel=%s, num_filter=%d, "
                         "num_group=%d needs %s" % (fmt(shapes[1]), fmt(d), fmt(k), F, g, fmt(wexp)))
    if len(shapes) == 3 and shapes[2] != (F,):
        raise ShapeError("bias has shape %s but num_filter=%d needs (%d,)" % (fmt(shapes[2]), F, F))
    dt = _float_dtype(dtypes, ("data", "weight", "bias"))
    return ((d[0], F) + _conv_out(attrs, d),), (dt,)


def _deconv_pad(attrs, d):
    """MXNet's DeconvolutionParam::InferPad: (pad, adj) per spatial axis."""
    k, s, dl = attrs["kernel"], attrs["stride"], attrs["dilate"]
    ts = attrs["target_shape"]
    if any(ts):
        pads, adjs = [], []
        for i, (L, dk, si, t) in enumerate(zip(d[2:], _dk(k, dl), s, ts)):
            full = si * (L - 1) + dk
            if full < t:
                raise ShapeError("target_shape=%s is too big: axis %d can reach at most %d for "
                                 "data shape %s" % (fmt(ts), i, full, fmt(d)))
            extra = full - t
            adjs.append(extra % 2)
            pads.append((extra + 1) // 2)
        return tuple(pads), tuple(adjs)
    return tuple(attrs["pad"]), tuple(attrs["adj"])


def _deconv_out(attrs, d):
    k, s, dl = attrs["kernel"], attrs["stride"], attrs["dilate"]
    pads, adjs = _deconv_pad(attrs, d)
    o = []
    for i, (L, dk, si, pi, ai) in enumerate(zip(d[2:], _dk(k, dl), s, pads, adjs)):
        if ai > si - 1:
            raise ShapeError("adj=%d on axis %d must be smaller than stride=%d%s"
                             % (ai, i, si, " (adj computed from target_shape=%s)"
                                % fmt(attrs["target_shape"]) if any(attrs["target_shape"]) else ""))
        n = si * (L - 1) + dk - 2 * pi + ai
        if n < 1:
            raise ShapeError("pad=%s leaves no output on spatial axis %d for data shape %s"
                             % (fmt(pads), i, fmt(d)))
        o.append(n)
    return tuple(o), pads


def _deconv_rule(attrs, shapes, dtypes):
    _check_inputs(attrs, shapes)
    d = shapes[0]
    _check_data(attrs, d)
    k, F, g = attrs["kernel"], attrs["num_filter"], attrs["num_group"]
    wexp = (d[1], F // g) + tuple(k)
    if shapes[1] != wexp:
        raise ShapeError("weight has shape %s but data %s with kernel=%s, num_filter=%d, "
                         "num_group=%d needs %s" % (fmt(shapes[1]), fmt(d), fmt(k), F, g, fmt(wexp)))
    if len(shapes) == 3 and shapes[2] != (F,):
        raise ShapeError("bias has shape %s but num_filter=%d needs (%d,)" % (fmt(shapes[2]), F, F))
    dt = _float_dtype(dtypes, ("data", "weight", "bias"))
    o, _ = _deconv_out(attrs, d)
    return ((d[0], F) + o,), (dt,)

# ------------------------------------------------------------ xp helpers


def _pad(xp, x, pad, value=0):
    """x (N, C, *sp) padded on both sides of each spatial axis (pad may be a
    sequence of (before, after) pairs or of ints)."""
    pairs = [(p, p) if isinstance(p, (int, np.integer)) else tuple(p) for p in pad]
    if not any(a or b for a, b in pairs):
        return x
    shape = x.shape[:2] + tuple(L + a + b for L, (a, b) in zip(x.shape[2:], pairs))
    if value == 0:
        buf = xp.zeros(shape, dtype=x.dtype)
    else:
        buf = xp.full(shape, value, dtype=x.dtype)
    buf[(slice(None), slice(None)) + tuple(slice(a, a + L) for L, (a, _) in
                                           zip(x.shape[2:], pairs))] = x
    return buf


def _cols(xp, x, k, s, d, p, o, g):
    """im2col of x (N, C, *L): (N, g, C/g * prod(k), prod(o)), C-contiguous
    (a fresh array; the convolution kernels use conv_gemm's scratch)."""
    N, C = x.shape[:2]
    K = (C // g) * _prod(k)
    P = _prod(o)
    if all(ki == 1 for ki in k) and all(si == 1 for si in s) and not any(p) \
            and x.flags.c_contiguous:
        return x.reshape(N, g, K, P)        # 1x1, stride 1: the data is the columns
    v = windows(xp, _pad(xp, x, p), k, s, d, o)
    return xp.ascontiguousarray(v).reshape(N, g, K, P)


def _conv_fwd(xp, x, w, out, k, s, d, p, g, workspace, bias=None):
    """out (N, F, *o) = correlation of x (N, C, *L) with w (F, C/g, *k)."""
    run_all(fwd_plan(xp, x, w, out, k, s, d, p, g, workspace, bias))


def _conv_bwd_data(xp, dy, w, dx, k, s, d, p, g, workspace, bias=None):
    """dx (N, C, *L) = gradient of _conv_fwd w.r.t. x for output gradient dy."""
    run_all(bwd_data_plan(xp, dy, w, dx, k, s, d, p, g, workspace, bias))


def _conv_bwd_weight(xp, dy, x, dw, k, s, d, p, g, workspace):
    """dw (F, C/g, *k) = gradient of _conv_fwd w.r.t. w for output gradient dy."""
    run_all(bwd_weight_plan(xp, dy, x, dw, k, s, d, p, g, workspace))


from .registry import optional as _optional  # noqa: E402


# ------------------------------------------------------------- Convolution


@register("Convolution", inputs=("data", "weight", "bias"),
          params=_conv_params(1024, False), infer=memo_rule(_conv_rule), attr_check=_conv_check,
          inline=window_cost)
@_optional("bias")
def Convolution(xp, data, weight, bias=None, *, out, kernel, stride, dilate, pad, num_filter,
                num_group=1, no_bias=False, workspace=1024, **_ignored):
    """Convolution(data, weight, bias, kernel, num_filter, stride=(), dilate=(), pad=(),
    num_group=1, no_bias=False, layout=None): 1-D/2-D/3-D convolution
    (cross-correlation) over channel-first data; weight is
    (num_filter, C/num_group, *kernel); bias (num_filter,) unless no_bias."""
    _conv_fwd(xp, data, weight, out, kernel, stride, dilate, pad, num_group, workspace,
              None if no_bias else bias)


def _bwd_data_rule(attrs, shapes, dtypes):
    return (shapes[1],), (dtypes[1],)


def _bwd_weight_rule(kind):
    def rule(attrs, shapes, dtypes):
        d = shapes[1]
        k, F, g = attrs["kernel"], attrs["num_filter"], attrs["num_group"]
        if kind == "conv":
            w = (F, d[1] // g) + tuple(k)
        else:
            w = (d[1], F // g) + tuple(k)
        return (w,), (dtypes[1],)
    return rule


@register("_backward_Convolution_data", inputs=("ograd", "data", "weight"),
          params=_conv_params(1024, False), infer=_bwd_data_rule, attr_check=_conv_check,
          inline=window_cost)
def _backward_Convolution_data(xp, ograd, data, weight, *, out, kernel, stride, dilate, pad,
                               num_group=1, workspace=1024, **_ignored):
    """The gradient of Convolution w.r.t. data (``data`` gives the shape)."""
    _conv_bwd_data(xp, ograd, weight, out, kernel, stride, dilate, pad, num_group, workspace)


@register("_backward_Convolution_weight", inputs=("ograd", "data"),
          params=_conv_params(1024, False), infer=_bwd_weight_rule("conv"),
          attr_check=_conv_check, inline=window_cost)
def _backward_Convolution_weight(xp, ograd, data, *, out, kernel, stride, dilate, pad,
                                 num_group=1, workspace=1024, **_ignored):
    """The gradient of Convolution w.r.t. weight."""
    _conv_bwd_weight(xp, ograd, data, out, kernel, stride, dilate, pad, num_group, workspace)

# ----------------------------------------------------------- Deconvolution


def _deconv_attrs(kernel, stride, dilate, pad, adj, target_shape):
    return {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad, "adj": adj,
            "target_shape": target_shape}


def _deconv_geom(attrs, dshape):
    """The padding of the Convolution a Deconvolution is the data gradient of."""
    _, pads = _deconv_out(attrs, dshape)
    return pads


@register("Deconvolution", inputs=("data", "weight", "bias"),
          params=_conv_params(512, True, deconv=True), infer=memo_rule(_deconv_rule),
          attr_check=_conv_check, inline=window_cost)
@_optional("bias")
def Deconvolution(xp, data, weight, bias=None, *, out, kernel, stride, dilate, pad, adj,
                  target_shape, num_filter, num_group=1, no_bias=True, workspace=512,
                  **_ignored):
    """Deconvolution(data, weight, bias, kernel, num_filter, stride=(), dilate=(), pad=(),
    adj=(), target_shape=(), num_group=1, no_bias=True): transposed convolution
    (the data gradient of Convolution); weight is (C, num_filter/num_group, *kernel);
    output size stride*(L-1) + dilated kernel - 2*pad + adj (or target_shape)."""
    pads = _deconv_geom(_deconv_attrs(kernel, stride, dilate, pad, adj, target_shape), data.shape)
    _conv_bwd_data(xp, data, weight, out, kernel, stride, dilate, pads, num_group, workspace,
                   None if no_bias else bias)


@register("_backward_Deconvolution_data", inputs=("ograd", "data", "weight"),
          params=_conv_params(512, True, deconv=True), infer=_bwd_data_rule,
          attr_check=_conv_check, inline=window_cost)
def _backward_Deconvolution_data(xp, ograd, data, weight, *, out, kernel, stride, dilate, pad,
                                 adj, target_shape, num_group=1, workspace=512, **_ignored):
    """The gradient of Deconvolution w.r.t. data: a Convolution of ograd."""
    pads = _deconv_geom(_deconv_attrs(kernel, stride, dilate, pad, adj, target_shape), data.shape)
    _conv_fwd(xp, ograd, weight, out, kernel, stride, dilate, pads, num_group, workspace)


@register("_backward_Deconvolution_weight", inputs=("ograd", "data"),
          params=_conv_params(512, True, deconv=True), infer=_bwd_weight_rule("deconv"),
          attr_check=_conv_check, inline=window_cost)
def _backward_Deconvolution_weight(xp, ograd, data, *, out, kernel, stride, dilate, pad, adj,
                                   target_shape, num_group=1, workspace=512, **_ignored):
    """The gradient of Deconvolution w.r.t. weight."""
    pads = _deconv_geom(_deconv_attrs(kernel, stride, dilate, pad, adj, target_shape), data.shape)
    # Deconvolution(x) is the data gradient of a Convolution of its output y;
    # that Convolution's weight gradient, with x as its output gradient, is ours
    _conv_bwd_weight(xp, data, ograd, out, kernel, stride, dilate, pads, num_group, workspace)

# ----------------------------------------------------------------- Pooling

_POOL_TYPES = ("max", "avg", "sum", "lp")


def _pool_check(op, attrs):
    k = attrs["kernel"] or ()
    attrs["kernel"] = k
    if attrs["pooling_convention"] == "same" and any(attrs["pad"] or ()):
        raise OpError("Pooling: Same pooling convention disables the use of pad parameter.")
    if attrs["pool_type"] == "lp":
        pv = attrs["p_value"]
        if pv is None:
            raise OpError("Pooling: pool_type='lp' needs p_value (1, 2 or 3)")
        if pv not in (1, 2, 3):
            raise OpError("Pooling: p_value=%r is not supported; expected 1, 2 or 3" % (pv,))
    if attrs["global_pool"]:
        if k and not 1 <= len(k) <= 3:
            raise OpError("Pooling: kernel=%s must have 1, 2 or 3 dimensions" % fmt(k))
        return
    if not k:
        raise OpError("Pooling: kernel is required unless global_pool=True")
    if not 1 <= len(k) <= 3:
        raise OpError("Pooling: kernel=%s must have 1, 2 or 3 dimensions (1-D, 2-D or 3-D "
                      "pooling)" % fmt(k))
    if any(x < 1 for x in k):
        raise OpError("Pooling: kernel=%s must be >= 1 on every axis" % fmt(k))
    nd = len(k)
    _fill_spatial(op, attrs, "stride", nd, 1, 1)
    if attrs["pad"] and len(attrs["pad"]) > nd:
        attrs["pad"] = tuple(attrs["pad"][:nd])     # MXNet's kernels read the first nd
    _fill_spatial(op, attrs, "pad", nd, 0, 0)
    lay = attrs["layout"]
    if lay is not None and lay not in (_LAYOUTS[nd], _LAST_LAYOUTS[nd]):
        raise OpError("Pooling: layout=%r does not match a %d-D kernel; expected %r or %r"
                      % (lay, nd, _LAYOUTS[nd], _LAST_LAYOUTS[nd]))


def _pool_geom(attrs, d):
    """(kernel, stride, pad, out spatial shape) of Pooling on data shape d."""
    if attrs["global_pool"]:
        nd = len(d) - 2
        return tuple(d[2:]), (1,) * nd, (0,) * nd, (1,) * nd
    k, s, p = attrs["kernel"], attrs["stride"], attrs["pad"]
    full = attrs["pooling_convention"] == "full"
    if attrs["pooling_convention"] == "same":
        # MXNet: ceil(L / stride) windows, each clipped to the input's end
        return k, s, p, tuple(-(-L // si) for L, si in zip(d[2:], s))
    o = []
    for i, (L, ki, si, pi) in enumerate(zip(d[2:], k, s, p)):
        if ki > L + 2 * pi:
            raise ShapeError("kernel=%s is larger than the padded input on spatial axis %d "
                             "(%d + 2*pad %d = %d); data shape %s"
                             % (fmt(k), i, L, pi, L + 2 * pi, fmt(d)))
        n = L + 2 * pi - ki
        o.append(1 + (-(-n // si) if full else n // si))
    return k, s, p, tuple(o)


_LAST_LAYOUTS = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _channels_last(attrs):
    return attrs.get("layout") in ("NWC", "NHWC", "NDHWC")


def _to_first(shape):
    """A channel-last shape (N, *spatial, C) as (N, C, *spatial)."""
    return (shape[0], shape[-1]) + tuple(shape[1:-1])


def _to_last(shape):
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def _cf(xp, a):
    """A channel-first view of a channel-last array (writes go through)."""
    return xp.moveaxis(a, -1, 1)


def _pool_rule(attrs, shapes, dtypes):
    d = shapes[0]
    if not 3 <= len(d) <= 5:
        raise ShapeError("data must be 3-D, 4-D or 5-D (NCW, NCHW or NCDHW), got shape %s"
                         % fmt(d))
    if attrs["pooling_convention"] == "same" and len(d) != 3:
        raise ShapeError("Pooling: Input data should be 3D in (batch, channel, x). Currently "
                         "'same' supports Max Pooling 1-D, got shape %s" % fmt(d))
    last = _channels_last(attrs)
    if last:
        if attrs["global_pool"] and attrs["layout"] != _LAST_LAYOUTS[len(d) - 2]:
            raise ShapeError("layout=%r does not match %d-D data %s"
                             % (attrs["layout"], len(d), fmt(d)))
        d = _to_first(d)
    if not attrs["global_pool"] and len(d) != len(attrs["kernel"]) + 2:
        nd = len(attrs["kernel"])
        raise ShapeError("data must be %d-D (%s) for kernel=%s, got shape %s"
                         % (nd + 2, _LAYOUTS[nd], fmt(attrs["kernel"]), fmt(d)))
    if dtypes[0].kind != "f":
        raise OpError("data dtype %s is not supported; use float16, float32 or float64 "
                      "(as in MXNet 1.9.1)" % dtypes[0].name)
    _, _, _, o = _pool_geom(attrs, d)
    oshape = tuple(d[:2]) + o
    return (_to_last(oshape) if last else oshape,), (dtypes[0],)


def _pool_pads(L, k, s, p, o):
    """(before, after) padding per axis so every window of the 'full'
    convention lies inside the buffer."""
    return [(pi, max(pi, (oi - 1) * si + ki - Li - pi)) for Li, ki, si, pi, oi in zip(L, k, s, p, o)]


def _offset_views(xpad, k, s, o):
    """(offset, strided view (N, C, *o)) for every kernel offset."""
    for off in itertools.product(*[range(ki) for ki in k]):
        yield off, xpad[(slice(None), slice(None)) +
                        tuple(slice(oi_, oi_ + si * (oi - 1) + 1, si)
                              for oi_, si, oi in zip(off, s, o))]


def _pool_divisor(xp, L, k, s, p, o, include_pad, dtype):
    """Per-window element counts of avg pooling as MXNet counts them:
    windows clipped to the padded input (the extra 'full' cells do not count);
    without count_include_pad, clipped to the data itself."""
    div = None
    nd = len(L)
    for i, (Li, ki, si, pi, oi) in enumerate(zip(L, k, s, p, o)):
        start = xp.arange(oi) * si - pi
        end = xp.minimum(start + ki, Li + pi)
        if not include_pad:
            start = xp.maximum(start, 0)
            end = xp.minimum(end, Li)
        n = (end - start).astype(dtype)
        n = n.reshape((1, 1) + tuple(oi if j == i else 1 for j in range(nd)))
        div = n if div is None else div * n
    return div


def _lp_pow(xp, x, pv):
    return x if pv == 1 else (x * x if pv == 2 else x * x * x)


def _lp_root(xp, x, pv):
    return x if pv == 1 else (xp.sqrt(x) if pv == 2 else xp.cbrt(x))


_POOL_PARAMS = [
    Param("kernel", p_shape, (), "window: (w,), (h, w) or (d, h, w); ignored with global_pool"),
    Param("pool_type", p_any, "max", choices=_POOL_TYPES),
    Param("global_pool", p_bool, False, "pool over all spatial positions"),
    Param("cudnn_off", p_bool, False, "ignored (cuDNN)"),
    Param("pooling_convention", p_any, "valid", "'valid' (floor) or 'full' (ceil)",
          choices=("valid", "full", "same")),
    Param("stride", p_shape, (), "default 1 per axis"),
    Param("pad", p_shape, (), "default 0 per axis"),
    Param("p_value", _p_opt_int, None, "power of lp pooling: 1, 2 or 3"),
    Param("count_include_pad", _p_opt_bool, None, "avg pooling counts padded cells "
          "(default True)"),
    Param("layout", p_any, None, choices=(None, "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"))]


def _pool_cost(attrs, shapes, oshapes):
    """Work of Pooling or its gradient, in ``window_cost``'s units: the
    larger array (the input) once per window cell, over 2. Not
    ``window_cost`` itself, which would count the gradient's data as a
    weight's channels. With it, a pooling splits over the workers from
    about 0.4 ms of one thread's work (a 64x20x24x24 LeNet layer, not the
    64x50x8x8 one, whose halves cost more to hand off than they save)."""
    n = max(_prod(s) for s in tuple(shapes) + tuple(oshapes))
    return n if attrs.get("global_pool") else n * _prod(attrs.get("kernel") or ()) // 2


@register("Pooling", params=_POOL_PARAMS, infer=memo_rule(_pool_rule), attr_check=_pool_check,
          inline=_pool_cost)
def Pooling(xp, data, *, out, kernel=(), pool_type="max", global_pool=False,
            pooling_convention="valid", stride=(), pad=(), p_value=None,
            count_include_pad=None, layout=None, **_ignored):
    """Pooling(data, kernel, pool_type='max', global_pool=False,
    pooling_convention='valid', stride=(1,..), pad=(0,..), p_value=None,
    count_include_pad=True, layout=None): max/avg/sum/lp pooling over 1-3
    spatial axes of channel-first (NCW, NCHW, NCDHW) or channel-last (NWC,
    NHWC, NDHWC) data."""
    if xp is np and _dnn.pool_run("fwd", (data,), out, dict(
            kernel=kernel, pool_type=pool_type, global_pool=global_pool, stride=stride, pad=pad,
            pooling_convention=pooling_convention, count_include_pad=count_include_pad,
            layout=layout)):
        return
    if layout in ("NWC", "NHWC", "NDHWC"):
        data, out = _cf(xp, data), _cf(xp, out)
    nd = data.ndim - 2
    if global_pool:
        axes = tuple(range(2, 2 + nd))
        if pool_type == "max":
            r = xp.max(data, axis=axes, keepdims=True)
        elif pool_type == "avg":
            r = xp.sum(data, axis=axes, keepdims=True) / _prod(data.shape[2:])
        elif pool_type == "sum":
            r = xp.sum(data, axis=axes, keepdims=True)
        else:
            r = _lp_root(xp, xp.sum(_lp_pow(xp, data, p_value), axis=axes, keepdims=True), p_value)
        out[...] = r
        return
    L = data.shape[2:]
    o = out.shape[2:]
    k, s, p = kernel, stride, pad
    # MXNet: a max window wholly in the padding gives the dtype's lowest value
    # (not -inf), an avg window with nothing to count gives 0 (not nan)
    fill = 0
    if pool_type == "max":
        dt = np.dtype(data.dtype)
        fill = np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min
    xpad = _pad(xp, data, _pool_pads(L, k, s, p, o), fill)
    first = True
    for _, v in _offset_views(xpad, k, s, o):
        if pool_type == "lp" and p_value != 1:
            v = _lp_pow(xp, v, p_value)
        if first:
            out[...] = v
            first = False
        elif pool_type == "max":
            xp.maximum(out, v, out=out)
        else:
            out += v
    if pool_type == "avg":
        div = _pool_divisor(xp, L, k, s, p, o, count_include_pad is not False, out.dtype)
        out /= xp.where(div == 0, 1, div).astype(out.dtype)
    elif pool_type == "lp" and p_value != 1:
        out[...] = _lp_root(xp, out, p_value)


@register("_backward_Pooling", inputs=("ograd", "data", "output"),
          params=_POOL_PARAMS,
          infer=lambda attrs, shapes, dtypes: ((shapes[1],), (dtypes[1],)),
          attr_check=_pool_check, inline=_pool_cost)
def _backward_Pooling(xp, ograd, data, output, *, out, kernel=(), pool_type="max",
                      global_pool=False, pooling_convention="valid", stride=(), pad=(),
                      p_value=None, count_include_pad=None, layout=None, **_ignored):
    """The gradient of Pooling w.r.t. data (max: to the first maximum of each
    window, as MXNet does)."""
    if xp is np and _dnn.pool_run("bwd", (ograd, data, output), out, dict(
            kernel=kernel, pool_type=pool_type, global_pool=global_pool, stride=stride, pad=pad,
            pooling_convention=pooling_convention, count_include_pad=count_include_pad,
            layout=layout)):
        return
    if layout in ("NWC", "NHWC", "NDHWC"):
        ograd, data, output, out = (_cf(xp, a) for a in (ograd, data, output, out))
    nd = data.ndim - 2
    if global_pool:
        if pool_type == "max":
            n = _prod(data.shape[2:])
            flat = data.reshape(data.shape[:2] + (n,))
            idx = xp.argmax(flat, axis=-1)
            hit = xp.arange(n).reshape(1, 1, n) == idx[..., None]
            out[...] = (hit * ograd.reshape(ograd.shape[:2] + (1,))).reshape(data.shape)
        elif pool_type == "avg":
            out[...] = ograd / _prod(data.shape[2:])
        elif pool_type == "sum":
            out[...] = ograd
        else:
            out[...] = _lp_grad(xp, ograd, data, output, p_value)
        return
    L = data.shape[2:]
    o = output.shape[2:]
    k, s, p = kernel, stride, pad
    pads = _pool_pads(L, k, s, p, o)
    if (pool_type in ("max", "avg", "sum") and all(si >= ki for si, ki in zip(s, k))
            and not any(a or b for a, b in pads)):
        _pool_bwd_disjoint(xp, ograd, data, output, out, k, s, p, o, pool_type,
                           count_include_pad)
        return
    dpad = xp.zeros(tuple(data.shape[:2]) + tuple(Li + a + b for Li, (a, b) in zip(L, pads)),
                    dtype=out.dtype)
    if pool_type == "max":
        xpad = _pad(xp, data, pads, -np.inf)
        left = xp.ones(output.shape, dtype=bool)     # windows whose max is not yet found
        for (_, v), (_, dv) in zip(_offset_views(xpad, k, s, o), _offset_views(dpad, k, s, o)):
            hit = (v == output) & left
            left &= ~hit
            dv += ograd * hit
    elif pool_type in ("avg", "sum"):
        g = ograd
        if pool_type == "avg":
            g = ograd / _pool_divisor(xp, L, k, s, p, o, count_include_pad is not False,
                                      ograd.dtype)
        for off, dv in _offset_views(dpad, k, s, o):
            dv += g
    else:
        xpad = _pad(xp, data, pads, 0)
        for (off, v), (_, dv) in zip(_offset_views(xpad, k, s, o), _offset_views(dpad, k, s, o)):
            dv += _lp_grad(xp, ograd, v, output, p_value)
    out[...] = dpad[(slice(None), slice(None)) +
                    tuple(slice(a, a + Li) for Li, (a, _) in zip(L, pads))]


def _pool_bwd_disjoint(xp, ograd, data, output, out, k, s, p, o, pool_type, include_pad):
    """Pooling's gradient when windows neither overlap nor need padding:
    every input cell is in at most one window, so each kernel offset writes
    its cells once (no padded buffer, no accumulation)."""
    L = data.shape[2:]
    if any((oi - 1) * si + ki < Li or si > ki for Li, oi, si, ki in zip(L, o, s, k)):
        out.fill(0)                 # cells outside every window get no gradient
    if pool_type == "max":
        left = xp.ones(output.shape, dtype=bool)    # windows whose max is not yet found
        hit = xp.empty(output.shape, dtype=bool)
        offs = list(zip(_offset_views(data, k, s, o), _offset_views(out, k, s, o)))
        for i, ((_, v), (_, dv)) in enumerate(offs):
            xp.equal(v, output, out=hit)
            hit &= left
            if i + 1 < len(offs):
                left ^= hit             # hit is a subset of left
            xp.multiply(ograd, hit, out=dv)
        out += 0    # -0.0 (a negative gradient times False) as MXNet's +0.0
        return
    g = ograd
    if pool_type == "avg":
        g = ograd / _pool_divisor(xp, L, k, s, p, o, include_pad is not False, ograd.dtype)
    for _, dv in _offset_views(out, k, s, o):
        dv[...] = g


def _bias_grad_rule(attrs, shapes, dtypes):
    if len(shapes) != 1 or len(shapes[0]) < 3:
        raise ShapeError("ograd must be one (batch, channel, spatial...) array, got %s"
                         % ", ".join(str(tuple(s)) for s in shapes))
    return ((shapes[0][1],),), (dtypes[0],)


@register("_backward_Convolution_bias", inputs=("ograd",), infer=_bias_grad_rule)
def _backward_convolution_bias(xp, ograd, *, out):
    """The bias gradient of Convolution and Deconvolution: ograd summed over
    every axis but the channels (axis 1)."""
    channel_sum(xp, ograd, out)


def _pool_rows(xp, ins, out, attrs):
    """Pooling and its gradient by ranges of (sample, channel) planes."""
    if _channels_last(attrs) or not out.flags.c_contiguous:
        return 0, None
    kern = _backward_Pooling if len(ins) == 3 else Pooling
    if xp is np and _dnn.pool_whole(attrs, out.shape):      # oneDNN: ranges of samples
        return out.shape[0], lambda lo, hi: kern(xp, *[a[lo:hi] for a in ins], out=out[lo:hi],
                                                 **attrs)
    nc = out.shape[0] * out.shape[1]
    flat = [a.reshape((nc, 1) + a.shape[2:]) for a in ins]
    fo = out.reshape((nc, 1) + out.shape[2:])

    def run(lo, hi):
        kern(xp, *[a[lo:hi] for a in flat], out=fo[lo:hi], **attrs)
    return nc, run


def _lp_grad(xp, g, x, y, pv):
    """MXNet's lp_grad: g * (x / y)^(p-1), 0 where y == 0 (p = 2, 3)."""
    if pv == 1:
        return g * xp.ones_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x / y
        r = r if pv == 2 else r * r
        return xp.where(y == 0, 0, g * r)

# ------------------------------------------------------------ gradient table
from ._grad import takes_need, set_grads  # noqa: E402


@takes_need
def _conv_grad(F, attrs, ins, outs, og, need=(True, True, True)):
    data, weight = ins[0], ins[1]
    g = og[0]
    grads = [F._internal._backward_Convolution_data(g, data, weight, **attrs) if need[0] else None,
             F._internal._backward_Convolution_weight(g, data, **attrs) if need[1] else None]
    if len(ins) == 3:
        grads.append(F._internal._backward_Convolution_bias(g)
                     if not attrs["no_bias"] and need[2] else None)
    return grads


@takes_need
def _deconv_grad(F, attrs, ins, outs, og, need=(True, True, True)):
    data, weight = ins[0], ins[1]
    g = og[0]
    grads = [F._internal._backward_Deconvolution_data(g, data, weight, **attrs) if need[0] else None,
             F._internal._backward_Deconvolution_weight(g, data, **attrs) if need[1] else None]
    if len(ins) == 3:
        grads.append(F._internal._backward_Convolution_bias(g)
                     if not attrs["no_bias"] and need[2] else None)
    return grads


def _bias_grad_grad(F, attrs, ins, outs, og):
    g = ins[0]
    return [F.broadcast_like(og[0].reshape((1, -1) + (1,) * (g.ndim - 2)), g)]


def _pool_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_Pooling(og[0], ins[0], outs[0], **attrs)]


set_grads({"Convolution": _conv_grad, "Deconvolution": _deconv_grad, "Pooling": _pool_grad,
           "_backward_Convolution_bias": _bias_grad_grad})

# ------------------------------------------------- cost and worker splits


def _macs(big, chans, attrs):
    return _prod(big) * chans * _prod(attrs.get("kernel") or ()) // 8


def _bwd_conv_data_cost(attrs, shapes, oshapes):
    """(ograd, data, weight): ograd size x weight's channels per group x kernel."""
    return _macs(shapes[0], shapes[2][1], attrs)


def _bwd_conv_weight_cost(attrs, shapes, oshapes):
    """(ograd, data): ograd size x data channels per group x kernel."""
    return _macs(shapes[0], shapes[1][1] // attrs["num_group"], attrs)


def _deconv_cost(attrs, shapes, oshapes):
    """(data, weight[, bias]): every input cell meets weight's channels per
    group x kernel."""
    return _macs(shapes[0], shapes[1][1], attrs)


def _bwd_deconv_data_cost(attrs, shapes, oshapes):
    """(ograd, data, weight): a Convolution of ograd giving data's shape."""
    return _macs(shapes[1], shapes[2][1], attrs)


def _bwd_deconv_weight_cost(attrs, shapes, oshapes):
    """(ograd, data): data size x ograd channels per group x kernel."""
    return _macs(shapes[1], shapes[0][1] // attrs["num_group"], attrs)


def _conv_attrs(a):
    return (a["kernel"], a["stride"], a["dilate"], a["pad"], a["num_group"], a["workspace"])


def _rows_conv(xp, ins, out, a):
    bias = ins[2] if len(ins) > 2 and not a["no_bias"] else None
    k, s, d, p, g, ws = _conv_attrs(a)
    return fwd_plan(xp, ins[0], ins[1], out, k, s, d, p, g, ws, bias)


def _rows_conv_data(xp, ins, out, a):
    k, s, d, p, g, ws = _conv_attrs(a)
    return bwd_data_plan(xp, ins[0], ins[2], out, k, s, d, p, g, ws)


def _rows_conv_weight(xp, ins, out, a):
    k, s, d, p, g, ws = _conv_attrs(a)
    return bwd_weight_plan(xp, ins[0], ins[1], out, k, s, d, p, g, ws)


def _deconv_pads(a, data):
    return _deconv_geom(_deconv_attrs(a["kernel"], a["stride"], a["dilate"], a["pad"],
                                      a["adj"], a["target_shape"]), data.shape)


def _rows_deconv(xp, ins, out, a):
    bias = ins[2] if len(ins) > 2 and not a["no_bias"] else None
    k, s, d, _, g, ws = _conv_attrs(a)
    return bwd_data_plan(xp, ins[0], ins[1], out, k, s, d, _deconv_pads(a, ins[0]), g, ws, bias)


def _rows_deconv_data(xp, ins, out, a):
    k, s, d, _, g, ws = _conv_attrs(a)
    return fwd_plan(xp, ins[0], ins[2], out, k, s, d, _deconv_pads(a, ins[1]), g, ws)


def _rows_deconv_weight(xp, ins, out, a):
    k, s, d, _, g, ws = _conv_attrs(a)
    return bwd_weight_plan(xp, ins[1], ins[0], out, k, s, d, _deconv_pads(a, ins[1]), g, ws)


def _install():
    from .registry import set_rows
    for name, rows, cost in (
            ("Convolution", _rows_conv, window_cost),
            ("_backward_Convolution_data", _rows_conv_data, _bwd_conv_data_cost),
            ("_backward_Convolution_weight", _rows_conv_weight, _bwd_conv_weight_cost),
            ("Deconvolution", _rows_deconv, _deconv_cost),
            ("_backward_Deconvolution_data", _rows_deconv_data, _bwd_deconv_data_cost),
            ("_backward_Deconvolution_weight", _rows_deconv_weight, _bwd_deconv_weight_cost)):
        set_rows(name, rows, inline=cost)
    for name in ("Pooling", "_backward_Pooling"):
        set_rows(name, _pool_rows)


_install()
