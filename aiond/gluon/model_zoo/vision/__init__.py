"""Model definitions for vision (MXNet 1.9.1's ``gluon.model_zoo.vision``):
ResNet V1/V2, MobileNet V1/V2, VGG, AlexNet, SqueezeNet, DenseNet and
Inception V3, with MXNet's parameter names, so that parameters saved by
MXNet (``save_parameters``) load with ``net.load_parameters``.

>>> net = get_model('resnet18_v1', classes=10)
>>> net.initialize()
>>> net(mx.nd.zeros((1, 3, 32, 32))).shape
(1, 10)

aiond cannot download pretrained weights: ``pretrained=True`` reads MXNet's
local model-store cache only (``~/.mxnet/models/<name>-<hash>.params``) and
raises otherwise; build the net and call ``net.load_parameters(path)``.
"""
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403

_models = {"resnet18_v1": resnet18_v1,  # noqa: F405
           "resnet34_v1": resnet34_v1,
           "resnet50_v1": resnet50_v1,
           "resnet101_v1": resnet101_v1,
           "resnet152_v1": resnet152_v1,
           "resnet18_v2": resnet18_v2,
           "resnet34_v2": resnet34_v2,
           "resnet50_v2": resnet50_v2,
           "resnet101_v2": resnet101_v2,
           "resnet152_v2": resnet152_v2,
           "vgg11": vgg11,
           "vgg13": vgg13,
           "vgg16": vgg16,
           "vgg19": vgg19,
           "vgg11_bn": vgg11_bn,
           "vgg13_bn": vgg13_bn,
           "vgg16_bn": vgg16_bn,
           "vgg19_bn": vgg19_bn,
           "alexnet": alexnet,
           "densenet121": densenet121,
           "densenet161": densenet161,
           "densenet169": densenet169,
           "densenet201": densenet201,
           "squeezenet1.0": squeezenet1_0,
           "squeezenet1.1": squeezenet1_1,
           "inceptionv3": inception_v3,
           "mobilenet1.0": mobilenet1_0,
           "mobilenet0.75": mobilenet0_75,
           "mobilenet0.5": mobilenet0_5,
           "mobilenet0.25": mobilenet0_25,
           "mobilenetv2_1.0": mobilenet_v2_1_0,
           "mobilenetv2_0.75": mobilenet_v2_0_75,
           "mobilenetv2_0.5": mobilenet_v2_0_5,
           "mobilenetv2_0.25": mobilenet_v2_0_25}


def get_model(name, **kwargs):
    """Returns a pre-defined model by name

    Parameters
    ----------
    name : str
        Name of the model (e.g. 'resnet18_v1', 'mobilenet0.25', 'vgg16_bn').
    pretrained : bool
        Whether to load MXNet's pretrained weights (from the local
        model-store cache only: aiond cannot download them).
    classes : int
        Number of classes for the output layer.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Location for keeping the model parameters.

    Returns
    -------
    HybridBlock
        The model.
    """
    name = name.lower()
    if name not in _models:
        raise ValueError(
            "Model %s is not supported. Available options are\n\t%s" % (
                name, "\n\t".join(sorted(_models.keys()))))
    return _models[name](**kwargs)
