"""Sharded input for data-parallel training: MNISTIter's num_parts/part_index
and gluon.data.SplitSampler."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.gluon.data import ArrayDataset, DataLoader, SplitSampler


@pytest.fixture
def mnist(tmp_path):
    n = 10
    rs = np.random.RandomState(0)
    img = rs.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    lab = (np.arange(n) % 10).astype(np.uint8)
    (tmp_path / "img").write_bytes(struct.pack(">iiii", 2051, n, 28, 28) + img.tobytes())
    (tmp_path / "lab").write_bytes(struct.pack(">ii", 2049, n) + lab.tobytes())
    return str(tmp_path / "img"), str(tmp_path / "lab"), img


def test_mnist_part_is_mxnets(mnist):
    image, label, img = mnist
    # recorded from MXNet 1.9.1: 10 images in 3 parts, part 1 holds rows 3..5,
    # batch 2 gives one batch (labels 3, 4) and drops the tail
    it = mx.io.MNISTIter(image=image, label=label, batch_size=2, shuffle=False,
                         num_parts=3, part_index=1, silent=True)
    assert it.provide_data[0].shape == (2, 1, 28, 28)
    assert it.provide_label[0].shape == (2,)
    batches = list(it)
    assert len(batches) == 1 and batches[0].pad == 0
    np.testing.assert_array_equal(batches[0].label[0].asnumpy(), [3, 4])
    np.testing.assert_allclose(batches[0].data[0].asnumpy().sum(), 773.28516, rtol=1e-6)
    np.testing.assert_array_equal(batches[0].data[0].asnumpy()[:, 0],
                                  img[3:5].astype(np.float32) / 256)


def test_mnist_parts_cover_the_file_and_shuffle_is_per_part(mnist):
    image, label, _ = mnist
    seen = []
    for p in range(2):
        it = mx.io.MNISTIter(image=image, label=label, batch_size=1, shuffle=True, seed=3,
                             flat=True, num_parts=2, part_index=p, silent=True)
        assert it.provide_data[0].shape == (1, 784)
        first = [b.label[0].asnumpy()[0] for b in it]
        it.reset()
        assert [b.label[0].asnumpy()[0] for b in it] == first     # reset keeps the order
        assert sorted(first) == list(range(5 * p, 5 * p + 5))
        seen += first
    assert sorted(seen) == list(range(10))
    with pytest.raises(MXNetError, match="part_index"):
        mx.io.MNISTIter(image=image, label=label, num_parts=2, part_index=2)
    with pytest.raises(MXNetError, match="not an MNIST"):
        mx.io.MNISTIter(image=label, label=label)


def test_split_sampler_parts_are_disjoint_and_reshuffled_per_epoch():
    parts = [SplitSampler(10, 3, r, shuffle=True, seed=5) for r in range(3)]
    e0 = [list(s) for s in parts]
    assert all(len(x) == 3 == len(s) for x, s in zip(e0, parts))
    flat = sum(e0, [])
    assert len(set(flat)) == 9 and set(flat) <= set(range(10))
    e1 = [list(s) for s in parts]
    assert e1 != e0 and len(set(sum(e1, []))) == 9
    for s in parts:
        s.set_epoch(0)
    assert [list(s) for s in parts] == e0
    assert list(SplitSampler(10, 3, 2)) == [6, 7, 8]
    with pytest.raises(ValueError):
        SplitSampler(10, 3, 3)


def test_split_sampler_feeds_a_dataloader():
    ds = ArrayDataset(np.arange(8, dtype=np.float32))
    dl = DataLoader(ds, batch_size=2, sampler=SplitSampler(len(ds), 2, 1))
    got = [b.asnumpy().tolist() for b in dl]
    assert got == [[4.0, 5.0], [6.0, 7.0]]
