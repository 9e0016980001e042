"""gluon.data: datasets, samplers, DataLoader (in-process, worker processes,
worker threads, ``async for``), vision transforms and local-file datasets.

Expected values were checked against MXNet 1.9.1. Worker processes are slow
to start, so the loaders with workers are made once per module where they can.
"""
from __future__ import annotations

import asyncio
import gc
import gzip
import multiprocessing
import os
import struct
import tarfile
import threading
import time

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.gluon import data as gdata
from aiond.gluon.data import (ArrayDataset, BatchSampler, DataLoader, FilterSampler,
                              IntervalSampler, RandomSampler, SequentialSampler, SimpleDataset)
from aiond.gluon.data.vision import transforms as T

pytestmark = pytest.mark.timeout(120)

N = 23
X = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
Y = (np.arange(N) % 5).astype(np.int32)


def make_dataset():
    return ArrayDataset(mx.nd.array(X), mx.nd.array(Y, dtype="int32"))


def as_numpy(batches):
    return [[f.asnumpy() for f in b] for b in batches]


def assert_same_batches(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)


def children():
    """PIDs of this process's live or zombie children, from /proc."""
    me, out = os.getpid(), set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/stat" % pid) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == me:
                out.add(int(pid))
    return out


# module-level so they pickle to worker processes
class FailingDataset(gdata.Dataset):
    def __init__(self, bad):
        self.bad = bad

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError("sample %d is corrupt" % i)
        return np.float32(i)


class DyingDataset(FailingDataset):
    def __getitem__(self, i):
        if i == self.bad:
            os._exit(3)
        return np.float32(i)


class SlowDataset(FailingDataset):
    def __init__(self, delay, slow_from=0, n=12):
        self.delay, self.slow_from, self.n = delay, slow_from, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.slow_from:
            time.sleep(self.delay)
        return np.full((2,), i, dtype=np.float32)


def add_one(x):
    return x + 1


@pytest.fixture(scope="module")
def proc_loader():
    loader = DataLoader(make_dataset(), batch_size=4, num_workers=2)
    yield loader
    loader.close()


# ------------------------------------------------------------ samplers
def test_samplers():
    assert list(SequentialSampler(4, start=2)) == [2, 3, 4, 5]
    np.random.seed(3)
    got = list(RandomSampler(10))
    np.random.seed(3)
    want = np.arange(10)
    np.random.shuffle(want)
    assert got == list(want) and len(RandomSampler(10)) == 10
    fs = FilterSampler(lambda s: s % 3 == 0, list(range(10)))
    assert list(fs) == [0, 3, 6, 9] and len(fs) == 4
    assert list(IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(IntervalSampler(13, 3, rollover=False)) == [0, 3, 6, 9, 12]


def test_batch_sampler_last_batch_modes_as_mxnet():
    keep = BatchSampler(SequentialSampler(10), 3, "keep")
    assert list(keep) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(keep) == 4
    disc = BatchSampler(SequentialSampler(10), 3, "discard")
    assert list(disc) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(disc) == 3
    roll = BatchSampler(SequentialSampler(10), 3, "rollover")
    lens, epochs = [], []
    for _ in range(3):
        lens.append(len(roll))
        epochs.append(list(roll))
    # MXNet 1.9.1: len 3, 3, 4; the tail rolls into the next epoch
    assert lens == [3, 3, 4]
    assert epochs == [[[0, 1, 2], [3, 4, 5], [6, 7, 8]],
                      [[9, 0, 1], [2, 3, 4], [5, 6, 7]],
                      [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]]
    with pytest.raises(ValueError, match="last_batch must be one of"):
        list(BatchSampler(SequentialSampler(10), 3, "bad"))


# ------------------------------------------------------------ datasets
def test_array_dataset_items_as_mxnet():
    ds = make_dataset()
    x, y = ds[1]
    assert isinstance(x, mx.nd.NDArray) and x.shape == (3,)       # 2-D NDArray: NDArray rows
    assert type(y) is np.int32                                     # 1-D NDArray -> numpy
    np.testing.assert_array_equal(x.asnumpy(), X[1])
    ds2 = ArrayDataset(np.arange(12.0).reshape(4, 3), [1, 2, 3, 4])
    a, b = ds2[0]
    assert type(a) is np.ndarray and a.dtype == np.float64 and type(b) is int
    assert type(ArrayDataset(mx.nd.arange(5))[0]) is np.float32    # one array: no tuple
    assert len(ds) == N
    with pytest.raises(ValueError, match="same length"):
        ArrayDataset(X, Y[:3])


def test_dataset_transform_filter_shard_take_sample():
    ds = make_dataset()
    t = ds.transform(lambda x, y: (x * 2, y))
    np.testing.assert_array_equal(t[2][0].asnumpy(), X[2] * 2)
    tf = ds.transform_first(add_one)
    np.testing.assert_array_equal(tf[2][0].asnumpy(), X[2] + 1)
    assert tf[2][1] == Y[2]
    s = SimpleDataset([1, 2, 3])
    assert s.transform(lambda v: v * 10)[2] == 30
    eager = s.transform(lambda v: v * 10, lazy=False)
    assert type(eager) is SimpleDataset and list(eager) == [10, 20, 30]
    assert SimpleDataset([7]).transform_first(add_one)[0] == 8
    f = ds.filter(lambda item: item[1] > 2)
    assert len(f) == int((Y > 2).sum()) and all(f[i][1] > 2 for i in range(len(f)))
    # shards: first len % n shards get one more, contiguous, covering everything
    shards = [ds.shard(5, i) for i in range(5)]
    assert [len(sh) for sh in shards] == [5, 5, 5, 4, 4]
    assert shards[1][0][1] == Y[5] and shards[4][3][1] == Y[22]
    assert len(ds.take(4)) == 4 and len(ds.take(None)) == N and len(ds.take(100)) == N
    sampled = SimpleDataset(list("abcdef")).sample(IntervalSampler(6, 2))
    assert [sampled[i] for i in range(6)] == list("acebdf")
    with pytest.raises(TypeError, match="Invalid sampler"):
        ds.sample([0, 1])


# ------------------------------------------------------------ batchify
def test_default_batchify_values_dtypes_shapes():
    bf = gdata.default_batchify_fn
    b = bf([mx.nd.array(X[i], dtype="float64") for i in range(3)])
    assert b.dtype == np.float64 and b.shape == (3, 3)
    np.testing.assert_array_equal(b.asnumpy(), X[:3])
    batch = bf([(X[i], Y[i]) for i in range(4)])
    assert type(batch) is list                        # MXNet: a list, not a tuple
    assert batch[0].dtype == np.float32 and batch[0].shape == (4, 3)
    assert batch[1].dtype == np.int32 and batch[1].shape == (4,)
    np.testing.assert_array_equal(batch[1].asnumpy(), Y[:4])
    assert bf([1.5, 2.5]).dtype == np.float64         # np.asarray, dtype kept (MXNet)
    assert bf([1, 2]).dtype == np.int64
    assert [f.dtype for f in bf([(1, 2.0), (3, 4.0)])] == [np.int64, np.float64]


def test_dataloader_in_process_batches_and_len():
    loader = DataLoader(make_dataset(), batch_size=5)
    assert len(loader) == 5
    got = as_numpy(loader)
    assert [g[0].shape for g in got] == [(5, 3)] * 4 + [(3, 3)]
    assert got[1][1].dtype == np.int32
    np.testing.assert_array_equal(np.concatenate([g[0] for g in got]), X)
    # a 1-D NDArray used directly: each sample has shape (1,), as in MXNet
    direct = [b.shape for b in DataLoader(mx.nd.arange(10), batch_size=4)]
    assert direct == [(4, 1), (4, 1), (2, 1)]
    assert len(DataLoader(np.arange(10), batch_size=3, last_batch="discard")) == 3
    roll = DataLoader(np.arange(10), batch_size=3, last_batch="rollover")
    assert [b.asnumpy().tolist() for b in roll] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(roll) == 3
    assert [b.asnumpy().tolist() for b in roll] == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    assert len(DataLoader(np.arange(10), batch_sampler=[[0, 1], [5]])) == 2
    with pytest.raises(ValueError):
        DataLoader(np.arange(10))
    with pytest.raises(ValueError):
        DataLoader(np.arange(10), batch_size=2, shuffle=True, sampler=SequentialSampler(10))
    with pytest.raises(ValueError):
        DataLoader(np.arange(10), batch_size=2, batch_sampler=[[0]])


# ------------------------------------------------------------ workers
def test_process_and_thread_workers_match_in_process(proc_loader):
    want = as_numpy(DataLoader(make_dataset(), batch_size=4))
    assert len(proc_loader) == len(want) == 6
    for _ in range(2):                                       # two epochs
        assert_same_batches(as_numpy(proc_loader), want)
    threads = DataLoader(make_dataset(), batch_size=4, num_workers=2, thread_pool=True)
    assert_same_batches(as_numpy(threads), want)
    assert_same_batches(as_numpy(threads), want)
    few = DataLoader(make_dataset(), batch_size=4, num_workers=3, thread_pool=True, prefetch=0)
    assert_same_batches(as_numpy(few), want)


def test_workers_abandoned_epoch_and_concurrent_iterators(proc_loader):
    want = as_numpy(DataLoader(make_dataset(), batch_size=4))
    it = iter(proc_loader)
    first = next(it)
    np.testing.assert_array_equal(first[0].asnumpy(), want[0][0])
    del it                                    # abandoned with batches in flight
    assert_same_batches(as_numpy(proc_loader), want)
    pairs = list(zip(proc_loader, proc_loader))
    assert_same_batches(as_numpy(p[0] for p in pairs), want)
    assert_same_batches(as_numpy(p[1] for p in pairs), want)


def test_workers_follow_numpy_seed_for_shuffle():
    ds = make_dataset()
    np.random.seed(11)
    want = as_numpy(DataLoader(ds, batch_size=4, shuffle=True))
    for kw in ({"thread_pool": True}, {}):
        np.random.seed(11)     # starting the workers must not draw from numpy's RNG
        shuffled = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, **kw)
        assert_same_batches(as_numpy(shuffled), want)
        shuffled.close()


def test_worker_exception_has_worker_traceback_and_leaves_no_process():
    before = children()
    loader = DataLoader(FailingDataset(bad=6), batch_size=2, num_workers=2)
    pids = {p.pid for p in loader._pool.procs}
    assert pids <= children()
    seen = []
    with pytest.raises(ValueError) as info:
        for b in loader:
            seen.append(b.asnumpy().tolist())
    msg = str(info.value)
    assert seen == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert "Caught ValueError in DataLoader worker process" in msg
    assert "Original Traceback (most recent call last)" in msg
    assert "in __getitem__" in msg and "sample 6 is corrupt" in msg
    assert not (children() - before), "stray child processes"
    assert multiprocessing.active_children() == []
    with pytest.raises(ValueError, match="sample 6 is corrupt"):   # a new epoch restarts them
        list(loader)
    assert not (children() - before)


def test_worker_death_and_timeout_are_reported():
    before = children()
    loader = DataLoader(DyingDataset(bad=3), batch_size=2, num_workers=2)
    with pytest.raises(MXNetError, match=r"exited unexpectedly \(exit code 3\)"):
        list(loader)
    assert not (children() - before)
    slow = DataLoader(SlowDataset(60, slow_from=4), batch_size=2, num_workers=2, timeout=1.0)
    it = iter(slow)
    assert next(it).asnumpy()[0].tolist() == [0, 0]
    with pytest.raises(multiprocessing.TimeoutError, match="timed out after 1.0 s.*timeout="):
        list(it)
    assert not (children() - before)


def test_unpicklable_dataset_error_and_thread_pool_alternative():
    ds = SimpleDataset([1.0, 2.0, 3.0]).transform(lambda v: v * 2)
    with pytest.raises(TypeError, match="pickl.*thread_pool=True"):
        DataLoader(ds, batch_size=2, num_workers=2)
    loader = DataLoader(ds, batch_size=2, num_workers=2, thread_pool=True)
    assert [b.asnumpy().tolist() for b in loader] == [[2.0, 4.0], [6.0]]
    with pytest.raises(ZeroDivisionError):       # thread workers re-raise the original
        list(DataLoader(SimpleDataset([1, 0]).transform(lambda v: 1 // v), batch_size=1,
                        num_workers=1, thread_pool=True))


def test_loader_is_garbage_collected_with_its_workers(tmp_path):
    images, _ = write_mnist(tmp_path, n=10)
    ds = gdata.vision.MNIST(root=str(tmp_path)).transform_first(T.ToTensor())
    loader = DataLoader(ds, batch_size=4, num_workers=2)
    pids = {p.pid for p in loader._pool.procs}
    data, label = next(iter(loader))
    assert data.shape == (4, 1, 28, 28) and data.dtype == np.float32
    assert label.dtype == np.int32
    np.testing.assert_allclose(data.asnumpy()[:, 0], images[:4] / np.float32(255), rtol=1e-6)
    del loader, data, label
    gc.collect()
    assert not (pids & children())
    threads = DataLoader(make_dataset(), batch_size=4, num_workers=2, thread_pool=True)
    list(threads)
    del threads
    gc.collect()
    for t in threading.enumerate():
        if t.name.startswith("aiond-dataloader-"):
            t.join(10)
            assert not t.is_alive()


# ------------------------------------------------------------ async
class GatedDataset(gdata.Dataset):
    """Every item waits for a gate that only the event loop opens: if
    ``async for`` blocked the loop while waiting, no item could ever come."""

    def __init__(self, gate_path, n=16):
        self.gate_path, self.n = str(gate_path), n    # a file: workers are processes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        deadline = time.monotonic() + 30
        while not os.path.exists(self.gate_path):
            if time.monotonic() > deadline:
                raise RuntimeError("gate never opened: the event loop was blocked")
            time.sleep(0.002)
        return np.full((2,), i, dtype=np.float32)


@pytest.mark.parametrize("workers", [0, 2])
def test_async_for_keeps_the_loop_responsive(workers, tmp_path):
    gate = tmp_path / "gate"
    loader = DataLoader(GatedDataset(gate), batch_size=4, num_workers=workers)

    async def consume():
        return [b.asnumpy()[:, 0].tolist() async for b in loader]

    async def main():
        task = asyncio.create_task(consume())
        await asyncio.sleep(0)          # the consumer is now waiting for batch 0
        assert not task.done()
        gate.touch()                    # runs only if that wait left the loop free
        return await task

    got = asyncio.run(main())
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    loader.close()


def test_async_for_cancelled_wait_loses_no_batch():
    loader = DataLoader(SlowDataset(0.1, n=4), batch_size=2)

    async def main():
        it = loader.__aiter__()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(it.__anext__(), 0.01)
        return [b.asnumpy()[:, 0].tolist() async for b in it]

    assert asyncio.run(main()) == [[0, 1], [2, 3]]


# ------------------------------------------------------------ transforms
IMG = np.random.RandomState(0).randint(0, 255, (5, 7, 3)).astype("uint8")


def test_to_tensor_normalize_cast_compose():
    img = mx.nd.array(IMG, dtype="uint8")
    t = T.ToTensor()(img)
    assert t.dtype == np.float32 and t.shape == (3, 5, 7)
    np.testing.assert_allclose(t.asnumpy(), IMG.transpose(2, 0, 1) / np.float32(255), rtol=1e-6)
    assert T.ToTensor()(mx.nd.zeros((4, 2, 3, 3), dtype="uint8")).shape == (4, 3, 2, 3)
    with pytest.raises(ValueError, match="shape"):
        T.ToTensor()(mx.nd.zeros((3, 3), dtype="uint8"))
    x = mx.nd.ones((3, 2, 2))
    np.testing.assert_allclose(T.Normalize((0.5, 1, 2), (0.5, 2, 4))(x)[:, 0, 0].asnumpy(),
                               [1.0, 0.0, -0.25])
    np.testing.assert_allclose(T.Normalize(0.5, 0.25)(x)[:, 0, 0].asnumpy(), [2.0, 2.0, 2.0])
    assert T.Normalize((0.5, 1, 2), (0.5, 2, 4))(mx.nd.ones((2, 3, 2, 2))).shape == (2, 3, 2, 2)
    with pytest.raises(ValueError, match="either 1 or 3 elements"):
        T.Normalize((0.5, 1), (0.5, 2))(x)
    assert T.Cast("float16")(img).dtype == np.float16 and T.Cast()(img).dtype == np.float32
    c = T.Compose([T.ToTensor(), T.Normalize(0.5, 0.5)])
    np.testing.assert_allclose(c(img).asnumpy(), (IMG.transpose(2, 0, 1) / 255 - 0.5) / 0.5,
                               rtol=1e-5, atol=1e-6)
    out = T.ToTensor()(IMG)                                # numpy in, numpy out
    assert type(out) is np.ndarray and out.dtype == np.float32


def test_resize_and_center_crop_match_mxnet():
    img = mx.nd.array(IMG, dtype="uint8")
    # MXNet 1.9.1 (OpenCV) outputs, channel 0; bilinear uint8 may differ by 1
    lin = [[139, 139, 100, 150], [146, 148, 135, 178], [69, 125, 96, 89]]
    near = [[172, 192, 211, 216], [39, 88, 9, 254], [114, 34, 38, 105]]
    flt = [[138.79166, 139.0, 99.625, 149.91666], [145.875, 148.375, 135.25, 177.625],
           [69.33333, 125.666664, 96.20834, 89.583336]]
    r = T.Resize((4, 3))(img)
    assert r.shape == (3, 4, 3) and r.dtype == np.uint8
    assert np.abs(r.asnumpy()[:, :, 0].astype(int) - lin).max() <= 1
    np.testing.assert_array_equal(T.Resize((4, 3), interpolation=0)(img).asnumpy()[:, :, 0], near)
    f = T.Resize((4, 3))(mx.nd.array(IMG, dtype="float32")).asnumpy()[:, :, 0]
    np.testing.assert_allclose(f, flt, rtol=1e-5)
    up = T.Resize((9, 11))(mx.nd.array(IMG, dtype="float32")).asnumpy()[:2, :, 1]
    np.testing.assert_allclose(up, [[47.0, 60.333336, 83.0, 84.77777, 21.0, 72.33333, 87.55556,
                                     123.00002, 193.0],
                                    [54.272728, 64.45455, 82.31313, 86.23232, 44.09091,
                                     99.525246, 99.25253, 115.18183, 172.81818]], rtol=1e-5)
    assert T.Resize(4)(img).shape == (4, 4, 3)
    assert T.Resize(4, keep_ratio=True)(img).shape == (4, 5, 3)
    assert T.Resize((3, 6))(mx.nd.array(np.stack([IMG, IMG]), dtype="uint8")).shape == (2, 6, 3, 3)
    np.testing.assert_array_equal(T.CenterCrop(3)(img).asnumpy()[:, :, 0],
                                  [[25, 9, 208], [142, 193, 127], [164, 38, 17]])
    assert T.CenterCrop((2, 4))(img).shape == (4, 2, 3)
    big = T.CenterCrop(9)(img).asnumpy()[:, :, 0].astype(int)
    assert big.shape == (9, 9)
    assert np.abs(big[0] - [192, 193, 194, 202, 211, 114, 56, 156, 216]).max() <= 1
    flips = {tuple(T.RandomFlipLeftRight()(IMG)[0, :, 0]) for _ in range(40)}
    assert flips == {tuple(IMG[0, :, 0]), tuple(IMG[0, ::-1, 0])}


# ------------------------------------------------------------ datasets
def write_mnist(root, n=10, prefix="train"):
    images = (np.arange(n * 28 * 28) % 251).astype(np.uint8).reshape(n, 28, 28)
    labels = (np.arange(n) % 10).astype(np.uint8)
    with gzip.open(os.path.join(root, "%s-images-idx3-ubyte.gz" % prefix), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    with gzip.open(os.path.join(root, "%s-labels-idx1-ubyte.gz" % prefix), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    return images, labels


def cifar_records(n, label_bytes, seed):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, (n, 3, 32, 32)).astype(np.uint8)
    labels = rng.randint(0, 100, (n, label_bytes)).astype(np.uint8)
    return images, labels, np.concatenate([labels, images.reshape(n, -1)], axis=1).tobytes()


def test_mnist_and_fashion_mnist_from_local_files(tmp_path):
    images, labels = write_mnist(tmp_path, n=6, prefix="t10k")
    for cls in (gdata.vision.MNIST, gdata.vision.FashionMNIST):
        ds = cls(root=str(tmp_path), train=False)
        assert len(ds) == 6
        x, y = ds[4]
        assert isinstance(x, mx.nd.NDArray) and x.shape == (28, 28, 1) and x.dtype == np.uint8
        assert type(y) is np.int32 and y == labels[4]
        np.testing.assert_array_equal(x.asnumpy()[:, :, 0], images[4])
    ds = gdata.vision.MNIST(root=str(tmp_path), train=False,
                            transform=lambda d, l: (d.astype("float32") / 255, l))
    assert ds[1][0].dtype == np.float32
    with pytest.raises(FileNotFoundError) as info:
        gdata.vision.MNIST(root=str(tmp_path), train=True)
    msg = str(info.value)
    assert "train-labels-idx1-ubyte.gz" in msg and str(tmp_path) in msg
    assert "never downloads" in msg


def test_cifar_from_local_files_and_archives(tmp_path, monkeypatch):
    images, labels, raw = cifar_records(3, 1, 0)
    (tmp_path / "test_batch.bin").write_bytes(raw)
    ds = gdata.vision.CIFAR10(root=str(tmp_path), train=False)
    x, y = ds[2]
    assert x.shape == (32, 32, 3) and x.dtype == np.uint8 and type(y) is np.int32
    np.testing.assert_array_equal(x.asnumpy(), images[2].transpose(1, 2, 0))
    assert y == labels[2, 0]
    with pytest.raises(FileNotFoundError, match="data_batch_1.bin.*never downloads"):
        gdata.vision.CIFAR10(root=str(tmp_path), train=True)
    # CIFAR100 from the original archive layout, extracted from the local .tar.gz
    images, labels, raw = cifar_records(4, 2, 1)
    src = tmp_path / "src"
    (src / "cifar-100-binary").mkdir(parents=True)
    (src / "cifar-100-binary" / "test.bin").write_bytes(raw)
    root = tmp_path / "c100"
    root.mkdir()
    with tarfile.open(root / "cifar-100-binary.tar.gz", "w:gz") as tar:
        tar.add(src / "cifar-100-binary", arcname="cifar-100-binary")
    coarse = gdata.vision.CIFAR100(root=str(root), train=False)
    fine = gdata.vision.CIFAR100(root=str(root), train=False, fine_label=True)
    assert coarse[3][1] == labels[3, 0] and fine[3][1] == labels[3, 1]
    np.testing.assert_array_equal(fine[1][0].asnumpy(), images[1].transpose(1, 2, 0))
    # the default root is $MXNET_HOME/datasets/<name>
    monkeypatch.setenv("MXNET_HOME", str(tmp_path / "home"))
    with pytest.raises(FileNotFoundError, match=r"home/datasets/cifar10"):
        gdata.vision.CIFAR10(train=False)


def test_record_file_dataset(tmp_path):
    recordio = pytest.importorskip("aiond.recordio")
    rec = recordio.MXIndexedRecordIO(str(tmp_path / "d.idx"), str(tmp_path / "d.rec"), "w")
    for i in range(5):
        rec.write_idx(i, b"record-%d" % i)
    rec.close()
    ds = gdata.RecordFileDataset(str(tmp_path / "d.rec"))
    assert len(ds) == 5 and ds[3] == b"record-3"
    loader = DataLoader(ds, batch_size=2, batchify_fn=list, num_workers=1, thread_pool=True)
    assert [r for b in loader for r in b] == [b"record-%d" % i for i in range(5)]
