"""The load generator of ``bench_serve.py --mode sockets``: its own process,
N keep-alive HTTP/1.1 connections over real sockets, closed loop (each
connection sends its next request when the answer to the last arrived).

    python benchmarks/_loadgen.py '{"port": P, "clients": 64, "duration": 2,
                                    "mode": "predict", "x": [...], "ref": [...]}'

mode:
  predict         POST /predict, the raw float32 tensor (X-Tensor-Shape)
  v2_binary       POST /v2/models/mlp/infer, binary tensor extension in and out
  v2_json         the same request and answer as JSON tensors
  triton_binary   tritonclient.http.aio (unmodified), binary_data in and out
  triton_json     tritonclient.http.aio, JSON in and out
Prints one JSON line: req/s, latency p50/p99 (ms), requests, errors and
sampled outputs that differ from ``ref``.
"""
import asyncio
import json
import sys
import time

import numpy as np

perf = time.perf_counter


def _q(s, p):
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))] if s else float("nan")


def _request(a):
    x = np.asarray(a["x"], "<f4").reshape(1, -1)
    mode = a["mode"]
    if mode == "predict":
        body = x.tobytes()
        head = (b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/octet-stream\r\nX-Tensor-Shape: 1,%d\r\n"
                b"X-Tensor-Dtype: float32\r\nContent-Length: %d\r\n\r\n" % (x.shape[1], len(body)))
        return head + body
    t = {"name": "data", "datatype": "FP32", "shape": list(x.shape)}
    if mode == "v2_binary":
        t["parameters"] = {"binary_data_size": x.nbytes}
        h = json.dumps({"inputs": [t], "outputs": [{"name": "scores",
                                                    "parameters": {"binary_data": True}}]})
        body = h.encode() + x.tobytes()
        extra = b"Inference-Header-Content-Length: %d\r\n" % len(h)
    else:
        t["data"] = x.ravel().tolist()
        body = json.dumps({"inputs": [t]}).encode()
        extra = b""
    return (b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
            % (extra, len(body))) + body


def _decode(mode, head, data):
    if mode == "predict":
        return np.frombuffer(data, "<f4")
    if mode == "v2_binary":
        hl = None
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"inference-header-content-length:"):
                hl = int(line.split(b":", 1)[1])
        return np.frombuffer(data[hl:], "<f4")
    return np.asarray(json.loads(data)["outputs"][0]["data"], np.float32)


async def raw(a):
    req = _request(a)
    ref = np.asarray(a["ref"], np.float32).ravel()
    lat, bad, errors = [], [0], []
    mode = a["mode"]

    async def conn(deadline):
        r, w = await asyncio.open_connection("127.0.0.1", a["port"])
        n = 0
        while perf() < deadline:
            t0 = perf()
            w.write(req)
            head = await r.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            cl = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    cl = int(line[15:])
            data = await r.readexactly(cl)
            lat.append(perf() - t0)
            n += 1
            if status != 200:
                errors.append(status)
            elif n % 16 == 1 and not np.allclose(_decode(mode, head, data), ref, rtol=1e-3,
                                                 atol=1e-3):
                bad[0] += 1
        w.close()
    t0 = perf()
    await asyncio.gather(*(conn(t0 + a["duration"]) for _ in range(a["clients"])))
    return lat, perf() - t0, bad[0], len(errors)


async def triton(a):
    import tritonclient.http.aio as tc
    binary = a["mode"] == "triton_binary"
    x = np.asarray(a["x"], "<f4").reshape(1, -1)
    ref = np.asarray(a["ref"], np.float32).reshape(1, -1)
    lat, bad, errors = [], [0], [0]
    async with tc.InferenceServerClient("127.0.0.1:%d" % a["port"],
                                        conn_limit=a["clients"]) as c:
        async def worker(deadline):
            n = 0
            while perf() < deadline:
                t0 = perf()
                i = tc.InferInput("data", [1, x.shape[1]], "FP32")
                i.set_data_from_numpy(x, binary_data=binary)
                o = tc.InferRequestedOutput("scores", binary_data=binary)
                try:
                    r = await c.infer("mlp", [i], outputs=[o])
                except Exception:  # noqa: BLE001 - counted
                    errors[0] += 1
                    continue
                lat.append(perf() - t0)
                n += 1
                if n % 16 == 1 and not np.allclose(r.as_numpy("scores"), ref, rtol=1e-3,
                                                   atol=1e-3):
                    bad[0] += 1
        t0 = perf()
        await asyncio.gather(*(worker(t0 + a["duration"]) for _ in range(a["clients"])))
        return lat, perf() - t0, bad[0], errors[0]


def main():
    a = json.loads(sys.argv[1])
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    fn = triton if a["mode"].startswith("triton") else raw
    lat, wall, bad, errors = asyncio.run(fn(a))
    s = sorted(lat)
    print(json.dumps({"rps": len(lat) / wall, "lat_p50_ms": 1e3 * _q(s, 50),
                      "lat_p99_ms": 1e3 * _q(s, 99), "requests": len(lat),
                      "wrong_outputs": bad, "errors": errors}))


if __name__ == "__main__":
    main()
