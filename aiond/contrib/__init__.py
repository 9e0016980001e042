"""``mx.contrib``: MXNet's experimental namespace. ``mx.contrib.ndarray`` (also
``mx.contrib.nd``) is ``mx.nd.contrib`` and ``mx.contrib.symbol`` (also
``mx.contrib.sym``) is ``mx.sym.contrib``, as in MXNet 1.9.1."""
from __future__ import annotations

from ..ndarray import contrib as ndarray  # noqa: F401
from ..ndarray import contrib as nd  # noqa: F401
from .. import symbol as _symbol

symbol = sym = _symbol.contrib
from . import text  # noqa: E402,F401  (mx.contrib.text: vocabularies, token embeddings)
from . import autograd  # noqa: E402,F401  (mx.contrib.autograd: MXNet's experimental autograd API)
from . import tensorboard  # noqa: E402,F401  (mx.contrib.tensorboard: LogMetricsCallback)
from . import amp  # noqa: E402,F401  (mx.contrib.amp: automatic mixed precision)
from . import quantization  # noqa: E402,F401  (mx.contrib.quantization: INT8 models)
from . import quantization as quant  # noqa: E402,F401
from . import io  # noqa: E402,F401  (mx.contrib.io: DataLoaderIter)
from . import onnx  # noqa: E402,F401  (mx.contrib.onnx: ONNX model import)
