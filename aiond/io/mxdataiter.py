"""``mx.io.MXDataIter``: in MXNet the Python wrapper of the iterators written
in C++ (CSVIter, LibSVMIter, MNISTIter, ImageRecordIter...), driving them
through a C handle. aiond writes those iterators in Python; each is a
*source* object with the C iterator's calls, and ``MXDataIter`` wraps a
source exactly as MXNet wraps a handle:

    source.before_first()     rewind (MXDataIterBeforeFirst)
    source.next() -> bool     load the next batch (MXDataIterNext)
    source.data(), .label()   the loaded batch's arrays (MXDataIterGetData/Label)
    source.index()            its example indices (uint64 array) or None
    source.pad()              how many examples of the batch are padding

As in MXNet the first batch is loaded on construction (it gives
``provide_data``/``provide_label``) and returned by the first ``next()``;
``getdata()``/``getlabel()`` return one NDArray each.
"""
from __future__ import annotations

import logging

from .io import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter"]


class MXDataIter(DataIter):
    """A DataIter over an iterator source (see the module docstring).

    Parameters
    ----------
    handle : source object
        The underlying iterator (MXNet: a C data iterator handle).
    data_name : str, optional
        Data name. Default to "data".
    label_name : str, optional
        Label name. Default to "softmax_label".
    """

    def __init__(self, handle, data_name='data', label_name='softmax_label', **_):
        super(MXDataIter, self).__init__()
        for call in ("before_first", "next", "data", "label", "index", "pad"):
            if not callable(getattr(handle, call, None)):
                raise TypeError("MXDataIter: handle must be an iterator source with a %s() "
                                "method (see aiond.io.mxdataiter), got %s"
                                % (call, type(handle).__name__))
        self.handle = handle
        # debug option, used to test the speed with io effect eliminated
        self._debug_skip_load = False
        self._debug_at_begin = True
        self.first_batch = None
        self.first_batch = self.next()
        data = self.first_batch.data[0]
        label = self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)]
        self.batch_size = data.shape[0]

    def debug_skip_load(self):
        """From now on return the current batch again and again (to time a
        network without the loading cost)."""
        self._debug_skip_load = True
        logging.info('Set debug_skip_load to be true, will simply return first batch')

    def reset(self):
        self._debug_at_begin = True
        self.first_batch = None
        self.handle.before_first()

    def _batch(self):
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def next(self):
        if self._debug_skip_load and not self._debug_at_begin:
            return self._batch()
        if self.first_batch is not None:
            batch = self.first_batch
            self.first_batch = None
            return batch
        self._debug_at_begin = False
        if self.handle.next():
            return self._batch()
        raise StopIteration

    def iter_next(self):
        if self.first_batch is not None:
            return True
        return bool(self.handle.next())

    def getdata(self):
        return self.handle.data()

    def getlabel(self):
        return self.handle.label()

    def getindex(self):
        return self.handle.index()

    def getpad(self):
        return int(self.handle.pad())
