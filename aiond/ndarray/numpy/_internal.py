"""``mx.nd.np._internal`` (MXNet's ``_npi``): the registry's ``_npi_<name>``
ops as functions ``<name>`` on arrays, returning ``mx.np.ndarray``; built on
first use."""
from __future__ import annotations


def _np_result(res):
    from ...numpy.multiarray import _as_np
    return _as_np(res)


def __getattr__(name):
    from ...numpy._front import npi_function
    from .._namespace import make_function
    return npi_function(globals(), __name__, name, make_function, _np_result)
