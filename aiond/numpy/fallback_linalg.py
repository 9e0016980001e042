"""``mx.np.linalg`` functions that are official NumPy's own (MXNet's
``mxnet.numpy.fallback_linalg``; see ``fallback``)."""
from __future__ import annotations

import numpy as _onp

__all__ = ["cond", "lstsq", "matrix_power", "matrix_rank", "multi_dot", "qr"]

cond = _onp.linalg.cond
lstsq = _onp.linalg.lstsq
matrix_power = _onp.linalg.matrix_power
matrix_rank = _onp.linalg.matrix_rank
multi_dot = _onp.linalg.multi_dot
qr = _onp.linalg.qr
