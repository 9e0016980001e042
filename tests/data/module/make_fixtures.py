"""Module/model fixtures written by Apache MXNet 1.9.1, and the reverse check.

    /path/to/mxnet-venv/bin/python make_fixtures.py            # (re)write the fixtures here
    /path/to/mxnet-venv/bin/python make_fixtures.py --check D  # MXNet loads aiond's checkpoint

Writes mlpbn-symbol.json, mlpbn-0002.params and mlpbn-0002.states (a
Module checkpoint with optimizer states: the MLP with a BatchNorm trained 2
epochs with momentum SGD) and expected.json: MXNet's figures for the
problems of problem.py (fit on one and on two contexts, the log lines,
predictions of the checkpoint, training resumed from it, FeedForward), and
viz_expected.json: what mx.viz prints (lines right-stripped) and draws (the
calls a stand-in graphviz records) for problem.viz_nets.

``--check D`` loads D/aiond-symbol.json + D/aiond-0002.params with
``mx.mod.Module.load``, predicts data(10, 3) and compares with D/expected.npy;
prints OK or raises.
"""
import json
import logging
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import problem  # noqa: E402


def _mx():
    os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
    import mxnet as mx
    return mx


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _capture():
    h = _Lines()
    root = logging.getLogger()
    root.addHandler(h)
    root.setLevel(logging.INFO)
    return h


def checkpoint_problem(mx):
    X, y = problem.data(96, 0)
    it = mx.io.NDArrayIter(X, y, batch_size=32)
    mod = mx.mod.Module(problem.mlp_bn(mx))
    mod.fit(it, num_epoch=2, arg_params=problem.params(mx), allow_missing=True,
            initializer=mx.init.Zero(), optimizer_params=problem.OPT)
    return mod, it


def check(d):
    mx = _mx()
    mod = mx.mod.Module.load(os.path.join(d, "aiond"), 2)
    X, _ = problem.data(10, 3)
    mod.bind(data_shapes=[("data", X.shape)], for_training=False)
    got = mod.predict(mx.nd.array(X)).asnumpy()
    want = np.load(os.path.join(d, "expected.npy"))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    print("OK")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    mx = _mx()
    logging.getLogger().handlers[:] = []
    exp = {}
    # fit on one context, with the log lines (time and speed masked)
    h = _capture()
    mod, val = problem.fit(mx, mx.cpu(), batch_end_callback=mx.callback.Speedometer(32, 5))
    logging.getLogger().removeHandler(h)
    exp["fit_cpu"] = problem.summary(mod, val)
    exp["fit_cpu_log"] = h.lines
    mod, val = problem.fit(mx, [mx.cpu(0), mx.cpu(1)])
    exp["fit_2cpu"] = problem.summary(mod, val)
    mod, val = problem.fit(mx, [mx.cpu(0), mx.cpu(1)], kvstore=None)   # no gradient sync
    exp["fit_2cpu_nokv"] = problem.summary(mod, val)

    # a checkpoint with auxiliary states and optimizer states
    mod, it = checkpoint_problem(mx)
    prefix = os.path.join(HERE, "mlpbn")
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    X, _ = problem.data(10, 3)
    m2 = mx.mod.Module.load(prefix, 2)
    m2.bind(data_shapes=[("data", X.shape)], for_training=False)
    exp["mlpbn_predict"] = m2.predict(mx.nd.array(X)).asnumpy().round(7).tolist()
    # resume: two more epochs from the checkpoint and its optimizer states
    m3 = mx.mod.Module.load(prefix, 2, load_optimizer_states=True)
    it.reset()
    m3.fit(it, begin_epoch=2, num_epoch=4, optimizer_params=problem.OPT)
    arg, aux = m3.get_params()
    exp["mlpbn_resume"] = {k: float(v.asnumpy().astype(np.float64).sum())
                           for k, v in sorted(list(arg.items()) + list(aux.items()))}

    # FeedForward on numpy arrays (shuffled with numpy's global RNG)
    Xtr, ytr = problem.data(500, 0)
    Xte, yte = problem.data(200, 1)
    np.random.seed(0)
    ff = mx.model.FeedForward(problem.mlp(mx), num_epoch=3, learning_rate=0.5, momentum=0.9,
                              numpy_batch_size=50, arg_params=problem.params(mx))
    ff.fit(Xtr, ytr, eval_data=(Xte, yte))
    prob = ff.predict(Xte)
    exp["feedforward"] = {"acc": float((prob.argmax(axis=1) == yte).mean()),
                          "prob_sum0": float(prob[:, 0].astype(np.float64).sum()),
                          "score": float(ff.score(mx.io.NDArrayIter(Xte, yte, 50)))}
    exp["feedforward"].update({k: float(v.asnumpy().astype(np.float64).sum())
                               for k, v in sorted(ff.arg_params.items())})
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(HERE, "viz_expected.json"), "w") as f:
        json.dump(problem.viz_outputs(mx), f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
