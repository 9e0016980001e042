"""The HTTP app over real HTTP on 127.0.0.1: uvicorn in a thread on a free
port, httpx.AsyncClient (or a raw socket) as the client. Orderings are
forced with a gated model and bounded polls of the batcher's statistics."""
import asyncio
import json
import re
import socket
import threading
import time

import numpy as np
import pytest

import aiond as mx

httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")
from aiond.serve.http import create_app  # noqa: E402

pytestmark = pytest.mark.timeout(120)

TIMEOUT = 60.0   # generous: a loaded 2-core machine stalls requests for seconds
N_IN, N_HID, N_OUT = 784, 32, 10


# ------------------------------------------------------------------ helpers
class ServerThread:
    """uvicorn serving ``app`` on a free port, on its own loop in a thread."""

    def __init__(self, app):
        self.app = app
        # IPPROTO_TCP so that asyncio sets TCP_NODELAY on the connections
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                                    access_log=False))
        self.loop = None
        self.error = None
        self.thread = threading.Thread(target=self._run, name="test-uvicorn", daemon=True)

    def _run(self):
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self.loop = loop
        try:
            loop.run_until_complete(self.server.serve(sockets=[self.sock]))
        except BaseException as e:  # noqa: BLE001 - reported by __exit__
            self.error = e
        finally:
            loop.close()

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + TIMEOUT
        pause = threading.Event()
        while not self.server.started:
            assert self.thread.is_alive(), "uvicorn exited at startup: %r" % (self.error,)
            assert time.monotonic() < deadline, "uvicorn did not start"
            pause.wait(0.01)
        return self

    def stop(self):
        self.server.should_exit = True
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "uvicorn did not stop"

    def __exit__(self, *exc):
        self.stop()
        self.sock.close()

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the server's loop."""
        self.loop.call_soon_threadsafe(fn, *args)

    @property
    def batcher(self):
        return self.app.state.batcher


class Gated:
    """Wraps a model; while closed, each call waits until ``open()``."""

    def __init__(self, net, closed=False):
        self.net = net
        self.closed = closed
        self.calls = 0
        self._event = None

    async def __call__(self, x):
        self.calls += 1
        if self.closed:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        return self.net(x)

    def _open(self):
        self.closed = False
        if self._event is not None:
            self._event.set()
            self._event = None

    def open(self, srv):
        srv.call(self._open)


def make_net():
    from aiond.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(N_HID, in_units=N_IN, activation="relu"), nn.Dense(N_OUT, in_units=N_HID))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    ws = [(l.weight.data().asnumpy(), l.bias.data().asnumpy()) for l in net]

    def ref(x):
        (w1, b1), (w2, b2) = ws
        return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    return net, ref


@pytest.fixture(scope="module")
def mlp():
    return make_net()


async def poll(cond, what):
    """Bounded poll of a condition that another thread makes true."""
    deadline = time.monotonic() + TIMEOUT
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        await asyncio.sleep(0.005)


def raw_headers(shape, dtype="float32"):
    return {"content-type": "application/octet-stream",
            "x-tensor-shape": ",".join(map(str, shape)), "x-tensor-dtype": dtype}


def decode(resp):
    if resp.headers.get("content-type", "").startswith("application/octet-stream"):
        shape = tuple(int(d) for d in resp.headers["x-tensor-shape"].split(",") if d)
        return np.frombuffer(resp.content, dtype="<" + np.dtype(
            resp.headers["x-tensor-dtype"]).str[1:]).reshape(shape)
    body = resp.json()
    return np.asarray(body["data"], dtype=body["dtype"])


class Ticker:
    """Measures how late the server's loop runs a 1 ms timer."""

    def __init__(self, srv):
        self.srv = srv
        self.lags = []
        self.stop = False
        self.fut = None

    async def _run(self):
        while not self.stop:
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            self.lags.append(time.perf_counter() - t - 0.001)

    def __enter__(self):
        self.fut = asyncio.run_coroutine_threadsafe(self._run(), self.srv.loop)
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.fut.result(TIMEOUT)

    def p99(self):
        s = sorted(self.lags)
        return s[int(0.99 * (len(s) - 1))] if s else 0.0


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


# -------------------------------------------------------------------- tests
def test_200_concurrent_requests_get_right_answers_in_batches(mlp):
    net, ref = mlp
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), max_batch_size=32, max_in_flight=2)
    rs = np.random.RandomState(0)
    xs = [rs.uniform(-1, 1, (1 + i % 3, N_IN)).astype(np.float32) for i in range(200)]

    async def one(client, i):
        x = xs[i]
        if i % 3 == 0:          # one sample as a JSON array
            r = await client.post("/predict", json=x[0].tolist())
            want = ref(x)[0]
        elif i % 3 == 1:        # a batch in {"data": ...}
            r = await client.post("/predict", json={"data": x.tolist()})
            want = ref(x)
        else:                   # raw little-endian tensor
            r = await client.post("/predict", content=x.astype("<f4").tobytes(),
                                  headers=raw_headers(x.shape))
            want = ref(x)
        assert r.status_code == 200, r.text
        got = decode(r)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    async def main(srv):
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(base_url=srv.url, limits=limits, timeout=TIMEOUT) as c:
            tasks = [asyncio.ensure_future(one(c, i)) for i in range(200)]
            await poll(lambda: srv.batcher.statistics().queue_depth >= 20,
                       "requests to queue behind the gated batch")
            model.open(srv)
            await asyncio.gather(*tasks)

    with ServerThread(app) as srv, Ticker(srv) as ticker:
        asyncio.run(main(srv))
        st = srv.batcher.statistics()
    assert st.completed == 200 and st.failed == 0
    assert max(st.batch_size_histogram) > 1 and st.batches < 200
    assert ticker.p99() < 0.1, "event loop lag p99 %.1f ms" % (1e3 * ticker.p99())


def test_overload_gives_503_with_retry_after_and_memory_stays_flat(mlp):
    net, ref = mlp
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), max_batch_size=4, max_queue=8,
                     max_in_flight=1)
    x = np.random.RandomState(1).uniform(-1, 1, (1, N_IN)).astype(np.float32)
    body = x.astype("<f4").tobytes()
    hdr = raw_headers(x.shape)

    async def main(srv):
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(base_url=srv.url, limits=limits, timeout=TIMEOUT) as c:
            first = asyncio.ensure_future(c.post("/predict", content=body, headers=hdr))
            await poll(lambda: model.calls == 1, "the first (gated) batch")
            rest = [asyncio.ensure_future(c.post("/predict", content=body, headers=hdr))
                    for _ in range(39)]
            await poll(lambda: sum(t.done() for t in rest) >= 31, "the rejections")
            refused = [t for t in rest if t.done()]
            assert len(refused) == 31
            for t in refused:
                r = t.result()
                assert r.status_code == 503, r.text
                assert int(r.headers["retry-after"]) >= 1
                assert "queue" in r.json()["error"]
            model.open(srv)
            ok = await asyncio.gather(first, *(t for t in rest if t not in refused))
            assert len(ok) == 9
            for r in ok:
                assert r.status_code == 200, r.text
                np.testing.assert_allclose(decode(r), ref(x), rtol=1e-4, atol=1e-4)

            # a sustained overload: every request refused, the server's memory flat
            srv.call(setattr, model, "closed", True)
            calls = model.calls

            def post():
                return asyncio.ensure_future(c.post("/predict", content=body, headers=hdr))
            # one request held in the model before the rest: sent together, a
            # loaded machine may let that batch take several of them
            blockers = [post()]
            await poll(lambda: model.calls == calls + 1, "the first batch in the model")
            blockers += [post() for _ in range(8)]
            await poll(lambda: srv.batcher.statistics().queue_depth == 8, "a full queue")

            async def wave(n):
                rs = await asyncio.gather(*(c.post("/predict", content=body, headers=hdr)
                                            for _ in range(n)))
                assert all(r.status_code == 503 for r in rs)
            await wave(100)                  # warm up the allocator and the client
            before = rss_mb()
            for _ in range(4):
                await wave(100)
            growth = rss_mb() - before
            assert growth < 20, "RSS grew by %.1f MB under overload" % growth
            assert len(srv.batcher._q) <= 8      # refused requests leave nothing behind
            model.open(srv)
            for r in await asyncio.gather(*blockers):
                assert r.status_code == 200

    with ServerThread(app) as srv, Ticker(srv) as ticker:
        asyncio.run(main(srv))
        st = srv.batcher.statistics()
    assert st.rejected == 31 + 500
    assert ticker.p99() < 0.1, "event loop lag p99 %.1f ms" % (1e3 * ticker.p99())


def test_deadlines_give_504(mlp):
    net, ref = mlp
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), max_in_flight=1)
    x = np.ones((1, N_IN), np.float32)

    async def main(srv):
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
            first = asyncio.ensure_future(c.post("/predict", json=x.tolist()))
            await poll(lambda: model.calls == 1, "the gated batch")
            r1 = await c.post("/predict", json=x.tolist(), headers={"x-timeout-ms": "50"})
            r2 = await c.post("/predict?timeout_ms=50", json=x.tolist())
            for r in (r1, r2):
                assert r.status_code == 504, r.text
                assert "deadline" in r.json()["error"]
            r3 = await c.post("/predict", json=x.tolist(), headers={"x-timeout-ms": "soon"})
            assert r3.status_code == 400 and "X-Timeout-Ms" in r3.json()["error"]
            model.open(srv)
            r0 = await first
            assert r0.status_code == 200
            np.testing.assert_allclose(decode(r0), ref(x), rtol=1e-4, atol=1e-4)

    with ServerThread(app) as srv:
        asyncio.run(main(srv))
        assert srv.batcher.statistics().expired == 2


def test_bad_requests_get_400_or_413_with_clear_messages(mlp):
    net, ref = mlp
    app = create_app(net, sample_shape=(N_IN,), max_body_bytes=64 << 10)
    x = np.ones((2, N_IN), np.float32)
    cases = [
        # (kwargs for client.post, status, regex on the error message)
        (dict(content=b'{"data": [1, 2', headers={"content-type": "application/json"}),
         400, r"malformed JSON body .*expected a JSON array"),
        (dict(json=[[1.0, 2.0, 3.0]]), 400,
         r"expected shape \(n, 784\) or \(784,\) of float32, got shape \(1, 3\)"),
        (dict(json={"data": ["x"] * N_IN}), 400, r"expected numbers .*non-numeric"),
        (dict(json={"data": [[1.0] * N_IN, [1.0]]}), 400, r"nested lists have different"),
        (dict(json={"values": [1.0]}), 400, r"object with a \"data\" array"),
        (dict(json=3.5), 400, r"expected a JSON array of numbers"),
        (dict(content=x.astype("<i8").tobytes(), headers=raw_headers(x.shape, "int64")),
         400, r"expected X-Tensor-Dtype float32, got int64"),
        (dict(content=x.astype("<f4").tobytes()[:-4], headers=raw_headers(x.shape)),
         400, r"the body has 6268 bytes; X-Tensor-Shape \(2, 784\) of float32 needs 6272"),
        (dict(content=x.astype("<f4").tobytes(), headers=raw_headers((2, 783))),
         400, r"expected shape \(n, 784\) or \(784,\) of float32, got shape \(2, 783\)"),
        (dict(content=x.astype("<f4").tobytes(), headers=raw_headers(x.shape, "nonsense")),
         400, r"X-Tensor-Dtype 'nonsense' is not a dtype; expected float32"),
        (dict(content=x.astype("<f4").tobytes(),
              headers={"content-type": "application/octet-stream"}),
         400, r"needs an X-Tensor-Shape header"),
        (dict(content=b"0" * (65 << 10), headers={"content-type": "application/json"}),
         413, r"more than the limit of 65536"),
    ]

    async def chunked():
        for _ in range(70):
            yield b" " * 1024

    async def main(srv):
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
            for kwargs, status, pattern in cases:
                r = await c.post("/predict", **kwargs)
                assert r.status_code == status, (kwargs.get("headers"), r.text)
                assert re.search(pattern, r.json()["error"]), r.json()["error"]
            r = await c.post("/predict", content=chunked(),
                             headers={"content-type": "application/json"})
            assert r.status_code == 413 and "limit of 65536" in r.json()["error"]
            r = await c.get("/predict")
            assert r.status_code == 405
            r = await c.post("/predict", json={"data": x.tolist()})   # still serving
            assert r.status_code == 200
            np.testing.assert_allclose(decode(r), ref(x), rtol=1e-4, atol=1e-4)
            r = await c.post("/predict", json={"data": x.tolist()},
                             headers={"accept": "application/octet-stream"})
            assert r.headers["x-tensor-shape"] == "2,10"
            np.testing.assert_allclose(decode(r), ref(x), rtol=1e-4, atol=1e-4)

    with ServerThread(app) as srv, Ticker(srv) as ticker:
        asyncio.run(main(srv))
    assert ticker.p99() < 0.1, "event loop lag p99 %.1f ms" % (1e3 * ticker.p99())


def test_client_disconnect_does_not_break_the_batch_for_others(mlp):
    net, ref = mlp
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), max_in_flight=1)
    rs = np.random.RandomState(2)
    xs = [rs.uniform(-1, 1, (1, N_IN)).astype(np.float32) for _ in range(3)]

    async def main(srv):
        # A: a raw socket that sends its request and goes away while it runs
        body = json.dumps(xs[0].tolist()).encode()
        a = socket.create_connection(("127.0.0.1", srv.port))
        a.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await poll(lambda: model.calls == 1, "A's batch to start")
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
            others = [asyncio.ensure_future(c.post("/predict", json=x.tolist()))
                      for x in xs[1:]]
            await poll(lambda: srv.batcher.statistics().queue_depth == 2, "B and C queued")
            a.close()
            await poll(lambda: srv.batcher.statistics().cancelled == 1, "A to be cancelled")
            model.open(srv)
            for x, t in zip(xs[1:], others):
                r = await t
                assert r.status_code == 200, r.text
                np.testing.assert_allclose(decode(r), ref(x), rtol=1e-4, atol=1e-4)
            r = await c.post("/predict", json=xs[0].tolist())
            assert r.status_code == 200

    with ServerThread(app) as srv, Ticker(srv) as ticker:
        asyncio.run(main(srv))
        st = srv.batcher.statistics()
    assert st.cancelled == 1 and st.completed == 3
    assert ticker.p99() < 0.1, "event loop lag p99 %.1f ms" % (1e3 * ticker.p99())


def test_health_and_prometheus_metrics(mlp):
    net, _ = mlp
    app = create_app(net, sample_shape=(N_IN,), name="mlp")
    line = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"'
                      r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"]*")*\})? (NaN|[-+]?[0-9.eE+-]+|\+Inf)$')

    async def main(srv):
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
            r = await c.get("/health")
            assert r.status_code == 200 and r.json()["status"] == "ok"
            for _ in range(3):
                assert (await c.post("/predict", json=[0.5] * N_IN)).status_code == 200
            assert (await c.post("/predict", json=[0.5])).status_code == 400
            r = await c.get("/metrics")
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
            return r.text

    with ServerThread(app) as srv:
        text = asyncio.run(main(srv))
    samples = [l for l in text.splitlines() if l and not l.startswith("#")]
    for l in samples:
        assert line.match(l), l
    assert 'aiond_serve_requests_finished_total{model="mlp",version="1",outcome="ok"} 3' in samples
    assert 'aiond_serve_http_responses_total{code="200"} 3' in samples
    assert 'aiond_serve_http_responses_total{code="400"} 1' in samples
    assert 'aiond_serve_batch_size_bucket{model="mlp",version="1",le="+Inf"} 3' in samples
    assert any(l.startswith('aiond_serve_request_latency_seconds{model="mlp",version="1",quantile="0.99"}')
               for l in samples)
    assert "# TYPE aiond_serve_batch_size histogram" in text


def test_shutdown_finishes_requests_in_flight(mlp):
    net, ref = mlp
    model = Gated(net, closed=True)
    app = create_app(model, sample_shape=(N_IN,), max_in_flight=1)
    x = np.full((1, N_IN), 0.25, np.float32)

    async def main(srv):
        async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
            tasks = [asyncio.ensure_future(c.post("/predict", json=x.tolist()))
                     for _ in range(3)]
            await poll(lambda: srv.batcher.statistics().requests == 3, "3 requests accepted")
            srv.server.should_exit = True            # what SIGTERM does
            model.open(srv)
            for r in await asyncio.gather(*tasks):
                assert r.status_code == 200
                np.testing.assert_allclose(decode(r), ref(x), rtol=1e-4, atol=1e-4)

    with ServerThread(app) as srv:
        asyncio.run(main(srv))
        srv.thread.join(TIMEOUT)
        assert not srv.thread.is_alive() and srv.error is None
        assert srv.batcher.closing and srv.batcher.statistics().completed == 3
