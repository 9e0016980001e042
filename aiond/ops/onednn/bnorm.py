"""BatchNorm's backward on oneDNN, for float32 channel-first (axis=1) data
in its own NC... buffer.

Only the backward: measured on 2 AVX2 cores (one thread, 2026-12-02),
oneDNN's BatchNorm on plain NCHW data is 2-7x slower forward than the numpy
kernel's two vectorised passes (a blocked layout would cost a reorder each
way, as much as the op), while its backward beats numpy's from about 2 M
elements (16x64x56x56: 15 vs 23 ms inference-mode, 20 vs 28 ms training)
and loses below (per-call overhead, small planes).

oneDNN takes the biased variance; MXNet's kernels keep the inverse standard
deviation, so it is turned back into the variance on the C-sized vector
here. The moving statistics and fix_gamma stay with the numpy kernel.
"""
from __future__ import annotations

import numpy as np

from . import _cache, _exec, _lib as L, _threads

_F32 = np.dtype(np.float32)
BWD_MIN = 1 << 21       # elements: below, numpy's backward is faster


def _ok(arrs):
    return all(a.dtype == _F32 and a.flags.c_contiguous for a in arrs)


def _fwd_pd(prop, xs, eps, flags):
    md = L.MD.plain(xs)
    return L.create_pd("dnnl_batch_normalization_forward_primitive_desc_create", L.engine(),
                       prop, md.h, md.h, float(eps), flags)


def _build_bwd(xs, eps, batch):
    C = xs[1]
    flags = L.USE_SCALE | L.USE_SHIFT | (0 if batch else L.USE_GLOBAL_STATS)
    hint = _fwd_pd(L.FWD_TRAINING, xs, eps, flags)
    if hint is None:
        return None
    try:
        md = L.MD.plain(xs)
        pd = L.create_pd("dnnl_batch_normalization_backward_primitive_desc_create", L.engine(),
                         L.BACKWARD, md.h, md.h, md.h, float(eps), flags, hint)
    finally:
        L.lib().dnnl_primitive_desc_destroy(hint)
    if pd is None:
        return None
    prim = L.Primitive(pd)
    ios = [_exec.Io(prim, L.A_SRC, L.Q_SRC, L.MD.plain(xs)),
           _exec.Io(prim, L.A_DIFF_DST, L.Q_DIFF_DST, L.MD.plain(xs)),
           _exec.Io(prim, L.A_DIFF_SRC, L.Q_DIFF_SRC, L.MD.plain(xs), out=True),
           _exec.Vec(L.A_MEAN, C), _exec.Vec(L.A_VARIANCE, C), _exec.Vec(L.A_SCALE, C),
           _exec.Vec(L.A_DIFF_SCALE, C, out=True), _exec.Vec(L.A_DIFF_SHIFT, C, out=True)]
    return _exec.Call(prim, ios)


def backward(ograd, data, gamma, mu, istd, dx, dgamma, dbeta, *, eps, fix_gamma, batch):
    """dx, dgamma, dbeta of BatchNorm for the statistics ``mu`` and inverse
    std ``istd`` (batch or moving, as the numpy kernel chose them)."""
    arrs = (ograd, data, gamma, dx, dgamma, dbeta)
    if data.size < BWD_MIN or not _ok(arrs) or ograd.shape != data.shape or not 2 <= data.ndim <= 5:
        return False
    xs, C = data.shape, data.shape[1]
    nthr = _threads.width(data.size * 8)
    key = ("bn_bwd", xs, float(eps), batch, nthr)
    with _threads.inside(nthr):
        call = _cache.get(key, lambda: _build_bwd(xs, eps, batch))
        if call is None:
            return False
        mu = np.ascontiguousarray(mu, _F32)
        istd = np.asarray(istd, _F32)
        # oneDNN takes the variance and adds eps itself
        var = (1.0 / (istd * istd) - np.float32(eps)).astype(_F32)
        scale = np.ones(C, _F32) if fix_gamma else gamma
        call.run({L.A_SRC: data, L.A_DIFF_DST: ograd, L.A_DIFF_SRC: dx, L.A_MEAN: mu,
                  L.A_VARIANCE: var, L.A_SCALE: scale, L.A_DIFF_SCALE: dgamma,
                  L.A_DIFF_SHIFT: dbeta})
    if fix_gamma:
        dgamma.fill(0)
    return True
