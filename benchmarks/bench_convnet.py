"""Conv nets: LeNet training steps, resnet18_v1 inference, conv micro-kernels.

Workloads (all float32, synthetic data, fixed seeds):
  lenet    Conv(20, 5x5)-relu-maxpool2-Conv(50, 5x5)-relu-maxpool2-Dense(500)-
           relu-Dense(10), 28x28x1 inputs, batch 64, softmax cross-entropy,
           plain SGD lr 0.05, from the same Glorot-uniform weights
           (RandomState(1)) on 8 fixed batches (RandomState(0)) used in turn.
           Gluon imperative and hybridized (``net.hybridize()``); one timed
           run is ``--steps`` steps then one ``waitall``; seconds per step.
  resnet   Gluon model-zoo ``resnet18_v1``, hybridized, inference
           (``net(x).wait_to_read()`` per batch) at batch 1 and 16, 224x224;
           every parameter is set from numpy (He-normal weights, BatchNorm at
           its identity), so all backends compute the same logits.
  zoo      issue 35's workload: model-zoo resnet18_v1 and mobilenet1.0 (batch 1
           and 16) and resnet50_v1 (batch 1), with deterministic parameters
           (as ``resnet``), hybridized and exported once by MXNet (by aiond
           when no MXNet is given) into a temporary folder; every backend
           then loads those files with ``gluon.SymbolBlock.imports`` and
           times inference (``blk(x).wait_to_read()``). This is the figure
           to compare with MXNet: ``resnet`` times a hybridized Gluon net,
           which MXNet runs some 20 % slower than the imported SymbolBlock.
           Torch runs its own ResNet-18 for resnet18_v1 only.
  rtrain   resnet18_v1 training steps: the model-zoo net (torch: its own
           ResNet-18, built as the zoo builds it) with ``resnet_values``'
           parameters, hybridized, batch ``RT_BATCH`` 224x224 images, fixed
           labels, softmax cross-entropy, plain SGD lr ``RT_LR``, BatchNorm in
           training mode (batch statistics); one timed run is
           ``--rtrain-steps`` steps then one ``waitall``. The losses of the
           first steps from the fixed parameters must agree across backends.
  micro    one Convolution (with bias) forward, and forward + backward (data,
           weight and bias gradients) on the shapes of a ResNet 3x3 layer
           (16x64x56x56, 64 filters, pad 1) and LeNet's two conv layers.
Backends, each a separate process, each timed against its own numpy in the
same process where a numpy yardstick exists (a hand-written numpy LeNet
trainer with im2col convolutions, and the same im2col conv for the micro
cases):
  aiond    this process (``import aiond as mx``)
  mxnet    ``--mxnet-python PATH``: the same functions with ``import mxnet``
  torch    ``--torch-python PATH``: eager torch (nn.Sequential LeNet and
           torch.optim.SGD; a ResNet-18 v1 built here with torch.nn, since
           torchvision is not used; F.conv2d for the micro cases)
Each section runs ``--rounds`` times, aiond, MXNet and torch back to back
(the order reversed every other round); a ratio vs MXNet is taken per round
(medians measured minutes apart, under the same load), and the median over
rounds is reported.
Results are checked: LeNet losses after the timed steps must equal numpy's
trainer (same weights, data and steps), resnet logits must agree across
backends, and micro results must equal the numpy reference.

    .venv/bin/python benchmarks/bench_convnet.py [--steps 20] [--repeats 5]
        [--mxnet-python /tmp/gcv-mx/bin/python] [--torch-python /tmp/conv-torch/bin/python]
        [--only lenet,resnet,zoo,rtrain,micro] [--rounds 2] [--rtrain-steps 3]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (HERE, aiond_engine_facts, check, dig, emit, log, parse,  # noqa: E402
                     parser, summary, target)

perf = time.perf_counter
BATCH, LR, NBATCH = 64, 0.05, 8
RT_BATCH, RT_LR = 16, 0.01          # resnet18_v1 training steps
MICRO = {  # name: (data shape, filters, kernel, pad)
    "resnet_3x3_64ch_56": ((16, 64, 56, 56), 64, 3, 1),
    "lenet_conv1": ((64, 1, 28, 28), 20, 5, 0),
    "lenet_conv2": ((64, 20, 12, 12), 50, 5, 0),
}


def pin_numpy_blas():
    """numpy's BLAS on one thread for the rest of the process, as aiond's
    workers run it (threadpoolctl's limit is process-wide, so it is not
    undone: that would unpin aiond's workers too). On 2 shared cores
    OpenBLAS's own threads make the small GEMMs of a LeNet several times
    slower, not faster. MXNet's kernels use oneDNN, not numpy's OpenBLAS."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "default (no threadpoolctl)"
    threadpool_limits(limits=1, user_api="blas")
    return 1


def median_s(fn, reps, inner=1):
    """fn() timed ``reps`` times (after one warm-up call): seconds per call / inner."""
    fn()
    ts = []
    for _ in range(reps):
        t0 = perf()
        fn()
        ts.append((perf() - t0) / inner)
    return ts


# ------------------------------------------------------------ data, weights
def lenet_data():
    rs = np.random.RandomState(0)
    X = rs.rand(NBATCH * BATCH, 1, 28, 28).astype(np.float32)
    y = rs.randint(0, 10, NBATCH * BATCH).astype(np.int64)
    return [(X[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]) for i in range(NBATCH)]


def lenet_weights():
    """[W1, b1, W2, b2, W3, b3, W4, b4] in MXNet/torch layouts."""
    rs = np.random.RandomState(1)

    def glorot(shape):
        fan_out, fan_in = shape[0] * int(np.prod(shape[2:])), int(np.prod(shape[1:]))
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        return rs.uniform(-lim, lim, shape).astype(np.float32)
    ws = []
    for shape in ((20, 1, 5, 5), (50, 20, 5, 5), (500, 800), (10, 500)):
        ws += [glorot(shape), np.zeros(shape[0], np.float32)]
    return ws


def resnet_values(specs):
    """Deterministic values for resnet18_v1's parameters, from (kind, shape)
    in the model's creation order: the same on every backend."""
    out = []
    for i, (kind, shape) in enumerate(specs):
        if kind == "weight":
            fan_in = int(np.prod(shape[1:]))
            out.append((np.random.RandomState(100 + i).standard_normal(shape)
                        * np.sqrt(2.0 / fan_in)).astype(np.float32))
        elif kind in ("gamma", "running_var"):
            out.append(np.ones(shape, np.float32))
        else:                                           # beta, running_mean, bias
            out.append(np.zeros(shape, np.float32))
    return out


def images(n):
    return np.random.RandomState(5).rand(n, 3, 224, 224).astype(np.float32)


def rtrain_labels():
    return np.random.RandomState(6).randint(0, 1000, RT_BATCH).astype(np.int64)


# ------------------------------------------------------------------ numpy
def np_im2col(x, k, p):
    """x (N, C, H, W) -> columns (C*k*k, N*oh*ow) for one 2-D GEMM per layer
    (stride 1, zero pad p): numpy's batched matmul calls BLAS once per sample,
    which OpenBLAS threads badly."""
    if p:
        x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    v = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))
    N, C, oh, ow = v.shape[:4]
    return np.ascontiguousarray(v.transpose(1, 4, 5, 0, 2, 3)).reshape(C * k * k, -1), \
        (oh, ow)


def np_conv_fwd(x, W, b, p):
    F, k = W.shape[0], W.shape[-1]
    cols, (oh, ow) = np_im2col(x, k, p)
    y = W.reshape(F, -1) @ cols
    y += b[:, None]
    return np.ascontiguousarray(y.reshape(F, x.shape[0], oh, ow).transpose(1, 0, 2, 3)), cols


def np_conv_bwd(dy, cols, W, xshape, p, need_dx=True):
    N, F, oh, ow = dy.shape
    k = W.shape[-1]
    d2 = np.ascontiguousarray(dy.transpose(1, 0, 2, 3)).reshape(F, -1)
    dW = (d2 @ cols.T).reshape(W.shape)
    db = d2.sum(axis=1)
    if not need_dx:
        return None, dW, db
    C, H, Wd = xshape[1:]
    dcols = (W.reshape(F, -1).T @ d2).reshape(C, k, k, N, oh, ow)
    dx = np.zeros((C, N, H + 2 * p, Wd + 2 * p), dy.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, :, i:i + oh, j:j + ow] += dcols[:, i, j]
    return np.ascontiguousarray(dx[:, :, p:p + H, p:p + Wd].transpose(1, 0, 2, 3)), dW, db


def np_pool2(x):
    """2x2 max pool, stride 2: output and the first-max index per window."""
    N, C, H, W = x.shape
    win = x.reshape(N, C, H // 2, 2, W // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        N, C, H // 2, W // 2, 4)
    idx = win.argmax(axis=-1)
    return np.take_along_axis(win, idx[..., None], -1)[..., 0], idx


def np_pool2_bwd(dy, idx):
    N, C, h, w = dy.shape
    d = np.zeros((N, C, h, w, 4), dy.dtype)
    np.put_along_axis(d, idx[..., None], dy[..., None], -1)
    return d.reshape(N, C, h, w, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(N, C, 2 * h, 2 * w)


def np_lenet_train(batches, steps, ws):
    """``steps`` SGD steps (batch i % 8); returns the mean loss of each step."""
    W1, b1, W2, b2, W3, b3, W4, b4 = ws
    onehot = np.eye(10, dtype=np.float32)
    losses = []
    for it in range(steps):
        x, y = batches[it % NBATCH]
        a1, c1 = np_conv_fwd(x, W1, b1, 0)
        r1 = np.maximum(a1, 0)
        p1, i1 = np_pool2(r1)
        a2, c2 = np_conv_fwd(p1, W2, b2, 0)
        r2 = np.maximum(a2, 0)
        p2, i2 = np_pool2(r2)
        f = p2.reshape(BATCH, -1)
        h = f @ W3.T + b3
        hr = np.maximum(h, 0)
        z = hr @ W4.T + b4
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        sm = e / e.sum(axis=1, keepdims=True)
        losses.append(float(-np.log(sm[np.arange(BATCH), y]).mean()))
        dz = (sm - onehot[y]) / np.float32(BATCH)
        dW4, db4 = dz.T @ hr, dz.sum(0)
        dh = (dz @ W4) * (h > 0)
        dW3, db3 = dh.T @ f, dh.sum(0)
        df = (dh @ W3).reshape(p2.shape)
        da2 = np_pool2_bwd(df, i2) * (a2 > 0)
        dp1, dW2, db2 = np_conv_bwd(da2, c2, W2, p1.shape, 0)
        da1 = np_pool2_bwd(dp1, i1) * (a1 > 0)
        _, dW1, db1 = np_conv_bwd(da1, c1, W1, x.shape, 0, need_dx=False)
        for P_, G in zip(ws, (dW1, db1, dW2, db2, dW3, db3, dW4, db4)):
            P_ -= np.float32(LR) * G
    return losses


# ------------------------------------------------------------ mx (aiond, MXNet)
def mx_lenet(mx, hybridize):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, 5, activation="relu", in_channels=1), nn.MaxPool2D(2, 2),
            nn.Conv2D(50, 5, activation="relu", in_channels=20), nn.MaxPool2D(2, 2),
            nn.Dense(500, activation="relu", in_units=800), nn.Dense(10, in_units=500))
    net.initialize(ctx=mx.cpu())
    params = list(net.collect_params().values())
    for p, v in zip(params, lenet_weights()):
        p.set_data(mx.nd.array(v))
    if hybridize:
        net.hybridize()
    return net


def _mx_steps(mx, net, loss_fn, trainer, batch, bs, losses):
    """``steps(n, keep=False)``: n recorded training steps on ``batch()``'s
    (x, y), then a waitall; with ``keep`` each step's loss goes into ``losses``."""
    def steps(n, keep=False):
        for _ in range(n):
            x, y = batch()
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(bs)
            if keep:
                losses.append(loss)
        mx.nd.waitall()
    return steps


def mx_lenet_train(mx, p, hybridize):
    nd = mx.nd
    net = mx_lenet(mx, hybridize)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    data = [(nd.array(x), nd.array(y.astype(np.float32))) for x, y in lenet_data()]
    state = {"it": 0}
    losses = []

    def batch():
        state["it"] += 1
        return data[(state["it"] - 1) % NBATCH]
    steps = _mx_steps(mx, net, loss_fn, trainer, batch, BATCH, losses)
    # the checked run: the first p["steps"] steps from the fixed weights
    steps(p["steps"], keep=True)
    got = [float(l.asnumpy().mean()) for l in losses]
    times = median_s(lambda: steps(p["steps"]), p["repeats"], p["steps"])
    return times, got


def mx_resnet(mx):
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(ctx=mx.cpu())
    net(mx.nd.array(images(1)))            # finish deferred shapes
    params = list(net.collect_params().values())
    kinds = ("running_mean", "running_var", "weight", "bias", "gamma", "beta")
    specs = [([k for k in kinds if p.name.endswith(k)][0], p.shape) for p in params]
    for p, v in zip(params, resnet_values(specs)):
        p.set_data(mx.nd.array(v))
    net.hybridize()
    return net


def mx_resnet_train(mx, p):
    """resnet18_v1 training steps (hybridized, SGD): (seconds per step, the
    losses of the first ``rtrain_steps`` steps from the fixed parameters)."""
    nd = mx.nd
    net = mx_resnet(mx)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": RT_LR})
    x = nd.array(images(RT_BATCH))
    y = nd.array(rtrain_labels().astype(np.float32))
    losses = []
    steps = _mx_steps(mx, net, loss_fn, trainer, lambda: (x, y), RT_BATCH, losses)
    steps(p["rtrain_steps"], keep=True)
    got = [float(l.asnumpy().mean()) for l in losses]
    return median_s(lambda: steps(p["rtrain_steps"]), p["repeats"], p["rtrain_steps"]), got


def mx_resnet_infer(mx, p):
    net = mx_resnet(mx)
    res = {}
    for bs, inner in ((1, p["resnet_inner_b1"]), (16, 1)):
        x = mx.nd.array(images(bs))

        def run():
            for _ in range(inner):
                net(x).wait_to_read()
        ts = median_s(run, p["repeats"], inner)
        res["batch%d" % bs] = {"sec_per_batch": summary(ts, digits=5), "times": ts,
                               "logits_head": net(x).asnumpy()[:, :4].round(4).tolist()[:2]}
    return res


ZOO = (("resnet18_v1", (1, 16)), ("mobilenet1.0", (1, 16)), ("resnet50_v1", (1,)))


def export_zoo(mx, backend, p):
    """The ``ZOO`` nets with ``resnet_values``' parameters, hybridized and
    exported into ``p["zoo_dir"]`` (called in the MXNet worker when there
    is one, so every backend loads MXNet's own files)."""
    kinds = ("running_mean", "running_var", "weight", "bias", "gamma", "beta")
    for name, _ in ZOO:
        net = mx.gluon.model_zoo.vision.get_model(name)
        net.initialize(ctx=mx.cpu())
        x = mx.nd.array(images(1))
        net(x)                              # finish deferred shapes
        params = list(net.collect_params().values())
        specs = [([k for k in kinds if q.name.endswith(k)][0], q.shape) for q in params]
        for q, v in zip(params, resnet_values(specs)):
            q.set_data(mx.nd.array(v))
        net.hybridize()
        net(x).wait_to_read()
        net.export(os.path.join(p["zoo_dir"], name))
    return {"exported_by": backend}


def mx_zoo_infer(mx, p):
    """Inference of the exported ``ZOO`` nets loaded with SymbolBlock.imports."""
    res = {}
    for name, sizes in ZOO:
        pre = os.path.join(p["zoo_dir"], name)
        blk = mx.gluon.SymbolBlock.imports(pre + "-symbol.json", ["data"], pre + "-0000.params")
        for bs in sizes:
            x = mx.nd.array(images(bs))
            inner = p["resnet_inner_b1"] if bs == 1 else 1

            def run():
                for _ in range(inner):
                    blk(x).wait_to_read()
            ts = median_s(run, p["repeats"], inner)
            y = blk(x).asnumpy()
            res["%s b%d" % (name, bs)] = {
                "sec_per_batch": summary(ts, digits=5), "times": ts,
                # logits scaled by their largest magnitude: deep nets with
                # identity BatchNorm reach large values
                "logits_head": (y[:2, :4] / (np.abs(y).max() + 1e-12)).round(4).tolist()}
    return res


def mx_micro(mx, p):
    nd = mx.nd
    res = {}
    for name, (ds, F, k, pad) in MICRO.items():
        rs = np.random.RandomState(7)
        xs = rs.standard_normal(ds).astype(np.float32)
        ws = (rs.standard_normal((F, ds[1], k, k)) * 0.1).astype(np.float32)
        bs = rs.standard_normal(F).astype(np.float32)
        dys = rs.standard_normal((ds[0], F, ds[2] + 2 * pad - k + 1,
                                  ds[3] + 2 * pad - k + 1)).astype(np.float32)
        x, w, b, dy = nd.array(xs), nd.array(ws), nd.array(bs), nd.array(dys)
        for a in (x, w, b):
            a.attach_grad()

        def conv():
            return nd.Convolution(x, w, b, kernel=(k, k), pad=(pad, pad), num_filter=F)

        def fwd():
            conv().wait_to_read()

        def fwd_bwd():
            with mx.autograd.record():
                y = conv()
            y.backward(dy)
            nd.waitall()

        def np_fwd():
            return np_conv_fwd(xs, ws, bs, pad)

        def np_fwd_bwd():
            y, cols = np_conv_fwd(xs, ws, bs, pad)
            return y, np_conv_bwd(dys, cols, ws, xs.shape, pad)
        y_ref, (dx_ref, dw_ref, db_ref) = np_fwd_bwd()
        fwd_bwd()
        for got, want, what in ((conv().asnumpy(), y_ref, "y"), (x.grad.asnumpy(), dx_ref, "dx"),
                                (w.grad.asnumpy(), dw_ref, "dw"), (b.grad.asnumpy(), db_ref, "db")):
            err = float(np.abs(got - want).max() / (np.abs(want).max() + 1e-6))
            check(err < 1e-4, "micro %s %s: max rel error %g" % (name, what, err))
        r = {}
        for lab, fn, nfn in (("fwd", fwd, np_fwd), ("fwd_bwd", fwd_bwd, np_fwd_bwd)):
            ts, tn = [], []
            fn()
            nfn()
            for rep in range(p["repeats"]):
                order = (fn, nfn) if rep % 2 == 0 else (nfn, fn)
                for f in order:
                    t0 = perf()
                    f()
                    (ts if f is fn else tn).append(perf() - t0)
            r[lab] = {"ms": summary(ts, 1e3), "numpy_im2col_ms": summary(tn, 1e3),
                      "vs_numpy": summary([a / b for a, b in zip(ts, tn)])}
        res[name] = r
    return res


def measure(mx, backend, p):
    """Everything for one mx-like backend (aiond here, or the MXNet worker)."""
    res = {"numpy_blas_threads": pin_numpy_blas()}
    only = p["only"]
    if "lenet" in only:
        ws = lenet_weights()
        data = lenet_data()
        ref_losses = np_lenet_train(data, p["steps"], [w.copy() for w in ws])
        tn = median_s(lambda: np_lenet_train(data, p["steps"], [w.copy() for w in ws]),
                      p["repeats"], p["steps"])
        res["lenet_numpy"] = {"sec_per_step": summary(tn, digits=5), "times": tn,
                              "losses": [round(x, 5) for x in ref_losses]}
        for mode, hyb in (("imperative", False), ("hybridized", True)):
            t0 = perf()
            ts, losses = mx_lenet_train(mx, p, hyb)
            log("convnet[%s] lenet %s: %.1f ms/step (%.0fs)" % (backend, mode,
                                                              1e3 * statistics.median(ts),
                                                              perf() - t0))
            err = max(abs(a - b) for a, b in zip(losses, ref_losses))
            check(err < 2e-3, "%s lenet %s: losses %s vs numpy %s" % (backend, mode, losses,
                                                                        ref_losses))
            res["lenet_" + mode] = {"sec_per_step": summary(ts, digits=5), "times": ts,
                                    "losses": [round(x, 5) for x in losses],
                                    "vs_numpy": round(statistics.median(ts)
                                                      / statistics.median(tn), 3)}
    if "resnet" in only:
        t0 = perf()
        res["resnet18_v1"] = mx_resnet_infer(mx, p)
        log("convnet[%s] resnet18_v1: %s (%.0fs)" % (
            backend, {k: v["sec_per_batch"]["median"] for k, v in res["resnet18_v1"].items()},
            perf() - t0))
    if "zoo" in only:
        t0 = perf()
        res["zoo"] = mx_zoo_infer(mx, p)
        log("convnet[%s] zoo: %s (%.0fs)" % (
            backend, {k: v["sec_per_batch"]["median"] for k, v in res["zoo"].items()},
            perf() - t0))
    if "rtrain" in only:
        t0 = perf()
        ts, losses = mx_resnet_train(mx, p)
        res["resnet18_train"] = {"sec_per_step": summary(ts, digits=5), "times": ts,
                                 "losses": [round(v, 5) for v in losses]}
        log("convnet[%s] resnet18_v1 training: %.1f ms/step, losses %s (%.0fs)" % (
            backend, 1e3 * statistics.median(ts), losses, perf() - t0))
    if "micro" in only:
        res["micro"] = mx_micro(mx, p)
        log("convnet[%s] micro: %s" % (backend, {k: {m: v[m]["ms"]["median"] for m in v}
                                                for k, v in res["micro"].items()
                                                if isinstance(v, dict)}))
    if backend == "aiond":
        res["engine"] = aiond_engine_facts(mx)
    return res


# ------------------------------------------------------------------ torch
def _torch_steps(net, opt, lossf, batch, losses):
    """``steps(n, keep=False)``: n SGD steps of torch eager on ``batch()``'s
    (x, y); with ``keep`` each step's loss goes into ``losses``."""
    def steps(n, keep=False):
        for _ in range(n):
            x, y = batch()
            opt.zero_grad()
            loss = lossf(net(x), y)
            loss.backward()
            opt.step()
            if keep:
                losses.append(float(loss))
    return steps


def torch_measure(p):
    import torch
    import torch.nn as tnn
    import torch.nn.functional as tF
    res = {"torch_threads": torch.get_num_threads(), "torch": torch.__version__}
    only = p["only"]
    if "lenet" in only:
        net = tnn.Sequential(tnn.Conv2d(1, 20, 5), tnn.ReLU(), tnn.MaxPool2d(2),
                             tnn.Conv2d(20, 50, 5), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                             tnn.Linear(800, 500), tnn.ReLU(), tnn.Linear(500, 10))
        with torch.no_grad():
            for prm, v in zip(net.parameters(), lenet_weights()):
                prm.copy_(torch.from_numpy(v))
        opt = torch.optim.SGD(net.parameters(), lr=LR)
        lossf = tnn.CrossEntropyLoss()
        data = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in lenet_data()]
        state = {"it": 0}
        losses = []

        def batch():
            state["it"] += 1
            return data[(state["it"] - 1) % NBATCH]
        steps = _torch_steps(net, opt, lossf, batch, losses)
        steps(p["steps"], keep=True)
        ts = median_s(lambda: steps(p["steps"]), p["repeats"], p["steps"])
        res["lenet_eager"] = {"sec_per_step": summary(ts, digits=5), "times": ts,
                              "losses": [round(x, 5) for x in losses]}
    if "resnet" in only or "zoo" in only or "rtrain" in only:
        net = torch_resnet18_v1(tnn)
        specs = []
        for m in net.modules():
            if isinstance(m, tnn.Conv2d):
                specs.append(("weight", tuple(m.weight.shape)))
            elif isinstance(m, tnn.BatchNorm2d):
                specs += [(k, (m.num_features,)) for k in ("gamma", "beta", "running_mean",
                                                          "running_var")]
            elif isinstance(m, tnn.Linear):
                specs += [("weight", tuple(m.weight.shape)), ("bias", (m.out_features,))]
        vals = iter(resnet_values(specs))
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, tnn.Conv2d):
                    m.weight.copy_(torch.from_numpy(next(vals)))
                elif isinstance(m, tnn.BatchNorm2d):
                    for t in (m.weight, m.bias, m.running_mean, m.running_var):
                        t.copy_(torch.from_numpy(next(vals)))
                elif isinstance(m, tnn.Linear):
                    m.weight.copy_(torch.from_numpy(next(vals)))
                    m.bias.copy_(torch.from_numpy(next(vals)))
    if "resnet" in only or "zoo" in only:
        net.eval()
        r = {}
        for bs, inner in ((1, p["resnet_inner_b1"]), (16, 1)):
            x = torch.from_numpy(images(bs))

            def run():
                with torch.inference_mode():
                    for _ in range(inner):
                        net(x)
            ts = median_s(run, p["repeats"], inner)
            with torch.inference_mode():
                head = net(x).numpy()[:, :4].round(4).tolist()[:2]
            r["batch%d" % bs] = {"sec_per_batch": summary(ts, digits=5), "times": ts,
                                 "logits_head": head}
        if "resnet" in only:
            res["resnet18_v1"] = r
        if "zoo" in only:          # its own ResNet-18, the zoo's resnet18_v1 figures
            res["zoo"] = {"resnet18_v1 b%d" % bs: {"sec_per_batch": r["batch%d" % bs]
                                                   ["sec_per_batch"]} for bs in (1, 16)}
    if "rtrain" in only:
        net.train()
        opt = torch.optim.SGD(net.parameters(), lr=RT_LR)
        lossf = tnn.CrossEntropyLoss()
        x, y = torch.from_numpy(images(RT_BATCH)), torch.from_numpy(rtrain_labels())
        losses = []
        rsteps = _torch_steps(net, opt, lossf, lambda: (x, y), losses)
        rsteps(p["rtrain_steps"], keep=True)
        ts = median_s(lambda: rsteps(p["rtrain_steps"]), p["repeats"], p["rtrain_steps"])
        res["resnet18_train"] = {"sec_per_step": summary(ts, digits=5), "times": ts,
                                 "losses": [round(v, 5) for v in losses]}
    if "micro" in only:
        r = {}
        for name, (ds, F, k, pad) in MICRO.items():
            rs = np.random.RandomState(7)
            x = torch.from_numpy(rs.standard_normal(ds).astype(np.float32)).requires_grad_()
            w = torch.from_numpy((rs.standard_normal((F, ds[1], k, k)) * 0.1)
                                 .astype(np.float32)).requires_grad_()
            b = torch.from_numpy(rs.standard_normal(F).astype(np.float32)).requires_grad_()
            dy = torch.from_numpy(rs.standard_normal(
                (ds[0], F, ds[2] + 2 * pad - k + 1, ds[3] + 2 * pad - k + 1)).astype(np.float32))

            def fwd():
                with torch.no_grad():
                    tF.conv2d(x, w, b, padding=pad)

            def fwd_bwd():
                tF.conv2d(x, w, b, padding=pad).backward(dy)
            r[name] = {lab: {"ms": summary(median_s(fn, p["repeats"]), 1e3)}
                       for lab, fn in (("fwd", fwd), ("fwd_bwd", fwd_bwd))}
        res["micro"] = r
    return res


def torch_resnet18_v1(tnn):
    """resnet18_v1 as Gluon's model zoo builds it, module creation order
    included (body convs and BatchNorms, then the downsample path)."""
    class Block(tnn.Module):
        def __init__(self, cin, c, stride):
            super().__init__()
            self.body = tnn.Sequential(
                tnn.Conv2d(cin, c, 3, stride, 1, bias=False), tnn.BatchNorm2d(c), tnn.ReLU(),
                tnn.Conv2d(c, c, 3, 1, 1, bias=False), tnn.BatchNorm2d(c))
            self.down = (tnn.Sequential(tnn.Conv2d(cin, c, 1, stride, bias=False),
                                        tnn.BatchNorm2d(c)) if stride != 1 or cin != c else None)

        def forward(self, x):
            r = x if self.down is None else self.down(x)
            return (self.body(x) + r).relu()

    layers = [tnn.Conv2d(3, 64, 7, 2, 3, bias=False), tnn.BatchNorm2d(64), tnn.ReLU(),
              tnn.MaxPool2d(3, 2, 1)]
    cin = 64
    for i, c in enumerate((64, 128, 256, 512)):
        layers += [Block(cin, c, 1 if i == 0 else 2), Block(c, c, 1)]
        cin = c
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(512, 1000)]
    return tnn.Sequential(*layers)


_TORCH_WORKER = r"""
import json, sys
sys.path.insert(0, %(here)r)
import bench_convnet, _common
res = bench_convnet.torch_measure(json.loads(sys.argv[1]))
res["facts"] = _common.facts()
sys.stdout.write("\n" + json.dumps(res) + "\n")
"""


def run_torch(python, params, timeout):
    log("bench_convnet: running the torch worker in %s" % python)
    p = subprocess.run([os.path.abspath(python), "-c", _TORCH_WORKER % {"here": HERE},
                        json.dumps(params)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout, cwd=HERE)
    if p.returncode != 0:
        raise RuntimeError("torch worker failed (rc=%d): %s"
                           % (p.returncode, "\n".join(p.stderr.splitlines()[-5:])))
    return json.loads([l for l in p.stdout.splitlines() if l.startswith("{")][-1])


# ------------------------------------------------------------------- main
def _ratio(a, b):
    return None if a is None or b is None else round(a / b, 3)


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run_rounds(args, params):
    """``--rounds`` rounds; in each, every section runs in aiond, then MXNet,
    then torch (reversed on odd rounds), so the backends compared in a round
    ran minutes apart at most, under the same load from other processes."""
    import aiond as mx
    rounds, errors = [], {}
    if "zoo" in params["only"]:
        params["zoo_dir"] = tempfile.mkdtemp(prefix="bench_convnet_zoo_")
        if args.mxnet_python:
            from _common import run_mxnet
            run_mxnet(args.mxnet_python, "bench_convnet", "export_zoo", params,
                      args.mxnet_timeout)
        else:
            export_zoo(mx, "aiond", params)
    for r in range(args.rounds):
        rd = {}
        for sec in params["only"]:
            ps = dict(params, only=[sec])
            jobs = [("aiond", lambda: measure(mx, "aiond", ps))]
            if args.mxnet_python:
                from _common import run_mxnet
                jobs.append(("mxnet", lambda: run_mxnet(args.mxnet_python, "bench_convnet",
                                                         "measure", ps, args.mxnet_timeout)))
            if args.torch_python:
                jobs.append(("torch", lambda: run_torch(args.torch_python, ps,
                                                        args.mxnet_timeout)))
            for who, fn in (jobs if r % 2 == 0 else jobs[::-1]):
                if who in errors:
                    continue
                try:
                    got = fn()
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    errors[who] = str(e)
                    continue
                rd.setdefault(who, {}).update(got)
        rounds.append(rd)
    return rounds, errors


def main():
    p = parser(__doc__.splitlines()[0], repeats=5)
    p.add_argument("--steps", type=int, default=20, help="LeNet steps per timed run")
    p.add_argument("--resnet-inner-b1", type=int, default=5,
                   help="batch-1 resnet forwards per timed run")
    p.add_argument("--rtrain-steps", type=int, default=3,
                   help="resnet18_v1 training steps per timed run (and checked steps)")
    p.add_argument("--only", default="lenet,resnet,zoo,rtrain,micro")
    p.add_argument("--rounds", type=int, default=2,
                   help="rounds of (aiond, MXNet, torch) per section (default %(default)s)")
    p.add_argument("--torch-python", metavar="PATH", default=None)
    args = parse(p)
    params = {"repeats": args.repeats, "steps": args.steps, "only": args.only.split(","),
              "resnet_inner_b1": args.resnet_inner_b1, "rtrain_steps": args.rtrain_steps}
    try:
        rounds, errors = run_rounds(args, params)
    finally:
        if params.get("zoo_dir"):
            shutil.rmtree(params.pop("zoo_dir"), ignore_errors=True)
    results = {"rounds": rounds}
    for who, e in errors.items():
        results[who + "_error"] = e

    def fig(who, *path):
        """(median over rounds of ``path``'s median, per-round values)."""
        vals = [dig(rd.get(who) or {}, *path, "median") for rd in rounds]
        m = _med(vals)
        return (None if m is None else round(m, 6)), vals

    def rel(path_a, path_b, who_b="mxnet", who_a="aiond"):
        """Median over rounds of the per-round ratio who_a / who_b."""
        return _ratio(_med([None if a is None or b is None else a / b for a, b in
                            zip(fig(who_a, *path_a)[1], fig(who_b, *path_b)[1])]), 1)
    targets = []
    if "lenet" in params["only"]:
        for rd in rounds:
            ref = rd["aiond"]["lenet_numpy"]["losses"]
            for who, key in (("mxnet", "lenet_imperative"), ("torch", "lenet_eager")):
                got = dig(rd.get(who) or {}, key, "losses")
                if got is not None:
                    err = max(abs(a - b) for a, b in zip(got, ref))
                    check(err < 2e-3, "%s lenet losses %s vs numpy %s" % (who, got, ref))
        t_torch = fig("torch", "lenet_eager", "sec_per_step")[0]
        for mode in ("imperative", "hybridized"):
            k = ("lenet_" + mode, "sec_per_step")
            a, m = fig("aiond", *k)[0], fig("mxnet", *k)[0]
            targets += [
                target("LeNet %s ms/step" % mode, round(a * 1e3, 2), unit="ms",
                       numpy=round(fig("aiond", "lenet_numpy", "sec_per_step")[0] * 1e3, 2),
                       mxnet=None if m is None else round(m * 1e3, 2)),
                target("LeNet %s aiond/MXNet" % mode, rel(k, k), "<=", 1.5, "x")]
            if t_torch is not None:
                targets.append(target("LeNet %s aiond/torch eager" % mode,
                                      rel(k, ("lenet_eager", "sec_per_step"), "torch"),
                                      "<=", 1.0, "x",
                                      note="torch eager %.2f ms/step" % (t_torch * 1e3)))
    if "resnet" in params["only"]:
        for bs in (1, 16):
            k = ("resnet18_v1", "batch%d" % bs, "sec_per_batch")
            a, m, t = fig("aiond", *k)[0], fig("mxnet", *k)[0], fig("torch", *k)[0]
            for rd in rounds:
                ha = rd["aiond"]["resnet18_v1"]["batch%d" % bs]["logits_head"]
                for who in ("mxnet", "torch"):
                    h = dig(rd.get(who) or {}, "resnet18_v1", "batch%d" % bs, "logits_head")
                    if h is not None:
                        check(np.allclose(h, ha, rtol=2e-3, atol=2e-3),
                              "resnet logits %s %s vs aiond %s" % (who, h, ha))
            targets += [
                target("resnet18_v1 b%d ms/batch" % bs, round(a * 1e3, 2), unit="ms",
                       mxnet=None if m is None else round(m * 1e3, 2),
                       note="torch eager %s ms" % (None if t is None else round(t * 1e3, 2))),
                target("resnet18_v1 b%d aiond/MXNet" % bs, rel(k, k), "<=", 1.5, "x")]
    if "zoo" in params["only"]:
        for name, sizes in ZOO:
            for bs in sizes:
                key = "%s b%d" % (name, bs)
                k = ("zoo", key, "sec_per_batch")
                a, m, t = fig("aiond", *k)[0], fig("mxnet", *k)[0], fig("torch", *k)[0]
                for rd in rounds:
                    ha = rd["aiond"]["zoo"][key]["logits_head"]
                    h = dig(rd.get("mxnet") or {}, "zoo", key, "logits_head")
                    if h is not None:
                        check(np.allclose(h, ha, rtol=2e-3, atol=2e-3),
                              "%s logits mxnet %s vs aiond %s" % (key, h, ha))
                targets += [
                    target("%s ms/batch (SymbolBlock.imports)" % key, round(a * 1e3, 2),
                           unit="ms", mxnet=None if m is None else round(m * 1e3, 2),
                           note=None if t is None else "torch eager %.2f ms" % (t * 1e3)),
                    target("%s aiond/MXNet" % key, rel(k, k), "<=", 1.0, "x")]
    if "rtrain" in params["only"]:
        k = ("resnet18_train", "sec_per_step")
        for rd in rounds:
            ref = rd["aiond"]["resnet18_train"]["losses"]
            for who in ("mxnet", "torch"):
                got = dig(rd.get(who) or {}, "resnet18_train", "losses")
                if got is not None:
                    err = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(got, ref))
                    check(err < 2e-3, "resnet18_v1 training losses %s %s vs aiond %s"
                          % (who, got, ref))
        a, m, t = fig("aiond", *k)[0], fig("mxnet", *k)[0], fig("torch", *k)[0]
        targets += [
            target("resnet18_v1 b%d training ms/step" % RT_BATCH, round(a * 1e3, 1), unit="ms",
                   mxnet=None if m is None else round(m * 1e3, 1),
                   note=None if t is None else "torch eager %.1f ms" % (t * 1e3)),
            target("resnet18_v1 training aiond/MXNet", rel(k, k), "<=", 1.0, "x")]
        if t is not None:
            targets.append(target("resnet18_v1 training aiond/torch eager",
                                  rel(k, k, "torch"), "<=", 1.0, "x"))
    if "micro" in params["only"]:
        for name in MICRO:
            for lab in ("fwd", "fwd_bwd"):
                k = ("micro", name, lab, "ms")
                a, m = fig("aiond", *k)[0], fig("mxnet", *k)[0]
                t = fig("torch", *k)[0]
                n_ = fig("aiond", "micro", name, lab, "numpy_im2col_ms")[0]
                targets.append(target(
                    "conv %s %s ms" % (name, lab), round(a, 3), unit="ms",
                    numpy=None if n_ is None else round(n_, 3),
                    mxnet=None if m is None else round(m, 3),
                    note="aiond/MXNet %s, torch %s ms" % (rel(k, k), t)))
    emit("convnet", args, results, targets, params)
    if errors:
        log("worker failed: %s" % errors)
        sys.exit(1)


if __name__ == "__main__":
    main()
