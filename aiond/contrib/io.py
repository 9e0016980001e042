"""Contrib data iterators (``mx.contrib.io``): ``DataLoaderIter`` runs a Gluon
DataLoader as a DataIter, so Module code can train from it."""
from __future__ import annotations

from ..io import DataIter, DataDesc
from .. import ndarray as nd

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """A DataIter over a ``gluon.data.DataLoader`` of (data, label) batches.

    Parameters
    ----------
    loader : mxnet.gluon.data.DataLoader
        Gluon dataloader instance
    data_name : str, optional
        The data name.
    label_name : str, optional
        The label name.
    dtype : str, optional
        The dtype the batches are cast to (float32 or float16).

    A last batch smaller than the first is padded up to the batch size
    (``getpad`` says by how much), with unspecified values in the padding.
    """

    def __init__(self, loader, data_name='data', label_name='softmax_label', dtype='float32'):
        super(DataLoaderIter, self).__init__()
        self._loader = loader
        self._iter = iter(self._loader)
        try:
            data, label = next(self._iter)
        except StopIteration:
            raise ValueError("DataLoaderIter: the DataLoader yields no batch") from None
        except (TypeError, ValueError):
            raise ValueError("DataLoaderIter: the DataLoader's batches must be (data, label) "
                             "pairs") from None
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current_batch = next(self._iter)
        except StopIteration:
            self._current_batch = None
        return self._current_batch is not None

    def _padded(self, arr):
        if self.getpad():
            ret = nd.empty(shape=[self.batch_size] + list(arr.shape[1:]), dtype=self.dtype)
            ret[:arr.shape[0]] = arr.astype(self.dtype)
            return [ret]
        return [arr.astype(self.dtype)]

    def getdata(self):
        return self._padded(self._current_batch[0])

    def getlabel(self):
        return self._padded(self._current_batch[1])

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
