"""Every mx.gluon.model_zoo.vision model exports (HybridBlock.export, then
mx.onnx.export_model on the files, MXNet's way), passes the ONNX checker and
gives aiond's outputs in onnxruntime, with a dynamic batch axis; the file
imported back (mx.contrib.onnx.import_to_gluon) gives them too."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
rt = pytest.importorskip("onnxruntime")

import aiond as mx  # noqa: E402
from aiond.gluon.model_zoo import vision  # noqa: E402

# (model, input size): the smallest size each architecture accepts
SMALL = [("resnet18_v1", 32), ("resnet18_v2", 32), ("resnet50_v1", 32), ("resnet50_v2", 32),
         ("mobilenet0.25", 32), ("mobilenetv2_0.25", 32), ("vgg11", 32), ("vgg11_bn", 32)]
BIG = [("resnet34_v1", 32), ("resnet34_v2", 32), ("resnet101_v1", 32), ("resnet101_v2", 32),
       ("resnet152_v1", 32), ("resnet152_v2", 32), ("vgg13", 32), ("vgg16", 32), ("vgg19", 32),
       ("vgg13_bn", 32), ("vgg16_bn", 32), ("vgg19_bn", 32), ("alexnet", 224),
       ("densenet121", 224), ("densenet161", 224), ("densenet169", 224), ("densenet201", 224),
       ("squeezenet1.0", 224), ("squeezenet1.1", 224), ("inceptionv3", 299),
       ("mobilenet1.0", 224), ("mobilenet0.75", 64), ("mobilenet0.5", 64),
       ("mobilenetv2_1.0", 224), ("mobilenetv2_0.75", 64), ("mobilenetv2_0.5", 64)]


def _roundtrip(tmp_path, name, size):
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier(magnitude=2.0))
    net.hybridize()
    data = mx.nd.random.uniform(-1, 1, shape=(2, 3, size, size))
    want = net(data).asnumpy()
    prefix = str(tmp_path / "net")
    net.export(prefix)
    path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                [data.shape], np.float32, str(tmp_path / "net.onnx"),
                                dynamic=True, dynamic_input_shapes=[(None, 3, size, size)])
    onnx.checker.check_model(onnx.load(path), full_check=True)
    sess = rt.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = sess.get_inputs()[0].name
    got = sess.run(None, {feed: data.asnumpy()})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    one = data[:1]
    got1 = sess.run(None, {feed: one.asnumpy()})[0]
    np.testing.assert_allclose(got1, net(one).asnumpy(), rtol=1e-4, atol=1e-4)
    back = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    np.testing.assert_allclose(back(data).asnumpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name,size", SMALL)
def test_model_zoo_export(tmp_path, name, size):
    _roundtrip(tmp_path, name, size)


@pytest.mark.slow
@pytest.mark.parametrize("name,size", BIG)
def test_model_zoo_export_big(tmp_path, name, size):
    _roundtrip(tmp_path, name, size)
