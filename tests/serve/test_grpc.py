"""The inference protocol over gRPC (grpc.aio in the same loop as the
Batchers and the HTTP app), spoken by the unmodified tritonclient.grpc;
its service_pb2 messages are used here only to send malformed requests."""
import asyncio

import numpy as np
import pytest

pytest.importorskip("uvicorn")
grpc = pytest.importorskip("grpc")
tg = pytest.importorskip("tritonclient.grpc")
tg_aio = pytest.importorskip("tritonclient.grpc.aio")
from tritonclient.grpc import service_pb2, service_pb2_grpc  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.repository import ModelRepository, ServedModel  # noqa: E402

from .test_http import N_IN, N_OUT, TIMEOUT, ServerThread, make_net, poll  # noqa: E402
from .test_v2_http import TYPES, expect, typed, types_model  # noqa: E402

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def server():
    net, ref = make_net()
    repo = ModelRepository()
    repo.add(ServedModel("types", types_model, [("in_" + t, t, [3]) for t in TYPES],
                         [("out_" + t, t, [3]) for t in TYPES], max_batch_size=8,
                         numpy_model=True, platform="python"))
    app = create_app(net, sample_shape=(N_IN,), name="mlp", max_batch_size=16,
                     outputs=[("scores", "FP32", [N_OUT])], repository=repo,
                     grpc_address="127.0.0.1:0")
    with ServerThread(app) as srv:
        srv.ref = ref
        srv.grpc_url = "127.0.0.1:%d" % app.state.serve.grpc.port
        yield srv


def _input(name, x, dt="FP32"):
    i = tg.InferInput(name, list(x.shape), dt)
    i.set_data_from_numpy(x)
    return i


def test_sync_client_health_metadata_and_infer(server):
    c = tg.InferenceServerClient(server.grpc_url)
    assert c.is_server_live() and c.is_server_ready()
    assert c.is_model_ready("mlp") and not c.is_model_ready("nope")
    meta = c.get_server_metadata()
    assert meta.name == "aiond" and "binary_tensor_data" in meta.extensions
    m = c.get_model_metadata("mlp")
    assert m.inputs[0].name == "data" and list(m.inputs[0].shape) == [-1, N_IN]
    assert m.outputs[0].name == "scores" and m.outputs[0].datatype == "FP32"
    x = np.random.RandomState(0).uniform(-1, 1, (4, N_IN)).astype(np.float32)
    r = c.infer("mlp", [_input("data", x)], request_id="g1")
    np.testing.assert_allclose(r.as_numpy("scores"), server.ref(x), rtol=1e-4, atol=1e-5)
    assert r.get_response().id == "g1" and r.get_response().model_name == "mlp"
    r = c.infer("mlp", [_input("data", x)], outputs=[tg.InferRequestedOutput("scores")])
    np.testing.assert_allclose(r.as_numpy("scores"), server.ref(x), rtol=1e-4, atol=1e-5)
    cfg = c.get_model_config("mlp").config
    assert cfg.name == "mlp" and cfg.max_batch_size == 16 and cfg.platform == "mxnet"
    assert cfg.input[0].name == "data" and list(cfg.input[0].dims) == [N_IN]
    assert cfg.input[0].data_type == 11 and cfg.output[0].name == "scores"   # TYPE_FP32
    assert cfg.dynamic_batching.priority_levels == 2
    types = c.get_model_config("types", as_json=True)["config"]
    assert [i["data_type"] for i in types["input"]][-1] == "TYPE_STRING"
    st = c.get_inference_statistics("mlp", as_json=True)
    assert st["model_stats"][0]["name"] == "mlp"
    with pytest.raises(InferenceServerException, match="unknown model") as e:
        c.infer("nope", [_input("data", x)])
    assert e.value.status() == "StatusCode.NOT_FOUND"
    with pytest.raises(InferenceServerException, match="has shape") as e:
        c.infer("mlp", [_input("data", x[:, :5])])
    assert e.value.status() == "StatusCode.INVALID_ARGUMENT"
    c.close()


def test_every_datatype_round_trips_over_grpc(server):
    c = tg.InferenceServerClient(server.grpc_url)
    rs = np.random.RandomState(6)
    xs = {t: typed(t, (2, 3), rs) for t in TYPES}
    r = c.infer("types", [_input("in_" + t, xs[t], t) for t in TYPES])
    for t in TYPES:
        y, want = r.as_numpy("out_" + t), expect(xs[t])
        if t == "BYTES":
            assert list(y.ravel()) == list(want.ravel())
        else:
            assert y.dtype == want.dtype
            np.testing.assert_array_equal(y, want, err_msg=t)
    c.close()


def test_typed_contents_instead_of_raw(server):
    ch = grpc.insecure_channel(server.grpc_url)
    stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
    req = service_pb2.ModelInferRequest(model_name="types")
    vals = {"INT32": [1, 2, 3], "FP64": [0.5, 1.5, 2.5], "BOOL": [True, False, True],
            "BYTES": [b"a", b"bc", b""], "UINT64": [1, 2, 2 ** 63]}
    for t, v in vals.items():
        i = req.inputs.add(name="in_" + t, datatype=t, shape=[1, 3])
        getattr(i.contents, {"INT32": "int_contents", "FP64": "fp64_contents",
                             "BOOL": "bool_contents", "BYTES": "bytes_contents",
                             "UINT64": "uint64_contents"}[t]).extend(v)
    req.inputs.add(name="in_INT8", datatype="INT8", shape=[1, 3]).contents.int_contents.extend(
        [1, 2, 300])
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(req, timeout=TIMEOUT)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "outside INT8's range" in e.value.details()
    del req.inputs[-1]
    with pytest.raises(grpc.RpcError) as e:     # the other inputs are missing
        stub.ModelInfer(req, timeout=TIMEOUT)
    assert "expects input" in e.value.details()
    ch.close()


BAD = [
    # (mutation of a good request, code, message)
    (lambda r: r.raw_input_contents.__setitem__(0, b"\0" * 12), "INVALID_ARGUMENT",
     "needs 3136 bytes, got 12"),
    (lambda r: r.raw_input_contents.append(b"xx"), "INVALID_ARGUMENT",
     "1 inputs but 2 raw_input_contents"),
    (lambda r: setattr(r.inputs[0], "datatype", "FP64"), "INVALID_ARGUMENT",
     "needs 6272 bytes"),
    (lambda r: setattr(r.inputs[0], "datatype", "BF16"), "INVALID_ARGUMENT", "BF16"),
    (lambda r: setattr(r.inputs[0], "name", "x"), "INVALID_ARGUMENT", "expects input 'data'"),
    (lambda r: r.inputs[0].shape.__setitem__(0, -1), "INVALID_ARGUMENT", ">= 0"),
    (lambda r: setattr(r, "model_version", "7"), "NOT_FOUND", "no version '7'"),
    (lambda r: r.outputs.add(name="nope"), "INVALID_ARGUMENT", "has no output 'nope'"),
    (lambda r: r.parameters["priority"].__setattr__("string_param", "x"), "INVALID_ARGUMENT",
     "'priority'"),
    (lambda r: r.inputs[0].contents.fp32_contents.extend([1.0]), "INVALID_ARGUMENT",
     "both contents and raw_input_contents"),
]


@pytest.mark.parametrize("mutate,code,msg", BAD)
def test_bad_requests_get_status_codes(server, mutate, code, msg):
    ch = grpc.insecure_channel(server.grpc_url)
    stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
    req = service_pb2.ModelInferRequest(model_name="mlp")
    req.inputs.add(name="data", datatype="FP32", shape=[1, N_IN])
    req.raw_input_contents.append(np.zeros(N_IN, "<f4").tobytes())
    mutate(req)
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(req, timeout=TIMEOUT)
    assert e.value.code().name == code and msg in e.value.details(), e.value.details()
    ch.close()


def test_aio_client_and_streaming(server):
    async def main():
        c = tg_aio.InferenceServerClient(server.grpc_url)
        rs = np.random.RandomState(7)
        xs = [rs.uniform(-1, 1, (1, N_IN)).astype(np.float32) for _ in range(32)]

        async def one(x):
            i = tg_aio.InferInput("data", [1, N_IN], "FP32")
            i.set_data_from_numpy(x)
            return (await c.infer("mlp", [i])).as_numpy("scores")
        ys = await asyncio.gather(*(one(x) for x in xs))
        for x, y in zip(xs, ys):
            np.testing.assert_allclose(y, server.ref(x), rtol=1e-4, atol=1e-5)

        async def requests():
            for k, x in enumerate(xs[:8]):
                i = tg_aio.InferInput("data", [1, N_IN] if k != 3 else [1, 5], "FP32")
                i.set_data_from_numpy(x if k != 3 else x[:, :5])
                yield {"model_name": "mlp", "inputs": [i], "request_id": str(k)}
        got = {}
        async for result, error in c.stream_infer(requests()):
            if error is not None:
                got["error"] = str(error)
            else:
                got[result.get_response().id] = result.as_numpy("scores")
            if len(got) == 8:
                break
        await c.close()
        return got
    got = asyncio.run(main())
    assert "has shape" in got.pop("error")
    assert sorted(got) == ["0", "1", "2", "4", "5", "6", "7"]


def test_repository_over_grpc(server):
    c = tg.InferenceServerClient(server.grpc_url)
    idx = c.get_model_repository_index(as_json=True)
    assert {m["name"] for m in idx["models"]} == {"mlp", "types"}
    with pytest.raises(InferenceServerException, match="no model 'x'"):
        c.load_model("x")
    c.close()


# ------------------------------------------------ overload, cancel, deadline
class Gate:
    def __init__(self):
        self.event = None
        self.seen = []

    async def __call__(self, x):
        if self.event is None:
            self.event = asyncio.Event()
        await self.event.wait()
        self.seen.extend(x[:, 0].tolist())
        return x * 2


def test_overload_cancel_and_deadline_over_grpc():
    gate = Gate()
    app = create_app(gate, sample_shape=(2,), name="g", max_batch_size=1, max_in_flight=1,
                     max_queue=2, numpy_model=True, grpc_address="127.0.0.1:0")
    with ServerThread(app) as srv:
        url = "127.0.0.1:%d" % app.state.serve.grpc.port
        b = srv.batcher

        def x(v):
            return _input("data", np.full((1, 2), float(v), np.float32))

        async def main():
            c = tg_aio.InferenceServerClient(url)
            first = asyncio.ensure_future(c.infer("g", [x(1)]))
            await poll(lambda: b.statistics().in_flight == 1, "the first batch")
            keep = asyncio.ensure_future(c.infer("g", [x(2)]))
            doomed = asyncio.ensure_future(c.infer("g", [x(3)]))
            await poll(lambda: b.statistics().queue_depth == 2, "two queued")
            with pytest.raises(InferenceServerException) as e:
                await c.infer("g", [x(4)])
            assert e.value.status() == "StatusCode.RESOURCE_EXHAUSTED"
            assert "queue" in e.value.message()
            doomed.cancel()
            await poll(lambda: b.statistics().cancelled == 1, "the cancel")
            with pytest.raises(InferenceServerException) as e:    # its deadline passes queued
                await c.infer("g", [x(5)], client_timeout=0.05)
            assert e.value.status() == "StatusCode.DEADLINE_EXCEEDED"
            await poll(lambda: b.statistics().queue_depth == 1, "the expired call withdrawn")
            srv.loop.call_soon_threadsafe(gate.event.set)
            r1, r2 = await first, await keep
            await c.close()
            return r1.as_numpy("output0"), r2.as_numpy("output0")
        y1, y2 = asyncio.run(main())
        assert y1.tolist() == [[2.0, 2.0]] and y2.tolist() == [[4.0, 4.0]]
        assert gate.seen == [1.0, 2.0]      # neither the cancelled nor the expired call ran


@pytest.mark.slow
def test_grpc_overload_keeps_memory_flat():
    from .test_http import rss_mb
    gate = Gate()
    app = create_app(gate, sample_shape=(2,), name="g", max_batch_size=1, max_in_flight=1,
                     max_queue=4, numpy_model=True, grpc_address="127.0.0.1:0")
    with ServerThread(app) as srv:
        url = "127.0.0.1:%d" % app.state.serve.grpc.port
        b = srv.batcher

        async def main():
            c = tg_aio.InferenceServerClient(url)
            x = _input("data", np.ones((1, 2), np.float32))
            held = [asyncio.ensure_future(c.infer("g", [x])) for _ in range(5)]
            await poll(lambda: b.statistics().queue_depth == 4, "a full queue")

            async def wave(n):
                rs = await asyncio.gather(*(c.infer("g", [x]) for _ in range(n)),
                                          return_exceptions=True)
                assert all(isinstance(r, InferenceServerException) and
                           r.status() == "StatusCode.RESOURCE_EXHAUSTED" for r in rs), rs[:2]
            await wave(64)

            def raw_call():     # the status and the Retry-After hint, as a plain stub sees them
                ch = grpc.insecure_channel(url)
                req = service_pb2.ModelInferRequest(model_name="g")
                req.inputs.add(name="data", datatype="FP32", shape=[1, 2])
                req.raw_input_contents.append(np.ones(2, "<f4").tobytes())
                try:
                    service_pb2_grpc.GRPCInferenceServiceStub(ch).ModelInfer(req,
                                                                             timeout=TIMEOUT)
                except grpc.RpcError as e:
                    return e.code(), dict(e.trailing_metadata() or ())
                finally:
                    ch.close()
            code, md = await asyncio.get_running_loop().run_in_executor(None, raw_call)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and int(md["retry-after"]) >= 1
            before = rss_mb()
            for _ in range(4):
                await wave(64)
            growth = rss_mb() - before
            assert growth < 20, "RSS grew by %.1f MB under overload" % growth
            srv.loop.call_soon_threadsafe(gate.event.set)
            for r in await asyncio.gather(*held):
                assert r.as_numpy("output0").tolist() == [[2.0, 2.0]]
            await c.close()
        asyncio.run(main())
        assert b.statistics().rejected == 5 * 64 + 1
