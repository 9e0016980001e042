"""Async-serving anchor: throughput, request latency and event-loop lag.

An asyncio app (plain asyncio, the default loop) runs N=64 concurrent
closed-loop clients for DURATION seconds.  Each request yields once (as a
network read would), then runs an MLP forward 784-1024-1024-10 (ReLU) on a
batch of 1 or 8 and awaits the logits as numpy.  A ticker coroutine sleeps
1 ms at a time and records how late it wakes: the event-loop lag that every
other connection of the server would also suffer.

Modes (`--backend` picks which run; numpy_executor always runs too, in the
same process, as the yardstick):
  numpy_blocking  forward in numpy called directly in the coroutine: blocks
                  the loop (the bad baseline; --backend numpy only)
  numpy_executor  `await loop.run_in_executor(pool, forward, x)` on a default
                  ThreadPoolExecutor (the common workaround)
  mxnet_executor  `y = net(nd.array(x))` on the loop (MXNet pushes
                  asynchronously), `await loop.run_in_executor(pool, y.asnumpy)`
  mxnet_executor_whole  `net(nd.array(x)).asnumpy()` entirely in the executor
                  (MXNet called from several threads at once)
  torch_executor  the whole torch forward (inference_mode) in the executor
  jax_executor    jit'd forward dispatched on the loop, np.asarray in the executor
  aiond_native    `y = net(mx.nd.array(x)); out = await y.read()`
All models share one set of numpy weights; every output is checked against
numpy (`wrong_outputs` counts mismatches: a concurrency bug shows there).

Per repeat: requests/s, p50/p99 request latency (ms), and loop lag p50/p99/max
(ms, beyond the 1 ms asked for).  Reported: median over repeats [min-max].
`idle_lag_ms` is the ticker alone: the floor set by the loop's timer.

Each run also counts Python's garbage collections (`gc.callbacks`): full
ones (`gc_full`), those over 2 ms (`gc_over_2ms`) and the longest pause.
`--gc-freeze` calls `gc.collect(); gc.freeze()` once the models are loaded
and checked, as `python -m aiond.serve` does before it listens.

Usage: python serve_lag.py --backend {numpy,mxnet,torch,jax,aiond} [--batch 1,8] [--gc-freeze]
"""
import asyncio
import gc
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from _common import emit, import_mx, log, parser, percentile, summary

perf = time.perf_counter
SIZES = (784, 1024, 1024, 10)
TICK = 0.001


def make_weights():
    rs = np.random.RandomState(2)
    ws = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        lim = np.sqrt(6.0 / (i + o))
        ws.append((rs.uniform(-lim, lim, (o, i)).astype(np.float32),
                   rs.uniform(-0.1, 0.1, o).astype(np.float32)))
    return ws


def numpy_forward(ws):
    def forward(x):
        for k, (W, b) in enumerate(ws):
            x = x @ W.T + b
            if k < len(ws) - 1:
                np.maximum(x, 0, out=x)
        return x
    return forward


def make_handlers(backend, ws, pool):
    """name -> async handler(x: np.ndarray) -> np.ndarray (logits)."""
    fwd_np = numpy_forward(ws)
    handlers = {}
    if backend == "numpy":
        async def numpy_blocking(x):
            return fwd_np(x)
        handlers["numpy_blocking"] = numpy_blocking

    async def numpy_executor(x):
        return await asyncio.get_running_loop().run_in_executor(pool, fwd_np, x)
    handlers["numpy_executor"] = numpy_executor

    if backend in ("mxnet", "aiond"):
        mx = import_mx(backend)
        nd, nn = mx.nd, mx.gluon.nn
        net = nn.HybridSequential()
        for k, (W, b) in enumerate(ws):
            net.add(nn.Dense(W.shape[0], in_units=W.shape[1],
                             activation="relu" if k < len(ws) - 1 else None))
        net.initialize(ctx=mx.cpu())
        for layer, (W, b) in zip(net, ws):
            layer.weight.set_data(nd.array(W))
            layer.bias.set_data(nd.array(b))
        net.hybridize()
        if backend == "mxnet":
            async def mxnet_executor(x):
                y = net(nd.array(x))
                return await asyncio.get_running_loop().run_in_executor(pool, y.asnumpy)
            handlers["mxnet_executor"] = mxnet_executor

            def fwd_mx(x):
                return net(nd.array(x)).asnumpy()

            async def mxnet_executor_whole(x):
                return await asyncio.get_running_loop().run_in_executor(pool, fwd_mx, x)
            handlers["mxnet_executor_whole"] = mxnet_executor_whole
        else:
            async def aiond_native(x):
                y = net(nd.array(x))
                return await y.read()
            handlers["aiond_native"] = aiond_native
    elif backend == "torch":
        import torch
        layers = []
        for k, (W, b) in enumerate(ws):
            lin = torch.nn.Linear(W.shape[1], W.shape[0])
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(W))
                lin.bias.copy_(torch.from_numpy(b))
            layers += [lin] + ([torch.nn.ReLU()] if k < len(ws) - 1 else [])
        net = torch.nn.Sequential(*layers).eval()

        def fwd_torch(x):
            with torch.inference_mode():  # thread-local: must be set in the worker
                return net(torch.from_numpy(x)).numpy()

        async def torch_executor(x):
            return await asyncio.get_running_loop().run_in_executor(pool, fwd_torch, x)
        handlers["torch_executor"] = torch_executor
    elif backend == "jax":
        import jax
        import jax.numpy as jnp
        params = [(jnp.asarray(W), jnp.asarray(b)) for W, b in ws]

        @jax.jit
        def fwd_jax(params, x):
            for k, (W, b) in enumerate(params):
                x = x @ W.T + b
                if k < len(params) - 1:
                    x = jnp.maximum(x, 0)
            return x

        async def jax_executor(x):
            y = fwd_jax(params, x)
            return await asyncio.get_running_loop().run_in_executor(pool, np.asarray, y)
        handlers["jax_executor"] = jax_executor
    return handlers


async def ticker(stop, lags):
    while not stop.is_set():
        t0 = perf()
        await asyncio.sleep(TICK)
        lags.append(perf() - t0 - TICK)


_GC = {"t0": 0.0, "pauses": []}


def _gc_timer(phase, info):
    if phase == "start":
        _GC["t0"] = perf()
    else:
        _GC["pauses"].append((info["generation"], perf() - _GC["t0"]))


async def run_once(handler, xs, refs, clients, duration):
    lat, lags, stop = [], [], asyncio.Event()
    wrong = [0]
    tick = asyncio.create_task(ticker(stop, lags))
    await asyncio.sleep(0.01)  # let the ticker settle
    del lags[:]  # count only ticks taken while the clients run
    del _GC["pauses"][:]
    t_start = perf()
    deadline = t_start + duration

    async def client(i):
        x, ref = xs[i % len(xs)], refs[i % len(xs)]
        while perf() < deadline:
            t0 = perf()
            await asyncio.sleep(0)        # the request's own I/O: yield once
            out = await handler(x)
            lat.append(perf() - t0)
            if out.shape != ref.shape or not np.allclose(out, ref, rtol=1e-3, atol=1e-3):
                wrong[0] += 1

    await asyncio.gather(*(client(i) for i in range(clients)))
    wall = perf() - t_start
    stop.set()
    await tick
    pauses = list(_GC["pauses"])
    return {"rps": len(lat) / wall,
            "gc_pause_max_ms": 1e3 * max([t for _, t in pauses], default=0.0),
            "gc_full": sum(1 for g, _ in pauses if g == 2),
            "gc_over_2ms": sum(1 for _, t in pauses if t > 0.002),
            "lat_p50_ms": 1e3 * percentile(lat, 50),
            "lat_p99_ms": 1e3 * percentile(lat, 99),
            "lag_p50_ms": 1e3 * percentile(lags, 50),
            "lag_p99_ms": 1e3 * percentile(lags, 99),
            "lag_max_ms": 1e3 * max(lags),
            "requests": len(lat), "ticks": len(lags), "wrong_outputs": wrong[0]}


async def amain(args):
    pool = ThreadPoolExecutor()  # default size, as the common workaround uses it
    ws = make_weights()
    handlers = make_handlers(args.backend, ws, pool)
    ref = numpy_forward(ws)
    rs = np.random.RandomState(3)

    lags, stop = [], asyncio.Event()
    tick = asyncio.create_task(ticker(stop, lags))
    await asyncio.sleep(1.0)
    stop.set()
    await tick
    res = {"clients": args.clients, "duration_s": args.duration,
           "executor_workers": pool._max_workers,
           "idle_lag_ms": {"p50": round(1e3 * percentile(lags, 50), 3),
                           "p99": round(1e3 * percentile(lags, 99), 3),
                           "max": round(1e3 * max(lags), 3)}}
    for batch in args.batch:
        xs = [rs.uniform(-1, 1, (batch, SIZES[0])).astype(np.float32) for _ in range(8)]
        refs = [ref(x) for x in xs]
        for name, h in handlers.items():  # correctness first
            np.testing.assert_allclose(await h(xs[0]), refs[0], rtol=1e-3, atol=1e-3)
        if args.gc_freeze:
            gc.collect()
            gc.freeze()
        per = {name: [] for name in handlers}
        order = list(handlers.items())
        for rep in range(args.repeats + 1):  # rep 0 is a short warm-up
            # alternate the order across repeats so drift hits all modes alike
            for name, h in (order if rep % 2 == 0 else order[::-1]):
                log("serve_lag: batch", batch, name, "repeat", rep)
                r = await run_once(h, xs, refs, args.clients,
                                   args.duration if rep else min(0.5, args.duration))
                if rep:
                    per[name].append(r)
        out = {}
        for name, rr in per.items():
            counts = ("requests", "ticks", "wrong_outputs", "gc_full", "gc_over_2ms")
            out[name] = {k: summary([r[k] for r in rr], digits=2)
                         for k in rr[0] if k not in counts}
            out[name].update({k: sum(r[k] for r in rr) for k in counts})
        for name in out:
            if name != "numpy_executor":
                out[name]["rps_vs_numpy_executor"] = summary(
                    [a["rps"] / b["rps"] for a, b in zip(per[name], per["numpy_executor"])],
                    digits=2)
        res["batch%d" % batch] = out
    pool.shutdown()
    return res


def main():
    p = parser(__doc__.splitlines()[0], repeats=3)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--duration", type=float, default=2.0,
                   help="seconds per timed repeat (default %(default)s)")
    p.add_argument("--batch", default="1,8",
                   help="comma-separated batch sizes (default %(default)s)")
    p.add_argument("--gc-freeze", action="store_true",
                   help="gc.collect(); gc.freeze() once loaded, as python -m aiond.serve does")
    args = p.parse_args()
    gc.callbacks.append(_gc_timer)
    args.batch = [int(b) for b in args.batch.split(",")]
    emit("serve_lag", args.backend, args, asyncio.run(amain(args)))


if __name__ == "__main__":
    main()
