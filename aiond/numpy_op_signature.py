"""``mxnet.numpy_op_signature``: the ``mx.np``/``mx.npx`` function behind a
backend op name (``_np_sum`` -> ``mx.np.sum``, ``_npx_random_bernoulli`` ->
``mx.npx.random.bernoulli``). In MXNet this also copied NumPy-style
signatures onto ops defined in C++; aiond's functions are Python functions
with their real signatures already."""
from __future__ import annotations

from . import numpy as mx_np
from . import numpy_extension as mx_npx

__all__ = ["mx_np", "mx_npx"]

# MXNet's base._NP_OP_SUBMODULE_LIST / _NP_EXT_OP_SUBMODULE_LIST
_NP_OP_SUBMODULE_LIST = ["_random_", "_linalg_"]
_NP_EXT_OP_SUBMODULE_LIST = ["_image_", "_random_"]


def _get_op_submodule_name(op_name, op_name_prefix, submodule_name_list):
    rest = op_name[len(op_name_prefix):]
    for name in submodule_name_list:
        if rest.startswith(name):
            return name
    return ""


def _get_builtin_op(op_name):
    """The function of ``mx.np``/``mx.npx`` (or a submodule) that backend op
    ``op_name`` implements; None for names outside ``_np_``/``_npx_``."""
    if op_name.startswith("_np_"):
        root_module, prefix, subs = mx_np, "_np_", _NP_OP_SUBMODULE_LIST
    elif op_name.startswith("_npx_"):
        root_module, prefix, subs = mx_npx, "_npx_", _NP_EXT_OP_SUBMODULE_LIST
    else:
        return None
    submodule_name = _get_op_submodule_name(op_name, prefix, subs)
    op_module = root_module
    if submodule_name:
        op_module = getattr(root_module, submodule_name[1:-1], None)
        if op_module is None:
            raise ValueError("Cannot find submodule {} in module {}"
                             .format(submodule_name[1:-1], root_module.__name__))
    op = getattr(op_module, op_name[len(prefix) + len(submodule_name):], None)
    if op is None:
        raise ValueError("Cannot find operator {} in module {}"
                         .format(op_name[len(prefix):], root_module.__name__))
    return op
