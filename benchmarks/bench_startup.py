"""Start-up: a fresh interpreter imports aiond and reads back one tiny op.

Each repeat starts new interpreters (`python -c SNIPPET`) and times them from
outside (wall clock from spawn to exit), interleaved in alternating order:
  aiond        import aiond as mx; (mx.nd.ones((4,)) + 1).asnumpy()
  numpy_op     the same with numpy
  numpy_floor  `import numpy` alone: the part no runtime can save
and with --mxnet-python PATH also `mxnet` (the aiond snippet with `import
mxnet as mx`) and `mxnet_numpy_floor` in that interpreter.  Every snippet
prints its result, which is checked ([2, 2, 2, 2]); per-child CPU seconds
and peak RSS come from wait4().  One extra untimed `-X importtime` run of
the aiond snippet lists the slowest top-level imports.

    .venv/bin/python benchmarks/bench_startup.py [--repeats N] [--mxnet-python PATH]
"""
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (alternate, check, emit, log, parse, parser, perf,  # noqa: E402
                     summary, target)

_OP = "(mx.nd.ones((4,)) + 1).asnumpy()"
SNIPPETS = {
    "aiond": "import aiond as mx; print(%s.tolist())" % _OP,
    "mxnet": "import mxnet as mx; print(%s.tolist())" % _OP,
    "numpy_op": "import numpy as np; print((np.ones(4, np.float32) + 1).tolist())",
    "numpy_floor": "import numpy",
}
EXPECT = "[2.0, 2.0, 2.0, 2.0]"


def spawn(python, code, extra=()):
    """Run `python [extra] -c code`; returns (wall s, cpu s, peak MiB, stdout, stderr)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = perf()
        p = subprocess.Popen([python, *extra, "-c", code], stdout=out, stderr=err,
                             stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = perf() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        o, e = out.read(), err.read()
    if p.returncode != 0:
        raise RuntimeError("%s -c %r failed (rc=%d): %s"
                           % (python, code, p.returncode, e.strip()[-500:]))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, o, e


def import_top(python, code, k=10):
    """Slowest imports at depth 0-1 of one `-X importtime` run (cumulative ms)."""
    _, _, _, _, err = spawn(python, code, ("-X", "importtime"))
    rows = []
    for line in err.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header line
        name = parts[2][1:]  # one space after the bar, then 2 spaces per level
        depth = (len(name) - len(name.lstrip(" "))) // 2
        if depth <= 1:
            rows.append((int(parts[1]) / 1e3, depth, name.strip()))
    rows.sort(reverse=True)
    return [{"module": n, "depth": d, "cumulative_ms": round(ms, 1)}
            for ms, d, n in rows[:k]]


def main():
    p = parser(__doc__.splitlines()[0], repeats=10)
    p.add_argument("--python", default=sys.executable,
                   help="interpreter with aiond installed (default: this one)")
    p.add_argument("--no-importtime", action="store_true",
                   help="skip the extra -X importtime run")
    args = parse(p)
    params = {"repeats": args.repeats, "snippets": SNIPPETS}

    jobs = {"aiond": (args.python, SNIPPETS["aiond"], EXPECT),
            "numpy_op": (args.python, SNIPPETS["numpy_op"], EXPECT),
            "numpy_floor": (args.python, SNIPPETS["numpy_floor"], "")}
    if args.mxnet_python:
        mxpy = os.path.abspath(args.mxnet_python)
        jobs["mxnet"] = (mxpy, SNIPPETS["mxnet"], EXPECT)
        jobs["mxnet_numpy_floor"] = (mxpy, SNIPPETS["numpy_floor"], "")

    wall = {k: [] for k in jobs}
    cpu = {k: [] for k in jobs}
    peak = {k: [] for k in jobs}
    for rep in range(args.repeats + 1):  # repeat 0 warms the page cache
        log("startup: repeat %d/%d" % (rep, args.repeats))
        for name, (py, code, want) in alternate(jobs.items(), rep):
            w, c, m, out, _ = spawn(py, code)
            check(out.strip() == want, "%s printed %r, expected %r" % (name, out, want))
            if rep:
                wall[name].append(w)
                cpu[name].append(c)
                peak[name].append(m)

    res = {k: {"seconds": summary(wall[k]), "cpu_seconds": summary(cpu[k]),
               "peak_rss_mib": round(statistics.median(peak[k]), 1)} for k in jobs}
    res["aiond_over_floor_s"] = round(statistics.median(wall["aiond"])
                                      - statistics.median(wall["numpy_floor"]), 3)
    if args.mxnet_python:
        res["mxnet_over_floor_s"] = round(statistics.median(wall["mxnet"])
                                          - statistics.median(wall["mxnet_numpy_floor"]), 3)
    if not args.no_importtime:
        try:
            res["aiond_import_top"] = import_top(args.python, SNIPPETS["aiond"])
        except Exception as e:  # diagnosis only
            res["aiond_import_top"] = [{"error": repr(e)}]

    med = lambda k, f="seconds": (res.get(k) or {}).get(f, {}).get("median")
    targets = [
        target("import + first op, wall s", med("aiond"), "<=", 0.2, "s",
               numpy=med("numpy_op"), mxnet=med("mxnet"), anchor="1.07"),
        target("import numpy floor, wall s", med("numpy_floor"), unit="s",
               mxnet=med("mxnet_numpy_floor")),
        target("over the numpy floor, s", res["aiond_over_floor_s"], unit="s",
               mxnet=res.get("mxnet_over_floor_s")),
        target("import + first op, peak RSS", res["aiond"]["peak_rss_mib"], unit="MiB",
               numpy=res["numpy_op"]["peak_rss_mib"],
               mxnet=(res.get("mxnet") or {}).get("peak_rss_mib")),
    ]
    emit("startup", args, res, targets, params)


if __name__ == "__main__":
    main()
