"""The small deterministic problems behind tests/test_module.py and
tests/test_model.py, shared with make_fixtures.py so that MXNet 1.9.1 and
aiond run the very same code (``mx`` is either package).

Data, initial weights and batch order are fixed (numpy RandomState, no
shuffling unless a test seeds numpy's global RNG), so the two runtimes do
the same arithmetic and their results agree to float rounding.
"""
import numpy as np

N_IN, N_HID, N_OUT = 20, 16, 4


def data(n, seed):
    """X ~ U[-1, 1)^(n x 20), label = argmax(X @ W) for a fixed W (4 classes)."""
    rs = np.random.RandomState(seed)
    X = rs.uniform(-1, 1, (n, N_IN)).astype(np.float32)
    W = np.random.RandomState(42).randn(N_IN, N_OUT)
    y = np.argmax(X @ W, axis=1).astype(np.float32)
    return X, y


def mlp(mx):
    d = mx.sym.Variable('data')
    h = mx.sym.FullyConnected(d, num_hidden=N_HID, name='fc1')
    h = mx.sym.Activation(h, act_type='relu', name='relu1')
    o = mx.sym.FullyConnected(h, num_hidden=N_OUT, name='fc2')
    return mx.sym.SoftmaxOutput(o, name='softmax')


def mlp_bn(mx):
    """The MLP with a BatchNorm (auxiliary states) after fc1."""
    d = mx.sym.Variable('data')
    h = mx.sym.FullyConnected(d, num_hidden=N_HID, name='fc1')
    h = mx.sym.BatchNorm(h, name='bn1')
    h = mx.sym.Activation(h, act_type='relu', name='relu1')
    o = mx.sym.FullyConnected(h, num_hidden=N_OUT, name='fc2')
    return mx.sym.SoftmaxOutput(o, name='softmax')


def params(mx):
    rs = np.random.RandomState(7)
    return {'fc1_weight': mx.nd.array(rs.uniform(-.3, .3, (N_HID, N_IN))),
            'fc1_bias': mx.nd.zeros((N_HID,)),
            'fc2_weight': mx.nd.array(rs.uniform(-.3, .3, (N_OUT, N_HID))),
            'fc2_bias': mx.nd.zeros((N_OUT,))}


OPT = {'learning_rate': 0.5, 'momentum': 0.9, 'wd': 1e-4}


def fit(mx, context, num_epoch=4, batch_end_callback=None, kvstore='local'):
    """Module.fit on 500 rows (batch 32, the last one padded), validation on 200."""
    Xtr, ytr = data(500, 0)
    Xte, yte = data(200, 1)
    train = mx.io.NDArrayIter(Xtr, ytr, batch_size=32, shuffle=False)
    val = mx.io.NDArrayIter(Xte, yte, batch_size=32)
    mod = mx.mod.Module(mlp(mx), context=context)
    mod.fit(train, eval_data=val, num_epoch=num_epoch, arg_params=params(mx),
            optimizer='sgd', optimizer_params=OPT, batch_end_callback=batch_end_callback,
            kvstore=kvstore)
    return mod, val


def summary(mod, val):
    """What the tests compare with MXNet's figures."""
    arg, aux = mod.get_params()
    out = {k: float(v.asnumpy().astype(np.float64).sum()) for k, v in sorted(arg.items())}
    out.update({'aux:' + k: float(v.asnumpy().astype(np.float64).sum())
                for k, v in sorted(aux.items())})
    out['score'] = [[n, float(v)] for n, v in mod.score(val, ['acc', 'ce'])]
    return out


def viz_nets(mx):
    """(name, symbol, input shapes) for the mx.viz tests: an MLP (one FC
    without bias), a convnet (BatchNorm, grouped conv without bias, pooling,
    LeakyReLU, a two-input add) and an embedding net."""
    sym = mx.sym
    d = sym.Variable('data')
    net = sym.FullyConnected(data=d, name='fc1', num_hidden=128)
    net = sym.Activation(data=net, name='relu1', act_type="relu")
    net = sym.FullyConnected(data=net, name='fc2', num_hidden=64, no_bias=True)
    net = sym.Activation(data=net, name='relu2', act_type="relu")
    net = sym.FullyConnected(data=net, name='fc3', num_hidden=10)
    mlp_ = sym.SoftmaxOutput(data=net, name='softmax')

    c1 = sym.Convolution(data=d, kernel=(3, 3), num_filter=8, name='conv1')
    b1 = sym.BatchNorm(c1, name='bn1')
    a1 = sym.Activation(b1, act_type='relu', name='relu1')
    p1 = sym.Pooling(a1, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool1')
    c2 = sym.Convolution(data=p1, kernel=(3, 3), num_filter=16, num_group=2, no_bias=True,
                         pad=(1, 1), name='conv2')
    lr = sym.LeakyReLU(c2, act_type='leaky', name='lrelu')
    c3 = sym.Convolution(data=p1, kernel=(1, 1), num_filter=16, name='conv3')
    s = sym.elemwise_add(lr, c3, name='add')
    fc = sym.FullyConnected(sym.Flatten(s, name='flat'), num_hidden=10, name='fc')
    conv = sym.SoftmaxOutput(fc, name='softmax')

    tok = sym.Variable('tok')
    e = sym.Flatten(sym.Embedding(tok, input_dim=20, output_dim=4, name='emb'), name='flat')
    emb = sym.SoftmaxOutput(sym.FullyConnected(e, num_hidden=10, name='fc'), name='softmax')
    return [("mlp", mlp_, {'data': (32, 100)}), ("conv", conv, {'data': (2, 3, 12, 12)}),
            ("emb", emb, {'tok': (2, 5)})]


class FakeGraphviz(object):
    """A stand-in ``graphviz`` module recording what plot_network draws."""

    def __init__(self):
        self.calls = []
        rec = self.calls

        class Digraph(object):
            def __init__(self, name=None, format=None, **kw):
                rec.append(['Digraph', name, format])

            def node(self, name, label, **attr):
                rec.append(['node', name, label, sorted([k, v] for k, v in attr.items())])

            def edge(self, tail_name, head_name, **attr):
                rec.append(['edge', tail_name, head_name,
                            sorted([k, v] for k, v in attr.items())])
        self.Digraph = Digraph


def viz_outputs(mx):
    """What mx.viz prints and draws for viz_nets (rstripped lines; plot calls)."""
    import contextlib
    import io
    import sys
    import types
    out = {}
    for name, net, shape in viz_nets(mx):
        for key, kw in (("shape", {"shape": shape}), ("noshape", {}),
                        ("narrow", {"shape": shape, "line_length": 80,
                                    "positions": [30, 50, 60, 80]})):
            if name != "mlp" and key != "shape":
                continue    # keeps the fixture small
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                mx.viz.print_summary(net, **kw)
            out["summary_%s_%s" % (name, key)] = [l.rstrip() for l in
                                                  buf.getvalue().splitlines()]
    fake = FakeGraphviz()
    mod = types.ModuleType("graphviz")
    mod.Digraph = fake.Digraph
    saved = sys.modules.get("graphviz")
    sys.modules["graphviz"] = mod
    try:
        nets = {n: (s, sh) for n, s, sh in viz_nets(mx)}
        mx.viz.plot_network(nets["mlp"][0], shape=nets["mlp"][1],
                            dtype={"data": np.float32})
        mx.viz.plot_network(nets["conv"][0], title="conv", save_format="png",
                            shape=nets["conv"][1])
        mx.viz.plot_network(nets["emb"][0], hide_weights=False,
                            node_attrs={"shape": "oval", "fixedsize": "false"})
    finally:
        if saved is None:
            del sys.modules["graphviz"]
        else:
            sys.modules["graphviz"] = saved
    out["plot_calls"] = fake.calls
    return out
