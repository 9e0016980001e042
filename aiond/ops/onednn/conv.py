"""Convolution forward, data gradient and weight gradient on oneDNN.

Deconvolution and its gradients reach here through the same three plans
(``conv_gemm``): a Deconvolution is the data gradient of a Convolution.

Activations stay in the user's NCHW buffers at the edges of each call; the
primitive picks its own layouts (``any``) and the arguments whose layout
differs are reordered around it (``_exec``).
"""
from __future__ import annotations

import math

import numpy as np

from . import _cache, _exec, _lib as L, _threads, _wcache

_F32 = np.dtype(np.float32)


def _ok(a):
    return a.dtype == _F32 and a.size > 0 and all(s > 0 and s % 4 == 0 for s in a.strides)


def _geom(xs, ys, k, s, d, p):
    dk = [(ki - 1) * di + 1 for ki, di in zip(k, d)]
    pr = [(o - 1) * si + dki - L_ - pi for o, si, dki, L_, pi in zip(ys[2:], s, dk, xs[2:], p)]
    return (L.dims(s), L.dims([di - 1 for di in d]), L.dims(p), L.dims(pr))


def _wshape(ws, g):
    if g == 1:
        return tuple(ws)
    return (g, ws[0] // g) + tuple(ws[1:])


def _fwd_pd(prop, xs, ws, ys, bias, geo, relu=False):
    src, wts, dst = L.MD.any(xs), L.MD.any(ws), L.MD.any(ys)
    bmd = L.MD.plain((ys[1],)) if bias else None
    return L.create_pd("dnnl_convolution_forward_primitive_desc_create", L.engine(), prop,
                       L.CONV_DIRECT, src.h, wts.h, bmd.h if bmd else None, dst.h, *geo,
                       attr=L.relu_attr() if relu else None)


def _build(kind, xs, ws, ys, g, k, s, d, p, bias, strides, relu=False):
    geo = _geom(xs, ys, k, s, d, p)
    wg = _wshape(ws, g)
    sx, sw, sy = strides
    ux = L.MD.plain(xs) if sx is None else L.MD.strided(xs, sx)
    uw = L.MD.plain(wg) if sw is None else L.MD.strided(wg, sw)
    uy = L.MD.plain(ys) if sy is None else L.MD.strided(ys, sy)
    if kind == "fwd":
        pd = _fwd_pd(L.FWD_INFERENCE, xs, wg, ys, bias, geo, relu)
        if pd is None:
            return None
        prim = L.Primitive(pd)
        ios = [_exec.Io(prim, L.A_SRC, L.Q_SRC, ux), _exec.Io(prim, L.A_WEIGHTS, L.Q_WEIGHTS, uw),
               _exec.Io(prim, L.A_DST, L.Q_DST, uy, out=True)]
        if bias:
            ios.append(_exec.Vec(L.A_BIAS, ys[1]))
        return _exec.Call(prim, ios)
    hint = _fwd_pd(L.FWD_TRAINING, xs, wg, ys, False, geo)
    if hint is None:
        return None
    try:
        if kind == "bwd_data":
            ax, aw, ay = L.MD.any(xs), L.MD.any(wg), L.MD.any(ys)
            pd = L.create_pd("dnnl_convolution_backward_data_primitive_desc_create", L.engine(),
                             L.CONV_DIRECT, ax.h, aw.h, ay.h, *geo, hint)
            if pd is None:
                return None
            prim = L.Primitive(pd)
            ios = [_exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, uy),
                   _exec.Io(prim, L.A_WEIGHTS, L.Q_WEIGHTS, uw),
                   _exec.Io(prim, L.A_DIFF_SRC, L.Q_DIFF_SRC, ux, out=True)]
        else:
            ax, aw, ay = L.MD.any(xs), L.MD.any(wg), L.MD.any(ys)
            pd = L.create_pd("dnnl_convolution_backward_weights_primitive_desc_create",
                             L.engine(), L.CONV_DIRECT, ax.h, aw.h, None, ay.h, *geo, hint)
            if pd is None:
                return None
            prim = L.Primitive(pd)
            ios = [_exec.Io(prim, L.A_SRC, L.Q_SRC, ux),
                   _exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, uy),
                   _exec.Io(prim, L.A_DIFF_WEIGHTS, L.Q_DIFF_WEIGHTS, uw, out=True)]
        return _exec.Call(prim, ios)
    finally:
        L.lib().dnnl_primitive_desc_destroy(hint)


def _strides(a):
    return None if a.flags.c_contiguous else tuple(s // 4 for s in a.strides)


_BLOCK = 8      # channels per range edge: oneDNN's AVX2 channel block


def _units(kind, x, w, y, g):
    """How the engine may split the call: ('n', samples) for a batch, else
    ('c', 8-channel blocks) of the channels each range owns (filters for
    the forward and the weight gradient, input channels for the data
    gradient), ('-', 1) when neither works (groups, at batch 1)."""
    if kind != "bwd_weight" and x.shape[0] >= 2:
        return "n", x.shape[0]
    if g != 1:
        return "-", 1
    C = x.shape[1] if kind == "bwd_data" else w.shape[0]
    return "c", -(-C // _BLOCK)


def _slices(kind, axis, lo, hi, x, w, y, bias):
    """The (x, w, y, bias) of range ``[lo, hi)``."""
    if axis == "n":
        return x[lo:hi], w, y[lo:hi], bias
    if axis == "-":
        return x, w, y, bias
    c0, c1 = lo * _BLOCK, hi * _BLOCK
    b = None if bias is None else bias[c0:c1]
    if kind == "bwd_data":          # input channels: dx and w's axis 1
        return x[:, c0:c1], w[:, c0:c1], y, b
    return x, w[c0:c1], y[:, c0:c1], b


def _wstrides(w, g):
    if w.flags.c_contiguous:
        return None
    return tuple(s // 4 for s in w.strides) if g == 1 else False


def worth_it(kind, x, w, y, g, kept=False):
    """Whether oneDNN beats the numpy kernel here (measured on 2 AVX2 cores,
    one thread per call, 2026-12-02): its AVX2 kernels work on 8-channel
    blocks, so channel counts off the block pay for padded reorders there
    (LeNet's 1 -> 20 -> 50 channels run faster on numpy's GEMM; not so on
    AVX-512, see below; a first layer of 3
    channels into 64 filters is fine forward); and a weight reordered on
    every call (``kept`` False: its version is unknown here, ``_wcache``)
    costs more than it saves where the weight outweighs the output (late
    layers at batch 1). A 1x1 kernel is one GEMM on the data as it
    lies for numpy, while oneDNN pays a reorder of input and output around
    it (2-4x slower, batch 1 and 16)."""
    C, F = x.shape[1], y.shape[1]
    if F % _BLOCK or (C % _BLOCK and (kind != "fwd" or C > 4)):
        # on AVX-512 oneDNN pads nothing: LeNet's 20 -> 50 layer runs 1.3x
        # faster there (forward and gradients, 2-core Xeon, 2026-12-03), and
        # a first layer's weight gradient (3 -> 64, 7x7) 1.8x (18 vs 31 ms
        # at batch 16); not with filters off the block (LeNet's 1 -> 20:
        # 5 % slower than numpy's)
        first = kind == "bwd_weight" and C <= 4 and F % _BLOCK == 0
        if not ((C >= _BLOCK or first) and F >= _BLOCK and L.wide_isa()):
            return False
    if all(ki == 1 for ki in w.shape[2:]):
        return False
    return kept or w.size <= 8 * y.size


def plan(kind, a, b, out, k, s, d, p, g, bias=None, relu=False, wst=None):
    """See ``conv_plan``: fwd (a=x, b=w, out=y), bwd_data (a=dy, b=w,
    out=dx), bwd_weight (a=dy, b=x, out=dw). ``relu``: a ReLU applied to
    the forward's output as a post-op. ``wst``: the weight's (var, version)
    stamp when the caller knows it (``_wcache``), else looked up.

    The plan's units are samples or 8-channel blocks (``_units``), so the
    engine shares one convolution among its workers as it does the numpy
    kernel's, each range a oneDNN call on one thread; the ranges depend
    only on the shapes and the worker count, and no range reduces over
    another's (the weight gradient splits by filters), so the result is the
    same bits however the engine split it."""
    nd = len(k)
    if nd not in (1, 2, 3) or any(isinstance(pi, (tuple, list)) for pi in p):
        return None
    arrs = (a, b, out) if bias is None else (a, b, out, bias)
    if not all(_ok(x) for x in arrs):
        return None
    if kind == "fwd":
        x, w, y = a, b, out
    elif kind == "bwd_data":
        y, w, x = a, b, out
    else:
        y, x, w = a, b, out
    # a weight read by the forward or the data gradient is kept reordered
    # while its variable's version holds (inference, or one step's two uses)
    if wst is None and kind != "bwd_weight":
        wst = _wcache.stamp(w)
    if (bias is not None and not bias.flags.c_contiguous) or _wstrides(w, g) is False \
            or not worth_it(kind, x, w, y, g, wst is not None):
        return None
    fused = bias is not None and kind == "fwd"     # the data gradient adds it after
    axis, n = _units(kind, x, w, y, g)
    geo = (tuple(k), tuple(s), tuple(d), tuple(p), g)
    relu = bool(relu) and kind == "fwd"

    def run(lo, hi):
        xs_, ws_, ys_, bs_ = _slices(kind, axis, lo, hi, x, w, y, bias)
        nthr = _threads.width(math.prod(ys_.shape) * math.prod(ws_.shape[1:]))
        st = (_strides(xs_), _wstrides(ws_, g), _strides(ys_))
        key = ("conv", kind, xs_.shape, ws_.shape, ys_.shape, st, geo, fused, nthr, relu)
        with _threads.inside(nthr):
            call = _cache.get(key, lambda: _build(kind, xs_.shape, ws_.shape, ys_.shape, g, k,
                                                  s, d, p, fused, st, relu))
            if call is None:
                raise _lib_refused(kind, xs_.shape)
            if kind == "fwd":
                arrays = {L.A_SRC: xs_, L.A_WEIGHTS: ws_, L.A_DST: ys_}
                if bs_ is not None:
                    arrays[L.A_BIAS] = bs_
            elif kind == "bwd_data":
                arrays = {L.A_DIFF_DST: ys_, L.A_WEIGHTS: ws_, L.A_DIFF_SRC: xs_}
            else:
                arrays = {L.A_SRC: xs_, L.A_DIFF_DST: ys_, L.A_DIFF_WEIGHTS: ws_}
            call.run(arrays, None if wst is None else (L.A_WEIGHTS, key, wst))
        if bs_ is not None and not fused:
            np.add(xs_, bs_.reshape((1, -1) + (1,) * nd), out=xs_)

    # build the whole call's primitive now: a case oneDNN refuses goes to
    # the numpy kernel before anything ran
    xs0, ws0, ys0, _ = _slices(kind, axis, 0, n, x, w, y, bias)
    st0 = (_strides(xs0), _wstrides(ws0, g), _strides(ys0))
    nthr0 = _threads.width(math.prod(ys0.shape) * math.prod(ws0.shape[1:]))
    key0 = ("conv", kind, xs0.shape, ws0.shape, ys0.shape, st0, geo, fused, nthr0, relu)
    with _threads.inside(nthr0):
        if _cache.get(key0, lambda: _build(kind, xs0.shape, ws0.shape, ys0.shape, g, k, s, d,
                                           p, fused, st0, relu)) is None:
            return None
    return n, run


def _lib_refused(kind, shape):
    return L.OneDNNError("oneDNN has no convolution %s for a part of shape %s"
                         % (kind, (shape,)))
