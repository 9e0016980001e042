"""Straight-through estimators (src/operator/contrib/stes_op.cc):
``_contrib_round_ste`` and ``_contrib_sign_ste`` compute ``round`` and
``sign`` forward and pass the head gradient through unchanged backward (a
gradient of 1 where round/sign have 0), for quantized training. Like their
plain forms they keep a row_sparse or csr input's storage type."""
from __future__ import annotations

from ._grad import set_grads
from .registry import get, register
from .sparse import SPARSE, SparseImpl, _unary_kernel, _unary_stypes


def _like(name):
    # the plain op's kernel, so integer inputs and ties round as round() does
    base = get(name).kernel

    def kernel(xp, data, out):
        base(xp, data, out=out)
    return kernel


for _name, _base, _what in (("round_ste", "round", "elementwise round (half away from zero)"),
                            ("sign_ste", "sign", "elementwise sign")):
    _k = _like(_base)
    _k.__name__ = _name
    _k.__doc__ = ("%s(data): %s forward; backward passes the gradient through as if the "
                  "op were the identity (straight-through estimator)." % (_name, _what))
    register("_contrib_" + _name, elemwise=True, infer=get(_base).infer)(_k)
    SPARSE["_contrib_" + _name] = SparseImpl(_unary_stypes, _unary_kernel("_contrib_" + _name))


def _ste_grad(F, attrs, ins, outs, og):
    return [og[0]]


set_grads({"_contrib_round_ste": _ste_grad, "_contrib_sign_ste": _ste_grad})
