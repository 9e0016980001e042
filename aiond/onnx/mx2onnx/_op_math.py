"""Translations of elementwise math, comparisons, scalar ops, reductions and
matrix products."""
from __future__ import annotations

import math

import numpy as np

from ._registry import register

_UNARY = {
    "abs": "Abs", "ceil": "Ceil", "floor": "Floor", "exp": "Exp", "log": "Log",
    "sqrt": "Sqrt", "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin",
    "arccos": "Acos", "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh",
    "arcsinh": "Asinh", "arccosh": "Acosh", "arctanh": "Atanh", "negative": "Neg",
    "reciprocal": "Reciprocal", "sign": "Sign", "erf": "Erf",
}
for _name, _onnx in _UNARY.items():
    register(_name)(lambda b, n, _op=_onnx: b.add(_op, [n.x[0]], [n.out()]))


@register("square")
def square(b, n):
    return b.add("Mul", [n.x[0], n.x[0]], [n.out()])


def _log_base(b, n, base):
    lg = b.add("Log", [n.x[0]])
    return b.add("Div", [lg, b.scalar(math.log(base), n.idtype[0])], [n.out()])


register("log2")(lambda b, n: _log_base(b, n, 2.0))
register("log10")(lambda b, n: _log_base(b, n, 10.0))


@register("log1p")
def log1p(b, n):
    return b.add("Log", [b.add("Add", [n.x[0], b.scalar(1, n.idtype[0])])], [n.out()])


@register("expm1")
def expm1(b, n):
    return b.add("Sub", [b.add("Exp", [n.x[0]]), b.scalar(1, n.idtype[0])], [n.out()])


@register("rsqrt")
def rsqrt(b, n):
    return b.add("Reciprocal", [b.add("Sqrt", [n.x[0]])], [n.out()])


@register("logical_not")
def logical_not(b, n):
    t = b.add("Not", [b.cast(n.x[0], np.bool_)])
    return b.cast(t, n.odtype[0], [n.out()])


_BINARY = {
    "Add": ("broadcast_add", "elemwise_add", "_plus", "_add", "broadcast_plus"),
    "Sub": ("broadcast_sub", "elemwise_sub", "_minus", "_sub", "broadcast_minus"),
    "Mul": ("broadcast_mul", "elemwise_mul", "_mul"),
    "Div": ("broadcast_div", "elemwise_div", "_div"),
    "Pow": ("broadcast_power", "_power", "_Power"),
    "Max": ("broadcast_maximum", "_maximum", "_Maximum"),
    "Min": ("broadcast_minimum", "_minimum", "_Minimum"),
}
for _onnx, _names in _BINARY.items():
    register(*_names)(lambda b, n, _op=_onnx: b.add(_op, n.x[:2], [n.out()]))


def _mod(b, n, x, y, dt):
    """MXNet's mod takes the sign of the divisor (Python's %) and gives 0 where
    the divisor is 0 (integer Mod by 0 would trap in the runtime)."""
    zero = b.scalar(0, dt)
    is_zero = b.add("Equal", [y, zero])
    safe = b.add("Where", [is_zero, b.scalar(1, dt), y])
    if np.issubdtype(dt, np.integer):
        r = b.add("Mod", [x, safe], fmod=0)
    else:
        q = b.add("Floor", [b.add("Div", [x, safe])])
        r = b.add("Sub", [x, b.add("Mul", [q, safe])])
    return b.add("Where", [is_zero, zero, r], [n.out()])


@register("broadcast_mod", "_mod", "elemwise_mod")
def mod(b, n):
    return _mod(b, n, n.x[0], n.x[1], n.odtype[0])


_COMPARE = {
    "Equal": ("broadcast_equal", "_equal"),
    "Greater": ("broadcast_greater", "_greater"),
    "GreaterOrEqual": ("broadcast_greater_equal", "_greater_equal"),
    "Less": ("broadcast_lesser", "_lesser"),
    "LessOrEqual": ("broadcast_lesser_equal", "_lesser_equal"),
    "NotEqual": ("broadcast_not_equal", "_not_equal"),
}


def _compare(b, n, op, x, y):
    if op == "NotEqual":
        r = b.add("Not", [b.add("Equal", [x, y])])
    else:
        r = b.add(op, [x, y])
    return b.cast(r, n.odtype[0], [n.out()])


for _onnx, _names in _COMPARE.items():
    register(*_names)(lambda b, n, _op=_onnx: _compare(b, n, _op, n.x[0], n.x[1]))


def _logical(b, n, op, x, y):
    r = b.add(op, [b.cast(x, np.bool_), b.cast(y, np.bool_)])
    return b.cast(r, n.odtype[0], [n.out()])


for _onnx, _names in {"And": ("broadcast_logical_and", "_logical_and"),
                      "Or": ("broadcast_logical_or", "_logical_or"),
                      "Xor": ("broadcast_logical_xor", "_logical_xor")}.items():
    register(*_names)(lambda b, n, _op=_onnx: _logical(b, n, _op, n.x[0], n.x[1]))


def _scalar_of(b, n):
    """The op's scalar as a constant of the input's dtype (MXNet casts it so)."""
    dt = n.idtype[0]
    s = float(n.p["scalar"])
    if np.issubdtype(dt, np.integer) and n.p.get("is_int", True) is not False:
        s = int(s)
    return b.scalar(s, dt, hint=n.name + "_scalar")


_SCALAR = {
    "_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
    "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
    "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
    "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
    "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False),
}


def _scalar_op(b, n, op, rev):
    s = _scalar_of(b, n)
    ins = [s, n.x[0]] if rev else [n.x[0], s]
    return b.add(op, ins, [n.out()])


for _name, (_onnx, _rev) in _SCALAR.items():
    register(_name)(lambda b, n, _op=_onnx, _r=_rev: _scalar_op(b, n, _op, _r))


@register("_mod_scalar")
def mod_scalar(b, n):
    return _mod(b, n, n.x[0], _scalar_of(b, n), n.idtype[0])


@register("_rmod_scalar")
def rmod_scalar(b, n):
    return _mod(b, n, _scalar_of(b, n), n.x[0], n.idtype[0])


_SCALAR_CMP = {"_equal_scalar": "Equal", "_not_equal_scalar": "NotEqual",
               "_greater_scalar": "Greater", "_greater_equal_scalar": "GreaterOrEqual",
               "_lesser_scalar": "Less", "_lesser_equal_scalar": "LessOrEqual"}
for _name, _onnx in _SCALAR_CMP.items():
    register(_name)(lambda b, n, _op=_onnx: _compare(b, n, _op, n.x[0], _scalar_of(b, n)))

for _name, _onnx in {"_logical_and_scalar": "And", "_logical_or_scalar": "Or",
                     "_logical_xor_scalar": "Xor"}.items():
    register(_name)(lambda b, n, _op=_onnx: _logical(b, n, _op, n.x[0], _scalar_of(b, n)))


@register("clip")
def clip(b, n):
    dt = n.idtype[0]
    lo = b.scalar(n.p["a_min"], dt)
    hi = b.scalar(n.p["a_max"], dt)
    return b.add("Clip", [n.x[0], lo, hi], [n.out()])


@register("add_n", "ElementWiseSum")
def add_n(b, n):
    return b.add("Sum", list(n.x), [n.out()])


@register("Cast", "amp_cast")
def cast(b, n):
    return b.cast(n.x[0], n.odtype[0], [n.out()])


@register("where")
def where(b, n):
    cond, x, y = n.x[:3]
    cshape, xshape = n.ishape[0], n.ishape[1]
    if len(cshape) == 1 and len(xshape) > 1:   # one flag per row of x
        cond = b.reshape(cond, [-1] + [1] * (len(xshape) - 1))
    n.odtype[0] = n.idtype[1]           # MXNet: the result has x's dtype
    return b.add("Where", [b.cast(cond, np.bool_), x, y], [n.out()])


def _reduce_axes(n, ndim):
    axis = n.p.get("axis")
    if axis is None or axis == ():
        axes = None
    else:
        axes = [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]
        axes = sorted(a % ndim for a in axes)
    if n.p.get("exclude"):
        keep = set(axes or [])
        axes = [a for a in range(ndim) if a not in keep]
    return axes


def _reduce(b, n, op):
    x = n.x[0]
    ndim = len(n.ishape[0])
    axes = _reduce_axes(n, ndim)
    keep = bool(n.p.get("keepdims", False))
    if axes is None:
        axes = list(range(ndim))
    if not keep and len(axes) == ndim:
        # MXNet returns shape (1,) when every axis is reduced
        r = b.reduce(op, x, axes, False)
        return b.reshape(r, [1], [n.out()])
    return b.reduce(op, x, axes, keep, [n.out()])


for _name, _onnx in {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax",
                     "min": "ReduceMin", "prod": "ReduceProd", "sum_axis": "ReduceSum",
                     "max_axis": "ReduceMax", "min_axis": "ReduceMin"}.items():
    register(_name)(lambda b, n, _op=_onnx: _reduce(b, n, _op))


@register("norm")
def norm(b, n):
    order = int(n.p.get("ord", 2))
    if order not in (1, 2):
        raise n.unsupported("ord=%s" % order)
    return _reduce(b, n, "ReduceL1" if order == 1 else "ReduceL2")


def _arg_reduce(b, n, op):
    x = n.x[0]
    axis = n.p.get("axis")
    keep = bool(n.p.get("keepdims", False))
    if axis is None:
        x = b.reshape(x, [-1])
        r = b.add(op, [x], axis=0, keepdims=1 if keep else 0)
        if not keep:
            r = b.reshape(r, [1])
    else:
        r = b.add(op, [x], axis=int(axis), keepdims=int(keep))
    return b.cast(r, n.odtype[0], [n.out()])


register("argmax")(lambda b, n: _arg_reduce(b, n, "ArgMax"))
register("argmin")(lambda b, n: _arg_reduce(b, n, "ArgMin"))


def _flip_all(b, x, ndim):
    return b.add("Transpose", [x], perm=list(range(ndim))[::-1]) if ndim > 1 else x


@register("dot")
def dot(b, n):
    a, c = n.x[:2]
    sa, sc = n.ishape[0], n.ishape[1]
    if n.p.get("transpose_a"):
        a, sa = _flip_all(b, a, len(sa)), tuple(reversed(sa))
    if n.p.get("transpose_b"):
        c, sc = _flip_all(b, c, len(sc)), tuple(reversed(sc))
    if len(sa) <= 2 and len(sc) <= 2:
        if n.idtype[0] == np.float64 and len(sa) == 2 and len(sc) == 2 and \
                (n.p.get("transpose_a") or n.p.get("transpose_b")):
            # onnxruntime fuses Transpose+MatMul into a float32-only kernel
            return b.add("Einsum", list(n.x[:2]), [n.out()], equation="%s,%s->mn" % (
                "km" if n.p.get("transpose_a") else "mk",
                "nk" if n.p.get("transpose_b") else "kn"))
        return b.add("MatMul", [a, c], [n.out()])
    k = sa[-1]
    a2 = b.reshape(a, [-1, k])
    c2 = b.reshape(c, [k, -1])
    return b.reshape(b.add("MatMul", [a2, c2]), list(n.oshape[0]), [n.out()])


def _swap_last2(b, x, ndim):
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return b.add("Transpose", [x], perm=perm)


@register("batch_dot")
def batch_dot(b, n):
    a, c = n.x[:2]
    ta, tb = bool(n.p.get("transpose_a")), bool(n.p.get("transpose_b"))
    if n.idtype[0] == np.float64 and (ta or tb):
        # onnxruntime fuses Transpose+MatMul into a float32-only kernel
        eq = "...%s,...%s->...mn" % ("km" if ta else "mk", "nk" if tb else "kn")
        return b.add("Einsum", [a, c], [n.out()], equation=eq)
    if n.p.get("transpose_a"):
        a = _swap_last2(b, a, len(n.ishape[0]))
    if n.p.get("transpose_b"):
        c = _swap_last2(b, c, len(n.ishape[1]))
    return b.add("MatMul", [a, c], [n.out()])


@register("_linalg_gemm2")
def linalg_gemm2(b, n):
    a, c = n.x[:2]
    if int(n.p.get("axis", -2)) != -2:
        raise n.unsupported("axis=%s" % n.p.get("axis"))
    ta, tb = bool(n.p.get("transpose_a")), bool(n.p.get("transpose_b"))
    if n.idtype[0] == np.float64 and (ta or tb):
        eq = "...%s,...%s->...mn" % ("km" if ta else "mk", "nk" if tb else "kn")
        m = b.add("Einsum", [a, c], equation=eq)
        return b.add("Mul", [m, b.scalar(float(n.p.get("alpha", 1.0)), np.float64)],
                     [n.out()])
    if n.p.get("transpose_a"):
        a = _swap_last2(b, a, len(n.ishape[0]))
    if n.p.get("transpose_b"):
        c = _swap_last2(b, c, len(n.ishape[1]))
    alpha = float(n.p.get("alpha", 1.0))
    if alpha == 1.0:
        return b.add("MatMul", [a, c], [n.out()])
    m = b.add("MatMul", [a, c])
    return b.add("Mul", [m, b.scalar(alpha, n.odtype[0])], [n.out()])


@register("_contrib_div_sqrt_dim")
def div_sqrt_dim(b, n):
    d = n.ishape[0][-1]
    return b.add("Div", [n.x[0], b.scalar(math.sqrt(d), n.idtype[0])], [n.out()])
