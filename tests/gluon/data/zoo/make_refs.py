"""Regenerate the MXNet 1.9.1 reference files in this folder (run with the
MXNet venv: .venvs/mxnet/bin/python tests/gluon/data/zoo/make_refs.py).

mxnet_zoo_names.json    per model of model_zoo.vision: [number of
                        parameters, sha1 of its "name shape grad_req" lines
                        (names without the net's prefix, shapes before
                        initialization, 0 = deferred)]
resnet18_v1.txt         those lines in full for resnet18_v1 and
mobilenet0.25.txt       mobilenet0.25
mini_resnet.params      save_parameters of small ResNetV1 / ResNetV2 nets
mini_resnet_v2.params   (thumbnail, random weights and BatchNorm statistics)
mini_resnet_io.nd       nd.save: input 'x', predict-mode outputs 'y_v1', 'y_v2'
lstm_bi.params          save_parameters of rnn.LSTM(2, bidirectional=True,
                        input_size=2) with random weights
lstm_bi_io.nd           nd.save: 'x' (T, N, C), 'h0', 'c0', outputs 'y',
                        'hn', 'cn'
"""
import hashlib
import json
import os

import mxnet as mx
import numpy as np
from mxnet import nd
from mxnet.gluon import rnn
from mxnet.gluon.model_zoo import vision

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = ["alexnet", "densenet121", "densenet161", "densenet169", "densenet201",
          "inceptionv3", "mobilenet0.25", "mobilenet0.5", "mobilenet0.75", "mobilenet1.0",
          "mobilenetv2_0.25", "mobilenetv2_0.5", "mobilenetv2_0.75", "mobilenetv2_1.0",
          "resnet101_v1", "resnet101_v2", "resnet152_v1", "resnet152_v2", "resnet18_v1",
          "resnet18_v2", "resnet34_v1", "resnet34_v2", "resnet50_v1", "resnet50_v2",
          "squeezenet1.0", "squeezenet1.1", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn",
          "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]


def param_lines(net):
    pre = net.prefix
    return ["%s %s %s" % (k[len(pre):], "x".join(str(d) for d in v.shape), v.grad_req)
            for k, v in net.collect_params().items()]


def randomize(net, rs):
    for k, p in net.collect_params().items():
        if k.endswith("running_var") or k.endswith("gamma"):
            v = rs.uniform(0.5, 1.5, p.shape)
        elif k.endswith("running_mean") or k.endswith("beta") or k.endswith("bias"):
            v = rs.uniform(-0.2, 0.2, p.shape)
        else:
            v = rs.uniform(-0.5, 0.5, p.shape)
        p.set_data(nd.array(v))


def main():
    table = {}
    for name in MODELS:
        lines = param_lines(vision.get_model(name))
        table[name] = [len(lines), hashlib.sha1("\n".join(lines).encode()).hexdigest()]
        if name in ("resnet18_v1", "mobilenet0.25"):
            with open(os.path.join(HERE, name + ".txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
    with open(os.path.join(HERE, "mxnet_zoo_names.json"), "w") as f:
        json.dump(table, f, indent=0, sort_keys=True)

    rs = np.random.RandomState(0)
    x = nd.array(rs.uniform(-1, 1, (2, 3, 8, 8)))
    io = {"x": x}
    for v, cls, block in ((1, vision.ResNetV1, vision.BasicBlockV1),
                          (2, vision.ResNetV2, vision.BottleneckV2)):
        channels = [4, 4, 8] if v == 1 else [4, 8, 16]
        net = cls(block, [1, 1], channels, classes=3, thumbnail=True)
        net.initialize(mx.init.Xavier())
        net(x)
        randomize(net, rs)
        io["y_v%d" % v] = net(x)
        net.save_parameters(os.path.join(HERE, "mini_resnet%s.params" % ("" if v == 1 else "_v2")))
    nd.save(os.path.join(HERE, "mini_resnet_io.nd"), io)

    lstm = rnn.LSTM(2, bidirectional=True, input_size=2)
    lstm.initialize()
    randomize(lstm, rs)
    x = nd.array(rs.uniform(-1, 1, (3, 2, 2)))
    h0 = nd.array(rs.uniform(-1, 1, (2, 2, 2)))
    c0 = nd.array(rs.uniform(-1, 1, (2, 2, 2)))
    y, (hn, cn) = lstm(x, [h0, c0])
    lstm.save_parameters(os.path.join(HERE, "lstm_bi.params"))
    nd.save(os.path.join(HERE, "lstm_bi_io.nd"), {"x": x, "h0": h0, "c0": c0, "y": y,
                                                  "hn": hn, "cn": cn})


if __name__ == "__main__":
    main()
