"""ONNX operator -> aiond ``mx.sym`` translations (opsets 1-21).

Each translator takes (importer, node, inputs, attributes) and returns the
node's outputs: Symbols, or :class:`Const` for values known at import time.
Attributes that newer opsets moved into inputs (axes, pads, shapes, scales,
split sizes, clip bounds) are read from either place.
"""
from __future__ import annotations

import math

import numpy as np

from ... import symbol as sym
from ._graph import Const

__all__ = ["translate", "supported_ops"]

OPS = {}
# nodes that must run at inference time even when their inputs are constants
_NO_FOLD = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
            "Multinomial", "Bernoulli", "If"}
_MAX_FOLD = 1 << 27     # elements of one constant made at import time
_BIG = 2 ** 62      # ends past this mean "to the end" (PyTorch writes INT64_MAX)


def op(*names):
    def reg(fn):
        for n in names:
            OPS[n] = fn
        return fn
    return reg


def supported_ops():
    """The ONNX operator types the importer translates (Constant, whose value
    is known at import time, is folded like every node on constants)."""
    return sorted(set(OPS) | {"Constant"})


def _attrs(node):
    from onnx import helper
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode("utf-8") for s in v]
        out[a.name] = v
    return out


def translate(imp, node, ins):
    present = [v for v in ins if v is not None]
    if node.domain not in ("", "ai.onnx"):
        imp.unsupported("operator %s of domain %r is not an ONNX standard operator; "
                        "aiond imports the ai.onnx domain" % (node.op_type, node.domain))
    if node.op_type not in _NO_FOLD and all(isinstance(v, Const) for v in present) and \
            not any(v.lazy is not None and not v.static for v in present):
        outs = _fold(imp, node, ins)
        if node.op_type in _LAZY and any(o is not None and not o.static for o in outs):
            _LAZY[node.op_type](imp, node, ins, outs[0])
        return outs
    fn = OPS.get(node.op_type)
    if fn is None:
        imp.unsupported("ONNX operator %s is not supported by aiond's importer" % node.op_type)
    out = fn(imp, node, ins, _attrs(node))
    return out if isinstance(out, (list, tuple)) else [out]


def _fold(imp, node, ins):
    """Run a node on constants now (onnx's reference evaluator, at the model's
    opset), once per probe when its inputs differ between the probes."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    names = [n for n in node.input if n]
    vals = {n: v for n, v in zip(node.input, ins) if n}
    at = {"ConstantOfShape": 0, "Expand": 1}.get(node.op_type)    # the shape input
    shp = ins[at] if at is not None and at < len(ins) else None
    if shp is not None:
        for arr in (shp.a, shp.b):
            n = int(np.prod(np.maximum(arr.astype(np.float64), 1)))
            if n > _MAX_FOLD:      # a corrupted shape must not allocate gigabytes
                imp.fail("%s would make a constant of %d elements" % (node.op_type, n))
    g = helper.make_graph(
        [node], "fold",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(vals[n].a.dtype),
                                       None) for n in dict.fromkeys(names)],
        [helper.make_tensor_value_info(o, 0, None) for o in node.output if o])
    model = helper.make_model(g, opset_imports=imp.opset_imports)
    if imp.ir_version:
        model.ir_version = imp.ir_version
    try:
        ev = ReferenceEvaluator(model)
        ra = ev.run(None, {n: vals[n].a for n in vals})
        if all(v.static for v in vals.values()):
            rb = ra
        else:
            rb = ev.run(None, {n: vals[n].b for n in vals})
    except Exception as e:  # noqa: BLE001 - reported with the node
        imp.fail("folding this node on its constant inputs failed: %s: %s"
                 % (type(e).__name__, e))
    outs = [Const(np.asarray(a), None if rb is ra else np.asarray(b))
            for a, b in zip(ra, rb)]
    it = iter(outs)
    return [next(it) if o else None for o in node.output]


# ------------------------------------------------------------------ helpers
def _known_rank(imp, v):
    a, _ = imp.shapes(v)
    return None if a is None else len(a)


def _norm_axis(axis, rank):
    return axis + rank if axis < 0 else axis


def _axes_arg(imp, node, ins, at, idx, since):
    """Axes from the attribute (opset < ``since``) or the optional input."""
    if imp.opset < since or "axes" in at:
        ax = at.get("axes")
    else:
        ax = ins[idx] if len(ins) > idx else None
        ax = None if ax is None else imp.const(ax, "axes")
    return None if ax is None else [int(a) for a in np.asarray(ax).reshape(-1)]


def _scalar(c):
    return isinstance(c, Const) and c.static and c.a.size == 1


def _binary(imp, a, b, bop, scalar_op=None, rscalar_op=None):
    if scalar_op is not None and _scalar(b) and not isinstance(a, Const):
        r = _known_rank(imp, a)
        if b.a.ndim == 0 or (r is not None and r >= b.a.ndim):
            return scalar_op(a, b.a.reshape(()).item())
    if rscalar_op is not None and _scalar(a) and not isinstance(b, Const):
        r = _known_rank(imp, b)
        if a.a.ndim == 0 or (r is not None and r >= a.a.ndim):
            return rscalar_op(b, a.a.reshape(()).item())
    return bop(imp.sym(a), imp.sym(b))


_BINARY = {
    "Add": (sym.broadcast_add, lambda x, s: x + s, lambda x, s: s + x),
    "Sub": (sym.broadcast_sub, lambda x, s: x - s, lambda x, s: s - x),
    "Mul": (sym.broadcast_mul, lambda x, s: x * s, lambda x, s: s * x),
    "Div": (sym.broadcast_div, lambda x, s: x / s, lambda x, s: s / x),
    "Pow": (sym.broadcast_power, lambda x, s: x ** s, lambda x, s: s ** x),
    "Equal": (sym.broadcast_equal, None, None),
    "Less": (sym.broadcast_lesser, None, None),
    "LessOrEqual": (sym.broadcast_lesser_equal, None, None),
    "Greater": (sym.broadcast_greater, None, None),
    "GreaterOrEqual": (sym.broadcast_greater_equal, None, None),
    "And": (sym.broadcast_logical_and, None, None),
    "Or": (sym.broadcast_logical_or, None, None),
    "Xor": (sym.broadcast_logical_xor, None, None),
}


@op(*_BINARY)
def _binop(imp, node, ins, at):
    # opset < 7 broadcasts only with broadcast=1, aligned at the end unless
    # 'axis' says otherwise (then the operand would need reshaping first)
    if at.get("broadcast") and at.get("axis") not in (None, -1):
        imp.unsupported("legacy broadcast with an 'axis' attribute (opset < 7)")
    bop, s, rs = _BINARY[node.op_type]
    a, b = ins
    if node.op_type == "Pow":
        if _scalar(b) and b.a.item() == 2 and not isinstance(a, Const):
            return sym.square(a)
        da, db = imp.dtype(a), imp.dtype(b)
        if da is not None and db is not None and da != db and not _scalar(b):
            # ONNX lets base and exponent differ; the result has the base's type
            if da.kind == "f":
                return sym.broadcast_power(imp.sym(a), sym.Cast(imp.sym(b), dtype=da.name))
            return sym.Cast(sym.broadcast_power(sym.Cast(imp.sym(a), dtype="float64"),
                                                sym.Cast(imp.sym(b), dtype="float64")),
                            dtype=da.name)
    return _binary(imp, a, b, bop, s, rs)


def _variadic(bop):
    def tr(imp, node, ins, at):
        xs = [v for v in ins if v is not None]
        out = imp.sym(xs[0])
        for v in xs[1:]:
            out = bop(out, imp.sym(v))
        return out
    return tr


OPS["Sum"] = _variadic(sym.broadcast_add)
OPS["Max"] = _variadic(sym.broadcast_maximum)
OPS["Min"] = _variadic(sym.broadcast_minimum)


@op("Mean")
def _mean(imp, node, ins, at):
    xs = [v for v in ins if v is not None]
    return _variadic(sym.broadcast_add)(imp, node, xs, at) / float(len(xs))


_UNARY = {
    "Relu": sym.relu, "Sigmoid": sym.sigmoid, "Tanh": sym.tanh, "Exp": sym.exp,
    "Log": sym.log, "Abs": sym.abs, "Neg": sym.negative, "Sqrt": sym.sqrt,
    "Reciprocal": sym.reciprocal, "Floor": sym.floor, "Ceil": sym.ceil,
    "Sign": sym.sign, "Sin": sym.sin, "Cos": sym.cos, "Tan": sym.tan, "Asin": sym.arcsin,
    "Acos": sym.arccos, "Atan": sym.arctan, "Sinh": sym.sinh, "Cosh": sym.cosh,
    "Asinh": sym.arcsinh, "Acosh": sym.arccosh, "Atanh": sym.arctanh, "Erf": sym.erf,
    "Not": sym.logical_not, "Softsign": sym.softsign,
    "Softplus": lambda x: sym.Activation(x, act_type="softrelu"),
}


@op(*_UNARY)
def _unop(imp, node, ins, at):
    return _UNARY[node.op_type](imp.sym(ins[0]))


@op("Round")
def _round(imp, node, ins, at):
    # ONNX rounds halves to even; MXNet's rint rounds them down, round away from 0
    x = imp.sym(ins[0])
    f = sym.floor(x)
    d = x - f
    odd = f - sym.floor(f * 0.5) * 2.0
    return f + (d > 0.5) + (d == 0.5) * odd


@op("Identity")
def _identity(imp, node, ins, at):
    return ins[0]


@op("Dropout")
def _dropout(imp, node, ins, at):
    # inference: Dropout is the identity (its mask output: all ones)
    x = ins[0]
    out = [x]
    if len(node.output) > 1 and node.output[1]:
        out.append(sym.ones_like(imp.sym(x)))
    return out


@op("LeakyRelu")
def _leaky(imp, node, ins, at):
    return sym.LeakyReLU(imp.sym(ins[0]), act_type="leaky", slope=at.get("alpha", 0.01))


@op("Elu")
def _elu(imp, node, ins, at):
    return sym.LeakyReLU(imp.sym(ins[0]), act_type="elu", slope=at.get("alpha", 1.0))


@op("Selu")
def _selu(imp, node, ins, at):
    x = imp.sym(ins[0])
    alpha = at.get("alpha", 1.67326319217681884765625)
    gamma = at.get("gamma", 1.05070102214813232421875)
    neg = x - sym.relu(x)
    return (sym.relu(x) + (sym.exp(neg) - 1.0) * alpha) * gamma


@op("Celu")
def _celu(imp, node, ins, at):
    x = imp.sym(ins[0])
    alpha = at.get("alpha", 1.0)
    return sym.relu(x) + (sym.exp((x - sym.relu(x)) / alpha) - 1.0) * alpha


@op("PRelu")
def _prelu(imp, node, ins, at):
    x = imp.sym(ins[0])
    return sym.relu(x) + sym.broadcast_mul(imp.sym(ins[1]), x - sym.relu(x))


@op("ThresholdedRelu")
def _thresholded(imp, node, ins, at):
    x = imp.sym(ins[0])
    return x * (x > at.get("alpha", 1.0))


@op("HardSigmoid")
def _hard_sigmoid(imp, node, ins, at):
    return sym.hard_sigmoid(imp.sym(ins[0]), alpha=at.get("alpha", 0.2),
                            beta=at.get("beta", 0.5))


@op("HardSwish")
def _hard_swish(imp, node, ins, at):
    x = imp.sym(ins[0])
    return x * sym.hard_sigmoid(x, alpha=1.0 / 6, beta=0.5)


@op("Mish")
def _mish(imp, node, ins, at):
    x = imp.sym(ins[0])
    return x * sym.tanh(sym.Activation(x, act_type="softrelu"))


@op("Gelu")
def _gelu(imp, node, ins, at):
    x = imp.sym(ins[0])
    if at.get("approximate", "none") == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return x * 0.5 * (sym.tanh((x + (x ** 3) * 0.044715) * c) + 1.0)
    return sym.LeakyReLU(x, act_type="gelu")


@op("Clip")
def _clip(imp, node, ins, at):
    x = imp.sym(ins[0])
    if imp.opset < 11:
        lo, hi = at.get("min"), at.get("max")
    else:
        lo = None if len(ins) < 2 or ins[1] is None else imp.const(ins[1], "Clip's min").item()
        hi = None if len(ins) < 3 or ins[2] is None else imp.const(ins[2], "Clip's max").item()
    if lo is not None and hi is not None and lo <= hi:
        return sym.clip(x, a_min=lo, a_max=hi)
    if lo is not None:       # (min > max: every value becomes max, as ONNX says)
        x = sym.maximum(x, lo)
    if hi is not None:
        x = sym.minimum(x, hi)
    return x


@op("Cast")
def _cast(imp, node, ins, at):
    from ._graph import np_dtype
    dt = np_dtype(at["to"])
    if dt == np.bool_:
        dt = np.dtype(np.float32)   # masks stay 0/1 numbers on aiond's legacy operators
    if dt.kind not in "fiub":
        imp.unsupported("Cast to %s" % dt)
    return sym.Cast(imp.sym(ins[0]), dtype=dt.name)


@op("CastLike")
def _cast_like(imp, node, ins, at):
    if isinstance(ins[1], Const):
        dt = ins[1].a.dtype
        return sym.Cast(imp.sym(ins[0]), dtype=("float32" if dt == np.bool_ else dt.name))
    return _cast_to_like(imp, ins[0], ins[1])


def _cast_to_like(imp, x, like):
    # the target's dtype is fixed only once the graph is typed: cast to the
    # dtype its inputs declare (aiond's graphs compute in their inputs' dtype)
    dts = set(imp.input_dtypes.values())
    if len(dts) != 1:
        imp.unsupported("CastLike to a computed tensor in a graph with inputs of "
                        "several dtypes")
    return sym.Cast(imp.sym(x), dtype=dts.pop().name)


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


# ------------------------------------------------------------ shape ops
@op("Shape")
def _shape_op(imp, node, ins, at):
    a, b = imp.shape(ins[0], "Shape's input")
    s, e = at.get("start", 0), at.get("end")
    return Const(np.array(a, np.int64)[s:e], np.array(b, np.int64)[s:e])


@op("Size")
def _size_op(imp, node, ins, at):
    a, b = imp.shape(ins[0], "Size's input")
    return Const(np.array(int(np.prod(a)), np.int64), np.array(int(np.prod(b)), np.int64))


def _shape_codes(imp, x, target, what):
    """A target shape (Const, maybe different under the two probes) as MXNet
    shape codes: entries that follow a dynamic axis of ``x`` become 0 (copy
    that axis) or -1 (infer)."""
    if target.static:
        return tuple(int(d) for d in target.a)
    xa, xb = imp.shapes(x)
    codes, inferred = [], 0
    for i, (p, q) in enumerate(zip(target.a.tolist(), target.b.tolist())):
        if p == q:
            codes.append(int(p))
        elif xa is not None and i < len(xa) and xa[i] == p and xb[i] == q:
            codes.append(0)
        else:
            codes.append(-1)
            inferred += 1
    if inferred > 1 or (inferred == 1 and -1 in target.a.tolist()):
        imp.fail("%s depends on dynamic input axes in a way aiond cannot express "
                 "(%s / %s under two sizes)" % (what, target.a.tolist(), target.b.tolist()))
    return tuple(codes)


@op("Reshape")
def _reshape(imp, node, ins, at):
    x = ins[0]
    if imp.opset < 5:
        shape = Const(np.array(at["shape"], np.int64))
    else:
        shape = ins[1]
        imp.const(shape, "Reshape's shape", static=False)
    if at.get("allowzero", 0) and 0 in shape.a.tolist():
        imp.unsupported("Reshape to a zero-size axis (allowzero=1)")
    return sym.reshape(imp.sym(x), shape=_shape_codes(imp, x, shape, "Reshape's shape"))


@op("Flatten")
def _flatten(imp, node, ins, at):
    x = ins[0]
    axis = at.get("axis", 1)
    X = imp.sym(x)
    if axis == 1:
        return sym.Flatten(X)
    r = imp.rank(x, "Flatten's input")
    axis = _norm_axis(axis, r)
    if axis == 0:
        return sym.reshape(X, shape=(1, -1))
    a, b = imp.shape(x)
    if a[axis:] == b[axis:]:
        return sym.reshape(X, shape=(-1, int(np.prod(a[axis:]))))
    if a[:axis] == b[:axis]:
        return sym.reshape(X, shape=(int(np.prod(a[:axis])), -1))
    imp.unsupported("Flatten at axis %d with dynamic axes on both sides" % axis)


@op("Transpose")
def _transpose(imp, node, ins, at):
    perm = at.get("perm")
    X = imp.sym(ins[0])
    if perm is None:
        return sym.transpose(X)
    return sym.transpose(X, axes=tuple(int(p) for p in perm))


@op("Concat")
def _concat(imp, node, ins, at):
    xs = [v for v in ins if v is not None]
    axis = at["axis"]
    if axis < 0:
        axis = _norm_axis(axis, imp.rank(next(v for v in xs if not isinstance(v, Const))))
    xs = [v for v in xs if not (isinstance(v, Const) and v.a.size == 0)]
    if len(xs) == 1:
        return xs[0]
    return sym.concat(*[imp.sym(v) for v in xs], dim=axis)


@op("Split")
def _split(imp, node, ins, at):
    x = ins[0]
    axis = at.get("axis", 0)
    nout = len(node.output)
    if imp.opset >= 13 and len(ins) > 1 and ins[1] is not None:
        sizes = imp.const(ins[1], "Split's split").tolist()
    else:
        sizes = at.get("split")
    X = imp.sym(x)
    if sizes is None:
        if "num_outputs" in at:
            nout = at["num_outputs"]
            dim = imp.static_shape(x, "Split's input")[axis]
            if dim % nout:      # opset 18: the last chunk is smaller
                step = -(-dim // nout)
                sizes = [step] * (nout - 1) + [dim - step * (nout - 1)]
        if sizes is None:
            out = sym.split(X, num_outputs=nout, axis=axis)
            return [out[i] for i in range(nout)] if nout > 1 else [out]
    outs, start = [], 0
    for s in sizes:
        outs.append(sym.slice_axis(X, axis=axis, begin=int(start), end=int(start + s)))
        start += s
    return outs


@op("Squeeze")
def _squeeze(imp, node, ins, at):
    axes = _axes_arg(imp, node, ins, at, 1, 13)
    X = imp.sym(ins[0])
    if axes is None:
        a, b = imp.shape(ins[0], "Squeeze's input (no axes given)")
        axes = [i for i, (p, q) in enumerate(zip(a, b)) if p == 1 and q == 1]
    return sym.squeeze(X, axis=tuple(axes)) if axes else X


@op("Unsqueeze")
def _unsqueeze(imp, node, ins, at):
    axes = _axes_arg(imp, node, ins, at, 1, 13)
    X = imp.sym(ins[0])
    if any(a < 0 for a in axes):
        r = imp.rank(ins[0], "Unsqueeze's input") + len(axes)
        axes = [_norm_axis(a, r) for a in axes]
    for a in sorted(axes):
        X = sym.expand_dims(X, axis=a)
    return X


def _end_rel(v_a, v_b, d_a, d_b, imp, what):
    """One slice bound under both probes as a single MXNet bound."""
    if v_a == v_b:
        return v_a
    if d_a - v_a == d_b - v_b:
        return (v_a - d_a) or None
    imp.fail("%s depends on dynamic input axes in a way aiond cannot express" % what)


@op("Slice")
def _slice(imp, node, ins, at):
    x = ins[0]
    if imp.opset < 10:
        starts = Const(np.array(at["starts"]))
        ends = Const(np.array(at["ends"]))
        axes = at.get("axes")
        steps = None
    else:
        starts, ends = ins[1], ins[2]
        imp.const(starts, "Slice's starts", static=False)
        imp.const(ends, "Slice's ends", static=False)
        axes = None if len(ins) < 4 or ins[3] is None else \
            imp.const(ins[3], "Slice's axes").tolist()
        steps = None if len(ins) < 5 or ins[4] is None else \
            imp.const(ins[4], "Slice's steps").tolist()
    n = len(starts.a)
    axes = list(range(n)) if axes is None else [int(a) for a in axes]
    steps = [1] * n if steps is None else [int(s) for s in steps]
    sa, sb = imp.shape(x, "Slice's input")
    r = len(sa)
    axes = [_norm_axis(a, r) for a in axes]
    bounds = []
    for i, ax in enumerate(axes):
        per = []
        for st, en, shp in ((starts.a, ends.a, sa), (starts.b, ends.b, sb)):
            b, e, s = slice(int(st[i]), int(max(min(en[i], _BIG), -_BIG)),
                            steps[i]).indices(shp[ax])
            per.append((b, e))
        (ba, ea), (bb, eb) = per
        b = _end_rel(ba, bb, sa[ax], sb[ax], imp, "Slice's starts")
        if steps[i] < 0 and ea == -1 and eb == -1:
            e = None        # down to index 0 inclusive
        else:
            e = _end_rel(ea, eb, sa[ax], sb[ax], imp, "Slice's ends")
        bounds.append((ax, b if b is not None else 0, e, steps[i]))
    X = imp.sym(x)
    if all(s == 1 for *_, s in bounds):
        for ax, b, e, _ in bounds:
            X = sym.slice_axis(X, axis=ax, begin=b, end=e)
        return X
    begin, end, step = [None] * r, [None] * r, [None] * r
    for ax, b, e, s in bounds:
        begin[ax], end[ax], step[ax] = b, e, s
    last = max(ax for ax, *_ in bounds) + 1
    return sym.slice(X, begin=tuple(begin[:last]), end=tuple(end[:last]),
                     step=tuple(1 if s is None else s for s in step[:last]))


@op("Gather")
def _gather(imp, node, ins, at):
    data, idx = ins
    axis = at.get("axis", 0)
    if axis < 0:
        axis = _norm_axis(axis, imp.rank(data, "Gather's data"))
    if isinstance(idx, Const) and idx.static and idx.a.ndim == 0 and \
            not isinstance(data, Const):
        i = int(idx.a)
        y = sym.slice_axis(imp.sym(data), axis=axis, begin=i, end=(i + 1) or None)
        return sym.squeeze(y, axis=axis)
    neg = isinstance(idx, Const) and (idx.a < 0).any()
    return sym.take(imp.sym(data), imp.sym(idx), axis=axis, mode="wrap" if neg else "clip")


@op("GatherElements")
def _gather_elements(imp, node, ins, at):
    data, idx = imp.sym(ins[0]), imp.sym(ins[1])
    r = imp.rank(ins[0], "GatherElements' data")
    axis = _norm_axis(at.get("axis", 0), r)
    # gather_nd's index tuple per element: the index along ``axis``, the
    # element's own coordinate elsewhere
    coords = []
    for ax in range(r):
        if ax == axis:
            coords.append(idx)
        else:
            coords.append(sym.broadcast_like(
                sym.reshape(sym.contrib.arange_like(idx, axis=ax),
                            shape=tuple(-1 if k == ax else 1 for k in range(r))), idx))
    return sym.gather_nd(data, sym.stack(*coords, axis=0))


@op("GatherND")
def _gather_nd(imp, node, ins, at):
    if at.get("batch_dims", 0):
        imp.unsupported("GatherND with batch_dims")
    r = imp.rank(ins[1], "GatherND's indices")
    # MXNet's gather_nd takes the index tuple on the first axis, ONNX on the last
    idx = sym.transpose(imp.sym(ins[1]), axes=(r - 1,) + tuple(range(r - 1)))
    return sym.gather_nd(imp.sym(ins[0]), idx)


@op("Expand")
def _expand(imp, node, ins, at):
    x, shape = ins
    imp.const(shape, "Expand's shape", static=False)
    xa, xb = imp.shape(x, "Expand's input")
    ta = np.broadcast_shapes(xa, tuple(shape.a.tolist()))
    tb = np.broadcast_shapes(xb, tuple(shape.b.tolist()))
    X = imp.sym(x)
    if ta == xa and tb == xb:
        return X
    for _ in range(len(ta) - len(xa)):
        X = sym.expand_dims(X, axis=0)
    xa = (1,) * (len(ta) - len(xa)) + tuple(xa)
    xb = (1,) * (len(tb) - len(xb)) + tuple(xb)
    codes, likes = [], []
    for i, (p, q, dp, dq) in enumerate(zip(ta, tb, xa, xb)):
        if p == dp and q == dq:
            codes.append(0)     # broadcast_to: 0 keeps the input's axis
        elif p == q:
            codes.append(int(p))
        else:
            # the size of another tensor's dynamic axis: broadcast like it
            ref = imp.dim_ref(p, q) if dp == dq == 1 else None
            if ref is None:
                imp.fail("Expand's shape depends on a dynamic axis aiond cannot trace "
                         "to an input")
            codes.append(0)
            likes.append((i, ref))
    if any(c != 0 for c in codes):
        X = sym.broadcast_to(X, shape=tuple(codes))
    for i, (var, k) in likes:
        X = sym.broadcast_like(X, var, lhs_axes=(i,), rhs_axes=(k,))
    return X


@op("Tile")
def _tile(imp, node, ins, at):
    reps = imp.const(ins[1], "Tile's repeats").tolist()
    return sym.tile(imp.sym(ins[0]), reps=tuple(int(r) for r in reps))


@op("Where")
def _where(imp, node, ins, at):
    c, x, y = ins
    sc, sx, sy = (imp.shapes(v)[0] for v in ins)
    C, X, Y = imp.sym(c), imp.sym(x), imp.sym(y)
    if sc is not None and sc == sx == sy:
        return sym.where(C, X, Y)
    # broadcast all three to the common shape (zeros: an x of -inf stays -inf)
    z = sym.broadcast_add(sym.broadcast_add(sym.zeros_like(C), sym.zeros_like(X)),
                          sym.zeros_like(Y))
    return sym.where(sym.broadcast_add(C, z), sym.broadcast_add(X, z),
                     sym.broadcast_add(Y, z))


@op("ConstantOfShape")
def _constant_of_shape(imp, node, ins, at):
    imp.fail("ConstantOfShape's shape depends on a dynamic input axis")


@op("Range")
def _range(imp, node, ins, at):
    imp.unsupported("Range over values computed from the model's inputs")


# ------------------------------------------------------------ reductions
def _reduce(fn, since=18):
    def tr(imp, node, ins, at):
        axes = _axes_arg(imp, node, ins, at, 1, 13 if node.op_type == "ReduceSum" else since)
        keep = bool(at.get("keepdims", 1))
        X = imp.sym(ins[0])
        if axes is None and at.get("noop_with_empty_axes", 0):
            return X
        if axes is not None and not axes:       # an empty axes input: as none given
            if at.get("noop_with_empty_axes", 0):
                return X
            axes = None
        ax = None if axes is None else tuple(axes)
        return fn(X, ax, keep)
    return tr


def _kw(ax, keep):
    return {"keepdims": keep} if ax is None else {"axis": ax, "keepdims": keep}


OPS["ReduceMean"] = _reduce(lambda x, ax, k: sym.mean(x, **_kw(ax, k)))
OPS["ReduceSum"] = _reduce(lambda x, ax, k: sym.sum(x, **_kw(ax, k)))
OPS["ReduceMax"] = _reduce(lambda x, ax, k: sym.max(x, **_kw(ax, k)))
OPS["ReduceMin"] = _reduce(lambda x, ax, k: sym.min(x, **_kw(ax, k)))
OPS["ReduceProd"] = _reduce(lambda x, ax, k: sym.prod(x, **_kw(ax, k)))
OPS["ReduceSumSquare"] = _reduce(lambda x, ax, k: sym.sum(sym.square(x), **_kw(ax, k)))
OPS["ReduceL1"] = _reduce(lambda x, ax, k: sym.sum(sym.abs(x), **_kw(ax, k)))
OPS["ReduceL2"] = _reduce(lambda x, ax, k: sym.sqrt(sym.sum(sym.square(x), **_kw(ax, k))))
OPS["ReduceLogSum"] = _reduce(lambda x, ax, k: sym.log(sym.sum(x, **_kw(ax, k))))
OPS["ReduceLogSumExp"] = _reduce(lambda x, ax, k: sym.log(sym.sum(sym.exp(x), **_kw(ax, k))))


def _arg(fn):
    def tr(imp, node, ins, at):
        axis, keep = at.get("axis", 0), bool(at.get("keepdims", 1))
        X = imp.sym(ins[0])
        if at.get("select_last_index", 0):
            # the last of equal extremes: the first one on the flipped axis
            shp = imp.static_shape(ins[0], "%s's input" % node.op_type)
            n = shp[_norm_axis(axis, len(shp))]
            y = (n - 1) - fn(sym.flip(X, axis=axis), axis=axis, keepdims=keep)
        else:
            y = fn(X, axis=axis, keepdims=keep)
        return sym.Cast(y, dtype="int64")
    return tr


OPS["ArgMax"] = _arg(sym.argmax)
OPS["ArgMin"] = _arg(sym.argmin)


@op("TopK")
def _topk(imp, node, ins, at):
    k = at["k"] if imp.opset < 10 else int(imp.const(ins[1], "TopK's K").reshape(-1)[0])
    out = sym.topk(imp.sym(ins[0]), axis=at.get("axis", -1), k=k, ret_typ="both",
                   is_ascend=not at.get("largest", 1))
    return [out[0], sym.Cast(out[1], dtype="int64")]


@op("CumSum")
def _cumsum(imp, node, ins, at):
    axis = int(imp.const(ins[1], "CumSum's axis").reshape(()))
    X = imp.sym(ins[0])
    if at.get("reverse", 0):
        X = sym.flip(X, axis=axis)
    y = sym.np.cumsum(X.as_np_ndarray(), axis=axis).as_nd_ndarray()
    if at.get("exclusive", 0):
        y = y - X
    if at.get("reverse", 0):
        y = sym.flip(y, axis=axis)
    return y


# ------------------------------------------------------------------ misc
@op("Pad")
def _pad(imp, node, ins, at):
    mode = at.get("mode", "constant")
    if imp.opset < 11:
        pads = list(at.get("pads", at.get("paddings", [])))
        value = at.get("value", 0.0)
        axes = None
    else:
        pads = imp.const(ins[1], "Pad's pads").tolist()
        value = 0.0 if len(ins) < 3 or ins[2] is None else \
            imp.const(ins[2], "Pad's constant_value").item()
        axes = None if len(ins) < 4 or ins[3] is None else \
            imp.const(ins[3], "Pad's axes").tolist()
    r = imp.rank(ins[0], "Pad's input")
    if mode not in ("constant", "edge", "reflect"):
        imp.unsupported("Pad mode %r" % mode)
    n = len(pads) // 2
    axes = list(range(r)) if axes is None else [_norm_axis(a, r) for a in axes]
    beg, end = [0] * r, [0] * r
    for i, ax in enumerate(axes[:n]):
        beg[ax], end[ax] = int(pads[i]), int(pads[n + i])
    return _pad_sym(imp, imp.sym(ins[0]), beg, end, mode, value)


@op("Resize", "Upsample")
def _resize(imp, node, ins, at):
    x = ins[0]
    mode = at.get("mode", "nearest")
    s, s_b = imp.shape(x, "%s's input" % node.op_type)
    if s[1:] != s_b[1:]:
        imp.unsupported("%s of an image whose size depends on a dynamic axis" % node.op_type)
    if len(s) != 4:
        imp.unsupported("%s of a %d-d tensor (aiond resizes NCHW images)"
                        % (node.op_type, len(s)))
    scales = sizes = None
    if node.op_type == "Upsample" and imp.opset < 9:
        scales = list(at["scales"])
    elif node.op_type == "Upsample" or imp.opset < 11:
        scales = imp.const(ins[1], "the scales").tolist()
    else:
        if len(ins) > 3 and ins[3] is not None:
            sizes = imp.const(ins[3], "Resize's sizes").tolist()
        if len(ins) > 2 and ins[2] is not None and \
                imp.const(ins[2], "Resize's scales").size:
            scales = imp.const(ins[2], "Resize's scales").tolist()
    if at.get("axes") is not None:
        imp.unsupported("Resize with axes")
    if at.get("antialias", 0):
        imp.unsupported("Resize with antialias")
    if sizes is None and scales is None:
        imp.fail("Resize needs scales or sizes")
    if sizes is None:
        if scales[0] != 1 or scales[1] != 1:
            imp.unsupported("resizing the batch or channel axis")
        sizes = [s[0], s[1], int(math.floor(s[2] * scales[2])), int(math.floor(s[3] * scales[3]))]
    elif sizes[:2] != list(s[:2]):
        imp.unsupported("resizing the batch or channel axis")
    ct = at.get("coordinate_transformation_mode", "half_pixel" if imp.opset >= 11
                else "asymmetric")
    nm = at.get("nearest_mode", "round_prefer_floor" if imp.opset >= 11 else "floor")
    X = imp.sym(x)
    if mode == "nearest":
        fh, fw = sizes[2] / s[2], sizes[3] / s[3]
        # UpSampling repeats each pixel: the source index is floor(x / scale),
        # which for an integer scale is asymmetric+floor, and half_pixel with
        # either rounding (x/s + 1/2s - 1/2 never falls on a half)
        same = (ct == "asymmetric" and nm == "floor") or \
            (ct in ("half_pixel", "pytorch_half_pixel") and
             nm in ("round_prefer_floor", "round_prefer_ceil"))
        if fh == fw and fh == int(fh) and fh >= 1 and same:
            return X if fh == 1 else sym.UpSampling(X, scale=int(fh), sample_type="nearest")
        imp.unsupported("nearest Resize by %s x %s with %s / %s (aiond: equal integer "
                        "factors, asymmetric+floor or half_pixel)" % (fh, fw, ct, nm))
    if mode in ("linear", "bilinear"):
        if scales is not None and any(s[i] * scales[i] != sizes[i] for i in (2, 3)):
            # ONNX maps coordinates with the given scale, BilinearResize2D
            # with the sizes' ratio: the same only when the scale hits a whole size
            imp.unsupported("linear Resize by scales %s giving fractional sizes"
                            % scales[2:])
        if ct not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
            imp.unsupported("linear Resize with coordinate_transformation_mode=%r" % ct)
        return sym.contrib.BilinearResize2D(X, height=int(sizes[2]), width=int(sizes[3]),
                                            align_corners=ct == "align_corners")
    imp.unsupported("Resize mode %r" % mode)


@op("DepthToSpace")
def _d2s(imp, node, ins, at):
    bs = int(at["blocksize"])
    X = imp.sym(ins[0])
    if at.get("mode", "DCR") == "DCR":
        return sym.depth_to_space(X, block_size=bs)
    # CRD: channels are (C, bs, bs)
    y = sym.reshape(X, shape=(0, -4, -1, bs * bs, -2))
    y = sym.reshape(y, shape=(0, 0, -4, bs, bs, -2))
    y = sym.transpose(y, axes=(0, 1, 4, 2, 5, 3))
    y = sym.reshape(y, shape=(0, 0, -3, -3))
    return y


@op("SpaceToDepth")
def _s2d(imp, node, ins, at):
    return sym.space_to_depth(imp.sym(ins[0]), block_size=int(at["blocksize"]))


@op("Einsum")
def _einsum(imp, node, ins, at):
    xs = [imp.sym(v).as_np_ndarray() for v in ins]
    return sym.np.einsum(at["equation"].replace(" ", ""), *xs).as_nd_ndarray()


@op("Trilu")
def _trilu(imp, node, ins, at):
    k = 0 if len(ins) < 2 or ins[1] is None else int(imp.const(ins[1], "Trilu's k"))
    X = imp.sym(ins[0]).as_np_ndarray()
    y = sym.np.triu(X, k=k) if at.get("upper", 1) else sym.np.tril(X, k=k)
    return y.as_nd_ndarray()


@op("MaxRoiPool")
def _roipool(imp, node, ins, at):
    return sym.ROIPooling(imp.sym(ins[0]), imp.sym(ins[1]),
                          pooled_size=tuple(at["pooled_shape"]),
                          spatial_scale=at.get("spatial_scale", 1.0))


def _dtype_attr(imp, at, default="float32"):
    from ._graph import np_dtype
    return np_dtype(at["dtype"]).name if "dtype" in at else default


@op("RandomUniform", "RandomUniformLike")
def _rand_uniform(imp, node, ins, at):
    shape = tuple(at["shape"]) if node.op_type == "RandomUniform" else \
        imp.static_shape(ins[0], "RandomUniformLike's input")
    return sym.random.uniform(low=at.get("low", 0.0), high=at.get("high", 1.0), shape=shape,
                              dtype=_dtype_attr(imp, at))


@op("RandomNormal", "RandomNormalLike")
def _rand_normal(imp, node, ins, at):
    shape = tuple(at["shape"]) if node.op_type == "RandomNormal" else \
        imp.static_shape(ins[0], "RandomNormalLike's input")
    return sym.random.normal(loc=at.get("mean", 0.0), scale=at.get("scale", 1.0), shape=shape,
                             dtype=_dtype_attr(imp, at))

# ------------------------------------------- values following a dynamic axis
def _lazy_range(imp, node, ins, out):
    """Range(start, n, step) with n a dynamic length: arange_like on the
    input axis of that length."""
    start, limit, delta = ins
    if not (start.static and delta.static):
        return
    ref = imp.dim_ref(len(out.a), len(out.b))
    if ref is None:
        return
    var, ax = ref
    s0, d = start.a.item(), delta.a.item()
    dt = out.a.dtype
    out.lazy = lambda: sym.Cast(sym.contrib.arange_like(var, start=s0, step=d, axis=ax),
                                dtype=dt.name)


def _lazy_slice(imp, node, ins, out):
    """A constant sliced to a dynamic length (position ids or embeddings cut
    to the sequence length): a ``take`` of arange_like positions."""
    data = ins[0]
    if not data.static or imp.opset < 10 or out.a.ndim != out.b.ndim:
        return
    diff = [i for i, (p, q) in enumerate(zip(out.a.shape, out.b.shape)) if p != q]
    if len(diff) != 1:
        return
    ax = diff[0]
    starts, axes = ins[1], (ins[3] if len(ins) > 3 else None)
    steps = ins[4] if len(ins) > 4 else None
    axes_l = list(range(len(starts.a))) if axes is None else \
        [_norm_axis(int(a), data.a.ndim) for a in axes.a]
    if ax not in axes_l or not starts.static or (steps is not None and
                                                 int(steps.a[axes_l.index(ax)]) != 1):
        return
    begin = int(starts.a[axes_l.index(ax)])
    begin = begin + data.a.shape[ax] if begin < 0 else begin
    ref = imp.dim_ref(out.a.shape[ax], out.b.shape[ax])
    if ref is None:
        return
    var, rax = ref
    base = np.take(data.a, np.arange(begin, data.a.shape[ax]), axis=ax)
    idx = [slice(0, n) for n in out.a.shape]
    idx[ax] = slice(None)
    base = np.ascontiguousarray(base[tuple(idx)])
    for o in (out.a, out.b):    # the other axes are cut from 0, as both probes show
        if not np.array_equal(np.take(base, np.arange(o.shape[ax]), axis=ax), o):
            return
    base = Const(base)
    base._name = node.input[0]

    def make():
        pos = sym.contrib.arange_like(var, axis=rax)
        return sym.take(imp.sym(base), pos, axis=ax)
    out.lazy = make


_LAZY = {"Range": _lazy_range, "Slice": _lazy_slice}


@op("Multinomial")
def _multinomial(imp, node, ins, at):
    # ONNX samples from unnormalized log-probabilities, MXNet from probabilities
    from ._graph import np_dtype
    dt = np_dtype(at.get("dtype", 6))      # int32 by default
    probs = sym.softmax(imp.sym(ins[0]), axis=-1)
    return sym.sample_multinomial(probs, shape=int(at.get("sample_size", 1)), dtype=dt.name)


@op("If")
def _if(imp, node, ins, at):
    # a condition known at import time (shape checks exporters write) picks
    # its branch, which is inlined; one computed from the data cannot be
    cond = imp.const(ins[0], "If's condition")
    return imp.inline(at["then_branch" if bool(np.asarray(cond).reshape(-1)[0])
                         else "else_branch"])


@op("OneHot")
def _one_hot(imp, node, ins, at):
    depth = int(imp.const(ins[1], "OneHot's depth").reshape(-1)[0])
    off, on = (float(v) for v in imp.const(ins[2], "OneHot's values").reshape(-1)[:2])
    idx = imp.sym(ins[0])
    idx = idx + (idx < 0) * depth       # ONNX counts negative indices from the end
    r = imp.rank(ins[0], "OneHot's indices")
    y = sym.one_hot(idx, depth=depth, on_value=on, off_value=off)
    axis = _norm_axis(at.get("axis", -1), r + 1)
    if axis != r:
        perm = list(range(r))
        perm.insert(axis, r)
        y = sym.transpose(y, axes=tuple(perm))
    return y


@op("Mod")
def _mod(imp, node, ins, at):
    a, b = imp.sym(ins[0]), imp.sym(ins[1])
    # C's fmod (sign of a; integer division truncates too), then for fmod=0
    # Python's % (sign of b): add b where the remainder's sign differs from b's
    r = sym.broadcast_sub(a, sym.broadcast_mul(b, sym.trunc(sym.broadcast_div(a, b))))
    if not at.get("fmod", 0):
        r = sym.broadcast_add(r, sym.broadcast_mul(b, sym.broadcast_mul(r, b) < 0))
    return r


@op("IsNaN")
def _isnan(imp, node, ins, at):
    x = imp.sym(ins[0])
    return x != x


@op("IsInf")
def _isinf(imp, node, ins, at):
    x = imp.sym(ins[0])
    pos, neg = at.get("detect_positive", 1), at.get("detect_negative", 1)
    if pos and neg:
        return sym.abs(x) == float("inf")
    if pos:
        return x == float("inf")
    if neg:
        return x == float("-inf")
    return sym.zeros_like(x)


@op("Shrink")
def _shrink(imp, node, ins, at):
    x = imp.sym(ins[0])
    lambd, bias = at.get("lambd", 0.5), at.get("bias", 0.0)
    return (x < -lambd) * (x + bias) + (x > lambd) * (x - bias)


@op("MeanVarianceNormalization")
def _mvn(imp, node, ins, at):
    x = imp.sym(ins[0])
    axes = tuple(at.get("axes", [0, 2, 3]))
    d = sym.broadcast_sub(x, sym.mean(x, axis=axes, keepdims=True))
    return sym.broadcast_div(d, sym.sqrt(sym.mean(sym.square(d), axis=axes, keepdims=True)))


@op("GroupNormalization")
def _group_norm(imp, node, ins, at):
    x, scale, bias = ins[0], ins[1], ins[2]
    groups, eps = int(at["num_groups"]), at.get("epsilon", 1e-5)
    shp = imp.shape(x, "GroupNormalization's input")[0]
    c = shp[1]
    X = imp.sym(x)
    g = sym.reshape(X, shape=(0, groups, -1))
    d = sym.broadcast_sub(g, sym.mean(g, axis=2, keepdims=True))
    var = sym.mean(sym.square(d), axis=2, keepdims=True)
    y = sym.reshape_like(sym.broadcast_div(d, sym.sqrt(var + eps)), X)
    cshape = (1, c) + (1,) * (len(shp) - 2)
    sc, bi = imp.const(scale, "GroupNormalization's scale"), \
        imp.const(bias, "GroupNormalization's bias")
    if sc.size == groups and groups != c:      # opset 18: one scale per group
        sc, bi = np.repeat(sc, c // groups), np.repeat(bi, c // groups)
    sc = Const(sc.reshape(cshape))
    bi = Const(bi.reshape(cshape))
    return sym.broadcast_add(sym.broadcast_mul(y, imp.sym(sc)), imp.sym(bi))


from . import _rnn  # noqa: E402,F401  (LSTM / GRU / RNN register themselves)
