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

from . import _cache, _exec, _lib as L, _threads

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


def _fwd_pd(prop, xs, ws, ys, bias, geo, user=False):
    mk = L.MD.plain if user else L.MD.any
    src, wts, dst = mk(xs), mk(ws), mk(ys)
    bmd = L.MD.plain((ys[1],)) if bias else None
    pd = L.create_pd("dnnl_convolution_forward_primitive_desc_create", L.engine(), prop,
                     L.CONV_DIRECT, src.h, wts.h, bmd.h if bmd else None, dst.h, *geo, None)
    return pd, bmd


def _build(kind, xs, ws, ys, g, k, s, d, p, bias, strides):
    geo = _geom(xs, ys, k, s, d, p)
    wg = _wshape(ws, g)
    sx, sw, sy = strides
    ux = L.MD.plain(xs) if sx is None else L.MD.strided(xs, sx)
    uw = L.MD.plain(wg)
    uy = L.MD.plain(ys) if sy is None else L.MD.strided(ys, sy)
    if kind == "fwd":
        pd, bmd = _fwd_pd(L.FWD_INFERENCE, xs, wg, ys, bias, geo)
        if pd is None:
            return None
        prim = L.Primitive(pd)
        ios = [_exec.Io(prim, L.A_SRC, L.Q_SRC, ux), _exec.Io(prim, L.A_WEIGHTS, L.Q_WEIGHTS, uw),
               _exec.Io(prim, L.A_DST, L.Q_DST, uy, out=True)]
        if bias:
            ios.append(_BiasIo(bmd))
        return _exec.Call(prim, ios)
    hint, _ = _fwd_pd(L.FWD_TRAINING, xs, wg, ys, False, geo)
    if hint is None:
        return None
    try:
        if kind == "bwd_data":
            mx, mw, my = L.MD.any(xs), L.MD.any(wg), L.MD.any(ys)
            pd = L.create_pd("dnnl_convolution_backward_data_primitive_desc_create", L.engine(),
                             L.CONV_DIRECT, mx.h, mw.h, my.h, *geo, hint, None)
            if pd is None:
                return None
            prim = L.Primitive(pd)
            ios = [_exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, uy),
                   _exec.Io(prim, L.A_WEIGHTS, L.Q_WEIGHTS, uw),
                   _exec.Io(prim, L.A_DIFF_SRC, L.Q_DIFF_SRC, ux, out=True)]
        else:
            mx, mw, my = L.MD.any(xs), L.MD.any(wg), L.MD.any(ys)
            pd = L.create_pd("dnnl_convolution_backward_weights_primitive_desc_create",
                             L.engine(), L.CONV_DIRECT, mx.h, mw.h, None, my.h, *geo, hint, None)
            if pd is None:
                return None
            prim = L.Primitive(pd)
            ios = [_exec.Io(prim, L.A_SRC, L.Q_SRC, ux),
                   _exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, uy),
                   _exec.Io(prim, L.A_DIFF_WEIGHTS, L.Q_DIFF_WEIGHTS, uw, out=True)]
        return _exec.Call(prim, ios)
    finally:
        L.lib().dnnl_primitive_desc_destroy(hint)


class _BiasIo:
    """The bias is always a plain vector: no reorder."""
    __slots__ = ("arg", "user", "inner", "reorder", "size", "out")

    def __init__(self, md):
        self.arg, self.user, self.inner, self.reorder, self.size, self.out = \
            L.A_BIAS, md, None, None, 0, False


def _strides(a):
    return None if a.flags.c_contiguous else tuple(s // 4 for s in a.strides)


def plan(kind, a, b, out, k, s, d, p, g, bias=None):
    """See ``conv_plan``: fwd (a=x, b=w, out=y), bwd_data (a=dy, b=w,
    out=dx), bwd_weight (a=dy, b=x, out=dw)."""
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
    if not w.flags.c_contiguous or (bias is not None and not bias.flags.c_contiguous):
        return None
    xs, ws, ys = x.shape, w.shape, y.shape
    work = math.prod(ys) * math.prod(ws[1:])
    nthr = _threads.width(work)
    sx, sy = _strides(x), _strides(y)
    fused = bias is not None and kind == "fwd"     # the data gradient adds it after
    key = ("conv", kind, xs, ws, ys, sx, sy, tuple(k), tuple(s), tuple(d), tuple(p), g,
           fused, nthr)
    with _threads.inside(nthr):
        call = _cache.get(key, lambda: _build(kind, xs, ws, ys, g, k, s, d, p,
                                              fused, (sx, None, sy)))
    if call is None:
        return None
    if kind == "fwd":
        arrays = {L.A_SRC: x, L.A_WEIGHTS: w, L.A_DST: y}
        if bias is not None:
            arrays[L.A_BIAS] = bias
    elif kind == "bwd_data":
        arrays = {L.A_DIFF_DST: y, L.A_WEIGHTS: w, L.A_DIFF_SRC: x}
    else:
        arrays = {L.A_SRC: x, L.A_DIFF_DST: y, L.A_DIFF_WEIGHTS: w}

    def run(lo, hi):
        with _threads.inside(nthr):
            call.run(arrays)
        if bias is not None and not fused:
            np.add(x, bias.reshape((1, -1) + (1,) * nd), out=x)
    return 1, run
