"""Data iterators (MXNet 1.9.1 ``mxnet.io``): DataDesc, DataBatch, DataIter,
NDArrayIter, ResizeIter, PrefetchingIter; MXDataIter and the file iterators
MXNet writes in C++ (``native.py``).

``NDArrayIter`` keeps MXNet's exact cursor arithmetic, so padding, discarding
and rolling over of the last batch, the ``pad`` values, and shuffling with
numpy's global RNG (``np.random.shuffle`` on the index, once at construction
and again at every ``reset``) give the same batches as MXNet.
"""
from __future__ import annotations

import threading
import weakref
from collections import namedtuple

import numpy as np

from ..ndarray import array
from ..ndarray.sparse import CSRNDArray
from .utils import _getdata_by_idx, _has_instance, _init_data, _slice_along_batch_axis

__all__ = ["DataDesc", "DataBatch", "DataIter", "ResizeIter", "PrefetchingIter",
           "NDArrayIter", "CSVIter", "LibSVMIter", "MXDataIter"]

_mx_real_t = np.float32


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """Name and shape of an input, with ``dtype`` and ``layout`` attributes.

    Still a 2-tuple ``(name, shape)``, so it compares and unpacks as one.
    """

    def __new__(cls, name, shape, dtype=_mx_real_t, layout='NCHW'):
        ret = super(DataDesc, cls).__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """The axis of ``layout`` that holds the batch (``'N'``); 0 for None, -1 if absent."""
        if layout is None:
            return 0
        return layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch(object):
    """One batch: lists of data and label NDArrays, plus ``pad`` (the number of
    trailing examples that are filler), ``index``, ``bucket_key`` and
    optional ``provide_data``/``provide_label``."""

    def __init__(self, data, label=None, pad=None, index=None,
                 bucket_key=None, provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), "Data must be list of NDArrays"
        if label is not None:
            assert isinstance(label, (list, tuple)), "Label must be list of NDArrays"
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        if self.label:
            label_shapes = [l.shape for l in self.label]
        else:
            label_shapes = None
        return "{}: data shapes: {} label shapes: {}".format(
            self.__class__.__name__, data_shapes, label_shapes)


class DataIter(object):
    """Base class of data iterators: Python iterator protocol over DataBatch."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the start of the data."""
        pass

    def next(self):
        """The next DataBatch; raises StopIteration at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(),
                             pad=self.getpad(), index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; whether there was one."""
        pass

    def getdata(self):
        """Data of the current batch (list of NDArray)."""
        pass

    def getlabel(self):
        """Label of the current batch (list of NDArray)."""
        pass

    def getindex(self):
        """Indices of the examples of the current batch, or None."""
        return None

    def getpad(self):
        """Number of padding examples in the current batch."""
        pass


class ResizeIter(DataIter):
    """Make ``data_iter`` yield exactly ``size`` batches per epoch, resetting
    it whenever it runs out."""

    def __init__(self, data_iter, size, reset_internal=True):
        super(ResizeIter, self).__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None

        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class _PrefetchState(object):
    """What the prefetch threads share with their PrefetchingIter. The threads
    hold this, not the iterator, so a dropped iterator is collected and its
    ``__del__`` stops the threads."""

    def __init__(self, iters):
        n = len(iters)
        self.iters = iters
        self.started = True
        self.data_ready = [threading.Event() for _ in range(n)]
        self.data_taken = [threading.Event() for _ in range(n)]
        self.next_batch = [None] * n
        self.errors = [None] * n
        for e in self.data_taken:
            e.set()


def _prefetch_loop(state, i):
    while True:
        state.data_taken[i].wait()
        if not state.started:
            break
        try:
            state.next_batch[i] = state.iters[i].next()
        except StopIteration:
            state.next_batch[i] = None
        except BaseException as e:  # handed to the consumer, not lost in the thread
            state.next_batch[i] = None
            state.errors[i] = e
        state.data_taken[i].clear()
        state.data_ready[i].set()


class PrefetchingIter(DataIter):
    """Fetch batches of one or more iterators ahead of time, one thread each.

    Batches of the iterators are merged: their data lists and label lists are
    concatenated, in order. ``rename_data``/``rename_label`` are lists (one
    per iterator) of ``{old_name: new_name}`` maps.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super(PrefetchingIter, self).__init__()
        if not isinstance(iters, list):
            iters = [iters]
        self.n_iter = len(iters)
        assert self.n_iter > 0
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self._state = _PrefetchState(iters)
        self.current_batch = None
        self.prefetch_threads = [
            threading.Thread(target=_prefetch_loop, args=(self._state, i), daemon=True,
                             name="aiond-prefetch-%d" % i)
            for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()
        self._finalizer = weakref.finalize(self, PrefetchingIter._stop, self._state,
                                           self.prefetch_threads)
        self._finalizer.atexit = False  # daemon threads; never hang interpreter exit

    # MXNet exposes these as attributes
    @property
    def data_ready(self):
        return self._state.data_ready

    @property
    def data_taken(self):
        return self._state.data_taken

    @property
    def next_batch(self):
        return self._state.next_batch

    @property
    def started(self):
        return self._state.started

    @staticmethod
    def _stop(state, threads):
        state.started = False
        for e in state.data_taken:
            e.set()
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join()

    def __del__(self):
        fin = getattr(self, "_finalizer", None)
        if fin is not None:
            fin()

    @property
    def provide_data(self):
        if self.rename_data is None:
            return sum([i.provide_data for i in self.iters], [])
        return sum([[
            DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc) else DataDesc(*x)
            for x in i.provide_data
        ] for r, i in zip(self.rename_data, self.iters)], [])

    @property
    def provide_label(self):
        if self.rename_label is None:
            return sum([i.provide_label for i in self.iters], [])
        return sum([[
            DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc) else DataDesc(*x)
            for x in i.provide_label
        ] for r, i in zip(self.rename_label, self.iters)], [])

    def _raise_errors(self):
        st = self._state
        for k, err in enumerate(st.errors):
            if err is not None:
                st.errors[k] = None
                raise err

    def reset(self):
        st = self._state
        for e in st.data_ready:
            e.wait()
        st.errors = [None] * self.n_iter
        for i in self.iters:
            i.reset()
        for e in st.data_ready:
            e.clear()
        for e in st.data_taken:
            e.set()

    def iter_next(self):
        st = self._state
        for e in st.data_ready:
            e.wait()
        if any(err is not None for err in st.errors):
            # the failed fetch is used up: let the next call fetch again
            for e in st.data_ready:
                e.clear()
            for e in st.data_taken:
                e.set()
            self._raise_errors()
        if st.next_batch[0] is None:
            for i in st.next_batch:
                assert i is None, "Number of entry mismatches between iterators"
            return False
        for batch in st.next_batch:
            assert batch.pad == st.next_batch[0].pad, \
                "Number of entry mismatches between iterators"
        self.current_batch = DataBatch(sum([batch.data for batch in st.next_batch], []),
                                       sum([batch.label for batch in st.next_batch], []),
                                       st.next_batch[0].pad,
                                       st.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for e in st.data_ready:
            e.clear()
        for e in st.data_taken:
            e.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


def _concat(a, b, dim):
    from .. import ndarray as nd
    op = getattr(nd, "concat", None)
    if op is not None:
        return op(a, b, dim=dim)
    return array(np.concatenate([a.asnumpy(), b.asnumpy()], axis=dim), a.context, dtype=a.dtype)


def _tile_nd(a, reps):
    from .. import ndarray as nd
    op = getattr(nd, "tile", None)
    if op is not None:
        return op(a, reps=tuple(reps))
    return array(np.tile(a.asnumpy(), reps), a.context, dtype=a.dtype)


class NDArrayIter(DataIter):
    """Iterate over NDArrays / numpy arrays (or a list or dict of them).

    ``last_batch_handle``: ``'pad'`` fills the last batch from the start of the
    data (``pad`` says how many); ``'discard'`` drops an incomplete last batch;
    ``'roll_over'`` holds it back and puts it in front of the first batch of the
    next epoch (that batch's ``pad`` is the number of held-back examples, as in
    MXNet). Arrays are named ``data_name``/``label_name``; a list of several
    gets ``_0_data``, ``_1_data``...; dict keys are used as names, sorted.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle='pad', data_name='data',
                 label_name='softmax_label', layout='NCHW'):
        super(NDArrayIter, self).__init__(batch_size)

        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)

        if ((_has_instance(self.data, CSRNDArray) or _has_instance(self.label, CSRNDArray))
                and last_batch_handle != 'discard'):
            raise NotImplementedError("`NDArrayIter` only supports ``CSRNDArray``"
                                      " with `last_batch_handle` set to `discard`.")

        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -self.batch_size
        self.num_data = self.idx.shape[0]
        self._base = None       # set below, after the first shuffle
        # shuffle
        self.reset()

        self.data_list = [x[1] for x in self.data] + [x[1] for x in self.label]
        self.num_source = len(self.data_list)
        # later shuffles gather from these arrays (which data_list keeps
        # anyway) by the composed order, see _shuffle_data
        self._base = (self.data, self.label, None)
        # used for 'roll_over'
        self._cache_data = None
        self._cache_label = None
        self.layout = layout

    @property
    def provide_data(self):
        """Name, shape (batch axis set to batch_size), dtype and layout of each data."""
        batch_axis = self.layout.find('N')
        return [
            DataDesc(k, tuple(list(v.shape[:batch_axis]) + [self.batch_size]
                              + list(v.shape[batch_axis + 1:])),
                     v.dtype, layout=self.layout)
            for k, v in self.data
        ]

    @property
    def provide_label(self):
        """Name, shape (batch axis set to batch_size), dtype and layout of each label."""
        batch_axis = self.layout.find('N')
        return [
            DataDesc(k, tuple(list(v.shape[:batch_axis]) + [self.batch_size]
                              + list(v.shape[batch_axis + 1:])),
                     v.dtype, layout=self.layout)
            for k, v in self.label
        ]

    def hard_reset(self):
        """Go back to the start, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Go back to the start (keeping rolled-over examples for 'roll_over')."""
        if self.shuffle:
            self._shuffle_data()
        if self.last_batch_handle == 'roll_over' and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            # (self.cursor - self.num_data) is the data held back from the last batch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        # an incomplete last batch ends the epoch; keep it for the next one
        if data[0].shape[self.layout.find('N')] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, data_source, start=None, end=None):
        assert start is not None or end is not None, 'should at least specify start or end'
        start = start if start is not None else 0
        if end is None:
            end = data_source[0][1].shape[0] if data_source else 0
        s = slice(start, end)
        return [_slice_along_batch_axis(x[1], s, self.layout.find('N')) for x in data_source]

    def _concat(self, first_data, second_data):
        if (not first_data) or (not second_data):
            return first_data if first_data else second_data
        assert len(first_data) == len(second_data), 'data source should contain the same size'
        return [_concat(first_data[i], second_data[i], self.layout.find('N'))
                for i in range(len(first_data))]

    def _tile(self, data, repeats):
        if not data:
            return []
        res = []
        for datum in data:
            reps = [1] * len(datum.shape)
            reps[0] = repeats
            res.append(_tile_nd(datum, reps))
        return res

    def _batchify(self, data_source):
        assert self.cursor < self.num_data, 'DataIter needs reset.'
        # first batch of next epoch with 'roll_over'
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            assert self._cache_data is not None or self._cache_label is not None, \
                'next epoch should have cached data'
            cache_data = self._cache_data if self._cache_data is not None else self._cache_label
            second_data = self._getdata(data_source, end=self.cursor + self.batch_size)
            if self._cache_data is not None:
                self._cache_data = None
            else:
                self._cache_label = None
            return self._concat(cache_data, second_data)
        # last batch with 'pad'
        elif self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            first_data = self._getdata(data_source, start=self.cursor)
            if pad > self.num_data:
                repeats = pad // self.num_data
                second_data = self._tile(self._getdata(data_source, end=self.num_data), repeats)
                if pad % self.num_data != 0:
                    second_data = self._concat(second_data,
                                               self._getdata(data_source, end=pad % self.num_data))
            else:
                second_data = self._getdata(data_source, end=pad)
            return self._concat(first_data, second_data)
        # normal case
        else:
            if self.cursor + self.batch_size < self.num_data:
                end_idx = self.cursor + self.batch_size
            else:  # incomplete last batch
                end_idx = self.num_data
            return self._getdata(data_source, self.cursor, end_idx)

    def getdata(self):
        return self._batchify(self.data)

    def getlabel(self):
        return self._batchify(self.label)

    def getpad(self):
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        elif self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        base = self._base
        if base is None:
            self.data = _getdata_by_idx(self.data, self.idx)
            self.label = _getdata_by_idx(self.label, self.idx)
            return
        # MXNet reorders the current (already shuffled) arrays by idx; the
        # same rows come from the arrays of the first shuffle by the composed
        # order, and the current arrays go first: their buffers serve the
        # new ones instead of a fresh copy of the dataset every epoch
        data, label, order = base
        order = self.idx.copy() if order is None else order[self.idx]
        self._base = (data, label, order)
        self.data = self.label = ()
        self.data = _getdata_by_idx(data, order)
        self.label = _getdata_by_idx(label, order)


# MXNet's C++ iterators (written here in Python) and their wrapper
from .mxdataiter import MXDataIter  # noqa: E402,F401
from .native import CSVIter, LibSVMIter  # noqa: E402,F401
from .image_record import ImageRecordIter, ImageRecordInt8Iter, ImageRecordUInt8Iter  # noqa: E402,F401
