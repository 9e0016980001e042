"""``x[:] = numpy`` on a plain thread: a destination free at that moment is
written from the caller's array itself before the assignment returns (one
copy, as MXNet's synchronous copy from CPU); a busy one gets a copy of its
own that its turn reads. Either way later changes to the source never leak
in, the cast is numpy's, ordering against other ops holds and poisoning
follows the engine's rules."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.ndarray._invoke import data_of

CPU = mx.cpu()


def _zeros(shape, dtype="float32"):
    z = mx.nd.zeros(shape, ctx=CPU, dtype=dtype)
    z.wait_to_read()
    return z


def _count_decoupling_copies(monkeypatch):
    import aiond.ndarray._indexing as indexing
    made = []
    real = indexing.host_copy

    def spy(a, dtype):
        made.append(a.shape)
        return real(a, dtype)
    monkeypatch.setattr(indexing, "host_copy", spy)
    return made


@pytest.fixture
def threaded():
    if mx.engine.is_naive():
        pytest.skip("the naive engine runs every op at push")


@pytest.mark.parametrize("src_dtype,dst_dtype", [
    ("float32", "float32"), ("float64", "float32"), ("int64", "float32"),
    ("float32", "int32"), ("bool", "float32")])
def test_a_free_destination_is_written_before_the_assignment_returns(threaded, monkeypatch,
                                                                      src_dtype, dst_dtype):
    copies = _count_decoupling_copies(monkeypatch)
    src = (np.arange(256 * 300).reshape(256, 300) % 7 - 3).astype(src_dtype)
    x = _zeros(src.shape, dst_dtype)
    before = mx.engine.statistics().ops_pushed
    x[:] = src
    assert mx.engine.statistics().ops_pushed == before       # nothing queued
    assert copies == []                                      # one copy: src -> x
    np.testing.assert_array_equal(data_of(x), src.astype(dst_dtype))  # already there
    src[...] = 1
    np.testing.assert_array_equal(x.asnumpy(), (np.arange(256 * 300).reshape(256, 300) % 7 - 3)
                                  .astype(src_dtype).astype(dst_dtype))


def test_a_busy_destination_gets_a_copy_of_its_own_and_keeps_its_order(threaded, monkeypatch):
    copies = _count_decoupling_copies(monkeypatch)
    x = _zeros((64, 100))
    started, release = threading.Event(), threading.Event()

    def gate():                                  # a writer of x, held until released
        started.set()
        assert release.wait(10)
        data_of(x)[...] = 5

    try:
        mx.engine.push(gate, writes=(x,), name="gate")
        assert started.wait(10)
        seen_before = x + 0                      # pushed after the gate, before the copy
        src = np.full((64, 100), 2.0, np.float64)
        x[:] = src                               # returns at once: x is busy
        assert not release.is_set()
        assert copies == [(64, 100)]
        src[...] = -1                            # must not leak into x
        seen_after = x * 1
        release.set()
        np.testing.assert_array_equal(seen_before.asnumpy(), 5)
        np.testing.assert_array_equal(seen_after.asnumpy(), 2)
        np.testing.assert_array_equal(x.asnumpy(), 2)
    finally:
        release.set()


def test_a_pending_reader_is_not_overwritten(threaded):
    x = _zeros((32, 50))
    x[:] = np.ones((32, 50))
    started, release = threading.Event(), threading.Event()
    got = []

    def reader():                                # reads x, held until released
        started.set()
        assert release.wait(10)
        got.append(data_of(x).copy())

    try:
        mx.engine.push(reader, reads=(x,), name="reader")
        assert started.wait(10)
        x[:] = np.full((32, 50), 9.0)            # must wait for the reader
        release.set()
        np.testing.assert_array_equal(x.asnumpy(), 9)
        np.testing.assert_array_equal(got[0], 1)
    finally:
        release.set()


def test_views_broadcasts_and_scalars_write_only_their_part():
    big = _zeros((6, 40))
    big[2:4] = np.arange(80, dtype=np.float64).reshape(2, 40)
    big[5] = np.full(40, 7.0)
    big[0:2] = np.arange(40, dtype=np.float32)           # broadcast over rows
    want = np.zeros((6, 40), np.float32)
    want[2:4] = np.arange(80).reshape(2, 40)
    want[5] = 7
    want[0:2] = np.arange(40)
    np.testing.assert_array_equal(big.asnumpy(), want)
    with pytest.raises(mx.base.MXNetError, match=r"\(3, 40\).*\(2, 40\)|shape"):
        big[2:4] = np.zeros((3, 40))
    np.testing.assert_array_equal(big.asnumpy(), want)


def test_poison_cleared_by_a_whole_write_and_kept_by_a_partial_one(threaded):
    def fail():
        raise ValueError("kernel failed on purpose")

    for whole in (True, False):
        x = _zeros((4, 300))
        mx.engine.push(fail, writes=(x,), name="broken")
        with pytest.raises(Exception, match="on purpose"):
            x.wait_to_read()
        if whole:
            x[:] = np.full((4, 300), 3.0)
            np.testing.assert_array_equal(x.asnumpy(), 3)
        else:
            x[1:3] = np.full((2, 300), 3.0)
            with pytest.raises(Exception, match="on purpose"):
                x.asnumpy()


def test_threads_assigning_and_reading_one_array_never_see_a_torn_copy():
    x = _zeros((128, 512))
    errors = []

    def worker(i):
        try:
            src = np.full((128, 512), float(i), np.float32)
            for _ in range(30):
                x[:] = src
                r = x.asnumpy()
                if not (r == r.flat[0]).all():
                    errors.append("thread %d read rows of two writes" % i)
                    return
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errors, errors[:3]
    assert x.asnumpy().flat[0] in range(6)


def test_from_a_coroutine_the_caller_copy_is_still_decoupled():
    x = _zeros((100, 100))

    async def main():
        src = np.full((100, 100), 4.0)
        x[:] = src
        src[...] = 0
        return await x.read()

    np.testing.assert_array_equal(asyncio.run(main()), 4)
