"""Automatic parallelism: independent chains vs numpy run one after another.

CHAINS independent chains of STEPS steps of `x = mx.nd.sin(x) + 1.0` on N
float32 elements (default 4 x 20 on 4 Mi = 4*2**20), written with the plain
MXNet API, one final `mx.nd.waitall()`, then `asnumpy()` of every chain is
checked against numpy (wrong results raise).  Push orders:
  chain   chain-major: all steps of chain 0, then chain 1, ... (stresses a
          bounded pending-op queue)
  step    step-major: step 1 of every chain, then step 2, ...
A dependent variant runs ONE chain of CHAINS*STEPS steps: the same work with
nothing to overlap, so it must not get (much) worse than numpy.

Timed in the same process, interleaved (order reversed every other repeat):
  numpy_seq       the chains one after another in numpy (the yardstick)
  numpy_pool      the chains on a 2-thread ThreadPoolExecutor (what an engine
                  running numpy kernels on threads can reach on this box)
  numpy_seq_dep   the dependent chain in numpy
  <be>_chain / <be>_step / <be>_dep   the backend (aiond, or mxnet in the
                  --mxnet-python subprocess)
Ratios per repeat, then the median:
  speedup_vs_numpy_<order>  numpy_seq / <be>_<order>
  dep_speedup_vs_numpy      numpy_seq_dep / <be>_dep
  independence_gain         <be>_dep / <be>_chain  (>1: chains overlapped)
  cores_used                process CPU s / wall s per timer

    .venv/bin/python benchmarks/bench_parallel.py [--order step] [--mxnet-python PATH]
"""
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (aiond_engine_facts, alternate, check, cpu_seconds, dig, emit,  # noqa: E402
                     log, parse, parser, perf, ratio, run_mxnet, summary, target)


def np_chain(x, steps):
    for _ in range(steps):
        x = np.sin(x) + 1.0
    return x


def run_chains(chain, inits, steps, wait_all, order):
    t0 = perf()
    if order == "chain":
        outs = [chain(x, steps) for x in inits]
    else:  # step-major
        outs = list(inits)
        for _ in range(steps):
            outs = [chain(x, 1) for x in outs]
    wait_all()
    return perf() - t0, outs


def measure(mx, backend, p):
    """The whole workload for `backend` ('aiond' or 'mxnet') and numpy.

    Also the entry point of the MXNet subprocess (see _common.run_mxnet)."""
    K, S, n, R = p["chains"], p["steps"], p["n"], p["repeats"]
    nd = mx.nd
    inits_np = [np.random.RandomState(k).uniform(-2, 2, n).astype(np.float32)
                for k in range(K)]
    # references (float32 throughout: sin of float32 is float32, + 1.0 keeps it)
    ref = [np_chain(x, S) for x in inits_np]
    ref_dep = np_chain(inits_np[0], K * S)
    check(all(r.dtype == np.float32 for r in ref), "numpy reference is not float32")

    def chain(x, steps):
        for _ in range(steps):
            x = nd.sin(x) + 1.0
        return x

    inits = [nd.array(x, dtype="float32") for x in inits_np]
    nd.waitall()
    pool = ThreadPoolExecutor(2)
    nop = lambda: None

    def numpy_pool():
        t0 = perf()
        outs = [f.result() for f in [pool.submit(np_chain, x, S) for x in inits_np]]
        return perf() - t0, outs

    timers = {"numpy_seq": lambda: run_chains(np_chain, inits_np, S, nop, "chain"),
              "numpy_pool": numpy_pool,
              "numpy_seq_dep": lambda: run_chains(np_chain, inits_np[:1], K * S, nop,
                                                  "chain")}
    for order in p["orders"]:
        timers["%s_%s" % (backend, order)] = (
            lambda order=order: run_chains(chain, inits, S, nd.waitall, order))
    timers[backend + "_dep"] = lambda: run_chains(chain, inits[:1], K * S, nd.waitall,
                                                  "chain")

    def verify(name, outs):
        want = [ref_dep] if name.endswith("_dep") else ref
        check(len(outs) == len(want), "%s: %d outputs" % (name, len(outs)))
        for i, (got, w) in enumerate(zip(outs, want)):
            g = got if isinstance(got, np.ndarray) else got.asnumpy()
            check(g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-4),
                  "%s chain %d: max abs err %g vs numpy"
                  % (name, i, float(np.max(np.abs(g.astype(np.float64) - w)))))

    times = {k: [] for k in timers}
    cores = {k: [] for k in timers}
    try:
        for rep in range(R + 1):  # repeat 0 is the warm-up
            log("parallel[%s]: repeat %d/%d" % (backend, rep, R))
            for name, fn in alternate(timers.items(), rep):
                c0 = cpu_seconds()
                secs, outs = fn()
                c1 = cpu_seconds()
                verify(name, outs)  # every repeat, outside the timed region
                del outs
                if rep:
                    times[name].append(secs)
                    cores[name].append((c1 - c0) / secs)
    finally:
        pool.shutdown()

    res = {"seconds": {k: summary(v) for k, v in times.items()},
           "cores_used": {k: round(statistics.median(v), 2) for k, v in cores.items()},
           "numpy_pool_speedup": ratio(times["numpy_seq"], times["numpy_pool"]),
           "numpy_ms_per_op": round(1e3 * statistics.median(times["numpy_seq_dep"])
                                    / (2 * K * S), 3),
           "backend_ms_per_op": round(1e3 * statistics.median(times[backend + "_dep"])
                                      / (2 * K * S), 3),
           "dep_speedup_vs_numpy": ratio(times["numpy_seq_dep"], times[backend + "_dep"]),
           "orders": list(p["orders"])}
    for order in p["orders"]:
        key = "%s_%s" % (backend, order)
        res["speedup_vs_numpy_" + order] = ratio(times["numpy_seq"], times[key])
        res["independence_gain_" + order] = ratio(times[backend + "_dep"], times[key])
    if backend == "aiond":
        res["engine"] = aiond_engine_facts(mx)
    return res


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--n", type=int, default=4 * 2**20)
    p.add_argument("--order", choices=("chain", "step", "both"), default="both",
                   help="push order(s) of the independent chains (default: both)")
    args = parse(p)
    orders = ["chain", "step"] if args.order == "both" else [args.order]
    params = {"repeats": args.repeats, "chains": args.chains, "steps": args.steps,
              "n": args.n, "orders": orders}

    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params)}
    if args.mxnet_python:
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_parallel", "measure",
                                         params, args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)
    A, M = results["aiond"], results.get("mxnet") or {}

    targets = []
    for order in orders:
        k = "speedup_vs_numpy_" + order
        targets.append(target(
            "%dx%d sin+1 speedup vs numpy (%s-major)" % (args.chains, args.steps, order),
            dig(A, k, "median"), ">=", 1.3, "x", mxnet=dig(M, k, "median"),
            anchor="0.2-0.5", note="numpy_seq / backend, per repeat"))
    targets += [
        target("dependent chain (%d steps) vs numpy" % (args.chains * args.steps),
               dig(A, "dep_speedup_vs_numpy", "median"), ">=", 0.9, "x",
               mxnet=dig(M, "dep_speedup_vs_numpy", "median"),
               note="numpy_seq_dep / backend_dep; 'not much worse than 1' read as >= 0.9"),
        target("numpy 2-thread pool speedup (ceiling)", dig(A, "numpy_pool_speedup", "median"),
               unit="x", mxnet=dig(M, "numpy_pool_speedup", "median")),
        target("independence gain (dep / chain-major)",
               dig(A, "independence_gain_" + orders[0], "median"), unit="x",
               mxnet=dig(M, "independence_gain_" + orders[0], "median")),
        target("independent chains seconds (%s-major)" % orders[0],
               dig(A, "seconds", "aiond_" + orders[0], "median"), unit="s",
               numpy=dig(A, "seconds", "numpy_seq", "median"),
               mxnet=dig(M, "seconds", "mxnet_" + orders[0], "median")),
        target("cores used (%s-major)" % orders[0],
               dig(A, "cores_used", "aiond_" + orders[0]), unit="cores",
               numpy=dig(A, "cores_used", "numpy_seq"),
               mxnet=dig(M, "cores_used", "mxnet_" + orders[0])),
    ]
    emit("parallel", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
