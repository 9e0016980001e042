"""``mx.np`` functions that are official NumPy's own (MXNet's
``mxnet.numpy.fallback``). Called with mx.np arrays they dispatch through
``ndarray.__array_function__``/``__array_ufunc__``, which runs NumPy on
copies of the data and returns mx.np arrays on the inputs' device (outside
autograd recording). Names the installed NumPy no longer has (NumPy 2
removed ``alltrue``, ``msort``, ``trapz``, ...; 1.20 the financial functions)
are left out."""
from __future__ import annotations

import numpy as _onp

_NAMES = (
    "allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition", "argwhere",
    "array_equal", "array_equiv", "choose", "compress", "corrcoef", "correlate",
    "count_nonzero", "cov", "digitize", "divmod", "extract", "flatnonzero", "float_power",
    "frexp", "heaviside", "histogram2d", "histogram_bin_edges", "histogramdd", "i0", "in1d",
    "interp", "intersect1d", "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "mirr",
    "modf", "msort", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "ndim", "npv",
    "partition", "piecewise", "packbits", "poly", "polyadd", "polydiv", "polyfit", "polyint",
    "polymul", "polysub", "positive", "ppmt", "promote_types", "ptp", "pv", "rate", "real",
    "result_type", "rollaxis", "roots", "searchsorted", "select", "setdiff1d", "setxor1d",
    "signbit", "size", "spacing", "take_along_axis", "trapz", "tril_indices_from",
    "trim_zeros", "triu_indices_from", "union1d", "unpackbits", "unwrap", "vander",
)

__all__ = []
for _name in _NAMES:
    try:
        _fn = getattr(_onp, _name)
    except AttributeError:
        continue
    if getattr(_fn, "__name__", "") == "_expired":   # NumPy 1.2x's removal notice
        continue
    globals()[_name] = _fn
    __all__.append(_name)
del _name
