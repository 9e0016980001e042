"""What recording costs: tiny ops pushed with the profiler off and on.

2,000 × ``c = a + b`` on 64 float32 and one ``waitall``, µs per op: with no
profiler, with aiond's ``Profiler`` recording (without and with aggregate
statistics), and, given ``--other PATH`` (the ``aiond/engine/profiler.py``
of another checkout, e.g. ``git archive <rev> aiond | tar -x -C /tmp/old``),
with that file's ``Profiler`` too, in the same process; numpy's ``a + b`` as
the yardstick. The recorders are set on the engine directly (what
``mx.profiler.set_state('run')`` does), so writing the trace is not timed.
Runs alternate, their order reversing every repeat; figures are medians
over ``--repeats``. Prints one JSON line.

    .venv/bin/python benchmarks/bench_profiler_overhead.py [--repeats 15]
        [--other /tmp/old/aiond/engine/profiler.py]
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

N = 2000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--other", help="another checkout's aiond/engine/profiler.py")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import aiond as mx
    from aiond.engine.profiler import Profiler
    recorders = {"on": lambda: Profiler(os.devnull, False),
                 "on_aggregate": lambda: Profiler(os.devnull, True)}
    if args.other:
        spec = importlib.util.spec_from_file_location("other_profiler", args.other)
        other = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(other)
        recorders["other_on"] = lambda: other.Profiler(os.devnull, False)
        recorders["other_on_aggregate"] = lambda: other.Profiler(os.devnull, True)
    eng = mx.engine.get()
    a, b = mx.nd.ones((64,)), mx.nd.ones((64,))
    an, bn = np.ones(64, np.float32), np.ones(64, np.float32)
    mx.nd.waitall()

    def ops():
        t = time.perf_counter()
        for _ in range(N):
            c = a + b           # noqa: F841
        mx.nd.waitall()
        return (time.perf_counter() - t) / N * 1e6

    def numpy():
        t = time.perf_counter()
        for _ in range(N):
            c = an + bn         # noqa: F841
        return (time.perf_counter() - t) / N * 1e6

    def recorded(rec):
        eng.prof = rec
        try:
            return ops()
        finally:
            eng.prof = None
            rec.events.clear()      # freed here, not inside the next timed run

    runs = {k: [] for k in ["off", "numpy"] + list(recorders)}
    jobs = [("off", ops), ("numpy", numpy)] + [
        (k, (lambda rec=make(): recorded(rec))) for k, make in recorders.items()]
    ops()
    for r in range(args.repeats):
        for k, job in (jobs if r % 2 == 0 else jobs[::-1]):
            runs[k].append(job())
    res = {k + "_us_per_op": round(statistics.median(v), 3) for k, v in runs.items()}
    res["repeats"] = args.repeats
    res["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
