"""The Batcher with several inputs and outputs, two priority levels, numpy
models, and the queue/compute statistics. Orderings forced with gates."""
import asyncio

import numpy as np
import pytest

import aiond as mx
from aiond.serve import Batcher, DeadlineExceeded, InvalidInput

from .test_batcher import run, wait

pytestmark = pytest.mark.timeout(60)


class TwoIn:
    """(a @ 1 + b, a * 2) computed by the engine; call i waits for gates[i]."""

    def __init__(self, closed=()):
        self.calls = []
        self.gates = {}
        self.closed = set(closed)
        self.started = asyncio.Event()

    async def __call__(self, a, b):
        i = len(self.calls)
        self.calls.append((a.shape, b.shape, (await a.read())[:, 0].tolist()))
        self.started.set()
        ev = self.gates.setdefault(i, asyncio.Event())
        if i not in self.closed:
            ev.set()
        await ev.wait()
        return mx.nd.sum(a, axis=1, keepdims=True) + b, a * 2


def pair(v, rows=1):
    return (np.full((rows, 3), float(v), np.float32), np.full((rows, 1), float(v), np.float32))


def test_several_inputs_are_batched_and_outputs_split_per_request():
    async def main():
        m = TwoIn(closed={0})
        b = Batcher(m, num_inputs=2, sample_shape=[(3,), (1,)], dtype=["float32", "float32"],
                    max_in_flight=1, max_batch_size=8)
        f0 = b(pair(0))
        await wait(m.started.wait())
        fs = [b(pair(v, rows=1 + v % 2)) for v in range(1, 5)]
        m.gates[0].set()
        res = await wait(asyncio.gather(f0, *fs))
        for v, (s, d) in enumerate(res):
            rows = 1 if v == 0 else 1 + v % 2
            np.testing.assert_array_equal(s, np.full((rows, 1), 4.0 * v, np.float32))
            np.testing.assert_array_equal(d, np.full((rows, 3), 2.0 * v, np.float32))
        assert [c[0][0] for c in m.calls] == [1, 1 + 2 + 1 + 2]
        await b.aclose()
    run(main())


def test_several_inputs_bad_requests_are_refused_naming_the_input():
    async def main():
        b = Batcher(TwoIn(), num_inputs=2, sample_shape=[(3,), (1,)],
                    dtype=["float32", "float32"])
        with pytest.raises(InvalidInput, match="expected a tuple of 2 arrays"):
            b(np.zeros((1, 3), np.float32))
        with pytest.raises(InvalidInput, match="input 1: expected shape"):
            b((np.zeros((1, 3), np.float32), np.zeros((1, 2), np.float32)))
        with pytest.raises(InvalidInput, match="different numbers of rows"):
            b((np.zeros((2, 3), np.float32), np.zeros((1, 1), np.float32)))
        with pytest.raises(InvalidInput, match="input 0: expected an array of numbers"):
            b((np.zeros((1, 3), np.complex64), np.zeros((1, 1), np.float32)))
        assert b.statistics().invalid == 4
        with pytest.raises(ValueError, match="needs that many"):
            Batcher(TwoIn(), num_inputs=2, dtype=["float32"])
        await b.aclose()
    run(main())


def test_different_shapes_of_one_input_batch_apart():
    async def main():
        m = TwoIn(closed={0})
        b = Batcher(m, num_inputs=2, max_in_flight=1)
        f0 = b(pair(0))
        await wait(m.started.wait())
        wide = (np.ones((1, 5), np.float32), np.ones((1, 1), np.float32))
        fs = [b(pair(1)), b(wide), b(pair(2))]
        m.gates[0].set()
        r = await wait(asyncio.gather(f0, *fs))
        np.testing.assert_array_equal(r[2][0], [[6.0]])
        assert [c[0] for c in m.calls] == [(1, 3), (2, 3), (1, 5)]
        await b.aclose()
    run(main())


class Gate:
    def __init__(self):
        self.ev = asyncio.Event()
        self.seen = []

    async def __call__(self, x):
        self.seen.append(x[:, 0].tolist())
        await self.ev.wait()
        return x + 1


def test_high_priority_goes_first_and_tops_up_with_normal_ones():
    async def main():
        g = Gate()
        b = Batcher(g, numpy_model=True, max_in_flight=1, max_batch_size=3)
        f0 = b(np.zeros((1, 2)))
        await asyncio.sleep(0)
        while not g.seen:
            await asyncio.sleep(0)
        normal = [b(np.full((1, 2), v)) for v in (1, 2, 3, 4)]
        high = [b(np.full((1, 2), v), priority=1) for v in (10, 11)]
        g.ev.set()
        await wait(asyncio.gather(f0, *normal, *high))
        # the second batch: both high requests, topped up with the oldest normal one
        assert g.seen == [[0.0], [10.0, 11.0, 1.0], [2.0, 3.0, 4.0]]
        st = b.statistics()
        assert st.high_priority == 2 and st.completed == 7
        await b.aclose()
    run(main())


def test_high_priority_of_another_shape_runs_in_its_own_batch_first():
    async def main():
        g = Gate()
        b = Batcher(g, numpy_model=True, max_in_flight=1, max_batch_size=4)
        f0 = b(np.zeros((1, 2)))
        while not g.seen:
            await asyncio.sleep(0)
        normal = [b(np.full((1, 2), v)) for v in (1, 2)]
        high = b(np.full((1, 3), 9.0), priority=1)
        g.ev.set()
        await wait(asyncio.gather(f0, *normal, high))
        assert g.seen == [[0.0], [9.0], [1.0, 2.0]]
        await b.aclose()
    run(main())


def test_cancelled_and_expired_high_priority_requests_never_run():
    async def main():
        g = Gate()
        b = Batcher(g, numpy_model=True, max_in_flight=1, max_batch_size=4)
        f0 = b(np.zeros((1, 2)))
        while not g.seen:
            await asyncio.sleep(0)
        gone = b(np.full((1, 2), 5.0), priority=1)
        late = b(np.full((1, 2), 6.0), priority=1, timeout=0.001)
        keep = b(np.full((1, 2), 7.0))
        gone.cancel()
        with pytest.raises(DeadlineExceeded):
            await wait(late)
        g.ev.set()
        await wait(asyncio.gather(f0, keep))
        assert g.seen == [[0.0], [7.0]]
        st = b.statistics()
        assert st.cancelled == 1 and st.expired == 1 and st.queue_depth == 0
        await b.aclose()
    run(main())


def test_numpy_model_with_bytes():
    async def main():
        def upper(x):
            return np.vectorize(lambda s: s.upper(), otypes=[object])(x)
        b = Batcher(upper, numpy_model=True, dtype=object)
        xs = [np.array([[b"ab", b"c"]], dtype=object), np.array([[b"d", b"ef"]], dtype=object)]
        r = await wait(asyncio.gather(*(b(x) for x in xs)))
        assert r[0].tolist() == [[b"AB", b"C"]] and r[1].tolist() == [[b"D", b"EF"]]
        await b.aclose()
    run(main())


def test_queue_and_compute_statistics():
    async def main():
        g = Gate()
        b = Batcher(g, numpy_model=True, max_in_flight=1)
        f0 = b(np.zeros((1, 2)))
        while not g.seen:
            await asyncio.sleep(0)
        fs = [b(np.ones((1, 2))) for _ in range(3)]
        g.ev.set()
        await wait(asyncio.gather(f0, *fs))
        st = b.statistics()
        assert st.queue_count == 4 and st.queue_sum_s >= 0
        assert st.queue_ms["p99"] >= st.queue_ms["p50"] >= 0
        assert st.compute_ms["p50"] is not None and st.compute_sum_s > 0
        assert st.batches == 2 and st.batch_size_histogram == {1: 1, 3: 1}
        assert st.last_batch_time > 0
        await b.aclose()
    run(main())


def test_several_inputs_padded_to_one_bucket_and_outputs_cropped():
    async def main():
        seen = []

        def model(tokens, mask, bias):
            seen.append((tokens.shape, mask.shape, bias.shape))
            return tokens * mask + bias[:, :1], mask.sum(axis=1, keepdims=True)
        b = Batcher(model, numpy_model=True, num_inputs=3, buckets=[4, 8], pad_axis=1,
                    sample_shape=[(None,), (None,), (2,)], dtype=["float32"] * 3,
                    max_batch_size=8)

        def req(n, v):
            return (np.full((1, n), v, np.float32), np.ones((1, n), np.float32),
                    np.full((1, 2), 10 * v, np.float32))
        rs = await wait(asyncio.gather(b(req(3, 1.0)), b(req(4, 2.0)), b(req(6, 3.0))))
        assert [r[0].shape for r in rs] == [(1, 3), (1, 4), (1, 6)]
        np.testing.assert_array_equal(rs[0][0], [[11.0] * 3])
        np.testing.assert_array_equal(rs[2][0], [[33.0] * 6])
        assert [r[1].tolist() for r in rs] == [[[3.0]], [[4.0]], [[6.0]]]
        assert sorted(seen) == [((1, 8), (1, 8), (1, 2)), ((2, 4), (2, 4), (2, 2))]
        with pytest.raises(InvalidInput, match="lengths differ"):
            b((np.ones((1, 3), np.float32), np.ones((1, 4), np.float32),
               np.ones((1, 2), np.float32)))
        with pytest.raises(InvalidInput, match="largest bucket 8"):
            b(req(9, 1.0))
        await b.aclose()
        with pytest.raises(ValueError, match="no input has a variable axis"):
            Batcher(model, num_inputs=2, buckets=[4], sample_shape=[(2,), (2,)])
    run(main())
