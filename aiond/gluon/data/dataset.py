"""Dataset containers (MXNet 1.9.1 ``gluon.data.dataset``).

A dataset is anything with ``__getitem__`` and ``__len__``; numpy arrays,
NDArrays and lists work as they are. ``ArrayDataset`` turns 1-D NDArrays into
numpy (so its samples are numpy scalars) and keeps higher-rank NDArrays as
NDArrays (so its samples are NDArray rows), exactly as MXNet does.
"""
from __future__ import annotations

import os

from ...ndarray import NDArray

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses override ``__getitem__`` and ``__len__``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """A dataset of the samples for which ``fn(sample)`` is true."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """The ``index``-th of ``num_shards`` contiguous parts (the first
        ``len % num_shards`` parts get one extra sample)."""
        if not 0 <= index < num_shards:
            raise ValueError("Shard index out of bound: %d out of %d" % (index, num_shards))
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them if ``count`` is None or larger)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError("Invalid sampler type: %s. Expected gluon.data.Sampler instead."
                            % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """A dataset whose samples are ``fn(sample)`` (``fn(*sample)`` for
        tuple samples). ``lazy=False`` transforms every sample now, once."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([i for i in trans])

    def transform_first(self, fn, lazy=True):
        """Like ``transform``, applied to the first field of each sample only
        (the data, leaving the label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """Wraps any object with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A callable object, not a closure, so that it pickles to worker processes."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._sampler)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """The i-th sample is ``(x1[i], x2[i], ...)`` (just ``x1[i]`` for one array).

    Arguments may be NDArrays, numpy arrays, lists or datasets of one length.
    """

    def __init__(self, *args):
        if not args:
            raise ValueError("Needs at least 1 arrays")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError("All arrays must have the same length; array[0] has length %d "
                                 "while array[%d] has %d." % (self._length, i, len(data)))
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``.rec`` with its ``.idx``), each as bytes.

    The record file is opened in each process that reads it, so the dataset
    pickles to DataLoader worker processes (each opens its own handle).
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = None
        self._pid = None
        self._keys = self._rec().keys

    def _rec(self):
        if self._record is None or self._pid != os.getpid():
            from ... import recordio
            self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")
            self._pid = os.getpid()
        return self._record

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_record"] = None
        state["_pid"] = None
        return state

    def __getitem__(self, idx):
        rec = self._rec()
        return rec.read_idx(rec.keys[idx])

    def __len__(self):
        return len(self._keys)


class _DownloadedDataset(Dataset):
    """Base of MNIST, CIFAR10, ...: ``_get_data`` fills ``_data`` and ``_label``.

    Unlike MXNet, the root folder is not created and nothing is downloaded:
    a missing file raises FileNotFoundError naming it.
    """

    def __init__(self, root, transform):
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
