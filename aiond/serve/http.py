"""An ASGI app (Starlette, served by uvicorn) exposing models over HTTP.

    app = create_app(net, sample_shape=(784,), dtype="float32", max_batch_size=64)
    app = create_app(repository=ModelRepository("models/"))    # every model of a folder
    uvicorn.run(app, host="127.0.0.1", port=8080)

Every model is served with the Open Inference Protocol (KServe v2 / Triton;
the ``/v2/...`` routes of :mod:`aiond.serve.http_v2`). A single model given
to ``create_app`` is also served on aiond's own routes:

``POST /predict``
    JSON: a bare array, or ``{"data": array}`` (``"inputs"``/``"instances"``
    also accepted); one sample of ``sample_shape`` or a batch ``(n, ...)``.
    Answer: ``{"data": ..., "shape": [...], "dtype": "float32"}`` (one sample
    in, one sample out).
    JSON numbers must be finite (``NaN``, ``Infinity`` or a literal past the
    dtype's range get 400); non-finite outputs are written as the strings
    ``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` (proto3's JSON mapping).
    Raw tensors: ``Content-Type: application/octet-stream``, the body the
    little-endian bytes (or big-endian with ``X-Tensor-Dtype: >f4``), headers
    ``X-Tensor-Dtype`` (default: the model's) and ``X-Tensor-Shape`` (e.g.
    ``1,784``); the answer is raw little-endian too, with the same headers,
    unless ``Accept: application/json``.
    Per-request deadline: header ``X-Timeout-Ms`` or query ``?timeout_ms=``.
    A body not received within ``body_timeout`` seconds gets 408.
``GET /health``   200 ``{"status": "ok", ...}``; 503 while shutting down.
``GET /metrics``  Prometheus text format, every model (label ``model``).

Errors (JSON ``{"error": message}``): malformed body, wrong shape or dtype ->
400 naming what was expected; body over ``max_body_bytes`` -> 413; queue
full or shutting down -> 503 with ``Retry-After``; deadline passed -> 504;
the model failed on this input -> 500. A client that disconnects while
waiting has its request cancelled; the batch it was in is not disturbed.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
import warnings

import numpy as np
try:
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("starlette"):
        raise
    from .._extras import install_hint
    raise ModuleNotFoundError("aiond.serve.http needs Starlette, which is not installed (the "
                              "'serve' extra): %s" % install_hint("serve"),
                              name="starlette") from None

from . import metrics as _metrics
from .batcher import (Batcher, BatcherClosed, DeadlineExceeded, InvalidInput, ModelError,
                      Overloaded, _shape_str)
from .repository import (ModelRepository, ServedModel, graph_input_name, graph_output_specs,
                         tensor_specs_for)

__all__ = ["create_app", "MAX_BODY_BYTES"]

MAX_BODY_BYTES = 16 << 20
BODY_TIMEOUT = 30.0              # seconds a client may take to send its body
_PARSE_IN_THREAD = 256 << 10     # JSON bodies larger than this are parsed off the loop
_JSON_KEYS = ("data", "inputs", "instances")
_RAW = "application/octet-stream"
_NUMERIC_KINDS = "biuf"
_HEADERS = frozenset((b"content-type", b"content-length", b"x-tensor-dtype", b"x-tensor-shape",
                      b"x-timeout-ms", b"accept"))


class _BadRequest(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _error(status, message, headers=None):
    if status == 408:
        # the rest of the body is still on its way: a client trickling it
        # must not keep the connection (uvicorn would read it as body forever);
        # a 413's body is read and dropped, and closing early would reset the
        # connection under a client still sending, losing the answer
        headers = dict(headers or {}, Connection="close")
    return JSONResponse({"error": message, "status": status}, status_code=status,
                        headers=headers)


def _retry_after(seconds):
    return {"Retry-After": str(max(1, int(math.ceil(seconds))))}


class _App:
    """The state behind the routes: the models, counters, the lag monitor."""

    def __init__(self, batcher, *, max_body_bytes, cancel_on_disconnect, name,
                 monitor_interval, body_timeout=BODY_TIMEOUT, repository=None):
        self.batcher = batcher
        self.repository = repository if repository is not None else ModelRepository()
        self.grpc_address = None
        self.grpc = None
        self.grpc_grace = 30.0
        self.body_timeout = body_timeout
        self.max_body_bytes = int(max_body_bytes)
        self.cancel_on_disconnect = bool(cancel_on_disconnect)
        self.name = name
        self.responses = {}
        self.lag = {"last": 0.0, "max": 0.0}
        self.monitor_interval = monitor_interval
        self._monitor = None
        self.stopping = False
        if batcher is not None:
            self.sample_shape = batcher.sample_shape
            self.dtype = batcher.dtype or np.dtype(np.float32)
        self._raw_cache = {}

    def expected(self):
        ss = self.sample_shape
        if ss is None:
            return "an array (n, ...) of %s" % self.dtype.name
        return "shape %s or %s of %s" % (_shape_str((None,) + ss), _shape_str(ss),
                                         self.dtype.name)

    # -------------------------------------------------------------- parsing
    def _shape_rows(self, shape):
        """(batched?) for an input of ``shape``; raises 400 when it fits neither."""
        ss = self.sample_shape
        if ss is None:
            if len(shape) < 1:
                raise _BadRequest(400, "expected %s, got a scalar" % self.expected())
            return True

        def fits(s):
            return len(s) == len(ss) and all(e is None or e == d for e, d in zip(ss, s))
        if fits(shape[1:]) and len(shape) == len(ss) + 1:
            return True
        if fits(shape):
            return False
        raise _BadRequest(400, "expected %s, got shape %s"
                          % (self.expected(), _shape_str(shape)))

    def parse_json(self, body):
        try:
            obj = json.loads(body, parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as e:
            raise _BadRequest(400, "malformed JSON body (%s); expected a JSON array of "
                                   "numbers or {\"data\": array}" % e) from None
        except RecursionError:
            raise _BadRequest(400, "the JSON body nests too deeply; expected %s"
                              % self.expected()) from None
        if isinstance(obj, dict):
            for k in _JSON_KEYS:
                if k in obj:
                    obj = obj[k]
                    break
            else:
                raise _BadRequest(400, "expected a JSON array of numbers or an object with "
                                       "a \"data\" array; got an object with keys %s"
                                  % sorted(obj)[:8])
        if not isinstance(obj, list):
            raise _BadRequest(400, "expected a JSON array of numbers (%s), got %s"
                              % (self.expected(), type(obj).__name__))
        if (b"true" in body or b"false" in body) and _has_bool(obj):
            raise _BadRequest(400, "expected numbers (%s), got true/false"
                              % self.expected())
        ragged = _BadRequest(400, "expected a rectangular array of numbers (%s); the nested "
                                  "lists have different lengths" % self.expected())
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # numpy < 1.24 warns, then makes objects
                arr = np.array(obj)
        except (ValueError, TypeError, OverflowError):
            raise ragged from None
        except RecursionError:
            raise _BadRequest(400, "the JSON array nests too deeply; expected %s"
                              % self.expected()) from None
        if arr.dtype.kind == "O" and any(isinstance(x, list) for x in arr.ravel()):
            raise ragged
        if arr.dtype.kind not in _NUMERIC_KINDS or arr.dtype.kind == "b":
            raise _BadRequest(400, "expected numbers (%s), got %s values"
                              % (self.expected(), "non-numeric" if arr.dtype.kind in "OUS"
                                 else arr.dtype.name))
        batched = self._shape_rows(arr.shape)
        if arr.dtype != self.dtype:
            arr = self._convert(arr)
        elif arr.dtype.kind == "f" and not np.isfinite(arr).all():
            raise _BadRequest(400, "expected finite numbers (%s)" % self.expected())
        return (arr if batched else arr[None]), batched

    def _convert(self, arr):
        """``arr`` in the model's dtype, or 400 where that would change a value
        (a fraction or an out-of-range number into an integer dtype, a number
        past a float dtype's range)."""
        dt = self.dtype
        with np.errstate(all="ignore"):
            out = arr.astype(dt)
            if dt.kind == "f":
                if not np.isfinite(out).all():
                    raise _BadRequest(400, "expected finite numbers within %s's range (%s)"
                                      % (dt.name, self.expected()))
            elif dt.kind in "iu":
                if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                    raise _BadRequest(400, "expected finite numbers (%s)" % self.expected())
                if not np.array_equal(out.astype(arr.dtype), arr):
                    raise _BadRequest(400, "expected integers within %s's range (%s)"
                                      % (dt.name, self.expected()))
        return out

    def raw_meta(self, dt_name, sh):
        """(shape, little-endian dtype, batched?, bytes needed) for the headers of
        a raw tensor; cached per header pair (a server sees few distinct ones)."""
        key = (dt_name, sh)
        meta = self._raw_cache.get(key)
        if meta is not None:
            return meta
        if dt_name is None:
            dt = self.dtype
        else:
            try:
                dt = np.dtype(dt_name.strip())
            except Exception:  # noqa: BLE001 - numpy's dtype parser raises many kinds
                raise _BadRequest(400, "X-Tensor-Dtype %r is not a dtype; expected %s"
                                  % (dt_name, self.dtype.name)) from None
            if dt.kind not in _NUMERIC_KINDS or dt.fields is not None or dt.shape:
                raise _BadRequest(400, "X-Tensor-Dtype %s is not numeric; expected %s"
                                  % (dt_name, self.dtype.name))
            if dt.newbyteorder("<") != self.dtype.newbyteorder("<"):
                raise _BadRequest(400, "expected X-Tensor-Dtype %s, got %s"
                                  % (self.dtype.name, dt.name))
        if sh is None:
            raise _BadRequest(400, "a raw tensor needs an X-Tensor-Shape header (e.g. %s)"
                              % ",".join(str(d or 1) for d in (1,) + (self.sample_shape or ())))
        try:
            shape = tuple(int(d) for d in sh.replace("(", "").replace(")", "").split(",")
                          if d.strip())
            if any(d < 0 for d in shape):
                raise ValueError
        except (ValueError, OverflowError):
            raise _BadRequest(400, "X-Tensor-Shape %r is not a shape like 1,784" % sh) from None
        if len(shape) > 32 or math.prod(shape) * dt.itemsize > self.max_body_bytes:
            raise _BadRequest(413 if len(shape) <= 32 else 400,
                              "X-Tensor-Shape %s is larger than this server takes" % sh)
        batched = self._shape_rows(shape)
        # the body's byte order: as the header says (">f4" is big-endian),
        # little-endian when it says none (or "=", "|")
        le = dt if dt.byteorder in "<>" else dt.newbyteorder("<")
        meta = (shape, le, batched, math.prod(shape) * le.itemsize)
        if len(self._raw_cache) >= 256:
            self._raw_cache.clear()
        self._raw_cache[key] = meta
        return meta

    def parse_raw(self, body, dt_name, sh):
        shape, le, batched, need = self.raw_meta(dt_name, sh)
        if len(body) != need:
            raise _BadRequest(400, "the body has %d bytes; X-Tensor-Shape %s of %s needs %d"
                              % (len(body), _shape_str(shape), le.name, need))
        arr = np.frombuffer(body, dtype=le).reshape(shape)
        if not le.isnative:
            arr = arr.astype(le.newbyteorder("="))
        return (arr if batched else arr[None]), batched

    async def read_body(self, receive, content_length):
        limit = self.max_body_bytes
        if content_length is not None:
            try:
                n = int(content_length)
                if n < 0:
                    raise ValueError
            except ValueError:
                raise _BadRequest(400, "Content-Length %r is not a number"
                                  % content_length) from None
            if n > limit:
                raise _BadRequest(413, "the body has %d bytes, more than the limit of %d"
                                  % (n, limit))
        if self.body_timeout is None:
            return await self._read_chunks(receive, limit)
        try:
            async with _timeout(self.body_timeout):
                return await self._read_chunks(receive, limit)
        except TimeoutError:
            raise _BadRequest(408, "the request body did not arrive within %g s"
                              % self.body_timeout) from None

    async def _read_chunks(self, receive, limit):
        chunks, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                raise ClientDisconnect()
            chunk = msg.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > limit:
                    raise _BadRequest(413, "the body is more than the limit of %d bytes"
                                      % limit)
                chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    # ------------------------------------------------------------- handlers
    def count(self, status):
        self.responses[status] = self.responses.get(status, 0) + 1

    _count = count

    def watch(self, request, fut):
        """A watch cancelling ``fut`` if the client disconnects first (or None)."""
        return self.watch_receive(request.receive, fut)

    def watch_receive(self, receive, fut):
        if self.cancel_on_disconnect and not fut.done():
            return _Watch(receive, fut)
        return None

    async def predict(self, request: Request):
        resp = await self._predict(request)
        self._count(resp.status_code)
        return resp

    async def _predict(self, request: Request):
        # the few headers used, in one pass over the raw list (ASGI names are lowercase)
        h = {}
        for k, v in request.scope["headers"]:
            if k in _HEADERS:
                h[k] = v.decode("latin-1")
        try:
            body = await self.read_body(request.receive, h.get(b"content-length"))
            raw = h.get(b"content-type", "").startswith(_RAW)
            if raw:
                x, batched = self.parse_raw(body, h.get(b"x-tensor-dtype"),
                                            h.get(b"x-tensor-shape"))
            elif len(body) > _PARSE_IN_THREAD:
                x, batched = await asyncio.get_running_loop().run_in_executor(
                    None, self.parse_json, body)
            else:
                x, batched = self.parse_json(body)
            timeout = h.get(b"x-timeout-ms")
            if timeout is None and request.scope.get("query_string"):
                timeout = request.query_params.get("timeout_ms")
            if timeout is not None:
                try:
                    t = float(timeout)
                    if not (math.isfinite(t) and t >= 0):
                        raise ValueError
                    timeout = t / 1e3
                except ValueError:
                    raise _BadRequest(400, "X-Timeout-Ms %r is not a number of milliseconds "
                                           "(finite, >= 0)" % timeout) from None
        except _BadRequest as e:
            return _error(e.status, str(e))
        except ClientDisconnect:
            return Response(status_code=499)         # gone while sending its body
        try:
            fut = self.batcher(x, timeout=timeout)
        except InvalidInput as e:
            return _error(400, str(e))
        except Overloaded as e:
            return _error(503, str(e), _retry_after(e.retry_after))
        except DeadlineExceeded as e:
            return _error(504, str(e))
        # Watching for a disconnect takes a task per request: start one only
        # for requests that are not answered within DISCONNECT_CHECK_AFTER
        watch = None
        if self.cancel_on_disconnect and not fut.done():
            watch = _Watch(request.receive, fut)
        try:
            y = await fut
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if fut.cancelled() and watch is not None and watch.disconnected and \
                    (task is None or not task.cancelling()):
                return Response(status_code=499)     # nobody is listening any more
            raise
        except DeadlineExceeded as e:
            return _error(504, str(e))
        except BatcherClosed as e:
            return _error(503, str(e), _retry_after(e.retry_after))
        except ModelError as e:
            return _error(500, str(e))
        finally:
            if watch is not None:
                watch.stop()
        accept = h.get(b"accept", "")
        want_raw = (raw and "application/json" not in accept) or _RAW in accept
        if isinstance(y, tuple):
            outs = [o if batched else o[0] for o in y]
            if want_raw and len(outs) == 1:
                y, outs = outs[0], None
            elif want_raw:
                return _error(406, "this model has %d outputs: ask for JSON" % len(outs))
            else:
                return JSONResponse({"data": [_jsonable(o) for o in outs],
                                     "shape": [list(o.shape) for o in outs],
                                     "dtype": [o.dtype.name for o in outs]})
        else:
            y = y if batched else y[0]
        if want_raw:
            le = y.dtype.newbyteorder("<")
            return Response(np.ascontiguousarray(y, dtype=le).tobytes(), media_type=_RAW,
                            headers={"X-Tensor-Dtype": y.dtype.name,
                                     "X-Tensor-Shape": ",".join(map(str, y.shape))})
        return JSONResponse({"data": _jsonable(y), "shape": list(y.shape),
                             "dtype": y.dtype.name})

    async def health(self, request: Request):
        if self.batcher is None:
            if self.stopping:
                return JSONResponse({"status": "stopping"}, status_code=503)
            return JSONResponse({"status": "ok", "models": self.repository.index()})
        st = self.batcher.statistics()
        if self.stopping or self.batcher.closing:
            return JSONResponse({"status": "stopping", "model": self.name}, status_code=503)
        return JSONResponse({"status": "ok", "model": self.name, "queue_depth": st.queue_depth,
                             "in_flight": st.in_flight, "max_batch_size": st.max_batch_size})

    async def metrics(self, request: Request):
        lag = dict(self.lag) if self._monitor is not None else None
        self.lag["max"] = self.lag["last"]
        models = [({"model": m.name, "version": m.version}, m.batcher.statistics())
                  for m in self.repository.models()]
        text = _metrics.render_models(models, self.responses, lag,
                                      connections=getattr(self, "connections", None))
        return Response(text, media_type=_metrics.CONTENT_TYPE)

    # ------------------------------------------------------------ lifecycle
    async def _watch_lag(self):
        interval = self.monitor_interval
        lag = self.lag
        perf = time.perf_counter
        while True:
            t = perf()
            await asyncio.sleep(interval)
            d = max(0.0, perf() - t - interval)
            lag["last"] = d
            if d > lag["max"]:
                lag["max"] = d

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        if self.monitor_interval:
            self._monitor = asyncio.ensure_future(self._watch_lag())
        if self.repository.path:
            await self.repository.load_all()
        if self.grpc_address is not None:
            from .grpc_server import start_grpc
            self.grpc = await start_grpc(self.repository, self.grpc_address, app=self,
                                         max_message_bytes=self.max_body_bytes,
                                         limits=getattr(self, "grpc_limits", None))
        try:
            yield
        finally:
            self.stopping = True
            if self._monitor is not None:
                self._monitor.cancel()
            if self.grpc is not None:
                # new calls are refused, the ones in flight get grace seconds
                await self.grpc.stop(self.grpc_grace)
            # uvicorn has waited for the requests in flight; finish what is queued
            await self.repository.aclose()
            if self.batcher is not None:
                await self.batcher.aclose(drain=True)


DISCONNECT_CHECK_AFTER = 0.02    # seconds


def _has_bool(obj):
    """Whether nested lists hold a JSON true/false (numpy would take it as 1/0)."""
    stack = [obj]
    while stack:
        x = stack.pop()
        if x is True or x is False:
            return True
        if isinstance(x, list):
            stack.extend(x)
    return False


def _no_constant(name):
    raise ValueError("%s is not a JSON number; send finite numbers" % name)


_NONFINITE = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def _jsonable(y):
    """``y.tolist()``, with non-finite floats as proto3's JSON strings."""
    y = np.asarray(y)
    if y.dtype.kind not in "fc" or np.isfinite(y).all():
        return y.tolist()
    if y.dtype.kind == "c":
        y = y.real
    obj = y.astype(object)
    bad = ~np.isfinite(y)
    obj[bad] = [("NaN" if v != v else _NONFINITE[v]) for v in y[bad].tolist()]
    return obj.tolist()


try:
    _timeout = asyncio.timeout            # Python >= 3.11: one timer, no extra task
except AttributeError:  # pragma: no cover - Python 3.10
    @contextlib.asynccontextmanager
    async def _timeout(delay):
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        fired = []

        def fire():
            fired.append(True)
            task.cancel()
        h = loop.call_later(delay, fire)
        try:
            yield
        except asyncio.CancelledError:
            if fired:
                raise TimeoutError() from None
            raise
        finally:
            h.cancel()


class _Watch:
    """Cancels ``fut`` if the client goes away before its answer is ready."""
    __slots__ = ("receive", "fut", "timer", "task", "disconnected")

    def __init__(self, receive, fut):
        self.receive = receive
        self.fut = fut
        self.task = None
        self.disconnected = False
        self.timer = asyncio.get_running_loop().call_later(DISCONNECT_CHECK_AFTER, self._start)

    def _start(self):
        self.timer = None
        if not self.fut.done():
            self.task = asyncio.ensure_future(self._watch())

    async def _watch(self):
        for _ in range(16):     # the body was read: only a disconnect should come
            msg = await self.receive()
            if msg.get("type") == "http.disconnect":
                self.disconnected = True
                if not self.fut.done():
                    self.fut.cancel()
                return

    def stop(self):
        if self.timer is not None:
            self.timer.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()


def create_app(model=None, *, sample_shape=None, dtype="float32",
               max_body_bytes=MAX_BODY_BYTES, cancel_on_disconnect=True, name="model",
               monitor_interval=0.05, body_timeout=BODY_TIMEOUT, repository=None,
               input_name=None, outputs=None, version="1", grpc_address=None,
               grpc_grace=30.0, connection_stats=None, grpc_limits=None, **batcher_options):
    """A Starlette app serving ``model`` (a callable on NDArrays, or a ready
    :class:`~aiond.serve.Batcher`) at ``POST /predict`` and, as ``name``,
    on the inference protocol's ``/v2`` routes; and every model of
    ``repository`` (a :class:`~aiond.serve.repository.ModelRepository`,
    or a folder) on the ``/v2`` routes. ``GET /health`` and ``GET /metrics``
    cover them all. ``body_timeout``: seconds a client may take to send its
    request body (408 after; None: no limit).

    ``sample_shape``: the shape of one row (``(784,)``), used to validate
    inputs and to tell one sample from a batch; ``dtype``: the model's input
    dtype; ``input_name`` (default: the graph's input, else ``data``),
    ``outputs`` (TensorSpecs or (name, datatype, shape) tuples; default: the
    graph's outputs with the shapes ``sample_shape`` fixes, as a repository
    model and the command line describe them; ``output0``, ... for a model
    without a graph), ``version``: how the model is described on ``/v2``; ``max_body_bytes``: larger bodies get 413;
    ``monitor_interval``: seconds between event-loop lag probes (0: off).
    ``grpc_address`` ("host:port"): also serve the protocol over gRPC there,
    in the same event loop (needs the ``grpc`` extra; ``app.state.serve.grpc``
    is the server once started, its ``port`` the port bound); at shutdown
    calls in flight get ``grpc_grace`` seconds. ``connection_stats``: the
    server's :class:`~aiond.serve.limits.ConnectionStats`, shown on ``/metrics``;
    ``grpc_limits``: a :class:`~aiond.serve.limits.ServerLimits` for the gRPC port.
    Other keyword arguments (``max_batch_size``, ``max_wait``, ``max_queue``,
    ``max_in_flight``, ``timeout``, ``buckets``, ...) go to the Batcher.
    """
    from .http_v2 import V2Routes
    if isinstance(repository, (str, bytes)) or hasattr(repository, "__fspath__"):
        repository = ModelRepository(repository)
    batcher = None
    if model is not None:
        if isinstance(model, Batcher):
            if batcher_options:
                raise TypeError("batching options %s given with a ready Batcher"
                                % sorted(batcher_options))
            batcher = model
        else:
            batcher = Batcher(model, sample_shape=sample_shape, dtype=dtype, name=name,
                              **batcher_options)
    elif batcher_options:
        raise TypeError("batching options %s given without a model (a repository's models "
                        "take theirs from their config)" % sorted(batcher_options))
    state = _App(batcher, max_body_bytes=max_body_bytes,
                 cancel_on_disconnect=cancel_on_disconnect, name=name,
                 monitor_interval=monitor_interval, body_timeout=body_timeout,
                 repository=repository)
    state.grpc_address = grpc_address
    state.grpc_grace = grpc_grace
    state.connections = connection_stats
    state.grpc_limits = grpc_limits
    if batcher is not None:
        if input_name is None:
            input_name = graph_input_name(batcher.model) or "data"
        specs = tensor_specs_for(batcher.sample_shape, batcher.dtype, input_name)
        if outputs is None:
            outputs = graph_output_specs(batcher.model, specs, batcher.max_batch_size)
        state.repository.add(ServedModel(name, batcher.model, specs, outputs, version=version,
                                         max_batch_size=batcher.max_batch_size,
                                         batcher=batcher))
    routes = [Route("/health", state.health, methods=["GET"]),
              Route("/metrics", state.metrics, methods=["GET"])]
    if batcher is not None:
        routes.append(Route("/predict", state.predict, methods=["POST"]))
    v2 = V2Routes(state)
    app = Starlette(routes=routes + v2.routes(), lifespan=state.lifespan)
    app.state.serve = state
    app.state.batcher = batcher
    app.state.repository = state.repository
    return _FastPath(app, state, v2)


class _FastPath:
    """The ASGI app: inference requests (``POST /predict``, ``POST
    /v2/models/{name}[/versions/{v}]/infer``) go straight to their handlers;
    everything else through Starlette's router. Routing and the middleware
    stack cost more per request than decoding a batch-1 tensor does."""

    def __init__(self, app, state, v2):
        self.starlette = app
        self.state = app.state
        self.router = app.router
        self._serve = state
        self._v2 = v2

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            if path.startswith("/v2/models/") and path.endswith("/infer"):
                parts = path[11:-6].split("/")
                if len(parts) == 1 and parts[0]:
                    return await self._v2.infer_asgi(scope, receive, send, parts[0], None)
                if len(parts) == 3 and parts[1] == "versions" and parts[0] and parts[2]:
                    return await self._v2.infer_asgi(scope, receive, send, parts[0],
                                                     parts[2])
            elif path == "/predict" and self._serve.batcher is not None:
                resp = await self._serve.predict(Request(scope, receive))
                return await resp(scope, receive, send)
        await self.starlette(scope, receive, send)

    def __getattr__(self, name):        # url_path_for, add_route, ... of the Starlette app
        return getattr(self.starlette, name)
