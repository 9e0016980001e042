"""The ``_LIB.MX*`` runtime functions with an aiond meaning (MXNet 1.9.1's
src/c_api/c_api.cc): the API version, the GPU count, the random seed and
waiting for every pushed op. Arguments and outputs as MXNet's Python code
passes them (``ctypes.byref`` outputs, plain ints)."""
from __future__ import annotations

from . import _c_api as _c
from .base import MXNetError


def _out(ref):
    obj = getattr(ref, "_obj", None)
    if obj is None:
        raise MXNetError("the output must be passed as ctypes.byref(<ctypes int>)")
    return obj


def MXGetVersion(out):  # noqa: N802 - MXNet's names below
    """The MXNet API level aiond implements, as MXNet encodes it (10901)."""
    from .libinfo import __version__
    major, minor, patch = (int(p) for p in __version__.split(".")[:3])
    _out(out).value = major * 10000 + minor * 100 + patch


def MXGetGPUCount(out):
    """The number of GPUs aiond can use."""
    from .context import num_gpus
    _out(out).value = num_gpus()


def MXRandomSeed(seed):
    """Seed every context's random generator (``mx.random.seed``)."""
    from . import random
    random.seed(int(getattr(seed, "value", seed)))


def MXNDArrayWaitAll():
    """Wait for every pushed op (``mx.nd.waitall``)."""
    from . import ndarray
    ndarray.waitall()


for _name, _fn in list(globals().items()):
    if _name.startswith("MX") and callable(_fn):
        _c._LIB._register(_name, _fn)
