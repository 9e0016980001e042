"""Bulk segments: many pushes, one engine op - orderings forced with gates."""
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.engine.segments import TraceError

from .gates import Gate, Recorder, clean_engine, marker, wait_for  # noqa: F401

pytestmark = pytest.mark.timeout(60)
E = mx.engine.get()


def test_segment_pushes_one_op_and_computes_the_same():
    a = mx.nd.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    b = mx.nd.ones((3, 4)) * 2
    mx.nd.waitall()
    before = mx.engine.statistics()
    with mx.engine.segment():
        c = a + b
        d = c * 3
        e = mx.nd.dot(d, d.T)
        f = mx.nd.relu(e - 500)
    after = mx.engine.statistics()
    pushed = (after.ops_pushed + after.ops_inline) - (before.ops_pushed + before.ops_inline)
    assert pushed == 1
    an = np.arange(12, dtype=np.float32).reshape(3, 4)
    dn = (an + 2) * 3
    np.testing.assert_allclose(f.asnumpy(), np.maximum(dn @ dn.T - 500, 0), rtol=1e-6)


def test_segment_size_limit_splits_the_block():
    a = mx.nd.ones((4,))
    mx.nd.waitall()
    before = mx.engine.statistics()
    with mx.engine.segment(3):
        x = a
        for _ in range(7):
            x = x + 1
    after = mx.engine.statistics()
    assert (after.ops_pushed + after.ops_inline) - (before.ops_pushed + before.ops_inline) == 3
    np.testing.assert_array_equal(x.asnumpy(), np.full(4, 8.0))


def test_members_wait_for_earlier_writes_of_other_threads_ops():
    """A segment reading a var a gate writes waits for the gate; an
    independent op does not."""
    rec = Recorder()
    src = mx.nd.zeros((4,))
    with Gate("gate", record=rec, body=lambda: src._st.get().__setitem__(slice(None), 5)) as g:
        g.push(writes=[src])
        g.wait_started()
        with mx.engine.segment():
            y = src + 1
            z = y * 2
        other = mx.nd.ones((2,)) + 1
        np.testing.assert_array_equal(other.asnumpy(), [2, 2])   # not held by the gate
        assert not z._st.var.version
    np.testing.assert_array_equal(z.asnumpy(), np.full(4, 12.0))


def test_wait_inside_a_segment_pushes_it_first():
    a = mx.nd.ones((3,))
    with mx.engine.segment():
        b = a * 4
        v = b.asnumpy()          # must not deadlock: the segment is pushed first
        c = b + 1
    np.testing.assert_array_equal(v, [4, 4, 4])
    np.testing.assert_array_equal(c.asnumpy(), [5, 5, 5])


def test_a_segment_of_one_op_is_that_op():
    """A one-op segment is pushed as its member (no wrapper op): counted
    once, held by a gate like any op, the Opr its push returned is the one
    that completes, and a failure names the op and the user's line."""
    a = mx.nd.ones((3,))
    mx.nd.waitall()
    before = mx.engine.statistics()
    with mx.engine.segment():
        c = a + 1
    after = mx.engine.statistics()
    assert (after.ops_pushed + after.ops_inline) - (before.ops_pushed + before.ops_inline) == 1
    np.testing.assert_array_equal(c.asnumpy(), [2, 2, 2])

    with mx.engine.segment():
        opr = E.push(lambda: 42, (), (), "answer")
    E.wait_opr(opr, "the test")
    assert opr.done and opr.result == 42

    src = mx.nd.zeros((4,))
    with Gate("gate", body=lambda: src._st.get().__setitem__(slice(None), 5)) as g:
        g.push(writes=[src])
        g.wait_started()
        with mx.engine.segment():
            y = src + 1
        assert not y._st.var.version        # held behind the gate
    np.testing.assert_array_equal(y.asnumpy(), np.full(4, 6.0))

    with mx.engine.segment():
        bad = mx.nd.linalg.potrf(-mx.nd.ones((2, 2)))
    with pytest.raises(mx.base.MXNetError) as ei:
        bad.asnumpy()
    assert "potrf" in str(ei.value) and "test_segments.py" in str(ei.value)


def test_a_failing_member_poisons_only_what_depends_on_it():
    a = mx.nd.ones((2, 2))
    with mx.engine.segment():
        bad = mx.nd.linalg.potrf(-mx.nd.ones((2, 2)))      # not positive definite
        ok = a + 1
        dep = bad * 2
        after = ok * 3
    np.testing.assert_array_equal(ok.asnumpy(), np.full((2, 2), 2.0))
    np.testing.assert_array_equal(after.asnumpy(), np.full((2, 2), 6.0))
    with pytest.raises(mx.base.MXNetError) as ei:
        dep.asnumpy()
    msg = str(ei.value)
    assert "potrf" in msg and "test_segments.py" in msg     # the op and the user's line
    with pytest.raises(mx.base.MXNetError):
        bad.asnumpy()
    # the poisoned buffer is written again by a later op: it recovers
    dep[:] = 1
    np.testing.assert_array_equal(dep.asnumpy(), np.ones((2, 2)))


def test_segment_reading_a_poisoned_input_fails_only_its_dependants():
    bad = mx.nd.linalg.potrf(-mx.nd.ones((2, 2)))
    good = mx.nd.ones((2,))
    with mx.engine.segment():
        x = bad + 1
        y = good + 1
    np.testing.assert_array_equal(y.asnumpy(), [2, 2])
    with pytest.raises(mx.base.MXNetError, match="potrf"):
        x.asnumpy()


def test_await_read_of_a_member():
    import asyncio
    a = mx.nd.ones((3,))

    async def main():
        with mx.engine.segment():
            b = a + 41
            fut = b.read()
        return await fut
    np.testing.assert_array_equal(asyncio.run(main()), [42, 42, 42])


def test_ops_with_their_own_executor_flush_the_segment_first():
    rec = Recorder()
    a = mx.nd.zeros((2,))
    with mx.engine.segment():
        b = a + 1
        mx.engine.push(marker(rec, "cpu-member"), reads=[b], writes=[], name="m1")

        async def k():
            rec("async")
        mx.engine.push(k, reads=[b], writes=[], name="async", executor="async")
        mx.engine.push(marker(rec, "after"), reads=[b], writes=[], name="m2")
    mx.nd.waitall()
    log = rec.snapshot()
    assert sorted(log) == ["after", "async", "cpu-member"]
    assert log.index("cpu-member") < log.index("after")


def test_many_threads_pushing_segments_at_once():
    x = mx.nd.zeros((64,))
    n_threads, n_iter = 6, 40
    errors = []
    start = threading.Event()

    def worker():
        try:
            wait_for(start)
            for _ in range(n_iter):
                with mx.engine.segment():
                    x[:] = x + 1
                    y = x * 1
                    y.wait_to_read()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=worker) for _ in range(n_threads)]
    for t in ts:
        t.start()
    start.set()
    for t in ts:
        t.join(30)
    assert not errors
    np.testing.assert_array_equal(x.asnumpy(), np.full(64, n_threads * n_iter))


def test_nested_segments_join_the_outer_one():
    a = mx.nd.ones((2,))
    mx.nd.waitall()
    before = mx.engine.statistics()
    with mx.engine.segment():
        b = a + 1
        with mx.engine.segment():
            c = b + 1
        d = c + 1
    after = mx.engine.statistics()
    assert (after.ops_pushed + after.ops_inline) - (before.ops_pushed + before.ops_inline) == 1
    np.testing.assert_array_equal(d.asnumpy(), [4, 4])


def test_a_large_member_matches_numpy():
    rs = np.random.RandomState(0)
    an, bn = rs.rand(512, 700).astype(np.float32), rs.rand(700, 600).astype(np.float32)
    a, b = mx.nd.array(an), mx.nd.array(bn)
    with mx.engine.segment():
        c = mx.nd.dot(a, b)
        d = c * 2 + 1
    np.testing.assert_allclose(d.asnumpy(), (an @ bn) * 2 + 1, rtol=1e-5)


def test_trace_collects_without_running_and_refuses_waits():
    a = mx.nd.ones((2,))
    with E.trace() as t:
        b = a + 1
        c = b * 2
    assert [m.name for m in t.members] == ["_plus_scalar", "_mul_scalar"]
    assert not any(m.done for m in t.members)
    with pytest.raises(TraceError):
        with E.trace():
            (a + 1).asnumpy()
    # the engine is fine afterwards
    np.testing.assert_array_equal((a + 1).asnumpy(), [2, 2])
    del c


def test_naive_engine_runs_segment_members_at_push():
    a = mx.nd.ones((2,))
    with mx.engine.naive():
        with mx.engine.segment():
            b = a + 1
            assert b._st.var.version == 1
    np.testing.assert_array_equal(b.asnumpy(), [2, 2])


@pytest.fixture
def bulk_env():
    mx.engine.reset_bulk_env()
    yield mx.engine.reset_bulk_env
    mx.engine.reset_bulk_env()


def test_bulk_scope_follows_mxnet_variables(monkeypatch, bulk_env):
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", "0")
    assert type(mx.engine.bulk_scope("backward")).__name__ == "_NoScope"
    bulk_env()
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_TRAIN", "1")
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", "4")
    scope = mx.engine.bulk_scope("backward")
    assert scope.limit == 4
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_INFERENCE", "0")
    bulk_env()
    assert type(mx.engine.bulk_scope("inference")).__name__ == "_NoScope"
    monkeypatch.setenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", "x")
    monkeypatch.delenv("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD")
    bulk_env()
    with pytest.raises(mx.base.MXNetError, match="MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN"):
        mx.engine.bulk_scope("backward")


def test_a_serial_chain_stays_on_the_worker_that_ran_its_head():
    """No ping-pong: the worker that finishes an op runs the dependant it
    made ready itself, while an independent op still goes to another worker."""
    if mx.engine.statistics().workers < 2:
        pytest.skip("needs 2 CPU workers")
    a = mx.nd.zeros((4,))
    other = mx.nd.zeros((4,))
    threads = []

    def record(tag):
        def fn():
            threads.append((tag, threading.get_ident()))
        return fn
    with Gate("head") as g:
        g.push(writes=[a])
        g.wait_started()
        for i in range(6):
            mx.engine.push(record("chain%d" % i), reads=[], writes=[a], name="chain%d" % i)
        side_done = threading.Event()

        def side():
            threads.append(("side", threading.get_ident()))
            side_done.set()
        mx.engine.push(side, reads=[], writes=[other], name="side")
        wait_for(side_done, "the independent op, while the chain's head blocks a worker")
    mx.nd.waitall()
    idents = dict(threads)
    chain = {idents["chain%d" % i] for i in range(6)}
    assert len(chain) == 1                      # the whole chain on one thread
    assert idents["side"] not in chain          # independent work went to the other worker
