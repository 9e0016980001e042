"""MXNet's C++ file iterators, written in Python as ``MXDataIter`` sources:
``CSVIter`` (dense rows of CSV files) and ``LibSVMIter`` (sparse rows of
LibSVM files, batches as CSRNDArrays).

Both batch rows as MXNet's batch loaders do: with ``round_batch=True`` an
incomplete last batch is filled from the start of the file and the next
epoch goes on from there (it does not restart at row 0), with
``round_batch=False`` the last batch keeps the previous batch's rows in its
padded slots; ``pad`` counts the filled slots.
"""
from __future__ import annotations

import numpy as np

from ..base import MXNetError
from ..ndarray import array
from .mxdataiter import MXDataIter

__all__ = ["CSVIter", "LibSVMIter"]


class _RowBatcher(object):
    """Which rows make each batch (MXNet's BatchLoader cursor arithmetic)."""

    def __init__(self, num_rows, batch_size, round_batch, what):
        if batch_size < 1:
            raise MXNetError("%s: batch_size must be >= 1, got %d" % (what, batch_size))
        self.n, self.bs, self.round_batch, self.what = num_rows, batch_size, round_batch, what
        self.rows = np.zeros(batch_size, dtype=np.int64)
        self.pos = 0
        self.num_overflow = 0
        self.pad = 0

    def before_first(self):
        if not self.round_batch or self.num_overflow == 0:
            self.pos = 0
        else:
            self.num_overflow = 0

    def next(self):
        self.pad = 0
        if self.num_overflow != 0:
            return False
        top = 0
        while self.pos < self.n and top < self.bs:
            self.rows[top] = self.pos
            self.pos += 1
            top += 1
        if top == self.bs:
            return True
        if top == 0:
            return False
        if self.round_batch:
            self.pos = 0
            while top < self.bs:
                if self.pos >= self.n:
                    raise MXNetError("%s: number of input must be bigger than batch size"
                                     % self.what)
                self.rows[top] = self.pos
                self.pos += 1
                top += 1
                self.num_overflow += 1
            self.pad = self.num_overflow
        else:
            self.pad = self.bs - top
        return True


# ------------------------------------------------------------------- CSV


class _CSVSource(object):
    def __init__(self, data_csv, data_shape, label_csv, label_shape, batch_size, round_batch,
                 dtype):
        data_shape = tuple(int(x) for x in data_shape)
        label_shape = tuple(int(x) for x in label_shape)
        self.dtype = np.dtype(dtype)
        try:
            data = np.loadtxt(data_csv, delimiter=',', dtype=self.dtype, ndmin=2)
            data = data.reshape((data.shape[0],) + data_shape)
            if label_csv is not None:
                label = np.loadtxt(label_csv, delimiter=',', dtype=self.dtype, ndmin=2)
                label = label.reshape((label.shape[0],) + label_shape)
            else:
                label = np.zeros((data.shape[0],) + label_shape, dtype=self.dtype)
        except (OSError, ValueError) as e:
            raise MXNetError("CSVIter: cannot read %s: %s" % (data_csv, e)) from e
        if label.shape[0] != data.shape[0]:
            raise MXNetError("CSVIter: %d data rows but %d label rows"
                             % (data.shape[0], label.shape[0]))
        if label_shape == (1,):
            label = label.reshape((label.shape[0],))
        self.rows, self.labels = data, label
        self.batcher = _RowBatcher(data.shape[0], int(batch_size), bool(round_batch), "CSVIter")

    def before_first(self):
        self.batcher.before_first()

    def next(self):
        return self.batcher.next()

    def data(self):
        return array(self.rows[self.batcher.rows], dtype=self.dtype)

    def label(self):
        return array(self.labels[self.batcher.rows], dtype=self.dtype)

    def index(self):
        return self.batcher.rows.astype(np.uint64)

    def pad(self):
        return self.batcher.pad


class CSVIter(MXDataIter):
    """Batches from CSV files (MXNet's C++ ``CSVIter``; see the module docstring).

    Rows of ``data_csv`` (and ``label_csv``) are reshaped to ``data_shape``
    (``label_shape``); without ``label_csv`` labels are zeros.
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,),
                 batch_size=1, round_batch=True, dtype='float32',
                 data_name='data', label_name='softmax_label', **kwargs):
        _check_kwargs("CSVIter", kwargs)
        source = _CSVSource(data_csv, data_shape, label_csv, label_shape, batch_size,
                            round_batch, dtype)
        self.round_batch = bool(round_batch)
        self.data_name, self.label_name = data_name, label_name
        super(CSVIter, self).__init__(source, data_name, label_name)


def _check_kwargs(what, kwargs):
    # knobs of MXNet's C++ iterators with no aiond counterpart (threads, buffers)
    for k in kwargs:
        if k not in ("prefetch_buffer", "ctx", "num_parts", "part_index", "shuffle",
                     "preprocess_threads", "verbose"):
            raise MXNetError("%s: unknown argument %r" % (what, k))


# ---------------------------------------------------------------- LibSVM


def _read_libsvm(path, width, what):
    """(leading values, indptr, indices, values) of a LibSVM file."""
    heads, indptr, indices, values = [], [0], [], []
    try:
        f = open(path)
    except OSError as e:
        raise MXNetError("LibSVMIter: cannot read %s: %s" % (path, e)) from e
    with f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                heads.append(float(parts[0]))
                for tok in parts[1:]:
                    k, v = tok.split(":", 1)
                    k = int(k)
                    if k < 0:
                        raise MXNetError("LibSVMIter: %s line %d: negative index %d in %s"
                                         % (path, lineno, k, what))
                    if width is not None and k >= width:
                        raise MXNetError("LibSVMIter: %s line %d: index %d is out of the "
                                         "shape's %d columns" % (path, lineno, k, width))
                    indices.append(k)
                    values.append(float(v))
            except ValueError:
                raise MXNetError("LibSVMIter: %s line %d is not in LibSVM format "
                                 "(label idx:value ...): %r" % (path, lineno, line)) from None
            indptr.append(len(indices))
    return (np.array(heads, dtype=np.float32), np.array(indptr, dtype=np.int64),
            np.array(indices, dtype=np.int64), np.array(values, dtype=np.float32))


class _LibSVMSource(object):
    def __init__(self, data_libsvm, data_shape, label_libsvm, label_shape, batch_size,
                 round_batch):
        self.width = int(tuple(data_shape)[0])
        self.label_shape = tuple(int(x) for x in label_shape)
        heads, *self.csr = _read_libsvm(data_libsvm, self.width, "data")
        self.heads = heads
        self.label_csr = None
        if label_libsvm is not None:
            _, *self.label_csr = _read_libsvm(label_libsvm, self.label_shape[0], "label")
            if len(self.label_csr[0]) != len(self.csr[0]):
                raise MXNetError("LibSVMIter: %d data rows but %d label rows"
                                 % (len(self.csr[0]) - 1, len(self.label_csr[0]) - 1))
        self.batcher = _RowBatcher(len(heads), int(batch_size), bool(round_batch),
                                   "LibSVMIter")

    @staticmethod
    def _rows(csr, rows, width):
        from ..ndarray import sparse
        indptr, indices, values = csr
        starts, ends = indptr[rows], indptr[rows + 1]
        take = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) \
            if len(rows) else np.zeros(0, np.int64)
        take = take.astype(np.int64)
        new_ptr = np.concatenate([[0], np.cumsum(ends - starts)])
        return sparse.csr_matrix((values[take], indices[take], new_ptr),
                                 shape=(len(rows), width), dtype=np.float32)

    def before_first(self):
        self.batcher.before_first()

    def next(self):
        return self.batcher.next()

    def data(self):
        return self._rows(self.csr, self.batcher.rows, self.width)

    def label(self):
        if self.label_csr is not None:
            return self._rows(self.label_csr, self.batcher.rows, self.label_shape[0])
        return array(self.heads[self.batcher.rows], dtype=np.float32)

    def index(self):
        return self.batcher.rows.astype(np.uint64)

    def pad(self):
        return self.batcher.pad


class LibSVMIter(MXDataIter):
    """Batches of LibSVM files (MXNet's C++ ``LibSVMIter``): each line is
    ``label index:value ...`` with zero-based indices; the data come as
    CSRNDArrays of ``(batch_size,) + data_shape``. Labels are the lines'
    leading values, or with ``label_libsvm`` that file's rows as CSRNDArrays
    of ``label_shape``."""

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, data_name='data',
                 label_name='softmax_label', **kwargs):
        _check_kwargs("LibSVMIter", kwargs)
        if len(tuple(data_shape)) != 1:
            raise MXNetError("LibSVMIter: data_shape must have one dimension (the number of "
                             "features), got %s" % (tuple(data_shape),))
        source = _LibSVMSource(data_libsvm, data_shape, label_libsvm, label_shape,
                               batch_size, round_batch)
        super(LibSVMIter, self).__init__(source, data_name, label_name)
