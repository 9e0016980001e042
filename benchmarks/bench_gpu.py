"""GPU benchmark: aiond on ``mx.gpu(0)`` against raw CuPy (and torch CUDA
where installed), in the same process. Prints ONE JSON line.

Without a GPU (no CuPy, or CuPy sees no device) it prints
``{"bench": "gpu", "skipped": "no GPU", ...}`` and exits 0.

Figures (medians over ``--repeats``):

* ``elementwise``: ``c = a + b`` on 2**26 float32, GB/s moved (3 arrays) for
  aiond and for ``cupy.add(a, b, out=c)``; target: aiond >= 90 % of CuPy;
* ``dispatch``: 10,000 tiny ``y = y + 1`` (64 elements), µs/op including the
  final read; the same loop on raw CuPy;
* ``chain``: 1,000 dependent ops then one read; the executor's counters
  give the host wake-ups (``launch_host_func``) during the chain (target 0:
  no host synchronization between GPU ops) and the ops launched;
* ``overlap``: a host->device copy of 256 MiB and a compute chain, alone
  and together: ``overlap = (t_copy + t_compute) / t_both`` (1: serial,
  up to 2: fully overlapped);
* ``mlp_step`` / ``cnn_step``: one Gluon training step (forward, backward,
  SGD update) in ms, and torch CUDA's for the same model when torch with
  CUDA is importable.

``--fake`` runs the script on the CuPy test double (``tests/fakecupy.py``):
it checks the script works on a machine without a GPU; its numbers mean
nothing and it says so (``"device": "fake"``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
perf = time.perf_counter


def _stats(xs):
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4),
            "max": round(max(xs), 4), "n": len(xs)}


def _device_info(fake):
    if fake:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
        import fakecupy
        fakecupy.install(1)
        return "fake (CuPy test double: numbers are meaningless)"
    try:
        import cupy
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no CuPy / driver / device
        return None, str(e)
    if n < 1:
        return None, "CuPy sees no device"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    return (name.decode() if isinstance(name, bytes) else str(name)), None


def _sync_raw(cp):
    cp.cuda.get_current_stream().synchronize()


def bench_elementwise(mx, cp, repeats, n):
    a = mx.nd.ones((n,), ctx=mx.gpu(0))
    b = mx.nd.ones((n,), ctx=mx.gpu(0))
    (a + b).wait_to_read()
    ra, rb = cp.ones((n,), dtype="float32"), cp.ones((n,), dtype="float32")
    rc = cp.empty_like(ra)
    inner = 20
    ours, raw = [], []
    for r in range(repeats + 1):
        order = (0, 1) if r % 2 else (1, 0)
        for which in order:
            if which == 0:
                t = perf()
                for _ in range(inner):
                    c = a + b
                c.wait_to_read()
                dt = perf() - t
                if r:
                    ours.append(3 * 4 * n * inner / dt / 1e9)
            else:
                _sync_raw(cp)
                t = perf()
                for _ in range(inner):
                    cp.add(ra, rb, out=rc)
                _sync_raw(cp)
                dt = perf() - t
                if r:
                    raw.append(3 * 4 * n * inner / dt / 1e9)
    assert float(c[0].asscalar()) == 2.0, "WRONG RESULT"
    ratio = [x / y for x, y in zip(ours, raw)]
    return {"n": n, "aiond_gbps": _stats(ours), "cupy_gbps": _stats(raw),
            "ratio": _stats(ratio), "target": 0.9, "met": statistics.median(ratio) >= 0.9}


def bench_dispatch(mx, cp, repeats, ops=10000):
    ours, raw = [], []
    for r in range(repeats + 1):
        y = mx.nd.zeros((64,), ctx=mx.gpu(0))
        y.wait_to_read()
        t = perf()
        for _ in range(ops):
            y = y + 1
        v = y.asnumpy()
        dt = perf() - t
        assert v[0] == ops, "WRONG RESULT"
        ry = cp.zeros((64,), dtype="float32")
        _sync_raw(cp)
        t2 = perf()
        for _ in range(ops):
            ry = ry + 1
        rv = cp.asnumpy(ry)
        dt2 = perf() - t2
        assert rv[0] == ops, "WRONG RESULT"
        if r:
            ours.append(dt / ops * 1e6)
            raw.append(dt2 / ops * 1e6)
    return {"ops": ops, "aiond_us_per_op": _stats(ours), "cupy_us_per_op": _stats(raw)}


def bench_chain(mx, repeats, ops=1000):
    from aiond.engine import gpu as g
    ex = g.executor(mx.gpu(0))
    wake, launched, times = [], [], []
    for r in range(repeats + 1):
        y = mx.nd.zeros((1024,), ctx=mx.gpu(0))
        y.wait_to_read()
        h0, l0 = ex.host_wakeups, ex.launched
        t = perf()
        for _ in range(ops):
            y = y * 1.0001 + 1
        mid_wakeups = ex.host_wakeups - h0
        v = y.asnumpy()
        dt = perf() - t
        assert abs(float(v[0]) - sum(1.0001 ** k for k in range(ops))) < 1e-2 * ops, \
            "WRONG RESULT"
        if r:
            wake.append(mid_wakeups)
            launched.append(ex.launched - l0)
            times.append(dt * 1e3)
    return {"ops": 2 * ops, "ms": _stats(times), "host_wakeups_during_chain": max(wake),
            "ops_launched": statistics.median(launched), "target": 0,
            "met": max(wake) == 0}


def bench_overlap(mx, np, repeats, mib=256):
    n = mib * (1 << 20) // 4
    host = np.ones((n,), dtype=np.float32)
    x = mx.nd.ones((1 << 22,), ctx=mx.gpu(0))

    def copy():
        a = mx.nd.array(host, ctx=mx.gpu(0))
        return a

    def compute():
        y = x
        for _ in range(200):
            y = y * 1.0001
        return y
    res = []
    tc, tk, tb = [], [], []
    for r in range(repeats + 1):
        mx.nd.waitall()
        t = perf()
        copy().wait_to_read()
        t_copy = perf() - t
        t = perf()
        compute().wait_to_read()
        t_comp = perf() - t
        t = perf()
        a = copy()
        y = compute()
        a.wait_to_read()
        y.wait_to_read()
        t_both = perf() - t
        if r:
            tc.append(t_copy * 1e3)
            tk.append(t_comp * 1e3)
            tb.append(t_both * 1e3)
            res.append((t_copy + t_comp) / t_both)
    return {"copy_ms": _stats(tc), "compute_ms": _stats(tk), "both_ms": _stats(tb),
            "overlap": _stats(res)}


def _gluon_step(mx, kind, batch):
    from aiond import autograd, gluon
    net = gluon.nn.HybridSequential()
    if kind == "mlp":
        net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(10))
        shape = (batch, 784)
    else:
        net.add(gluon.nn.Conv2D(32, 3, activation="relu"), gluon.nn.MaxPool2D(),
                gluon.nn.Conv2D(64, 3, activation="relu"), gluon.nn.MaxPool2D(),
                gluon.nn.Flatten(), gluon.nn.Dense(10))
        shape = (batch, 1, 28, 28)
    ctx = mx.gpu(0)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = mx.nd.random.uniform(shape=shape, ctx=ctx)
    y = mx.nd.array([i % 10 for i in range(batch)], ctx=ctx)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        return loss
    return step


def _torch_step(kind, batch):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dev = torch.device("cuda:0")
    if kind == "mlp":
        net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                  torch.nn.Linear(256, 10)).to(dev)
        x = torch.rand(batch, 784, device=dev)
    else:
        net = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                  torch.nn.Conv2d(32, 64, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                  torch.nn.Flatten(), torch.nn.Linear(64 * 5 * 5, 10)).to(dev)
        x = torch.rand(batch, 1, 28, 28, device=dev)
    y = torch.arange(batch, device=dev) % 10
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, torch.cuda.synchronize


def bench_train(mx, kind, repeats, batch=128, steps=20):
    step = _gluon_step(mx, kind, batch)
    step().wait_to_read()
    ours = []
    for r in range(repeats + 1):
        t = perf()
        for _ in range(steps):
            loss = step()
        loss.wait_to_read()
        if r:
            ours.append((perf() - t) / steps * 1e3)
    out = {"batch": batch, "aiond_ms_per_step": _stats(ours)}
    ts = _torch_step(kind, batch)
    if ts is not None:
        tstep, tsync = ts
        tstep()
        tsync()
        theirs = []
        for r in range(repeats + 1):
            t = perf()
            for _ in range(steps):
                tstep()
            tsync()
            if r:
                theirs.append((perf() - t) / steps * 1e3)
        out["torch_ms_per_step"] = _stats(theirs)
        out["ratio_vs_torch"] = round(statistics.median(ours) / statistics.median(theirs), 3)
    else:
        out["torch_ms_per_step"] = None
    out["mxnet_cu12"] = None    # MXNet 1.9.1 has no CUDA 12 wheel to compare with
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--fake", action="store_true",
                   help="run on the CuPy test double (checks the script, numbers meaningless)")
    p.add_argument("--tag", default="")
    args = p.parse_args()
    if args.fake:
        device, why = _device_info(True), None
    else:
        device, why = _device_info(False)
    head = {"bench": "gpu", "tag": args.tag, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                       time.gmtime())}
    if device is None:
        head["skipped"] = "no GPU: %s" % why
        print(json.dumps(head))
        return 0
    import numpy as np
    import cupy as cp
    import aiond as mx
    head["device"] = device
    head["versions"] = {"python": sys.version.split()[0], "numpy": np.__version__,
                        "cupy": getattr(cp, "__version__", "?")}
    small = args.fake
    res = {}
    res["elementwise"] = bench_elementwise(mx, cp, args.repeats, 1 << (16 if small else 26))
    res["dispatch"] = bench_dispatch(mx, cp, args.repeats, 500 if small else 10000)
    res["chain"] = bench_chain(mx, args.repeats, 100 if small else 1000)
    res["overlap"] = bench_overlap(mx, np, args.repeats, 4 if small else 256)
    res["mlp_step"] = bench_train(mx, "mlp", args.repeats, steps=2 if small else 20)
    res["cnn_step"] = bench_train(mx, "cnn", args.repeats, batch=16 if small else 128,
                                  steps=1 if small else 20)
    from aiond.engine import gpu as g
    res["executor"] = g.executor(mx.gpu(0)).statistics()
    head["results"] = res
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
