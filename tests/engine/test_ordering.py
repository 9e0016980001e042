"""Per-var ordering (MXNet's rules), forced with gates, never with sleeps.

A "witness" op on an unrelated var is pushed after the op under test and
waited for: once it has run, the engine has had every chance to run the op
under test, so "still not done" means "held back by its dependency".
"""
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.ndarray._invoke import data_of

from .gates import TIMEOUT, Gate, Recorder, clean_engine, marker, wait_done, wait_for  # noqa: F401

pytestmark = pytest.mark.timeout(60)


def witness():
    """Push an op on a fresh var and wait for it (the engine is not stalled)."""
    z = mx.nd.zeros((3,))
    ev = threading.Event()
    mx.engine.push(lambda: ev.set(), reads=[], writes=[z], name="witness")
    z.wait_to_read()        # may run it here: works with a single busy worker
    wait_for(ev, "an independent witness op")


def setter(arr, value):
    """A kernel body writing ``value`` into ``arr`` (whole array or view)."""
    def body():
        data_of(arr)[...] = value
    return body


def need_workers(n):
    if mx.engine.statistics().workers < n:
        pytest.skip("needs %d CPU workers" % n)


# ------------------------------------------------------------ read after write
@pytest.mark.parametrize("mode", ["thread", "async"])
def test_read_after_write_waits(mode):
    rec = Recorder()
    a = mx.nd.zeros((4,))
    g = Gate("w", record=rec, body=setter(a, 7.0), mode=mode)
    seen = []
    try:
        g.push(writes=[a])
        r = mx.engine.push(lambda: (rec("r"), seen.append(data_of(a).copy())),
                           reads=[a], name="r")
        g.wait_started()
        witness()
        assert not r.done and "r" not in rec.snapshot()
    finally:
        g.open()
    wait_done(r)
    assert r.failure is None
    assert rec.snapshot() == ["w:start", "w:end", "r"]
    np.testing.assert_array_equal(seen[0], np.full(4, 7.0, np.float32))


def test_real_ops_read_after_gated_write():
    a = mx.nd.zeros((5,))
    g = Gate("w", body=setter(a, 2.0))
    try:
        g.push(writes=[a])
        b = a + 1            # pushed while the write is held
        c = b * a
        g.wait_started()
        witness()
    finally:
        g.open()
    np.testing.assert_array_equal(c.asnumpy(), np.full(5, 6.0, np.float32))


# ------------------------------------------------------------ write after read
def test_write_after_read_waits_for_all_reads():
    rec = Recorder()
    a = mx.nd.ones((4,))
    g1 = Gate("r1", record=rec, mode="async")
    g2 = Gate("r2", record=rec, mode="async")
    try:
        g1.push(reads=[a])
        g2.push(reads=[a])
        w = mx.engine.push(lambda: (rec("w"), setter(a, 5.0)()), writes=[a], name="w")
        g1.wait_started()
        g2.wait_started()          # both reads granted together
        witness()
        assert not w.done
        g1.open()
        wait_done(g1.opr)
        witness()
        assert not w.done and "w" not in rec.snapshot(), "write ran before every read finished"
    finally:
        g1.open()
        g2.open()
    wait_done(w)
    log = rec.snapshot()
    assert log.index("w") > log.index("r1:end")
    assert log.index("w") > log.index("r2:end")
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 5.0, np.float32))


def test_write_after_read_real_ops_keep_old_value():
    """b = a * 1 reads a before a is overwritten; it must see the old value."""
    a = mx.nd.full((6,), 3.0)
    g = Gate("r")
    try:
        g.push(reads=[a])
        b = a * 1
        a[:] = 9
        g.wait_started()
        witness()
    finally:
        g.open()
    np.testing.assert_array_equal(b.asnumpy(), np.full(6, 3.0, np.float32))
    np.testing.assert_array_equal(a.asnumpy(), np.full(6, 9.0, np.float32))


# ------------------------------------------------------------ concurrent reads
def _meeting_reads(a):
    """Two read ops that each wait for the other's event: both succeed only
    if they ran at the same time."""
    e1, e2 = threading.Event(), threading.Event()

    def r1():
        e1.set()
        if not e2.wait(TIMEOUT):
            raise TimeoutError("r2 did not run alongside r1")

    def r2():
        e2.set()
        if not e1.wait(TIMEOUT):
            raise TimeoutError("r1 did not run alongside r2")
    o1 = mx.engine.push(r1, reads=[a], name="r1")
    o2 = mx.engine.push(r2, reads=[a], name="r2")
    return o1, o2


def test_consecutive_reads_run_concurrently():
    need_workers(2)
    a = mx.nd.ones((4,))
    o1, o2 = _meeting_reads(a)
    wait_done(o1, 2 * TIMEOUT)
    wait_done(o2, 2 * TIMEOUT)
    assert o1.failure is None and o2.failure is None


def test_reads_after_a_write_are_granted_together():
    need_workers(2)
    a = mx.nd.ones((4,))
    g = Gate("w", mode="async")
    try:
        g.push(writes=[a])
        o1, o2 = _meeting_reads(a)
        g.wait_started()
        witness()
        assert not o1.done and not o2.done
    finally:
        g.open()
    wait_done(o1, 2 * TIMEOUT)
    wait_done(o2, 2 * TIMEOUT)
    assert o1.failure is None and o2.failure is None


def test_write_between_reads_splits_them():
    """r1, w, r2 on one var: r2 must not join r1 (it would skip the write)."""
    rec = Recorder()
    a = mx.nd.ones((4,))
    g = Gate("r1", record=rec, mode="async")
    try:
        g.push(reads=[a])
        w = mx.engine.push(marker(rec, "w"), writes=[a], name="w")
        r2 = mx.engine.push(marker(rec, "r2"), reads=[a], name="r2")
        g.wait_started()
        witness()
        assert not w.done and not r2.done
    finally:
        g.open()
    wait_done(r2)
    assert rec.snapshot() == ["r1:start", "r1:end", "w", "r2"]


# ------------------------------------------------------------ independence
def test_independent_vars_run_while_one_is_gated():
    a = mx.nd.zeros((4,))
    b = mx.nd.ones((4,))
    big = mx.nd.ones((1 << 18,))
    g = Gate("w")
    try:
        g.push(writes=[a])
        pending = a + 1
        c = b * 2 + 1
        d = (big + 1).sum()
        g.wait_started()
        np.testing.assert_array_equal(c.asnumpy(), np.full(4, 3.0, np.float32))
        assert float(d.asscalar()) == 2.0 * (1 << 18)
        probe = mx.engine.push(lambda: None, reads=[pending], name="probe")
        witness()
        assert not probe.done
        assert g.is_open is False and not g.passed.is_set()
    finally:
        g.open()
    np.testing.assert_array_equal(pending.asnumpy(), np.ones(4, np.float32))


# ------------------------------------------------------------ views
@pytest.mark.parametrize("make_view", [
    lambda a: a[1:3],
    lambda a: a.reshape((2, 6)),
    lambda a: a[2],
    lambda a: a.reshape((-1,))[4:8],
], ids=["slice", "reshape", "row", "reshape-slice"])
def test_views_serialize_with_base(make_view):
    a = mx.nd.zeros((4, 3))
    v = make_view(a)
    assert v._st is a._st
    # a gated write on the base holds ops on the view ...
    g = Gate("base", body=setter(a, 1.0))
    try:
        g.push(writes=[a])
        doubled = v * 2
        probe = mx.engine.push(lambda: None, reads=[v], name="probe")
        g.wait_started()
        witness()
        assert not probe.done
    finally:
        g.open()
    np.testing.assert_array_equal(doubled.asnumpy(), np.full(v.shape, 2.0, np.float32))
    # ... and a gated write through the view holds ops on the base
    g = Gate("view", body=setter(v, 5.0))
    try:
        g.push(writes=[v])
        total = a.sum()
        probe = mx.engine.push(lambda: None, reads=[a], name="probe")
        g.wait_started()
        witness()
        assert not probe.done
    finally:
        g.open()
    expect = np.ones((4, 3), np.float32)
    expect.reshape(-1)[_flat_range(v)] = 5.0
    assert float(total.asscalar()) == float(expect.sum())


def _flat_range(view):
    off = view._off or 0
    return slice(off, off + view.size)


def test_inplace_through_view_lands_in_base():
    a = mx.nd.zeros((6,))
    g = Gate("w", body=setter(a, 1.0))
    try:
        g.push(writes=[a])
        v = a[1:3]
        v += 10
        a[4:6] = 7
        r = a.reshape((2, 3))
        r *= 2
        g.wait_started()
        witness()
    finally:
        g.open()
    np.testing.assert_array_equal(a.asnumpy(),
                                  np.array([2, 22, 22, 2, 14, 14], np.float32))


def test_fancy_column_is_a_copy():
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    col = a[:, 1]
    assert col._st is not a._st
    a[:] = 0
    np.testing.assert_array_equal(col.asnumpy(), np.array([1, 5, 9], np.float32))


# ------------------------------------------------------------ copies
@pytest.mark.parametrize("ctx", [mx.cpu(), mx.cpu(1)], ids=["cpu0", "cpu1"])
def test_copy_is_independent_of_later_writes(ctx):
    a = mx.nd.full((4,), 2.0)
    c = a.copyto(ctx)
    g = Gate("w", body=setter(a, 100.0))
    try:
        g.push(writes=[a])
        g.wait_started()
        c *= 3
        # c does not wait for the gated write to a
        np.testing.assert_array_equal(c.asnumpy(), np.full(4, 6.0, np.float32))
        assert not g.passed.is_set()
    finally:
        g.open()
    np.testing.assert_array_equal(a.asnumpy(), np.full(4, 100.0, np.float32))
    np.testing.assert_array_equal(c.asnumpy(), np.full(4, 6.0, np.float32))


def test_seed_case_values():
    a = mx.nd.ones((2, 3))
    b = a
    a += 1
    b *= 3
    c = a.copyto(mx.cpu())
    c *= 3
    assert b is a
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 6.0, np.float32))
    np.testing.assert_array_equal(b.asnumpy(), np.full((2, 3), 6.0, np.float32))
    np.testing.assert_array_equal(c.asnumpy(), np.full((2, 3), 18.0, np.float32))


def test_seed_case_behind_a_gate():
    a = mx.nd.ones((2, 3))
    g = Gate("w", body=setter(a, 2.0))
    try:
        g.push(writes=[a])
        b = a
        a += 1
        b *= 3
        c = a.copyto(mx.cpu())
        c *= 3
        g.wait_started()
        witness()
    finally:
        g.open()
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 9.0, np.float32))
    np.testing.assert_array_equal(c.asnumpy(), np.full((2, 3), 27.0, np.float32))


# ------------------------------------------------------------ in-place order
@pytest.mark.parametrize("mode", ["thread", "async"])
def test_inplace_ops_queue_behind_gate_in_push_order(mode):
    a = mx.nd.zeros((8,))
    g = Gate("w", body=setter(a, 1.0), mode=mode)
    try:
        g.push(writes=[a])
        a += 2
        a *= 3
        a -= 1
        a /= 2
        a **= 2
        probe = mx.engine.push(lambda: None, reads=[a], name="probe")
        g.wait_started()
        witness()
        assert not probe.done
    finally:
        g.open()
    # ((1 + 2) * 3 - 1) / 2 = 4, squared
    np.testing.assert_array_equal(a.asnumpy(), np.full(8, 16.0, np.float32))


def test_writes_run_in_push_order_record():
    rec = Recorder()
    a = mx.nd.zeros((2,))
    g = Gate("g", record=rec)
    try:
        g.push(writes=[a])
        oprs = [mx.engine.push(marker(rec, i), reads=[] if i % 3 else [a],
                               writes=[a] if i % 3 else [], name="op%d" % i)
                for i in range(30)]
        g.wait_started()
        witness()
        assert not any(o.done for o in oprs)
    finally:
        g.open()
    for o in oprs:
        wait_done(o)
    log = [x for x in rec.snapshot() if isinstance(x, int)]
    # writes (i % 3 != 0) keep push order; each read sits between its writes
    assert [x for x in log if x % 3] == [i for i in range(30) if i % 3]
    for i in range(0, 30, 3):
        pos = log.index(i)
        assert all(log.index(w) < pos for w in range(i) if w % 3)
        assert all(log.index(w) > pos for w in range(i + 1, 30) if w % 3)


def test_in_place_op_with_three_inputs_waits_for_all_of_them():
    # x[idx] = v is _index_assign(x, v, idx, out=x): the in-place write of x
    # must also wait for pending writes of v and idx (found by MXNet's
    # test_ndarray_indexing: garbage values when v was still being computed)
    x = mx.nd.zeros((4, 3))
    v = mx.nd.zeros((2, 3))
    g = Gate("v", body=setter(v, 5.0))
    try:
        g.push(writes=[v])
        x[mx.nd.array([1, 3], dtype="int32")] = v
        g.wait_started()
        witness()
    finally:
        g.open()
    np.testing.assert_array_equal(x.asnumpy(), [[0] * 3, [5] * 3, [0] * 3, [5] * 3])
