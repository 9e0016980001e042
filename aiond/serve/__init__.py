"""Serving models with dynamic batching (``aiond.serve``).

    from aiond.serve import Batcher
    batcher = Batcher(net, max_batch_size=64, max_wait=0.002)
    y = await batcher(x)                  # one request; batched with its peers

    from aiond.serve.http import create_app   # Starlette app (needs the 'serve' extra)
    python -m aiond.serve --symbol m-symbol.json --params m-0000.params --input-shape 1,784
    python -m aiond.serve --model-repository models/ --grpc-port 8001

The models are served with the Open Inference Protocol (KServe v2 / Triton:
``protocol`` decodes and encodes it for any transport, ``http_v2`` and
``grpc_server`` carry it), from a ``repository.ModelRepository``.

Importing this package loads neither Starlette, uvicorn nor grpc; only
``aiond.serve.http``, ``aiond.serve.grpc_server`` (and the command line) do.
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
