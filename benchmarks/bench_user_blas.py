"""The user's own numpy matmuls in a process that also runs aiond.

aiond's CPU workers pin BLAS to one thread each while they run kernels
(``aiond/engine/blas.py``); OpenBLAS's thread count is process-wide, so a
script's own numpy GEMMs share that setting. This measures, in one process:

  before     numpy GEMMs after ``import aiond`` but before its workers started
  after      the same GEMMs once the workers have run ops for a coroutine and
             gone idle (each repeat first awaits a fresh aiond op, then waits
             for the workers to finish)
  one_thread the same GEMMs under ``threadpool_limits(1)``: what they cost if
             the engine's pinning stayed in force

Sizes: 512x512 @ 512x512 and 128x784 @ 784x256 (the MLP benchmark's first
layer). Results are checked against the first product. Goal: ``after`` ÷
``before`` ≈ 1 (within noise), i.e. the engine's pinning does not leak into
user code once the engine is idle.

    .venv/bin/python benchmarks/bench_user_blas.py [--repeats N]
"""
import asyncio
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import check, emit, log, parse, parser, perf, summary, target  # noqa: E402

SIZES = {"sq512": ((512, 512), (512, 512)), "mlp128x784x256": ((128, 784), (784, 256))}
INNER = {"sq512": 20, "mlp128x784x256": 60}


def gemm_secs(a, b, want, inner):
    c = a @ b
    check(np.allclose(c, want, rtol=1e-4, atol=1e-4), "numpy GEMM gave a wrong result")
    t = perf()
    for _ in range(inner):
        a @ b
    return (perf() - t) / inner


def main():
    p = parser(__doc__.splitlines()[0], repeats=7)
    args = parse(p)
    from threadpoolctl import threadpool_info, threadpool_limits
    import aiond as mx
    rs = np.random.RandomState(0)
    mats = {k: (rs.rand(*sa).astype(np.float32), rs.rand(*sb).astype(np.float32))
            for k, (sa, sb) in SIZES.items()}
    wants = {k: a @ b for k, (a, b) in mats.items()}
    threads_before = sorted({i["num_threads"] for i in threadpool_info()
                             if i["user_api"] == "blas"})
    res = {"blas_threads_before": threads_before}
    before = {k: [] for k in mats}
    for _ in range(args.repeats):
        for k, (a, b) in mats.items():
            before[k].append(gemm_secs(a, b, wants[k], INNER[k]))

    x = mx.nd.array(rs.rand(256, 256).astype(np.float32))

    async def engine_work():
        await mx.nd.dot(x, x).read()

    def idle():
        deadline = time.monotonic() + 10
        while mx.engine.statistics().workers_busy and time.monotonic() < deadline:
            time.sleep(0.001)

    after = {k: [] for k in mats}
    for _ in range(args.repeats):
        asyncio.run(engine_work())
        mx.nd.waitall()
        idle()
        for k, (a, b) in mats.items():
            after[k].append(gemm_secs(a, b, wants[k], INNER[k]))
    check(mx.engine.statistics().ops_pushed > 0, "the workers never ran an op")
    res["blas_threads_after"] = sorted({i["num_threads"] for i in threadpool_info()
                                        if i["user_api"] == "blas"})
    one = {k: [] for k in mats}
    with threadpool_limits(1, user_api="blas"):
        for _ in range(args.repeats):
            for k, (a, b) in mats.items():
                one[k].append(gemm_secs(a, b, wants[k], INNER[k]))
    targets = []
    for k in mats:
        res[k] = {"before_ms": summary(before[k], 1e3), "after_ms": summary(after[k], 1e3),
                  "one_thread_ms": summary(one[k], 1e3)}
        r = res[k]["after_ms"]["median"] / res[k]["before_ms"]["median"]
        res[k]["after_vs_before"] = round(r, 3)
        res[k]["one_thread_vs_before"] = round(
            res[k]["one_thread_ms"]["median"] / res[k]["before_ms"]["median"], 3)
        log("%s: before %.3f ms, after %.3f ms (%.2fx), one thread %.3f ms" % (
            k, res[k]["before_ms"]["median"], res[k]["after_ms"]["median"], r,
            res[k]["one_thread_ms"]["median"]))
        targets.append(target("%s numpy GEMM after the engine ran, vs before" % k,
                              round(r, 3), "<=", 1.1, unit="x"))
    emit("user_blas", args, res, targets, {"repeats": args.repeats, "inner": INNER})


if __name__ == "__main__":
    main()
