"""MXNet's checkpoint files: ``prefix-symbol.json`` and
``prefix-%04d.params`` (``arg:<name>``/``aux:<name>`` arrays), as
``mx.model.save_checkpoint``/``load_checkpoint`` and
``mx.callback.do_checkpoint`` write and read them."""
from __future__ import annotations

import logging

from . import ndarray as nd
from .base import MXNetError
from .context import cpu

__all__ = ["save_checkpoint", "load_params", "load_checkpoint", "split_params"]


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and
    ``prefix-%04d.params`` holding ``arg:<name>`` and ``aux:<name>`` arrays."""
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    save_dict = {('arg:%s' % k): v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({('aux:%s' % k): v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def split_params(save_dict, fname, strict):
    """``(arg_params, aux_params)`` from the arrays of a parameter file. Names
    without a ``type:`` prefix are an error; other prefixes than arg/aux are
    skipped, or an error when ``strict`` (Module.load_params), as in MXNet."""
    arg_params, aux_params = {}, {}
    if isinstance(save_dict, list):
        if save_dict:
            raise ValueError("Invalid param file %s: it holds %d unnamed arrays, but a "
                             "parameter file names each array arg:<name> or aux:<name>"
                             % (fname, len(save_dict)))
        return arg_params, aux_params
    for k, v in save_dict.items():
        tp, sep, name = k.partition(":")
        if not sep or (strict and tp not in ("arg", "aux")):
            raise ValueError("Invalid param file %s: array %r is named neither arg:<name> nor "
                             "aux:<name>" % (fname, k))
        if v is None and tp in ("arg", "aux"):
            raise MXNetError("Invalid param file %s: array %r is stored as 'none', not a value"
                             % (fname, k))
        if tp == "arg":
            arg_params[name] = v
        elif tp == "aux":
            aux_params[name] = v
    return arg_params, aux_params


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    fname = "%s-%04d.params" % (prefix, epoch)
    save_dict = nd.load(fname)
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return {}, {}
    return split_params(save_dict, fname, strict=False)


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and
    ``prefix-%04d.params``."""
    from . import symbol as sym
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
