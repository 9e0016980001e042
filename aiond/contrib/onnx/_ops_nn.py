"""ONNX -> aiond translations of the neural-network operators: MatMul/Gemm,
convolution and pooling, normalizations, softmax."""
from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._graph import Const
from ._ops import OPS, _norm_axis, op


# -------------------------------------------------------------- linear
@op("MatMul")
def _matmul(imp, node, ins, at):
    a, b = ins
    ra, rb = imp.rank(a, "MatMul's A"), imp.rank(b, "MatMul's B")
    A, B = imp.sym(a), imp.sym(b)
    if rb <= 2 and ra >= 1:
        return sym.dot(A, B)    # MXNet's dot contracts A's last axis with B's first
    # numpy matmul: a vector A is a row (dropped after), batch axes broadcast
    squeeze = None
    if ra == 1:
        A, ra, squeeze = sym.expand_dims(A, axis=0), 2, -2
    sa, sb = list(imp.shape(a)[0]), list(imp.shape(b)[0])
    if squeeze is not None:
        sa = [1] + sa
    while ra < rb:
        A, sa, ra = sym.expand_dims(A, axis=0), [1] + sa, ra + 1
    for i in range(ra - 2):
        if sa[i] == 1 and sb[i] != 1:
            A = sym.broadcast_like(A, B, lhs_axes=(i,), rhs_axes=(i,))
        elif sb[i] == 1 and sa[i] != 1:
            B = sym.broadcast_like(B, A, lhs_axes=(i,), rhs_axes=(i,))
    if ra == 3:
        out = sym.batch_dot(A, B)
    else:
        A3, B3 = A, B
        for r in range(ra, 3, -1):      # merge the leading batch axes (MXNet's -3 code)
            A3 = sym.reshape(A3, shape=(-3,) + (0,) * (r - 2))
            B3 = sym.reshape(B3, shape=(-3,) + (0,) * (r - 2))
        out = sym.reshape_like(sym.batch_dot(A3, B3), A,      # A has the broadcast batch
                               lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=ra - 2)
    return out if squeeze is None else sym.squeeze(out, axis=squeeze)


@op("Gemm")
def _gemm(imp, node, ins, at):
    a, b = ins[0], ins[1]
    c = ins[2] if len(ins) > 2 else None
    alpha, beta = at.get("alpha", 1.0), at.get("beta", 1.0)
    ta, tb = at.get("transA", 0), at.get("transB", 0)
    if not ta and alpha == 1.0 and isinstance(b, Const) and b.static and \
            (c is None or (beta == 1.0 and isinstance(c, Const) and c.static and
                           c.a.size == (b.a.shape[0] if tb else b.a.shape[1]) and
                           c.a.ndim <= 2)):
        w = b
        if not tb:      # FullyConnected keeps its weight as (out, in)
            w = Const(np.ascontiguousarray(b.a.T))
            w._name = b._name
        bias = None
        if c is not None:
            bias = Const(c.a.reshape(-1))
            bias._name = c._name
        return sym.FullyConnected(imp.sym(a), imp.sym(w),
                                  None if bias is None else imp.sym(bias),
                                  num_hidden=int(w.a.shape[0]), no_bias=bias is None)
    out = sym.dot(imp.sym(a), imp.sym(b), transpose_a=bool(ta), transpose_b=bool(tb))
    if alpha != 1.0:
        out = out * alpha
    if c is not None:
        cs = imp.sym(c)
        out = sym.broadcast_add(out, cs * beta if beta != 1.0 else cs)
    return out


# ------------------------------------------------------------ conv / pool
def _spatial(imp, x, what):
    a, b = imp.shape(x, what)
    return a[2:], b[2:]


def _pads(imp, node, x, at, kernel, strides, dil):
    """(begin pads, end pads) per spatial axis, from pads or auto_pad."""
    n = len(kernel)
    auto = at.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        p = list(at.get("pads", [0] * (2 * n)))
        return p[:n], p[n:]
    if auto == "VALID":
        return [0] * n, [0] * n
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        imp.unsupported("auto_pad=%r" % auto)
    sa, sb = _spatial(imp, x, "the input (auto_pad needs its spatial size)")
    res = []
    for s in (sa, sb):
        beg, end = [], []
        for i in range(n):
            out = -(-s[i] // strides[i])
            total = max((out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - s[i], 0)
            small = total // 2
            beg.append(small if auto == "SAME_UPPER" else total - small)
            end.append(total - small if auto == "SAME_UPPER" else small)
        res.append((beg, end))
    if res[0] != res[1]:
        imp.unsupported("auto_pad on a dynamic spatial axis")
    return res[0]


def _pad_sym(imp, x, begins, ends, mode="constant", value=0.0):
    """Pad ``x`` (begins/ends for every axis) with MXNet's Pad."""
    r = len(begins)
    if any(p < 0 for p in begins + ends):
        imp.unsupported("negative pads (cropping)")
    if not any(begins + ends):
        return x
    if r in (4, 5) and not any(begins[:2] + ends[:2]):
        pw = tuple(v for pair in zip(begins, ends) for v in pair)
        return sym.pad(x, mode=mode, pad_width=pw, constant_value=float(value))
    if r == 3 and not any(begins[:2] + ends[:2]):
        y = sym.pad(sym.expand_dims(x, axis=2), mode=mode,
                    pad_width=(0, 0, 0, 0, 0, 0, begins[2], ends[2]),
                    constant_value=float(value))
        return sym.squeeze(y, axis=2)
    if mode == "constant":
        # any axis: concatenate constant blocks shaped like slices of x
        for ax in range(r):
            for where_, n in (("begin", begins[ax]), ("end", ends[ax])):
                if n:
                    edge = sym.slice_axis(x, axis=ax, begin=0, end=1)
                    blk = sym.repeat(sym.zeros_like(edge) + float(value), repeats=n, axis=ax)
                    x = sym.concat(blk, x, dim=ax) if where_ == "begin" else \
                        sym.concat(x, blk, dim=ax)
        return x
    imp.unsupported("Pad mode %r on a %d-d tensor or on its first two axes" % (mode, r))


@op("Conv")
def _conv(imp, node, ins, at):
    x, w = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    ws = imp.static_shape(w, "Conv's weight")
    kernel = list(at.get("kernel_shape", ws[2:]))
    n = len(kernel)
    strides = list(at.get("strides", [1] * n))
    dil = list(at.get("dilations", [1] * n))
    beg, end = _pads(imp, node, x, at, kernel, strides, dil)
    X = imp.sym(x)
    if beg != end:
        X = _pad_sym(imp, X, [0, 0] + beg, [0, 0] + end)
        beg = [0] * n
    return sym.Convolution(X, imp.sym(w), None if bias is None else imp.sym(bias),
                           kernel=tuple(kernel), stride=tuple(strides), dilate=tuple(dil),
                           pad=tuple(beg), num_filter=int(ws[0]),
                           num_group=int(at.get("group", 1)), no_bias=bias is None)


@op("ConvTranspose")
def _deconv(imp, node, ins, at):
    x, w = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    ws = imp.static_shape(w, "ConvTranspose's weight")
    kernel = list(at.get("kernel_shape", ws[2:]))
    n = len(kernel)
    strides = list(at.get("strides", [1] * n))
    dil = list(at.get("dilations", [1] * n))
    group = int(at.get("group", 1))
    adj = list(at.get("output_padding", [0] * n))
    if "output_shape" in at:
        sa = imp.static_shape(x, "ConvTranspose's input")[2:]
        osh = list(at["output_shape"])[-n:]
        beg, end = [], []
        for i in range(n):
            total = strides[i] * (sa[i] - 1) + adj[i] + ((kernel[i] - 1) * dil[i] + 1) - osh[i]
            if at.get("auto_pad", "NOTSET") == "SAME_UPPER":
                beg.append(total // 2)
                end.append(total - total // 2)
            else:
                beg.append(total - total // 2)
                end.append(total // 2)
    elif at.get("auto_pad", "NOTSET") not in ("NOTSET", "", "VALID"):
        imp.unsupported("ConvTranspose with auto_pad=%r and no output_shape" % at["auto_pad"])
    else:
        p = list(at.get("pads", [0] * (2 * n)))
        beg, end = p[:n], p[n:]
    # MXNet pads both sides alike: pad by the smaller side, crop the rest
    pad = [min(b, e) for b, e in zip(beg, end)]
    out = sym.Deconvolution(imp.sym(x), imp.sym(w), None if bias is None else imp.sym(bias),
                            kernel=tuple(kernel), stride=tuple(strides), dilate=tuple(dil),
                            pad=tuple(pad), adj=tuple(adj), num_filter=int(ws[1]) * group,
                            num_group=group, no_bias=bias is None)
    for i in range(n):
        cb, ce = beg[i] - pad[i], end[i] - pad[i]
        if cb or ce:
            out = sym.slice_axis(out, axis=2 + i, begin=cb, end=-ce if ce else None)
    return out


def _pool(imp, node, ins, at, pool_type):
    x = ins[0]
    kernel = list(at["kernel_shape"])
    n = len(kernel)
    strides = list(at.get("strides", [1] * n))
    dil = list(at.get("dilations", [1] * n))
    if any(d != 1 for d in dil):
        imp.unsupported("%s with dilations %s (MXNet's Pooling has none)"
                        % (node.op_type, dil))
    if len(node.output) > 1 and node.output[1]:
        imp.unsupported("MaxPool's Indices output")
    beg, end = _pads(imp, node, x, at, kernel, strides, dil)
    include = bool(at.get("count_include_pad", 0))
    X = imp.sym(x)
    if beg != end:
        if pool_type == "avg" and not include:
            imp.unsupported("AveragePool with uneven pads and count_include_pad=0")
        X = _pad_sym(imp, X, [0, 0] + beg, [0, 0] + end,
                     value=-3.4e38 if pool_type == "max" else 0.0)
        beg = [0] * n
    kw = {}
    if pool_type == "lp":
        kw["p_value"] = int(at.get("p", 2))
    if pool_type == "avg":
        kw["count_include_pad"] = include
    conv = "valid"
    if at.get("ceil_mode", 0):
        conv = "full"
        sa, sb = imp.shapes(x)
        if sa is not None and sa[2:] == sb[2:]:
            # ONNX (as PyTorch) drops a last window that would start in the
            # right padding; MXNet's "full" keeps it
            fits_full, fits_valid = True, True
            for i in range(n):
                size, st = sa[2 + i], strides[i]
                span = size + 2 * beg[i] - kernel[i]
                floor_out, ceil_out = span // st + 1, -(-span // st) + 1
                out = ceil_out - 1 if (ceil_out - 1) * st >= size + beg[i] else ceil_out
                fits_full &= out == ceil_out
                fits_valid &= out == floor_out
            if not fits_full:
                if not fits_valid:
                    imp.unsupported("%s with ceil_mode whose last window starts in the "
                                    "padding on some axes only" % node.op_type)
                conv = "valid"
    return sym.Pooling(X, kernel=tuple(kernel), stride=tuple(strides), pad=tuple(beg),
                       pool_type=pool_type, pooling_convention=conv, **kw)


OPS["MaxPool"] = lambda imp, node, ins, at: _pool(imp, node, ins, at, "max")
OPS["AveragePool"] = lambda imp, node, ins, at: _pool(imp, node, ins, at, "avg")


@op("LpPool")
def _lp_pool(imp, node, ins, at):
    # (sum |x|^p)^(1/p) over each window, for any p (MXNet's lp pooling takes
    # p 1-3): the window sum is the average with the padding counted, times its size
    p = float(at.get("p", 2))
    x = imp.sym(ins[0])
    inner = dict(at, count_include_pad=1)
    y = _pool(imp, node, [sym.abs(x) ** p if p != 1 else sym.abs(x)] + list(ins[1:]),
              inner, "avg")
    y = y * float(np.prod(at["kernel_shape"]))
    return y if p == 1 else y ** (1.0 / p)


def _global_pool(pool_type):
    def tr(imp, node, ins, at):
        kw = {"p_value": int(at.get("p", 2))} if pool_type == "lp" else {}
        r = imp.rank(ins[0])
        return sym.Pooling(imp.sym(ins[0]), kernel=(1,) * (r - 2), global_pool=True,
                           pool_type=pool_type, **kw)
    return tr


OPS["GlobalAveragePool"] = _global_pool("avg")
OPS["GlobalMaxPool"] = _global_pool("max")


@op("GlobalLpPool")
def _global_lp_pool(imp, node, ins, at):
    p = float(at.get("p", 2))
    r = imp.rank(ins[0])
    y = sym.sum(sym.abs(imp.sym(ins[0])) ** p, axis=tuple(range(2, r)), keepdims=True)
    return y ** (1.0 / p)


@op("BatchNormalization", "SpatialBN")
def _batchnorm(imp, node, ins, at):
    if at.get("training_mode", 0):
        imp.unsupported("BatchNormalization with training_mode=1")
    x, g, b, m, v = ins[:5]
    return sym.BatchNorm(imp.sym(x), imp.sym(g), imp.sym(b), imp.sym(m), imp.sym(v),
                         eps=at.get("epsilon", 1e-5), momentum=at.get("momentum", 0.9),
                         fix_gamma=False, use_global_stats=True)


@op("InstanceNormalization")
def _instnorm(imp, node, ins, at):
    return sym.InstanceNorm(imp.sym(ins[0]), imp.sym(ins[1]), imp.sym(ins[2]),
                            eps=at.get("epsilon", 1e-5))


@op("LayerNormalization")
def _layernorm(imp, node, ins, at):
    x, scale = ins[0], ins[1]
    bias = ins[2] if len(ins) > 2 else None
    eps = at.get("epsilon", 1e-5)
    r = imp.rank(x, "LayerNormalization's input")
    axis = _norm_axis(at.get("axis", -1), r)
    X = imp.sym(x)
    stats = any(o for o in node.output[1:])     # Mean / InvStdDev asked for too
    if not stats and axis == r - 1 and isinstance(scale, Const) and scale.a.ndim == 1 and \
            (bias is None or (isinstance(bias, Const) and bias.a.ndim == 1)):
        if bias is None:
            bias = Const(np.zeros_like(scale.a))
        return sym.LayerNorm(X, imp.sym(scale), imp.sym(bias), axis=-1, eps=eps)
    axes = tuple(range(axis, r))
    mu = sym.mean(X, axis=axes, keepdims=True)
    d = sym.broadcast_sub(X, mu)
    var = sym.mean(sym.square(d), axis=axes, keepdims=True)
    inv = sym.rsqrt(var + eps)
    y = sym.broadcast_mul(sym.broadcast_mul(d, inv), imp.sym(scale))
    y = y if bias is None else sym.broadcast_add(y, imp.sym(bias))
    return [y, mu, inv] if stats else y


@op("RMSNormalization")
def _rmsnorm(imp, node, ins, at):
    x, scale = ins[0], ins[1]
    r = imp.rank(x, "RMSNormalization's input")
    axes = tuple(range(_norm_axis(at.get("axis", -1), r), r))
    dt = (imp.dtype(x) or np.dtype(np.float32)).name
    X = sym.Cast(imp.sym(x), dtype="float32")     # stash_type: float32
    inv = sym.rsqrt(sym.mean(sym.square(X), axis=axes, keepdims=True)
                    + float(at.get("epsilon", 1e-5)))
    y = sym.Cast(sym.broadcast_mul(X, inv), dtype=dt)
    return sym.broadcast_mul(y, imp.sym(scale))


@op("Swish")
def _swish(imp, node, ins, at):
    X = imp.sym(ins[0])
    alpha = float(at.get("alpha", 1.0))
    return X * sym.sigmoid(X * alpha if alpha != 1.0 else X)


@op("GridSample")
def _grid_sample(imp, node, ins, at):
    x, grid = ins
    mode = at.get("mode", "linear" if imp.opset >= 20 else "bilinear")
    if mode not in ("linear", "bilinear"):
        imp.unsupported("GridSample with mode=%r (aiond imports bilinear sampling, MXNet's "
                        "BilinearSampler)" % mode)
    if at.get("padding_mode", "zeros") != "zeros":
        imp.unsupported("GridSample with padding_mode=%r (MXNet's BilinearSampler pads with "
                        "zeros)" % at.get("padding_mode"))
    shp = imp.static_shape(x, "GridSample's input")
    if len(shp) != 4:
        imp.unsupported("GridSample of a %d-d input (aiond imports 2-d sampling)" % len(shp))
    H, W = shp[2], shp[3]
    G = sym.transpose(imp.sym(grid), axes=(0, 3, 1, 2))       # (N, 2: x, y, H_out, W_out)
    if not at.get("align_corners", 0):
        # MXNet maps -1/1 to the corner pixels' centres, ONNX without
        # align_corners to the image's edges: x' = x * W / (W - 1) does it
        if H < 2 or W < 2:
            imp.unsupported("GridSample of a 1-pixel axis without align_corners")
        k = np.array([W / (W - 1), H / (H - 1)], np.float32).reshape(1, 2, 1, 1)
        G = sym.broadcast_mul(G, imp.sym(Const(k)))
    return sym.BilinearSampler(imp.sym(x), G)


@op("Det")
def _det(imp, node, ins, at):
    return sym.linalg.det(imp.sym(ins[0]))


@op("LRN")
def _lrn(imp, node, ins, at):
    return sym.LRN(imp.sym(ins[0]), alpha=at.get("alpha", 1e-4), beta=at.get("beta", 0.75),
                   knorm=at.get("bias", 1.0), nsize=int(at["size"]))


@op("LpNormalization")
def _lpnorm(imp, node, ins, at):
    x = imp.sym(ins[0])
    n = sym.norm(x, ord=int(at.get("p", 2)), axis=at.get("axis", -1), keepdims=True)
    return sym.broadcast_div(x, n + (n == 0))     # an all-zero slice stays zero


# ---------------------------------------------------------------- softmax
def _softmax_like(fn):
    def tr(imp, node, ins, at):
        x = ins[0]
        r = imp.rank(x, "%s's input" % node.op_type)
        axis = _norm_axis(at.get("axis", 1 if imp.opset < 13 else -1), r)
        X = imp.sym(x)
        if axis == r - 1 or imp.opset >= 13:
            return fn(X, axis)
        # opsets < 13 softmax the input flattened to 2-d at ``axis``
        rest = imp.static_shape(x, "%s's input" % node.op_type)[axis:]
        flat = sym.reshape(X, shape=(-1, int(np.prod(rest))))
        return sym.reshape_like(fn(flat, -1), X)
    return tr


OPS["Softmax"] = _softmax_like(lambda x, ax: sym.softmax(x, axis=ax))
OPS["LogSoftmax"] = _softmax_like(lambda x, ax: sym.log_softmax(x, axis=ax))


@op("Hardmax")
def _hardmax(imp, node, ins, at):
    x = ins[0]
    s = imp.static_shape(x, "Hardmax's input")
    axis = _norm_axis(at.get("axis", 1 if imp.opset < 13 else -1), len(s))
    X = imp.sym(x)
    if imp.opset < 13 and axis != len(s) - 1:
        flat = sym.reshape(X, shape=(-1, int(np.prod(s[axis:]))))
        y = sym.one_hot(sym.argmax(flat, axis=-1), depth=int(np.prod(s[axis:])))
        return sym.reshape_like(y, X)
    y = sym.one_hot(sym.argmax(X, axis=axis), depth=s[axis])
    if axis != len(s) - 1:
        perm = list(range(len(s) - 1))
        perm.insert(axis, len(s) - 1)
        y = sym.transpose(y, axes=tuple(perm))
    return y
