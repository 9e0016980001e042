"""The Batcher: batching policy, bounds, deadlines, cancellation, error
isolation, padding, statistics. Orderings are forced with gates (a model
whose forward waits on an asyncio.Event), never with sleeps."""
import asyncio
import subprocess
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.serve import (Batcher, BatcherClosed, DeadlineExceeded, InvalidInput, ModelError,
                         Overloaded)

pytestmark = pytest.mark.timeout(60)

TIMEOUT = 10.0


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 3 * TIMEOUT))


async def wait(aw, what="it"):
    """``await aw`` with a deadline (DeadlineExceeded is a TimeoutError too:
    not asyncio.wait_for, which could not tell them apart)."""
    fut = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait({fut}, timeout=TIMEOUT)
    if not done:
        fut.cancel()
        raise AssertionError("timed out after %ss waiting for %s" % (TIMEOUT, what))
    return fut.result()


class GatedModel:
    """``2 * x + 1`` computed by the engine; call i waits for ``gates[i]``
    (open unless closed by the test) and sets ``started[i]`` first."""

    def __init__(self, closed=(), fail_if=None):
        self.calls = []          # shape of each batch, in call order
        self.started = {}
        self.gates = {}
        self.closed = set(closed)
        self.fail_if = fail_if   # row predicate (numpy row -> bool): such rows fail the call
        self.running = 0
        self.max_running = 0

    def gate(self, i):
        if i not in self.gates:
            ev = asyncio.Event()
            if i not in self.closed:
                ev.set()
            self.gates[i] = ev
        return self.gates[i]

    def start(self, i):
        if i not in self.started:
            self.started[i] = asyncio.Event()
        return self.started[i]

    async def __call__(self, x):
        i = len(self.calls)
        self.calls.append(x.shape)
        self.start(i).set()
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await self.gate(i).wait()
        finally:
            self.running -= 1
        if self.fail_if is not None:
            rows = await x.read()
            bad = [k for k in range(rows.shape[0]) if self.fail_if(rows[k])]
            if bad:
                raise ValueError("rows %s hold a NaN" % bad)
        return x * 2 + 1


def req(v, rows=1, width=3):
    return np.full((rows, width), float(v), dtype=np.float32)


# ---------------------------------------------------------------- batching
def test_concurrent_requests_are_batched_and_answered_in_order():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=64, max_in_flight=1)
        first = b(req(0))
        await wait(m.start(0).wait(), "the first batch")
        rest = [b(req(i, rows=1 + i % 3)) for i in range(1, 20)]
        assert b.statistics().queue_depth == 19
        m.gate(0).set()
        outs = await wait(asyncio.gather(first, *rest))
        for i, o in enumerate(outs):
            np.testing.assert_array_equal(o, 2 * req(i, rows=1 + i % 3 if i else 1) + 1)
        assert [c[0] for c in m.calls] == [1, sum(1 + i % 3 for i in range(1, 20))]
        st = b.statistics()
        assert st.batches == 2 and st.completed == 20 and st.queue_depth == 0
        assert st.batch_size_histogram == {1: 1, m.calls[1][0]: 1}
        await b.aclose()
    run(main())


def test_idle_model_runs_at_once_without_waiting_for_max_wait():
    async def main():
        b = Batcher(GatedModel(), max_wait=3600.0)
        out = await wait(b(req(5)), "a lone request (max_wait must not apply when idle)")
        np.testing.assert_array_equal(out, 11 * np.ones((1, 3), np.float32))
        await b.aclose()
    run(main())


def test_busy_model_lets_the_next_batch_grow_until_full():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=4, max_wait=3600.0, max_in_flight=2)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        f1 = [b(req(1)) for _ in range(3)]
        for _ in range(5):                  # a free slot, but the batch is not full
            await asyncio.sleep(0)
        assert len(m.calls) == 1 and b.statistics().queue_depth == 3
        f1.append(b(req(1)))                # now it is: it runs next to batch 0
        await wait(m.start(1).wait(), "the full second batch")
        assert m.calls[1][0] == 4 and m.max_running == 2
        m.gate(0).set()
        await wait(asyncio.gather(f0, *f1))
        await b.aclose()
    run(main())


def test_partial_batch_runs_when_the_model_goes_idle():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=8, max_wait=3600.0, max_in_flight=2)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(1)) for _ in range(3)]
        m.gate(0).set()                     # idle again: the 3 queued run at once
        await wait(asyncio.gather(f0, *fs))
        assert [c[0] for c in m.calls] == [1, 3]
        await b.aclose()
    run(main())


def test_max_wait_bounds_the_wait_while_busy():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=64, max_wait=0.01, max_in_flight=2)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        f1 = b(req(1))                      # batch 0 stays gated: only max_wait can start it
        np.testing.assert_array_equal(await wait(f1), 2 * req(1) + 1)
        assert [c[0] for c in m.calls] == [1, 1]
        m.gate(0).set()
        await wait(f0)
        await b.aclose()
    run(main())


def test_max_batch_size_splits_the_queue():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=4, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(i)) for i in range(1, 11)]
        m.gate(0).set()
        outs = await wait(asyncio.gather(*fs))
        assert [c[0] for c in m.calls] == [1, 4, 4, 2]
        for i, o in enumerate(outs, 1):
            np.testing.assert_array_equal(o, 2 * req(i) + 1)
        await wait(f0)
        await b.aclose()
    run(main())


def test_runtime_settings_apply_to_the_next_batch():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_batch_size=2, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(i)) for i in range(6)]
        b.set_max_batch_size(6)
        b.set_max_wait(0.0)
        assert b.max_batch_size == 6 and b.max_wait == 0.0
        m.gate(0).set()
        await wait(asyncio.gather(f0, *fs))
        assert [c[0] for c in m.calls] == [1, 6]
        with pytest.raises(ValueError, match="max_batch_size must be an integer >= 1"):
            b.set_max_batch_size(0)
        with pytest.raises(ValueError, match="max_wait must be a finite number"):
            b.set_max_wait(-1)
        await b.aclose()
    run(main())


def test_several_batches_in_flight():
    async def main():
        m = GatedModel(closed={0, 1})
        b = Batcher(m, max_batch_size=2, max_wait=0.0, max_in_flight=2)
        fs = [b(req(i)) for i in range(2)]
        await wait(m.start(0).wait())
        fs += [b(req(i)) for i in range(2, 4)]
        await wait(m.start(1).wait(), "a second batch while the first runs")
        fs += [b(req(i)) for i in range(4, 6)]
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(m.calls) == 2 and b.statistics().in_flight == 2   # max_in_flight holds
        m.gate(0).set()
        m.gate(1).set()
        outs = await wait(asyncio.gather(*fs))
        for i, o in enumerate(outs):
            np.testing.assert_array_equal(o, 2 * req(i) + 1)
        assert m.max_running == 2
        await b.aclose()
    run(main())


# ---------------------------------------------------------------- bounds
def test_full_queue_rejects_at_once_with_a_retry_after_hint():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_queue=3, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(i)) for i in range(3)]
        with pytest.raises(Overloaded, match=r"queue .* is full \(3 requests waiting\)") as ei:
            b(req(9))
        assert ei.value.retry_after > 0
        st = b.statistics()
        assert st.rejected == 1 and st.queue_depth == 3
        m.gate(0).set()
        await wait(asyncio.gather(f0, *fs))
        await wait(b(req(1)))               # room again
        await b.aclose()
    run(main())


def test_expired_requests_are_dropped_before_batching():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        late = b(req(1), timeout=0.02)
        ok = b(req(2), timeout=TIMEOUT)
        with pytest.raises(DeadlineExceeded, match="in the queue"):
            await wait(late)
        assert b.statistics().queue_depth == 1
        m.gate(0).set()
        np.testing.assert_array_equal(await wait(ok), 2 * req(2) + 1)
        assert [c[0] for c in m.calls] == [1, 1]     # the expired one never ran
        assert b.statistics().expired == 1
        await wait(f0)
        await b.aclose()
    run(main())


def test_deadline_inside_a_running_batch_fails_only_that_request():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1, timeout=None)
        f0 = b(req(0), timeout=0.02)
        f1 = b(req(1))
        await wait(m.start(0).wait())
        with pytest.raises(DeadlineExceeded, match="while its batch ran"):
            await wait(f0)
        m.gate(0).set()
        np.testing.assert_array_equal(await wait(f1), 2 * req(1) + 1)
        await b.aclose()
    run(main())


def test_default_timeout_and_past_deadline():
    async def main():
        import time
        b = Batcher(GatedModel(), timeout=5.0)
        await wait(b(req(1)))
        with pytest.raises(DeadlineExceeded, match="had passed"):
            b(req(1), deadline=time.monotonic() - 1)
        await b.aclose()
    run(main())


# ---------------------------------------------------------- cancellation
def test_cancelled_request_leaves_the_queue():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fa, fb, fc = b(req(1)), b(req(2)), b(req(3))
        fb.cancel()
        await asyncio.sleep(0)              # the done callback runs on the next step
        st = b.statistics()
        assert st.queue_depth == 2 and st.cancelled == 1
        m.gate(0).set()
        a, c = await wait(asyncio.gather(fa, fc))
        np.testing.assert_array_equal(a, 2 * req(1) + 1)
        np.testing.assert_array_equal(c, 2 * req(3) + 1)
        assert [s[0] for s in m.calls] == [1, 2]
        await wait(f0)
        await b.aclose()
    run(main())


def test_cancelled_task_inside_a_running_batch_does_not_disturb_the_others():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        tasks = [asyncio.ensure_future(b(req(i))) for i in range(4)]
        await wait(m.start(0).wait())
        tasks[1].cancel()
        m.gate(0).set()
        res = await wait(asyncio.gather(*tasks, return_exceptions=True))
        assert isinstance(res[1], asyncio.CancelledError)
        for i in (0, 2, 3):
            np.testing.assert_array_equal(res[i], 2 * req(i) + 1)
        assert b.statistics().cancelled == 1
        await b.aclose()
    run(main())


# ---------------------------------------------------------------- errors
def test_one_bad_input_fails_only_its_request_with_the_reason():
    async def main():
        m = GatedModel(closed={0}, fail_if=lambda row: bool(np.isnan(row).any()))
        b = Batcher(m, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(i)) for i in range(1, 6)]
        bad = b(req(float("nan")))
        m.gate(0).set()
        outs = await wait(asyncio.gather(*fs))
        for i, o in enumerate(outs, 1):
            np.testing.assert_array_equal(o, 2 * req(i) + 1)
        with pytest.raises(ModelError, match="rows \\[0\\] hold a NaN") as ei:
            await wait(bad)
        assert isinstance(ei.value.__cause__, ValueError)
        assert b.statistics().failed == 1
        await wait(f0)
        await wait(b(req(7)))           # still serving
        await b.aclose()
    run(main())


def test_engine_failure_is_isolated_too():
    """A failure inside the engine (surfacing at ``read()``) is isolated like
    one raised by the model call."""
    def model(x):
        if x.shape[1] == 3:
            return x + 1
        return mx.nd.dot(x, mx.nd.ones((2, 2)))   # rows of width 4 do not fit

    async def main():
        b = Batcher(model)
        good, bad = b(req(1)), b(req(1, width=4))
        np.testing.assert_array_equal(await wait(good), req(1) + 1)
        with pytest.raises(ModelError, match="model failed on this request"):
            await wait(bad)
        await b.aclose()
    run(main())


def test_invalid_inputs_are_refused_at_submission():
    async def main():
        b = Batcher(GatedModel(), sample_shape=(3,), dtype="float32", max_batch_size=4)
        with pytest.raises(InvalidInput, match=r"expected shape \(n, 3\) \(n rows of \(3,\)\), "
                                               r"got \(1, 5\)"):
            b(np.zeros((1, 5), np.float32))
        with pytest.raises(InvalidInput, match="expected an array of numbers"):
            b(np.array([["a", "b", "c"]]))
        with pytest.raises(InvalidInput, match=r"expected an array of numbers \(dtype float32\), got dtype complex64"):
            b(np.zeros((1, 3), np.complex64))
        with pytest.raises(InvalidInput, match="at most max_batch_size=4 rows, got 5"):
            b(np.zeros((5, 3), np.float32))
        with pytest.raises(InvalidInput, match="first axis is the batch axis"):
            b(np.float32(1))
        out = await wait(b(np.zeros((2, 3), np.int64)))     # safe casts are fine
        assert out.dtype == np.float32
        assert b.statistics().invalid == 5
        await b.aclose()
    run(main())


def test_model_returning_the_wrong_rows_fails_every_request():
    async def main():
        b = Batcher(lambda x: mx.nd.ones((7, 2)))
        f1, f2 = b(req(1)), b(req(2))
        for f in (f1, f2):
            with pytest.raises(ModelError, match="first axis must be the batch axis"):
                await wait(f)
        await b.aclose()
    run(main())


# --------------------------------------------------------- shapes, padding
def test_padding_to_buckets_batches_by_bucket_and_crops_back():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, buckets=[4, 8, 16], pad_axis=1, pad_value=-1, max_in_flight=1)
        f0 = b(np.zeros((1, 2), np.float32))
        await wait(m.start(0).wait())
        lens = [3, 9, 4, 7, 16, 1]
        fs = [b(np.arange(n, dtype=np.float32)[None] + 1) for n in lens]
        with pytest.raises(InvalidInput, match="more than the largest bucket 16"):
            b(np.zeros((1, 17), np.float32))
        m.gate(0).set()
        outs = await wait(asyncio.gather(*fs))
        for n, o in zip(lens, outs):
            np.testing.assert_array_equal(o, 2 * (np.arange(n, dtype=np.float32)[None] + 1) + 1)
        # one batch per bucket, in the order of each bucket's first request
        assert m.calls[1:] == [(3, 4), (2, 16), (1, 8)]
        await wait(f0)
        await b.aclose()
    run(main())


def test_different_shapes_are_batched_separately():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        fs = [b(req(i, width=3 + i % 2)) for i in range(6)]
        m.gate(0).set()
        outs = await wait(asyncio.gather(*fs))
        for i, o in enumerate(outs):
            np.testing.assert_array_equal(o, 2 * req(i, width=3 + i % 2) + 1)
        assert m.calls[1:] == [(3, 3), (3, 4)]
        await wait(f0)
        await b.aclose()
    run(main())


def test_ndarray_inputs_and_multi_output_models():
    def model(x):
        return x + 1, mx.nd.sum(x, axis=1)

    async def main():
        b = Batcher(model)
        outs = await wait(asyncio.gather(*(b(mx.nd.array(req(i, rows=2))) for i in range(3)),
                                         b(req(7))))
        for i, (a, s) in enumerate(outs[:3]):
            np.testing.assert_array_equal(a, req(i, rows=2) + 1)
            np.testing.assert_array_equal(s, np.full(2, 3.0 * i, np.float32))
        np.testing.assert_array_equal(outs[3][0], req(7) + 1)
        await b.aclose()
    run(main())


# ------------------------------------------------------------ real models
def _mlp():
    from aiond.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(16, in_units=8, activation="relu"), nn.Dense(4, in_units=16))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    ws = [(layer.weight.data().asnumpy(), layer.bias.data().asnumpy()) for layer in net]
    return net, ws


def _np_mlp(ws, x):
    (w1, b1), (w2, b2) = ws
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def test_gluon_model_many_concurrent_requests_match_numpy():
    net, ws = _mlp()
    xs = np.random.RandomState(0).uniform(-1, 1, (100, 1, 8)).astype(np.float32)

    async def main():
        b = Batcher(net, max_batch_size=32, sample_shape=(8,), dtype="float32")
        outs = await wait(asyncio.gather(*(b(x) for x in xs)))
        for x, o in zip(xs, outs):
            np.testing.assert_allclose(o, _np_mlp(ws, x), rtol=1e-5, atol=1e-5)
        st = b.statistics()
        assert st.completed == 100 and max(st.batch_size_histogram) > 1
        assert st.latency_ms["p50"] is not None and st.latency_ms["p99"] >= st.latency_ms["p50"]
        await b.aclose()
    run(main())


def test_executor_and_symbol_models():
    net, ws = _mlp()
    data = mx.sym.var("data")
    sym = net(data)
    params = {p.name: p.data() for p in net.collect_params().values()}
    ex = sym.simple_bind(mx.cpu(), data=(4, 8), grad_req="null")
    for k, v in params.items():
        ex.arg_dict[k][:] = v
    xs = np.random.RandomState(1).uniform(-1, 1, (7, 3, 8)).astype(np.float32)

    async def main():
        b = Batcher(ex, max_batch_size=16)          # an Executor is wrapped
        outs = await wait(asyncio.gather(*(b(x) for x in xs)))
        for x, o in zip(xs, outs):
            np.testing.assert_allclose(o, _np_mlp(ws, x), rtol=1e-5, atol=1e-5)
        await b.aclose()
    run(main())


# -------------------------------------------------------------- lifecycle
def test_aclose_drains_the_queue_and_refuses_new_requests():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        fs = [b(req(i)) for i in range(3)]
        await wait(m.start(0).wait())
        closing = asyncio.ensure_future(b.aclose())
        await asyncio.sleep(0)
        with pytest.raises(BatcherClosed, match="shutting down"):
            b(req(9))
        m.gate(0).set()
        await wait(closing)
        for i, f in enumerate(fs):
            np.testing.assert_array_equal(f.result(), 2 * req(i) + 1)
    run(main())


def test_aclose_without_drain_fails_the_queued():
    async def main():
        m = GatedModel(closed={0})
        b = Batcher(m, max_in_flight=1)
        f0 = b(req(0))
        await wait(m.start(0).wait())
        f1 = b(req(1))
        closing = asyncio.ensure_future(b.aclose(drain=False))
        await asyncio.sleep(0)
        with pytest.raises(BatcherClosed):
            await wait(f1)
        m.gate(0).set()
        await wait(closing)
        np.testing.assert_array_equal(f0.result(), 2 * req(0) + 1)
    run(main())


def test_one_batcher_per_loop_and_bad_options():
    b = Batcher(GatedModel())

    async def one():
        return await b(req(1))
    run(one())
    with pytest.raises(RuntimeError, match="another event loop"):
        run(one())
    with pytest.raises(TypeError, match="callable"):
        Batcher(42)
    with pytest.raises(ValueError, match="max_queue must be an integer >= 1"):
        Batcher(GatedModel(), max_queue=0)
    with pytest.raises(ValueError, match="pad_axis must be >= 1"):
        Batcher(GatedModel(), buckets=[4], pad_axis=0)


def test_import_is_light():
    code = ("import sys, aiond, aiond.serve; from aiond.serve import Batcher; "
            "import aiond.serve.protocol, aiond.serve.repository; "
            "bad = [m for m in ('starlette', 'uvicorn', 'httpx', 'grpc', 'google.protobuf', "
            "'tritonclient') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    code = "import sys, aiond; assert 'aiond.serve' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
