"""``mx.gluon.model_zoo.model_store``: MXNet's local store of pretrained
model files (``<root>/<name>-<sha1[:8]>.params``, root by default
``$MXNET_HOME/models``) and its SHA-1 table ``_model_sha1``.

``get_model_file`` is the model zoo's (aiond reads the store's files but
does not download them: see ``aiond.gluon.model_zoo``); ``purge`` deletes
the stored ``.params`` files."""
from __future__ import annotations

import os

from . import _model_sha1, get_model_file  # noqa: F401
from . import _default_root

__all__ = ["get_model_file", "purge", "short_hash"]


def short_hash(name):
    """The first 8 hex digits of the SHA-1 of pretrained model ``name``."""
    if name not in _model_sha1:
        raise ValueError('Pretrained model for {name} is not available.'.format(name=name))
    return _model_sha1[name][:8]


def purge(root=None):
    """Delete every ``.params`` file in the model store ``root`` (default
    ``$MXNET_HOME/models``); a missing ``root`` is an error, as in MXNet."""
    root = os.path.expanduser(root if root is not None else _default_root())
    for f in os.listdir(root):
        if f.endswith(".params"):
            os.remove(os.path.join(root, f))
