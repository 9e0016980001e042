"""Symbol JSON fixtures written by Apache MXNet 1.9.1, and the reverse check.

    /path/to/mxnet-venv/bin/python make_fixtures.py            # (re)write the fixtures here
    /path/to/mxnet-venv/bin/python make_fixtures.py --check D  # MXNet loads aiond's files in D

Each fixture NAME has NAME-symbol.json (``sym.save``) and NAME.npz: the
argument and auxiliary arrays (``arg:<name>``, ``aux:<name>``) and MXNet's
forward outputs in predict mode (``out:<i>``). expected.json records
list_arguments / list_outputs / list_auxiliary_states as MXNet reports them.
legacy-0.8-symbol.json is hand-made in the pre-0.9 format (``param``/``attr``,
no versions, no auxiliary variables) that MXNet 1.9.1 upgrades on load.

``--check D`` loads every D/*-symbol.json (written by aiond's tests) with
MXNet, binds it to D/<name>.npz and compares the outputs stored there.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _mx():
    os.environ.setdefault("MXNET_SUBGRAPH_BACKEND", "NONE")
    import mxnet as mx
    return mx


def graphs(mx):
    sym = mx.sym
    with mx.name.NameManager():
        data = sym.Variable("data")
        net = sym.FullyConnected(data, num_hidden=8, name="fc1")
        net = sym.Activation(net, act_type="relu", name="relu1")
        net = sym.FullyConnected(net, num_hidden=4, name="fc2")
        mlp = sym.SoftmaxOutput(net, name="softmax")

        x = sym.Variable("data")
        c = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv0")
        c = sym.BatchNorm(c, fix_gamma=False, name="bn0")
        c = sym.Activation(c, act_type="relu", name="relu0")
        c = sym.Pooling(c, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
        c = sym.Flatten(c, name="flat0")
        c = sym.FullyConnected(c, num_hidden=5, name="fc0")
        convnet = sym.SoftmaxOutput(c, name="softmax")

        a = sym.Variable("a", shape=(2, 3))
        b = sym.Variable("b", lr_mult=2.0)
        e1 = (a + b) / 10 + 1
        e2 = sym.exp(a * b - 2)
        e3 = sym.sum(sym.broadcast_mul(a, b), axis=1, keepdims=True)
        e4 = 2 ** a - sym.maximum(a, 0.5) % 3
        elemwise = sym.Group([e1, e2, e3, e4])
    return {"mlp": (mlp, {"data": (4, 6)}),
            "convnet": (convnet, {"data": (2, 3, 6, 6)}),
            "elemwise": (elemwise, {"a": (2, 3), "b": (2, 3)})}


def _values(mx, sym, shapes, seed):
    rng = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {}
    for n, s in zip(sym.list_arguments(), arg_shapes):
        if n.endswith("label"):
            args[n] = rng.randint(0, 4, s).astype(np.float32)
        else:
            args[n] = rng.uniform(-1, 1, s).astype(np.float32)
    aux = {}
    for n, s in zip(sym.list_auxiliary_states(), aux_shapes):
        aux[n] = (rng.uniform(0.5, 1.5, s) if n.endswith("var")
                  else rng.uniform(-0.2, 0.2, s)).astype(np.float32)
    return args, aux


def _run(mx, sym, args, aux):
    exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()},
                   aux_states={k: mx.nd.array(v) for k, v in aux.items()}, grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _legacy(mx):
    """The convnet's first layers in MXNet 0.8's JSON dialect."""
    nodes = [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "conv0_weight", "param": {}, "inputs": []},
        {"op": "null", "name": "conv0_bias", "param": {}, "inputs": []},
        {"op": "Convolution", "name": "conv0",
         "param": {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)", "no_bias": "False",
                   "workspace": "512"},
         "attr": {"lr_mult": "0.5"}, "inputs": [[0, 0], [1, 0], [2, 0]]},
        {"op": "null", "name": "bn0_gamma", "inputs": []},
        {"op": "null", "name": "bn0_beta", "inputs": []},
        {"op": "BatchNorm", "name": "bn0", "param": {"fix_gamma": "False", "eps": "0.001"},
         "inputs": [[3, 0], [4, 0], [5, 0]]},
        {"op": "Activation", "name": "relu0", "param": {"act_type": "relu"},
         "inputs": [[6, 0]]},
    ]
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2, 4, 5], "heads": [[7, 0]]},
                      indent=2)


def write():
    mx = _mx()
    expected = {}
    for i, (name, (sym, shapes)) in enumerate(sorted(graphs(mx).items())):
        sym.save(os.path.join(HERE, "%s-symbol.json" % name))
        args, aux = _values(mx, sym, shapes, i)
        outs = _run(mx, sym, args, aux)
        arrays = {"arg:" + k: v for k, v in args.items()}
        arrays.update({"aux:" + k: v for k, v in aux.items()})
        arrays.update({"out:%d" % j: o for j, o in enumerate(outs)})
        np.savez_compressed(os.path.join(HERE, "%s.npz" % name), **arrays)
        expected[name] = {"arguments": sym.list_arguments(), "outputs": sym.list_outputs(),
                          "aux": sym.list_auxiliary_states()}
    with open(os.path.join(HERE, "legacy-0.8-symbol.json"), "w") as f:
        f.write(_legacy(mx))
    old = mx.sym.load(os.path.join(HERE, "legacy-0.8-symbol.json"))
    expected["legacy-0.8"] = {"arguments": old.list_arguments(), "outputs": old.list_outputs(),
                              "aux": old.list_auxiliary_states(), "attr_dict": old.attr_dict(),
                              "upgraded_json": old.tojson()}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


def check(directory):
    """MXNet loads and runs the symbol files aiond wrote into ``directory``."""
    mx = _mx()
    n = 0
    for fname in sorted(os.listdir(directory)):
        if not fname.endswith("-symbol.json"):
            continue
        name = fname[:-len("-symbol.json")]
        sym = mx.sym.load(os.path.join(directory, fname))
        with open(os.path.join(directory, fname)) as f:
            text = f.read()
        same_text = sym.tojson() == text
        npz = os.path.join(directory, name + ".npz")
        status = "loaded, list_arguments %s" % sym.list_arguments()
        if os.path.exists(npz):
            d = np.load(npz)
            args = {k[4:]: d[k] for k in d.files if k.startswith("arg:")}
            aux = {k[4:]: d[k] for k in d.files if k.startswith("aux:")}
            outs = _run(mx, sym, args, aux)
            for j, o in enumerate(outs):
                np.testing.assert_allclose(o, d["out:%d" % j], rtol=1e-5, atol=1e-6)
            status += ", %d output(s) equal to aiond's" % len(outs)
        print("%-28s %s; MXNet re-saves it identically: %s" % (fname, status, same_text))
        n += 1
    print("MXNet 1.9.1 loaded %d aiond symbol file(s)" % n)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        write()
