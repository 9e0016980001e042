"""``mx.gluon.contrib.cnn``: deformable convolution blocks (MXNet 1.9.1)."""
from . import conv_layers  # noqa: F401
from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution  # noqa: F401

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]
