"""The gRPC port's bounds (start_grpc's limits): a connection that never
finishes its HTTP/2 handshake is closed at the header deadline, and calls
past the concurrency cap get RESOURCE_EXHAUSTED."""
import asyncio
import socket
import threading
import time

import numpy as np
import pytest

pytest.importorskip("uvicorn")
grpc = pytest.importorskip("grpc")
tg_aio = pytest.importorskip("tritonclient.grpc.aio")
tg = pytest.importorskip("tritonclient.grpc")
from tritonclient.utils import InferenceServerException  # noqa: E402

from aiond.serve.http import create_app  # noqa: E402
from aiond.serve.limits import ServerLimits  # noqa: E402

from .test_http import ServerThread  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _slow_model(gate):
    async def held(x):
        # every call is held in flight until the gate opens, in a thread:
        # the server's loop keeps running, so each call reaches the batcher
        await asyncio.get_running_loop().run_in_executor(None, gate.wait, 20)
        return x * 2

    def model(x):
        return held(x)
    return model


@pytest.fixture
def served():
    gate = threading.Event()
    app = create_app(_slow_model(gate), sample_shape=(3,), name="m", max_batch_size=1,
                     max_in_flight=1, grpc_address="127.0.0.1:0",
                     grpc_limits=ServerLimits(header_timeout=1.0, max_connections=2))
    with ServerThread(app) as srv:
        srv.grpc_port = app.state.serve.grpc.port
        srv.gate = gate
        yield srv
        gate.set()


def test_a_connection_that_never_handshakes_is_closed_at_the_deadline(served):
    s = socket.create_connection(("127.0.0.1", served.grpc_port), timeout=10)
    s.sendall(b"PRI * HTTP/2.0\r\n")        # part of the preface, then nothing
    t0 = time.monotonic()
    s.settimeout(10)
    try:
        while s.recv(65536):
            pass
    except (ConnectionResetError, socket.timeout):
        pass
    took = time.monotonic() - t0
    assert took < 5, took


def test_calls_past_the_cap_get_resource_exhausted(served):
    x = np.ones((1, 3), np.float32)

    async def main():
        async with tg_aio.InferenceServerClient("127.0.0.1:%d" % served.grpc_port) as c:
            def call():
                i = tg.InferInput("data", [1, 3], "FP32")
                i.set_data_from_numpy(x)
                return c.infer("m", [i])
            held = [asyncio.ensure_future(call()) for _ in range(2)]
            # both in flight: accepted by the batcher (one in the model,
            # held by the gate, one queued behind it), however long that takes
            while served.batcher.statistics().requests < 2:
                await asyncio.sleep(0.01)
            with pytest.raises(InferenceServerException, match="(?i)resource|exhaust|concurren"):
                await call()
            served.gate.set()
            for r in await asyncio.gather(*held):
                np.testing.assert_array_equal(r.as_numpy(r.get_response().outputs[0].name), x * 2)
    asyncio.run(asyncio.wait_for(main(), 60))
