"""Failures: a failing kernel poisons what it writes, readers fail with the
original exception as ``__cause__``, nothing hangs, the rest keeps working."""
import asyncio
import os
import sys

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

from .gates import TIMEOUT, Gate, clean_engine, wait_done  # noqa: F401

pytestmark = pytest.mark.timeout(60)

HERE = os.path.basename(__file__)


def _line():
    """Line number of the caller's current line."""
    return sys._getframe(1).f_lineno


def explode(exc):
    def fn():
        raise exc
    return fn


def assert_names_origin(err, op, line, cause):
    msg = str(err)
    assert op in msg, msg
    assert "%s:%d" % (HERE, line) in msg, msg
    assert err.__cause__ is cause


def push_failure(arr, name="explode", exc=None):
    """Push a failing kernel writing ``arr``; returns (opr, line, exc)."""
    exc = exc or ValueError("boom in %s" % name)
    opr = mx.engine.push(explode(exc), writes=[arr], name=name); line = _line()  # noqa: E702
    return opr, line, exc


def test_failing_kernel_poisons_what_it_writes():
    a = mx.nd.zeros((3,))
    exc = ValueError("kernel exploded")
    opr = mx.engine.push(explode(exc), writes=[a], name="exploder"); line = _line()  # noqa: E702
    wait_done(opr)
    assert opr.failure is not None and opr.failure.exc is exc
    with pytest.raises(MXNetError) as ei:
        a.asnumpy()
    assert_names_origin(ei.value, "exploder", line, exc)


@pytest.mark.parametrize("how", ["asnumpy", "read", "wait_to_read", "asscalar"])
def test_dependent_chain_fails_with_origin_and_cause(how):
    a = mx.nd.zeros((1,))
    exc = ValueError("kernel exploded")
    mx.engine.push(explode(exc), writes=[a], name="exploder"); line = _line()  # noqa: E702
    x = a + 1
    y = x * 2
    z = mx.nd.broadcast_add(y, mx.nd.ones((1,)))
    with pytest.raises(MXNetError) as ei:
        if how == "read":
            asyncio.run(asyncio.wait_for(z.read(), TIMEOUT))
        else:
            getattr(z, how)()
    assert_names_origin(ei.value, "exploder", line, exc)
    assert isinstance(ei.value.__cause__, ValueError)


def test_failure_through_a_view_poisons_the_base():
    a = mx.nd.zeros((4, 2))
    v = a[1:3]
    _, line, exc = push_failure(v, "viewfail")
    with pytest.raises(MXNetError) as ei:
        (a.sum() + 1).asnumpy()
    assert_names_origin(ei.value, "viewfail", line, exc)


def test_independent_arrays_keep_working():
    a = mx.nd.zeros((3,))
    push_failure(a)
    b = mx.nd.ones((3,)) * 4
    big = mx.nd.ones((1 << 18,)) + 1
    np.testing.assert_array_equal(b.asnumpy(), np.full(3, 4.0, np.float32))
    assert float(big.sum().asscalar()) == 2.0 * (1 << 18)
    c = mx.engine.push(lambda: 42, reads=[b], name="ok")
    wait_done(c)
    assert c.failure is None and c.result == 42
    with pytest.raises(MXNetError):
        a.asnumpy()
    # and again, after the failure was reported
    np.testing.assert_array_equal((b + 1).asnumpy(), np.full(3, 5.0, np.float32))


def test_waitall_reports_once_reads_keep_failing():
    a = mx.nd.zeros((3,))
    _, line, exc = push_failure(a, "once")
    with pytest.raises(MXNetError) as ei:
        mx.nd.waitall()
    assert_names_origin(ei.value, "once", line, exc)
    mx.nd.waitall()                      # reported already: silent now
    mx.engine.waitall()
    for _ in range(2):
        with pytest.raises(MXNetError) as ei:
            a.asnumpy()
        assert ei.value.__cause__ is exc
    mx.nd.waitall()


def test_failure_read_first_is_not_reported_again_by_waitall():
    a = mx.nd.zeros((3,))
    push_failure(a)
    with pytest.raises(MXNetError):
        (a + 1).asnumpy()
    mx.nd.waitall()


def test_waitall_counts_more_failures():
    a, b = mx.nd.zeros((3,)), mx.nd.zeros((3,))
    _, line, exc = push_failure(a, "first")
    push_failure(b, "second")
    with pytest.raises(MXNetError) as ei:
        mx.nd.waitall()
    assert_names_origin(ei.value, "first", line, exc)
    assert "1 more" in str(ei.value)
    mx.nd.waitall()


def test_read_only_failure_poisons_nothing_but_is_reported():
    a = mx.nd.ones((3,))
    opr = mx.engine.push(explode(KeyError("k")), reads=[a], name="reader")
    wait_done(opr)
    np.testing.assert_array_equal(a.asnumpy(), np.ones(3, np.float32))
    with pytest.raises(MXNetError) as ei:
        mx.nd.waitall()
    assert "reader" in str(ei.value) and isinstance(ei.value.__cause__, KeyError)


def test_full_overwrite_clears_poison():
    a = mx.nd.zeros((4,))
    push_failure(a)
    a[:] = 1
    np.testing.assert_array_equal(a.asnumpy(), np.ones(4, np.float32))
    np.testing.assert_array_equal((a + 1).asnumpy(), np.full(4, 2.0, np.float32))


def test_full_overwrite_from_array_clears_poison():
    a = mx.nd.zeros((2, 2))
    push_failure(a)
    a[:] = mx.nd.full((2, 2), 3.0)
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 2), 3.0, np.float32))


@pytest.mark.parametrize("write", [
    lambda a: a.__setitem__(slice(0, 1), 1),
    lambda a: a.__iadd__(1),
    lambda a: a[1:3].__imul__(2),
], ids=["partial-setitem", "inplace-add", "inplace-view"])
def test_partial_or_inplace_write_keeps_poison(write):
    a = mx.nd.zeros((4,))
    _, line, exc = push_failure(a, "poisoner")
    write(a)
    with pytest.raises(MXNetError) as ei:
        a.asnumpy()
    assert_names_origin(ei.value, "poisoner", line, exc)


def test_shape_error_at_push_names_op_and_shapes():
    with pytest.raises(MXNetError) as ei:
        mx.nd.ones((2, 3)) + mx.nd.ones((4, 5))
    msg = str(ei.value)
    assert "broadcast_add" in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
    with pytest.raises(MXNetError) as ei:
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))
    msg = str(ei.value)
    assert "dot" in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
    # the engine has nothing pending or poisoned from those
    mx.nd.waitall()


def test_shape_error_names_op_once():
    with pytest.raises(MXNetError) as ei:
        mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((4, 5)))
    assert "dot: dot:" not in str(ei.value)


def test_shape_error_is_raised_before_anything_is_pushed():
    before = mx.engine.statistics().ops_pushed + mx.engine.statistics().ops_inline
    a, b = mx.nd.array(np.ones((2, 3))), mx.nd.array(np.ones((4, 5)))
    with pytest.raises(MXNetError):
        a + b
    after = mx.engine.statistics().ops_pushed + mx.engine.statistics().ops_inline
    assert after == before


@pytest.mark.parametrize("n", [4, 1 << 18], ids=["small", "large"])
def test_error_in_the_middle_of_a_chain_does_not_hang(n):
    x = mx.nd.ones((n,))
    for _ in range(10):
        x = x + 1
    _, line, exc = push_failure(x, "middle")
    for _ in range(10):
        x = x * 1.5 + x
    side = x[0:2] + 1
    with pytest.raises(MXNetError) as ei:
        x.asnumpy()
    assert_names_origin(ei.value, "middle", line, exc)
    with pytest.raises(MXNetError):
        side.wait_to_read()
    mx.nd.waitall()          # the one failure was reported by asnumpy() already
    assert mx.engine.statistics().pending_ops == 0


def test_gated_chain_error_does_not_hang():
    a = mx.nd.zeros((4,))
    g = Gate("g", body=explode(RuntimeError("behind the gate")))
    try:
        g.push(writes=[a])
        b = a + 1
        c = b * b
        d = mx.nd.ones((4,)) + 1
        g.wait_started()
    finally:
        g.open()
    with pytest.raises(MXNetError) as ei:
        c.asnumpy()
    assert isinstance(ei.value.__cause__, RuntimeError) and "g" in str(ei.value)
    np.testing.assert_array_equal(d.asnumpy(), np.full(4, 2.0, np.float32))


def test_async_kernel_failure_poisons():
    a = mx.nd.zeros((3,))
    exc = ValueError("async boom")

    async def fail():
        await asyncio.sleep(0)
        raise exc
    mx.engine.push(fail, writes=[a], name="afail", executor="async"); line = _line()  # noqa: E702
    with pytest.raises(MXNetError) as ei:
        (a * 2).asnumpy()
    assert_names_origin(ei.value, "afail", line, exc)


def test_failure_does_not_leak_into_later_waitall():
    a = mx.nd.zeros((3,))
    push_failure(a)
    with pytest.raises(MXNetError):
        mx.nd.waitall()
    b = mx.nd.ones((3,)) + 1
    mx.nd.waitall()
    np.testing.assert_array_equal(b.asnumpy(), np.full(3, 2.0, np.float32))


@pytest.mark.parametrize("n", [4, 1 << 14, 300000], ids=["inline", "worker", "split"])
def test_real_op_kernel_failure(monkeypatch, n):
    """A registered op whose kernel raises: inline (small), on a worker, and
    split across workers (large elementwise) - all poison, name the op and
    the user's line, and hang nothing."""
    from aiond.ops import registry
    op = registry.get("sqrt")
    exc = FloatingPointError("sqrt kernel broke")

    def bad(xp, *args, **kwargs):
        raise exc
    monkeypatch.setattr(op, "kernel", bad)
    x = mx.nd.ones((n,))
    x.wait_to_read()
    y = mx.nd.sqrt(x); line = _line()  # noqa: E702
    z = y + 1
    other = x * 2
    with pytest.raises(MXNetError) as ei:
        z.asnumpy()
    assert_names_origin(ei.value, "sqrt", line, exc)
    mx.nd.waitall()                 # one failure (even if split), reported already
    monkeypatch.undo()
    assert float(other[0:1].asscalar()) == 2.0
    assert float(mx.nd.sqrt(x * 4)[0:1].asscalar()) == 2.0
    assert mx.engine.statistics().pending_ops == 0
