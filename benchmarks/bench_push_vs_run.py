"""Does pushing a training step overlap running it?  (issue 11)

A hybridized Gluon MLP step (784-256-10, batch 128, softmax cross-entropy,
SGD 0.1) on 20,000 random rows, timed per epoch three ways in one process:

  gated   every step of the epoch is pushed while a gate op holds the first
          layer's weight, so nothing runs during the pushes; then the gate
          opens and the workers run the epoch alone. Gives the pushing
          thread's time per step and the workers' time per step, separately.
  free    the same epoch, nothing held: the time per step that users see.
  numpy   the hand-written numpy step (the yardstick).

If pushing and running overlapped, ``free`` would be close to
max(push, run); if they serialize (on the GIL), close to push + run.

    .venv/bin/python benchmarks/bench_push_vs_run.py [--repeats 3]
"""
import os
import statistics
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import alternate, emit, log, parse, parser, perf, summary, target  # noqa: E402

N, D, H, C, B, LR = 20000, 784, 256, 10, 128, 0.1


def make():
    rs = np.random.RandomState(0)
    X = rs.rand(N, D).astype(np.float32)
    y = rs.randint(0, C, N)
    return X, y


def numpy_epoch(X, y, ws):
    W1, b1, W2, b2 = ws
    onehot = np.eye(C, dtype=np.float32)
    t0 = perf()
    for i in range(N // B):
        x, t = X[i * B:(i + 1) * B], y[i * B:(i + 1) * B]
        h = x @ W1.T + b1
        np.maximum(h, 0, out=h)
        z = h @ W2.T + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        dz = (p - onehot[t]) * np.float32(1.0 / B)
        dW2, db2 = dz.T @ h, dz.sum(axis=0)
        dh = dz @ W2
        dh[h <= 0] = 0
        dW1, db1 = dh.T @ x, dh.sum(axis=0)
        W1 -= LR * dW1
        b1 -= LR * db1
        W2 -= LR * dW2
        b2 -= LR * db2
    return (perf() - t0) / (N // B)


def main():
    p = parser(__doc__.splitlines()[0], repeats=3)
    args = parse(p)
    import aiond as mx
    from aiond import autograd, gluon, nd
    X, y = make()
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(H, activation="relu", in_units=D))
    net.add(gluon.nn.Dense(C, in_units=H))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    batches = [(nd.array(X[i * B:(i + 1) * B]), nd.array(y[i * B:(i + 1) * B]))
               for i in range(N // B)]
    mx.engine.set_limits(max_pending_ops=1 << 20)     # let a whole epoch queue up
    ws_np = [p.data().asnumpy() for p in net.collect_params().values()]

    def aiond_epoch(gated):
        nd.waitall()
        ev = threading.Event()
        if gated:
            mx.engine.push(lambda: ev.wait(60), reads=[], writes=[net[0].weight.data()],
                           name="gate")
        t0 = perf()
        for x, t in batches:
            with autograd.record():
                loss = loss_fn(net(x), t)
            loss.backward()
            trainer.step(B)
        t_push = perf() - t0
        t1 = perf()
        ev.set()
        nd.waitall()
        t_run = perf() - t1
        n = len(batches)
        return t_push / n, t_run / n, (t_push + t_run) / n

    aiond_epoch(False)       # compile the plans, warm the caches
    runs = {"gated": [], "free": [], "numpy": []}
    modes = [("gated", lambda: aiond_epoch(True)), ("free", lambda: aiond_epoch(False)),
             ("numpy", lambda: numpy_epoch(X, y, [w.copy() for w in ws_np]))]
    for r in range(args.repeats):
        for name, fn in alternate(modes, r):
            runs[name].append(fn())
            log("push_vs_run %s repeat %d: %s" % (name, r, runs[name][-1]))
    gated_push = [g[0] for g in runs["gated"]]
    gated_run = [g[1] for g in runs["gated"]]
    free_total = [f[2] for f in runs["free"]]
    res = {
        "steps_per_epoch": len(batches),
        "gated_push_ms_per_step": summary(gated_push, 1e3),
        "gated_run_ms_per_step": summary(gated_run, 1e3),
        "free_ms_per_step": summary(free_total, 1e3),
        "numpy_ms_per_step": summary(runs["numpy"], 1e3),
        "free_vs_push_plus_run": round(statistics.median(
            [f / (p_ + r_) for f, p_, r_ in zip(free_total, gated_push, gated_run)]), 3),
        "free_vs_max_push_run": round(statistics.median(
            [f / max(p_, r_) for f, p_, r_ in zip(free_total, gated_push, gated_run)]), 3),
        "free_vs_numpy": round(statistics.median(
            [f / n for f, n in zip(free_total, runs["numpy"])]), 3),
    }
    targets = [
        target("free step / max(push, run) (1.0: they overlap)", res["free_vs_max_push_run"],
               unit="x"),
        target("free step / (push + run) (1.0: they serialize)", res["free_vs_push_plus_run"],
               unit="x"),
        target("free step / numpy step", res["free_vs_numpy"], "<=", 1.1, unit="x"),
    ]
    emit("push_vs_run", args, {"aiond": res}, targets, {"repeats": args.repeats})


if __name__ == "__main__":
    main()
