"""gluon.contrib blocks of issue 31 run on an ``mx`` module, so the same
code runs on aiond and on MXNet 1.9.1; contrib31_blocks_mxnet191.npz holds
MXNet's results (regenerate with MXNet's interpreter:
``python tests/gluon/contrib31_blocks_cases.py tests/gluon/contrib31_blocks_mxnet191.npz``).
Parameters are set from a seeded generator in name order, so both sides
compute with the same numbers."""
import sys

import numpy as np


def _run(mx, res, name, block, x, seed, grad=True, hybridize=False):
    block.initialize()
    if hybridize:
        block.hybridize()
    block(x)                                  # deferred shapes known from here on
    rng = np.random.RandomState(seed)
    for pname, p in sorted(block.collect_params().items()):
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape)))
    x = x.copy()
    x.attach_grad()
    with mx.autograd.record():
        y = block(x)
        outs = y if isinstance(y, (list, tuple)) else [y]
        flat = []
        for o in outs:
            flat.extend(o if isinstance(o, (list, tuple)) else [o])
        loss = sum((o * mx.nd.array(np.linspace(-1, 1, o.size).reshape(o.shape))).sum()
                   for o in flat)
    for i, o in enumerate(flat):
        res["%s_out%d" % (name, i)] = o.asnumpy()
    if grad:
        loss.backward()
        res["%s_dx" % name] = x.grad.asnumpy()
        for pname, p in sorted(block.collect_params().items()):
            res["%s_d%s" % (name, pname.split("_", 1)[1])] = p.grad().asnumpy()


class _Unroll:
    """A cell unrolled over a sequence, as a callable block-like object."""

    def __init__(self, mx, cell, length, layout="NTC"):
        self.cell, self.length, self.layout = cell, length, layout

    def initialize(self):
        self.cell.initialize()

    def hybridize(self):
        self.cell.hybridize()

    def collect_params(self):
        return self.cell.collect_params()

    def __call__(self, x):
        out, states = self.cell.unroll(self.length, x, layout=self.layout, merge_outputs=True)
        return [out] + list(states)


def cases(mx):
    cnn, rnn = mx.gluon.contrib.cnn, mx.gluon.contrib.rnn
    rng = np.random.RandomState(0)
    res = {}
    img = mx.nd.array(rng.randn(2, 3, 6, 7))
    _run(mx, res, "dcn", cnn.DeformableConvolution(4, kernel_size=3, padding=1, prefix="dcn_",
                                                   offset_weight_initializer="normal"),
         img, 1)
    _run(mx, res, "dcn_h", cnn.DeformableConvolution(4, kernel_size=(3, 3), strides=2,
                                                     activation="relu", use_bias=False,
                                                     prefix="dcnh_"), img, 2, hybridize=True)
    _run(mx, res, "mdcn", cnn.ModulatedDeformableConvolution(6, kernel_size=3, padding=1,
                                                             num_deformable_group=3,
                                                             prefix="mdcn_"),
         img, 3, grad=False)
    seq2d = mx.nd.array(rng.randn(2, 3, 3, 5, 5))     # N T C H W
    for i, (cls, kw) in enumerate([(rnn.Conv2DRNNCell, {}), (rnn.Conv2DLSTMCell, {}),
                                   (rnn.Conv2DGRUCell, dict(activation="relu"))]):
        cell = cls((3, 5, 5), 4, i2h_kernel=3, h2h_kernel=3, i2h_pad=1, prefix="c2_%d_" % i, **kw)
        _run(mx, res, "conv2d_%d" % i, _Unroll(mx, cell, 3), seq2d, 10 + i)
    seq1d = mx.nd.array(rng.randn(2, 4, 2, 9))
    for i, cls in enumerate([rnn.Conv1DRNNCell, rnn.Conv1DLSTMCell, rnn.Conv1DGRUCell]):
        cell = cls((2, 9), 3, i2h_kernel=2, h2h_kernel=(3,), i2h_dilate=2, h2h_dilate=2,
                   prefix="c1_%d_" % i)
        _run(mx, res, "conv1d_%d" % i, _Unroll(mx, cell, 4), seq1d, 20 + i)
    # (MXNet 1.9.1's CPU build fails reading 3-D convolution results back in
    # this recurrent graph: the Conv3D cells are checked against Conv2D ones)
    seq = mx.nd.array(rng.randn(3, 4, 5))
    _run(mx, res, "lstmp", _Unroll(mx, rnn.LSTMPCell(6, 3, prefix="lstmp_"), 4), seq, 40)
    _run(mx, res, "lstmp_h", _Unroll(mx, rnn.LSTMPCell(6, 3, prefix="lstmph_"), 4), seq, 41,
         hybridize=True)
    return res


if __name__ == "__main__":
    import mxnet
    np.savez_compressed(sys.argv[1], **cases(mxnet))
