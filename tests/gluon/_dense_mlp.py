"""The small hybridized Dense MLP that the serving-path tests (the short
call path, engine batching) call, and its numpy forward."""
import numpy as np

import aiond as mx
from aiond import nd
from aiond.gluon import nn

CPU = mx.cpu()     # the engine batches CPU calls: pinned under any AIOND_TEST_CTX


def arr(x, dtype=None):
    return nd.array(x, ctx=CPU, dtype=dtype)


def mlp(hidden, dropout=0.0):
    """8 -> hidden (relu) [-> Dropout] -> 4, initialized on the CPU, hybridized."""
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(hidden, in_units=8, activation="relu"))
        if dropout:
            net.add(nn.Dropout(dropout))
        net.add(nn.Dense(4, in_units=hidden))
    net.initialize(mx.init.Xavier(), ctx=CPU)
    net.hybridize()
    return net


def ref(net, x):
    """numpy forward with the net's current parameters (Dense layers only)."""
    for layer in net:
        if not isinstance(layer, nn.Dense):
            continue
        w = layer.weight.data().asnumpy()
        b = layer.bias.data().asnumpy()
        x = x.astype(w.dtype) @ w.T + b
        if layer.act is not None:
            x = np.maximum(x, 0)
    return x
