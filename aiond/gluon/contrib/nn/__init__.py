"""Contributed neural network layers (``mx.gluon.contrib.nn``)."""
from . import basic_layers  # noqa: F401
from .basic_layers import *  # noqa: F401,F403

__all__ = basic_layers.__all__
