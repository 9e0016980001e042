"""``mx.nd.linalg``: linear algebra on (batches of) matrices, MXNet 1.9.1's
``mx.nd.linalg.gemm2(...)``, ``potrf(...)``, ... built from the
``_linalg_*`` registry entries (see ``aiond/ops/linalg.py``)."""
from __future__ import annotations

from ..ops import registry as _reg
from ._namespace import make_function as _make

__all__ = ["gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "inverse", "det",
           "slogdet", "sumlogdiag", "extractdiag", "makediag", "extracttrian", "maketrian",
           "gelqf", "syevd"]


def _fn(name):
    f = _make(_reg.get("_linalg_" + name), name)
    f.__module__ = __name__
    return f


gemm = _fn("gemm")
gemm2 = _fn("gemm2")
potrf = _fn("potrf")
potri = _fn("potri")
trsm = _fn("trsm")
trmm = _fn("trmm")
syrk = _fn("syrk")
inverse = _fn("inverse")
det = _fn("det")
slogdet = _fn("slogdet")
sumlogdiag = _fn("sumlogdiag")
extractdiag = _fn("extractdiag")
makediag = _fn("makediag")
extracttrian = _fn("extracttrian")
maketrian = _fn("maketrian")
gelqf = _fn("gelqf")
syevd = _fn("syevd")
