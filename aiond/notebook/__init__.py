"""``mx.notebook``: live training charts and pandas logs for Jupyter
notebooks (MXNet 1.9.1's ``mxnet.notebook``), built on bokeh and pandas.

Neither is a dependency of aiond: they are imported when a chart or logger
is created, and a missing one raises an ImportError naming the package.
``Bokeh_Failed_To_Import`` is MXNet's marker class, the value of
``mx.notebook.bokeh`` when bokeh cannot be imported."""
from __future__ import annotations

import importlib as _importlib


class Bokeh_Failed_To_Import:  # noqa: N801  (MXNet's name)
    """Stands for the ``bokeh`` module when it is not installed."""


def __getattr__(name):
    if name == "bokeh":
        try:
            return _importlib.import_module("bokeh")
        except ImportError:
            return Bokeh_Failed_To_Import
    if name == "callback":
        return _importlib.import_module(__name__ + ".callback")
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
