"""A run of oneDNN steps of a CPU inference plan as one kernel, with the
values between them kept in the layouts oneDNN chose.

Each oneDNN op alone (``conv``, ``pool``) takes NCHW numpy buffers and
reorders its activations into the primitive's blocked layout (nChw8c,
nChw16c) and back at every call; in mobilenet1.0 at batch 1 those reorders
cost more than the depthwise convolutions they surround. As MXNet's oneDNN
backend does, a chain (``ndarray/_plan_chain.py`` finds it) keeps every
value made and read inside it in the layout its producer chose, and
reorders only at its edges: a chain input into the layout its first
consumer wants, a value read outside the chain (a plan output, a step that
is not oneDNN's) back into its plain NCHW slot right after it is made.

Nodes: ``conv`` (a plain Convolution), ``convbn`` (an inference
Convolution + BatchNorm folded by ``ops/conv_bn.py``), ``pool`` (max/avg,
global included), ``relu``, ``add`` (two chain values, as binary add) and
``bn`` (an inference BatchNorm alone). A convolution may carry a ``sum``
post-op (the residual add: the other operand is loaded into its
destination first, in place when nothing reads it later) and a ``relu``.

The built chain (primitives, layouts, the buffers' plan) is kept per batch
size on its ``Spec``; each run takes a set of blocked scratch buffers of
its own (runs of the same chain on other threads get other sets). The
engine may split a chain by samples: each range runs the whole chain on
its samples, one oneDNN call per primitive on its thread.

Weights: a folded or plain weight is reordered into the primitive's layout
once and kept in ``_wcache`` while its version holds, as the single ops do.

Anything oneDNN refuses while building falls back to the original steps
(``Spec.fallback``), so results never depend on what oneDNN takes.
"""
from __future__ import annotations

import threading

import numpy as np

from . import _lib as L, _threads, _wcache
from .conv import _geom as _conv_geom, _wshape
from .pool import _alg as _pool_alg, _geom as _pool_geom, _md as _pool_md

__all__ = ["Node", "Spec", "kernel", "rows", "stats"]

_F32 = np.dtype(np.float32)
SPLIT = True        # the engine may split a chain by samples (else: one unit)
stats = {"builds": 0, "runs": 0, "fallbacks": 0}


class Refused(Exception):
    """oneDNN has no primitive for a part of the chain."""


class Node:
    """One oneDNN op of a chain. ``srcs``: the value ids it reads (ids below
    ``Spec.nin`` are the chain step's inputs, ``nin + j`` the output of node
    ``j``); ``params``: indices of the step inputs it reads as parameters;
    ``shape``: its output's shape at the plan's batch size."""
    __slots__ = ("kind", "srcs", "params", "attrs", "relu", "sum", "shape")

    def __init__(self, kind, srcs, params, attrs, shape, relu=False, sum=None):
        self.kind, self.srcs, self.params, self.attrs = kind, tuple(srcs), tuple(params), attrs
        self.shape, self.relu, self.sum = tuple(shape), bool(relu), sum

    def reads(self):
        return self.srcs + (() if self.sum is None else (self.sum,))

    def __repr__(self):
        extra = (" +sum(%d)" % self.sum if self.sum is not None else "") + \
            (" +relu" if self.relu else "")
        return "<%s %s -> %s%s>" % (self.kind, self.srcs, self.shape, extra)


class Spec:
    """A chain: its ``nodes`` in order, the value ids it hands out
    (``outs``, the step's outputs in order), the shapes of its inputs
    (``ext``; None for a parameter), and ``fallback(xp, ins, outs)``: the
    original steps, run when oneDNN cannot build a part."""

    def __init__(self, nodes, outs, ext, fallback):
        self.nodes, self.outs, self.ext = list(nodes), tuple(outs), list(ext)
        self.fallback = fallback
        self.nin = len(self.ext)
        self.acts = tuple(k for k, s in enumerate(self.ext) if s is not None)
        self.built = {}
        self.lock = threading.Lock()
        n = {s[0] for s in self.ext if s is not None} | {nd.shape[0] for nd in self.nodes}
        if len(n) != 1:
            raise ValueError("a chain's values must share one batch size, got %s" % sorted(n))
        self.batch = n.pop()
        self.macs = sum(_macs(nd) for nd in self.nodes)

    @property
    def nbytes(self):
        """Scratch one run at the full batch keeps (0 before it is built)."""
        e = self.built.get((self.batch, 1))
        return e.nbytes if e else 0

    def shape(self, v, b):
        s = self.ext[v] if v < self.nin else self.nodes[v - self.nin].shape
        return (b,) + tuple(s[1:])

    def get(self, b, nthr):
        """The chain built for ``b`` samples and ``nthr`` threads (None:
        oneDNN refused a part)."""
        key = (b, nthr)
        e = self.built.get(key, False)
        if e is False:
            with self.lock:
                e = self.built.get(key, False)
                if e is False:
                    try:
                        # oneDNN plans a primitive's work for the threads
                        # it may use when it is made
                        with _threads.inside(nthr):
                            e = _Built(self, b)
                    except (Refused, L.OneDNNError):
                        e = None
                    stats["builds"] += 1
                    self.built[key] = e
        return e

    def __repr__(self):
        return "<oneDNN chain: %d nodes, %d outputs>" % (len(self.nodes), len(self.outs))


def _macs(nd):
    if nd.kind in ("conv", "convbn"):
        a = nd.attrs
        ws = a["wshape"]
        return int(np.prod(nd.shape)) * int(np.prod(ws[1:]))
    return int(np.prod(nd.shape))


def _scratch(nbytes):
    raw = np.empty(max(nbytes, 64) + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off:off + nbytes]


def _pad_of(prim):
    md = prim.md(L.Q_SCRATCHPAD)
    if md is None or not md.size():
        return None
    return md


class _Built:
    """The chain's primitives for one batch size: ``ops``, a list of
    (primitive, [(DNNL arg, location, descriptor)]); a location is
    ("buf", i) (the i-th virtual scratch buffer), ("pad",) (the shared
    scratchpad) or a name whose pointer each run supplies: ("in", k),
    ("out", i), ("w", j) / ("wu", j) (node j's weight, reordered / as is),
    ("b", j) (its bias), ("p", k) (a parameter input), ("ones", j)."""

    def __init__(self, spec, b):
        nin = spec.nin
        self.spec, self.b = spec, b
        last = {}
        for j, nd in enumerate(spec.nodes):
            for v in nd.reads():
                last[v] = j
        outs = {v: i for i, v in enumerate(spec.outs)}
        self.ops = []
        self.vb = []            # virtual buffers: bytes
        self.wre = {}           # node -> (reorder, user md, chosen md, bytes, key)
        self.ones = {}          # node -> channels (BatchNorm with fix_gamma)
        val = {}
        conv = {}
        for k in spec.acts:
            val[k] = (L.MD.plain(spec.shape(k, b)), ("in", k))

        def new_vb(md):
            self.vb.append(md.size())
            return ("buf", len(self.vb) - 1)

        def add_op(prim, args):
            pad = _pad_of(prim)
            if pad is not None:
                args = args + [(L.A_SCRATCHPAD, ("pad",), pad)]
            self.ops.append((prim, args))

        def get(v, md):
            m0, loc = val[v]
            if m0 == md:
                return loc
            for m1, l1 in conv.setdefault(v, []):
                if m1 == md:
                    return l1
            loc1 = new_vb(md)
            r = L.reorder(m0, md)
            if r is None:
                raise Refused("reorder")
            add_op(r, [(L.A_SRC, loc, m0), (L.A_DST, loc1, md)])
            conv[v].append((md, loc1))
            return loc1

        def plain(md, shape):
            return md == L.MD.plain(shape)

        def own(v, loc, j):
            """Whether node j may write its output over ``loc`` (v's)."""
            return loc[0] == "buf" and last.get(v) == j

        for j, nd in enumerate(spec.nodes):
            ys = (b,) + nd.shape[1:]
            a = nd.attrs
            if nd.kind in ("conv", "convbn"):
                src = nd.srcs[0]
                xs = spec.shape(src, b)
                wg = _wshape(a["wshape"], a["num_group"])
                geo = _conv_geom(xs, ys, a["kernel"], a["stride"], a["dilate"], a["pad"])
                post = (("sum",) if nd.sum is not None else ()) + (("relu",) if nd.relu else ())
                has_b = nd.kind == "convbn" or a["has_bias"]
                sa, wa, da = L.MD.any(xs), L.MD.any(wg), L.MD.any(ys)
                bmd = L.MD.plain((ys[1],)) if has_b else None
                pd = L.create_pd("dnnl_convolution_forward_primitive_desc_create", L.engine(),
                                 L.FWD_INFERENCE, L.CONV_DIRECT, sa.h, wa.h,
                                 bmd.h if bmd else None, da.h, *geo,
                                 attr=L.post_ops_attr(post))
                if pd is None:
                    raise Refused("convolution")
                prim = L.Primitive(pd)
                smd = prim.md(L.Q_SRC)
                sloc = get(src, smd)
                wmd = prim.md(L.Q_WEIGHTS)
                uw = L.MD.plain(wg)
                if wmd == uw:
                    wloc = ("wu", j)
                else:
                    wloc = ("w", j)
                    r = L.reorder(uw, wmd)
                    if r is None:
                        raise Refused("weight reorder")
                    key = ("chain", nd.kind, xs, wg, ys, tuple(geo[0]), tuple(geo[1]),
                           tuple(geo[2]), tuple(geo[3]), post)
                    self.wre[j] = (r, uw, wmd, wmd.size(), key)
                dmd = prim.md(L.Q_DST)
                if nd.sum is not None:
                    r_ = nd.sum
                    rloc = get(r_, dmd)
                    if r_ != src and own(r_, rloc, j):
                        dloc = rloc
                    else:
                        dloc = new_vb(dmd)
                        cp = L.reorder(dmd, dmd)
                        if cp is None:
                            raise Refused("copy")
                        add_op(cp, [(L.A_SRC, rloc, dmd), (L.A_DST, dloc, dmd)])
                else:
                    dloc = new_vb(dmd)
                args = [(L.A_SRC, sloc, smd), (L.A_WEIGHTS, wloc, wmd), (L.A_DST, dloc, dmd)]
                if has_b:
                    args.append((L.A_BIAS, ("b", j), bmd))
                add_op(prim, args)
            elif nd.kind == "pool":
                src = nd.srcs[0]
                xs = spec.shape(src, b)
                m0 = val[src][0]
                smd = _pool_md(xs) if plain(m0, xs) else m0
                sloc = get(src, smd)
                geo = _pool_geom(a, xs, ys)
                alg = _pool_alg(a, geo[2], geo[3])
                if alg is None:
                    raise Refused("pooling")
                k, s, p, pr = geo
                da = L.MD.any(ys)
                pd = L.create_pd("dnnl_pooling_forward_primitive_desc_create", L.engine(),
                                 L.FWD_INFERENCE, alg, smd.h, da.h, L.dims(s), L.dims(k),
                                 L.dims([0] * len(k)), L.dims(p), L.dims(pr))
                if pd is None:
                    raise Refused("pooling")
                prim = L.Primitive(pd)
                dmd = prim.md(L.Q_DST)
                dloc = new_vb(dmd)
                add_op(prim, [(L.A_SRC, sloc, smd), (L.A_DST, dloc, dmd)])
            elif nd.kind in ("relu", "bn"):
                src = nd.srcs[0]
                m0, sloc = val[src]
                dmd = m0
                dloc = sloc if own(src, sloc, j) else new_vb(m0)
                if nd.kind == "relu":
                    pd = L.create_pd("dnnl_eltwise_forward_primitive_desc_create", L.engine(),
                                     L.FWD_INFERENCE, L.ELTWISE_RELU, m0.h, m0.h, 0.0, 0.0)
                    extra = []
                else:
                    flags = L.USE_GLOBAL_STATS | L.USE_SCALE | L.USE_SHIFT | \
                        (L.FUSE_NORM_RELU if nd.relu else 0)
                    pd = L.create_pd("dnnl_batch_normalization_forward_primitive_desc_create",
                                     L.engine(), L.FWD_INFERENCE, m0.h, m0.h, float(a["eps"]),
                                     flags)
                    gamma, beta, mean, var = nd.params
                    vmd = L.MD.plain((ys[1],))
                    if a["fix_gamma"]:
                        self.ones[j] = ys[1]
                        scale = ("ones", j)
                    else:
                        scale = ("p", gamma)
                    extra = [(L.A_MEAN, ("p", mean), vmd), (L.A_VARIANCE, ("p", var), vmd),
                             (L.A_SCALE, scale, vmd), (L.A_SHIFT, ("p", beta), vmd)]
                if pd is None:
                    raise Refused(nd.kind)
                prim = L.Primitive(pd)
                add_op(prim, [(L.A_SRC, sloc, m0), (L.A_DST, dloc, dmd)] + extra)
            elif nd.kind == "add":
                x0, x1 = nd.srcs
                m0, m1 = val[x0][0], val[x1][0]
                md = m1 if plain(m0, ys) and not plain(m1, ys) else m0
                l0, l1 = get(x0, md), get(x1, md)
                if not own(x0, l0, j) and x1 != x0 and own(x1, l1, j):
                    x0, x1, l0, l1 = x1, x0, l1, l0     # in place over src0 only
                dloc = l0 if own(x0, l0, j) and x1 != x0 else new_vb(md)
                pd = L.create_pd("dnnl_binary_primitive_desc_create", L.engine(), L.BINARY_ADD,
                                 md.h, md.h, md.h,
                                 attr=L.post_ops_attr(("relu",) if nd.relu else ()))
                if pd is None:
                    raise Refused("binary add")
                prim = L.Primitive(pd)
                dmd = md
                add_op(prim, [(L.A_SRC, l0, md), (L.A_SRC_1, l1, md), (L.A_DST, dloc, md)])
            else:
                raise Refused("node kind %r" % (nd.kind,))
            v = nin + j
            val[v] = (dmd, dloc)
            if v in outs:
                umd = L.MD.plain(ys)
                r = L.reorder(dmd, umd)
                if r is None:
                    raise Refused("output reorder")
                add_op(r, [(L.A_SRC, dloc, dmd), (L.A_DST, ("out", outs[v]), umd)])
        self._plan_buffers()
        self.sets = []

    def _plan_buffers(self):
        """Virtual buffers onto physical ones: a buffer is free again after
        the last op that touches it."""
        lastop = {}
        for i, (_, args) in enumerate(self.ops):
            for _, loc, _ in args:
                if loc[0] == "buf":
                    lastop[loc[1]] = i
        phys, sizes, free = {}, [], []
        for i, (_, args) in enumerate(self.ops):
            for _, loc, _ in args:
                if loc[0] != "buf" or loc[1] in phys:
                    continue
                need = self.vb[loc[1]]
                best = None
                for f in free:
                    if sizes[f] >= need and (best is None or sizes[f] < sizes[best]):
                        best = f
                if best is None:
                    # grow the largest free buffer rather than add one
                    if free:
                        best = max(free, key=lambda f: sizes[f])
                        sizes[best] = need
                    else:
                        best = len(sizes)
                        sizes.append(need)
                free = [f for f in free if f != best]
                phys[loc[1]] = best
            for _, loc, _ in args:
                if loc[0] == "buf" and lastop[loc[1]] == i and phys[loc[1]] not in free:
                    free.append(phys[loc[1]])
        self.phys, self.sizes = phys, sizes
        self.pad = max([md.size() for _, args in self.ops for a, _, md in args
                        if a == L.A_SCRATCHPAD] + [0])
        self.nbytes = sum(sizes) + self.pad

    def _new_set(self):
        """Buffers, memory objects and argument arrays for one run at a time."""
        bufs = [_scratch(n) for n in self.sizes]
        pad = _scratch(self.pad) if self.pad else None
        wtmp = {j: _scratch(w[3]) for j, w in self.wre.items()}
        keep, calls, dyn = [bufs, pad, wtmp], [], {}
        for prim, args in self.ops:
            arr = (L.ExecArg * len(args))()
            for i, (arg, loc, md) in enumerate(args):
                if loc[0] == "buf":
                    m = L.Memory(md, bufs[self.phys[loc[1]]].ctypes.data)
                elif loc[0] == "pad":
                    m = L.Memory(md, pad.ctypes.data)
                else:
                    m = L.Memory(md, None)
                    dyn.setdefault(loc, []).append([m, None])
                keep.append(m)
                arr[i].arg = arg
                arr[i].memory = m.h
            calls.append((prim.prim, len(args), arr))
        return _Set(keep, calls, dyn, wtmp)

    def run(self, ins, outs, wts, lo, hi, nthr):
        """Samples [lo, hi) of the chain; ``wts``: per conv node, (weight, bias, stamp)."""
        spec = self.spec
        ptr = {}
        hold = []
        for k in spec.acts:
            a = ins[k]
            ptr[("in", k)] = a.ctypes.data + lo * a.strides[0]
        for i, a in enumerate(outs):
            ptr[("out", i)] = a.ctypes.data + lo * a.strides[0]
        try:
            st = self.sets.pop()
        except IndexError:
            st = self._new_set()
        try:
            with _threads.inside(nthr):
                self._go(spec, ins, wts, ptr, hold, st)
        finally:
            self.sets.append(st)
        stats["runs"] += 1

    def _go(self, spec, ins, wts, ptr, hold, st):
        """Point the run's memories at this call's arrays, then run every primitive."""
        for j, nd in enumerate(spec.nodes):
            if nd.kind in ("conv", "convbn"):
                w, bias, wst = wts[j]
                if j in self.wre:
                    # held to the end of the run: another thread's refill of
                    # the same key, or an eviction, drops the cache's reference
                    buf = self._weight(j, w, wst, st)
                    hold.append(buf)
                    ptr[("w", j)] = buf.ctypes.data
                else:
                    ptr[("wu", j)] = w.ctypes.data
                if bias is not None:
                    ptr[("b", j)] = bias.ctypes.data
            elif nd.kind == "bn":
                for k in nd.params:
                    ptr[("p", k)] = _vec(ins[k], hold)
                if j in self.ones:
                    one = np.ones(self.ones[j], _F32)
                    hold.append(one)
                    ptr[("ones", j)] = one.ctypes.data
        for loc, ms in st.dyn.items():
            p = ptr[loc]
            for m in ms:
                if m[1] != p:
                    m[0].point(p)
                    m[1] = p
        lib = L.lib()
        ex = lib.dnnl_primitive_execute
        stream = L.stream()
        for prim, n, arr in st.calls:
            status = ex(prim, stream, n, arr)
            if status != L.SUCCESS:
                raise L.OneDNNError("oneDNN chain: a primitive failed (status %d)" % status)

    def _weight(self, j, w, wst, st):
        r, uw, wmd, nbytes, key = self.wre[j]

        def fill(buf):
            um = L.Memory(uw, w.ctypes.data)
            dm = L.Memory(wmd, buf.ctypes.data)
            args = [(L.A_SRC, um), (L.A_DST, dm)]
            pad = _pad_of(r)
            if pad is not None:
                pb = _scratch(pad.size())
                args.append((L.A_SCRATCHPAD, L.Memory(pad, pb.ctypes.data)))
            r.execute(args)
        if wst is None:
            buf = st.wtmp[j]
            fill(buf)
            return buf
        return _wcache.get(key + (self.b, w.ctypes.data), wst, nbytes, fill)


class _Set:
    __slots__ = ("keep", "calls", "dyn", "wtmp")

    def __init__(self, keep, calls, dyn, wtmp):
        self.keep, self.calls, self.dyn, self.wtmp = keep, calls, dyn, wtmp


def _vec(a, hold):
    if a.dtype != _F32 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, _F32)
        hold.append(a)
    return a.ctypes.data


def _weights(nd, ins):
    """(weight, bias or None, weight stamp) of conv node ``nd`` for this run."""
    a = nd.attrs
    if nd.kind == "convbn":
        from .. import conv_bn
        p = nd.params
        bias = ins[p[1]] if p[1] is not None else None
        f = conv_bn._fold(np, ins[p[0]], bias, *[ins[k] for k in p[2:]], a["eps"],
                          a["fix_gamma"])
        return f.w, f.b, (f, 0)
    w = ins[nd.params[0]]
    bias = ins[nd.params[1]] if a["has_bias"] else None
    if not w.flags.c_contiguous or w.dtype != _F32:
        return np.ascontiguousarray(w, _F32), bias, None
    if bias is not None and (not bias.flags.c_contiguous or bias.dtype != _F32):
        bias = np.ascontiguousarray(bias, _F32)
    return w, bias, _wcache.stamp(w)


def _ready(spec, ins, outs):
    return all(ins[k].dtype == _F32 and ins[k].flags.c_contiguous for k in spec.acts) and \
        all(o.dtype == _F32 and o.flags.c_contiguous for o in outs)


def rows(xp, ins, out, attrs):
    """(units, run) of a chain step: its samples (every value of a chain
    has the same batch size; each range runs the whole chain on its
    samples)."""
    spec = attrs["chain"]
    outs = out if isinstance(out, (list, tuple)) else [out]
    if xp is not np or not _ready(spec, ins, outs):
        return 1, lambda lo, hi: _fallback(spec, xp, ins, outs)
    n = spec.batch
    # folded weights and version stamps here, on the plan's thread: the
    # kept-weight scope (``_wcache.scope``) is this thread's, not the
    # workers' that may take a range
    wts = {j: _weights(nd, ins) for j, nd in enumerate(spec.nodes)
           if nd.kind in ("conv", "convbn")}

    def run(lo, hi):
        b = hi - lo
        nthr = _threads.width(spec.macs * b // n)
        built = spec.get(b, nthr)
        if built is None:
            if b == n:
                return _fallback(spec, xp, ins, outs)
            acts = set(spec.acts)
            return _fallback(spec, xp, [a[lo:hi] if k in acts else a for k, a in enumerate(ins)],
                             [o[lo:hi] for o in outs])
        built.run(ins, outs, wts, lo, hi, nthr)
    if not SPLIT:
        return 1, lambda lo, hi: run(0, n)
    return n, run


def _fallback(spec, xp, ins, outs):
    stats["fallbacks"] += 1
    spec.fallback(xp, ins, outs)


def kernel(xp, *ins, out, chain):
    """The chain on the calling thread."""
    n, run = rows(xp, ins, out, {"chain": chain})
    run(0, n)
