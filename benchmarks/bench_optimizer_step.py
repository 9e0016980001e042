"""gluon.Trainer.step with SGD (momentum 0.9, wd 1e-4): aiond vs numpy (same process).

Two models of 20 parameters (10 Dense layers, weights and biases), their
gradients set once from RandomState(7) and a backward before every step to
keep them fresh (outside the timer):
  mixed   in 256, units 512 256 128 64 32 16 8 4 2 1 (~0.34 M elements)
  small   in 16, units 16 x 9 then 1 (~2.6 k elements: dispatch-bound)

Trainers, each timed per ``tr.step(batch)`` + ``mx.nd.waitall()``:
  fused   aiond's default (MXNET_OPTIMIZER_AGGREGATION_SIZE unset): MXNet's
          groups of 4 for the numbers, consecutive groups in one op
  agg4    MXNET_OPTIMIZER_AGGREGATION_SIZE=4: one multi_sgd_mom_update per 4
          weights, as MXNet pushes them
  agg1    MXNET_OPTIMIZER_AGGREGATION_SIZE=1: one op per weight
  numpy   the same update in a numpy loop over the 20 arrays (the yardstick:
          ``mom = momentum*mom - lr*wd*w - lr*rescale*g; w += mom``)
The variable is read when the optimizer is built, so every trainer lives in
this process; the trainers alternate order every repeat; each figure is the
median over repeats x steps; ratios are per repeat (median step time / the
numpy median next to it), then the median. ``ops_per_step`` counts engine
pushes (ops_pushed + ops_inline) in one step. After the timed steps every
trainer's weights must equal the numpy loop's to 1e-5 (relative).

    .venv/bin/python benchmarks/bench_optimizer_step.py [--steps 30]
        [--mxnet-python /tmp/gcv-mx/bin/python]

With --mxnet-python the same function runs in MXNet 1.9.1 (agg4 is its
default there, agg1 its per-weight setting; ``fused`` is then MXNet's default).
"""
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (aiond_engine_facts, alternate, check, dig, emit, log,  # noqa: E402
                     parse, parser, perf, summary, target)

MODELS = {"mixed": (256, (512, 256, 128, 64, 32, 16, 8, 4, 2, 1)),
          "small": (16, (16,) * 9 + (1,))}
LR, MOM, WD, BATCH = 0.01, 0.9, 1e-4, 8
ENV = "MXNET_OPTIMIZER_AGGREGATION_SIZE"


def build(mx, model, size):
    """A net, its trainer (the env var set as ``size`` while the optimizer is
    built) and the fixed gradients."""
    in_units, units = MODELS[model]
    net = mx.gluon.nn.Sequential(prefix="%s%s_" % (model, size))
    with net.name_scope():
        n_in = in_units
        for u in units:
            net.add(mx.gluon.nn.Dense(u, in_units=n_in))
            n_in = u
    net.initialize(mx.init.Zero())
    params = [p for _, p in sorted(net.collect_params().items())]
    r = np.random.RandomState(5)
    for p in params:
        p.set_data(mx.nd.array(r.randn(*p.shape).astype(np.float32) * 0.1))
    old = os.environ.pop(ENV, None)
    if size is not None:
        os.environ[ENV] = str(size)
    try:
        tr = mx.gluon.Trainer(net.collect_params(), "sgd",
                              {"learning_rate": LR, "momentum": MOM, "wd": WD})
    finally:
        os.environ.pop(ENV, None)
        if old is not None:
            os.environ[ENV] = old
    x = mx.nd.ones((BATCH, in_units))
    return net, params, tr, x


def grads_for(params):
    r = np.random.RandomState(7)
    return [r.randn(*p.shape).astype(np.float32) for p in params]


def step_times(mx, model, size, steps, with_ops):
    net, params, tr, x = build(mx, model, size)
    gs = grads_for(params)
    times, ops = [], None
    for k in range(steps + 1):      # step 0 creates the momenta: not timed
        with mx.autograd.record():
            loss = net(x).sum()
        loss.backward()
        for p, g in zip(params, gs):
            p.grad()[:] = g
        mx.nd.waitall()
        if with_ops and k == 1:
            s = mx.engine.statistics()
            before = s.ops_pushed + s.ops_inline
        t0 = perf()
        tr.step(BATCH)
        if with_ops and k == 1:
            s = mx.engine.statistics()
            ops = s.ops_pushed + s.ops_inline - before
        mx.nd.waitall()
        if k:
            times.append(perf() - t0)
    return times, ops, [p.data().asnumpy() for p in params]


def numpy_times(model, steps):
    in_units, units = MODELS[model]
    shapes = []
    n_in = in_units
    for u in units:
        shapes += [(u,), (u, n_in)]     # sorted names: bias before weight
        n_in = u
    r = np.random.RandomState(5)
    ws = [r.randn(*s).astype(np.float32) * np.float32(0.1) for s in shapes]
    gs = grads_for([type("P", (), {"shape": s}) for s in shapes])
    moms = [np.zeros_like(w) for w in ws]
    f = np.float32
    lrwd, lrres, m = f(LR) * f(WD), f(LR) * f(1.0 / BATCH), f(MOM)
    times = []
    for k in range(steps + 1):
        t0 = perf()
        for w, g, mom in zip(ws, gs, moms):
            mom *= m
            mom -= lrwd * w
            mom -= lrres * g
            w += mom
        if k:
            times.append(perf() - t0)
    return times, ws


def measure(mx, backend, p):
    """Every trainer of both models, interleaved; also the MXNet worker's entry."""
    ops_ok = backend == "aiond"
    res = {"lr": LR, "momentum": MOM, "wd": WD, "batch": BATCH, "steps": p["steps"]}
    for model in MODELS:
        modes = [("fused", None), ("agg4", 4), ("agg1", 1), ("numpy", "numpy")]
        runs = {m: [] for m, _ in modes}
        ops = {}
        finals = {}
        for rep in range(p["repeats"] + 1):     # repeat 0 warms up
            for m, size in alternate(modes, rep):
                if size == "numpy":
                    t, ws = numpy_times(model, p["steps"])
                else:
                    t, n, ws = step_times(mx, model, size, p["steps"], ops_ok)
                    ops[m] = n
                finals[m] = ws
                if rep:
                    runs[m].append(t)
        ref = finals["numpy"]
        for m in runs:
            for a, b in zip(finals[m], ref):
                check(np.allclose(a.reshape(b.shape), b, rtol=1e-5, atol=1e-6),
                      "%s %s %s: weights differ from the numpy loop" % (backend, model, m))
        r = {}
        for m, rr in runs.items():
            meds = [statistics.median(t) for t in rr]
            r[m] = {"ms_per_step": summary([s for t in rr for s in t], 1e3)}
            if m != "numpy":
                nmeds = [statistics.median(t) for t in runs["numpy"]]
                r[m]["vs_numpy"] = summary([a / b for a, b in zip(meds, nmeds)])
                r[m]["ops_per_step"] = ops.get(m)
        fused = [statistics.median(t) for t in runs["fused"]]
        agg1 = [statistics.median(t) for t in runs["agg1"]]
        r["agg1_over_fused"] = summary([a / b for a, b in zip(agg1, fused)])
        r["elements"] = int(sum(w.size for w in ref))
        res[model] = r
        log("optimizer_step[%s] %s: %s" % (backend, model, {
            m: (r[m]["ms_per_step"]["median"], r[m].get("ops_per_step")) for m in runs}))
    return res


def main():
    p = parser(__doc__.splitlines()[0], repeats=3)
    p.add_argument("--steps", type=int, default=30, help="timed steps per run")
    args = parse(p)
    params = {"repeats": args.repeats, "steps": args.steps}
    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params), "engine": aiond_engine_facts(mx)}
    if args.mxnet_python:
        from _common import run_mxnet
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_optimizer_step", "measure",
                                         params, args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)
    A, M = results["aiond"], results.get("mxnet") or {}
    targets = []
    for model in MODELS:
        for m in ("fused", "agg4", "agg1"):
            targets.append(target(
                "%s %s ms/step" % (model, m), dig(A, model, m, "ms_per_step", "median"),
                unit="ms", numpy=dig(A, model, "numpy", "ms_per_step", "median"),
                mxnet=dig(M, model, m, "ms_per_step", "median"),
                note="ops/step %s" % dig(A, model, m, "ops_per_step")))
        targets.append(target("%s fused vs numpy" % model,
                              dig(A, model, "fused", "vs_numpy", "median"), unit="x",
                              mxnet=dig(M, model, "agg4", "vs_numpy", "median"),
                              note="mxnet: its default (groups of 4) vs its numpy"))
        targets.append(target("%s agg1 / fused" % model,
                              dig(A, model, "agg1_over_fused", "median"), unit="x"))
    emit("optimizer_step", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
