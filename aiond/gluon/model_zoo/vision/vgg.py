"""VGG, implemented in Gluon (MXNet 1.9.1's ``model_zoo.vision.vgg``).

"Very Deep Convolutional Networks for Large-Scale Image Recognition"
(Simonyan and Zisserman, 2014).
"""
from __future__ import annotations

__all__ = ["VGG",
           "vgg11", "vgg13", "vgg16", "vgg19",
           "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn",
           "get_vgg"]

from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from .. import _load_pretrained


class VGG(HybridBlock):
    r"""VGG model.

    Parameters
    ----------
    layers : list of int
        Numbers of layers in each feature block.
    filters : list of int
        Numbers of filters in each feature block. List length should match the layers.
    classes : int, default 1000
        Number of classification classes.
    batch_norm : bool, default False
        Use batch normalization.
    """

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super(VGG, self).__init__(**kwargs)
        assert len(layers) == len(filters)
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            self.features.add(nn.Dense(4096, activation="relu",
                                       weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.features.add(nn.Dense(4096, activation="relu",
                                       weight_initializer="normal",
                                       bias_initializer="zeros"))
            self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes,
                                   weight_initializer="normal",
                                   bias_initializer="zeros")

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix="")
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type="gaussian",
                                                                   factor_type="out",
                                                                   magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        x = self.features(x)
        x = self.output(x)
        return x


# Specification
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


# Constructors
def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    r"""VGG with ``num_layers`` layers (11, 13, 16, 19); ``batch_norm=True``
    for the _bn variants. ``pretrained=True`` loads MXNet's weights from
    the local model-store cache only (see ``model_zoo.get_model_file``)."""
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        batch_norm_suffix = "_bn" if kwargs.get("batch_norm") else ""
        _load_pretrained(net, "vgg%d%s" % (num_layers, batch_norm_suffix), ctx, root)
    return net


def vgg11(**kwargs):
    r"""VGG-11."""
    return get_vgg(11, **kwargs)


def vgg13(**kwargs):
    r"""VGG-13."""
    return get_vgg(13, **kwargs)


def vgg16(**kwargs):
    r"""VGG-16."""
    return get_vgg(16, **kwargs)


def vgg19(**kwargs):
    r"""VGG-19."""
    return get_vgg(19, **kwargs)


def vgg11_bn(**kwargs):
    r"""VGG-11 with batch normalization."""
    kwargs["batch_norm"] = True
    return get_vgg(11, **kwargs)


def vgg13_bn(**kwargs):
    r"""VGG-13 with batch normalization."""
    kwargs["batch_norm"] = True
    return get_vgg(13, **kwargs)


def vgg16_bn(**kwargs):
    r"""VGG-16 with batch normalization."""
    kwargs["batch_norm"] = True
    return get_vgg(16, **kwargs)


def vgg19_bn(**kwargs):
    r"""VGG-19 with batch normalization."""
    kwargs["batch_norm"] = True
    return get_vgg(19, **kwargs)
