"""Pooling (max, avg; global; MXNet's 'valid' and 'full' conventions) and
its gradient on oneDNN, over the user's channel-first buffers.

MXNet's geometry maps onto oneDNN's left/right padding: 'valid' pads p on
both sides (oneDNN floors the window count as MXNet does), 'full' pads the
right side up to the last window. oneDNN's avg with padding counts every
kernel cell, MXNet clips windows to the symmetrically padded input: they
differ only where a 'full' window runs past it, which stays with numpy, as
do 'same', sum/lp pooling and channel-last layouts.

The max gradient needs the forward's workspace (where each maximum was):
the backward kernel gets data, not the workspace, so it reruns the forward
in training mode into scratch first.
"""
from __future__ import annotations

import math

import numpy as np

from . import _cache, _exec, _lib as L, _threads

_F32 = np.dtype(np.float32)


def _geom(attrs, xs, ys):
    nd = len(xs) - 2
    if attrs.get("global_pool"):
        return tuple(xs[2:]), (1,) * nd, (0,) * nd, (0,) * nd
    k, s, p = tuple(attrs["kernel"]), tuple(attrs["stride"]), tuple(attrs["pad"])
    if attrs.get("pooling_convention", "valid") == "full":
        pr = tuple(max(pi, (o - 1) * si + ki - Li - pi)
                   for Li, o, ki, si, pi in zip(xs[2:], ys[2:], k, s, p))
    else:
        pr = p
    return k, s, p, pr


def _alg(attrs, p, pr):
    t = attrs.get("pool_type", "max")
    if t == "max":
        return L.POOL_MAX
    if t != "avg":
        return None
    if attrs.get("count_include_pad") is False:
        return L.POOL_AVG_EXC
    if any(b > a for a, b in zip(p, pr)):
        return None     # a 'full' window past the padded input: MXNet's divisor differs
    return L.POOL_AVG_INC


# oneDNN's jit pooling wants channel-blocked (aBc8b, aBcd8b, aBcde8b) or
# channels-last (acb, acdb, acdeb) data; on plain NCHW it has only a slow
# reference loop. Channels in whole 8-blocks take the blocked layout; other
# counts take channels-last, which pads nothing (a blocked layout would
# pool the padding too: 20 channels as 24, 50 as 56), for the same reorder
# cost (one pass each way). Measured on 2 AVX-512 cores, one thread, max
# 2x2 (ms, numpy / 8-blocked / channels-last, fwd and bwd):
#   64x20x24x24   fwd 0.64 / 0.64 / 0.50   bwd 1.81 / 1.21 / 1.12
#   64x50x8x8     fwd 0.19 / 0.15 / 0.14   bwd 0.47 / 0.35 / 0.33
#   16x64x112x112 (3x3 s2 p1)  fwd 96 / 15 / 23   bwd 220 / 33 / 38
_BLOCKED = {3: 69, 4: 102, 5: 142}
_LAST = {3: 15, 4: 22, 5: 33}
BLOCKED = True
MIN_CHANNELS = 8    # below, a vector of channels is mostly tail: numpy's kernel


def _md(shape):
    if not BLOCKED:
        return L.MD.plain(shape)
    return L.MD.plain(shape, (_BLOCKED if shape[1] % 8 == 0 else _LAST)[len(shape)])


def _pd_fwd(prop, alg, xs, ys, geo):
    k, s, p, pr = geo
    src, dst = _md(xs), _md(ys)
    return L.create_pd("dnnl_pooling_forward_primitive_desc_create", L.engine(), prop, alg,
                       src.h, dst.h, L.dims(s), L.dims(k), L.dims([0] * len(k)), L.dims(p),
                       L.dims(pr))


def _build(kind, alg, xs, ys, geo):
    if kind == "fwd":
        pd = _pd_fwd(L.FWD_INFERENCE, alg, xs, ys, geo)
        if pd is None:
            return None
        prim = L.Primitive(pd)
        return _exec.Call(prim, [_exec.Io(prim, L.A_SRC, L.Q_SRC, L.MD.plain(xs)),
                                 _exec.Io(prim, L.A_DST, L.Q_DST, L.MD.plain(ys), out=True)])

    hint = _pd_fwd(L.FWD_TRAINING, alg, xs, ys, geo)
    if hint is None:
        return None
    k, s, p, pr = geo
    fprim = L.Primitive(hint)       # owns the hint from here
    dx, dy = _md(xs), _md(ys)
    pd = L.create_pd("dnnl_pooling_backward_primitive_desc_create", L.engine(), alg, dx.h, dy.h,
                     L.dims(s), L.dims(k), L.dims([0] * len(k)), L.dims(p), L.dims(pr), hint)
    if pd is None:
        return None
    prim = L.Primitive(pd)
    bwd = _exec.Call(prim, [_exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, L.MD.plain(ys)),
                            _exec.Io(prim, L.A_DIFF_SRC, L.Q_DIFF_SRC, L.MD.plain(xs), out=True)],
                     extra=((L.A_WORKSPACE, L.Q_WORKSPACE),))
    fwd = None
    if alg == L.POOL_MAX:
        # the scratch dst keeps the user's output untouched
        fwd = _exec.Call(fprim, [_exec.Io(fprim, L.A_SRC, L.Q_SRC, L.MD.plain(xs))],
                         extra=((L.A_DST, L.Q_DST), (L.A_WORKSPACE, L.Q_WORKSPACE)))
    return fwd, bwd


def run(kind, ins, out, attrs):
    """Pooling (``kind`` 'fwd', ins = (data,)) or its gradient ('bwd', ins =
    (ograd, data, output)) into ``out``; False where oneDNN does not take it."""
    x = ins[0] if kind == "fwd" else ins[1]
    if not takes(attrs, x.shape):
        return False
    y = out if kind == "fwd" else ins[0]
    arrs = (x, y, out)
    if not all(a.dtype == _F32 and a.flags.c_contiguous and a.size for a in arrs) \
            or not 3 <= x.ndim <= 5:
        return False
    xs, ys = x.shape, y.shape
    geo = _geom(attrs, xs, ys)
    alg = _alg(attrs, geo[2], geo[3])
    if alg is None:
        return False
    nthr = _threads.width(math.prod(xs) * 4)
    key = ("pool", kind, alg, xs, ys, geo, nthr)
    with _threads.inside(nthr):
        call = _cache.get(key, lambda: _build(kind, alg, xs, ys, geo))
        if call is None:
            return False
        if kind == "fwd":
            call.run({L.A_SRC: x, L.A_DST: out})
            return True
        fwd, bwd = call
        if fwd is not None:
            fwd.run({L.A_SRC: x})       # leaves the workspace in this thread's scratch
        bwd.run({L.A_DIFF_DST: y, L.A_DIFF_SRC: out})
    return True



def takes(attrs, shape):
    """Whether oneDNN takes this pooling (the engine then leaves it unsplit).

    Global pooling is a plain reduction numpy does as fast; fewer than
    ``MIN_CHANNELS`` channels leave oneDNN's channel vectors mostly empty.
    (Until 2026-12-03 channels had to fill 8-blocks: measured on 2 AVX2
    cores, padded blocks cost more than the pooling saved; channels-last
    now takes the other counts without padding.)"""
    return attrs.get("layout") not in ("NWC", "NHWC", "NDHWC") and \
        attrs.get("pooling_convention", "valid") != "same" and \
        attrs.get("pool_type", "max") in ("max", "avg") and \
        not attrs.get("global_pool") and len(shape) >= 3 and shape[1] >= MIN_CHANNELS
