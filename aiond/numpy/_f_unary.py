"""NumPy's unary elementwise functions as front functions (see ``_front``):
math, rounding, the bool-valued predicates, ``bitwise_not``/``invert``,
``around``, ``nan_to_num``, ``clip`` and the memory-overlap tests.

A Python number gives NumPy's own result (a NumPy scalar), as in MXNet;
arrays (or Symbols) go through the ``_npi_*`` ops, whose rules fix the
result dtypes (``ops/np_elemwise.py``)."""
from __future__ import annotations

import numpy as _np

from ..util import _np_ufunc_check
from ._f_binary import binary, is_scalar
from ._front import front


def _input(F, x, name):
    if F.isarr(x):
        return F.arr(x)
    raise TypeError("{}: type {} not supported (expected an array{})"
                    .format(name, str(type(x)), "" if F.kind == "nd" else " Symbol"))


_PREDICATES = ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not")


def _make_unary(name, opname):
    def impl(F, x, out=None, **kwargs):
        if kwargs:
            _np_ufunc_check(name, kwargs)
        if is_scalar(x):
            return getattr(_np, name)(x)
        if out is not None and name in _PREDICATES and F.dtype(out) != _np.bool_:
            raise TypeError("{}: the `out` parameter should be a boolean array, got dtype {}"
                            .format(name, F.dtype(out)))
        return F.op(opname, [_input(F, x, name)], None, out)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = "NumPy's ``%s``, elementwise (``%s``)." % (name, opname)
    return impl


_UNARY = ("negative", "absolute", "sign", "square", "sqrt", "cbrt", "reciprocal", "exp",
          "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
          "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees",
          "radians", "rad2deg", "deg2rad", "floor", "ceil", "trunc", "rint", "fix",
          "isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not")
for _name in _UNARY:
    front(_name)(_make_unary(_name, "_npi_" + _name))
front("abs")(_make_unary("abs", "_npi_absolute"))
front("fabs")(_make_unary("fabs", "_npi_absolute"))
front("invert")(_make_unary("invert", "_npi_bitwise_not"))
front("bitwise_not")(_make_unary("bitwise_not", "_npi_bitwise_not"))


def _make_around(name):
    def impl(F, x, decimals=0, out=None, **kwargs):
        if kwargs:
            raise TypeError("%s() got unexpected keyword argument(s) %s"
                            % (name, ", ".join(sorted(kwargs))))
        if is_scalar(x):
            return _np.around(x, decimals)
        return F.op("_npi_around", [_input(F, x, name)], {"decimals": int(decimals)}, out)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = ("Round to ``decimals`` decimal places, halves to even (negative "
                    "``decimals``: to tens, hundreds, ...).")
    return impl


for _name in ("around", "round", "round_"):
    front(_name)(_make_around(_name))


@front()
def nan_to_num(F, x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (by
    default the dtype's largest and lowest finite values). ``copy=False``
    writes into ``x`` (arrays only). Integer arrays are returned as they are."""
    if kwargs:
        raise TypeError("nan_to_num() got unexpected keyword argument(s) %s"
                        % ", ".join(sorted(kwargs)))
    if is_scalar(x):
        return _np.nan_to_num(x, copy, nan, posinf, neginf)
    x = _input(F, x, "nan_to_num")
    dt = F.dtype(x)
    if F.kind == "nd" and dt is not None and dt.kind in "iu":
        return x
    attrs = {"copy": bool(copy), "nan": float(nan), "posinf": posinf, "neginf": neginf}
    out = x if (not copy and F.kind == "nd") else None
    return F.op("_npi_nan_to_num", [x], attrs, out)


@front()
def clip(F, a, a_min, a_max, out=None):
    """Values of ``a`` limited to [a_min, a_max] (either bound may be None,
    not both; array bounds broadcast against ``a``)."""
    if a_min is None and a_max is None:
        raise ValueError("array_clip: must set either max or min")
    if is_scalar(a):
        return _np.clip(a, a_min, a_max)
    a = _input(F, a, "clip")
    if not (a_min is None or is_scalar(a_min)) or not (a_max is None or is_scalar(a_max)):
        # array bounds: NumPy's maximum/minimum semantics
        res = a if a_min is None else binary(F, "maximum", a, a_min)
        res = res if a_max is None else binary(F, "minimum", res, a_max)
        if out is not None:
            out[...] = res
            return out
        return res
    lo = float("-inf") if a_min is None else float(a_min)
    hi = float("inf") if a_max is None else float(a_max)
    return F.op("_npi_clip", [a], {"a_min": lo, "a_max": hi}, out)


def _overlap(a, b):
    """Whether mx.np arrays ``a`` and ``b`` view overlapping parts of one buffer
    (aiond's views are contiguous ranges of their base)."""
    if a._st is not b._st or a.size == 0 or b.size == 0:
        return False
    oa, ob = a._off or 0, b._off or 0
    return oa < ob + b.size and ob < oa + a.size


def _make_share(name):
    def impl(F, a, b, max_work=None):
        if F.kind == "nd":
            return _overlap(F.arr(a), F.arr(b))
        return F.op("_npi_share_memory", [_input(F, a, name), _input(F, b, name)])
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = ("Whether ``a`` and ``b`` share memory (``max_work`` is accepted and "
                    "ignored: the answer is always exact).")
    return impl


front("shares_memory")(_make_share("shares_memory"))
front("may_share_memory")(_make_share("may_share_memory"))
