"""Helpers shared by the neural-network op modules (fc, activation, softmax,
losses, dropout, embedding, l2norm, upsampling) and by other op modules:
dtype and input-count checks for shape rules, optional-value parsers, range
checks, the quiet floating-point error state, and ``erf`` built from xp
operations (numpy has none). Registers no ops."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from .registry import Null, p_bool, p_float

_prod = math.prod
_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_F32 = np.dtype(np.float32)


def _need_float(dtype, what="data"):
    if dtype not in _FLOATS:
        raise OpError("only supports floating point types, got %s for %s (cast it with "
                      ".astype('float32'))" % (dtype.name, what))


def _num_inputs(shapes, names, why=""):
    if len(shapes) != len(names):
        raise OpError("expects %d input(s) (%s)%s, got %d"
                      % (len(names), ", ".join(names), why, len(shapes)))


def _float_unary(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    return (shapes[0],), (dtypes[0],)


def _p_opt_float(v):
    if v is None or v is Null or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return p_float(v)


def _p_opt_bool(v):
    if v is None or (isinstance(v, str) and v.strip() == "None"):
        return None
    return p_bool(v)


def _in_range(*checks):
    """attr_check: each (name, lo, hi) must hold lo <= attrs[name] <= hi."""
    def check(op, attrs):
        for name, lo, hi in checks:
            v = attrs[name]
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                bound = ("[%s, %s]" % (lo, hi) if hi is not None else ">= %s" % lo)
                raise OpError("%s: %s=%r is out of range; it must be %s"
                              % (op.name, name, v, bound))
    return check


def _errstate():
    return np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore")


def _any_unary(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    return (shapes[0],), (dtypes[0],)


# ---------------------------------------------------------------- erf
# Cephes' rational approximations (Moshier, public domain), full float64 accuracy.
_ERF_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
          7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF_U = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
          2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
           4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
           9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC_Q = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
           9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
           1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
           6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
           1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)


def _poly(x, coefs):
    r = x * 0 + coefs[0]
    for c in coefs[1:]:
        r = r * x + c
    return r


def erf(xp, x):
    """erf(x) in float64 from xp operations only (numpy has no erf)."""
    x = xp.asarray(x, dtype=np.float64)
    with _errstate():
        xs = xp.clip(x, -1.0, 1.0)
        z = xs * xs
        small = xs * _poly(z, _ERF_T) / _poly(z, _ERF_U)
        a = xp.minimum(xp.abs(x), 30.0)        # erfc(30) underflows to 0
        ez = xp.exp(-a * a)
        erfc = xp.where(a < 8.0, ez * _poly(a, _ERFC_P) / _poly(a, _ERFC_Q),
                        ez * _poly(a, _ERFC_R) / _poly(a, _ERFC_S))
        large = xp.sign(x) * (1.0 - erfc)
        return xp.where(xp.abs(x) <= 1.0, small, large)
