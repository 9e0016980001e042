"""Helpers shared by the ops of shape.py, indexing.py, sorting.py and
special.py: parameter parsers (optional int, axes, optional shape), input
and axis checks for shape rules, kernel helpers (unsafe casts into ``out``,
multi-output lists, MXNet-style integer indices) and the gradient-rule
builders ``_no_grad`` and ``_un``."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from ._nn_util import _errstate
from .registry import Null, p_int, p_shape


_prod = math.prod
_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _p_opt_int(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_int(v)


def _p_axes(v):
    """An int or a tuple of ints, always returned as a tuple."""
    s = p_shape(v)
    return () if s is None else s


def _p_opt_shape(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_shape(v)


def _n_inputs(shapes, names, why=""):
    if len(shapes) != len(names):
        raise OpError("expects %d input(s) (%s)%s, got %d"
                      % (len(names), ", ".join(names), why, len(shapes)))


def _axis(ax, ndim, name="axis"):
    if ndim == 0 or not -ndim <= ax < ndim:
        raise OpError("%s=%d is out of range for an array of %d dimension(s)" % (name, ax, ndim))
    return ax % ndim


def _cast_into(xp, out, r):
    with _errstate():
        xp.copyto(out, r, casting="unsafe")


def _outs(out):
    """A kernel's outputs as a list (a single-output call passes one array)."""
    return out if isinstance(out, (list, tuple)) else [out]


def _as_index(xp, a):
    """Indices as int64, truncated toward zero like MXNet's C casts."""
    if a.dtype.kind in "iub":
        return a.astype(np.int64, copy=False)
    with _errstate():
        return xp.trunc(a).astype(np.int64)


def _no_grad(F, attrs, ins, outs, og):
    return [None] * len(ins)


_no_grad.ignores_ograd = True   # MXNet prunes (never reads) the head gradient of such ops


def _un(rule):
    def grad(F, attrs, ins, outs, og):
        return [rule(F, ins[0], outs[0], og[0], attrs)]
    return grad
