"""``python -m aiond.serve`` in a subprocess: models exported by aiond and by
MXNet 1.9.1, the options in --help, SIGTERM."""
import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import aiond as mx

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

pytestmark = pytest.mark.timeout(120)

TIMEOUT = 30.0
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_DATA = os.path.join(REPO, "tests", "data", "module")


class Served:
    """``python -m aiond.serve ARGS --port 0`` with its stderr read on a thread."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aiond.serve", "--host", "127.0.0.1", "--port", "0",
             "--log-level", "warning", *args],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = queue.Queue()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = None

    def _read(self):
        for line in self.proc.stdout:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def __enter__(self):
        deadline = time.monotonic() + TIMEOUT
        while self.url is None:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            assert line is not None, "the server did not start:\n" + "".join(self.log)
            if "listening on http://" in line:
                self.url = line.strip().rsplit(" ", 1)[-1]
        return self

    def terminate(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(TIMEOUT)

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()      # our own child, by its pid
            self.proc.wait(TIMEOUT)


def _predict_all(url, xs, raw_every=2):
    async def main():
        limits = httpx.Limits(max_connections=len(xs))
        async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT, limits=limits) as c:
            async def one(i, x):
                if i % raw_every:
                    r = await c.post("/predict", content=x.astype("<f4").tobytes(), headers={
                        "content-type": "application/octet-stream",
                        "x-tensor-shape": ",".join(map(str, x.shape)),
                        "x-tensor-dtype": "float32"})
                    assert r.status_code == 200, r.text
                    return np.frombuffer(r.content, "<f4").reshape(
                        [int(d) for d in r.headers["x-tensor-shape"].split(",")])
                r = await c.post("/predict", json={"data": x.tolist()})
                assert r.status_code == 200, r.text
                return np.asarray(r.json()["data"], np.float32)
            outs = await asyncio.gather(*(one(i, x) for i, x in enumerate(xs)))
            metrics = (await c.get("/metrics")).text
            return outs, metrics
    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_help_documents_the_options():
    r = subprocess.run([sys.executable, "-m", "aiond.serve", "--help"], capture_output=True,
                       text=True, timeout=TIMEOUT, cwd=REPO)
    assert r.returncode == 0, r.stderr
    for flag in ("--symbol", "--params", "--input-shape", "--port", "--max-batch-size",
                 "--max-wait-ms", "--max-queue", "--max-in-flight", "--timeout-ms",
                 "--buckets", "--max-body-bytes", "--workers", "--graceful-timeout"):
        assert flag in r.stdout, flag
    r = subprocess.run([sys.executable, "-m", "aiond.serve", "--symbol", "s", "--params", "p",
                        "--input-shape", "a,b"], capture_output=True, text=True,
                       timeout=TIMEOUT, cwd=REPO)
    assert r.returncode == 2 and "'a,b' is not a shape like 1,784" in r.stderr


def test_serves_a_model_exported_by_aiond_and_stops_on_sigterm(tmp_path):
    from aiond.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(32, in_units=784, activation="relu"), nn.Dense(10, in_units=32))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    xs = [np.random.RandomState(i).uniform(-1, 1, (1 + i % 2, 784)).astype(np.float32)
          for i in range(40)]
    want = [net(mx.nd.array(x)).asnumpy() for x in xs]
    prefix = str(tmp_path / "mlp")
    net.export(prefix)
    with Served("--symbol", prefix + "-symbol.json", "--params", prefix + "-0000.params",
                "--input-shape", "1,784", "--max-batch-size", "16") as srv:
        outs, metrics = _predict_all(srv.url, xs)
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o, w, rtol=1e-4, atol=1e-5)
        assert 'aiond_serve_requests_finished_total{model="mlp",version="1",outcome="ok"} 40' in metrics
        # SIGTERM while a wave of requests is in flight: every answer that comes
        # back is complete and right; requests the closing server did not take
        # fail at the transport level (connection refused or closed), never 5xx
        x = xs[1]

        async def wave():
            limits = httpx.Limits(max_connections=64)
            async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT, limits=limits) as c:
                tasks = [asyncio.ensure_future(c.post("/predict", json={"data": x.tolist()}))
                         for _ in range(64)]
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                srv.proc.send_signal(signal.SIGTERM)
                return await asyncio.gather(*tasks, return_exceptions=True)
        results = asyncio.run(asyncio.wait_for(wave(), TIMEOUT))
        ok = 0
        for r in results:
            if isinstance(r, Exception):
                assert isinstance(r, httpx.TransportError), repr(r)
                continue
            assert r.status_code == 200, r.text
            np.testing.assert_allclose(np.asarray(r.json()["data"], np.float32), want[1],
                                       rtol=1e-4, atol=1e-5)
            ok += 1
        assert ok >= 1
        assert srv.proc.wait(TIMEOUT) == 0, "".join(srv.log)
    assert "aiond.serve: stopped (SIGTERM)" in "".join(srv.log)


def test_serves_a_module_checkpoint_written_by_mxnet_1_9_1():
    """tests/data/module/mlpbn-*: written by MXNet 1.9.1 (FC, BatchNorm,
    SoftmaxOutput); the answers must be MXNet's own predictions."""
    sys.path.insert(0, MODULE_DATA)
    try:
        import problem
    finally:
        sys.path.remove(MODULE_DATA)
    X, _ = problem.data(10, 3)
    with open(os.path.join(MODULE_DATA, "expected.json")) as f:
        want = np.asarray(json.load(f)["mlpbn_predict"], np.float32)
    with Served("--symbol", os.path.join(MODULE_DATA, "mlpbn-symbol.json"),
                "--params", os.path.join(MODULE_DATA, "mlpbn-0002.params"),
                "--input-shape", "1,20", "--workers", "1", "--max-wait-ms", "1") as srv:
        outs, metrics = _predict_all(srv.url, [X[i:i + 1] for i in range(10)])
        np.testing.assert_allclose(np.concatenate(outs), want, rtol=1e-5, atol=1e-6)
        assert 'outcome="ok"} 10' in metrics
        assert srv.terminate() == 0, "".join(srv.log)


# ------------------------------------------------ issue 15: no parameters, warm-up
def _relu_model(tmp_path, empty_params):
    x = mx.sym.var("data")
    y = mx.sym.sqrt(mx.sym.relu(x) * 4)          # fails on nothing, has no parameters
    prefix = str(tmp_path / "relu")
    y.save(prefix + "-symbol.json")
    if empty_params:
        mx.nd.save(prefix + "-0000.params", [])
    return prefix


@pytest.mark.parametrize("empty_params", [False, True])
def test_serves_a_model_without_parameters(tmp_path, empty_params):
    prefix = _relu_model(tmp_path, empty_params)
    args = ["--symbol", prefix + "-symbol.json", "--input-shape", "1,3"]
    if empty_params:
        args += ["--params", prefix + "-0000.params"]
    with Served(*args) as srv:
        async def main():
            async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
                return await c.post("/predict", json=[[1.0, -1.0, 4.0]])
        r = asyncio.run(main())
        assert r.status_code == 200, r.text
        assert r.json()["data"] == [[2.0, 0.0, 4.0]]
        assert srv.terminate() == 0


def _strict_model(tmp_path):
    """A model whose graph fails on an all-zero input (a Cholesky factor of x x^T)."""
    x = mx.sym.var("data")
    y = mx.sym.linalg.potrf(mx.sym.linalg.gemm2(x, x, transpose_b=True))
    prefix = str(tmp_path / "chol")
    y.save(prefix + "-symbol.json")
    return prefix


def test_warmup_failure_is_reported_clearly(tmp_path):
    prefix = _strict_model(tmp_path)
    r = subprocess.run([sys.executable, "-m", "aiond.serve", "--symbol", prefix + "-symbol.json",
                        "--input-shape", "1,2,2", "--warmup-data", "zeros", "--port", "0"],
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO)
    assert r.returncode != 0
    assert "warm-up failed" in r.stderr and "--warmup-data" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_warmup_with_user_data(tmp_path):
    prefix = _strict_model(tmp_path)
    np.save(str(tmp_path / "w.npy"), np.array([[[2.0, 0.0], [0.0, 3.0]]], np.float32))
    with Served("--symbol", prefix + "-symbol.json", "--input-shape", "1,2,2",
                "--warmup-data", str(tmp_path / "w.npy")) as srv:
        async def main():
            async with httpx.AsyncClient(base_url=srv.url, timeout=TIMEOUT) as c:
                return await c.post("/predict", json=[[1.0, 0.0], [0.0, 1.0]])
        r = asyncio.run(main())
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(r.json()["data"], [[1.0, 0.0], [0.0, 1.0]])
        assert srv.terminate() == 0


def test_serves_a_model_repository_with_a_broken_model(tmp_path):
    tc = pytest.importorskip("tritonclient.http")
    from .test_repository import export_mlp
    ref = export_mlp(str(tmp_path / "mlp"), 1, 1)
    (tmp_path / "mlp" / "config.json").write_text(json.dumps(
        {"max_batch_size": 4, "inputs": [{"name": "data", "datatype": "FP32", "shape": [6]}]}))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{")
    with Served("--model-repository", str(tmp_path)) as srv:
        c = tc.InferenceServerClient(srv.url.split("//", 1)[1], network_timeout=TIMEOUT)
        x = np.full((2, 6), 0.5, np.float32)
        i = tc.InferInput("data", [2, 6], "FP32")
        i.set_data_from_numpy(x)
        out = c.get_model_metadata("mlp")["outputs"][0]["name"]
        np.testing.assert_allclose(c.infer("mlp", [i]).as_numpy(out), ref(x), rtol=1e-4,
                                   atol=1e-5)
        bad = [e for e in c.get_model_repository_index() if e["name"] == "bad"]
        assert bad and bad[0]["state"] == "UNAVAILABLE" and "JSON" in bad[0]["reason"]
        c.close()
        assert srv.terminate() == 0
    assert any("model 'bad' failed to load" in line for line in srv.log)


def test_model_repository_and_symbol_are_exclusive(tmp_path):
    r = subprocess.run([sys.executable, "-m", "aiond.serve", "--model-repository",
                        str(tmp_path), "--symbol", "x-symbol.json"], cwd=REPO,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode != 0 and "not both" in r.stderr


def test_grpc_port_serves_the_same_model(tmp_path):
    tg = pytest.importorskip("tritonclient.grpc")
    pytest.importorskip("grpc")
    from .test_repository import export_mlp
    ref = export_mlp(str(tmp_path), 0, 4)
    prefix = str(tmp_path / "mlp")
    with Served("--symbol", prefix + "-symbol.json", "--params", prefix + "-0000.params",
                "--input-shape", "1,6", "--grpc-port", "0", "--log-level", "info") as srv:
        deadline = time.monotonic() + TIMEOUT
        addr = None
        while addr is None:
            line = srv.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line is not None, "".join(srv.log)
            if "gRPC on " in line:
                addr = line.strip().rsplit(" ", 1)[-1]
        c = tg.InferenceServerClient(addr)
        meta = c.get_model_metadata("mlp")
        assert meta.inputs[0].name == "data" and list(meta.outputs[0].shape) == [-1, 3]
        x = np.full((2, 6), 0.25, np.float32)
        i = tg.InferInput("data", [2, 6], "FP32")
        i.set_data_from_numpy(x)
        y = c.infer("mlp", [i]).as_numpy(meta.outputs[0].name)
        np.testing.assert_allclose(y, ref(x), rtol=1e-4, atol=1e-5)
        c.close()
        assert srv.terminate() == 0


def test_h11_parser_option(tmp_path):
    from .test_repository import export_mlp
    ref = export_mlp(str(tmp_path), 0, 5)
    prefix = str(tmp_path / "mlp")
    with Served("--symbol", prefix + "-symbol.json", "--params", prefix + "-0000.params",
                "--input-shape", "1,6", "--http", "h11") as srv:
        x = np.full((1, 6), 0.5, np.float32)
        r = httpx.post(srv.url + "/v2/models/mlp/infer", timeout=TIMEOUT, json={
            "inputs": [{"name": "data", "datatype": "FP32", "shape": [1, 6],
                        "data": x.ravel().tolist()}]})
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        np.testing.assert_allclose(np.reshape(out["data"], out["shape"]), ref(x), rtol=1e-4,
                                   atol=1e-5)
        assert srv.terminate() == 0


def test_the_server_runs_with_its_startup_objects_frozen(monkeypatch):
    """What the server loaded before it listens is out of the cyclic
    collector's full passes (gc.freeze): under load such a pass over every
    object stopped the event loop ~20 ms every few seconds."""
    import argparse
    import gc
    import logging
    import uvicorn
    from aiond.serve import __main__ as cli
    seen = {}

    class FakeServer:
        def __init__(self, config):
            seen["port"] = config.port

        def run(self, sockets):
            seen["frozen"] = gc.get_freeze_count()
            for s in sockets:
                s.close()
    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    old = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    args = argparse.Namespace(host="127.0.0.1", port=0, http="h11", log_level="warning",
                              graceful_timeout=1)
    try:
        gc.unfreeze()
        cli._listen(lambda scope: None, args, logging.getLogger("test"), "app")
    finally:
        gc.unfreeze()
        for sig, h in old.items():
            signal.signal(sig, h)
    assert seen["port"] > 0 and seen["frozen"] > 1000
