"""GEMM kernels of Convolution and Deconvolution, and the ``rows`` splits
that let every CPU worker share one large convolution.

Each kernel is a *plan*: ``plan(...) -> (n, run)`` where ``run(lo, hi)``
computes work units ``[lo, hi)``. The registered kernel runs ``run(0, n)``;
the op's ``rows`` hook hands the same plan to the engine, which runs one
range per worker (the workers pin BLAS to one thread each, so this is how a
convolution gets more than one core).

* forward (and the stride-1 data gradient, which is a forward convolution of
  the output gradient with the flipped, transposed weight): units are
  (sample, first output axis row) pairs, so a batch of one still splits;
  im2col copies a strided window view of the (padded) input into a
  per-thread scratch buffer, then one batched ``matmul`` (groups and samples
  are batch axes) writes the output;
* data gradient by col2im (strides > 1): units are samples; the gradient
  columns come from one ``matmul`` into scratch and go back with one strided
  add per kernel offset;
* weight gradient: units are fixed blocks of samples whose shape alone
  decides their size; each block's partial sum is kept and the range that
  finishes last adds them in block order, so the result does not depend on
  how the engine split the work.

Scratch buffers are per thread and reused across calls (no page faults on
every call for buffers of many MB); nothing returned ever lives in them.
Columns are made in chunks of at most ``_CHUNK_BYTES`` (and never more than
the op's ``workspace`` MB), which keeps them in cache between the copy and
the GEMM that reads them.
"""
from __future__ import annotations

import itertools
import math
import threading

import numpy as np

from . import onednn as _dnn

_prod = math.prod
_CHUNK_BYTES = 4 << 20      # columns per chunk: cache-sized, not batch-sized
_SCRATCH_KEEP = 64 << 20    # larger scratch requests are not kept between calls
_local = threading.local()
_PARTIALS_BYTES = 1 << 20  # weight gradient: per-sample partials held at once
_FILTER_SPLIT = True       # False: never split the forward by filters (A/B timing)


def scratch(xp, slot, shape, dtype):
    """An uninitialised array of ``shape`` from this thread's buffer ``slot``
    (reused across calls; a new ``xp.empty`` for devices other than numpy)."""
    if xp is not np:
        return xp.empty(shape, dtype)
    dtype = np.dtype(dtype)
    nbytes = _prod(shape) * dtype.itemsize
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    b = bufs.get(slot)
    if b is None or b.nbytes < nbytes:
        if nbytes > _SCRATCH_KEEP:
            bufs.pop(slot, None)
            return np.empty(shape, dtype)
        # 64 extra bytes: the view below starts on a 64-byte boundary
        b = bufs[slot] = np.empty(max(nbytes, 1 << 16) + 64, np.uint8)
    off = (-b.ctypes.data) % 64
    return b[off:off + nbytes].view(dtype).reshape(shape)


def dilated(k, d):
    return tuple((ki - 1) * di + 1 for ki, di in zip(k, d))


def _budget(workspace):
    return min(_CHUNK_BYTES, max(int(workspace), 1) << 20)


def windows(xp, xpad, k, s, d, o):
    """The (N, C, *k, *o) im2col view of padded input ``xpad`` (no copy)."""
    st = xpad.strides
    sp = st[2:]
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=tuple(xpad.shape[:2]) + tuple(k) + tuple(o),
        strides=tuple(st[:2]) + tuple(di * si for di, si in zip(d, sp))
        + tuple(s_ * si for s_, si in zip(s, sp)))


def _padded_slab(xp, x, p, pr0, pr1):
    """Rows ``[pr0, pr1)`` (padded coordinates, first spatial axis) of x
    (n, C, *L) zero-padded by ``p`` on every spatial axis: a view of x
    when there is no padding, else a scratch copy."""
    if not any(p):
        return x[:, :, pr0:pr1]
    L = x.shape[2:]
    buf = scratch(xp, "pad", x.shape[:2] + (pr1 - pr0,) + tuple(Li + 2 * pi for Li, pi in
                                                                 zip(L[1:], p[1:])), x.dtype)
    buf.fill(0)
    i0, i1 = max(pr0 - p[0], 0), min(pr1 - p[0], L[0])
    if i0 < i1:
        buf[(slice(None), slice(None), slice(i0 + p[0] - pr0, i1 + p[0] - pr0))
            + tuple(slice(pi, pi + Li) for pi, Li in zip(p[1:], L[1:]))] = x[:, :, i0:i1]
    return buf


def _blocks(lo, hi, rows, per_row, budget):
    """(a, b, r0, r1) pieces covering units ``[lo, hi)`` (unit = sample *
    rows + row): whole samples batched while their columns fit the budget,
    rows of one sample otherwise."""
    out = []
    rpb = max(1, budget // max(per_row, 1))            # rows per chunk
    spb = max(1, rpb // rows) if rpb >= rows else 0    # whole samples per chunk
    n0, r0 = divmod(lo, rows)
    n1, r1 = divmod(hi, rows)
    if n0 == n1:                       # inside one sample
        for r in range(r0, r1, rpb):
            out.append((n0, n0 + 1, r, min(r1, r + rpb)))
        return out
    if r0:
        for r in range(r0, rows, rpb):
            out.append((n0, n0 + 1, r, min(rows, r + rpb)))
        n0 += 1
    if spb:
        for a in range(n0, n1, spb):
            out.append((a, min(n1, a + spb), 0, rows))
    else:
        for a in range(n0, n1):
            for r in range(0, rows, rpb):
                out.append((a, a + 1, r, min(rows, r + rpb)))
    for r in range(0, r1, rpb):
        out.append((n1, n1 + 1, r, min(r1, r + rpb)))
    return out


class _Cols:
    """im2col of one convolution's input: columns for samples [a, b) and
    output rows [r0, r1) of the first spatial axis, as (n, g, K, R*P1)."""

    def __init__(self, xp, x, k, s, d, p, o, g):
        self.xp, self.x, self.k, self.s, self.d, self.p, self.o, self.g = xp, x, k, s, d, p, o, g
        C = x.shape[1]
        self.K = (C // g) * _prod(k)
        self.P1 = _prod(o[1:])
        self.dk0 = dilated(k, d)[0]
        # 1x1, stride 1, no padding: the data is its own columns
        self.direct = (all(ki == 1 for ki in k) and all(si == 1 for si in s) and not any(p))
        self.per_row = C * _prod(k) * self.P1 * x.itemsize

    def get(self, a, b, r0, r1, slot="cols"):
        xp, x, g = self.xp, self.x, self.g
        n, R = b - a, r1 - r0
        if self.direct:
            v = x[a:b, :, r0:r1]
            if v.flags.c_contiguous:
                return v.reshape(n, g, self.K, R * self.P1)
            cols = scratch(xp, slot, v.shape, x.dtype)
            xp.copyto(cols, v)
            return cols.reshape(n, g, self.K, R * self.P1)
        s0 = self.s[0]
        slab = _padded_slab(xp, x[a:b], self.p, r0 * s0, (r1 - 1) * s0 + self.dk0)
        v = windows(xp, slab, self.k, self.s, self.d, (R,) + tuple(self.o[1:]))
        cols = scratch(xp, slot, v.shape, x.dtype)
        xp.copyto(cols, v)
        return cols.reshape(n, g, self.K, R * self.P1)

    def batch_last(self, n):
        """Whether ``n`` whole samples are better done batch-innermost: short
        output rows make the copies' inner runs too short otherwise."""
        return n >= 2 * self.o[-1] and n > 1 and not self.direct

    def get_t(self, a, b):
        """Columns of whole samples [a, b) with the batch innermost:
        (g, K, prod(o) * n), column index (output position, sample)."""
        xp, x, p = self.xp, self.x, self.p
        n, C = b - a, x.shape[1]
        L = x.shape[2:]
        xt = scratch(xp, "xt", (C,) + tuple(Li + 2 * pi for Li, pi in zip(L, p)) + (n,),
                     x.dtype)
        inner = xp.moveaxis(x[a:b], 0, -1)
        if any(p):
            xt.fill(0)
            xt[(slice(None),) + tuple(slice(pi, pi + Li) for pi, Li in zip(p, L))] = inner
        else:
            xp.copyto(xt, inner)
        st = xt.strides
        sp = st[1:-1]
        v = xp.lib.stride_tricks.as_strided(
            xt, shape=(C,) + tuple(self.k) + tuple(self.o) + (n,),
            strides=(st[0],) + tuple(di * si for di, si in zip(self.d, sp))
            + tuple(s_ * si for s_, si in zip(self.s, sp)) + (st[-1],))
        cols = scratch(xp, "colst", v.shape, x.dtype)
        xp.copyto(cols, v)
        return cols.reshape(self.g, self.K, -1)


def _gemm_out(xp, wm, cols, out, a, b, r0, r1, bias):
    """out[a:b, :, r0:r1] = wm (g, Fg, K) @ cols (n, g, K, RP) (+ bias)."""
    n, g, _, RP = cols.shape
    Fg = wm.shape[1]
    rows = out.shape[2]
    tgt = out[a:b] if (r0 == 0 and r1 == rows) else out[a:b, :, r0:r1]
    if tgt.flags.c_contiguous:
        xp.matmul(wm, cols, out=tgt.reshape(n, g, Fg, RP))
    else:
        tmp = scratch(xp, "gemm", (n, g, Fg, RP), out.dtype)
        xp.matmul(wm, cols, out=tmp)
        tgt[...] = tmp.reshape(tgt.shape)
    if bias is not None:
        tgt += bias.reshape((1, -1) + (1,) * (tgt.ndim - 2))


def fwd_plan(xp, x, w, out, k, s, d, p, g, workspace, bias=None):
    """out (N, F, *o) = correlation of x (N, C, *L) with w (F, C/g, *k)
    (+ bias): (units, run)."""
    if xp is np and (plan := _dnn.conv_plan("fwd", x, w, out, k, s, d, p, g, bias)):
        return plan
    N = x.shape[0]
    F = w.shape[0]
    o = out.shape[2:]
    cols = _Cols(xp, x, k, s, d, p, o, g)
    wm = w.reshape(g, F // g, cols.K)
    rows = o[0]
    budget = _budget(workspace)
    if N == 0 or _prod(o) == 0:
        return 0, None
    if (_FILTER_SPLIT and g == 1 and F > 2 * N * _prod(o) and N * cols.per_row * rows <= budget
            and out.flags.c_contiguous):
        # few output positions, many filters (late layers at batch 1): the
        # weight is the big operand, so make the (small) columns once and
        # give each worker a range of filters, i.e. its own part of the weight.
        # The columns are read by every worker: an array of their own, not
        # this thread's scratch (which it may reuse for other work meanwhile)
        c = cols.get(0, N, 0, rows)[:, 0]               # (N, K, P)
        if not cols.direct:
            c = c.copy()
        wf = wm[0]
        o3 = out.reshape(N, F, -1)

        def run_f(lo, hi):
            xp.matmul(wf[lo:hi], c, out=o3[:, lo:hi])
            if bias is not None:
                o3[:, lo:hi] += bias[lo:hi].reshape(1, -1, 1)
        return F, run_f
    # batch-innermost columns save im2col time in proportion to K but cost
    # a transposed copy of the output (F rows): only for K well above F
    t_ok = cols.K >= 2 * (F // g)

    def run(lo, hi):
        for a, b, r0, r1 in _blocks(lo, hi, rows, cols.per_row, budget):
            if t_ok and r0 == 0 and r1 == rows and cols.batch_last(b - a):
                c = cols.get_t(a, b)
                tmp = scratch(xp, "gemm", (g, F // g, c.shape[-1]), out.dtype)
                xp.matmul(wm, c, out=tmp)
                xp.copyto(out[a:b], xp.moveaxis(tmp.reshape((F,) + tuple(o) + (b - a,)), -1, 0))
                if bias is not None:
                    out[a:b] += bias.reshape((1, -1) + (1,) * len(o))
            else:
                _gemm_out(xp, wm, cols.get(a, b, r0, r1), out, a, b, r0, r1, bias)
    return N * rows, run


def _flipped(xp, w, g, k):
    """w (F, C/g, *k) as the weight (C, F/g, *k) of the transposed
    correlation: kernel flipped, the two channel axes swapped per group."""
    F, Cg = w.shape[:2]
    nd = len(k)
    wt = xp.flip(w.reshape((g, F // g, Cg) + tuple(k)), axis=tuple(range(3, 3 + nd)))
    return xp.ascontiguousarray(xp.swapaxes(wt, 1, 2)).reshape((g * Cg, F // g) + tuple(k))


def _offset_slices(ki, di, si, pi, L, O):
    """For kernel offset ki on one axis: (slice into the input, slice into
    the output positions) of the output positions whose tap lands inside the
    unpadded input; None if none does."""
    base = ki * di - pi                       # input position of output 0's tap
    j_lo = max(0, (-base + si - 1) // si)     # first j with base + si*j >= 0
    j_hi = min(O - 1, (L - 1 - base) // si) if L - 1 - base >= 0 else -1
    if j_lo > j_hi:
        return None
    x_lo = base + si * j_lo
    return slice(x_lo, x_lo + si * (j_hi - j_lo) + 1, si), slice(j_lo, j_hi + 1)


def col2im(xp, dcols, dx, k, s, d, p, batch_last=False):
    """dx (N, C, *L) = sum of the columns dcols (N, C, *k, *o) put back at
    their input positions (positions in the padding are dropped): one
    strided add per kernel offset. ``batch_last``: dx is (C, *L, N) and
    dcols (C, *k, *o, N), which makes the adds' inner runs N (or more)
    elements long instead of one output row."""
    dx.fill(0)
    nd = len(k)
    lead = 1 if batch_last else 2
    L = dx.shape[lead:lead + nd]
    o = dcols.shape[lead + nd:lead + 2 * nd]
    head = (slice(None),) * lead
    tail = (slice(None),) if batch_last else ()
    for off in itertools.product(*[range(ki) for ki in k]):
        sl = [_offset_slices(off[i], d[i], s[i], p[i], L[i], o[i]) for i in range(nd)]
        if any(t is None for t in sl):
            continue
        dx[head + tuple(t[0] for t in sl) + tail] += \
            dcols[head + tuple(off) + tuple(t[1] for t in sl) + tail]


def bwd_data_plan(xp, dy, w, dx, k, s, d, p, g, workspace, bias=None):
    """dx (N, C, *L) = gradient of the forward w.r.t. x for output gradient
    dy (+ bias, for Deconvolution): (units, run)."""
    if xp is np and (plan := _dnn.conv_plan("bwd_data", dy, w, dx, k, s, d, p, g, bias)):
        return plan
    N, F = dy.shape[:2]
    C = dx.shape[1]
    Cg, Fg = C // g, F // g
    o = dy.shape[2:]
    L = dx.shape[2:]
    nd = len(k)
    dks = dilated(k, d)
    # the full-correlation columns hold Fg*prod(k) x prod(L) elements, col2im's
    # Cg*prod(k) x prod(o): a kernel as large as the input (o = 1) makes the
    # first quadratic in the input size, so take whichever is smaller
    full_ok = _prod(L) * Fg <= 2 * _prod(o) * Cg
    if full_ok and all(si == 1 for si in s) and all(pi <= dk - 1 for pi, dk in zip(p, dks)):
        q = tuple(dk - 1 - pi for dk, pi in zip(dks, p))
        return fwd_plan(xp, dy, _flipped(xp, w, g, k), dx, k, (1,) * nd, d, q, g, workspace,
                        bias)
    if N == 0:
        return 0, None
    K = Cg * _prod(k)
    P = _prod(o)
    wm = xp.swapaxes(w.reshape(g, Fg, K), 1, 2)          # (g, K, Fg)
    spb = max(1, _budget(workspace) // max(K * g * P * dy.itemsize, 1))
    bshape = None if bias is None else (1, -1) + (1,) * nd

    def run(lo, hi):
        for a in range(lo, hi, spb):
            b = min(hi, a + spb)
            n = b - a
            if n >= 2 * o[-1]:
                # short output rows: put the batch innermost for the adds
                dyt = scratch(xp, "dyt", (g, Fg, P, n), dy.dtype)
                xp.copyto(dyt, xp.moveaxis(dy[a:b].reshape(n, g, Fg, P), 0, -1))
                dcols = scratch(xp, "dcols", (g, K, P * n), dy.dtype)
                xp.matmul(wm, dyt.reshape(g, Fg, P * n), out=dcols)
                dxt = scratch(xp, "dxt", (C,) + tuple(L) + (n,), dx.dtype)
                col2im(xp, dcols.reshape((C,) + tuple(k) + tuple(o) + (n,)), dxt, k, s, d, p,
                       batch_last=True)
                xp.copyto(dx[a:b], xp.moveaxis(dxt, -1, 0))
            else:
                dcols = scratch(xp, "dcols", (n, g, K, P), dy.dtype)
                xp.matmul(wm, dy[a:b].reshape(n, g, Fg, P), out=dcols)
                col2im(xp, dcols.reshape((n, C) + tuple(k) + tuple(o)), dx[a:b], k, s, d, p)
            if bias is not None:
                dx[a:b] += bias.reshape(bshape)
    return N, run


def bwd_weight_plan(xp, dy, x, dw, k, s, d, p, g, workspace):
    """dw (F, C/g, *k) = gradient of the forward w.r.t. w for output
    gradient dy: (units, run); a unit is a block of samples."""
    if xp is np and (plan := _dnn.conv_plan("bwd_weight", dy, x, dw, k, s, d, p, g)):
        return plan
    N, C = x.shape[:2]
    F = dy.shape[1]
    Fg = F // g
    o = dy.shape[2:]
    if N == 0 or _prod(o) == 0:
        return 1, lambda lo, hi: dw.fill(0)
    cols = _Cols(xp, x, k, s, d, p, o, g)
    K = cols.K
    P = _prod(o)
    rows = o[0]
    budget = _budget(workspace)
    # sample blocks sized by the shape alone (at least 4 when the batch
    # allows, so two or more workers get some)
    spb = max(1, min(budget // max(cols.per_row * rows, 1), -(-N // 4)))
    nblocks = -(-N // spb)
    parts = [None] * nblocks
    state = {"left": nblocks}
    lock = threading.Lock()

    def block(i):
        acc = xp.zeros((g, Fg, K), dtype=dw.dtype)
        a0, b0 = i * spb, min(N, (i + 1) * spb)
        for a, b, r0, r1 in _blocks(a0 * rows, b0 * rows, rows, cols.per_row, budget):
            if r0 == 0 and r1 == rows and cols.batch_last(b - a):
                n = b - a
                c = cols.get_t(a, b)
                dyt = scratch(xp, "dyt", (g, Fg, P, n), dy.dtype)
                xp.copyto(dyt, xp.moveaxis(dy[a:b].reshape(n, g, Fg, P), 0, -1))
                acc += xp.matmul(dyt.reshape(g, Fg, P * n), xp.swapaxes(c, -1, -2))
                continue
            c = cols.get(a, b, r0, r1)
            n, RP = b - a, c.shape[-1]
            g_ = dy[a:b, :, r0:r1].reshape(n, g, Fg, RP)
            if n > 1 and n * g * Fg * K * dw.itemsize <= _PARTIALS_BYTES:
                # small weights: one batched product and one sum (no Python
                # loop holding the GIL against the other ranges); an axis-0
                # sum adds the partials in sample order, as the loop below
                t = scratch(xp, "wtmp", (n, g, Fg, K), dw.dtype)
                xp.matmul(g_, xp.swapaxes(c, -1, -2), out=t)
                acc += t.sum(axis=0)
                continue
            # one GEMM per sample into an (F, K)-sized buffer: a batched
            # product would hold n weight-sized partials (deep layers: MBs each)
            t = scratch(xp, "wtmp", (g, Fg, K), dw.dtype)
            for i in range(n):
                xp.matmul(g_[i], xp.swapaxes(c[i], -1, -2), out=t)
                acc += t
        return acc

    def run(lo, hi):
        for i in range(lo, hi):
            parts[i] = block(i)
        with lock:
            state["left"] -= hi - lo
            last = state["left"] == 0
        if last:
            total = parts[0]
            for t in parts[1:]:
                total += t
            dw[...] = total.reshape(dw.shape)
    return nblocks, run


def run_all(plan):
    """Run a plan on the calling thread."""
    n, run = plan
    if run is not None and n:
        run(0, n)
