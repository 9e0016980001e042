"""Process CPU time per batch of bench_convnet's ``zoo`` nets, for aiond or MXNet.

On a shared 2-core machine wall times swing with the load; the CPU time
the process spends per batch (all its threads) is the steadier figure.
The nets are ``bench_convnet.ZOO``'s, exported once into ``--zoo-dir`` (by
this interpreter's aiond or MXNet when the folder has no files yet) and
loaded with ``SymbolBlock.imports``; each case runs twice untimed, then
``--reps`` times N batches (N = 20 at batch 1, 3 above), medians printed.

    PYTHONPATH=<tree> .venv/bin/python benchmarks/zoo_cpu_time.py aiond --zoo-dir /tmp/zoo
    /work/venvs/mx/bin/python benchmarks/zoo_cpu_time.py mxnet --zoo-dir /tmp/zoo
    ... [resnet18_v1:1 mobilenet1.0:16 ...]
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("backend", choices=("aiond", "mxnet"))
    p.add_argument("cases", nargs="*", help="name:batch (default: every ZOO case)")
    p.add_argument("--zoo-dir", required=True)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_intermixed_args()
    if args.backend == "mxnet":
        import mxnet as mx
    else:
        import aiond as mx
        try:        # as bench_convnet: numpy's BLAS on one thread, as aiond's workers run it
            from threadpoolctl import threadpool_limits
            threadpool_limits(1, "blas")
        except ImportError:
            pass
    import bench_convnet
    if not os.path.exists(os.path.join(args.zoo_dir, "resnet50_v1-symbol.json")):
        os.makedirs(args.zoo_dir, exist_ok=True)
        bench_convnet.export_zoo(mx, args.backend, {"zoo_dir": args.zoo_dir})
    cases = args.cases or ["%s:%d" % (n, b) for n, bs in bench_convnet.ZOO for b in bs]
    res = {}
    for c in cases:
        name, bs = c.split(":")
        bs = int(bs)
        pre = os.path.join(args.zoo_dir, name)
        blk = mx.gluon.SymbolBlock.imports(pre + "-symbol.json", ["data"], pre + "-0000.params")
        x = mx.nd.array(np.random.RandomState(0).rand(bs, 3, 224, 224).astype(np.float32))
        n = 20 if bs == 1 else 3
        for _ in range(2):
            blk(x).wait_to_read()
        cs, ws = [], []
        for _ in range(args.reps):
            c0, t0 = cpu(), time.perf_counter()
            for _ in range(n):
                blk(x).wait_to_read()
            cs.append((cpu() - c0) / n * 1e3)
            ws.append((time.perf_counter() - t0) / n * 1e3)
        res[c] = {"cpu_ms": round(float(np.median(cs)), 2),
                  "wall_ms": round(float(np.median(ws)), 2)}
        print(c, json.dumps(res[c]), flush=True)


if __name__ == "__main__":
    main()
