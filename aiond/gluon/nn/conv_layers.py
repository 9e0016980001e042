"""Convolution, pooling and padding layers (``gluon.nn.conv_layers``); to be
filled in by the engineer who owns them."""

__all__ = []
