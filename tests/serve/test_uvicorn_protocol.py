"""The coalescing transport under uvicorn's httptools protocol: the writes of
one loop iteration become one, close and EOF flush first, and a server using
it answers keep-alive requests correctly over real sockets."""
import asyncio
import socket

import numpy as np
import pytest

uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("httptools")
from aiond.serve._uvicorn import CoalescingTransport, coalescing_protocol  # noqa: E402
from aiond.serve.http import create_app  # noqa: E402

from .test_http import TIMEOUT  # noqa: E402


class FakeTransport:
    def __init__(self):
        self.writes, self.closed, self.eof = [], False, False

    def write(self, data):
        self.writes.append(bytes(data))

    def close(self):
        self.closed = True

    def write_eof(self):
        self.eof = True

    def is_closing(self):
        return self.closed

    def get_write_buffer_size(self):
        return 0

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default


def test_writes_of_one_iteration_become_one():
    async def main():
        loop = asyncio.get_running_loop()
        t = FakeTransport()
        c = CoalescingTransport(t, loop)
        c.write(b"HTTP/1.1 200 OK\r\n\r\n")
        c.write(memoryview(b"body"))
        assert t.writes == [] and c.get_write_buffer_size() == 23
        await asyncio.sleep(0)
        assert t.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        c.write(b"a")
        c.close()                      # flushes first
        assert t.writes[-1] == b"a" and t.closed
        await asyncio.sleep(0)
        assert len(t.writes) == 2      # nothing written twice
        c2 = CoalescingTransport(FakeTransport(), loop)
        c2.write(b"x")
        c2.write_eof()
        assert c2._t.writes == [b"x"] and c2._t.eof
        assert c2.get_extra_info("peername") == ("127.0.0.1", 1)
    asyncio.run(main())


def test_a_server_with_it_answers_pipelined_keep_alive_requests():
    def double(x):
        return x * 2
    app = create_app(double, sample_shape=(2,), numpy_model=True, name="d")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           http=coalescing_protocol()))

    async def main():
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        r, w = await asyncio.open_connection("127.0.0.1", port)
        body = np.array([[1.0, 2.0]], "<f4").tobytes()
        req = (b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream"
               b"\r\nX-Tensor-Shape: 1,2\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
        w.write(req * 3)              # three requests in one segment
        outs = []
        for _ in range(3):
            head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), TIMEOUT)
            assert head.startswith(b"HTTP/1.1 200")
            n = int([ln for ln in head.split(b"\r\n")
                     if ln.lower().startswith(b"content-length")][0].split(b":")[1])
            outs.append(np.frombuffer(await r.readexactly(n), "<f4").tolist())
        assert outs == [[2.0, 4.0]] * 3
        w.close()
        server.should_exit = True
        await asyncio.wait_for(task, TIMEOUT)
    asyncio.run(main())
    sock.close()
