"""Operators: the registry and the kernels that fill it."""
from . import registry  # noqa: F401
from . import elemwise, init, matrix, random, reduce  # noqa: F401  (register ops)
from . import conv, linalg, nn, norm  # noqa: F401
from . import optimizer_ops  # noqa: F401  (also loads optimizer_fused)
from . import indexing, shape, sorting, special  # noqa: F401
from . import rnn  # noqa: F401
from . import image, image_tensor  # noqa: F401  (_cvimresize, ..., _image_*)
from . import contrib_nn, contrib_bbox, contrib_vision  # noqa: F401  (_contrib_* vision ops)
from . import amp  # noqa: F401  (amp_cast, amp_multicast)
from .registry import Null, Op, Param, get, ops, register  # noqa: F401
