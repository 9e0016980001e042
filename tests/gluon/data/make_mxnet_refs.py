"""Regenerate the MXNet 1.9.1 reference files in this folder (run with the
MXNet venv: .venvs/mxnet/bin/python tests/gluon/data/make_mxnet_refs.py).

mx_dense_bn.params          save_parameters of a Dense/BatchNorm/Dense net
mx_dense_bn-symbol.json     export() of the same net (hybridized)
mx_dense_bn-0000.params
mx_dense_bn_io.nd           nd.save: input 'x', predict-mode output 'y',
                            train-mode output 'y_train'
"""
import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd

HERE = os.path.dirname(os.path.abspath(__file__))


def build():
    net = gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(gluon.nn.Dense(6, activation="tanh"))
        net.add(gluon.nn.BatchNorm())
        net.add(gluon.nn.Dense(3))
    return net


def main():
    mx.random.seed(7)
    np.random.seed(7)
    net = build()
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(0).randn(4, 5).astype(np.float32))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(3):      # move the BatchNorm running statistics
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(4)
    net.save_parameters(os.path.join(HERE, "mx_dense_bn.params"))
    y = net(x)
    with autograd.record():
        y_train = net(x)
    net.hybridize()
    net(x)
    net.export(os.path.join(HERE, "mx_dense_bn"))
    nd.save(os.path.join(HERE, "mx_dense_bn_io.nd"), {"x": x, "y": y, "y_train": y_train})


if __name__ == "__main__":
    main()
