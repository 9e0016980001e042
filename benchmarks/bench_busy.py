"""Speed on a busy machine: each workload quiet and beside background work.

A runtime on a shared machine must lose no more than its fair share: this
runs the same workloads quiet and beside the neighbours real machines have,
each started and stopped here, for aiond, numpy, MXNet 1.9.1 and torch in
one run.

Rows (per-iteration seconds are recorded; each figure is the mean and
p50/p90 of one cell):
  mlp         hybridized Gluon MLP 784-256-10 (ReLU), batch 32, softmax CE,
              SGD lr 0.1, one training step then a wait (numpy: the same
              step written by hand; torch: nn.Sequential + optim.SGD)
  fit         ``mx.mod.Module.fit`` over NDArrayIter (2,048 x 784, batch 32,
              metric 'acc'): the time between two batch_end_callbacks
  lenet       hybridized Gluon LeNet training step, batch 64 (torch: eager)
  resnet_b1   resnet18_v1 inference, batch 1, 224x224 (bench_convnet's models)
  resnet_b16  the same at batch 16
  serve       an asyncio server's batch-1 requests: 16 closed-loop clients,
              MLP 784-1024-1024-10 forward per request (aiond: ``await
              y.read()``; MXNet: push on the loop, ``asnumpy`` in an executor;
              numpy and torch: the forward in an executor); request latency
Loads (background processes, killed after the cell; each also ends itself):
  quiet       nothing (measured before and after the loaded cells of a row)
  busy0       a plain Python busy loop, nice 0 (one CPU-bound neighbour)
  gemm0       numpy GEMMs in a loop (numpy's multi-threaded BLAS), nice 0
  gemm19      the same at nice 19
  twin0       a second process of the same backend running the same row, nice 0
  twin19      the same at nice 19
  loader      a Gluon DataLoader with 2 worker processes doing numpy transforms
Ratios are a cell's mean over the quiet cells' mean of the same process.
Targets for aiond (issue 30): ratio <= MXNet's ratio x 1.1 on every row and
load, p90 <= 1.5 x p50, ratio <= 2.2 beside one nice-0 CPU-bound process,
<= 1.2 beside a nice-19 one.

    .venv/bin/python benchmarks/bench_busy.py [--mxnet-python P] [--torch-python P]
        [--rows mlp,fit,...] [--loads busy0,gemm19,...] [--backends aiond,numpy,mxnet,torch]
    (backend mxnet2: MXNet with OMP_NUM_THREADS=2, both cores as aiond uses them)
        [--seconds 1.5]
"""
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import emit, log, parse, parser, target  # noqa: E402

perf = time.perf_counter
ROWS = ("mlp", "fit", "lenet", "resnet_b1", "resnet_b16", "serve")
LOADS = ("busy0", "gemm0", "gemm19", "twin0", "twin19", "loader")
NICE19 = ("gemm19", "twin19")
LOAD_LIFETIME = 300         # seconds a background process lives at most
MIN_ITERS = {"resnet_b16": 4, "resnet_b1": 10, "fit": 20, "serve": 50}
SUPPORTS = {"numpy": ("mlp", "serve"), "torch": ("mlp", "lenet", "resnet_b1", "resnet_b16", "serve")}
# "mxnet2": MXNet with OMP_NUM_THREADS=2, on both cores as aiond is (MXNet's
# defaults keep its kernels on about one core of this 2-vCPU machine)
VARIANTS = {"mxnet2": ("mxnet", {"OMP_NUM_THREADS": "2"})}


def _lib_env(backend):
    """(the library a backend runs, its environment)."""
    lib, extra = VARIANTS.get(backend, (backend, {}))
    return lib, dict(os.environ, **extra)


def percentile(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


# ------------------------------------------------------------------ workloads
# Each maker returns ``step()``: one iteration, finished (result waited for).

def _mlp_data(batch=32):
    rs = np.random.RandomState(0)
    X = rs.rand(8, batch, 784).astype(np.float32)
    y = rs.randint(0, 10, (8, batch)).astype(np.int64)
    return X, y


def mx_mlp(mx):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation="relu", in_units=784), nn.Dense(10, in_units=256))
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    net.hybridize()
    lossf = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    X, y = _mlp_data()
    data = [(mx.nd.array(X[i]), mx.nd.array(y[i].astype(np.float32))) for i in range(8)]
    it = [0]

    def step():
        x, t = data[it[0] % 8]
        it[0] += 1
        with mx.autograd.record():
            loss = lossf(net(x), t)
        loss.backward()
        trainer.step(32)
        mx.nd.waitall()
    return step


def np_mlp(_):
    rs = np.random.RandomState(1)
    W1 = (rs.randn(784, 256) * 0.05).astype(np.float32)
    b1 = np.zeros(256, np.float32)
    W2 = (rs.randn(256, 10) * 0.05).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    X, y = _mlp_data()
    it = [0]

    def step():
        nonlocal W1, b1, W2, b2
        x, t = X[it[0] % 8], y[it[0] % 8]
        it[0] += 1
        h = np.maximum(x @ W1 + b1, 0)
        z = h @ W2 + b2
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        p[np.arange(32), t] -= 1
        dh = (p @ W2.T) * (h > 0)
        lr = np.float32(0.1 / 32)
        W2 -= lr * (h.T @ p)
        b2 -= lr * p.sum(0)
        W1 -= lr * (x.T @ dh)
        b1 -= lr * dh.sum(0)
    return step


def torch_mlp(torch):
    tnn = torch.nn
    net = tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    lossf = tnn.CrossEntropyLoss()
    X, y = _mlp_data()
    data = [(torch.from_numpy(X[i]), torch.from_numpy(y[i])) for i in range(8)]
    it = [0]

    def step():
        x, t = data[it[0] % 8]
        it[0] += 1
        opt.zero_grad()
        lossf(net(x), t).backward()
        opt.step()
    return step


def mx_fit(mx):
    """Per-batch intervals of Module.fit: ``step()`` runs one epoch and
    returns the intervals between its batch_end_callbacks."""
    import logging
    logging.getLogger().setLevel(logging.WARNING)
    rs = np.random.RandomState(0)
    X = rs.rand(2048, 784).astype(np.float32)
    y = rs.randint(0, 10, 2048).astype(np.float32)
    it = mx.io.NDArrayIter(X, y, batch_size=32, shuffle=True, label_name="softmax_label")
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=256, name="fc1")
    net = mx.sym.Activation(net, act_type="relu")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    marks = []

    def cb(_param):
        marks.append(perf())

    def epoch():
        del marks[:]
        marks.append(perf())
        it.reset()
        mod.fit(it, num_epoch=1, optimizer="sgd", optimizer_params={"learning_rate": 0.1},
                eval_metric="acc", batch_end_callback=cb, force_init=False,
                initializer=mx.init.Xavier())
        mx.nd.waitall()
        return [b - a for a, b in zip(marks, marks[1:])]
    epoch.per_batch = True
    return epoch


def mx_lenet(mx):
    import bench_convnet as bc
    net = bc.mx_lenet(mx, hybridize=True)
    lossf = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    data = [(mx.nd.array(x), mx.nd.array(t.astype(np.float32))) for x, t in bc.lenet_data()]
    it = [0]

    def step():
        x, t = data[it[0] % len(data)]
        it[0] += 1
        with mx.autograd.record():
            loss = lossf(net(x), t)
        loss.backward()
        trainer.step(x.shape[0])
        mx.nd.waitall()
    return step


def torch_lenet(torch):
    import bench_convnet as bc
    tnn = torch.nn
    net = tnn.Sequential(tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
                         tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                         tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    lossf = tnn.CrossEntropyLoss()
    data = [(torch.from_numpy(x), torch.from_numpy(t)) for x, t in bc.lenet_data()]
    it = [0]

    def step():
        x, t = data[it[0] % len(data)]
        it[0] += 1
        opt.zero_grad()
        lossf(net(x), t).backward()
        opt.step()
    return step


def _mx_resnet(batch):
    def make(mx):
        import bench_convnet as bc
        net = bc.mx_resnet(mx)
        x = mx.nd.array(bc.images(batch))

        def step():
            net(x).wait_to_read()
        return step
    return make


def _torch_resnet(batch):
    def make(torch):
        import bench_convnet as bc
        net = bc.torch_resnet18_v1(torch.nn).eval()
        x = torch.from_numpy(bc.images(batch))

        def step():
            with torch.inference_mode():
                net(x)
        return step
    return make


SERVE_SIZES = (784, 1024, 1024, 10)
SERVE_CLIENTS = 16


def _serve_weights():
    rs = np.random.RandomState(2)
    return [((rs.rand(o, i).astype(np.float32) - 0.5) * np.float32(2 * np.sqrt(3.0 / i)),
             np.zeros(o, np.float32)) for i, o in zip(SERVE_SIZES[:-1], SERVE_SIZES[1:])]


def _serve(backend, lib):
    """``run(seconds)`` -> request latencies: SERVE_CLIENTS closed-loop
    clients on one asyncio loop, a batch-1 forward per request."""
    from concurrent.futures import ThreadPoolExecutor
    ws = _serve_weights()
    pool = ThreadPoolExecutor()
    if backend in ("aiond", "mxnet"):
        mx = lib
        nn = mx.gluon.nn
        net = nn.HybridSequential()
        for k, (W, b) in enumerate(ws):
            net.add(nn.Dense(W.shape[0], in_units=W.shape[1],
                             activation="relu" if k < len(ws) - 1 else None))
        net.initialize(ctx=mx.cpu())
        for k, (W, b) in enumerate(ws):
            net[k].weight.set_data(mx.nd.array(W))
            net[k].bias.set_data(mx.nd.array(b))
        net.hybridize()
        if backend == "aiond":
            async def forward(x):
                return await net(mx.nd.array(x)).read()
        else:
            async def forward(x):
                y = net(mx.nd.array(x))
                return await asyncio.get_running_loop().run_in_executor(pool, y.asnumpy)
    elif backend == "torch":
        torch = lib
        tws = [(torch.from_numpy(W), torch.from_numpy(b)) for W, b in ws]

        def fwd(x):
            with torch.inference_mode():
                h = torch.from_numpy(x)
                for k, (W, b) in enumerate(tws):
                    h = torch.nn.functional.linear(h, W, b)
                    if k < len(tws) - 1:
                        h = h.relu()
                return h.numpy()

        async def forward(x):
            return await asyncio.get_running_loop().run_in_executor(pool, fwd, x)
    else:
        def fwd(x):
            for k, (W, b) in enumerate(ws):
                x = x @ W.T + b
                if k < len(ws) - 1:
                    x = np.maximum(x, 0)
            return x

        async def forward(x):
            return await asyncio.get_running_loop().run_in_executor(pool, fwd, x)
    xs = np.random.RandomState(3).rand(SERVE_CLIENTS, 1, 784).astype(np.float32)

    def run(seconds):
        lat = []

        async def client(i, end):
            while perf() < end:
                await asyncio.sleep(0)          # as a network read would
                t0 = perf()
                out = await forward(xs[i])
                lat.append(perf() - t0)
                if out.shape != (1, 10):
                    raise AssertionError("WRONG RESULT: serve output shape %s" % (out.shape,))

        async def main():
            end = perf() + seconds
            await asyncio.gather(*(client(i, end) for i in range(SERVE_CLIENTS)))
        asyncio.run(main())
        return lat
    run.timed_by_itself = True
    return run


MAKERS = {
    "aiond": {"mlp": mx_mlp, "fit": mx_fit, "lenet": mx_lenet, "resnet_b1": _mx_resnet(1),
              "resnet_b16": _mx_resnet(16)},
    "numpy": {"mlp": np_mlp},
    "torch": {"mlp": torch_mlp, "lenet": torch_lenet, "resnet_b1": _torch_resnet(1),
              "resnet_b16": _torch_resnet(16)},
}
MAKERS["mxnet"] = MAKERS["aiond"]


def _import(backend):
    if backend == "aiond":
        import aiond
        return aiond
    if backend == "mxnet":
        import mxnet
        return mxnet
    if backend == "torch":
        import torch
        return torch
    return np


class Workloads:
    """The rows of one backend, built once each, run for a time budget."""

    def __init__(self, backend):
        self.backend = backend
        self.lib = _import(backend)
        self.made = {}

    def get(self, row):
        if row not in self.made:
            self.made[row] = (_serve(self.backend, self.lib) if row == "serve"
                              else MAKERS[self.backend][row](self.lib))
        return self.made[row]

    def run(self, row, seconds, warm):
        fn = self.get(row)
        if getattr(fn, "timed_by_itself", False):
            fn(warm)
            return fn(seconds)
        per_batch = getattr(fn, "per_batch", False)
        end = perf() + warm
        while perf() < end:
            fn()
        times = []
        least = MIN_ITERS.get(row, 30)
        end = perf() + seconds
        while perf() < end or len(times) < least:
            t0 = perf()
            r = fn()
            if per_batch:
                times.extend(r)
            else:
                times.append(perf() - t0)
        return times

    def loop(self, row, until):
        """As a background neighbour: run ``row`` until ``until``."""
        fn = self.get(row)
        first = True
        while time.time() < until:
            if getattr(fn, "timed_by_itself", False):
                fn(0.5)
            else:
                fn()
            if first:
                print("ready", flush=True)
                first = False


def worker_main(backend):
    """A backend's process: one JSON command a line on stdin, one JSON
    answer a line on stdout."""
    w = Workloads(backend)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            times = w.run(cmd["row"], cmd["seconds"], cmd["warm"])
            ans = {"times": times}
        except Exception as e:  # noqa: BLE001 - reported to the driver
            ans = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


# ------------------------------------------------------------------ loads
_BUSY = "import time\nend = time.time() + %d\nwhile time.time() < end:\n    pass\n"
_GEMM = ("import time, numpy as np\nend = time.time() + %d\n"
         "a = np.random.rand(384, 384).astype(np.float32)\n"
         "while time.time() < end:\n    a @ a\n")
_LOADER = r"""
import sys, time
sys.path.insert(0, %(here)r)
import numpy as np
import aiond as mx
from aiond.gluon.data import ArrayDataset, DataLoader

def transform(x, y):
    x = x[:, ::-1, :].astype(np.float32) / 255.0
    x = (x - x.mean()) / (x.std() + 1e-6)
    return np.ascontiguousarray(np.transpose(x, (2, 0, 1))), y

if __name__ == "__main__":
    end = time.time() + %(life)d
    rs = np.random.RandomState(0)
    ds = ArrayDataset(rs.randint(0, 255, (512, 96, 96, 3)).astype(np.uint8),
                      np.arange(512)).transform(transform)
    first = True
    while time.time() < end:
        for xb, yb in DataLoader(ds, batch_size=32, num_workers=2):
            if first:
                print("ready", flush=True)
                first = False
            if time.time() > end:
                break
"""


class Load:
    script = None

    def __init__(self, name, backend, python, row, seconds_life=LOAD_LIFETIME):
        self.name = name
        nice = ["nice", "-n", "19"] if name in NICE19 else []
        me = os.path.abspath(__file__)
        if name == "busy0":
            cmd = [sys.executable, "-c", _BUSY % seconds_life]
        elif name.startswith("gemm"):
            cmd = nice + [sys.executable, "-c", _GEMM % seconds_life]
        elif name.startswith("twin"):
            cmd = nice + [python, me, "--neighbour", _lib_env(backend)[0], "--neighbour-row",
                          row, "--neighbour-life", str(seconds_life)]
        elif name == "loader":
            # a file, not -c: the DataLoader's worker processes import the
            # script to find its transform
            import tempfile
            fd, path = tempfile.mkstemp(prefix="aiond_busy_loader_", suffix=".py")
            with os.fdopen(fd, "w") as f:
                f.write(_LOADER % {"here": HERE, "life": seconds_life})
            self.script = path
            cmd = [sys.executable, path]
        else:
            raise ValueError("unknown load %r" % name)
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  stdin=subprocess.DEVNULL, text=True, cwd=HERE,
                                  env=_lib_env(backend)[1])
        if name.startswith("twin") or name == "loader":
            line = self.p.stdout.readline()     # built and running
            if line.strip() != "ready":
                raise RuntimeError("load %s did not start (rc=%s)" % (name, self.p.poll()))
        time.sleep(0.3)

    def stop(self):
        self.p.kill()
        self.p.wait()
        if getattr(self, "script", None):
            os.unlink(self.script)


# ------------------------------------------------------------------ driver
class Worker:
    def __init__(self, backend, python):
        self.backend, self.python = backend, python
        lib, env = _lib_env(backend)
        self.p = subprocess.Popen([python, os.path.abspath(__file__), "--worker", lib],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  cwd=HERE, env=env)

    def run(self, row, seconds, warm):
        self.p.stdin.write(json.dumps({"row": row, "seconds": seconds, "warm": warm}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("%s worker died (rc=%s)" % (self.backend, self.p.wait()))
        ans = json.loads(line)
        if "error" in ans:
            raise RuntimeError("%s %s: %s" % (self.backend, row, ans["error"]))
        return ans["times"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


def cell(times):
    ms = [t * 1e3 for t in times]
    p50 = percentile(ms, 50)
    return {"n": len(ms), "mean_ms": round(statistics.fmean(ms), 4), "p50_ms": round(p50, 4),
            "p90_ms": round(percentile(ms, 90), 4),
            "p90_over_p50": round(percentile(ms, 90) / p50, 3) if p50 else None}


def measure_backend(backend, python, rows, loads, seconds):
    res = {}
    w = Worker(backend, python)
    try:
        for row in rows:
            if backend in SUPPORTS and row not in SUPPORTS[backend]:
                continue
            warm = 0.5 if row != "resnet_b16" else 1.0
            log("bench_busy: %s %s quiet" % (backend, row))
            quiet = w.run(row, seconds, warm)
            cells = {}
            for load in loads:
                log("bench_busy: %s %s beside %s" % (backend, row, load))
                ld = Load(load, backend, python, row)
                try:
                    cells[load] = w.run(row, seconds, 0.3)
                finally:
                    ld.stop()
            quiet += w.run(row, seconds, 0.3)       # the quiet cell again, after
            q = cell(quiet)
            out = {"quiet": q}
            for load, ts in cells.items():
                c = cell(ts)
                c["ratio_mean"] = round(c["mean_ms"] / q["mean_ms"], 3)
                c["ratio_p50"] = round(c["p50_ms"] / q["p50_ms"], 3)
                out[load] = c
            res[row] = out
    finally:
        w.close()
    return res


def judge(results):
    """issue 30's targets for aiond's cells."""
    out = []
    ai, mxr = results.get("aiond", {}), results.get("mxnet", {})
    mx2 = results.get("mxnet2", {})
    for row, cells in ai.items():
        for load, c in cells.items():
            if load == "quiet":
                continue
            name = "%s beside %s" % (row, load)
            m = mxr.get(row, {}).get(load)
            if m is not None:
                out.append(target(name + ": mean / quiet mean, <= MXNet's x 1.1",
                                  c["ratio_mean"], "<=", round(m["ratio_mean"] * 1.1, 3),
                                  mxnet=m["ratio_mean"]))
            m2 = mx2.get(row, {}).get(load)
            if m2 is not None:
                out.append(target(name + ": mean / quiet mean beside MXNet on both cores",
                                  c["ratio_mean"], mxnet=m2["ratio_mean"]))
            out.append(target(name + ": p90 / p50", c["p90_over_p50"], "<=", 1.5))
            if load == "busy0":
                out.append(target(name + ": mean / quiet mean (fair share)", c["ratio_mean"],
                                  "<=", 2.2))
            if load in NICE19:
                out.append(target(name + ": mean / quiet mean (nice 19)", c["ratio_mean"],
                                  "<=", 1.2))
    return out


def main():
    p = parser(__doc__.splitlines()[0], repeats=1)
    p.add_argument("--torch-python", metavar="PATH", default=None)
    p.add_argument("--rows", default=",".join(ROWS))
    p.add_argument("--loads", default=",".join(LOADS))
    p.add_argument("--backends", default="aiond,numpy,mxnet,torch")
    p.add_argument("--seconds", type=float, default=1.5,
                   help="seconds measured per cell (default %(default)s)")
    args = parse(p)
    rows = [r for r in args.rows.split(",") if r]
    loads = [x for x in args.loads.split(",") if x]
    for r in rows:
        if r not in ROWS:
            p.error("unknown row %r: expected some of %s" % (r, ", ".join(ROWS)))
    for x in loads:
        if x not in LOADS:
            p.error("unknown load %r: expected some of %s" % (x, ", ".join(LOADS)))
    pythons = {"aiond": sys.executable, "numpy": sys.executable,
               "mxnet": args.mxnet_python, "mxnet2": args.mxnet_python,
               "torch": args.torch_python}
    results = {}
    t0 = perf()
    for backend in args.backends.split(","):
        if not pythons.get(backend):
            log("bench_busy: no interpreter for %s, skipped" % backend)
            continue
        results[backend] = measure_backend(backend, pythons[backend], rows, loads, args.seconds)
    params = {"rows": rows, "loads": loads, "seconds": args.seconds,
              "wall_s": round(perf() - t0, 1)}
    emit("busy", args, results, judge(results), params)


def table(path):
    """Markdown: per row and load, each backend's mean ms (ratio to its own
    quiet mean) and aiond's p90/p50, from a bench_busy JSON line."""
    with open(path) as f:
        d = json.loads(f.read().strip().splitlines()[-1])
    res = d["results"]
    backends = [b for b in ("aiond", "mxnet", "mxnet2", "torch", "numpy") if b in res]
    print("| row | load | " + " | ".join(backends) + " | p90/p50 aiond | MXNet |")
    print("|---|---|" + "---|" * (len(backends) + 2))
    for row in d["params"]["rows"]:
        for load in ["quiet"] + d["params"]["loads"]:
            cells = []
            for b in backends:
                c = res[b].get(row, {}).get(load)
                if c is None:
                    cells.append("")
                elif load == "quiet":
                    cells.append("%.3g" % c["mean_ms"])
                else:
                    cells.append("%.3g (%.2f×)" % (c["mean_ms"], c["ratio_mean"]))
            tails = []
            for b in ("aiond", "mxnet"):
                c = res.get(b, {}).get(row, {}).get(load)
                tails.append("" if c is None else "%.2f" % c["p90_over_p50"])
            print("| %s | %s | %s | %s |" % (row, load, " | ".join(cells), " | ".join(tails)))


if __name__ == "__main__":
    if "--table" in sys.argv:
        table(sys.argv[sys.argv.index("--table") + 1])
    elif "--worker" in sys.argv:
        worker_main(sys.argv[sys.argv.index("--worker") + 1])
    elif "--neighbour" in sys.argv:
        a = sys.argv
        wl = Workloads(a[a.index("--neighbour") + 1])
        wl.loop(a[a.index("--neighbour-row") + 1], time.time() + float(a[a.index("--neighbour-life") + 1]))
    else:
        main()
