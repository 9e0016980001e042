"""Why is a Gluon training step as slow as it is?  Profile ~20 steps and say.

The workload of /work/shared/bench/mlp_train.py (784-256-10 MLP, ReLU,
softmax cross-entropy, SGD lr 0.1, batch 128, same data and weights), run
imperatively and hybridized. A few warm-up steps run first (hybridize's
first call builds its graph), then ``--steps`` steps run under
``mx.profiler`` with one ``step`` Task per step on the pushing thread and
one ``waitall`` at the end, as in the anchor's epoch loop.

Writes one Chrome/Perfetto trace per mode (``OUT`` with ``.imperative`` /
``.hybridized`` before its suffix; open in ui.perfetto.dev) and prints one
JSON line: per mode, from the trace alone,

  threads         per track: ops run, busy time (top-level op spans), push time
  push_side_ms_per_step  median length of a step's Task: the pushing thread's
                  time to issue one step (including ops it ran inline)
  queue_ms        push-to-start time summed over ops (and median per op);
  dispatch_ms     the part of it an op was ready (its producers done) but
                  not yet running: hand-offs, busy workers, the GIL
  ops_per_step    ops pushed inside each step's Task (median, min, max)
  longest_chain   the dependency chain (flow arrows) with the most run time:
                  its ops, its run time, the dispatch gaps along it, and its
                  run time's share of the profiled wall time
  wall_ms         first push to last op end; ``wall_ms_unprofiled``: the same
                  steps with the profiler off (median of 3); ``numpy_step_ms``:
                  the hand-written numpy step, in this process
  top_ops_ms      run time per op name, the largest

    .venv/bin/python benchmarks/trace_mlp_step.py /tmp/mlp.json [--steps 20]
        [--mode both|imperative|hybridized] [--repeats 5]

Figures are medians over ``--repeats`` profiled runs in this process (the
trace file is the last one's). ``AIOND_ENGINE=naive`` in the environment
traces the naive engine instead.
"""
import argparse
import bisect
import collections
import json
import os
import statistics
import sys
import time

import numpy as np

D, H, C = 784, 256, 10
LR, BATCH = 0.1, 128
perf = time.perf_counter


def make_data(rows):
    rs = np.random.RandomState(0)
    X = (rs.rand(rows, D) * 2 - 1).astype(np.float32)
    W = rs.randn(D, C)
    y = np.argmax(X.astype(np.float64) @ W, axis=1).astype(np.float32)
    return X, y


def init_weights():
    rs = np.random.RandomState(1)
    g = lambda o, i: rs.uniform(-1, 1, (o, i)).astype(np.float32) * np.float32(  # noqa: E731
        np.sqrt(6.0 / (o + i)))
    return [g(H, D), np.zeros(H, np.float32), g(C, H), np.zeros(C, np.float32)]


def numpy_step_ms(X, y, steps):
    W1, b1, W2, b2 = init_weights()
    onehot = np.eye(C, dtype=np.float32)
    times = []
    for i in range(steps):
        x, yy = X[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH].astype(np.int64)
        t0 = perf()
        h = np.maximum(x @ W1.T + b1, 0)
        z = h @ W2.T + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot[yy]) * np.float32(1.0 / BATCH)
        dW2, db2 = dz.T @ h, dz.sum(axis=0)
        dh = dz @ W2
        dh[h <= 0] = 0
        dW1, db1 = dh.T @ x, dh.sum(axis=0)
        W1 -= LR * dW1; b1 -= LR * db1; W2 -= LR * dW2; b2 -= LR * db2  # noqa: E702
        times.append(perf() - t0)
    return statistics.median(times) * 1e3


def build(mx, hybridize):
    gluon = mx.gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(H, activation="relu", in_units=D))
    net.add(gluon.nn.Dense(C, in_units=H))
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    W1, b1, W2, b2 = init_weights()
    net[0].weight.set_data(mx.nd.array(W1))
    net[0].bias.set_data(mx.nd.array(b1))
    net[1].weight.set_data(mx.nd.array(W2))
    net[1].bias.set_data(mx.nd.array(b2))
    if hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})

    def step(x, y):
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH)
        return loss
    return step


def run_mode(mx, hybridize, X, y, steps, warmup, out, repeats):
    """Per repeat: the steps unprofiled, then profiled (one wait at the end
    of each, as in the anchor's epoch loop). The trace of the last repeat
    is kept; figures are medians over the repeats."""
    step = build(mx, hybridize)
    xs = [mx.nd.array(X[i * BATCH:(i + 1) * BATCH]) for i in range(steps + warmup)]
    ys = [mx.nd.array(y[i * BATCH:(i + 1) * BATCH]) for i in range(steps + warmup)]
    mx.nd.waitall()
    for i in range(warmup):
        step(xs[i], ys[i])
    mx.nd.waitall()
    task = mx.profiler.Domain("bench").new_task("step")
    runs = []
    for _ in range(repeats):
        t0 = perf()
        for i in range(steps):
            step(xs[warmup + i], ys[warmup + i])
        mx.nd.waitall()
        unprofiled = perf() - t0
        mx.profiler.set_config(profile_all=True, filename=out, aggregate_stats=True,
                               continuous_dump=False)
        mx.profiler.set_state("run")
        mx.profiler.dumps(reset=True)
        for i in range(steps):
            task.start()
            loss = step(xs[warmup + i], ys[warmup + i])
            task.stop()
        mx.nd.waitall()
        mx.profiler.set_state("stop")
        mx.profiler.dump()
        assert np.isfinite(loss.asnumpy()).all()
        with open(out) as f:
            summary = analyse(json.load(f)["traceEvents"])
        summary["wall_ms_unprofiled"] = round(unprofiled * 1e3, 3)
        runs.append(summary)
    summary = _median(runs)
    summary["trace"] = out
    summary["repeats"] = repeats
    return summary


def _median(runs):
    """The runs' summaries merged: numbers by their median, the rest (op
    name tables) from the last run."""
    last = runs[-1]
    if isinstance(last, dict):
        keys = [k for k in last if all(isinstance(r, dict) and k in r for r in runs)]
        if keys and all(isinstance(last[k], (int, float, dict)) for k in keys):
            return {k: _median([r[k] for r in runs]) for k in keys}
        return last
    if isinstance(last, (int, float)) and not isinstance(last, bool):
        return round(statistics.median(runs), 3)
    return last


# ------------------------------------------------------------------ analysis
class _Tracks:
    """Spans per track, for finding the innermost span open at a time."""

    def __init__(self, spans):
        self.by_tid = collections.defaultdict(list)
        for e in spans:
            self.by_tid[e["tid"]].append(e)
        for lst in self.by_tid.values():
            lst.sort(key=lambda e: e["ts"])
        self.starts = {t: [e["ts"] for e in lst] for t, lst in self.by_tid.items()}

    def at(self, tid, ts):
        lst = self.by_tid.get(tid, [])
        i = bisect.bisect_right(self.starts.get(tid, []), ts)
        best = None
        for e in reversed(lst[max(0, i - 64):i]):     # nesting is shallow
            if e["ts"] <= ts <= e["ts"] + e["dur"]:
                if best is None or e["ts"] > best["ts"]:
                    best = e
        return best


def analyse(events):
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    ops = {e["args"]["op"]: e for e in spans if e["cat"] == "operator"}
    top = [e for e in ops.values() if "parent" not in e["args"]]
    pushes = [e for e in spans if e["cat"] == "push"]
    steps = sorted((e for e in spans if e["name"] == "step"), key=lambda e: e["ts"])
    threads = collections.defaultdict(lambda: {"ops": 0, "busy_ms": 0.0, "pushes": 0})
    for e in top:
        t = threads[names.get(e["tid"], str(e["tid"]))]
        t["ops"] += 1
        t["busy_ms"] += e["dur"] / 1e3
    for e in pushes:
        threads[names.get(e["tid"], str(e["tid"]))]["pushes"] += 1
    for t in threads.values():
        t["busy_ms"] = round(t["busy_ms"], 3)
    per_step = []
    starts = sorted(p["ts"] for p in pushes)
    for s in steps:
        lo = bisect.bisect_left(starts, s["ts"])
        hi = bisect.bisect_right(starts, s["ts"] + s["dur"])
        per_step.append(hi - lo)
    queues = [e["args"]["queue_us"] for e in top]
    dispatch = [e["args"]["dispatch_us"] for e in top]
    wall = (max(e["ts"] + e["dur"] for e in ops.values()) - min(starts)) if ops else 0.0

    # the dependency graph from the flow arrows, then its heaviest chain
    tracks = _Tracks(spans)
    flow_s = {e["id"]: e for e in events if e["ph"] == "s" and e["cat"] == "dependency"}
    preds = collections.defaultdict(set)
    for f in (e for e in events if e["ph"] == "f" and e["cat"] == "dependency"):
        s = flow_s.get(f["id"])
        src, dst = tracks.at(s["tid"], s["ts"]), tracks.at(f["tid"], f["ts"])
        if src is not None and dst is not None and "op" in src.get("args", {}):
            preds[dst["args"]["op"]].add(src["args"]["op"])
    best = {}            # op -> (run time of the heaviest chain ending here, previous op)
    for op_id in sorted(ops, key=lambda i: ops[i]["ts"]):
        dur = ops[op_id]["dur"]
        prev = max(((best[p][0], p) for p in preds[op_id] if p in best), default=(0.0, None))
        best[op_id] = (prev[0] + dur, prev[1])
    chain = []
    if best:
        cur = max(best, key=lambda i: best[i][0])
        total = best[cur][0]
        while cur is not None:
            chain.append(cur)
            cur = best[cur][1]
        chain.reverse()
    else:
        total = 0.0
    counts = collections.Counter(ops[i]["name"] for i in chain)
    by_name = collections.defaultdict(float)
    for e in top:
        by_name[e["name"]] += e["dur"] / 1e3
    heavy = sorted(by_name.items(), key=lambda kv: -kv[1])[:6]
    return {
        "steps": len(steps),
        "ops": len(ops),
        "ops_per_step": {"median": statistics.median(per_step) if per_step else 0,
                         "min": min(per_step, default=0), "max": max(per_step, default=0)},
        "threads": dict(threads),
        "push_side_ms_per_step": round(statistics.median(e["dur"] for e in steps) / 1e3, 3)
        if steps else 0,
        "queue_ms": {"total": round(sum(queues) / 1e3, 3),
                     "median_per_op_us": round(statistics.median(queues), 1) if queues else 0},
        "dispatch_ms": {"total": round(sum(dispatch) / 1e3, 3),
                        "median_per_op_us": round(statistics.median(dispatch), 1)
                        if dispatch else 0},
        "wall_ms": round(wall / 1e3, 3),
        "longest_chain": {"ops": len(chain),
                          "ops_per_step": round(len(chain) / max(len(steps), 1), 1),
                          "run_ms": round(total / 1e3, 3),
                          "dispatch_ms": round(sum(ops[i]["args"]["dispatch_us"]
                                                   for i in chain) / 1e3, 3),
                          "share_of_wall": round(total / wall, 3) if wall else 0,
                          "op_names": dict(counts.most_common(8))},
        "dependency_flows": sum(len(p) for p in preds.values()),
        "top_ops_ms": {k: round(v, 3) for k, v in heavy},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="trace path; the mode is put before its suffix")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--mode", choices=("both", "imperative", "hybridized"), default="both")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import aiond as mx
    X, y = make_data((args.steps + args.warmup) * BATCH)
    stem, ext = os.path.splitext(args.out)
    modes = ("imperative", "hybridized") if args.mode == "both" else (args.mode,)
    before = numpy_step_ms(X, y, args.steps)
    res = {"steps": args.steps, "batch": BATCH, "workers": mx.engine.statistics().workers}
    for m in modes:
        res[m] = run_mode(mx, m == "hybridized", X, y, args.steps, args.warmup,
                          "%s.%s%s" % (stem, m, ext or ".json"), args.repeats)
    # numpy before aiond started (BLAS on its own threads) and after (aiond's
    # workers pinned BLAS to one thread each, process-wide)
    res["numpy_step_ms"] = {"before": round(before, 3),
                            "after": round(numpy_step_ms(X, y, args.steps), 3)}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
