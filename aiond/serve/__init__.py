"""Serving models with dynamic batching (``aiond.serve``).

    from aiond.serve import Batcher
    batcher = Batcher(net, max_batch_size=64, max_wait=0.002)
    y = await batcher(x)                  # one request; batched with its peers

    from aiond.serve.http import create_app   # Starlette app (needs the 'serve' extra)
    python -m aiond.serve --symbol m-symbol.json --params m-0000.params --input-shape 1,784

Importing this package loads neither Starlette nor uvicorn; only
``aiond.serve.http`` (and the command line) do.
"""
from .batcher import (Batcher, BatcherClosed, BatcherStatistics, DeadlineExceeded,  # noqa: F401
                      ExecutorModel, InvalidInput, ModelError, Overloaded, ServeError,
                      load_model)

__all__ = ["Batcher", "BatcherClosed", "BatcherStatistics", "DeadlineExceeded",
           "ExecutorModel", "InvalidInput", "ModelError", "Overloaded", "ServeError",
           "load_model", "create_app"]


def create_app(*args, **kwargs):
    """``aiond.serve.http.create_app`` (imports Starlette on first use)."""
    from .http import create_app as _create_app
    return _create_app(*args, **kwargs)
