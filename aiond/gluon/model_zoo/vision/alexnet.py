"""AlexNet, implemented in Gluon (MXNet 1.9.1's ``model_zoo.vision.alexnet``).

"One weird trick for parallelizing convolutional neural networks"
(Krizhevsky, 2014).
"""
from __future__ import annotations

__all__ = ["AlexNet", "alexnet"]

from ....context import cpu
from ...block import HybridBlock
from ... import nn
from .. import _load_pretrained


class AlexNet(HybridBlock):
    r"""AlexNet model.

    Parameters
    ----------
    classes : int, default 1000
        Number of classes for the output layer.
    """

    def __init__(self, classes=1000, **kwargs):
        super(AlexNet, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, kernel_size=11, strides=4,
                                            padding=2, activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(192, kernel_size=5, padding=2,
                                            activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(384, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.Conv2D(256, kernel_size=3, padding=1,
                                            activation="relu"))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                self.features.add(nn.Dense(4096, activation="relu"))
                self.features.add(nn.Dropout(0.5))
                self.features.add(nn.Dense(4096, activation="relu"))
                self.features.add(nn.Dropout(0.5))

            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        x = self.features(x)
        x = self.output(x)
        return x


# Constructor
def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    r"""AlexNet. ``pretrained=True`` loads MXNet's weights from the local
    model-store cache only (see ``model_zoo.get_model_file``)."""
    net = AlexNet(**kwargs)
    if pretrained:
        _load_pretrained(net, "alexnet", ctx, root)
    return net
