"""The Open Inference Protocol over gRPC (``inference.GRPCInferenceService``,
what ``tritonclient.grpc`` and KServe's clients call), on ``grpc.aio`` in the
event loop that runs the models' Batchers.

    server = await start_grpc(repository, "127.0.0.1:8001")   # in the serving loop
    ...
    await server.stop(grace=5)

Needs the ``grpc`` extra (grpcio and protobuf). ``ModelConfig`` answers the
fields of Triton's ModelConfig that describe an aiond model (name, platform,
max batch, inputs, outputs, dynamic batching). The messages come from
aiond/serve/proto/inference.proto through :mod:`._grpc_descriptor`; no
generated code. ``create_app(..., grpc_port=8001)`` starts it with the HTTP
app (same loop, same models). Errors map to status codes: a bad request
INVALID_ARGUMENT, an unknown model or version NOT_FOUND, a full queue
RESOURCE_EXHAUSTED (with ``retry-after`` trailing metadata, seconds), a
model that is not loaded UNAVAILABLE, a passed ``timeout`` parameter
DEADLINE_EXCEEDED, a model failing on the input INTERNAL. A client that
cancels (or whose deadline passes) withdraws its queued request.
"""
from __future__ import annotations

import asyncio
import logging

import numpy as np

from .. import __version__ as _aiond_version
from .protocol import (DATATYPES, InferInput, InferRequest, ProtocolError,
                       RequestedOutput, Unavailable, decode_tensor_bytes, dtype_of,
                       tensor_bytes)
from .repository import protocol_error

__all__ = ["start_grpc", "GrpcService", "SERVICE"]

log = logging.getLogger("aiond.serve")
SERVICE = "inference.GRPCInferenceService"
_EXTENSIONS = ["binary_tensor_data", "model_repository", "statistics", "schedule_policy"]
_MAX_DIMS = 32

# the typed contents field of each datatype (FP16 has none: raw contents only)
_CONTENTS = {"BOOL": "bool_contents", "INT8": "int_contents", "INT16": "int_contents",
             "INT32": "int_contents", "INT64": "int64_contents", "UINT8": "uint_contents",
             "UINT16": "uint_contents", "UINT32": "uint_contents",
             "UINT64": "uint64_contents", "FP32": "fp32_contents", "FP64": "fp64_contents",
             "BYTES": "bytes_contents"}


def _code(e):
    import grpc
    s = getattr(e, "status", 500)
    if isinstance(e, Unavailable):
        return grpc.StatusCode.RESOURCE_EXHAUSTED if e.overloaded else \
            grpc.StatusCode.UNAVAILABLE
    return {400: grpc.StatusCode.INVALID_ARGUMENT, 404: grpc.StatusCode.NOT_FOUND,
            408: grpc.StatusCode.DEADLINE_EXCEEDED, 413: grpc.StatusCode.RESOURCE_EXHAUSTED,
            504: grpc.StatusCode.DEADLINE_EXCEEDED}.get(s, grpc.StatusCode.INTERNAL)


def _param(p):
    """A protobuf InferParameter as a Python value."""
    which = p.WhichOneof("parameter_choice")
    return None if which is None else getattr(p, which)


def decode_request(msg) -> InferRequest:
    """A protobuf ModelInferRequest as the protocol's InferRequest."""
    params = {k: _param(v) for k, v in msg.parameters.items()}
    raw = msg.raw_input_contents
    if raw and len(raw) != len(msg.inputs):
        raise ProtocolError("the request has %d inputs but %d raw_input_contents; give "
                            "raw contents for every input or for none"
                            % (len(msg.inputs), len(raw)))
    if not msg.inputs:
        raise ProtocolError("the request needs at least one input")
    inputs, seen = [], set()
    for i, t in enumerate(msg.inputs):
        name = t.name
        if name in seen:
            raise ProtocolError("input %r is given twice" % name)
        seen.add(name)
        dt = dtype_of(t.datatype)
        shape = tuple(t.shape)
        if len(shape) > _MAX_DIMS or any(d < 0 for d in shape):
            raise ProtocolError("input %r: 'shape' must hold at most %d integers >= 0, got %s"
                                % (name, _MAX_DIMS, list(shape)))
        if "shared_memory_region" in t.parameters:
            raise ProtocolError("input %r: shared memory is not supported by this server"
                                % name)
        if raw:
            if t.HasField("contents"):
                raise ProtocolError("input %r has both contents and raw_input_contents"
                                    % name)
            data = decode_tensor_bytes(name, t.datatype, shape, raw[i])
        else:
            data = _from_contents(name, t, dt, shape)
        inputs.append(InferInput(name, t.datatype, shape, data))
    outputs = []
    for o in msg.outputs:
        if "shared_memory_region" in o.parameters:
            raise ProtocolError("output %r: shared memory is not supported by this server"
                                % o.name)
        if "classification" in o.parameters and _param(o.parameters["classification"]):
            raise ProtocolError("output %r: the classification extension is not supported"
                                % o.name)
        outputs.append(RequestedOutput(o.name, True))
    return InferRequest(msg.id, params, inputs, outputs, True)


def _from_contents(name, t, dt, shape):
    field = _CONTENTS.get(t.datatype)
    if field is None:
        raise ProtocolError("input %r: %s data must be sent in raw_input_contents"
                            % (name, t.datatype))
    n = 1
    for d in shape:
        n *= d
    values = getattr(t.contents, field)
    if len(values) != n:
        raise ProtocolError("input %r: shape %s needs %d elements, %s holds %d"
                            % (name, list(shape), n, field, len(values)))
    if dt.kind == "O":
        arr = np.empty(n, dtype=object)
        arr[:] = list(values)
        return arr.reshape(shape)
    native = dt.newbyteorder("=")
    if dt.kind in "iu":
        wide = np.array(values, dtype=np.int64 if dt.kind == "i" else np.uint64)
        info = np.iinfo(native)
        if n and (wide.min() < info.min or wide.max() > info.max):
            raise ProtocolError("input %r: a value is outside %s's range" % (name, t.datatype))
        return wide.astype(native).reshape(shape)
    return np.array(values, dtype=native).reshape(shape)


class GrpcService:
    """The RPC handlers over a ModelRepository; ``app``: the HTTP app's state
    (for readiness while stopping), or None."""

    def __init__(self, repository, app=None):
        from ._grpc_descriptor import messages
        self.repo = repository
        self.app = app
        self.pb = messages()

    def handler(self):
        import grpc
        pb = self.pb

        def unary(fn, req, resp):
            return grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=pb[req].FromString,
                response_serializer=pb[resp].SerializeToString)
        methods = {
            "ServerLive": unary(self.server_live, "ServerLiveRequest", "ServerLiveResponse"),
            "ServerReady": unary(self.server_ready, "ServerReadyRequest",
                                 "ServerReadyResponse"),
            "ModelReady": unary(self.model_ready, "ModelReadyRequest", "ModelReadyResponse"),
            "ServerMetadata": unary(self.server_metadata, "ServerMetadataRequest",
                                    "ServerMetadataResponse"),
            "ModelMetadata": unary(self.model_metadata, "ModelMetadataRequest",
                                   "ModelMetadataResponse"),
            "ModelInfer": unary(self.model_infer, "ModelInferRequest", "ModelInferResponse"),
            "ModelStreamInfer": grpc.stream_stream_rpc_method_handler(
                self.model_stream_infer, request_deserializer=pb["ModelInferRequest"].FromString,
                response_serializer=pb["ModelStreamInferResponse"].SerializeToString),
            "ModelConfig": unary(self.model_config, "ModelConfigRequest", "ModelConfigResponse"),
            "ModelStatistics": unary(self.model_statistics, "ModelStatisticsRequest",
                                     "ModelStatisticsResponse"),
            "RepositoryIndex": unary(self.repository_index, "RepositoryIndexRequest",
                                     "RepositoryIndexResponse"),
            "RepositoryModelLoad": unary(self.repository_load, "RepositoryModelLoadRequest",
                                         "RepositoryModelLoadResponse"),
            "RepositoryModelUnload": unary(self.repository_unload,
                                           "RepositoryModelUnloadRequest",
                                           "RepositoryModelUnloadResponse"),
        }
        return grpc.method_handlers_generic_handler(SERVICE, methods)

    async def _abort(self, context, e):
        md = None
        if isinstance(e, Unavailable) and e.retry_after:
            md = (("retry-after", str(max(1, int(np.ceil(e.retry_after))))),)
        if md:
            context.set_trailing_metadata(md)
        await context.abort(_code(e), str(e))

    @property
    def _stopping(self):
        return self.app is not None and self.app.stopping

    # ----------------------------------------------------------- health
    async def server_live(self, request, context):
        return self.pb["ServerLiveResponse"](live=True)

    async def server_ready(self, request, context):
        ok = not self._stopping and all(m.ready for m in self.repo.models())
        return self.pb["ServerReadyResponse"](ready=ok)

    async def model_ready(self, request, context):
        ok = self.repo.ready(request.name, request.version or None) and not self._stopping
        return self.pb["ModelReadyResponse"](ready=ok)

    async def server_metadata(self, request, context):
        return self.pb["ServerMetadataResponse"](name="aiond", version=_aiond_version,
                                                 extensions=_EXTENSIONS)

    async def model_metadata(self, request, context):
        try:
            m = self.repo.get(request.name, request.version or None)
        except ProtocolError as e:
            await self._abort(context, e)
        meta = m.metadata()
        T = self.pb["ModelMetadataResponse"].TensorMetadata
        return self.pb["ModelMetadataResponse"](
            name=m.name, versions=self.repo.versions(m.name) or [m.version],
            platform=m.platform, inputs=[T(**t) for t in meta["inputs"]],
            outputs=[T(**t) for t in meta["outputs"]])

    async def model_config(self, request, context):
        """The model's configuration in Triton's ModelConfig (the fields aiond fills)."""
        try:
            m = self.repo.get(request.name, request.version or None)
        except ProtocolError as e:
            await self._abort(context, e)
        from google.protobuf import json_format
        resp = self.pb["ModelConfigResponse"]()
        json_format.ParseDict(m.config(), resp.config, ignore_unknown_fields=True)
        return resp

    async def model_statistics(self, request, context):
        from .http_v2 import model_statistics
        try:
            if request.name:
                if request.version:
                    models = [self.repo.get(request.name, request.version)]
                else:
                    models = [m for m in self.repo.models() if m.name == request.name]
                    if not models:
                        self.repo.get(request.name)
            else:
                models = self.repo.models()
        except ProtocolError as e:
            await self._abort(context, e)
        from google.protobuf import json_format
        resp = self.pb["ModelStatisticsResponse"]()
        for m in models:
            json_format.ParseDict(model_statistics(m), resp.model_stats.add(),
                                  ignore_unknown_fields=True)
        return resp

    # -------------------------------------------------------- repository
    async def repository_index(self, request, context):
        M = self.pb["RepositoryIndexResponse"].ModelIndex
        return self.pb["RepositoryIndexResponse"](
            models=[M(**e) for e in self.repo.index(ready_only=request.ready)])

    async def repository_load(self, request, context):
        try:
            if request.parameters:
                raise ProtocolError("load parameters are not supported; edit the model's "
                                    "folder and load again")
            await self.repo.load(request.model_name)
        except ProtocolError as e:
            await self._abort(context, e)
        return self.pb["RepositoryModelLoadResponse"]()

    async def repository_unload(self, request, context):
        try:
            await self.repo.unload(request.model_name)
        except ProtocolError as e:
            await self._abort(context, e)
        return self.pb["RepositoryModelUnloadResponse"]()

    # ------------------------------------------------------------- infer
    async def _infer(self, msg):
        """The ModelInferResponse for ``msg``; raises ProtocolError."""
        served = self.repo.get(msg.model_name, msg.model_version or None)
        req = decode_request(msg)
        fut = served.submit(req)
        try:
            y = await fut
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - mapped to the protocol's errors
            raise protocol_error(e) from None
        results = served.finish(req, y)
        specs = {s.name: s for s in served.output_specs()}
        names = [o.name for o in req.outputs] or list(specs)
        resp = self.pb["ModelInferResponse"](model_name=served.name,
                                              model_version=served.version, id=req.id)
        for name in names:
            arr = np.asarray(results[name])
            spec = specs[name]
            if spec.datatype != "BYTES":
                want = DATATYPES[spec.datatype].newbyteorder("=")
                if arr.dtype != want:
                    arr = arr.astype(want)
            o = resp.outputs.add()
            o.name, o.datatype = name, spec.datatype
            o.shape.extend(arr.shape)
            resp.raw_output_contents.append(bytes(tensor_bytes(arr, spec.datatype)))
        return resp

    async def model_infer(self, request, context):
        try:
            return await self._infer(request)
        except ProtocolError as e:
            await self._abort(context, e)

    async def model_stream_infer(self, request_iterator, context):
        """Each request runs as it arrives; responses (or error messages, the
        stream staying open) go back as they complete."""
        out = asyncio.Queue()
        pending = set()
        R = self.pb["ModelStreamInferResponse"]

        async def one(msg):
            try:
                resp = R(infer_response=await self._infer(msg))
            except ProtocolError as e:
                resp = R(error_message=str(e))
            await out.put(resp)

        async def read():
            async for msg in request_iterator:
                t = asyncio.ensure_future(one(msg))
                pending.add(t)
                t.add_done_callback(pending.discard)
            while pending:
                await asyncio.gather(*list(pending), return_exceptions=True)
            await out.put(None)
        reader = asyncio.ensure_future(read())
        try:
            while True:
                resp = await out.get()
                if resp is None:
                    break
                yield resp
        finally:
            reader.cancel()
            for t in list(pending):
                t.cancel()


async def start_grpc(repository, address, *, app=None, max_message_bytes=16 << 20,
                     limits=None):
    """A started ``grpc.aio`` server for ``repository`` on ``address``
    ("host:port"; port 0: any, see ``server.port``), running in this loop.

    ``limits`` (a ``limits.ServerLimits``; default: its defaults) bound what
    a client may hold, as on the HTTP port: a connection must finish its
    HTTP/2 handshake within ``header_timeout``, an idle one is closed after
    ``keepalive_timeout``, metadata over ``max_header_bytes`` is refused, and
    calls past ``max_connections`` at once get ``RESOURCE_EXHAUSTED``."""
    import grpc
    from .limits import ServerLimits
    lim = (limits or ServerLimits()).check()
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", int(max_message_bytes)),
        ("grpc.max_send_message_length", int(max_message_bytes)),
        ("grpc.so_reuseport", 0),
        ("grpc.server_handshake_timeout_ms", int(lim.header_timeout * 1000)),
        ("grpc.max_connection_idle_ms", int(lim.keepalive_timeout * 1000)),
        ("grpc.max_metadata_size", int(lim.max_header_bytes))],
        maximum_concurrent_rpcs=int(lim.max_connections))
    service = GrpcService(repository, app)
    server.add_generic_rpc_handlers((service.handler(),))
    port = server.add_insecure_port(address)
    if not port:
        raise OSError("cannot listen for gRPC on %s" % address)
    await server.start()
    server.port = port
    server.service = service
    log.info("aiond.serve: gRPC on %s", address.rsplit(":", 1)[0] + ":%d" % port)
    return server

