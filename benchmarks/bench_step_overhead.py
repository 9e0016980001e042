"""A Gluon training step's own cost: the framework's time per step on a net
too small for its kernels to matter.

An MLP 8-16(relu)-4 on a batch of 4, SGD; each step is
``with record(): loss = loss_fn(net(x), y)``, ``loss.backward()``,
``trainer.step(4)``. What a step costs here is what the framework adds to
every step of a real loop (dispatch, tape, plans, the optimizer's
bookkeeping), while real kernels add their own time on top. Cases:
  hyb_ce      hybridized net, SoftmaxCrossEntropyLoss (the usual loop)
  imp_ce      the same net not hybridized
  hyb_bce     hybridized net, SigmoidBCELoss (a loss of several ops)
  hyb_bce_hl  hybridized net and hybridized SigmoidBCELoss
Per case: microseconds per step (``--steps`` steps, then one ``waitall``)
and the time spent in each phase's call (net, loss, backward, step; MXNet
pushes asynchronously, so its phases are push times). numpy: the same
step written by hand (forward, softmax cross-entropy or BCE gradient,
backward, update). Final losses are checked against numpy's trainer.

    .venv/bin/python benchmarks/bench_step_overhead.py [--steps 2000] [--repeats 5]
        [--mxnet-python /tmp/gcv-mx/bin/python]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (check, dig, emit, log, np_softmax_ce, parse, parser, run_mxnet,  # noqa: E402
                     summary, target)

perf = time.perf_counter
D, H, C, B, LR = 8, 16, 4, 4, 0.1
CASES = ("hyb_ce", "imp_ce", "hyb_bce", "hyb_bce_hl")


def _data(bce):
    rs = np.random.RandomState(0)
    x = rs.randn(B, D).astype(np.float32)
    y = rs.randint(0, 2, (B, C)).astype(np.float32) if bce else \
        rs.randint(0, C, B).astype(np.float32)
    return x, y


def _weights():
    rs = np.random.RandomState(1)
    return [(rs.randn(H, D) * 0.3).astype(np.float32), np.zeros(H, np.float32),
            (rs.randn(C, H) * 0.3).astype(np.float32), np.zeros(C, np.float32)]


def np_steps(n, bce):
    """The hand-written trainer: returns (seconds per step, final loss)."""
    x, y = _data(bce)
    W1, b1, W2, b2 = _weights()
    lab = y.astype(int)
    loss = None
    t0 = perf()
    for _ in range(n):
        h = x @ W1.T + b1
        a = np.maximum(h, 0)
        o = a @ W2.T + b2
        if bce:
            p = 1 / (1 + np.exp(-o))
            loss = (np.maximum(o, 0) - o * y + np.log1p(np.exp(-np.abs(o)))).mean(1)
            g = (p - y) / C / B
        else:
            loss, g = np_softmax_ce(o, lab)
            g /= B
        gW2, gb2 = g.T @ a, g.sum(0)
        ga = g @ W2
        ga[h <= 0] = 0
        gW1, gb1 = ga.T @ x, ga.sum(0)
        W1 -= LR * gW1
        b1 -= LR * gb1
        W2 -= LR * gW2
        b2 -= LR * gb2
    return (perf() - t0) / n, loss


def mx_case(mx, case, n, repeats):
    nd, gluon, autograd = mx.nd, mx.gluon, mx.autograd
    bce = "bce" in case
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(H, activation="relu", in_units=D), gluon.nn.Dense(C, in_units=H))
    net.initialize()
    for p, w in zip(net.collect_params().values(), _weights()):
        p.set_data(nd.array(w))
    if case.startswith("hyb"):
        net.hybridize()
    loss_fn = gluon.loss.SigmoidBCELoss() if bce else gluon.loss.SoftmaxCrossEntropyLoss()
    if case.endswith("_hl"):
        loss_fn.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    xn, yn = _data(bce)
    x, y = nd.array(xn), nd.array(yn)
    phases = np.zeros(4)

    def steps(k):
        acc = np.zeros(4)
        loss = None
        for _ in range(k):
            t0 = perf()
            with autograd.record():
                out = net(x)
                t1 = perf()
                loss = loss_fn(out, y)
                t2 = perf()
            loss.backward()
            t3 = perf()
            trainer.step(B)
            t4 = perf()
            acc += (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        nd.waitall()
        return acc, loss

    # the checked run: n steps from the fixed weights, against numpy's trainer
    _, loss = steps(n)
    times = []
    for r in range(repeats + 1):
        t0 = perf()
        acc, _ = steps(n)
        dt = perf() - t0
        if r:
            times.append(dt / n)
            phases += acc / n
    return times, phases / repeats, loss.asnumpy()


def measure(mx, backend, p):
    res = {}
    n, R = p["steps"], p["repeats"]
    for case in CASES:
        log("step_overhead[%s]: %s" % (backend, case))
        times, phases, loss = mx_case(mx, case, n, R)
        _, want = np_steps(n, "bce" in case)    # the checked run: n steps from the start
        err = float(np.abs(loss - want).max())
        check(err < 1e-3, "%s %s: final loss differs from numpy's trainer by %g"
              % (backend, case, err))
        res[case] = {"us_per_step": summary(times, 1e6, 1),
                     "phases_us": dict(zip(("net", "loss", "backward", "step"),
                                           [round(v * 1e6, 1) for v in phases]))}
    return res


def main():
    p = parser(__doc__.splitlines()[0], repeats=5)
    p.add_argument("--steps", type=int, default=2000, help="steps per timed run")
    args = parse(p)
    params = {"steps": args.steps, "repeats": args.repeats}
    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params)}
    results["numpy"] = {}
    for bce in (False, True):
        ts = [np_steps(args.steps, bce)[0] for _ in range(args.repeats)]
        results["numpy"]["bce" if bce else "ce"] = {"us_per_step": summary(ts, 1e6, 1)}
    if args.mxnet_python:
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_step_overhead", "measure",
                                         params, args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)
    A, M, N = results["aiond"], results.get("mxnet") or {}, results["numpy"]
    targets = []
    for case in CASES:
        targets.append(target(
            "%s us/step" % case, dig(A, case, "us_per_step", "median"), unit="us",
            numpy=dig(N, "bce" if "bce" in case else "ce", "us_per_step", "median"),
            mxnet=dig(M, case, "us_per_step", "median")))
    emit("step_overhead", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
