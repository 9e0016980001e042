"""NumPy's binary ufuncs as front functions (see ``_front``): arrays and/or
Python scalars, broadcasting, MXNet NumPy's dtype promotion (in the ops'
rules, so a Symbol gets the same dtypes as an array)."""
from __future__ import annotations

import numpy as _np

from ..base import integer_types, numeric_types
from ..util import _np_ufunc_check
from ._front import front
from ._fuse_dot import fused_bias_add

# ``scalar <op> array`` written as ``array <flipped op> scalar``
_FLIP = {"greater": "less", "less": "greater", "greater_equal": "less_equal",
         "less_equal": "greater_equal", "equal": "equal", "not_equal": "not_equal",
         "add": "add", "multiply": "multiply", "maximum": "maximum", "minimum": "minimum",
         "hypot": "hypot", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
         "bitwise_xor": "bitwise_xor", "lcm": "lcm"}
# ops with an ``_npi_r<op>_scalar`` (scalar on the left)
_REVERSIBLE = ("subtract", "true_divide", "mod", "power", "copysign", "arctan2", "ldexp")
# ops with no ``_scalar`` form: the scalar becomes an array
_ARRAY_ONLY = ("logical_and", "logical_or", "logical_xor")


def is_scalar(x):
    return isinstance(x, numeric_types) and not isinstance(x, _np.ndarray)


def binary(F, name, x1, x2, out=None):
    """NumPy's ufunc ``name`` on ``x1``, ``x2`` (arrays and/or scalars)."""
    s1, s2 = is_scalar(x1), is_scalar(x2)
    if s1 and s2:
        # two Python numbers: NumPy's own result (a NumPy scalar), as MXNet returns
        return getattr(_np, name)(x1, x2)
    if s1 or s2:
        arr, sc = (x1, x2) if s2 else (x2, x1)
        if type(arr) is not F.native:
            arr = F.arr(arr)
        if name in _ARRAY_ONLY:
            full = F.op("_npi_full_like", [arr], {"fill_value": sc, "dtype": None})
            return F.op("_npi_" + name, [arr, full] if s2 else [full, arr], None, out)
        attrs = {"scalar": float(sc), "is_int": isinstance(sc, (bool, _np.bool_) + integer_types)}
        if s2:
            opname = "_npi_%s_scalar" % name
        elif name in _REVERSIBLE:
            opname = "_npi_r%s_scalar" % name
        else:
            opname = "_npi_%s_scalar" % _FLIP[name]
        return F.op(opname, [arr], attrs, out)
    native = F.native
    a1 = x1 if type(x1) is native else F.arr(x1, like=x2)
    a2 = x2 if type(x2) is native else F.arr(x2, like=a1)
    if name == "add" and F.kind == "sym":
        fused = fused_bias_add(F, a1, a2)
        if fused is not None:
            return fused
    return F.op("_npi_" + name, [a1, a2], None, out)


def _make(name):
    def impl(F, x1, x2, out=None, **kwargs):
        if kwargs:
            _np_ufunc_check(name, kwargs)
        return binary(F, name, x1, x2, out)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = ("NumPy's ``%s`` on arrays and/or scalars (elementwise, broadcasting)."
                    % name)
    return impl


for _name in ("add", "subtract", "multiply", "true_divide", "mod", "power", "maximum",
              "minimum", "equal", "not_equal", "greater", "greater_equal", "less",
              "less_equal", "logical_and", "logical_or", "logical_xor", "hypot", "arctan2",
              "copysign", "bitwise_and", "bitwise_or", "bitwise_xor", "lcm", "ldexp"):
    front(_name)(_make(_name))
front("divide")(_make("true_divide"))
front("remainder")(_make("mod"))
