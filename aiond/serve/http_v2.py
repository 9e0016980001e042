"""The Open Inference Protocol's HTTP/REST routes (KServe v2, Triton).

    GET  /v2/health/live                     200 {"live": true}
    GET  /v2/health/ready                    200 {"ready": true}; 503 while stopping
    GET  /v2                                 server metadata
    GET  /v2/models/{name}[/versions/{v}]    model metadata
    GET  /v2/models/{name}[/versions/{v}]/ready
    GET  /v2/models/{name}[/versions/{v}]/config   Triton's model configuration
    GET  /v2/models[/{name}[/versions/{v}]]/stats  Triton's statistics extension
    POST /v2/models/{name}[/versions/{v}]/infer
    POST /v2/repository/index                [{"name", "version", "state", "reason"}]
    POST /v2/repository/models/{name}/load | /unload

An infer body is JSON, or with ``Inference-Header-Content-Length: N`` a JSON
header of N bytes followed by the binary tensors (``binary_data_size`` per
input); ``Content-Encoding: gzip`` or ``deflate`` bodies are inflated (within
the body limit). Outputs asked for with ``binary_data`` (or all of them with
the request parameter ``binary_data_output``) come back the same way.
Errors are ``{"error": message}``: 400 for a request that does not fit the
protocol or the model, 404 for an unknown model or version, 503 (with
``Retry-After``) when the queue is full or the model is not loaded, 504
when the request's ``timeout`` parameter passed, 500 when the model failed
on this input.
"""
from __future__ import annotations

import asyncio
import zlib

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .. import __version__ as _aiond_version
from .protocol import (NotFound, ProtocolError, Unavailable, dumps, encode_infer_response,
                       error_body, parse_infer_request, retry_after_header)
from .repository import protocol_error

__all__ = ["V2Routes"]

_JSON = "application/json"
_OCTET = "application/octet-stream"
_HEADER_LEN = b"inference-header-content-length"
_EXTENSIONS = ["binary_tensor_data", "model_repository", "statistics", "schedule_policy"]


def _json(obj, status=200, headers=None):
    return Response(dumps(obj), status_code=status, media_type=_JSON, headers=headers)


_JSON_H = [("content-type", _JSON)]
_PARSE_IN_THREAD = 256 << 10     # JSON headers larger than this are parsed off the loop
_JOIN_BELOW = 64 << 10           # smaller binary outputs are joined into one write


def _big_header(hl):
    try:
        return int(hl) > _PARSE_IN_THREAD
    except ValueError:
        return False            # parse_infer_request says what is wrong with it


def _raw_error(e):
    headers = list(_JSON_H)
    if isinstance(e, Unavailable):
        headers.append(("retry-after", retry_after_header(e.retry_after)))
    return e.status, headers, error_body(e)


def _error(e):
    headers = None
    if isinstance(e, Unavailable):
        headers = {"Retry-After": retry_after_header(e.retry_after)}
    return Response(error_body(e), status_code=e.status, media_type=_JSON, headers=headers)


class V2Routes:
    """The handlers; ``app`` is the serving state (repository, body reading)."""

    def __init__(self, app):
        self.app = app
        self.repo = app.repository

    def routes(self):
        r = [
            Route("/v2/health/live", self.live, methods=["GET"]),
            Route("/v2/health/ready", self.ready, methods=["GET"]),
            Route("/v2", self.server_metadata, methods=["GET"]),
            Route("/v2/models/stats", self.stats, methods=["GET"]),
            Route("/v2/repository/index", self.index, methods=["POST"]),
            Route("/v2/repository/models/{name}/load", self.load, methods=["POST"]),
            Route("/v2/repository/models/{name}/unload", self.unload, methods=["POST"]),
        ]
        for base in ("/v2/models/{name}", "/v2/models/{name}/versions/{version}"):
            r += [Route(base, self.model_metadata, methods=["GET"]),
                  Route(base + "/ready", self.model_ready, methods=["GET"]),
                  Route(base + "/config", self.model_config, methods=["GET"]),
                  Route(base + "/stats", self.stats, methods=["GET"]),
                  Route(base + "/infer", self.infer, methods=["POST"])]
        return r

    def _model(self, request):
        p = request.path_params
        return self.repo.get(p["name"], p.get("version"))

    # -------------------------------------------------------------- health
    async def live(self, request):
        return _json({"live": True})

    async def ready(self, request):
        ok = not self.app.stopping and all(m.ready for m in self.repo.models())
        return _json({"ready": ok}, 200 if ok else 503)

    async def server_metadata(self, request):
        return _json({"name": "aiond", "version": _aiond_version, "extensions": _EXTENSIONS})

    async def model_metadata(self, request):
        try:
            m = self._model(request)
            meta = m.metadata()
            meta["versions"] = self.repo.versions(m.name) or [m.version]
            return _json(meta)
        except ProtocolError as e:
            return _error(e)

    async def model_ready(self, request):
        try:
            m = self._model(request)
        except NotFound as e:
            return _error(e)
        except Unavailable:
            return _json({"name": request.path_params["name"], "ready": False}, 503)
        ok = m.ready and not self.app.stopping
        return _json({"name": m.name, "version": m.version, "ready": ok}, 200 if ok else 503)

    async def model_config(self, request):
        try:
            return _json(self._model(request).config())
        except ProtocolError as e:
            return _error(e)

    async def stats(self, request):
        p = request.path_params
        try:
            if "name" in p:
                models = [self._model(request)] if "version" in p else \
                    [m for m in self.repo.models() if m.name == p["name"]]
                if not models:
                    self.repo.get(p["name"])        # raises NotFound / Unavailable
            else:
                models = self.repo.models()
        except ProtocolError as e:
            return _error(e)
        return _json({"model_stats": [model_statistics(m) for m in models]})

    # ---------------------------------------------------------- repository
    async def _body_json(self, request):
        body = await self.app.read_body(request.receive, None)
        if not body.strip():
            return {}
        from .protocol import loads
        obj = loads(body)
        if not isinstance(obj, dict):
            raise ProtocolError("expected a JSON object")
        return obj

    async def index(self, request):
        try:
            obj = await self._body_json(request)
        except ProtocolError as e:
            return _error(e)
        except ClientDisconnect:
            return Response(status_code=499)
        ready = obj.get("ready", False)
        if not isinstance(ready, bool):
            return _error(ProtocolError("'ready' must be true or false"))
        return _json(self.repo.index(ready_only=ready))

    async def load(self, request):
        try:
            obj = await self._body_json(request)
            if obj.get("parameters"):
                raise ProtocolError("load parameters (config overrides, files) are not "
                                    "supported; edit the model's folder and load again")
            await self.repo.load(request.path_params["name"])
        except ProtocolError as e:
            return _error(e)
        except ClientDisconnect:
            return Response(status_code=499)
        return _json({})

    async def unload(self, request):
        try:
            await self._body_json(request)
            await self.repo.unload(request.path_params["name"])
        except ProtocolError as e:
            return _error(e)
        except ClientDisconnect:
            return Response(status_code=499)
        return _json({})

    # --------------------------------------------------------------- infer
    async def infer(self, request: Request):
        p = request.path_params
        status, headers, body = await self.infer_raw(
            request.scope, request.receive, p["name"], p.get("version"))
        if isinstance(body, list):
            body = b"".join(body)
        return Response(body, status_code=status, headers=dict(headers) if headers else None,
                        media_type=None)

    async def infer_asgi(self, scope, receive, send, name, version):
        """The infer route on raw ASGI (no Request/Response objects, no routing)."""
        status, headers, body = await self.infer_raw(scope, receive, name, version)
        parts = body if isinstance(body, list) else [body]
        h = [(b"content-length", b"%d" % sum(len(b) for b in parts))]
        h += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        await send({"type": "http.response.start", "status": status, "headers": h})
        for i, b in enumerate(parts):       # large tensors go out as they are, not joined
            await send({"type": "http.response.body", "body": b,
                        "more_body": i < len(parts) - 1})

    async def infer_raw(self, scope, receive, name, version):
        """(status, [(header, value)], body) of one infer request."""
        status, headers, body = await self._infer(scope, receive, name, version)
        self.app.count(status)
        return status, headers, body

    async def _infer(self, scope, receive, name, version):
        app = self.app
        hl = enc = clen = None
        for k, v in scope["headers"]:
            if k == _HEADER_LEN:
                hl = v.decode("latin-1")
            elif k == b"content-encoding":
                enc = v.decode("latin-1").strip().lower()
            elif k == b"content-length":
                clen = v.decode("latin-1")
        try:
            served = self.repo.get(name, version)
            try:
                body = await app.read_body(receive, clen)
            except ClientDisconnect:
                return 499, [], b""
            except Exception as e:  # noqa: BLE001 - _BadRequest: 408/413/400
                status = getattr(e, "status", None)
                if status is None:
                    raise
                return status, _JSON_H, error_body(e)
            if enc and enc != "identity":
                body = self._inflate(body, enc)
            if len(body) > _PARSE_IN_THREAD and (hl is None or _big_header(hl)):
                # a large JSON body takes milliseconds to parse: off the loop
                req = await asyncio.get_running_loop().run_in_executor(
                    None, parse_infer_request, body, hl)
            else:
                req = parse_infer_request(body, hl)
            fut = served.submit(req)
        except ProtocolError as e:
            return _raw_error(e)
        watch = app.watch_receive(receive, fut)
        try:
            y = await fut
        except Exception as e:  # noqa: BLE001 - mapped to the protocol's errors
            err = protocol_error(e)
            if not isinstance(err, ProtocolError):
                raise
            return _raw_error(err)
        except BaseException:
            if watch is not None and watch.disconnected and fut.cancelled():
                return 499, [], b""          # nobody is listening any more
            raise
        finally:
            if watch is not None:
                watch.stop()
        try:
            results = served.finish(req, y)
            head, chunks = encode_infer_response(served.name, served.version, req, results,
                                                 served.output_specs())
        except ProtocolError as e:
            return _raw_error(e)
        if not chunks:
            return 200, _JSON_H, head
        headers = [("content-type", _OCTET), ("inference-header-content-length", str(len(head)))]
        if sum(len(c) for c in chunks) > _JOIN_BELOW:
            return 200, headers, [head, *chunks]
        return 200, headers, b"".join([head, *chunks])

    def _inflate(self, body, enc):
        limit = self.app.max_body_bytes
        if enc == "gzip":
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            d = zlib.decompressobj()
        else:
            raise ProtocolError("Content-Encoding %r is not supported (gzip, deflate)" % enc)
        try:
            out = d.decompress(body, limit + 1)
        except zlib.error as e:
            raise ProtocolError("the %s body does not decompress: %s" % (enc, e)) from None
        if len(out) > limit:
            raise ProtocolError("the decompressed body is larger than %d bytes" % limit, 413)
        if not d.eof:
            raise ProtocolError("the %s body is truncated" % enc)
        return out


def _ns(count, seconds):
    return {"count": int(count), "ns": int(seconds * 1e9)}


def model_statistics(m):
    """One model version's entry of Triton's statistics extension."""
    s = m.batcher.statistics()
    ok = s.completed
    return {
        "name": m.name, "version": m.version,
        "last_inference": int(s.last_batch_time * 1e3),       # ms since the epoch
        "inference_count": s.rows, "execution_count": s.batches,
        "inference_stats": {
            "success": _ns(ok, s.latency_sum_s),
            "fail": _ns(s.failed + s.expired, 0.0),
            "queue": _ns(s.queue_count, s.queue_sum_s),
            "compute_input": _ns(s.batches, 0.0),
            "compute_infer": _ns(s.batches, s.compute_sum_s),
            "compute_output": _ns(s.batches, 0.0),
            "cache_hit": _ns(0, 0.0), "cache_miss": _ns(0, 0.0)},
        "batch_stats": [{"batch_size": int(k), "compute_infer": _ns(c, 0.0)}
                        for k, c in sorted(s.batch_size_histogram.items())],
    }
