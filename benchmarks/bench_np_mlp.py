"""A hybridized MLP written with the NumPy interface (``F.np``/``F.npx``)
against the same net written with legacy ops (``F.FullyConnected``): issue
32's speed target is that the first trains as fast as the second.

Net 784-256(relu)-128(relu)-10 on batches of 64, softmax cross-entropy
(``log_softmax`` + ``pick``), plain SGD through ``gluon.Trainer``. Both
nets start from the same weights and see the same batches, so their losses
must agree step by step; both are checked against a numpy implementation
of the same step (also timed, as the yardstick).

    .venv/bin/python benchmarks/bench_np_mlp.py [--steps 200] [--repeats 5]
        [--mxnet-python /work/venvs/mx/bin/python]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (check, dig, emit, log, np_softmax_ce, parse, parser, perf,  # noqa: E402
                     run_mxnet, summary, target)

SIZES = (784, 256, 128, 10)
B, LR = 64, 0.05


def _weights():
    rs = np.random.RandomState(1)
    ws = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        ws += [(rs.randn(o, i) * np.sqrt(2.0 / i)).astype(np.float32), np.zeros(o, np.float32)]
    return ws


def _batches(n):
    rs = np.random.RandomState(0)
    return [(rs.randn(B, SIZES[0]).astype(np.float32),
             rs.randint(0, SIZES[-1], B).astype(np.float32)) for _ in range(n)]


def build(mx, flavour):
    """A hybridized net of ``flavour`` 'legacy' or 'np', its trainer and loss."""
    gluon = mx.gluon

    class MLP(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                for k, (i, o) in enumerate(zip(SIZES[:-1], SIZES[1:])):
                    setattr(self, "w%d" % k, self.params.get("w%d" % k, shape=(o, i)))
                    setattr(self, "b%d" % k, self.params.get("b%d" % k, shape=(o,)))

        def hybrid_forward(self, F, x, label, w0, b0, w1, b1, w2, b2):
            if flavour == "np":
                h = F.npx.relu(F.np.dot(x, w0.T) + b0)
                h = F.npx.relu(F.np.dot(h, w1.T) + b1)
                out = F.np.dot(h, w2.T) + b2
                return -F.npx.pick(F.npx.log_softmax(out), label)
            h = F.relu(F.FullyConnected(x, w0, b0, num_hidden=SIZES[1]))
            h = F.relu(F.FullyConnected(h, w1, b1, num_hidden=SIZES[2]))
            out = F.FullyConnected(h, w2, b2, num_hidden=SIZES[3])
            return -F.pick(F.log_softmax(out), label)

    net = MLP()
    net.initialize()
    for p, w in zip([net.w0, net.b0, net.w1, net.b1, net.w2, net.b2], _weights()):
        p.set_data(mx.np.array(w) if flavour == "np" else mx.nd.array(w))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    return net, trainer


def workload(mx, who, params):
    """Per flavour: seconds for ``steps`` training steps (medians over repeats)
    and the losses of the first steps."""
    steps, repeats = params["steps"], params["repeats"]
    data = _batches(8)
    res = {}
    for flavour in ("legacy", "np"):
        if flavour == "np":
            mx.npx.set_np()
        try:
            net, trainer = build(mx, flavour)
            arr = mx.np.array if flavour == "np" else mx.nd.array
            batches = [(arr(x), arr(y)) for x, y in data]
            losses = []
            for x, y in batches[:3]:                      # warm-up, and the check
                with mx.autograd.record():
                    loss = net(x, y)
                loss.backward()
                trainer.step(B)
                losses.append(float(loss.mean().asnumpy().reshape(-1)[0]))
            times = []
            for _ in range(repeats):
                t0 = perf()
                for s in range(steps):
                    x, y = batches[s % len(batches)]
                    with mx.autograd.record():
                        loss = net(x, y)
                    loss.backward()
                    trainer.step(B)
                mx.nd.waitall()
                times.append(perf() - t0)
        finally:
            if flavour == "np":
                mx.npx.reset_np()
        res[flavour] = {"step_us": [t / steps * 1e6 for t in times], "losses": losses}
        log("%s %s: %.1f us/step" % (who, flavour, sorted(res[flavour]["step_us"])[repeats // 2]))
    return res


def numpy_losses(n):
    ws = _weights()
    losses = []
    for x, y in _batches(8)[:n]:
        hs, h = [x], x
        for k in range(3):
            z = h @ ws[2 * k].T + ws[2 * k + 1]
            h = np.maximum(z, 0) if k < 2 else z
            hs.append(h)
        loss, g = np_softmax_ce(h, y.astype(np.int64))
        losses.append(float(loss.mean()))
        g = g / 1.0
        for k in (2, 1, 0):
            gw, gb = g.T @ hs[k], g.sum(0)
            if k:
                g = (g @ ws[2 * k]) * (hs[k] > 0)
            ws[2 * k] -= LR / B * gw
            ws[2 * k + 1] -= LR / B * gb
    return losses


def main():
    p = parser(__doc__)
    p.add_argument("--steps", type=int, default=200)
    args = parse(p)
    import aiond as mx
    params = {"steps": args.steps, "repeats": args.repeats}
    res = workload(mx, "aiond", params)
    ref = numpy_losses(3)
    for flavour in ("legacy", "np"):
        check(np.allclose(res[flavour]["losses"], ref, rtol=1e-4, atol=1e-5),
              "%s losses %s != numpy %s" % (flavour, res[flavour]["losses"], ref))
    mxr = None
    if args.mxnet_python:
        mxr = run_mxnet(args.mxnet_python, "bench_np_mlp", "workload", params,
                        args.mxnet_timeout)
    ratios = [n / l for n, l in zip(res["np"]["step_us"], res["legacy"]["step_us"])]
    results = {"aiond": res, "mxnet": mxr}
    med = summary
    targets = [
        target("np MLP step (us)", med(res["np"]["step_us"])["median"], unit="us",
               mxnet=dig(mxr, "np", "step_us") and med(mxr["np"]["step_us"])["median"]),
        target("legacy MLP step (us)", med(res["legacy"]["step_us"])["median"], unit="us",
               mxnet=dig(mxr, "legacy", "step_us") and med(mxr["legacy"]["step_us"])["median"]),
        target("np step / legacy step", med(ratios)["median"], "<=", 1.05, unit="x"),
    ]
    emit("bench_np_mlp", args, results, targets, params)


if __name__ == "__main__":
    main()
