"""``mx.libinfo``: where MXNet's compiled library and headers are.

aiond is pure Python (its kernels run through NumPy or CuPy): there is no
``libmxnet.so`` and no C headers, so ``find_lib_path`` and
``find_include_path`` raise ``RuntimeError`` saying so (as MXNet's do when
it cannot find them); ``__version__`` is the MXNet API level aiond
implements."""
from __future__ import annotations

__all__ = ["find_lib_path", "find_include_path"]

__version__ = "1.9.1"


def find_lib_path(prefix='libmxnet'):
    """Raise: aiond has no compiled MXNet shared library."""
    raise RuntimeError("Cannot find the MXNet library: aiond is pure Python and has no %s "
                       "shared library to link against" % prefix)


def find_include_path():
    """Raise: aiond ships no C/C++ headers."""
    raise RuntimeError("Cannot find the MXNet include path: aiond ships no C/C++ headers "
                       "(it has no C API)")
