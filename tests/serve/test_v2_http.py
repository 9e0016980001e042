"""The Open Inference Protocol over real HTTP on 127.0.0.1, spoken by the
unmodified ``tritonclient.http`` (sync and aio) and by raw requests for every
kind of bad input: each gets 400/404 with the protocol's {"error": ...}."""
import asyncio
import gzip
import json
import socket
import struct

import numpy as np
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
tc = pytest.importorskip("tritonclient.http")
tc_aio = pytest.importorskip("tritonclient.http.aio")
from tritonclient.utils import InferenceServerException  # noqa: E402

from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.protocol import DATATYPES  # noqa: E402
from aiond.serve.repository import ModelRepository, ServedModel  # noqa: E402

from .test_http import N_IN, N_OUT, TIMEOUT, ServerThread, make_net, poll  # noqa: E402

pytestmark = pytest.mark.timeout(180)

TYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
         "FP16", "FP32", "FP64", "BYTES"]


def types_model(*xs):
    """One output per input: numbers + 1, booleans negated, bytes upper-cased."""
    out = []
    for x in xs:
        if x.dtype == np.bool_:
            out.append(~x)
        elif x.dtype.kind == "O":
            out.append(np.vectorize(lambda b: b.upper(), otypes=[object])(x))
        else:
            out.append(x + np.ones((), x.dtype))
    return tuple(out)


def typed(t, shape, rs):
    if t == "BOOL":
        return rs.uniform(size=shape) > 0.5
    if t == "BYTES":
        a = np.empty(shape, dtype=object)
        a.ravel()[:] = [("w%d\u00e9" % i).encode() for i in range(a.size)]
        return a
    dt = DATATYPES[t].newbyteorder("=")
    if dt.kind == "f":
        return rs.uniform(-5, 5, shape).astype(dt)
    info = np.iinfo(dt)
    return rs.randint(max(info.min, -100), min(info.max - 1, 100), shape).astype(dt)


def expect(x):
    return types_model(x)[0]


@pytest.fixture(scope="module")
def server():
    net, ref = make_net()
    repo = ModelRepository()
    repo.add(ServedModel("types", types_model,
                         [("in_" + t, t, [3]) for t in TYPES],
                         [("out_" + t, t, [3]) for t in TYPES],
                         max_batch_size=8, numpy_model=True, platform="python"))
    repo.add(ServedModel("nobatch", lambda x: x * 2, [("x", "FP64", [2, -1])],
                         [("y", "FP64", [2, -1])], max_batch_size=0, numpy_model=True))
    app = create_app(net, sample_shape=(N_IN,), name="mlp", max_batch_size=16,
                     outputs=[("scores", "FP32", [N_OUT])], repository=repo, version="3")
    with ServerThread(app) as srv:
        srv.ref = ref
        srv.hostport = "127.0.0.1:%d" % srv.port
        yield srv


def test_health_metadata_and_config_with_the_sync_client(server):
    c = tc.InferenceServerClient(server.hostport, connection_timeout=TIMEOUT,
                                 network_timeout=TIMEOUT)
    assert c.is_server_live() and c.is_server_ready()
    meta = c.get_server_metadata()
    assert meta["name"] == "aiond" and "binary_tensor_data" in meta["extensions"]
    m = c.get_model_metadata("mlp")
    assert m["versions"] == ["3"] and m["platform"] == "mxnet"
    assert m["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, N_IN]}]
    assert m["outputs"] == [{"name": "scores", "datatype": "FP32", "shape": [-1, N_OUT]}]
    assert c.get_model_metadata("mlp", "3") == m
    assert c.is_model_ready("mlp") and c.is_model_ready("mlp", "3")
    assert not c.is_model_ready("mlp", "4") and not c.is_model_ready("nope")
    cfg = c.get_model_config("mlp")
    assert cfg["max_batch_size"] == 16 and cfg["input"][0]["dims"] == [N_IN]
    nb = c.get_model_metadata("nobatch")
    assert nb["inputs"][0]["shape"] == [2, -1]
    with pytest.raises(InferenceServerException, match="unknown model 'nope'"):
        c.get_model_metadata("nope")
    with pytest.raises(InferenceServerException, match="no version '9'"):
        c.get_model_metadata("mlp", "9")
    c.close()


@pytest.mark.parametrize("binary_in", [True, False])
@pytest.mark.parametrize("binary_out", [True, False])
def test_sync_client_infers_the_mlp(server, binary_in, binary_out):
    c = tc.InferenceServerClient(server.hostport, network_timeout=TIMEOUT)
    x = np.random.RandomState(1).uniform(-1, 1, (3, N_IN)).astype(np.float32)
    inp = tc.InferInput("data", list(x.shape), "FP32")
    inp.set_data_from_numpy(x, binary_data=binary_in)
    out = tc.InferRequestedOutput("scores", binary_data=binary_out)
    r = c.infer("mlp", [inp], outputs=[out], request_id="r7")
    y = r.as_numpy("scores")
    assert y.shape == (3, N_OUT) and y.dtype == np.float32
    np.testing.assert_allclose(y, server.ref(x), rtol=1e-4, atol=1e-5)
    resp = r.get_response()
    assert resp["model_name"] == "mlp" and resp["model_version"] == "3" and resp["id"] == "r7"
    # no outputs named: all of them, in binary (tritonclient asks binary_data_output)
    r = c.infer("mlp", [inp], model_version="3")
    np.testing.assert_allclose(r.as_numpy("scores"), server.ref(x), rtol=1e-4, atol=1e-5)
    c.close()


@pytest.mark.parametrize("binary", [True, False])
def test_every_datatype_round_trips(server, binary):
    c = tc.InferenceServerClient(server.hostport, network_timeout=TIMEOUT)
    rs = np.random.RandomState(2)
    xs, inputs = {}, []
    for t in TYPES:
        xs[t] = x = typed(t, (2, 3), rs)
        i = tc.InferInput("in_" + t, [2, 3], t)
        i.set_data_from_numpy(x, binary_data=binary)
        inputs.append(i)
    outs = [tc.InferRequestedOutput("out_" + t, binary_data=binary) for t in TYPES]
    r = c.infer("types", inputs, outputs=outs)
    for t in TYPES:
        y = r.as_numpy("out_" + t)
        want = expect(xs[t])
        assert y.shape == (2, 3), t
        if t == "BYTES":
            assert [bytes(v) if binary else v.encode() for v in y.ravel()] == list(want.ravel()), t
        else:
            assert y.dtype == want.dtype, t
            np.testing.assert_array_equal(y, want, err_msg=t)
    c.close()


def test_model_without_batch_axis(server):
    c = tc.InferenceServerClient(server.hostport, network_timeout=TIMEOUT)
    x = np.arange(10, dtype=np.float64).reshape(2, 5)
    i = tc.InferInput("x", [2, 5], "FP64")
    i.set_data_from_numpy(x)
    np.testing.assert_array_equal(c.infer("nobatch", [i]).as_numpy("y"), x * 2)
    # an output past 64 KiB goes out in parts (the tensor's own memory, not joined)
    x = np.random.RandomState(5).uniform(size=(2, 20000))
    i = tc.InferInput("x", [2, 20000], "FP64")
    i.set_data_from_numpy(x)
    np.testing.assert_array_equal(c.infer("nobatch", [i]).as_numpy("y"), x * 2)
    c.close()


def test_aio_client_concurrent_requests_are_batched(server):
    async def main():
        async with tc_aio.InferenceServerClient(server.hostport) as c:
            assert await c.is_server_live() and await c.is_model_ready("mlp")
            rs = np.random.RandomState(3)
            xs = [rs.uniform(-1, 1, (1, N_IN)).astype(np.float32) for _ in range(48)]

            async def one(k):
                i = tc_aio.InferInput("data", [1, N_IN], "FP32")
                i.set_data_from_numpy(xs[k], binary_data=k % 2 == 0)
                r = await c.infer("mlp", [i], outputs=[
                    tc_aio.InferRequestedOutput("scores", binary_data=k % 3 == 0)])
                return r.as_numpy("scores")
            before = server.app.state.batcher.statistics().batches
            ys = await asyncio.gather(*(one(k) for k in range(48)))
            for x, y in zip(xs, ys):
                np.testing.assert_allclose(y, server.ref(x), rtol=1e-4, atol=1e-5)
            st = await c.get_inference_statistics("mlp")
            return before, st
    before, st = asyncio.run(main())
    after = server.app.state.batcher.statistics()
    assert after.batches - before <= 48
    s = st["model_stats"][0]
    assert s["name"] == "mlp" and s["inference_stats"]["success"]["count"] >= 48


# --------------------------------------------------------------- bad input
def _hdr(obj, binary=b""):
    h = json.dumps(obj).encode()
    return h + binary, {"Inference-Header-Content-Length": str(len(h))} if binary else {}


def _mlp_req(**over):
    t = {"name": "data", "datatype": "FP32", "shape": [1, N_IN], "data": [0.5] * N_IN}
    t.update(over)
    return {"inputs": [t]}


_F = np.zeros(N_IN, "<f4").tobytes()
BAD = [
    # (path, body object or raw bytes, headers, status, error substring)
    ("/v2/models/nope/infer", _mlp_req(), None, 404, "unknown model 'nope'"),
    ("/v2/models/mlp/versions/2/infer", _mlp_req(), None, 404, "no version '2'"),
    ("/v2/models/mlp/infer", _mlp_req(name="x"), None, 400, "expects input 'data'"),
    ("/v2/models/mlp/infer", {"inputs": [_mlp_req()["inputs"][0],
                                         dict(_mlp_req()["inputs"][0], name="extra")]},
     None, 400, "has no input 'extra'"),
    ("/v2/models/mlp/infer", _mlp_req(datatype="FP64"), None, 400,
     "has datatype FP32, the request sent FP64"),
    ("/v2/models/mlp/infer", _mlp_req(shape=[1, 783], data=[0.5] * 783), None, 400,
     "has shape [-1,784], the request sent [1,783]"),
    ("/v2/models/mlp/infer", _mlp_req(shape=[N_IN], data=[0.5] * N_IN), None, 400,
     "has shape [-1,784]"),
    ("/v2/models/mlp/infer", _mlp_req(shape=[17, N_IN], data=[0.5] * N_IN * 17), None, 400,
     "takes 1 to 16"),
    ("/v2/models/mlp/infer", _mlp_req(data=[0.5] * 10), None, 400, "needs 784 elements"),
    ("/v2/models/mlp/infer", _mlp_req(data=[True] * N_IN), None, 400, "true/false"),
    ("/v2/models/mlp/infer", _mlp_req(data=["a"] * N_IN), None, 400, "strings"),
    ("/v2/models/mlp/infer", _mlp_req(data=[1e39] * N_IN), None, 400, "outside FP32"),
    ("/v2/models/mlp/infer", _mlp_req(data="x"), None, 400, "must be a JSON array"),
    ("/v2/models/mlp/infer", _mlp_req(datatype="BF16"), None, 400, "BF16 is not supported"),
    ("/v2/models/mlp/infer", _mlp_req(datatype="FP8"), None, 400, "unknown datatype"),
    ("/v2/models/mlp/infer", _mlp_req(shape=[1, -784]), None, 400, "integers >= 0"),
    ("/v2/models/mlp/infer", _mlp_req(shape="1,784"), None, 400, "'shape' must be a list"),
    ("/v2/models/mlp/infer", dict(_mlp_req(), outputs=[{"name": "nope"}]), None, 400,
     "has no output 'nope'"),
    ("/v2/models/mlp/infer", dict(_mlp_req(), parameters={"priority": "high"}), None, 400,
     "'priority'"),
    ("/v2/models/mlp/infer", dict(_mlp_req(), parameters={"timeout": -1}), None, 400,
     "'timeout'"),
    ("/v2/models/mlp/infer", {"inputs": []}, None, 400, "non-empty 'inputs'"),
    ("/v2/models/mlp/infer", [1, 2], None, 400, "must be a JSON object"),
    ("/v2/models/mlp/infer", b'{"inputs": [', None, 400, "malformed JSON"),
    ("/v2/models/mlp/infer", b'\xff\xfe', None, 400, "malformed JSON"),
    ("/v2/models/mlp/infer", _mlp_req(parameters={"shared_memory_region": "r"}), None, 400,
     "shared memory"),
    ("/v2/models/types/infer", {"inputs": [{"name": "in_INT8", "datatype": "INT8",
                                            "shape": [1, 3], "data": [1, 2, 300]}]},
     None, 400, "outside INT8's range"),
    ("/v2/models/types/infer", {"inputs": [{"name": "in_INT32", "datatype": "INT32",
                                            "shape": [1, 3], "data": [1, 2.5, 3]}]},
     None, 400, "fractions"),
    ("/v2/models/types/infer", {"inputs": [{"name": "in_BOOL", "datatype": "BOOL",
                                            "shape": [1, 3], "data": [1, 0, 1]}]},
     None, 400, "true or false"),
    ("/v2/models/types/infer", {"inputs": [{"name": "in_BYTES", "datatype": "BYTES",
                                            "shape": [1, 3], "data": [1, 2, 3]}]},
     None, 400, "must be strings"),
    ("/v2/models/types/infer", {"inputs": [{"name": "in_UINT8", "datatype": "UINT8",
                                            "shape": [1, 3], "data": [1, -1, 3]}]},
     None, 400, "outside UINT8's range"),
]


def _binary_cases():
    ok = {"name": "data", "datatype": "FP32", "shape": [1, N_IN],
          "parameters": {"binary_data_size": 4 * N_IN}}
    h = json.dumps({"inputs": [ok]}).encode()
    hl = {"Inference-Header-Content-Length": str(len(h))}
    short = dict(ok, parameters={"binary_data_size": 4 * N_IN - 4})
    hs = json.dumps({"inputs": [short]}).encode()
    by = {"name": "in_BYTES", "datatype": "BYTES", "shape": [1, 3],
          "parameters": {"binary_data_size": 9}}
    hb = json.dumps({"inputs": [by]}).encode()
    bb = struct.pack("<I", 1) + b"a" + struct.pack("<I", 9) + b"abc"
    return [
        ("/v2/models/mlp/infer", h + _F[:-8], hl, 400, "runs past the end of the body"),
        ("/v2/models/mlp/infer", h + _F + b"xx", hl, 400, "add up to 3136"),
        ("/v2/models/mlp/infer", hs + _F[:-4], {"Inference-Header-Content-Length":
                                                 str(len(hs))}, 400, "needs 3136 bytes, got 3132"),
        ("/v2/models/mlp/infer", h + _F, {"Inference-Header-Content-Length": "abc"}, 400,
         "not a byte count"),
        ("/v2/models/mlp/infer", h + _F, {"Inference-Header-Content-Length": "99999"}, 400,
         "the body has only"),
        ("/v2/models/mlp/infer", h[:-3], {"Inference-Header-Content-Length": str(len(h))},
         400, "the body has only"),
        ("/v2/models/mlp/infer", h, None, 400, "no binary data"),
        ("/v2/models/types/infer", hb + bb, {"Inference-Header-Content-Length": str(len(hb))},
         400, "runs past the end of its data"),
        ("/v2/models/mlp/infer", gzip.compress(json.dumps(_mlp_req()).encode())[:-9],
         {"Content-Encoding": "gzip"}, 400, "truncated"),
        ("/v2/models/mlp/infer", b"not gzip", {"Content-Encoding": "gzip"}, 400,
         "does not decompress"),
        ("/v2/models/mlp/infer", b"{}", {"Content-Encoding": "br"}, 400, "not supported"),
    ]


@pytest.mark.parametrize("path,body,headers,status,msg", BAD + _binary_cases())
def test_bad_requests_get_the_protocol_error(server, path, body, headers, status, msg):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as c:
        r = c.post(path, content=body, headers=headers or {})
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    obj = r.json()
    assert set(obj) == {"error"} and msg in obj["error"], obj


def test_bad_requests_through_tritonclient_raise_its_exception(server):
    c = tc.InferenceServerClient(server.hostport, network_timeout=TIMEOUT)
    i = tc.InferInput("data", [1, 5], "FP32")
    i.set_data_from_numpy(np.zeros((1, 5), np.float32))
    with pytest.raises(InferenceServerException, match=r"has shape \[-1,784\]"):
        c.infer("mlp", [i])
    with pytest.raises(InferenceServerException, match="unknown model"):
        c.infer("nope", [i])
    c.close()


def test_gzip_and_deflate_bodies(server):
    c = tc.InferenceServerClient(server.hostport, network_timeout=TIMEOUT)
    x = np.random.RandomState(4).uniform(-1, 1, (2, N_IN)).astype(np.float32)
    i = tc.InferInput("data", [2, N_IN], "FP32")
    i.set_data_from_numpy(x)
    for alg in ("gzip", "deflate"):
        r = c.infer("mlp", [i], request_compression_algorithm=alg)
        np.testing.assert_allclose(r.as_numpy("scores"), server.ref(x), rtol=1e-4, atol=1e-5)
    c.close()


def test_a_truncated_body_then_close_does_not_hang_the_server(server):
    h = json.dumps({"inputs": [{"name": "data", "datatype": "FP32", "shape": [1, N_IN],
                                "parameters": {"binary_data_size": 4 * N_IN}}]}).encode()
    s = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
              b"Inference-Header-Content-Length: %d\r\n\r\n" % (len(h) + 4 * N_IN, len(h))
              + h + _F[:100])
    s.shutdown(socket.SHUT_WR)
    s.settimeout(TIMEOUT)
    data = s.recv(65536)        # a 4xx, or the connection closed: never a hang
    s.close()
    assert data == b"" or data.startswith(b"HTTP/1.1 4"), data[:80]
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as c:   # still serving
        assert c.get("/v2/health/ready").status_code == 200


def test_metrics_cover_every_model(server):
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as c:
        text = c.get("/metrics").text
    for m in ("mlp", "types", "nobatch"):
        assert 'aiond_serve_requests_total{model="%s"' % m in text
    assert text.count("# TYPE aiond_serve_queue_seconds summary") == 1
    assert 'aiond_serve_compute_seconds{model="mlp",version="3",quantile="0.99"}' in text
    assert 'aiond_serve_queue_seconds_count{model="mlp",version="3"}' in text


# ------------------------------------------------ overload, cancel, priority
class Gate:
    """A model whose batches wait for ``open`` (set from the test thread)."""

    def __init__(self):
        self.event = None
        self.seen = []

    async def __call__(self, x):
        if self.event is None:
            self.event = asyncio.Event()
        await self.event.wait()
        self.seen.extend(x[:, 0].tolist())
        return x * 2


def _one(v, priority=0):
    req = {"inputs": [{"name": "data", "datatype": "FP32", "shape": [1, 2], "data": [v, v]}]}
    if priority:
        req["parameters"] = {"priority": priority}
    return json.dumps(req).encode()


def test_overload_cancel_and_priority():
    gate = Gate()
    app = create_app(gate, sample_shape=(2,), name="g", max_batch_size=1, max_in_flight=1,
                     max_queue=3, numpy_model=True)
    with ServerThread(app) as srv:
        b = srv.batcher

        async def main():
            async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
                first = asyncio.ensure_future(c.post("/v2/models/g/infer", content=_one(1)))
                await poll(lambda: b.statistics().in_flight == 1, "the first batch")
                normal = asyncio.ensure_future(c.post("/v2/models/g/infer", content=_one(2)))
                doomed = asyncio.ensure_future(c.post("/v2/models/g/infer", content=_one(3)))
                await poll(lambda: b.statistics().queue_depth == 2, "two queued")
                high = asyncio.ensure_future(c.post("/v2/models/g/infer",
                                                    content=_one(4, priority=1)))
                await poll(lambda: b.statistics().queue_depth == 3, "three queued")
                r = await c.post("/v2/models/g/infer", content=_one(5))     # queue full
                assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
                assert "queue" in r.json()["error"]
                doomed.cancel()         # the client goes away while queued
                await poll(lambda: b.statistics().cancelled == 1, "the cancel")
                srv.loop.call_soon_threadsafe(gate.event.set)
                rs = [await f for f in (first, high, normal)]
                return [x.json()["outputs"][0]["data"] for x in rs]
        outs = asyncio.run(main())
        assert outs == [[2.0, 2.0], [8.0, 8.0], [4.0, 4.0]]
        assert gate.seen == [1.0, 4.0, 2.0]      # high before normal; 3 never ran


@pytest.mark.slow
def test_overload_keeps_memory_flat_and_timeouts_give_504():
    from .test_http import Gated, rss_mb
    net, ref = make_net()
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), name="mlp", max_batch_size=4,
                     max_in_flight=1, max_queue=8)
    x = np.random.RandomState(8).uniform(-1, 1, (1, N_IN)).astype(np.float32)
    h = json.dumps({"inputs": [{"name": "data", "datatype": "FP32", "shape": [1, N_IN],
                                "parameters": {"binary_data_size": x.nbytes}}]}).encode()
    body = h + x.tobytes()
    headers = {"Inference-Header-Content-Length": str(len(h))}

    async def main(srv):
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT, limits=limits) as c:
            def post():
                return asyncio.ensure_future(c.post("/v2/models/mlp/infer", content=body,
                                                    headers=headers))
            # one request held in the model first: sent together, a loaded
            # machine may let the first batch take several of them
            blockers = [post()]
            await poll(lambda: srv.batcher.statistics().in_flight == 1 and model.calls == 1,
                       "the first batch in the model")
            blockers += [post() for _ in range(8)]
            await poll(lambda: srv.batcher.statistics().queue_depth == 8, "a full queue")

            async def wave(n):
                rs = await asyncio.gather(*(c.post("/v2/models/mlp/infer", content=body,
                                                   headers=headers) for _ in range(n)))
                assert all(r.status_code == 503 and "retry-after" in r.headers for r in rs)
            await wave(64)
            before = rss_mb()
            for _ in range(4):
                await wave(64)
            growth = rss_mb() - before
            assert growth < 20, "RSS grew by %.1f MB under overload" % growth
            # a request whose 'timeout' parameter passes while queued: 504, never run
            late = json.loads(h)
            late["parameters"] = {"timeout": 1000}      # microseconds
            hl = json.dumps(late).encode()
            model.open(srv)
            for r in await asyncio.gather(*blockers):
                assert r.status_code == 200
            model.closed = True
            calls = model.calls
            first = asyncio.ensure_future(c.post("/v2/models/mlp/infer", content=body,
                                                 headers=headers))
            await poll(lambda: model.calls == calls + 1, "a gated batch")
            r = await c.post("/v2/models/mlp/infer", content=hl + x.tobytes(),
                             headers={"Inference-Header-Content-Length": str(len(hl))})
            assert r.status_code == 504 and "deadline" in r.json()["error"]
            model.open(srv)
            assert (await first).status_code == 200
    with ServerThread(app) as srv:
        asyncio.run(main(srv))
        st = srv.batcher.statistics()
    assert st.rejected == 5 * 64 and st.expired == 1


def test_a_large_json_request_is_parsed_off_the_loop(server):
    x = np.random.RandomState(9).uniform(-1, 1, (16, N_IN)).astype(np.float32) * 1e-3
    body = json.dumps({"inputs": [{"name": "data", "datatype": "FP32", "shape": [16, N_IN],
                                   "data": x.tolist()}]}).encode()
    assert len(body) > 256 << 10
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as c:
        r = c.post("/v2/models/mlp/infer", content=body)
        assert r.status_code == 200, r.text
        y = np.asarray(r.json()["outputs"][0]["data"], np.float32).reshape(16, N_OUT)
        np.testing.assert_allclose(y, server.ref(x), rtol=1e-4, atol=1e-5)
        r = c.post("/v2/models/mlp/infer", content=body[:-2])
        assert r.status_code == 400 and "malformed JSON" in r.json()["error"]


def test_body_limits_and_a_body_that_never_comes():
    def double(x):
        return x * 2
    app = create_app(double, sample_shape=(2,), numpy_model=True, name="d",
                     max_body_bytes=1000, body_timeout=0.3)
    with ServerThread(app) as srv:
        with httpx.Client(base_url=srv.url, timeout=TIMEOUT) as c:
            r = c.post("/v2/models/d/infer", content=b"{" + b" " * 2000 + b"}")
            assert r.status_code == 413 and "limit of 1000" in r.json()["error"]
            big = gzip.compress(json.dumps(_mlp_req()).encode())     # inflates past 1000
            r = c.post("/v2/models/d/infer", content=big, headers={"Content-Encoding": "gzip"})
            assert r.status_code == 413 and "decompressed body" in r.json()["error"]
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT)
        s.sendall(b"POST /v2/models/d/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
        data = b""                      # no more body: 408 after body_timeout, not a hang
        while b"\r\n\r\n" not in data or not data.endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        assert data.startswith(b"HTTP/1.1 408"), data[:80]
        assert b"did not arrive within 0.3 s" in data
