"""``mx.io.MNISTIter`` (MXNet's src/io/iter_mnist.cc) in Python.

Reads the idx files (``train-images-idx3-ubyte`` / ``...-labels-idx1-ubyte``),
scales pixels by 1/256 as MXNet does, and yields whole batches only (the
tail that does not fill a batch is dropped; ``pad`` is always 0).

Distributed training: ``num_parts``/``part_index`` read only rows
``[count/num_parts*part_index, count/num_parts*(part_index+1))`` (MXNet's
``GetPart``), so each worker (``part_index=kv.rank, num_parts=kv.num_workers``)
trains on its own shard. ``shuffle=True`` permutes the shard once, at load
time, from ``seed`` (the order differs from MXNet's std::shuffle; it is the
same for the same seed and shard, and ``reset()`` does not reshuffle, as in
MXNet).
"""
from __future__ import annotations

import logging
import struct

import numpy as np

from ..base import MXNetError
from .mxdataiter import MXDataIter

__all__ = ["MNISTIter", "part_range"]


def part_range(count, num_parts, part_index):
    """MXNet's ``GetPart``: the [start, end) rows of part ``part_index``."""
    num_parts, part_index = int(num_parts), int(part_index)
    if num_parts <= 0:
        raise MXNetError("num_parts must be > 0, got %d" % num_parts)
    if not 0 <= part_index < num_parts:
        raise MXNetError("part_index must be in [0, num_parts=%d), got %d"
                         % (num_parts, part_index))
    return (int(float(count) / num_parts * part_index),
            int(float(count) / num_parts * (part_index + 1)))


def _read_idx(path, magic, what):
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if len(head) < 4 or struct.unpack(">i", head)[0] != magic:
                raise MXNetError("MNISTIter: %s is not an MNIST %s file (magic %r)"
                                 % (path, what, head))
            ndim = 3 if what == "image" else 1
            return struct.unpack(">" + "i" * ndim, f.read(4 * ndim))
    except OSError as e:
        raise MXNetError("MNISTIter: cannot read %s: %s" % (path, e)) from e


class _MNISTSource(object):
    """MNISTIter's batches: whole batches only (a last partial batch is dropped)."""

    def __init__(self, img, lab, batch_size):
        self.img, self.lab, self.bs = img, lab, batch_size
        self.loc = 0
        self.lo = 0

    def before_first(self):
        self.loc = 0

    def next(self):
        if self.loc + self.bs > len(self.lab):
            return False
        self.lo = self.loc
        self.loc += self.bs
        return True

    def data(self):
        from ..ndarray import array
        return array(self.img[self.lo:self.lo + self.bs])

    def label(self):
        from ..ndarray import array
        return array(self.lab[self.lo:self.lo + self.bs])

    def index(self):
        return np.arange(self.lo, self.lo + self.bs, dtype=np.uint64)

    def pad(self):
        return 0


class MNISTIter(MXDataIter):
    """Iterating on the MNIST dataset (see the module docstring)."""

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False,
                 num_parts=1, part_index=0, data_name="data", label_name="softmax_label",
                 **kwargs):
        batch_size = int(batch_size)
        if batch_size < 1:
            raise MXNetError("MNISTIter: batch_size must be >= 1")
        for k in kwargs:        # MXNet's C++ iterators ignore prefetch_buffer, ctx, dtype
            if k not in ("prefetch_buffer", "ctx", "dtype", "input_shape"):
                raise MXNetError("MNISTIter: unknown argument %r" % k)
        img, lab = self._load(image, label, num_parts, part_index)
        if shuffle:
            perm = np.random.RandomState(int(seed)).permutation(len(lab))
            img, lab = img[perm], lab[perm]
        img = img.reshape(len(img), -1) if flat else img[:, None]
        if len(lab) < batch_size:
            raise MXNetError("MNISTIter: %d images, fewer than batch_size=%d"
                             % (len(lab), batch_size))
        self.data_name, self.label_name = data_name, label_name
        if not silent:
            logging.info("MNISTIter: load %d images, shuffle=%d, shape=%s", len(lab),
                         int(bool(shuffle)), (batch_size,) + img.shape[1:])
        super().__init__(_MNISTSource(img, lab, batch_size), data_name, label_name)

    @staticmethod
    def _load(image, label, num_parts, part_index):
        count, rows, cols = _read_idx(image, 2051, "image")
        start, end = part_range(count, num_parts, part_index)
        with open(image, "rb") as f:
            f.seek(16 + start * rows * cols)
            raw = np.frombuffer(f.read((end - start) * rows * cols), dtype=np.uint8)
        if raw.size != (end - start) * rows * cols:
            raise MXNetError("MNISTIter: %s is truncated" % image)
        img = raw.reshape(end - start, rows, cols).astype(np.float32) * np.float32(1.0 / 256)
        (lcount,) = _read_idx(label, 2049, "label")
        lstart, lend = part_range(lcount, num_parts, part_index)
        with open(label, "rb") as f:
            f.seek(8 + lstart)
            lab = np.frombuffer(f.read(lend - lstart), dtype=np.uint8).astype(np.float32)
        if len(lab) != len(img):
            raise MXNetError("MNISTIter: %d images but %d labels in part %d"
                             % (len(img), len(lab), part_index))
        return img, lab
