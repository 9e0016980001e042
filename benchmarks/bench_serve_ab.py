"""A/B of aiond server options over real sockets: each variant is its own
server process (benchmarks/_serve_peer.py aiond ARGS), the load generator
another (benchmarks/_loadgen.py, 64 connections, batch-1); the variants run
alternately, so a shared machine's noise falls on all of them alike.

    .venv/bin/python benchmarks/bench_serve_ab.py [--mode v2_binary] [--repeats 4] \\
        "chunk64=--deliver-chunk 64" "chunk8=--deliver-chunk 8"

Prints one JSON line: per variant and repeat req/s, latency p99 (ms), the
server's loop lag p99 (ms), the server process's CPU time per request (µs:
the figure least moved by other processes on a shared machine) and the mean
batch size; medians per variant.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import log  # noqa: E402
from bench_serve import _PeerServer, _cpu_s, inputs, make_weights, numpy_forward  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("variants", nargs="+", help="NAME=server args")
    p.add_argument("--mode", default="v2_binary")
    p.add_argument("--repeats", type=int, default=4)
    p.add_argument("--duration", type=float, default=2.5)
    p.add_argument("--clients", type=int, default=64)
    a = p.parse_args()
    x = inputs(1)[0]
    ref = numpy_forward(make_weights())(x)
    servers = {}
    try:
        for v in a.variants:
            name, _, args = v.partition("=")
            servers[name] = _PeerServer(sys.executable, "aiond", args.split())
        res = {n: [] for n in servers}
        for rep in range(a.repeats):
            order = list(servers.items())
            for name, srv in (order if rep % 2 == 0 else order[::-1]):
                log("bench_serve_ab:", name, "repeat", rep)
                args = {"port": srv.port, "clients": a.clients, "duration": a.duration,
                        "mode": a.mode, "x": x.ravel().tolist(), "ref": ref.ravel().tolist()}
                srv.get("/_lag/start")
                c0 = _cpu_s(srv.proc.pid)
                out = subprocess.run([sys.executable, os.path.join(HERE, "_loadgen.py"),
                                      json.dumps(args)], capture_output=True, text=True,
                                     timeout=300)
                cpu = _cpu_s(srv.proc.pid) - c0
                lag = srv.get("/_lag/stop")
                r = json.loads(out.stdout)
                if r["wrong_outputs"] or r["errors"]:
                    raise AssertionError("WRONG RESULT: %s: %r" % (name, r))
                res[name].append({"rps": round(r["rps"]), "lat_p99_ms": round(r["lat_p99_ms"], 1),
                                  "lag_p99_ms": round(lag["lag_p99_ms"], 2),
                                  "cpu_us_per_req": round(1e6 * cpu / r["requests"], 1),
                                  "mean_batch_size": lag.get("mean_batch_size")})
        med = {n: {k: statistics.median(r[k] for r in rr)
                   for k in ("rps", "lat_p99_ms", "lag_p99_ms", "cpu_us_per_req")}
               for n, rr in res.items()}
        print(json.dumps({"bench": "serve_ab", "mode": a.mode, "variants": a.variants,
                          "loadavg": os.getloadavg(), "repeats": res, "median": med}))
    finally:
        for s in servers.values():
            s.close()


if __name__ == "__main__":
    main()
