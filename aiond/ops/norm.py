"""BatchNorm, LayerNorm and InstanceNorm with MXNet 1.9.1's arguments,
defaults, outputs and training behaviour.

BatchNorm follows MXNet's CPU operator exactly:

* training (``autograd.record()`` / ``train_mode``, and not
  ``use_global_stats``): normalise with the batch mean and biased variance;
  otherwise with ``moving_mean`` / ``moving_var``;
* the moving statistics are updated by the *backward* pass,
  ``moving = moving * momentum + batch_stat * (1 - momentum)`` with the
  biased batch variance, as MXNet's CPU BatchNorm does (a forward alone, even
  in training mode, leaves them unchanged);
* the backward's mode is ``backward(train_mode=...)`` (True by default), not
  the forward's, as in MXNet: a predict-mode forward differentiated with the
  default ``backward()`` gets the training-formula gradient (with the moving
  stats as the batch stats); ``backward(train_mode=False)`` gives the
  predict-mode gradient;
* the hidden outputs are the mean and the *inverse standard deviation*
  ``1/sqrt(var + eps)`` (MXNet's ``var`` output holds that), visible with
  ``output_mean_var=True``;
* ``fix_gamma=True`` uses gamma = 1 and gives gamma a zero gradient, and, as
  MXNet 1.9.1, writes ones into the gamma array whenever it writes its
  mean/var outputs: always when called on NDArrays; as a node of a graph (a
  hybridized block, a SymbolBlock, a bound executor) only in training or with
  ``output_mean_var=True``, so a SymbolBlock initialised from an initializer
  keeps its drawn gamma in prediction.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from . import onednn as _dnn
from ._fast import channel_sum
from ._rules import fmt, norm_axis
from .registry import Param, get, p_bool, p_float, p_int, register

_prod = math.prod


def _acc_dtype(dt):
    return np.dtype(np.float32) if dt == np.float16 else dt


def _check_param(name, shape, dtype, C, data_dtype, what):
    if tuple(shape) != (C,):
        raise ShapeError("%s has shape %s but %s needs (%d,)" % (name, fmt(shape), what, C))
    if dtype != data_dtype and not (data_dtype == np.float16 and dtype == np.float32):
        raise OpError("%s has dtype %s but data has %s; they must match (float32 parameters "
                      "are allowed for float16 data)" % (name, dtype.name, data_dtype.name))


def _float_data(dt):
    if dt.kind != "f":
        raise OpError("data dtype %s is not supported; use float16, float32 or float64" % dt.name)

# ----------------------------------------------------------------- BatchNorm


def _bn_rule(attrs, shapes, dtypes):
    d = shapes[0]
    if len(d) < 1:
        raise ShapeError("data must have at least 1 dimension")
    ax = norm_axis(attrs["axis"], len(d))
    C = d[ax]
    _float_data(dtypes[0])
    what = "data %s with axis=%d" % (fmt(d), attrs["axis"])
    for name, s, t in zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:], dtypes[1:]):
        _check_param(name, s, t, C, dtypes[0], what)
    pd = dtypes[1]
    return (d, (C,), (C,)), (dtypes[0], pd, pd)


def _bn_split(shape, ax):
    """(A, C, B) such that data.reshape(A, C, B) puts the channel axis in the middle."""
    return _prod(shape[:ax]), shape[ax], _prod(shape[ax + 1:])


def _bn_visible(attrs):
    return 3 if attrs["output_mean_var"] else 1


_BN_PARAMS = [
    Param("eps", p_float, 1e-3, "added to the variance"),
    Param("momentum", p_float, 0.9, "moving = moving * momentum + batch * (1 - momentum)"),
    Param("fix_gamma", p_bool, True, "use gamma = 1 (its gradient is 0)"),
    Param("use_global_stats", p_bool, False, "use the moving statistics in training too"),
    Param("output_mean_var", p_bool, False, "also return the mean and 1/sqrt(var + eps)"),
    Param("axis", p_int, 1, "the channel axis"),
    Param("cudnn_off", p_bool, False, "ignored (cuDNN)"),
    Param("min_calib_range", lambda v: None if v is None else p_float(v), None,
          "ignored (quantisation)"),
    Param("max_calib_range", lambda v: None if v is None else p_float(v), None,
          "ignored (quantisation)"),
]


# a BatchNorm this large (elements) is shared out by channels between the
# engine's idle workers (``_by_channels``): it is one op of several passes
# over memory, which would otherwise keep one core busy while the others
# wait for it (ResNet-18 training at batch 16: some 20 % of a step). The
# engine's own threshold for elementwise ops: ResNet-18's 16x256x14x14 and
# 16x512x7x7 BatchNorms gain 5 ms a step split (2 AVX-512 cores, 2026-12-03)
SPLIT_MIN = 1 << 18


def _by_channels(xp, data, C, run):
    """``run(c0, c1)`` over the channels ``[0, C)``: for a numpy BatchNorm of
    ``SPLIT_MIN`` elements or more, in one range per engine worker, the
    pushing thread and idle workers taking them (``run_ranges``: the ranges
    depend only on C and the worker count, so the result does not depend on
    what else the machine ran); otherwise at once."""
    cpu = _splitter(xp, data, C)
    if cpu is not None:
        cpu.run_ranges(C, run)
        return
    run(0, C)


def _splitter(xp, data, C):
    """The engine's CPU pool when ``_by_channels`` splits this BatchNorm, else None."""
    if xp is np and C >= 2 and data.size >= SPLIT_MIN:
        from ..engine import get
        cpu = getattr(get(), "cpu", None)
        if cpu is not None and cpu.nworkers > 1:
            return cpu
    return None


def _csum(xp, a):
    """Per-channel sums of (A, C, B) ``a``: ``channel_sum``, or for a channel
    range of a larger array (not contiguous) the same BLAS products per
    sample."""
    if xp is np and not a.flags.c_contiguous and a.shape[2] >= 16 and a.dtype.kind == "f" \
            and a.strides[2] == a.itemsize and a.dtype.itemsize >= 4:
        from ._fast import _filled
        return np.matmul(a, _filled(1, a.dtype, a.shape[2])).sum(axis=0)
    return channel_sum(xp, a)


def _bn_batch_fwd(xp, x3, y3, gamma, beta, mean_out, invstd_out, eps, fix_gamma, acc):
    """Training BatchNorm of (A, C, B) ``x3`` into ``y3`` with the batch
    statistics, and those statistics (mean, 1/std) into their outputs."""
    A, C, B = x3.shape
    m = A * B
    xa = x3 if x3.dtype == acc else x3.astype(acc)
    mean = _csum(xp, xa) / m
    # x - mean goes straight into the output when it has the working
    # dtype: one full-size temporary and one pass fewer, the same bits
    in_place = y3.dtype == acc
    xc = xp.subtract(xa, mean.reshape(1, C, 1), out=y3 if in_place else None)
    var = xp.einsum("acb,acb->c", xc, xc) / m
    invstd = 1.0 / xp.sqrt(var + eps)
    scale = invstd if fix_gamma else invstd * gamma.astype(acc, copy=False)
    xp.multiply(xc, scale.reshape(1, C, 1), out=y3, casting="unsafe")
    y3 += beta.reshape(1, C, 1).astype(y3.dtype, copy=False)
    mean_out[...] = mean
    invstd_out[...] = invstd


@register("BatchNorm", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
          params=_BN_PARAMS, infer=_bn_rule, num_outputs=3,
          output_names=("output", "mean", "var"), train_aware=True,
          aux=("moving_mean", "moving_var"), num_visible=_bn_visible, inline=False,
          mutates=(1,), aliases=("BatchNorm_v1",))    # MXNet's legacy op: same math, NCHW
def BatchNorm(xp, data, gamma, beta, moving_mean, moving_var, *, out, eps=1e-3, momentum=0.9,
              fix_gamma=True, use_global_stats=False, axis=1, _train=False,
              output_mean_var=False, _graph=False, **_ignored):
    """BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
    fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1):
    batch normalisation over every axis but ``axis``. Training uses the batch
    statistics (the moving ones are updated by the backward pass, as in MXNet);
    prediction uses moving_mean / moving_var."""
    y, mean_out, invstd_out = out
    if fix_gamma and (not _graph or _train or output_mean_var):
        # MXNet writes ones into gamma with the mean/var outputs (so weight
        # decay cannot drift it); gamma is declared mutated for that. In a
        # graph MXNet requests those only for training (MXNet: under record(),
        # or a bound executor with gradients; the training flag is what
        # reaches a kernel) or when output_mean_var shows them
        gamma[...] = 1
    ax = axis % data.ndim
    A, C, B = _bn_split(data.shape, ax)
    acc = _acc_dtype(data.dtype)
    x3 = data.reshape(A, C, B)
    y3 = y.reshape(A, C, B)
    if _train and not use_global_stats:
        def run(c0, c1):
            _bn_batch_fwd(xp, x3[:, c0:c1], y3[:, c0:c1], gamma[c0:c1], beta[c0:c1],
                          mean_out[c0:c1], invstd_out[c0:c1], eps, fix_gamma, acc)
        _by_channels(xp, data, C, run)
        return
    else:
        mean = moving_mean.astype(acc, copy=False)
        invstd = 1.0 / xp.sqrt(moving_var.astype(acc, copy=False) + eps)
        scale = invstd if fix_gamma else invstd * gamma.astype(acc, copy=False)
        shift = beta.astype(acc, copy=False) - mean * scale
        xp.multiply(x3, scale.reshape(1, C, 1).astype(y3.dtype, copy=False), out=y3)
        y3 += shift.reshape(1, C, 1).astype(y3.dtype, copy=False)
    mean_out[...] = mean
    invstd_out[...] = invstd


get("BatchNorm").graph_attrs = {"_graph": True}


def _bn_bwd_rule(attrs, shapes, dtypes):
    return (shapes[1], shapes[2], shapes[2]), (dtypes[1], dtypes[2], dtypes[2])


@register("_backward_BatchNorm",
          inputs=("ograd", "data", "gamma", "mean", "invstd", "moving_mean", "moving_var"),
          params=_BN_PARAMS, infer=_bn_bwd_rule, num_outputs=3, mutates=(5, 6),
          train_aware=True, inline=False)
def _backward_BatchNorm(xp, ograd, data, gamma, mean, invstd, moving_mean, moving_var, *, out,
                        eps=1e-3, momentum=0.9, fix_gamma=True, use_global_stats=False, axis=1,
                        _train=False, **_ignored):
    """Gradients of BatchNorm w.r.t. (data, gamma, beta). As in MXNet, the mode
    is the one ``backward`` runs in (``train_mode=True`` by default): in
    training it uses the forward's saved mean / invstd and updates
    moving_mean / moving_var in place; otherwise it uses the moving stats."""
    dx, dgamma, dbeta = out
    ax = axis % data.ndim
    A, C, B = _bn_split(data.shape, ax)
    acc = _acc_dtype(data.dtype)
    m = A * B
    x3 = data.reshape(A, C, B)
    g3 = ograd.reshape(A, C, B)
    batch = _train and not use_global_stats
    if batch:
        mu = mean.astype(acc, copy=False)
        istd = invstd.astype(acc, copy=False)
        var = 1.0 / (istd * istd) - eps            # MXNet's INVSTD_TO_VARIANCE
        moving_mean *= momentum
        moving_mean += (mu * (1 - momentum)).astype(moving_mean.dtype, copy=False)
        moving_var *= momentum
        moving_var += (var * (1 - momentum)).astype(moving_var.dtype, copy=False)
    else:
        mu = moving_mean.astype(acc, copy=False)
        istd = 1.0 / xp.sqrt(moving_var.astype(acc, copy=False) + eps)
    # oneDNN's backward (one thread) beats numpy's on one thread from 2 M
    # elements, not numpy's shared out between the workers (resnet18 b16
    # training: 930-990 vs 890-920 ms a step, the same CPU time)
    if xp is np and ax == 1 and m and _splitter(xp, data, C) is None and \
            _dnn.bn_bwd(ograd, data, gamma, mu, istd, dx, dgamma, dbeta, eps=eps,
                        fix_gamma=fix_gamma, batch=batch):
        return
    w = xp.ones_like(istd) if fix_gamma else gamma.astype(acc, copy=False)
    dx3 = dx.reshape(A, C, B)
    if batch and _one_pass_tail(xp, g3, x3, dx3, B):
        # the sums by channels, then dx = (xc * -k + g - mean(g)) * istd * w
        # in one oneDNN pass by samples (dense blocks, one call each)
        k, mg = np.empty(C, acc), np.empty(C, acc)

        def sums(c0, c1):
            _bn_bwd_range(xp, g3[:, c0:c1], x3[:, c0:c1], dx3[:, c0:c1], mu[c0:c1],
                          istd[c0:c1], w[c0:c1], dgamma[c0:c1], dbeta[c0:c1], m, batch,
                          fix_gamma, acc, tail=(k[c0:c1], mg[c0:c1]))
        _by_channels(xp, data, C, sums)
        nk, iw = -k, istd * w

        def tail(a0, a1):
            d, g = dx3[a0:a1], g3[a0:a1]
            if not _dnn.channel_chain(d, (("mul", nk), ("add", g), ("sub", mg), ("mul", iw)), d):
                d *= k.reshape(1, C, 1)
                _minus_from(xp, g, mg.reshape(1, C, 1), d)
                d *= iw.reshape(1, C, 1)
        _by_samples(xp, data, A, tail)
        return

    def run(c0, c1):
        _bn_bwd_range(xp, g3[:, c0:c1], x3[:, c0:c1], dx3[:, c0:c1], mu[c0:c1], istd[c0:c1],
                      w[c0:c1], dgamma[c0:c1], dbeta[c0:c1], m, batch, fix_gamma, acc)
    _by_channels(xp, data, C, run)


def _one_pass_tail(xp, g3, x3, dx3, B):
    """Whether the backward's elementwise end runs on oneDNN (float32, dx
    its own contiguous buffer, planes large enough to gain)."""
    return (xp is np and dx3.dtype == g3.dtype == x3.dtype == np.float32
            and B >= _dnn_binary_min() and dx3.flags.c_contiguous and g3.flags.c_contiguous
            and not np.may_share_memory(dx3, g3) and not np.may_share_memory(dx3, x3)
            and _dnn.active())


def _dnn_binary_min():
    from .onednn.binary import MIN_PLANE
    return MIN_PLANE


def _by_samples(xp, data, A, run):
    """``run(a0, a1)`` over the samples, shared out as ``_by_channels`` does."""
    cpu = _splitter(xp, data, A)
    if cpu is not None:
        cpu.run_ranges(A, run)
        return
    run(0, A)


# ``_minus_from``'s pieces: (g - mean) is made this much at a time in a
# reused buffer, not as a full-size temporary (a fresh one of tens of MB
# costs page faults on every call once the allocator has given it back:
# ResNet-18's first BatchNorm backward at batch 16 spent 60 ms in them on a
# 30 ms op)
_PIECE = 1 << 20


def _minus_from(xp, g, mg, xc):
    """``xc = (g - mg) - xc`` for (A, C, B) ``g``/``xc`` and (1, C, 1) ``mg``,
    those operations in that order."""
    A = g.shape[0]
    per = g[0].size * xc.itemsize
    if xp is not np or A < 2 or A * per <= _PIECE:
        xp.subtract(g - mg, xc, out=xc)
        return
    from .conv_gemm import scratch
    n = max(1, _PIECE // per)
    t = scratch(xp, "bn-gm", (min(n, A),) + g.shape[1:], xc.dtype)
    for a in range(0, A, n):
        b = min(A, a + n)
        u = np.subtract(g[a:b], mg, out=t[:b - a])
        np.subtract(u, xc[a:b], out=xc[a:b])


def _bn_bwd_range(xp, g3, x3, dx3, mu, istd, w, dgamma, dbeta, m, batch, fix_gamma, acc,
                  tail=None):
    """BatchNorm's gradients for (A, C, B) views (all channels or a range).
    ``tail`` = (k, mean(g)) vectors: in training, stop with x - mu in dx and
    write those there, for the caller to finish dx."""
    C = x3.shape[1]
    ga = g3 if g3.dtype == acc else g3.astype(acc)
    # x - mean is built in the gradient's buffer when it has the working
    # dtype (and ograd is not that buffer), then turned into the gradient
    # in place: the same operations in the same order, fewer temporaries
    in_place = (dx3.dtype == acc and not xp.may_share_memory(dx3, ga)
                and not xp.may_share_memory(dx3, x3))
    xc = xp.subtract(x3 if x3.dtype == acc else x3.astype(acc), mu.reshape(1, C, 1),
                     out=dx3 if in_place else None)
    sum_g = _csum(xp, ga)
    dotp = xp.einsum("acb,acb->c", xc, ga)
    iw = (istd * w).reshape(1, C, 1)
    if batch:
        k = (dotp * istd * istd / m).reshape(1, C, 1)
        if tail is not None and in_place:
            tail[0][...] = k.reshape(C)
            tail[1][...] = sum_g / m
        elif in_place:
            xc *= k
            _minus_from(xp, ga, (sum_g / m).reshape(1, C, 1), xc)
            dx3 *= iw
        else:       # a narrower gradient is rounded once, at the end
            dx3[...] = (ga - (sum_g / m).reshape(1, C, 1) - xc * k) * iw
    else:
        dx3[...] = ga * iw
    dbeta[...] = sum_g
    if fix_gamma:
        dgamma.fill(0)
    else:
        dgamma[...] = dotp * istd

# ----------------------------------------------------------------- LayerNorm


def _ln_rule(attrs, shapes, dtypes):
    d = shapes[0]
    if not d:
        raise ShapeError("data must have at least 1 dimension")
    ax = norm_axis(attrs["axis"], len(d))
    C = d[ax]
    _float_data(dtypes[0])
    what = "data %s with axis=%d" % (fmt(d), attrs["axis"])
    for name, s, t in zip(("gamma", "beta"), shapes[1:], dtypes[1:]):
        _check_param(name, s, t, C, dtypes[0], what)
    st = tuple(1 if i == ax else n for i, n in enumerate(d))
    return (d, st, st), (dtypes[0],) * 3


def _ln_visible(attrs):
    return 3 if attrs["output_mean_var"] else 1


_LN_PARAMS = [Param("axis", p_int, -1, "the axis normalised over"),
              Param("eps", p_float, 1e-5, "added to the variance"),
              Param("output_mean_var", p_bool, False, "also return the mean and the std")]


def _ln_acc_dtype(dt):
    # MXNet's LayerNorm accumulates float16 in float32 and float32 in float64
    # (MSHADOW_REAL_TYPE_SWITCH_EX with safe accumulation)
    return np.dtype(np.float64) if dt == np.float32 else _acc_dtype(dt)


# LayerNorm runs over pieces of about this many elements along an axis it
# does not normalise: its float64 working copies (float32 data accumulates
# in float64, as MXNet's) stay cache-sized instead of several full-size
# temporaries a call, which cost page faults each time the allocator has
# given them back (32x128x768: 25 ms forward, 1,500 faults a call). Rows
# are independent, so a piece's results are the whole call's, bit for bit;
# large calls are shared out between the engine's workers by pieces.
_LN_PIECE = 1 << 16


def _tmp(xp, slot, shape, dtype):
    """A piece's working buffer: this thread's, reused (``conv_gemm.scratch``)."""
    from .conv_gemm import scratch
    return scratch(xp, slot, shape, dtype)


def _ln_plan(xp, data, ax):
    """(split axis, its length, piece length, pieces) of ``_ln_pieces``, or
    None for one piece (a device array, 1-D or empty data)."""
    if xp is not np or data.ndim < 2 or not data.size:
        return None
    sa = 1 if ax == 0 else 0
    n = data.shape[sa]
    step = max(1, _LN_PIECE // max(data.size // n, 1))
    return sa, n, step, -(-n // step)


def _npieces(xp, data, ax):
    plan = _ln_plan(xp, data, ax)
    return 1 if plan is None else plan[3]


def _ln_pieces(xp, data, ax, run):
    """``run(index, k)`` for the pieces of ``data`` (index: a tuple of
    slices, k: the piece's number) along a non-normalised axis, in order
    within each worker's range; the pieces depend only on the shape."""
    plan = _ln_plan(xp, data, ax)
    if plan is None:
        run((), 0)
        return
    sa, n, step, npieces = plan

    def pieces(lo, hi):
        for k in range(lo, hi):
            run((slice(None),) * sa + (slice(k * step, min(n, (k + 1) * step)),), k)
    cpu = _splitter(xp, data, npieces)
    if cpu is not None:
        cpu.run_ranges(npieces, pieces)
    else:
        pieces(0, npieces)


@register("LayerNorm", inputs=("data", "gamma", "beta"), params=_LN_PARAMS, infer=_ln_rule,
          num_outputs=3, output_names=("output", "mean", "std"), num_visible=_ln_visible,
          inline=False)
def LayerNorm(xp, data, gamma, beta, *, out, axis=-1, eps=1e-5, **_ignored):
    """LayerNorm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    normalise over ``axis``; the hidden outputs are the mean and
    std = sqrt(var + eps) (keepdims shapes)."""
    y, mean_out, std_out = out
    ax = axis % data.ndim
    acc = _ln_acc_dtype(data.dtype)
    bshape = tuple(n if i == ax else 1 for i, n in enumerate(data.shape))
    g = gamma.astype(acc, copy=False).reshape(bshape)
    b = beta.reshape(bshape).astype(y.dtype, copy=False)

    def run(idx, _k):
        x = data[idx]
        xa = x if x.dtype == acc else x.astype(acc)
        mean = xp.mean(xa, axis=ax, keepdims=True)
        xc = xp.subtract(xa, mean, out=_tmp(xp, "norm-a", x.shape, acc))
        t = xp.multiply(xc, xc, out=_tmp(xp, "norm-b", x.shape, acc))
        std = xp.sqrt(xp.mean(t, axis=ax, keepdims=True) + eps)
        yp = y[idx]
        xp.multiply(xc, xp.divide(g, std, out=t), out=yp, casting="unsafe")
        yp += b
        mean_out[idx] = mean
        std_out[idx] = std
    _ln_pieces(xp, data, ax, run)


def _norm_bwd_rule(attrs, shapes, dtypes):
    return (shapes[1], shapes[2], shapes[2]), (dtypes[1], dtypes[2], dtypes[2])


@register("_backward_LayerNorm", inputs=("ograd", "data", "gamma", "mean", "std"),
          params=_LN_PARAMS, infer=_norm_bwd_rule, num_outputs=3, inline=False)
def _backward_LayerNorm(xp, ograd, data, gamma, mean, std, *, out, axis=-1, **_ignored):
    """Gradients of LayerNorm w.r.t. (data, gamma, beta), by pieces as the
    forward (``_ln_pieces``); gamma's and beta's gradients sum the pieces'
    in order."""
    dx, dgamma, dbeta = out
    ax = axis % data.ndim
    acc = _ln_acc_dtype(data.dtype)
    red = tuple(i for i in range(data.ndim) if i != ax)
    bshape = tuple(n if i == ax else 1 for i, n in enumerate(data.shape))
    g = gamma.astype(acc, copy=False).reshape(bshape)
    parts = [None] * _npieces(xp, data, ax)

    def run(idx, k):
        o, x = ograd[idx], data[idx]
        sd = std[idx]
        # the plain formula's operations, into this thread's piece buffers
        xhat = xp.subtract(x, mean[idx], out=_tmp(xp, "norm-a", x.shape, acc), dtype=acc)
        xhat /= sd
        ga = _tmp(xp, "norm-b", x.shape, acc)
        ga[...] = o
        t = xp.multiply(ga, xhat, out=_tmp(xp, "norm-c", x.shape, acc))
        parts[k] = (xp.sum(ga, axis=red), xp.sum(t, axis=red))
        dxh = xp.multiply(ga, g, out=ga)
        m2 = xp.mean(xp.multiply(dxh, xhat, out=t), axis=ax, keepdims=True)
        dxh -= xp.mean(dxh, axis=ax, keepdims=True)
        dxh -= xp.multiply(xhat, m2, out=t)
        xp.divide(dxh, sd, out=dx[idx], casting="unsafe")
    _ln_pieces(xp, data, ax, run)
    sb, sg = parts[0]
    for pb, pg in parts[1:]:
        sb = sb + pb
        sg = sg + pg
    dbeta[...] = sb
    dgamma[...] = sg

# -------------------------------------------------------------- InstanceNorm


def _in_rule(attrs, shapes, dtypes):
    d = shapes[0]
    if len(d) < 3:
        raise ShapeError("data must have at least 3 dimensions (N, C, spatial...), got shape %s"
                         % fmt(d))
    _float_data(dtypes[0])
    what = "data %s (channel axis 1)" % fmt(d)
    for name, s, t in zip(("gamma", "beta"), shapes[1:], dtypes[1:]):
        _check_param(name, s, t, d[1], dtypes[0], what)
    return (d,), (dtypes[0],)


@register("InstanceNorm", inputs=("data", "gamma", "beta"),
          params=[Param("eps", p_float, 1e-3, "added to the variance")], infer=_in_rule,
          inline=False)
def InstanceNorm(xp, data, gamma, beta, *, out, eps=1e-3):
    """InstanceNorm(data, gamma, beta, eps=1e-3): normalise each (sample,
    channel) over the spatial axes, then scale by gamma and shift by beta
    (per channel). By pieces of instances, as LayerNorm."""
    N, C = data.shape[:2]
    acc = _acc_dtype(data.dtype)
    x2, y2 = data.reshape(N * C, -1), out.reshape(N * C, -1)
    gam, bet = gamma.astype(acc, copy=False), beta.astype(out.dtype, copy=False)

    def run(idx, _k):
        xs = x2[idx]
        xc, invstd = _in_stats(xp, xs, eps, acc)
        ch = _in_channels(xp, idx, N * C, C)
        ys = y2[idx]
        xp.multiply(xc, invstd * gam[ch][:, None], out=ys, casting="unsafe")
        ys += bet[ch][:, None]
    _ln_pieces(xp, x2, 1, run)


def _in_stats(xp, xs, eps, acc):
    """(x - mean, 1/std) of each instance (row) of a (rows, S) piece, in this
    thread's piece buffers."""
    mean = xp.mean(xs, axis=1, keepdims=True, dtype=acc)
    xc = xp.subtract(xs, mean, out=_tmp(xp, "norm-a", xs.shape, acc), dtype=acc)
    t = xp.multiply(xc, xc, out=_tmp(xp, "norm-b", xs.shape, acc))
    return xc, 1.0 / xp.sqrt(xp.mean(t, axis=1, keepdims=True) + eps)


def _in_channels(xp, idx, rows, C):
    """The channel of each instance (row) of piece ``idx``."""
    return xp.arange(rows)[idx[0] if idx else slice(None)] % C


@register("_backward_InstanceNorm", inputs=("ograd", "data", "gamma"),
          params=[Param("eps", p_float, 1e-3)], infer=_norm_bwd_rule, num_outputs=3,
          inline=False)
def _backward_InstanceNorm(xp, ograd, data, gamma, *, out, eps=1e-3):
    """Gradients of InstanceNorm w.r.t. (data, gamma, beta), by pieces of
    instances; gamma's and beta's gradients summed per instance first (the
    same whatever the pieces)."""
    dx, dgamma, dbeta = out
    N, C = data.shape[:2]
    acc = _acc_dtype(data.dtype)
    x2, g2, dx2 = data.reshape(N * C, -1), ograd.reshape(N * C, -1), dx.reshape(N * C, -1)
    gam = gamma.astype(acc, copy=False)
    sb, sg = xp.empty(N * C, acc), xp.empty(N * C, acc)

    def run(idx, _k):
        xs, gs = x2[idx], g2[idx]
        xhat, invstd = _in_stats(xp, xs, eps, acc)
        xhat *= invstd
        ga = _tmp(xp, "norm-c", xs.shape, acc)
        ga[...] = gs
        t = _tmp(xp, "norm-b", xs.shape, acc)
        rows = idx[0] if idx else slice(None)
        sb[rows] = xp.sum(ga, axis=1)
        sg[rows] = xp.sum(xp.multiply(ga, xhat, out=t), axis=1)
        dxh = xp.multiply(ga, gam[_in_channels(xp, idx, N * C, C)][:, None], out=ga)
        m2 = xp.mean(xp.multiply(dxh, xhat, out=t), axis=1, keepdims=True)
        dxh -= xp.mean(dxh, axis=1, keepdims=True)
        dxh -= xp.multiply(xhat, m2, out=t)
        xp.multiply(dxh, invstd, out=dx2[idx], casting="unsafe")
    _ln_pieces(xp, x2, 1, run)
    dbeta[...] = sb.reshape(N, C).sum(axis=0)
    dgamma[...] = sg.reshape(N, C).sum(axis=0)

# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _bn_grad(F, attrs, ins, outs, og):
    # the backward's own training flag decides, as MXNet's ctx.is_train does
    kw = {k: v for k, v in attrs.items() if k not in ("_train", "_graph")}
    dx, dgamma, dbeta = F._internal._backward_BatchNorm(
        og[0], ins[0], ins[1], outs[1], outs[2], ins[3], ins[4], **kw)
    return [dx, dgamma, dbeta, None, None]


def _ln_grad(F, attrs, ins, outs, og):
    dx, dgamma, dbeta = F._internal._backward_LayerNorm(og[0], ins[0], ins[1], outs[1], outs[2],
                                                        **attrs)
    return [dx, dgamma, dbeta]


def _in_grad(F, attrs, ins, outs, og):
    dx, dgamma, dbeta = F._internal._backward_InstanceNorm(og[0], ins[0], ins[1], **attrs)
    return [dx, dgamma, dbeta]


set_grads({"BatchNorm": _bn_grad, "LayerNorm": _ln_grad, "InstanceNorm": _in_grad})
