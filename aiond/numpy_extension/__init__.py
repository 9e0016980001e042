"""``mx.npx`` (``mxnet.numpy_extension``): NumPy-semantics switches and the
deep-learning ops that NumPy lacks (activations, layers, ...), returning
``mx.np.ndarray``."""
from __future__ import annotations

from ..context import cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from ..util import (is_np_array, is_np_shape, np_array, np_shape, reset_np,  # noqa: F401
                    set_np, set_np_shape, use_np, use_np_array, use_np_shape)
from ._op import *  # noqa: F401,F403
from . import random  # noqa: F401
from . import image  # noqa: F401
from . import utils  # noqa: F401
