"""A normal client's latency beside 500 slow clients (issue 38).

``python -m aiond.serve`` runs a small MLP (8-16-3) in a subprocess. A normal
client (httpx, one connection, sequential batch-1 POST /predict) is timed
alone, then while 500 connections from 127.0.0.1 hold the server the slow
way: half send their headers a byte a second, half a body short of its
Content-Length; each slow connection that the server cuts is opened again
at once, so the pressure lasts the whole measurement. Reported: the normal
client's p50/p99 latency both ways and their ratio, how long the server
took to cut the slow connections (it must be their deadline), and the
server's descriptors and RSS before, at the peak and after.

    .venv/bin/python benchmarks/bench_slow_clients.py [--requests 300] [--slow 500]
        [--header-timeout 2] [--body-timeout 2]
"""
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit, log, parse, parser, target  # noqa: E402

perf = time.perf_counter
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def _fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def _rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024.0, 1)
    return None


def _export(folder):
    import aiond as mx
    from aiond.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(16, in_units=8, activation="relu"), nn.Dense(3, in_units=16))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = np.ones((1, 8), np.float32)
    want = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(folder, "mlp")
    net.export(prefix)
    return prefix, x, want


async def _normal(url, x, want, n):
    import httpx
    lat = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as c:
        for _ in range(n):
            t0 = perf()
            r = await c.post("/predict", json={"data": x.tolist()})
            lat.append(perf() - t0)
            if r.status_code != 200 or not np.allclose(r.json()["data"], want, rtol=1e-5,
                                                       atol=1e-6):
                raise AssertionError("WRONG RESULT: %s %s" % (r.status_code, r.text[:200]))
    return lat


async def _slow(host, port, body, stop, cut, delay=0.0):
    """One slow connection after another until ``stop`` is set; the time the
    server took to cut each goes to ``cut``. The first opens after ``delay``
    (attackers do not arrive in one instant)."""
    await asyncio.sleep(delay)
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        t0 = perf()
        if body:
            writer.write(b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                         b"\r\nContent-Length: 1000\r\n\r\n")
            trickle = b"[" * 1000
        else:
            trickle = b"POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        try:
            for b in trickle:
                writer.write(bytes([b]))
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), 1.0)
                except asyncio.TimeoutError:
                    if stop.is_set():
                        break
                    continue
                cut.append(perf() - t0)     # answered (408) or closed: cut
                break
        except (ConnectionResetError, BrokenPipeError):
            cut.append(perf() - t0)
        finally:
            writer.close()


def pressure_main(host, port, n, spread):
    """``--pressure HOST PORT N``: N slow connections, each opened again when
    the server cuts it, until SIGINT, their first openings spread over
    ``spread`` seconds; prints the cut times as JSON."""
    async def run():
        stop, cut = asyncio.Event(), []
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
        await asyncio.gather(*(_slow(host, port, i % 2 == 1, stop, cut, spread * i / n)
                               for i in range(n)))
        return cut
    print(json.dumps(asyncio.run(run())), flush=True)


def main():
    p = parser(__doc__.splitlines()[0], repeats=1)
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--slow", type=int, default=500)
    p.add_argument("--header-timeout", type=float, default=2.0)
    p.add_argument("--body-timeout", type=float, default=2.0)
    args = parse(p)
    folder = tempfile.mkdtemp(prefix="aiond-slow-")
    prefix, x, want = _export(folder)
    proc = subprocess.Popen(
        [sys.executable, "-m", "aiond.serve", "--symbol", prefix + "-symbol.json", "--params",
         prefix + "-0000.params", "--input-shape", "1,8", "--host", "127.0.0.1", "--port", "0",
         "--log-level", "warning", "--header-timeout", str(args.header_timeout),
         "--body-timeout", str(args.body_timeout),
         "--max-connections-per-client", str(args.slow + 100)],
        cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = None
        while url is None:
            line = proc.stderr.readline()
            if not line:
                raise RuntimeError("the server did not start (rc=%s)" % proc.poll())
            if "listening on http://" in line:
                url = line.strip().rsplit(" ", 1)[-1]
        host, port = url.rsplit("//", 1)[1].rsplit(":", 1)
        port = int(port)
        asyncio.run(_normal(url, x, want, 50))          # warm
        fd0, rss0 = _fds(proc.pid), _rss_mb(proc.pid)
        alone = asyncio.run(_normal(url, x, want, args.requests))
        log("bench_slow_clients: alone p99 %.2f ms" % (_pct(alone, 99) * 1e3))

        # the slow clients in a process of their own, so that their 500
        # coroutines do not delay the normal client's event loop
        pressure = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--pressure", host, str(port),
             str(args.slow), str(max(args.header_timeout, args.body_timeout))],
            stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(max(args.header_timeout, args.body_timeout) + 1.0)
            peak_fd, peak_rss = _fds(proc.pid), _rss_mb(proc.pid)
            with_slow = asyncio.run(_normal(url, x, want, args.requests))
        finally:
            pressure.send_signal(signal.SIGINT)
            out, _ = pressure.communicate(timeout=60)
        cut = json.loads(out.strip().splitlines()[-1])
        time.sleep(1.0)
        fd1, rss1 = _fds(proc.pid), _rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    ms = lambda v: round(v * 1e3, 3)  # noqa: E731
    res = {"alone": {"p50_ms": ms(_pct(alone, 50)), "p99_ms": ms(_pct(alone, 99))},
           "beside_slow": {"p50_ms": ms(_pct(with_slow, 50)), "p99_ms": ms(_pct(with_slow, 99))},
           "slow_cut_s": {"n": len(cut), "p50": round(_pct(cut, 50), 3) if cut else None,
                          "max": round(max(cut), 3) if cut else None},
           "server_fds": {"before": fd0, "peak": peak_fd, "after": fd1},
           "server_rss_mb": {"before": rss0, "peak": peak_rss, "after": rss1}}
    deadline = max(args.header_timeout, args.body_timeout)
    targets = [
        target("normal client p99 beside %d slow / alone" % args.slow,
               round(_pct(with_slow, 99) / _pct(alone, 99), 3), "<=", 2.0),
        target("slowest cut of a slow connection, s", res["slow_cut_s"]["max"], "<=",
               deadline + 1.0),
        target("server descriptors after - before", fd1 - fd0, "<=", 0),
        target("server RSS after - before, MB", round(rss1 - rss0, 1), "<=", 30)]
    emit("slow_clients", args, res, targets,
         {"requests": args.requests, "slow": args.slow, "header_timeout": args.header_timeout,
          "body_timeout": args.body_timeout})


if __name__ == "__main__":
    if "--pressure" in sys.argv:
        i = sys.argv.index("--pressure")
        pressure_main(sys.argv[i + 1], int(sys.argv[i + 2]), int(sys.argv[i + 3]),
                      float(sys.argv[i + 4]))
    else:
        main()
