"""Per-op dispatch overhead and round trips: aiond vs numpy (same process).

Small (dispatch-bound) regime, 64 float32 elements:
  add        SMALL_OPS x `c = a + b`, then one final `mx.nd.waitall()`
  iadd       SMALL_OPS x `a += 1`,    then one final `mx.nd.waitall()`
             us_per_op = (loop + final wait) / ops; push_us_per_op = loop / ops
  sync_rt    push one op and block on it (`c.wait_to_read()`), repeated
  async_rt   one op then `await c.read()` in a coroutine (aiond); MXNet awaits
             `loop.run_in_executor(None, c.wait_to_read)` and numpy runs the
             add itself in `loop.run_in_executor` (the usual hop)
Large (bandwidth-bound) regime, 1e6 float32 elements, LARGE_OPS ops:
  add / iadd as above, plus gb_per_s (bytes = 3*4*n per add, 2*4*n per iadd)
  and rss_growth_mb: RSS just after the push loop minus before it (ops still
  pending; /proc/self/statm).

Every figure is timed for the backend and for numpy in the same process,
alternating which goes first; ratios are per repeat, then the median.
Results are checked (values of c and of the += chain); wrong ones raise.

    .venv/bin/python benchmarks/bench_dispatch.py [--mxnet-python .venvs/mxnet/bin/python]
"""
import asyncio
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (aiond_engine_facts, alternate, check, dig, emit, log,  # noqa: E402
                     parse, parser, perf, ratio, rss_mb, run_mxnet, summary, target)


class Backend:
    """The handful of calls the timed loops need, for one library."""

    def __init__(self, name, mx=None):
        self.name = name
        if mx is None:  # numpy: synchronous, nothing to wait for
            self.full = lambda n, v: np.full(n, v, dtype=np.float32)
            self.wait_all = lambda: None
            self.wait_one = lambda x: None
            self.to_numpy = np.asarray
        else:
            self.full = lambda n, v: mx.nd.full((n,), v, dtype="float32")
            self.wait_all = mx.nd.waitall
            self.wait_one = lambda x: x.wait_to_read()
            self.to_numpy = lambda x: x.asnumpy()
        self.mx = mx


def time_add(be, a, b, ops):
    rss0 = rss_mb()
    t0 = perf()
    for _ in range(ops):
        c = a + b
    t1 = perf()
    rss1 = rss_mb()
    be.wait_all()
    t2 = perf()
    out = be.to_numpy(c)
    check(out.shape == (a.shape[0],) and bool((out == 2.0).all()),
          "%s: %d x c = a + b gave %r, expected all 2.0" % (be.name, ops, out[:4]))
    return t1 - t0, t2 - t0, rss1 - rss0


def time_iadd(be, n, ops):
    x = be.full(n, 0.0)
    be.wait_all()
    rss0 = rss_mb()
    t0 = perf()
    for _ in range(ops):
        x += 1
    t1 = perf()
    rss1 = rss_mb()
    be.wait_all()
    t2 = perf()
    out = be.to_numpy(x)
    check(bool((out == float(ops)).all()),
          "%s: %d x a += 1 gave %r, expected all %d" % (be.name, ops, out[:4], ops))
    return t1 - t0, t2 - t0, rss1 - rss0


def loop_regime(bes, n, ops, kind, repeats, large):
    """Time `kind` ('add' or 'iadd') for every backend, interleaved."""
    arrays = {be.name: (be.full(n, 1.0), be.full(n, 1.0)) for be in bes}
    for be in bes:
        be.wait_all()
    push = {be.name: [] for be in bes}
    total = {be.name: [] for be in bes}
    growth = {be.name: [] for be in bes}
    for rep in range(repeats + 1):  # repeat 0 is the warm-up
        for be in alternate(bes, rep):
            if kind == "add":
                tp, tt, g = time_add(be, *arrays[be.name], ops)
            else:
                tp, tt, g = time_iadd(be, n, ops)
            growth[be.name].append(g)  # warm-up included: pools grow there
            if rep:
                push[be.name].append(tp)
                total[be.name].append(tt)
    bytes_per_op = (3 if kind == "add" else 2) * 4 * n
    res = {}
    for be in bes:
        r = {"us_per_op": summary(total[be.name], 1e6 / ops),
             "push_us_per_op": summary(push[be.name], 1e6 / ops)}
        if large:
            r["gb_per_s"] = summary([bytes_per_op * ops / t / 1e9
                                     for t in total[be.name]], digits=2)
            r["rss_growth_mb_max"] = round(max(growth[be.name]), 1)
        res[be.name] = r
    main_, ref = bes[0].name, bes[1].name
    # time ratio backend/numpy (> 1: slower than numpy); for GB/s the inverse
    res["time_ratio_vs_numpy"] = ratio(total[main_], total[ref])
    if large:
        res["gbps_ratio_vs_numpy"] = ratio(total[ref], total[main_])
    return res


def roundtrips(bes, n, iters, repeats, loop_kind):
    """Sync and async single-op round trips, interleaved."""
    if loop_kind == "uvloop":
        try:
            import uvloop
            loop = uvloop.new_event_loop()
        except ImportError:
            loop_kind, loop = "asyncio (uvloop missing)", asyncio.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    arrays = {be.name: (be.full(n, 1.0), be.full(n, 1.0)) for be in bes}
    for be in bes:
        be.wait_all()

    def sync_rt(be):
        a, b = arrays[be.name]
        wait_one = be.wait_one
        t0 = perf()
        for _ in range(iters):
            c = a + b
            wait_one(c)
        dt = perf() - t0
        check(bool((be.to_numpy(c) == 2.0).all()), "%s: sync round trip value" % be.name)
        return dt

    async def async_rt(be):
        a, b = arrays[be.name]
        lp = asyncio.get_running_loop()
        if be.mx is not None and hasattr(be.mx.nd.NDArray, "read"):   # aiond
            how = "await c.read()"
            t0 = perf()
            for _ in range(iters):
                c = a + b
                v = await c.read()
        elif be.mx is not None:                                        # mxnet
            how = "await loop.run_in_executor(None, c.wait_to_read)"
            t0 = perf()
            for _ in range(iters):
                c = a + b
                await lp.run_in_executor(None, c.wait_to_read)
            v = c.asnumpy()
        else:                                                          # numpy
            how = "await loop.run_in_executor(None, lambda: a + b)"
            add = lambda: a + b
            t0 = perf()
            for _ in range(iters):
                v = await lp.run_in_executor(None, add)
        dt = perf() - t0
        check(bool((np.asarray(v) == 2.0).all()), "%s: async round trip value" % be.name)
        return dt, how

    sync = {be.name: [] for be in bes}
    asyn = {be.name: [] for be in bes}
    hows = {}
    try:
        for rep in range(repeats + 1):
            for be in alternate(bes, rep):
                s = sync_rt(be)
                a, hows[be.name] = loop.run_until_complete(async_rt(be))
                if rep:
                    sync[be.name].append(s)
                    asyn[be.name].append(a)
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    res = {"iters": iters, "event_loop": loop_kind}
    for be in bes:
        res[be.name] = {"sync_roundtrip_us": summary(sync[be.name], 1e6 / iters, 2),
                        "async_roundtrip_us": summary(asyn[be.name], 1e6 / iters, 2),
                        "async_how": hows[be.name]}
    return res


def measure(mx, backend, p):
    """The whole workload for `backend` ('aiond' or 'mxnet') and numpy.

    Also the entry point of the MXNet subprocess (see _common.run_mxnet)."""
    bes = [Backend(backend, mx), Backend("numpy")]
    R = p["repeats"]
    res = {}
    for label, n, ops, kind, large in (
            ("small_add", p["small_n"], p["small_ops"], "add", False),
            ("small_iadd", p["small_n"], p["small_ops"], "iadd", False),
            ("large_add", p["large_n"], p["large_ops"], "add", True),
            ("large_iadd", p["large_n"], p["large_ops"], "iadd", True)):
        if label == "large_add":  # round trips belong to the small regime
            log("dispatch[%s]: round trips" % backend)
            res["roundtrip"] = roundtrips(bes, p["small_n"], p["roundtrip_iters"], R,
                                          p["loop"])
        log("dispatch[%s]: %s (n=%d, ops=%d)" % (backend, label, n, ops))
        res[label] = loop_regime(bes, n, ops, kind, R, large)
        res[label].update(n=n, ops=ops)
    if backend == "aiond":
        res["engine"] = aiond_engine_facts(mx)
    return res


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--small-n", type=int, default=64)
    p.add_argument("--small-ops", type=int, default=20000)
    p.add_argument("--large-n", type=int, default=1_000_000)
    p.add_argument("--large-ops", type=int, default=1000)
    p.add_argument("--roundtrip-iters", type=int, default=2000)
    p.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                   help="event loop for the async round trip (default %(default)s)")
    args = parse(p)
    params = {"repeats": args.repeats, "small_n": args.small_n,
              "small_ops": args.small_ops, "large_n": args.large_n,
              "large_ops": args.large_ops, "roundtrip_iters": args.roundtrip_iters,
              "loop": args.loop}

    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params)}
    if args.mxnet_python:
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_dispatch", "measure",
                                         params, args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)

    A, M = results["aiond"], results.get("mxnet") or {}

    def fig(res, be, *path):
        return dig(res, path[0], be, *path[1:])

    def med(res, be, *path):
        return dig(res, path[0], be, *path[1:], "median")

    targets = [
        target("64-elt c=a+b us/op (loop+waitall)", med(A, "aiond", "small_add", "us_per_op"),
               "<=", 5, "us", numpy=med(A, "numpy", "small_add", "us_per_op"),
               mxnet=med(M, "mxnet", "small_add", "us_per_op"), anchor="13-18"),
        target("64-elt c=a+b push-only us/op", med(A, "aiond", "small_add", "push_us_per_op"),
               unit="us", mxnet=med(M, "mxnet", "small_add", "push_us_per_op")),
        target("64-elt a+=1 us/op", med(A, "aiond", "small_iadd", "us_per_op"),
               unit="us", numpy=med(A, "numpy", "small_iadd", "us_per_op"),
               mxnet=med(M, "mxnet", "small_iadd", "us_per_op"), anchor="16-18"),
        target("sync round trip (wait_to_read) us",
               dig(A, "roundtrip", "aiond", "sync_roundtrip_us", "median"), "<=", 15, "us",
               numpy=dig(A, "roundtrip", "numpy", "sync_roundtrip_us", "median"),
               mxnet=dig(M, "roundtrip", "mxnet", "sync_roundtrip_us", "median"),
               anchor="77"),
        target("async round trip (await c.read()) us",
               dig(A, "roundtrip", "aiond", "async_roundtrip_us", "median"), "<=", 30, "us",
               numpy=dig(A, "roundtrip", "numpy", "async_roundtrip_us", "median"),
               mxnet=dig(M, "roundtrip", "mxnet", "async_roundtrip_us", "median"),
               anchor="100-190 (run_in_executor)",
               note="numpy/mxnet figures are loop.run_in_executor hops"),
        target("1e6 c=a+b GB/s ratio aiond/numpy", dig(A, "large_add", "gbps_ratio_vs_numpy",
                                                      "median"), ">=", 1.0, "x",
               mxnet=dig(M, "large_add", "gbps_ratio_vs_numpy", "median"),
               note="per-repeat ratio; mxnet's is vs its own in-process numpy"),
        target("1e6 c=a+b GB/s", med(A, "aiond", "large_add", "gb_per_s"), unit="GB/s",
               numpy=med(A, "numpy", "large_add", "gb_per_s"),
               mxnet=med(M, "mxnet", "large_add", "gb_per_s"), anchor="21"),
        target("1e6 c=a+b RSS growth while pending",
               fig(A, "aiond", "large_add", "rss_growth_mb_max"), unit="MiB",
               numpy=fig(A, "numpy", "large_add", "rss_growth_mb_max"),
               mxnet=fig(M, "mxnet", "large_add", "rss_growth_mb_max")),
        target("1e6 a+=1 GB/s", med(A, "aiond", "large_iadd", "gb_per_s"), unit="GB/s",
               numpy=med(A, "numpy", "large_iadd", "gb_per_s"),
               mxnet=med(M, "mxnet", "large_iadd", "gb_per_s"), anchor="19-20"),
    ]
    emit("dispatch", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
