"""gluon.model_zoo.vision: names, parameter names/shapes against MXNet
1.9.1's (recorded in data/zoo by make_refs.py), forward shapes on tiny
inputs, MXNet-saved parameters, pretrained=True without a download."""
import hashlib
import json
import os

import numpy as np
import pytest

import aiond as mx
from aiond import gluon, nd
from aiond.base import MXNetError
from aiond.gluon import model_zoo
from aiond.gluon.model_zoo import vision

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "zoo")


def _lines(net):
    pre = net.prefix
    return ["%s %s %s" % (k[len(pre):], "x".join(str(d) for d in v.shape), v.grad_req)
            for k, v in net.collect_params().items()]


def test_get_model_names():
    with open(os.path.join(ZOO, "mxnet_zoo_names.json")) as f:
        table = json.load(f)
    assert sorted(vision._models) == sorted(table)
    with pytest.raises(ValueError, match="resnet18_v1"):
        vision.get_model("resnet19_v1")
    assert isinstance(vision.get_model("ResNet18_V1"), vision.ResNetV1)
    assert mx.gluon.model_zoo.vision.get_model is vision.get_model


def test_param_names_match_mxnet():
    """Every model's parameter names, shapes (before initialization) and
    grad_req equal MXNet 1.9.1's (each model built once, not initialized)."""
    with open(os.path.join(ZOO, "mxnet_zoo_names.json")) as f:
        table = json.load(f)
    for name, (count, sha1) in sorted(table.items()):
        lines = _lines(vision.get_model(name))
        if name in ("resnet18_v1", "mobilenet0.25"):
            with open(os.path.join(ZOO, name + ".txt")) as f:
                assert lines == f.read().split("\n")[:-1], name
        assert len(lines) == count, name
        assert hashlib.sha1("\n".join(lines).encode()).hexdigest() == sha1, name


@pytest.mark.parametrize("name", ["resnet18_v1", "resnet18_v2", "mobilenet0.25",
                                  "mobilenetv2_0.25"])
def test_forward_tiny_input(name):
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(0).uniform(-1, 1, (1, 3, 32, 32)))
    y = net(x)
    assert y.shape == (1, 10)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-4, atol=1e-5)


def test_thumbnail_and_bottleneck_shapes():
    net = vision.get_resnet(1, 50, classes=4, thumbnail=True)
    net.initialize()
    assert net(nd.ones((2, 3, 8, 8))).shape == (2, 4)
    assert net.features[1][0].downsample is not None        # stage1 changes 64 -> 256
    v2 = vision.ResNetV2(vision.BottleneckV2, [1, 1], [4, 8, 16], classes=3, thumbnail=True)
    v2.initialize()
    assert v2(nd.ones((1, 3, 8, 8))).shape == (1, 3)


@pytest.mark.parametrize("version", [1, 2])
def test_mxnet_saved_params_give_mxnet_outputs(version):
    """Small ResNets saved by MXNet's save_parameters (random weights and
    BatchNorm statistics): same predict-mode outputs to 1e-5."""
    io = nd.load(os.path.join(ZOO, "mini_resnet_io.nd"))
    if version == 1:
        net = vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8], classes=3, thumbnail=True)
        f = "mini_resnet.params"
    else:
        net = vision.ResNetV2(vision.BottleneckV2, [1, 1], [4, 8, 16], classes=3, thumbnail=True)
        f = "mini_resnet_v2.params"
    net.load_parameters(os.path.join(ZOO, f))
    want = io["y_v%d" % version].asnumpy()
    np.testing.assert_allclose(net(io["x"]).asnumpy(), want, rtol=1e-5, atol=1e-5)
    net.hybridize()
    np.testing.assert_allclose(net(io["x"]).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_pretrained_without_download(tmp_path):
    root = str(tmp_path)
    with pytest.raises(MXNetError, match=r"cannot download.*load_parameters"):
        vision.resnet18_v1(pretrained=True, root=root)
    with pytest.raises(MXNetError, match="cannot download"):
        vision.get_model("mobilenet0.25", pretrained=True, root=root)
    bad = tmp_path / "alexnet-44335d1f.params"
    bad.write_bytes(b"not the model store's file")
    with pytest.raises(MXNetError, match="SHA-1"):
        model_zoo.get_model_file("alexnet", root=root)
    with pytest.raises(ValueError, match="not available"):
        model_zoo.get_model_file("resnet19_v1", root=root)


def test_pretrained_loads_from_local_cache(tmp_path, monkeypatch):
    """pretrained=True reads MXNet's model-store cache file when present."""
    net = vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8], classes=3, thumbnail=True)
    net.load_parameters(os.path.join(ZOO, "mini_resnet.params"))
    data = open(os.path.join(ZOO, "mini_resnet.params"), "rb").read()
    sha1 = hashlib.sha1(data).hexdigest()
    monkeypatch.setitem(model_zoo._model_sha1, "resnet18_v1", sha1)
    (tmp_path / ("resnet18_v1-%s.params" % sha1[:8])).write_bytes(data)
    assert model_zoo.get_model_file("resnet18_v1", root=str(tmp_path)).endswith(".params")
    other = vision.ResNetV1(vision.BasicBlockV1, [1, 1], [4, 4, 8], classes=3, thumbnail=True)
    model_zoo._load_pretrained(other, "resnet18_v1", mx.cpu(), str(tmp_path))
    x = nd.ones((1, 3, 8, 8))
    np.testing.assert_allclose(other(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)


def test_save_load_roundtrip(tmp_path):
    net = vision.mobilenet_v2_0_25(classes=5)
    net.initialize(mx.init.Xavier())
    x = nd.array(np.random.RandomState(1).randn(1, 3, 32, 32))
    y = net(x).asnumpy()
    f = str(tmp_path / "m.params")
    net.save_parameters(f)
    assert "features.0.weight" in nd.load(f)
    other = vision.get_model("mobilenetv2_0.25", classes=5)
    other.load_parameters(f)
    np.testing.assert_allclose(other(x).asnumpy(), y, rtol=1e-6)
    assert isinstance(other, gluon.HybridBlock)
