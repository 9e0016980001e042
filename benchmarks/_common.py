"""Shared helpers for aiond's benchmarks (stdlib only at import time).

Contract of every ``bench_*.py`` script:

* exactly ONE JSON line on stdout; progress and warnings go to stderr;
* aiond and numpy are timed in the same process, interleaved (the order
  alternates from one repeat to the next), and every ratio is taken per
  repeat before the median;
* ``--mxnet-python PATH`` runs the same workload (the same Python function)
  in that interpreter as a subprocess, with *its* numpy as the in-process
  yardstick, and adds the figures under ``"mxnet"``;
* results are checked against numpy; a wrong result raises (non-zero exit,
  no JSON line).

``python benchmarks/_common.py summarize FILE.jsonl ...`` prints a markdown
table of the targets found in those JSON lines (stdlib only, any python3).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# Environment knobs that change how the 2 cores are used; every name here, and
# every AIOND_* / MXNET_* variable that is set, is recorded in the JSON.
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "PYTHONMALLOC",
              "MALLOC_ARENA_MAX", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
THREAD_ENV_PREFIXES = ("AIOND_", "MXNET_")

perf = time.perf_counter


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ arguments
def parser(description, repeats=5):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--repeats", type=int, default=repeats,
                   help="timed repeats after one warm-up; medians are reported "
                        "(default %(default)s)")
    p.add_argument("--mxnet-python", metavar="PATH", default=None,
                   help="interpreter with mxnet 1.x installed: run the same "
                        "workload there (subprocess) and report it under 'mxnet'")
    p.add_argument("--mxnet-timeout", type=float, default=900,
                   help="seconds allowed for the MXNet subprocess (default %(default)s)")
    p.add_argument("--tag", default="", help="free-form label copied into the JSON")
    return p


def parse(p):
    """parse_args, failing early when --mxnet-python is not runnable."""
    args = p.parse_args()
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if args.mxnet_python and not os.access(args.mxnet_python, os.X_OK):
        p.error("--mxnet-python %s is not an executable file" % args.mxnet_python)
    return args


# ----------------------------------------------------------------- statistics
def summary(xs, scale=1.0, digits=3):
    """median/min/max/n of samples multiplied by ``scale``."""
    xs = sorted(x * scale for x in xs)
    r = lambda v: round(v, digits)
    return {"median": r(statistics.median(xs)), "min": r(xs[0]),
            "max": r(xs[-1]), "n": len(xs)}


def ratio(num, den, digits=3):
    """Per-repeat num[i]/den[i], summarised."""
    if len(num) != len(den):
        raise ValueError("ratio of series of different lengths")
    return summary([a / b for a, b in zip(num, den)], digits=digits)


def alternate(items, rep):
    """``items`` in forward order on even repeats, reversed on odd ones."""
    items = list(items)
    return items if rep % 2 == 0 else items[::-1]


def rss_mb():
    """Resident set size of this process in MiB, from /proc/self/statm."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def cpu_seconds():
    """User + system CPU seconds of this process (all threads)."""
    import resource  # finer-grained than os.times() (clock ticks)
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def np_softmax_ce(logits, labels):
    """numpy's softmax cross-entropy of (n, classes) logits against class
    indices: (per-row loss, its gradient softmax - onehot), max-shifted."""
    import numpy as np
    rows = np.arange(logits.shape[0])
    z = logits - logits.max(1, keepdims=True)
    e = np.exp(z)
    s = e.sum(1, keepdims=True)
    grad = e / s
    grad[rows, labels] -= 1
    return np.log(s[:, 0]) - z[rows, labels], grad


def check(cond, msg):
    """Fail loudly (AssertionError) when a benchmark computed a wrong result."""
    if not cond:
        raise AssertionError("WRONG RESULT: " + msg)


# -------------------------------------------------------------- machine facts
def thread_env():
    env = {k: os.environ[k] for k in THREAD_ENV if k in os.environ}
    env.update({k: v for k, v in os.environ.items()
                if k.startswith(THREAD_ENV_PREFIXES)})
    return dict(sorted(env.items()))


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine():
    m = {"cpus": os.cpu_count(), "cpu_model": _cpu_model(),
         "platform": platform.platform(), "python": platform.python_version()}
    try:
        m["cpus_affinity"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        m["loadavg_at_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return m


def versions(mod_names=("numpy", "aiond", "mxnet")):
    v = {"python": platform.python_version()}
    for name in mod_names:
        mod = sys.modules.get(name)
        if mod is not None:
            v[name] = getattr(mod, "__version__", "?")
    return v


def facts():
    """Everything a figure must never be quoted without (this process)."""
    return {"machine": machine(), "versions": versions(), "env": thread_env()}


def aiond_engine_facts(mx):
    """aiond's engine configuration and counters, if the API offers them."""
    try:
        s = mx.engine.statistics()
        keys = ("workers", "max_pending_ops", "max_pending_bytes", "peak_pending_ops",
                "peak_bytes_held", "ops_pushed", "ops_inline", "pool_cached_bytes",
                "pool_hits", "pool_misses", "naive")
        return {k: getattr(s, k) for k in keys if hasattr(s, k)}
    except Exception as e:  # the benchmark must not depend on this API
        return {"error": repr(e)}


# -------------------------------------------------------------------- targets
_OPS = {"<=": lambda v, b: v <= b, ">=": lambda v, b: v >= b}


def target(name, value, op=None, bound=None, unit="", numpy=None, mxnet=None,
           anchor=None, note=None):
    """One reported figure: ``{"name", "value", "target": "<= 5", "met"}``.

    ``op``/``bound`` None makes it informational (``met`` is None and it does
    not count in ``all_met``).  ``numpy`` is the same figure for numpy in this
    process, ``mxnet`` the figure from the MXNet subprocess (if run),
    ``anchor`` the MXNet reference figure quoted in the brief (a string).
    """
    t = {"name": name, "value": value, "unit": unit,
         "target": None if op is None else "%s %g" % (op, bound),
         "met": None if op is None else
         bool(value is not None and _OPS[op](value, bound))}
    for k, v in (("numpy", numpy), ("mxnet", mxnet), ("mxnet_anchor", anchor),
                 ("note", note)):
        if v is not None:
            t[k] = v
    return t


def dig(d, *path):
    """d[p0][p1]... or None when any step is missing."""
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


# ----------------------------------------------------------- MXNet subprocess
# The worker imports the benchmark module itself (importing does not run its
# main()), so MXNet runs exactly the function aiond ran.  It needs only numpy
# and mxnet in the target interpreter.
_WORKER = r"""
import json, sys
sys.path.insert(0, %(here)r)
params = json.loads(sys.argv[1])
import mxnet as mx
import _common
mod = __import__(%(module)r)
res = getattr(mod, %(func)r)(mx, "mxnet", params)
res["facts"] = _common.facts()
sys.stdout.write("\n" + json.dumps(res) + "\n")
"""


def run_mxnet(python, module, func, params, timeout):
    """Run ``module.func(mx, "mxnet", params)`` in ``python``; returns its dict.

    Raises RuntimeError (with the worker's stderr tail) when it fails."""
    code = _WORKER % {"here": HERE, "module": module, "func": func}
    python = os.path.abspath(python)  # the worker runs with cwd=HERE
    log("%s: running the MXNet worker in %s" % (module, python))
    t0 = perf()
    try:
        p = subprocess.run([python, "-c", code, json.dumps(params)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, cwd=HERE)
    except subprocess.TimeoutExpired:
        raise RuntimeError("MXNet worker timed out after %gs" % timeout) from None
    except OSError as e:
        raise RuntimeError("cannot run %s: %s" % (python, e)) from None
    for line in p.stderr.splitlines():  # its progress, prefixed
        if line.strip():
            log("  [mxnet] " + line)
    if p.returncode != 0:
        raise RuntimeError("MXNet worker failed (rc=%d): %s"
                           % (p.returncode, "\n".join(p.stderr.splitlines()[-5:])))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("MXNet worker printed no JSON")
    res = json.loads(lines[-1])
    res["worker_wall_s"] = round(perf() - t0, 2)
    return res


# --------------------------------------------------------------------- output
def emit(bench, args, results, targets, params):
    """Print the one JSON line."""
    out = {"bench": bench, "tag": args.tag,
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "params": params}
    out.update(facts())
    out["results"] = results
    out["targets"] = targets
    out["all_met"] = all(t["met"] for t in targets if t["met"] is not None)
    print(json.dumps(out), flush=True)
    for t in targets:
        log("  %-44s %10s %-5s %-9s %-8s%s%s" % (
            t["name"], t["value"], t["unit"], t["target"] or "(info)",
            {True: "met", False: "NOT MET", None: ""}[t["met"]],
            "" if "numpy" not in t else "   (numpy %s)" % t["numpy"],
            "" if "mxnet" not in t else "   (mxnet %s)" % t["mxnet"]))


# ------------------------------------------------------------------ summarize
def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.3g" % v if abs(v) < 100 else "%.0f" % v
    return str(v)


def summarize(paths, out=sys.stdout):
    """Markdown table of every target in the given JSON-lines files."""
    rows = ["| bench | figure | aiond | numpy (same process) | MXNet | target | met |",
            "|---|---|---|---|---|---|---|"]
    notes = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                bench = d.get("bench", "?")
                if d.get("tag"):
                    bench += " (%s)" % d["tag"]
                for t in d.get("targets", []):
                    mx = t.get("mxnet")
                    if mx is None and t.get("mxnet_anchor"):
                        mx = "(anchor %s)" % t["mxnet_anchor"]
                    rows.append("| %s | %s | %s %s | %s | %s | %s | %s |" % (
                        bench, t["name"], _fmt(t["value"]), t.get("unit", ""),
                        _fmt(t.get("numpy")), _fmt(mx), t["target"] or "(info)",
                        {True: "yes", False: "**NO**", None: ""}[t["met"]]))
                err = (d.get("results") or {}).get("mxnet_error")
                if err:
                    notes.append("- %s: MXNet worker failed: %s" % (bench, err))
                la = (d.get("machine") or {}).get("loadavg_at_start")
                if la:
                    notes.append("- %s: load average at start %s (cpus %s)"
                                 % (bench, la, d["machine"].get("cpus")))
    out.write("\n".join(rows + [""] + notes) + "\n")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "summarize":
        summarize(sys.argv[2:])
    else:
        sys.exit("usage: python _common.py summarize FILE.jsonl [...]")
