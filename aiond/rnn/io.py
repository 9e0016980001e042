"""Data iterators for ``mx.rnn`` (MXNet 1.9.1's ``mxnet.rnn.io``):
``encode_sentences`` turns tokenised sentences into integer ids, and
``BucketSentenceIter`` batches them by length into buckets (padding with
``invalid_label``), each batch carrying its ``bucket_key`` for a
``BucketingModule``."""
from __future__ import annotations

import bisect
import logging
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n',
                     start_label=0, unknown_token=None):
    """Encode sentences (lists of tokens) as lists of integer ids.

    Without ``vocab`` a new one is built: ``{invalid_key: invalid_label}``
    plus each new token numbered from ``start_label`` (skipping
    ``invalid_label``). With ``vocab``, a token it lacks is an error unless
    ``unknown_token`` is given; then ``unknown_token`` gets the next id.
    Returns ``(encoded sentences, vocab)``."""
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError("Unknown token %s (it is not in vocab; pass unknown_token to "
                                   "map unknown tokens to one id)" % word)
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences, grouped by length into buckets.

    Each sentence goes to the smallest bucket that holds it (padded with
    ``invalid_label``); longer sentences are discarded. The label is the
    data shifted one step left (next-token prediction), ending with
    ``invalid_label``. Batches come in random order, each with
    ``bucket_key`` (its bucket length) and its own ``provide_data``.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Bucket lengths; default every length that has at least
        ``batch_size`` sentences.
    invalid_label : int
    data_name, label_name : str
    dtype : str
    layout : str
        'NT' (batch major) or 'TN' (time major).
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name='data', label_name='softmax_label', dtype='float32', layout='NT'):
        super(BucketSentenceIter, self).__init__()
        if not buckets:
            buckets = [i for i, j in enumerate(np.bincount([len(s) for s in sentences]))
                       if j >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError("BucketSentenceIter: no bucket (no sentence length occurs %d times; "
                             "pass buckets=[...])" % batch_size)
        ndiscard = 0
        data = [[] for _ in buckets]
        used = [False] * len(buckets)
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            used[buck] = True
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        buckets = [b for b, u in zip(buckets, used) if u]
        self.data = [np.asarray(d, dtype=dtype) for d in data if d]
        if ndiscard:
            logging.warning("discarded %d sentences longer than the largest bucket.", ndiscard)

        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.major_axis = layout.find('N')
        self.layout = layout
        self.default_bucket_key = max(buckets)
        if self.major_axis == 0:
            shape = (batch_size, self.default_bucket_key)
        elif self.major_axis == 1:
            shape = (self.default_bucket_key, batch_size)
        else:
            raise ValueError("Invalid layout %s: Must by NT (batch major) or TN (time major)"
                             % layout)
        self.provide_data = [DataDesc(name=self.data_name, shape=shape, layout=self.layout)]
        self.provide_label = [DataDesc(name=self.label_name, shape=shape, layout=self.layout)]

        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    def reset(self):
        """Shuffle the batches and the sentences within each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata = []
        self.ndlabel = []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(buck, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next batch (a DataBatch with ``bucket_key``)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
