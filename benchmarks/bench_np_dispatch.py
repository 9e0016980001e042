"""Push cost of ``mx.np`` operators against the same ones on ``mx.nd``
(issue 32: np ops dispatch no slower than nd ops).

Small (dispatch-bound) arrays of 64 float32 elements; per kind, OPS pushes
then one ``waitall``, best-of-``--inner`` per repeat (the figure least
disturbed by other processes on a shared machine), nd and np alternating:

  add        ``c = a + b`` on two arrays
  add_scalar ``c = a + 1.0``
  mul        ``c = a * b``
  iadd       ``a += b``

Both flavours' results are checked. The np/nd ratio per repeat is
summarised (median); target <= 1.05.

    .venv/bin/python benchmarks/bench_np_dispatch.py [--repeats 5] [--inner 9]
        [--mxnet-python /work/venvs/mx/bin/python]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (alternate, check, dig, emit, log, parse, parser, perf,  # noqa: E402
                     run_mxnet, summary, target)

N, OPS = 64, 2000
KINDS = ("add", "add_scalar", "mul", "iadd")


def _loop(kind, a, b):
    if kind == "add":
        for _ in range(OPS):
            c = a + b
    elif kind == "add_scalar":
        for _ in range(OPS):
            c = a + 1.0
    elif kind == "mul":
        for _ in range(OPS):
            c = a * b
    else:
        for _ in range(OPS):
            a += b
        c = a
    return c


def workload(mx, who, params):
    """Per flavour and kind: best-of-inner microseconds per op, per repeat."""
    inner, repeats = params["inner"], params["repeats"]
    makers = {"nd": lambda v: mx.nd.full((N,), v, dtype="float32"),
              "np": lambda v: mx.np.full((N,), v, dtype="float32")}
    res = {f: {k: [] for k in KINDS} for f in makers}
    for rep in range(repeats + 1):                     # the first is a warm-up
        for kind in KINDS:
            for flavour in alternate(makers, rep):
                make = makers[flavour]
                best = None
                for _ in range(inner):
                    a, b = make(1.0), make(2.0)
                    t0 = perf()
                    c = _loop(kind, a, b)
                    mx.nd.waitall()
                    t = (perf() - t0) / OPS * 1e6
                    best = t if best is None else min(best, t)
                want = {"add": 3.0, "add_scalar": 2.0, "mul": 2.0, "iadd": 1.0 + 2.0 * OPS}[kind]
                got = float(c.asnumpy()[0])
                if got != want:
                    raise AssertionError("%s %s: %r != %r" % (flavour, kind, got, want))
                if rep:
                    res[flavour][kind].append(best)
    for f in res:
        log("%s %s" % (who, "  ".join("%s %s %.2f us" % (f, k, sorted(v)[len(v) // 2])
                                      for k, v in res[f].items())))
    return res


def main():
    p = parser(__doc__)
    p.add_argument("--inner", type=int, default=9)
    args = parse(p)
    import aiond as mx
    params = {"repeats": args.repeats, "inner": args.inner}
    res = workload(mx, "aiond", params)
    mxr = None
    if args.mxnet_python:
        mxr = run_mxnet(args.mxnet_python, "bench_np_dispatch", "workload", params,
                        args.mxnet_timeout)
    targets = []
    for k in KINDS:
        nd, npv = res["nd"][k], res["np"][k]
        check(len(nd) == len(npv) == args.repeats, "missing samples")
        ratios = [b / a for a, b in zip(nd, npv)]
        targets += [
            target("nd %s (us)" % k, summary(nd)["median"], unit="us",
                   mxnet=dig(mxr, "nd", k) and summary(mxr["nd"][k])["median"]),
            target("np %s (us)" % k, summary(npv)["median"], unit="us",
                   mxnet=dig(mxr, "np", k) and summary(mxr["np"][k])["median"]),
            target("np/nd %s" % k, summary(ratios)["median"], "<=", 1.05, unit="x"),
        ]
    emit("bench_np_dispatch", args, {"aiond": res, "mxnet": mxr}, targets, params)


if __name__ == "__main__":
    main()
