"""MLP training through the symbolic API: aiond vs numpy (same process).

The workload of /work/shared/bench/mlp_train.py: a 784-256-10 MLP (ReLU,
softmax cross-entropy), plain SGD lr 0.1, batch 128, on X ~ U[-1,1)^(N x 784)
(RandomState(0)) with label = argmax(X @ W) for a fixed Gaussian W; 60,000
rows train and 10,000 are a holdout; every trainer starts from the same
Glorot-uniform weights (RandomState(1)); the last partial batch is dropped.

Trainers, each timed per epoch (data iteration included, one wait at the
epoch end):
  numpy        the hand-written numpy forward/backward (the yardstick),
               batches from a per-epoch permutation RandomState(100 + epoch)
  simple_bind  ``net.simple_bind`` + a manual SGD step per parameter
               (``W[:] = W - G * (lr / batch)``), as in the seed script, on
               the same batches as numpy
  module       ``mx.mod.Module(net).fit(NDArrayIter(shuffle=True,
               last_batch_handle='discard'), optimizer='sgd', eval_metric='acc')``:
               the whole Module loop (metric, per-epoch logging and syncs)
One warm-up run of each is thrown away; then runs interleave (the order
alternates every repeat); ratios are per run
(median epoch time of the trainer / median epoch time of the numpy run next
to it), then the median. Train and holdout accuracy after the last epoch
must match numpy's (within 2 points: the shuffle orders differ).

    .venv/bin/python benchmarks/bench_mlp_train.py [--epochs 2] [--n-train 60000]
        [--mxnet-python .venvs/mxnet/bin/python]
"""
import logging
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (aiond_engine_facts, alternate, check, dig, emit, log,  # noqa: E402
                     parse, parser, perf, summary, target)

N_HOLD, D, H, C = 10000, 784, 256, 10
LR, BATCH = 0.1, 128


# ---------------------------------------------- data / numpy (copied, not imported,
# from /work/shared/bench/mlp_train.py so the two stay independent)
def make_data(n_train):
    rs = np.random.RandomState(0)
    X = (rs.rand(n_train + N_HOLD, D) * 2 - 1).astype(np.float32)
    W = rs.randn(D, C)
    y = np.argmax(X.astype(np.float64) @ W, axis=1).astype(np.int64)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def init_weights():
    """Glorot-uniform weights in (out, in) layout, zero biases."""
    rs = np.random.RandomState(1)
    g = lambda o, i: rs.uniform(-1, 1, (o, i)).astype(np.float32) * np.float32(  # noqa: E731
        np.sqrt(6.0 / (o + i)))
    return [g(H, D), np.zeros(H, np.float32), g(C, H), np.zeros(C, np.float32)]


def accuracy(predict, X, y):
    """`predict` maps a float32 numpy batch to logits as numpy."""
    hits = 0
    for i in range(0, len(X), 10000):
        hits += int((predict(X[i:i + 10000]).argmax(axis=1) == y[i:i + 10000]).sum())
    return hits / len(X)


def batches(Xtr, ytr, epoch):
    nb = len(Xtr) // BATCH
    perm = np.random.RandomState(100 + epoch).permutation(len(Xtr))
    Xs, ys = Xtr[perm], ytr[perm]
    for i in range(nb):
        yield Xs[i * BATCH:(i + 1) * BATCH], ys[i * BATCH:(i + 1) * BATCH]


def train_numpy(data, epochs):
    Xtr, ytr, Xho, yho = data
    W1, b1, W2, b2 = init_weights()
    onehot = np.eye(C, dtype=np.float32)
    epoch_secs = []
    for epoch in range(epochs):
        t0 = perf()
        for x, y in batches(Xtr, ytr, epoch):
            h = x @ W1.T + b1
            np.maximum(h, 0, out=h)
            z = h @ W2.T + b2
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            dz = (p - onehot[y]) * np.float32(1.0 / BATCH)
            dW2, db2 = dz.T @ h, dz.sum(axis=0)
            dh = dz @ W2
            dh[h <= 0] = 0
            dW1, db1 = dh.T @ x, dh.sum(axis=0)
            W1 -= LR * dW1; b1 -= LR * db1; W2 -= LR * dW2; b2 -= LR * db2  # noqa: E702
        epoch_secs.append(perf() - t0)

    def predict(x):
        return np.maximum(x @ W1.T + b1, 0) @ W2.T + b2
    return epoch_secs, accuracy(predict, Xtr, ytr), accuracy(predict, Xho, yho)


# ---------------------------------------------------------- symbolic trainers
def mlp_symbol(mx):
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=H, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=C, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def init_params(mx):
    W1, b1, W2, b2 = init_weights()
    return {"fc1_weight": mx.nd.array(W1), "fc1_bias": mx.nd.array(b1),
            "fc2_weight": mx.nd.array(W2), "fc2_bias": mx.nd.array(b2)}


def predictor(mx, net, params):
    """Logits of a batch of up to 10,000 rows (a graph without the softmax)."""
    logits = net.get_internals()["fc2_output"]
    cache = {}

    def predict(x):
        exe = cache.get(x.shape[0])
        if exe is None:
            exe = cache[x.shape[0]] = logits.simple_bind(mx.cpu(), grad_req="null",
                                                         data=x.shape)
            exe.copy_params_from(params)
        exe.arg_dict["data"][:] = x
        return exe.forward()[0].asnumpy()
    return predict


def train_simple_bind(mx, data, epochs):
    Xtr, ytr, Xho, yho = data
    net = mlp_symbol(mx)
    exe = net.simple_bind(mx.cpu(), data=(BATCH, D), softmax_label=(BATCH,))
    params = init_params(mx)
    exe.copy_params_from(params)
    names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    pairs = [(exe.arg_dict[n], exe.grad_dict[n]) for n in names]
    x_in, y_in = exe.arg_dict["data"], exe.arg_dict["softmax_label"]
    step = LR / BATCH   # SoftmaxOutput's gradient is summed over the batch
    epoch_secs = []
    for epoch in range(epochs):
        t0 = perf()
        for x, y in batches(Xtr, ytr, epoch):
            x_in[:] = x
            y_in[:] = y
            exe.forward(is_train=True)
            exe.backward()
            for W, G in pairs:
                W[:] = W - G * step
        mx.nd.waitall()
        epoch_secs.append(perf() - t0)
    trained = {n: exe.arg_dict[n] for n in names}
    predict = predictor(mx, net, trained)
    return epoch_secs, accuracy(predict, Xtr, ytr), accuracy(predict, Xho, yho)


def train_module(mx, data, epochs):
    Xtr, ytr, Xho, yho = data
    np.random.seed(0)  # NDArrayIter shuffles with numpy's global RNG
    it = mx.io.NDArrayIter(Xtr, ytr.astype(np.float32), batch_size=BATCH, shuffle=True,
                           last_batch_handle="discard")
    mod = mx.mod.Module(mlp_symbol(mx), context=mx.cpu(),
                        logger=logging.getLogger("bench_mlp_train"))
    stamps = []

    def epoch_end(epoch, sym, arg, aux):
        mx.nd.waitall()
        stamps.append(perf())
    t0 = perf()
    mod.fit(it, num_epoch=epochs, arg_params=init_params(mx), optimizer="sgd",
            optimizer_params={"learning_rate": LR}, eval_metric="acc",
            epoch_end_callback=epoch_end)
    epoch_secs = [b - a for a, b in zip([t0] + stamps[:-1], stamps)]
    arg, _ = mod.get_params()
    predict = predictor(mx, mod.symbol, arg)
    return epoch_secs, accuracy(predict, Xtr, ytr), accuracy(predict, Xho, yho)


def measure(mx, backend, p):
    """numpy, simple_bind and module, interleaved; also the MXNet worker's entry."""
    logging.getLogger("bench_mlp_train").setLevel(logging.WARNING)
    t0 = perf()
    data = make_data(p["n_train"])
    log("mlp_train[%s]: data ready in %.1fs" % (backend, perf() - t0))
    modes = [("numpy", lambda: train_numpy(data, p["epochs"])),
             ("simple_bind", lambda: train_simple_bind(mx, data, p["epochs"])),
             ("module", lambda: train_module(mx, data, p["epochs"]))]
    runs = {m: [] for m, _ in modes}
    for rep in range(p["repeats"] + 1):  # repeat 0 warms up (page cache, pools, BLAS)
        for m, fn in alternate(modes, rep):
            r = fn()
            log("mlp_train[%s] %s run %d%s: s/epoch %s, acc train %.4f holdout %.4f"
                % (backend, m, rep, " (warm-up)" if rep == 0 else "",
                   [round(s, 3) for s in r[0]], r[1], r[2]))
            if rep:
                runs[m].append(r)
    res = {"epochs": p["epochs"], "n_train": p["n_train"], "batch": BATCH, "lr": LR,
           "batches_per_epoch": p["n_train"] // BATCH}
    for m, rr in runs.items():
        secs = [s for run in rr for s in run[0]]
        res[m] = {"sec_per_epoch": summary(secs),
                  "epoch_secs": [[round(s, 3) for s in run[0]] for run in rr],
                  "train_acc": [round(run[1], 4) for run in rr],
                  "holdout_acc": [round(run[2], 4) for run in rr]}
        if m != "numpy":
            per_run = [statistics.median(a[0]) / statistics.median(b[0])
                       for a, b in zip(rr, runs["numpy"])]
            res[m]["vs_numpy"] = summary(per_run, digits=3)
            for k, i in (("train_acc", 1), ("holdout_acc", 2)):
                ref = statistics.median(run[i] for run in runs["numpy"])
                got = statistics.median(run[i] for run in rr)
                check(abs(got - ref) <= 0.02,
                      "%s %s: %s %.4f vs numpy %.4f" % (backend, m, k, got, ref))
    if backend == "aiond":
        res["engine"] = aiond_engine_facts(mx)
    return res


def main():
    p = parser(__doc__.splitlines()[0], repeats=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--n-train", type=int, default=60000,
                   help="training rows (default %(default)s; fewer for a quick run)")
    args = parse(p)
    params = {"repeats": args.repeats, "epochs": args.epochs, "n_train": args.n_train}

    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params)}
    if args.mxnet_python:
        from _common import run_mxnet
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_mlp_train", "measure",
                                         params, args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)
    A, M = results["aiond"], results.get("mxnet") or {}
    targets = []
    for m, label in (("simple_bind", "simple_bind + manual SGD"), ("module", "Module.fit")):
        targets += [
            target("%s s/epoch / numpy s/epoch" % label, dig(A, m, "vs_numpy", "median"),
                   "<=", 1.15, "x", mxnet=dig(M, m, "vs_numpy", "median"),
                   note="per-run ratio; mxnet's is vs its own in-process numpy"),
            target("%s s/epoch" % label, dig(A, m, "sec_per_epoch", "median"), unit="s",
                   numpy=dig(A, "numpy", "sec_per_epoch", "median"),
                   mxnet=dig(M, m, "sec_per_epoch", "median")),
            target("%s holdout accuracy" % label,
                   statistics.median(A[m]["holdout_acc"]),
                   numpy=statistics.median(A["numpy"]["holdout_acc"]),
                   mxnet=(statistics.median(M[m]["holdout_acc"]) if m in M else None)),
        ]
    emit("mlp_train", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
