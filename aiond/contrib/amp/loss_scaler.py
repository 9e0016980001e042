"""AMP's dynamic loss scaler (``mx.contrib.amp.loss_scaler``): the loss is
multiplied by a large scale before backward so small float16 gradients do
not flush to zero; a step whose gradients overflowed is skipped and the
scale halved, and after 2000 clean steps the scale doubles (up to 2**24)."""
from __future__ import annotations

import logging

from ...ndarray import multi_all_finite
from ...ndarray import ndarray as nd
from ... import autograd as ag

__all__ = ["LossScaler"]

_CHUNK = 200    # arrays per multi_all_finite call


class LossScaler(object):
    """Dynamic loss scaler for AMP.

    Properties
    ----------
    loss_scale : float
        The current loss scale
    """

    def __init__(self):
        self._loss_scale = 2.**16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.**24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """True when a gradient of ``params`` (Parameters) holds inf or nan;
        moves the scale for the next step as described above."""
        with ag.pause():
            grads = [p._grad[0] for p in params if p._grad is not None]
            if not grads:
                raise ValueError("has_overflow: none of the parameters has a gradient "
                                 "(all have grad_req='null')")
            flag = nd.ones((1,), ctx=grads[0].context)
            for i in range(0, len(grads), _CHUNK):
                chunk = grads[i:i + _CHUNK]
                multi_all_finite(*chunk, num_arrays=len(chunk), init_output=False, out=flag)
        overflow = not bool(flag.asnumpy()[0])
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
