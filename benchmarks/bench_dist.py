"""Distributed kvstore on 2 ranks (issue 13): prints one JSON line.

    python benchmarks/bench_dist.py [--repeats 3] [--torch-python /tmp/conv-torch/bin/python]

The driver launches, for every repeat and in alternating order, the
workloads under ``<venv>/bin/mpiexec -n 2`` (and torch.distributed's gloo
with 2 processes), and reports the median of each figure and of each ratio
taken within a repeat:

* ``4MB``: push+pull (``pushpull``) of one 4 MB float32 key, ms per call
  (each call waited for), vs raw mpi4py ``Allreduce`` of the same buffer
  and torch.distributed gloo ``all_reduce``;
* ``small_keys``: one ``pushpull`` of 100 keys of 4 KB (fused) vs one key
  of the same 400 KB, vs raw ``Allreduce`` of 400 KB, and vs 100 separate
  pushpull calls;
* ``mlp``: data-parallel MLP training (``gluon.Trainer(kvstore='dist_sync')``,
  one engine worker per rank, ``AIOND_CPU_WORKERS=1``), samples/s of 2
  ranks vs 1 rank, per-rank batch fixed.
"""
from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ITERS = 60


def _median_ms(ts):
    ts = sorted(ts[len(ts) // 6:])
    return statistics.median(ts) * 1e3


# ---------------------------------------------------------------- workers
def w_raw():
    from mpi4py import MPI
    import numpy as np
    c = MPI.COMM_WORLD
    out = {}
    for name, n in (("4MB", 1 << 20), ("400KB", 102400)):
        a = np.ones(n, np.float32)
        b = np.empty_like(a)
        ts = []
        for _ in range(ITERS):
            c.Barrier()
            t = time.perf_counter()
            c.Allreduce(a, b)
            ts.append(time.perf_counter() - t)
        assert b[0] == c.size
        out[name] = _median_ms(ts)
    return out


def w_aiond():
    import numpy as np
    import aiond as mx
    kv = mx.kv.create("dist_sync")
    n = kv.num_workers
    out = {}

    def timed(fn, check):
        ts = []
        for _ in range(ITERS):
            kv._barrier()
            mx.nd.waitall()
            t = time.perf_counter()
            fn()
            check.wait_to_read()
            ts.append(time.perf_counter() - t)
        return _median_ms(ts)

    a = mx.nd.ones((1 << 20,))
    kv.init(0, a)
    out["4MB"] = timed(lambda: kv.pushpull(0, a, out=a), a)
    keys = list(range(100, 200))
    vals = [mx.nd.ones((1024,)) for _ in keys]
    kv.init(keys, vals)
    out["100x4KB_fused"] = timed(lambda: kv.pushpull(keys, vals, out=vals), vals[-1])

    def separate():
        for k, v in zip(keys, vals):
            kv.pushpull(k, v, out=v)
    out["100x4KB_separate"] = timed(separate, vals[-1])
    one = mx.nd.ones((102400,))
    kv.init(1, one)
    out["400KB"] = timed(lambda: kv.pushpull(1, one, out=one), one)
    v = mx.nd.ones((1 << 20,))
    kv.pushpull(0, v)
    assert np.allclose(v.asnumpy(), n)
    return out


def w_mlp():
    import numpy as np
    import aiond as mx
    from aiond import autograd, gluon
    kv = mx.kv.create("dist_sync")
    batch, din, hidden, steps = 128, 512, 1024, 20
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(hidden, activation="relu"), gluon.nn.Dense(hidden, activation="relu"),
            gluon.nn.Dense(10))
    mx.random.seed(0)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01},
                            kvstore=kv)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rs = np.random.RandomState(kv.rank)
    x = mx.nd.array(rs.randn(batch, din))
    y = mx.nd.array(rs.randint(0, 10, batch))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch * kv.num_workers)
    for _ in range(3):
        step()
    mx.nd.waitall()
    kv._barrier()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    mx.nd.waitall()
    kv._barrier()
    dt = time.perf_counter() - t
    return {"samples_per_s": batch * kv.num_workers * steps / dt, "ranks": kv.num_workers}


def w_torch():
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    out = {}
    for name, n in (("4MB", 1 << 20), ("400KB", 102400)):
        t_ = torch.ones(n)
        ts = []
        for _ in range(ITERS):
            dist.barrier()
            t = time.perf_counter()
            dist.all_reduce(t_)
            ts.append(time.perf_counter() - t)
        out[name] = _median_ms(ts)
    dist.destroy_process_group()
    return out


WORKERS = {"raw": w_raw, "aiond": w_aiond, "mlp": w_mlp, "torch": w_torch}


def worker_main(name):
    res = WORKERS[name]()
    rank = int(os.environ.get("PMI_RANK", os.environ.get("RANK", "0")))
    if rank == 0:
        print("RESULT " + json.dumps(res), flush=True)


# ---------------------------------------------------------------- driver
def _result(stdout):
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError("no result in:\n" + stdout)


def _mpi(n, name, env=None):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([mpiexec, "-n", str(n), sys.executable, __file__, "--worker", name],
                       env=e, capture_output=True, text=True, timeout=600)
    if p.returncode:
        raise RuntimeError(p.stdout + p.stderr)
    return _result(p.stdout)


def _torch(py):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(2):
        e = dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([py, __file__, "--worker", "torch"], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=600) for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError("\n".join(o + e for o, e in outs))
    return _result(outs[0][0])


def main():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--worker")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--torch-python", default="/tmp/conv-torch/bin/python")
    args = p.parse_args()
    if args.worker:
        worker_main(args.worker)
        return
    have_torch = os.path.exists(args.torch_python)
    try:
        load0 = os.getloadavg()
    except OSError:
        load0 = None
    rows = []
    for rep in range(args.repeats):
        order = ["raw", "aiond", "torch"] if rep % 2 == 0 else ["torch", "aiond", "raw"]
        got = {}
        for w in order:
            if w == "torch":
                if have_torch:
                    got["torch"] = _torch(args.torch_python)
            else:
                got[w] = _mpi(2, w)
        one = _mpi(1, "mlp", {"AIOND_CPU_WORKERS": "1"})
        two = _mpi(2, "mlp", {"AIOND_CPU_WORKERS": "1"})
        a, r = got["aiond"], got["raw"]
        row = {
            "aiond_4MB_ms": a["4MB"], "raw_mpi_4MB_ms": r["4MB"],
            "ratio_4MB_vs_raw": a["4MB"] / r["4MB"],
            "aiond_100x4KB_fused_ms": a["100x4KB_fused"],
            "aiond_100x4KB_separate_ms": a["100x4KB_separate"],
            "aiond_400KB_one_key_ms": a["400KB"], "raw_mpi_400KB_ms": r["400KB"],
            "ratio_100keys_vs_one_key": a["100x4KB_fused"] / a["400KB"],
            "ratio_100keys_vs_raw_400KB": a["100x4KB_fused"] / r["400KB"],
            "mlp_1rank_samples_s": one["samples_per_s"],
            "mlp_2rank_samples_s": two["samples_per_s"],
            "mlp_speedup_2_vs_1": two["samples_per_s"] / one["samples_per_s"],
        }
        if "torch" in got:
            t = got["torch"]
            row.update({"torch_gloo_4MB_ms": t["4MB"], "torch_gloo_400KB_ms": t["400KB"],
                        "ratio_4MB_vs_torch_gloo": a["4MB"] / t["4MB"]})
        rows.append(row)
        print(json.dumps({"repeat": rep, **row}), file=sys.stderr, flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    print(json.dumps({"bench": "dist", "repeats": args.repeats, "median": med,
                      "min": {k: min(r[k] for r in rows) for k in rows[0]},
                      "max": {k: max(r[k] for r in rows) for k in rows[0]},
                      "loadavg_at_start": load0, "loadavg_at_end": load,
                      "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
