"""Run by a Python with real MXNet 1.9.1 and onnx (tests/onnx/test_import_mxnet_export.py
calls it with $AIOND_MXNET_ONNX_PYTHON): export models with MXNet's own
mx.onnx.export_model and save, per model, the .onnx file, the input and MXNet's
outputs (NAME.onnx, NAME.in.npy, NAME.out.npz).

    python mxnet_export_models.py OUTDIR [NAME ...]
"""
import contextlib
import os
import sys

import mxnet as mx
import numpy as np
from mxnet.gluon import nn, rnn
from mxnet.gluon.model_zoo import vision

assert mx.__version__ == "1.9.1", mx.__version__


class Encoder(nn.HybridBlock):
    """Embedding, self-attention with batch_dot and softmax, LayerNorm, a
    position-wise FFN with GELU: what MXNet-era text models are made of."""

    def __init__(self, vocab=30, units=16, **kw):
        super().__init__(**kw)
        self.units = units
        self.emb = nn.Embedding(vocab, units)
        self.qkv = nn.Dense(3 * units, flatten=False)
        self.ln1 = nn.LayerNorm()
        self.ff1 = nn.Dense(32, flatten=False)
        self.ff2 = nn.Dense(units, flatten=False)

    def hybrid_forward(self, F, ids):
        h = self.emb(ids)
        q, k, v = F.split(self.qkv(h), num_outputs=3, axis=-1)
        att = F.softmax(F.batch_dot(q, k, transpose_b=True) / np.sqrt(self.units), axis=-1)
        h = self.ln1(h + F.batch_dot(att, v))
        f = self.ff2(F.LeakyReLU(self.ff1(h), act_type="gelu"))
        return F.tanh(h + f)


class Recurrent(nn.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.lstm = rnn.LSTM(12, num_layers=2, layout="NTC")
        self.out = nn.Dense(5, flatten=False)

    def hybrid_forward(self, F, x):
        return self.out(self.lstm(x))


# MXNet 1.9.1 exports for the installed onnx's newest opset (19 with onnx 1.14)
# but has only opset 12 and 13 translations: its Split, ReduceMean (LayerNorm)
# and RNN pieces are invalid at opset 18+. These models are exported as with the
# onnx of MXNet's day (1.7: opset 12, 1.8: opset 13); the others at 19, as
# MXNet 1.9.1 writes them with onnx 1.14.
PIN_OPSET = {"resnet18_v2": 12, "mobilenetv2_0.25": 13, "encoder": 13, "lstm": 12}


@contextlib.contextmanager
def _opset(opset):
    if opset is None:
        yield
        return
    import onnx.checker
    import onnx.defs
    newest, ctx = onnx.defs.onnx_opset_version, onnx.checker.DEFAULT_CONTEXT
    onnx.defs.onnx_opset_version = lambda: opset
    ctx.opset_imports = {"": opset}
    try:
        yield
    finally:
        onnx.defs.onnx_opset_version = newest
        ctx.opset_imports = {"": newest()}


def _zoo(name, **kw):
    return lambda: vision.get_model(name, classes=10, **kw)


MODELS = {
    # name: (block factory, input, integer input?)
    "resnet18_v1": (_zoo("resnet18_v1"), (2, 3, 32, 32), False),
    "resnet18_v2": (_zoo("resnet18_v2"), (2, 3, 32, 32), False),
    "mobilenetv2_0.25": (_zoo("mobilenetv2_0.25"), (2, 3, 32, 32), False),
    "squeezenet1.1": (_zoo("squeezenet1.1"), (1, 3, 224, 224), False),
    "mobilenet0.25": (_zoo("mobilenet0.25"), (2, 3, 32, 32), False),
    "encoder": (Encoder, (2, 7), True),
    "lstm": (Recurrent, (2, 6, 4), False),
}


def export(name, out):
    factory, shape, ints = MODELS[name]
    mx.random.seed(0)
    rs = np.random.RandomState(0)
    net = factory()
    net.initialize(mx.init.Xavier(magnitude=2.0))
    x = rs.randint(0, 30, shape).astype(np.float32) if ints else rs.rand(*shape).astype(np.float32)
    net(mx.nd.array(x))
    # non-trivial BatchNorm statistics, so folding or mixing them up shows
    for pname, p in net.collect_params().items():
        if pname.endswith("running_mean"):
            p.set_data(mx.nd.array(rs.uniform(-0.3, 0.3, p.shape)))
        elif pname.endswith("running_var"):
            p.set_data(mx.nd.array(rs.uniform(0.5, 2.0, p.shape)))
    net.hybridize()
    y = net(mx.nd.array(x))
    ys = y if isinstance(y, (list, tuple)) else [y]
    prefix = os.path.join(out, name)
    net.export(prefix)
    with _opset(PIN_OPSET.get(name)):
        mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params", [shape],
                             [np.float32], prefix + ".onnx")
    np.save(prefix + ".in.npy", x)
    np.savez(prefix + ".out.npz", *[v.asnumpy() for v in ys])


if __name__ == "__main__":
    names = sys.argv[2:] or sorted(MODELS)
    for n in names:
        export(n, sys.argv[1])
