"""A sampler for data-parallel training: each worker draws its own part of
the dataset (MXNet 1.x has none in ``gluon.data``; its distributed example
defines ``SplitSampler``, whose name and arguments this follows)."""
from __future__ import annotations

import numpy as np

from .sampler import Sampler

__all__ = ["SplitSampler"]


class SplitSampler(Sampler):
    """Indices of part ``part_index`` of ``num_parts`` equal parts of
    ``[0, length)``; with a kvstore, ``SplitSampler(len(dataset),
    kv.num_workers, kv.rank)``.

    Every part has ``length // num_parts`` indices (the remainder is left
    out), so every worker runs the same number of batches - a synchronous
    store needs that, or the workers with more batches wait for the others
    forever. With ``shuffle=True`` each epoch draws one permutation of the
    whole dataset from ``seed + epoch`` - the same on every worker - and
    worker ``part_index`` takes its slice of it, so over an epoch the
    workers see disjoint samples that cover the dataset (but for the
    remainder), reshuffled across workers every epoch. ``set_epoch(e)``
    picks the epoch of the next pass; each pass advances it by one.
    ``shuffle=False``: the contiguous slice, in order (MXNet's example).
    """

    def __init__(self, length, num_parts=1, part_index=0, shuffle=False, seed=0):
        length, num_parts, part_index = int(length), int(num_parts), int(part_index)
        if num_parts < 1:
            raise ValueError("num_parts must be >= 1, got %d" % num_parts)
        if not 0 <= part_index < num_parts:
            raise ValueError("part_index must be in [0, %d), got %d" % (num_parts, part_index))
        if length < num_parts:
            raise ValueError("cannot split %d samples into %d parts" % (length, num_parts))
        self._length = length
        self._part_len = length // num_parts
        self._start = self._part_len * part_index
        self._shuffle = bool(shuffle)
        self._seed = int(seed)
        self._epoch = 0

    def set_epoch(self, epoch):
        """Use the permutation of ``epoch`` for the next pass (all workers alike)."""
        self._epoch = int(epoch)

    def __iter__(self):
        lo, hi = self._start, self._start + self._part_len
        if not self._shuffle:
            return iter(range(lo, hi))
        perm = np.random.RandomState((self._seed + self._epoch) % (1 << 32)).permutation(
            self._length)
        self._epoch += 1
        return iter(perm[lo:hi])

    def __len__(self):
        return self._part_len
