"""ONNX operator -> aiond ``mx.sym`` translations (opsets 1-21): the registry,
constant folding, element-wise operators and activations (_ops_nn and
_ops_tensor hold the others).

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
            "Multinomial", "Bernoulli", "If", "Loop", "Scan"}
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
    a, _ = imp.partial_shapes(v)
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


# the translations register themselves in OPS
from . import _ops_nn  # noqa: E402,F401
from . import _ops_tensor  # noqa: E402,F401
from . import _rnn  # noqa: E402,F401  (LSTM / GRU / RNN)
from . import _ops_index  # noqa: E402,F401  (ScatterElements, Unique, ...)
from . import _ops_quant  # noqa: E402,F401  (QuantizeLinear, bitwise, ...)
from . import _control  # noqa: E402,F401  (Loop, Scan)
