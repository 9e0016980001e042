"""Checkpoint helpers for ``mx.rnn`` cells (MXNet 1.9.1's
``mxnet.rnn.rnn``): fused cells keep their weights packed in one array,
so checkpoints are saved with the per-gate weights unpacked (readable by
unfused cells) and packed again on loading."""
from __future__ import annotations

import warnings

from .. import symbol
from ..model import load_checkpoint, save_checkpoint
from .rnn_cell import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix='', layout='NTC'):
    """Deprecated: ``cell.unroll``. Without ``inputs`` one input Variable
    per step is made, named ``'%st%d_data' % (input_prefix, step)``."""
    warnings.warn('rnn_unroll is deprecated. Please call cell.unroll directly.')
    if inputs is None:
        inputs = [symbol.Variable('%st%d_data' % (input_prefix, i)) for i in range(length)]
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else cells


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``mx.model.save_checkpoint`` with the weights of ``cells`` (a cell or
    a list) unpacked per gate."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``mx.model.load_checkpoint`` with the weights of ``cells`` packed
    again: ``(symbol, arg_params, aux_params)``."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An ``epoch_end_callback`` that saves an RNN checkpoint every
    ``period`` epochs (as epoch ``iter_no + 1``)."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
