"""``mx.nd.utils``: MXNet 1.9.1's storage-aware creation functions and the
NDArray file functions. ``zeros``/``empty`` take ``stype`` ('default',
'row_sparse', 'csr'); ``array`` keeps a sparse source (an aiond sparse array
or a scipy CSR matrix) sparse. They are ``mx.nd.zeros``, ``mx.nd.empty``,
``mx.nd.array``, ``mx.nd.load``, ``mx.nd.load_frombuffer``, ``mx.nd.save``."""
from .io import load, load_frombuffer, save  # noqa: F401
from .ndarray import array, empty, zeros  # noqa: F401

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]
