"""Malformed HTTP requests get 4xx, never 500 or a wrong 200 (issue 15):
non-finite numbers, deep JSON, bad headers, big-endian raw tensors, a client
that never sends its body. The hypothesis fuzz is test_fuzz_http.py."""
import asyncio
import json
import math
import socket
import time

import numpy as np
import pytest

import aiond as mx

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")
from aiond.serve.http import create_app  # noqa: E402

from .test_http import TIMEOUT, ServerThread, decode, raw_headers  # noqa: E402

pytestmark = pytest.mark.timeout(180)
N = 4


def double(x):
    return x * 2


def nonfinite(x):
    return mx.nd.log(x)          # log(0) = -inf, log(-1) = nan


async def _post(app, **kw):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        return await c.post("/predict", **kw)


_loops = {}


def post(app, **kw):
    """One request through the ASGI app, on the app's own loop (a Batcher
    belongs to the loop it first ran on)."""
    loop = _loops.get(id(app))
    if loop is None:
        loop = _loops[id(app)] = (asyncio.new_event_loop(), app)
    return loop[0].run_until_complete(_post(app, **kw))


@pytest.fixture(scope="module", autouse=True)
def _close_loops():
    yield
    for loop, a in _loops.values():
        loop.run_until_complete(a.state.batcher.aclose(drain=True))
        loop.close()
    _loops.clear()


@pytest.fixture(scope="module")
def app():
    return create_app(double, sample_shape=(N,), monitor_interval=0)


def test_non_finite_json_input_is_400(app):
    for body in (b'[NaN, 1, 2, 3]', b'[Infinity, 1, 2, 3]', b'[-Infinity, 1, 2, 3]',
                 b'[1e400, 1, 2, 3]', b'{"data": [1, 2, 3, -1e999]}'):
        r = post(app, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, (body, r.text)
        assert "finite" in r.json()["error"] or "JSON number" in r.json()["error"]


def test_booleans_are_not_numbers(app):
    for body in (b"[true, 1, 2, 3]", b'{"data": [[1, 2, 3, 4], [false, 0, 1, 1]]}'):
        r = post(app, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "true/false" in r.json()["error"], r.text
    r = post(app, content=b'{"data": [1, 2, 3, 4], "flag": true}',
             headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["data"] == [2, 4, 6, 8]


def test_float32_overflow_is_400(app):
    r = post(app, json=[1e39, 0, 0, 0])
    assert r.status_code == 400 and "range" in r.json()["error"]


def test_integer_model_refuses_fractions_and_out_of_range():
    a = create_app(double, sample_shape=(2,), dtype="uint8", monitor_interval=0)
    assert post(a, json=[1.5, 2]).status_code == 400
    assert post(a, json=[300, 2]).status_code == 400
    assert post(a, json=[-1, 2]).status_code == 400
    r = post(a, json=[3, 2.0])
    assert r.status_code == 200 and r.json()["data"] == [6, 4]


def test_non_finite_output_is_written_as_proto3_strings():
    a = create_app(nonfinite, sample_shape=(3,), monitor_interval=0)
    r = post(a, json=[0, -1, 1])
    assert r.status_code == 200, r.text
    assert r.json()["data"] == ["-Infinity", "NaN", 0.0]


def test_deeply_nested_json_is_400(app):
    for body in (b"[" * 100000 + b"]" * 100000, b'{"data": ' + b"[" * 50000 + b"]" * 50000 + b"}"):
        r = post(app, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400, r.text


def test_bad_timeout_header_is_400(app):
    for t in ("nan", "inf", "-5", "abc", "1e400"):
        r = post(app, json=[1, 2, 3, 4], headers={"x-timeout-ms": t})
        assert r.status_code == 400, (t, r.text)
        assert "X-Timeout-Ms" in r.json()["error"]


def test_bad_dtype_headers_are_400(app):
    x = np.ones((1, N), np.float32)
    for dt in ("i4, i4, (", "(", "f4,f4", "[('a', 'f4')]", "V4", "O", "S4", "(f4, 2)",
               "float32" + "\x00", "M8"):
        r = post(app, content=x.tobytes(), headers=raw_headers(x.shape, dt))
        assert r.status_code == 400, (dt, r.text)


def test_big_endian_raw_tensor_is_decoded_as_big_endian(app):
    x = np.arange(N, dtype=np.float32).reshape(1, N) + 0.5
    r = post(app, content=x.astype(">f4").tobytes(), headers=raw_headers(x.shape, ">f4"))
    assert r.status_code == 200, r.text
    np.testing.assert_array_equal(decode(r), 2 * x)
    r = post(app, content=x.astype("<f4").tobytes(), headers=raw_headers(x.shape, "<f4"))
    np.testing.assert_array_equal(decode(r), 2 * x)


def test_bad_shape_headers_are_4xx(app):
    for sh in ("1," + "9" * 40, "-1,4", "a", "1" + ",1" * 100, "99999999,4"):
        r = post(app, content=b"\0" * 16, headers=raw_headers((1,), "float32") |
                 {"x-tensor-shape": sh})
        assert 400 <= r.status_code < 500, (sh, r.text)


def test_slow_body_gets_408():
    a = create_app(double, sample_shape=(N,), body_timeout=0.3, monitor_interval=0)
    with ServerThread(a) as srv:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT)
        try:
            s.sendall(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n[1,")
            t0 = time.monotonic()
            data = s.recv(65536)
            took = time.monotonic() - t0
        finally:
            s.close()
    assert data.startswith(b"HTTP/1.1 408"), data[:200]
    assert took < 5
