"""aiond: an asyncio-native tensor runtime that runs MXNet 1.x code.

    import aiond as mx
    a = mx.nd.ones((2, 3))
    b = a * 2 + 1               # returns at once
    b.asnumpy()                 # in a script: blocks this thread only
    await b.read()              # in a coroutine: never blocks the loop
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import base, context, engine  # noqa: F401
from .base import MXNetError  # noqa: F401
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: F401
from . import ndarray  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import random  # noqa: F401
from . import profiler  # noqa: F401
from . import autograd  # noqa: F401
from . import kvstore  # noqa: F401
from . import kvstore as kv  # noqa: F401

import importlib as _importlib

_LAZY = {"test_utils": "aiond.test_utils"}


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is not None:
        return _importlib.import_module(mod)
    raise AttributeError("module 'aiond' has no attribute %r" % name)
