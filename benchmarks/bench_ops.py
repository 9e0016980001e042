"""Heavy-op kernels and autograd overhead: aiond vs numpy (same process).

conv   3x3 Convolution forward + backward (gradients w.r.t. data, weight and
       bias) on data (32, 16, 32, 32) float32, 16 filters, pad 1, under
       autograd.record() + y.backward(head).  The numpy yardstick is the best
       pure-numpy im2col formulation found: forward = pad + sliding_window_view
       im2col into (N, C*9, H*W) + one batched matmul + bias; backward reuses
       the forward's columns (no recompute), weight grad = per-sample GEMMs
       accumulated (the fastest numpy variant measured), data grad =
       matmul to gradient columns + col2im (9 clipped strided adds).
act    Activation(relu) forward + backward on a LeNet first-layer output
       (64, 20, 24, 24) float32 under record() + backward(head); numpy:
       np.maximum(x, 0) and head * (x > 0).
ce     gluon.loss.SoftmaxCrossEntropyLoss forward + backward on (128, 10)
       logits with class labels (a classifier's loss, every step); numpy:
       max-shifted log-softmax, the picked loss, softmax - onehot.
fc     FullyConnected forward + backward, data (128, 784), weight (256, 784),
       bias (256,): numpy does x @ W.T + b, g @ W, g.T @ x, g.sum(0).
overhead  a small FullyConnected (8x32 . 32x16): ITERS x [record(); y = FC;
       y.backward()] vs ITERS x the same ops issued by hand without
       recording (FC, dot(g, W), dot(g, x, transpose_a), sum(g)); also the
       recorded forward alone vs the plain forward (info) and numpy.
       Times are (loop + one waitall) / ITERS.

Interleaved repeats, ratios per repeat, medians (see _common.py).  Results
are checked against numpy; a wrong one raises.

    .venv/bin/python benchmarks/bench_ops.py [--mxnet-python .venvs/mxnet/bin/python]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (aiond_engine_facts, alternate, check, dig, emit, log,  # noqa: E402
                     np_softmax_ce, parse, parser, perf, ratio, run_mxnet, summary, target)

try:
    from numpy.lib.stride_tricks import sliding_window_view as _swv
except ImportError:  # numpy < 1.20
    _swv = None


# --------------------------------------------------------------- numpy side
def np_conv_fwd_bwd(x, w, b, hg, pad):
    """The numpy yardstick: returns y, dx, dw, db (3x3-style im2col, stride 1)."""
    N, C, H, W = x.shape
    F, _, kh, kw = w.shape
    xp = np.zeros((N, C, H + 2 * pad, W + 2 * pad), x.dtype)
    xp[:, :, pad:pad + H, pad:pad + W] = x
    OH, OW = H + 2 * pad - kh + 1, W + 2 * pad - kw + 1
    win = _swv(xp, (kh, kw), axis=(2, 3))                     # (N, C, OH, OW, kh, kw)
    cols = np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(N, C * kh * kw, OH * OW)
    w2 = w.reshape(F, -1)
    y = np.matmul(w2, cols)
    y += b.reshape(1, F, 1)
    y = y.reshape(N, F, OH, OW)
    # backward
    G = hg.reshape(N, F, OH * OW)
    db = hg.sum(axis=(0, 2, 3))
    dw = np.zeros((F, C * kh * kw), x.dtype)
    tmp = np.empty_like(dw)
    for n in range(N):
        np.matmul(G[n], cols[n].T, out=tmp)
        dw += tmp
    dcols = np.matmul(w2.T, G).reshape(N, C, kh, kw, OH, OW)
    dx = np.zeros_like(x)
    for i in range(kh):
        a0, a1 = max(0, pad - i), min(OH, H + pad - i)
        for j in range(kw):
            b0, b1 = max(0, pad - j), min(OW, W + pad - j)
            dx[:, :, a0 + i - pad:a1 + i - pad, b0 + j - pad:b1 + j - pad] += \
                dcols[:, :, i, j, a0:a1, b0:b1]
    return y, dx, dw.reshape(w.shape), db


def np_fc_fwd_bwd(x, w, b, g):
    y = x @ w.T
    y += b
    return y, g @ w, g.T @ x, g.sum(axis=0)


# --------------------------------------------------------------- workloads
def conv_case(mx, be, p):
    rs = np.random.RandomState(0)
    N, C, H, F = p["conv_n"], p["conv_c"], p["conv_hw"], p["conv_f"]
    x = rs.randn(N, C, H, H).astype(np.float32)
    w = (rs.randn(F, C, 3, 3) * 0.1).astype(np.float32)
    b = rs.randn(F).astype(np.float32)
    hg = rs.randn(N, F, H, H).astype(np.float32)
    ref = np_conv_fwd_bwd(x, w, b, hg, 1)
    X, Wt, B, HG = (mx.nd.array(a) for a in (x, w, b, hg))
    for a in (X, Wt, B):
        a.attach_grad()
    mx.nd.waitall()

    def run_mx():
        with mx.autograd.record():
            y = mx.nd.Convolution(X, Wt, B, kernel=(3, 3), num_filter=F, pad=(1, 1))
        y.backward(HG)
        mx.nd.waitall()
        return y

    def run_np():
        return np_conv_fwd_bwd(x, w, b, hg, 1)

    def verify(y):
        for got, want, name in ((y, ref[0], "y"), (X.grad, ref[1], "dx"), (Wt.grad, ref[2], "dw"),
                                (B.grad, ref[3], "db")):
            g = got.asnumpy()
            err = float(np.abs(g - want).max() / (np.abs(want).max() + 1e-12))
            check(err < 1e-4, "%s: conv %s differs from numpy (rel err %.2e)" % (be, name, err))
    return run_mx, run_np, verify


def act_case(mx, be, p):
    rs = np.random.RandomState(3)
    x = rs.randn(*p["act_shape"]).astype(np.float32)
    g = rs.randn(*p["act_shape"]).astype(np.float32)
    X, G = mx.nd.array(x), mx.nd.array(g)
    X.attach_grad()
    mx.nd.waitall()

    def run_mx():
        with mx.autograd.record():
            y = mx.nd.Activation(X, act_type="relu")
        y.backward(G)
        mx.nd.waitall()
        return y

    def run_np():
        return np.maximum(x, 0), g * (x > 0)

    def verify(y):
        want_y, want_dx = run_np()
        check(np.array_equal(y.asnumpy(), want_y), "%s: relu differs from numpy" % be)
        check(np.array_equal(X.grad.asnumpy(), want_dx), "%s: relu gradient differs" % be)
    return run_mx, run_np, verify


def ce_case(mx, be, p):
    rs = np.random.RandomState(5)
    n, c = p["ce_shape"]
    x = (rs.randn(n, c) * 3).astype(np.float32)
    lab = rs.randint(0, c, n)
    X, Y = mx.nd.array(x), mx.nd.array(lab.astype(np.float32))
    X.attach_grad()
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    mx.nd.waitall()

    def run_mx():
        with mx.autograd.record():
            loss = loss_fn(X, Y)
        loss.backward()
        mx.nd.waitall()
        return loss

    def run_np():
        return np_softmax_ce(x, lab)

    def verify(y):
        want, want_dx = run_np()
        check(np.allclose(y.asnumpy(), want, rtol=1e-5, atol=2e-5),
              "%s: softmax CE differs from numpy" % be)
        check(np.allclose(X.grad.asnumpy(), want_dx, rtol=1e-5, atol=2e-5),
              "%s: softmax CE gradient differs from numpy" % be)
    return run_mx, run_np, verify


def fc_case(mx, be, p):
    rs = np.random.RandomState(1)
    M, K, Nh = p["fc_m"], p["fc_k"], p["fc_n"]
    x = rs.randn(M, K).astype(np.float32)
    w = (rs.randn(Nh, K) * 0.05).astype(np.float32)
    b = rs.randn(Nh).astype(np.float32)
    g = rs.randn(M, Nh).astype(np.float32)
    ref = np_fc_fwd_bwd(x, w, b, g)
    X, Wt, B, G = (mx.nd.array(a) for a in (x, w, b, g))
    for a in (X, Wt, B):
        a.attach_grad()
    mx.nd.waitall()

    def run_mx():
        with mx.autograd.record():
            y = mx.nd.FullyConnected(X, Wt, B, num_hidden=Nh)
        y.backward(G)
        mx.nd.waitall()
        return y

    def run_np():
        return np_fc_fwd_bwd(x, w, b, g)

    def verify(y):
        for got, want, name in ((y, ref[0], "y"), (X.grad, ref[1], "dx"), (Wt.grad, ref[2], "dw"),
                                (B.grad, ref[3], "db")):
            a = got.asnumpy()
            err = float(np.abs(a - want).max() / (np.abs(want).max() + 1e-12))
            check(err < 1e-4, "%s: FC %s differs from numpy (rel err %.2e)" % (be, name, err))
    return run_mx, run_np, verify


def overhead_case(mx, be, p):
    rs = np.random.RandomState(2)
    M, K, Nh, iters = p["small_m"], p["small_k"], p["small_n"], p["small_iters"]
    x = rs.randn(M, K).astype(np.float32)
    w = rs.randn(Nh, K).astype(np.float32)
    b = rs.randn(Nh).astype(np.float32)
    X, Wt, B = (mx.nd.array(a) for a in (x, w, b))
    G = mx.nd.ones((M, Nh))
    for a in (X, Wt, B):
        a.attach_grad()
    mx.nd.waitall()
    FC, dot, nsum, record = mx.nd.FullyConnected, mx.nd.dot, mx.nd.sum, mx.autograd.record

    def rec_bwd():
        for _ in range(iters):
            with record():
                y = FC(X, Wt, B, num_hidden=Nh)
            y.backward()
        mx.nd.waitall()
        return y

    def by_hand():
        for _ in range(iters):
            y = FC(X, Wt, B, num_hidden=Nh)
            dx = dot(G, Wt)
            dw = dot(G, X, transpose_a=True)
            db = nsum(G, axis=0)
        mx.nd.waitall()
        return y, dx, dw, db

    def rec_fwd():
        for _ in range(iters):
            with record():
                y = FC(X, Wt, B, num_hidden=Nh)
        mx.nd.waitall()
        return y

    def plain_fwd():
        for _ in range(iters):
            y = FC(X, Wt, B, num_hidden=Nh)
        mx.nd.waitall()
        return y

    g = np.ones((M, Nh), np.float32)

    def numpy_fwd_bwd():
        for _ in range(iters):
            r = np_fc_fwd_bwd(x, w, b, g)
        return r

    def verify():
        ref = np_fc_fwd_bwd(x, w, b, g)
        for got, want, name in ((X.grad, ref[1], "dx"), (Wt.grad, ref[2], "dw"),
                                (B.grad, ref[3], "db")):
            err = float(np.abs(got.asnumpy() - want).max() / (np.abs(want).max() + 1e-12))
            check(err < 1e-4, "%s: small FC %s differs from numpy (rel err %.2e)" % (be, name, err))
    return {"rec_bwd": rec_bwd, "by_hand": by_hand, "rec_fwd": rec_fwd, "plain_fwd": plain_fwd,
            "numpy_fwd_bwd": numpy_fwd_bwd}, verify


def timed_pair(run_mx, run_np, repeats, inner):
    """Interleaved timings (seconds per call) of the backend and numpy."""
    tm, tn = [], []
    out = None
    for rep in range(repeats + 1):
        for which in alternate(("mx", "np"), rep):
            t0 = perf()
            for _ in range(inner):
                r = run_mx() if which == "mx" else run_np()
            dt = (perf() - t0) / inner
            if which == "mx":
                out = r
            if rep:
                (tm if which == "mx" else tn).append(dt)
    return tm, tn, out


def measure(mx, backend, p):
    """The whole workload for ``backend`` ('aiond' or 'mxnet') and numpy;
    also the entry point of the MXNet subprocess (see _common.run_mxnet)."""
    R = p["repeats"]
    res = {}
    cases = [("conv", "conv fwd+bwd %s" % ((p["conv_n"], p["conv_c"], p["conv_hw"],
                                              p["conv_hw"]),), conv_case),
             ("act", "relu fwd+bwd %s" % (p["act_shape"],), act_case),
             ("ce", "softmax CE fwd+bwd %s" % (p["ce_shape"],), ce_case),
             ("fc", "fc fwd+bwd", fc_case)]
    for name, what, case in cases:
        log("ops[%s]: %s" % (backend, what))
        run_mx, run_np, verify = case(mx, backend, p)
        tm, tn, y = timed_pair(run_mx, run_np, R, p[name + "_inner"])
        verify(y)
        res[name] = {backend: {"ms": summary(tm, 1e3)}, "numpy": {"ms": summary(tn, 1e3)},
                     "ratio_vs_numpy": ratio(tm, tn)}

    log("ops[%s]: small FC autograd overhead" % backend)
    fns, verify = overhead_case(mx, backend, p)
    names = list(fns)
    times = {n: [] for n in names}
    iters = p["small_iters"]
    for rep in range(R + 1):
        for n in alternate(names, rep):
            t0 = perf()
            fns[n]()
            dt = (perf() - t0) / iters
            if rep:
                times[n].append(dt)
    verify()
    ov = {n: {"us_per_iter": summary(times[n], 1e6, 2)} for n in names}
    ov["rec_bwd_vs_by_hand"] = ratio(times["rec_bwd"], times["by_hand"])
    ov["rec_fwd_vs_plain_fwd"] = ratio(times["rec_fwd"], times["plain_fwd"])
    ov["rec_bwd_vs_plain_fwd"] = ratio(times["rec_bwd"], times["plain_fwd"])
    ov["rec_bwd_vs_numpy"] = ratio(times["rec_bwd"], times["numpy_fwd_bwd"])
    ov["iters"] = iters
    res["overhead"] = ov
    if backend == "aiond":
        res["engine"] = aiond_engine_facts(mx)
    return res


def main():
    p = parser(__doc__.splitlines()[0], repeats=5)
    p.add_argument("--conv-n", type=int, default=32)
    p.add_argument("--conv-c", type=int, default=16)
    p.add_argument("--conv-hw", type=int, default=32)
    p.add_argument("--conv-f", type=int, default=16)
    p.add_argument("--conv-inner", type=int, default=3, help="calls per timed repeat")
    p.add_argument("--fc-inner", type=int, default=20)
    p.add_argument("--act-inner", type=int, default=20)
    p.add_argument("--ce-inner", type=int, default=200)
    p.add_argument("--small-iters", type=int, default=2000)
    args = parse(p)
    params = {"repeats": args.repeats, "conv_n": args.conv_n, "conv_c": args.conv_c,
              "conv_hw": args.conv_hw, "conv_f": args.conv_f, "conv_inner": args.conv_inner,
              "act_shape": (64, 20, 24, 24), "act_inner": args.act_inner,
              "ce_shape": (128, 10), "ce_inner": args.ce_inner,
              "fc_m": 128, "fc_k": 784, "fc_n": 256, "fc_inner": args.fc_inner,
              "small_m": 8, "small_k": 32, "small_n": 16, "small_iters": args.small_iters}
    import aiond as mx
    results = {"aiond": measure(mx, "aiond", params)}
    if args.mxnet_python:
        try:
            results["mxnet"] = run_mxnet(args.mxnet_python, "bench_ops", "measure", params,
                                         args.mxnet_timeout)
        except RuntimeError as e:
            results["mxnet_error"] = str(e)
    A, M = results["aiond"], results.get("mxnet") or {}

    def med(res, *path):
        return dig(res, *path, "median")

    def us(res, *path):
        v = med(res, *path, "ms")
        return None if v is None else round(v * 1e3, 1)

    targets = [
        target("conv3x3 fwd+bwd time ratio aiond/numpy", med(A, "conv", "ratio_vs_numpy"),
               "<=", 2.0, "x", mxnet=med(M, "conv", "ratio_vs_numpy"),
               note="numpy: im2col + matmul, col2im; mxnet's ratio is vs its own numpy"),
        target("conv3x3 fwd+bwd ms", med(A, "conv", "aiond", "ms"), unit="ms",
               numpy=med(A, "conv", "numpy", "ms"), mxnet=med(M, "conv", "mxnet", "ms")),
        target("relu 64x20x24x24 fwd+bwd time ratio aiond/numpy",
               med(A, "act", "ratio_vs_numpy"), "<=", 1.2, "x",
               mxnet=med(M, "act", "ratio_vs_numpy")),
        target("relu 64x20x24x24 fwd+bwd ms", med(A, "act", "aiond", "ms"), unit="ms",
               numpy=med(A, "act", "numpy", "ms"), mxnet=med(M, "act", "mxnet", "ms")),
        target("softmax CE loss 128x10 fwd+bwd us", us(A, "ce", "aiond"), unit="us",
               numpy=us(A, "ce", "numpy"), mxnet=us(M, "ce", "mxnet")),
        target("FC 128x784.784x256 fwd+bwd time ratio aiond/numpy",
               med(A, "fc", "ratio_vs_numpy"), "<=", 1.2, "x",
               mxnet=med(M, "fc", "ratio_vs_numpy")),
        target("FC 128x784.784x256 fwd+bwd ms", med(A, "fc", "aiond", "ms"), unit="ms",
               numpy=med(A, "fc", "numpy", "ms"), mxnet=med(M, "fc", "mxnet", "ms")),
        target("small FC record+backward / same ops by hand",
               med(A, "overhead", "rec_bwd_vs_by_hand"), "<=", 2.0, "x",
               mxnet=med(M, "overhead", "rec_bwd_vs_by_hand"),
               note="by hand: FC, dot(g,W), dot(g,x,transpose_a), sum(g), no recording"),
        target("small FC record+backward us/iter", med(A, "overhead", "rec_bwd", "us_per_iter"),
               unit="us", numpy=med(A, "overhead", "numpy_fwd_bwd", "us_per_iter"),
               mxnet=med(M, "overhead", "rec_bwd", "us_per_iter")),
        target("small FC recorded fwd / plain fwd", med(A, "overhead", "rec_fwd_vs_plain_fwd"),
               unit="x", mxnet=med(M, "overhead", "rec_fwd_vs_plain_fwd")),
        target("small FC record+backward / plain fwd", med(A, "overhead", "rec_bwd_vs_plain_fwd"),
               unit="x", mxnet=med(M, "overhead", "rec_bwd_vs_plain_fwd")),
    ]
    emit("ops", args, results, targets, params)
    if "mxnet_error" in results:
        log("MXNet worker failed: " + results["mxnet_error"])
        sys.exit(1)


if __name__ == "__main__":
    main()
