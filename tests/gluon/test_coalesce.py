"""Coroutines calling one hybridized net while the workers are busy: calls
that find the same call still queued join it and run as one batch. The
workers are held with gated ops, so the joins are forced, not timed."""
import asyncio
import threading

import numpy as np
import pytest

import aiond as mx
from aiond import nd
from aiond.base import MXNetError
from aiond.gluon import nn
from aiond.ndarray import _coalesce

from ._dense_mlp import CPU, mlp
from ._dense_mlp import arr as _arr
from ._dense_mlp import ref as _ref


def _mlp():
    return mlp(32)


def _inputs(n, rows=1):
    rs = np.random.RandomState(n * 7 + rows)
    return [rs.uniform(-1, 1, (rows, 8)).astype(np.float32) for _ in range(n)]


class _Held:
    """Every worker busy in a gated op until ``release()``."""

    def __init__(self):
        eng = mx.engine._engine
        n = mx.engine.statistics().workers
        self.gate = threading.Event()
        started = threading.Semaphore(0)
        self.arrays = [nd.zeros((1,), ctx=CPU) for _ in range(n)]

        def hold():
            started.release()
            self.gate.wait(30)
        for a in self.arrays:
            eng.push(hold, (), (a._st.var,), "gate")
        for _ in range(n):
            assert started.acquire(timeout=30)

    def release(self):
        self.gate.set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _joined():
    return mx.engine.statistics().ops_joined


def _calls(net, xs):
    """From a coroutine, with the workers held: the outputs (awaited after
    the release) and how many calls joined another."""
    async def go():
        with _Held():
            before = _joined()
            ys = [net(_arr(x)) for x in xs]
            joined = _joined() - before
        return [await y.read() for y in ys], joined
    return asyncio.run(go())


def _check_like_lone_calls(net, xs, joins, rtol=1e-5, atol=1e-6):
    """``xs`` called from a coroutine with the workers held: ``joins`` of
    the calls join another, and each result is a lone call's (one by one on
    a plain thread, never batched)."""
    lone = [net(_arr(x)).asnumpy() for x in xs]
    outs, joined = _calls(net, xs)
    assert joined == joins
    for out, one in zip(outs, lone):
        assert out.shape == one.shape
        np.testing.assert_allclose(out, one, rtol=rtol, atol=atol)
    return outs


def test_queued_calls_join_and_get_their_own_rows():
    net = _mlp()
    xs = _inputs(10)
    outs = _check_like_lone_calls(net, xs, 9)      # calls 2..10 join call 1
    for x, out in zip(xs, outs):
        assert out.shape == (1, 4)
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [3, 7, 13])
def test_batches_of_several_rows_and_odd_sizes(n):
    net = _mlp()
    xs = _inputs(n, rows=3)
    net(_arr(xs[0])).wait_to_read()
    outs, joined = _calls(net, xs)
    assert joined == n - 1
    for x, out in zip(xs, outs):
        assert out.shape == (3, 4)
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


def test_no_joins_from_plain_threads_or_when_turned_off(monkeypatch):
    net = _mlp()
    xs = _inputs(4)
    before = _joined()
    for x in xs:
        np.testing.assert_allclose(net(_arr(x)).asnumpy(), _ref(net, x), rtol=1e-5,
                                   atol=1e-6)
    assert _joined() == before
    net.hybridize(coalesce=False)             # this block only
    outs, joined = _calls(net, xs)
    assert joined == 0
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("AIOND_COALESCE", "0")   # every block
    net2 = _mlp()
    outs, joined = _calls(net2, xs)
    assert joined == 0
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net2, x), rtol=1e-5, atol=1e-6)


class _DenseThen(mx.gluon.HybridBlock):
    """Dense(4), then ``then(F, y)``."""

    def __init__(self, then):
        super().__init__()
        self.then = then
        with self.name_scope():
            self.d = nn.Dense(4, in_units=8)

    def hybrid_forward(self, F, x):
        return self.then(F, self.d(x))


@pytest.mark.parametrize("then, batches", [
    # each row minus the batch mean: mixes rows
    (lambda F, y: F.broadcast_sub(y, F.mean(y, axis=0, keepdims=True)), False),
    (lambda F, y: F.softmax(y, axis=0), False),
    (lambda F, y: F.softmax(y, axis=-1), True),
    (lambda F, y: y.reshape((1, -1)), False),
    (lambda F, y: y.reshape((0, 2, 2)), True),
])
def test_only_graphs_that_keep_rows_apart_are_batched(then, batches):
    net = _DenseThen(then)
    net.initialize(ctx=CPU)
    net.hybridize()
    _check_like_lone_calls(net, _inputs(5, rows=2), 4 if batches else 0)


def test_a_conv_net_is_batched():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, in_channels=1, activation="relu"), nn.MaxPool2D(2),
                nn.BatchNorm(in_channels=4), nn.Flatten(), nn.Dense(3))
    net.initialize(mx.init.Xavier(), ctx=CPU)
    net.hybridize()
    xs = [np.random.RandomState(i).uniform(-1, 1, (1, 1, 10, 10)).astype(np.float32)
          for i in range(6)]
    _check_like_lone_calls(net, xs, 5, atol=1e-5)


def test_a_weight_update_between_calls_is_seen_by_the_later_call():
    net = _mlp()
    x1, x2 = _inputs(2)
    w0 = net[0].weight.data().asnumpy()
    net(_arr(x1)).wait_to_read()

    async def go():
        with _Held():
            before = _joined()
            y1 = net(_arr(x1))
            net[0].weight.set_data(_arr(w0 * 2))   # pushed behind y1's read
            y2 = net(_arr(x2))
            joined = _joined() - before
        return await y1.read(), await y2.read(), joined
    o1, o2, joined = asyncio.run(go())
    assert joined == 0
    w, b = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    np.testing.assert_allclose(w, w0 * 2)
    w1, b1 = net[1].weight.data().asnumpy(), net[1].bias.data().asnumpy()

    def fwd(x, w):
        return np.maximum(x @ w.T + b, 0) @ w1.T + b1
    np.testing.assert_allclose(o1, fwd(x1, w0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o2, fwd(x2, w0 * 2), rtol=1e-5, atol=1e-6)


def test_an_input_written_after_joining_waits_for_the_batch():
    net = _mlp()
    x1, x2 = _inputs(2)
    net(_arr(x1)).wait_to_read()

    async def go():
        with _Held():
            y1 = net(_arr(x1))
            a2 = _arr(x2)
            y2 = net(a2)
            a2[:] = 0                      # queued behind the batch that reads a2
        return await y1.read(), await y2.read(), await a2.read()
    o1, o2, a2 = asyncio.run(go())
    np.testing.assert_allclose(o2, _ref(net, x2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o1, _ref(net, x1), rtol=1e-5, atol=1e-6)
    assert not a2.any()


def test_a_failing_batch_fails_every_call_in_it_and_the_next_calls_work(monkeypatch):
    net = _mlp()
    xs = _inputs(4)
    net(_arr(xs[0])).wait_to_read()

    def boom(self, plan, args, members):
        raise ValueError("boom in a batch of %d" % len(members))
    monkeypatch.setattr(_coalesce.Coalescer, "run", boom)

    async def go():
        with _Held():
            ys = [net(_arr(x)) for x in xs]
        errors = []
        for y in ys:
            with pytest.raises(MXNetError, match="boom in a batch of 4") as e:
                await y.read()
            errors.append(str(e.value))
        return errors
    errors = asyncio.run(go())
    assert len(errors) == 4
    monkeypatch.undo()
    nd.waitall()               # the reads reported it: not again
    outs, _ = _calls(net, xs)
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


def test_many_coroutines_and_threads_at_once_get_their_own_answers():
    net = _mlp()
    xs = _inputs(32)
    refs = [_ref(net, x) for x in xs]
    net(_arr(xs[0])).wait_to_read()
    wrong = []

    async def client(k):
        for i in range(30):
            j = (k * 5 + i) % 32
            out = await net(_arr(xs[j])).read()
            if not np.allclose(out, refs[j], rtol=1e-5, atol=1e-6):
                wrong.append(j)
            if i % 3 == 0:
                await asyncio.sleep(0)

    def loop_thread():
        async def main():
            await asyncio.gather(*(client(k) for k in range(16)))
        asyncio.run(main())

    def plain_thread(k):
        for i in range(30):
            j = (k + i) % 32
            if not np.allclose(net(_arr(xs[j])).asnumpy(), refs[j], rtol=1e-5, atol=1e-6):
                wrong.append(j)
    threads = [threading.Thread(target=loop_thread) for _ in range(3)]
    threads += [threading.Thread(target=plain_thread, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert wrong == []


def test_event_loops_on_several_threads_join_at_once():
    # four loops call at once while the workers are held: joins race across
    # threads, the batches pass 64 calls and new sizes get their plans
    net = _mlp()
    xs = _inputs(80)
    net(_arr(xs[0])).wait_to_read()
    held = _Held()
    before = _joined()
    start = threading.Barrier(4)
    outs = {}

    def loop_thread(k):
        async def main():
            start.wait()
            ys = []
            for i in range(20):
                ys.append((k * 20 + i, net(_arr(xs[k * 20 + i]))))
                if i % 5 == 4:
                    await asyncio.sleep(0)
            return ys
        outs[k] = asyncio.run(main())
    threads = [threading.Thread(target=loop_thread, args=(k,)) for k in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        joined = _joined() - before
    finally:
        held.release()
    ops = 80 - joined
    assert 2 <= ops <= 40       # no op takes over 64 calls; most calls joined
    for k in range(4):
        for j, y in outs[k]:
            np.testing.assert_allclose(y.asnumpy(), _ref(net, xs[j]), rtol=1e-5, atol=1e-6)


def test_a_big_model_batches_fewer_calls(monkeypatch):
    # each call's buffers count against the batch's bytes
    net = _mlp()
    net(_arr(_inputs(1)[0])).wait_to_read()
    plan = net._fast.plan
    monkeypatch.setattr(_coalesce, "MAX_BATCH_BYTES", 3 * (plan.workspace_bytes + plan.nbytes))
    net._fast = None
    xs = _inputs(7)
    net(_arr(xs[0])).wait_to_read()          # a new fast path, with the new bound
    outs, joined = _calls(net, xs)
    assert joined == 7 - 3                        # three ops: 3 + 3 + 1 calls
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


def test_model_zoo_resnet_is_batched_and_matches_lone_calls():
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize(mx.init.Xavier(), ctx=CPU)
    net.hybridize()
    xs = [np.random.RandomState(i).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
          for i in range(5)]
    _check_like_lone_calls(net, xs, 4, rtol=1e-4, atol=1e-5)


def test_reads_taken_before_the_batch_runs_are_answered_by_it():
    net = _mlp()
    xs = _inputs(6)
    net(_arr(xs[0])).wait_to_read()

    async def go():
        with _Held():
            ys = [net(_arr(x)) for x in xs]
            before = mx.engine.statistics().ops_pushed
            reads = [y.read() for y in ys]          # attached to the batch: no read ops
            pushed = mx.engine.statistics().ops_pushed - before
            ys[0] += 1                              # pushed after the read: not seen by it
            late = ys[0].read()                     # pushed after the write: sees it
            extra = net(_arr(xs[1]))
            extra += 2                              # pushed before its read: seen by it
            seen = extra.read()
        return [await r for r in reads], await late, pushed, await seen
    outs, late, pushed, seen = asyncio.run(go())
    assert pushed == 0
    np.testing.assert_allclose(seen, _ref(net, xs[1]) + 2, rtol=1e-5, atol=1e-6)
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(late, _ref(net, xs[0]) + 1, rtol=1e-5, atol=1e-6)


def test_a_batch_hands_its_answers_to_the_loop_in_one_put(monkeypatch):
    # one lock round trip and one wake-up per batch, not one per request
    from aiond.ndarray.ndarray import _Inbox
    puts, wakes = [], []
    real_many, real_wake = _Inbox.put_many, _Inbox._wake
    monkeypatch.setattr(_Inbox, "put_many",
                        lambda self, pairs: (puts.append(len(pairs)), real_many(self, pairs)))
    monkeypatch.setattr(_Inbox, "_wake", lambda self: (wakes.append(1), real_wake(self)))
    net = _mlp()
    xs = _inputs(9)
    net(_arr(xs[0])).wait_to_read()

    async def go():
        with _Held():
            ys = [net(_arr(x)) for x in xs]
            reads = [y.read() for y in ys]          # attached to the batch
        return [await r for r in reads]
    outs = asyncio.run(go())
    assert puts == [9]
    assert wakes == [1]
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


def test_attached_reads_of_a_failing_batch_raise(monkeypatch):
    net = _mlp()
    xs = _inputs(3)
    net(_arr(xs[0])).wait_to_read()

    def boom(self, plan, args, members):
        raise ValueError("boom for %d calls" % len(members))
    monkeypatch.setattr(_coalesce.Coalescer, "run", boom)

    async def go():
        with _Held():
            reads = [net(_arr(x)).read() for x in xs]
        for r in reads:
            with pytest.raises(MXNetError, match="boom for 2 calls"):   # the first run (2 + 1)
                await r
    asyncio.run(go())
    monkeypatch.undo()
    nd.waitall()


def test_a_cancelled_attached_read_leaves_the_others():
    net = _mlp()
    xs = _inputs(3)
    net(_arr(xs[0])).wait_to_read()

    async def go():
        with _Held():
            ys = [net(_arr(x)) for x in xs]
            tasks = [asyncio.ensure_future(y.read()) for y in ys]
            await asyncio.sleep(0)
            tasks[1].cancel()
        res = await asyncio.gather(*tasks, return_exceptions=True)
        return res, await ys[1].read()
    res, again = asyncio.run(go())
    assert isinstance(res[1], asyncio.CancelledError)
    for k in (0, 2):
        np.testing.assert_allclose(res[k], _ref(net, xs[k]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again, _ref(net, xs[1]), rtol=1e-5, atol=1e-6)


def test_an_attached_read_of_a_batch_skipped_for_a_poisoned_input_raises():
    net = _mlp()
    xs = _inputs(2)
    net(_arr(xs[0])).wait_to_read()

    def bad():
        raise RuntimeError("the producer failed")

    async def go():
        with _Held():
            x = _arr(xs[0])
            mx.engine.push(bad, (), (x,), name="producer")   # queued: x is poisoned later
            y = net(x)                                        # a batch that will never run
            r = y.read()
        with pytest.raises(MXNetError, match="the producer failed"):
            await asyncio.wait_for(r, 30)
        return await net(_arr(xs[1])).read()
    out = asyncio.run(go())
    np.testing.assert_allclose(out, _ref(net, xs[1]), rtol=1e-5, atol=1e-6)
    try:
        nd.waitall()
    except MXNetError:
        pass


def test_no_call_joins_a_batch_that_waits_for_another_op():
    # joining must not make a call wait for work it does not depend on
    net = _mlp()
    xs = _inputs(3)
    net(_arr(xs[0])).wait_to_read()
    gate = threading.Event()

    async def go():
        with _Held():
            x0 = _arr(xs[0])
            mx.engine.push(lambda: gate.wait(30), (), (x0,), name="slow producer")
            before = _joined()
            ys = [net(x0)] + [net(_arr(x)) for x in xs[1:]]
            joined = _joined() - before
        late = ys[0].read()
        outs = [await y.read() for y in ys[1:]]     # do not wait for the producer
        gate.set()
        return joined, [await late] + outs
    joined, outs = asyncio.run(go())
    assert joined == 1          # the third call joins the second, not the first
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attached", [True, False])
def test_a_finished_batch_leaves_nothing_for_the_cyclic_collector(attached, cyclic_garbage):
    """A server makes thousands of batches a second: each must be freed by
    reference counting. A cycle per batch (the op keeps its kernel, the
    group; the group its op; an attached read's callback the group) left
    every member's buffers and vars to the collector, whose full passes
    stalled the event loop ~20 ms at a time."""
    net = _mlp()
    xs = _inputs(6)
    net(_arr(xs[0])).wait_to_read()

    async def go():
        with _Held():
            before = _joined()
            ys = [net(_arr(x)) for x in xs]
            joined = _joined() - before
            reads = [y.read() for y in ys] if attached else None
        if reads is None:
            reads = [y.read() for y in ys]
        return [await r for r in reads], joined
    # the net's coalescer keeps its last batch: the first is the one checked
    (outs, joined), left = cyclic_garbage(lambda: [asyncio.run(go()) for _ in range(2)][0])
    assert joined == len(xs) - 1
    for x, out in zip(xs, outs):
        np.testing.assert_allclose(out, _ref(net, x), rtol=1e-5, atol=1e-6)
    assert left == []
