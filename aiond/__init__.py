"""aiond: an asyncio-native tensor runtime that runs MXNet 1.x code.

    import aiond as mx
    a = mx.nd.ones((2, 3))
    b = a * 2 + 1               # returns at once
    b.asnumpy()                 # in a script: blocks this thread only
    await b.read()              # in a coroutine: never blocks the loop
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import base, context, engine, util  # noqa: F401
from .base import MXNetError  # noqa: F401
from .util import (is_np_shape, set_np_shape, np_shape, use_np_shape,  # noqa: F401
                   is_np_array, np_array, use_np_array, use_np, set_np, reset_np)
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import autograd  # noqa: F401
from . import _c_api, _c_api_runtime  # noqa: F401  (mx.base._LIB: runtime calls)
from .ndarray._invoke import hooks as _nd_hooks


def _load_symbol_c_api():
    from . import symbol  # noqa: F401  (its _c_api registers _LIB's symbol calls)


_c_api.add_provider(_load_symbol_c_api)


def _load_numpy_op_fallback():
    from . import numpy_op_fallback  # noqa: F401  (registers the *_fallback Custom ops)


# mx.nd.np._internal.<name>_fallback: ops of the symbol layer that the array
# namespaces below it expose, loaded on first use
_nd_hooks.load_npi_fallbacks = _load_numpy_op_fallback


def _load_numpy():
    from . import numpy  # noqa: F401  (registers mx.np.ndarray for NDArray.as_np_ndarray)


_nd_hooks.load_numpy = _load_numpy

import importlib as _importlib

# Loaded on first use, so `import aiond` stays light: mx.sym, mx.kv, mx.io ...
# behave as attributes of the package (and `import aiond.symbol` works too).
_LAZY = {
    "test_utils": ("aiond.test_utils", None), "runtime": ("aiond.runtime", None),
    "random": ("aiond.random", None), "rnd": ("aiond.random", None),
    "profiler": ("aiond.profiler", None),
    "symbol": ("aiond.symbol", None), "sym": ("aiond.symbol", None),
    "name": ("aiond.name", None), "attribute": ("aiond.attribute", None),
    "AttrScope": ("aiond.attribute", "AttrScope"), "executor": ("aiond.symbol.executor", None),
    "kvstore": ("aiond.kvstore", None), "kv": ("aiond.kvstore", None),
    "io": ("aiond.io", None), "metric": ("aiond.metric", None),
    "callback": ("aiond.callback", None), "recordio": ("aiond.recordio", None),
    "optimizer": ("aiond.optimizer", None), "init": ("aiond.initializer", None),
    "initializer": ("aiond.initializer", None), "lr_scheduler": ("aiond.lr_scheduler", None),
    "gluon": ("aiond.gluon", None), "model": ("aiond.model", None),
    "module": ("aiond.module", None), "mod": ("aiond.module", None),
    "operator": ("aiond.operator", None), "rnn": ("aiond.rnn", None),
    "viz": ("aiond.visualization", None), "visualization": ("aiond.visualization", None),
    "numpy": ("aiond.numpy", None), "np": ("aiond.numpy", None),
    "numpy_extension": ("aiond.numpy_extension", None), "npx": ("aiond.numpy_extension", None),
    "np_symbol": ("aiond.symbol.numpy._symbol", None),
    "numpy_op_signature": ("aiond.numpy_op_signature", None),
    "numpy_dispatch_protocol": ("aiond.numpy_dispatch_protocol", None),
    "numpy_op_fallback": ("aiond.numpy_op_fallback", None),
    "contrib": ("aiond.contrib", None),
    "image": ("aiond.image", None), "img": ("aiond.image", None),
}
# MXNet's smaller top-level modules (monitor, registry, log, the legacy executor manager ...)
_LAZY.update({n: ("aiond." + n, None) for n in (
    "monitor", "executor_manager", "registry", "log", "error", "misc", "library", "libinfo",
    "api", "cython", "symbol_doc", "ndarray_doc", "notebook", "tvmop", "torch", "rtc")})
_LAZY["mon"] = ("aiond.monitor", None)
_LAZY["th"] = ("aiond.torch", None)
_LAZY["onnx"] = ("aiond.onnx", None)


def __getattr__(name):
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError("module 'aiond' has no attribute %r" % name)
    mod = _importlib.import_module(entry[0])
    value = mod if entry[1] is None else getattr(mod, entry[1])
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
