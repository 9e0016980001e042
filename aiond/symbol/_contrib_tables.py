"""Symbol's per-op tables (see ``_namespace``) for the contrib operators of
issue 31: inputs that depend on parameters, the shapes layers give their
parameters, and BatchNormWithReLU's moving-state initialisers and
parameter dtypes, which are BatchNorm's."""
from __future__ import annotations

from . import _namespace as _ns


def _no_trans(p):
    return ("trans",) if p.get("no_trans") else ()


def _modulated(p, d):
    shapes = _ns._deformable(p, d)
    off = shapes["offset"]
    shapes["mask"] = (off[0], off[1] // 2) + off[2:]
    return shapes


_ns.OPTIONAL_INPUTS.update({
    "_contrib_ModulatedDeformableConvolution": _ns._no_bias,
    "_contrib_DeformablePSROIPooling": _no_trans,
})
_ns.PARAM_SHAPES.update({
    "_contrib_ModulatedDeformableConvolution": _modulated,
    "_contrib_BatchNormWithReLU": _ns._bn,
})
_ns.SET_INPUT_VAR_ATTRS["_contrib_BatchNormWithReLU"] = _ns._bn_var_attrs
# float16 data keeps float32 gamma/beta/moving statistics, as BatchNorm's do
_ns._NORMS = _ns._NORMS + ("_contrib_BatchNormWithReLU",)
