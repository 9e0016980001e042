"""NumPy-interface creation ops that take an array for its shape
(``_npi_full_like``): MXNet's ``_npi_*`` names, NumPy's dtype rules."""
from __future__ import annotations

from .elemwise import cast_scalar
from .init import _zero_grad
from .registry import Param, p_dtype, p_float, register


def _full_like_rule(attrs, shapes, dtypes):
    return (shapes[0],), (attrs["dtype"] or dtypes[0],)


@register("_npi_full_like", inputs=("a",), infer=_full_like_rule, grad=_zero_grad,
          params=[Param("fill_value", p_float, 0.0), Param("dtype", p_dtype, None),
                  Param("ctx", str, "")])
def _npi_full_like(xp, a, out, fill_value=0.0, dtype=None, ctx=""):
    """_npi_full_like(a, fill_value, dtype): ``fill_value`` in a's shape (and
    dtype, unless ``dtype``)."""
    out.fill(cast_scalar(fill_value, out.dtype))

