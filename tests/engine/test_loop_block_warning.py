"""A blocking wrapper that blocks a running event loop warns once per line
(aiond/engine/loopblock.py); plain threads and ready values never warn."""
import asyncio
import threading
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond.engine import LoopBlockedWarning, loopblock


@pytest.fixture
def threshold():
    prev = mx.engine.set_loop_block_warn_ms(5)
    yield
    mx.engine.set_loop_block_warn_ms(prev)


def _gated(shape=(4,)):
    """An array whose value waits on an event: a read of it blocks until set."""
    ev = threading.Event()
    x = mx.nd.zeros(shape)
    mx.nd.waitall()
    mx.engine._engine.push(lambda: ev.wait(10), (), (x._st.var,), "gate")
    return x, ev


def _release_after(ev, seconds):
    t = threading.Timer(seconds, ev.set)
    t.start()
    return t


def test_asnumpy_blocking_a_running_loop_warns_once_per_line(threshold):
    async def handler(x, ev):
        _release_after(ev, 0.05)
        return x.asnumpy()          # blocks the loop until the gate opens

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            x, ev = _gated()
            np.testing.assert_array_equal(asyncio.run(handler(x, ev)), 0)
    got = [x for x in w if issubclass(x.category, LoopBlockedWarning)]
    assert len(got) == 1                        # the same line three times: once
    msg = str(got[0].message)
    assert "asnumpy()" in msg and "await x.read()" in msg and "AIOND_LOOP_BLOCK_WARN_MS" in msg
    assert got[0].filename == __file__          # the user's line, not aiond's
    assert got[0].lineno == handler.__code__.co_firstlineno + 2


def test_wait_to_read_and_waitall_warn_at_their_own_lines(threshold):
    async def handler():
        x, ev = _gated()
        _release_after(ev, 0.05)
        x.wait_to_read()
        y, ev2 = _gated()
        _release_after(ev2, 0.05)
        mx.nd.waitall()

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        asyncio.run(handler())
    got = [x for x in w if issubclass(x.category, LoopBlockedWarning)]
    assert [str(g.message).split(" ")[0] for g in got] == ["wait_to_read()", "waitall()"]
    assert "run_in_executor" in str(got[1].message)


def test_plain_threads_ready_values_and_awaits_never_warn(threshold):
    x, ev = _gated()
    _release_after(ev, 0.05)

    async def handler():
        y = mx.nd.ones((3,))
        mx.nd.waitall()
        z = y + 1
        await z.read()
        return y.asnumpy()          # already computed: nothing blocked

    with warnings.catch_warnings():
        warnings.simplefilter("error", LoopBlockedWarning)
        np.testing.assert_array_equal(x.asnumpy(), 0)     # a plain script blocks, as it should
        np.testing.assert_array_equal(asyncio.run(handler()), 1)


def test_the_warning_can_be_turned_off_and_made_an_error(threshold):
    async def handler(x, ev):
        _release_after(ev, 0.05)
        return x.asnumpy()

    mx.engine.set_loop_block_warn_ms(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoopBlockedWarning)
        x, ev = _gated()
        asyncio.run(handler(x, ev))             # off: nothing
        mx.engine.set_loop_block_warn_ms(5)
        x, ev = _gated()
        with pytest.raises(LoopBlockedWarning, match="blocked the running event loop"):
            asyncio.run(handler(x, ev))


def test_a_wait_shorter_than_the_threshold_does_not_warn():
    prev = mx.engine.set_loop_block_warn_ms(10000)
    try:
        async def handler(x, ev):
            _release_after(ev, 0.02)
            return x.asnumpy()
        with warnings.catch_warnings():
            warnings.simplefilter("error", LoopBlockedWarning)
            x, ev = _gated()
            asyncio.run(handler(x, ev))
    finally:
        mx.engine.set_loop_block_warn_ms(prev)


def test_bad_thresholds_are_refused_naming_what_was_expected(monkeypatch):
    with pytest.raises(mx.MXNetError, match="milliseconds"):
        mx.engine.set_loop_block_warn_ms(-1)
    with pytest.raises(mx.MXNetError, match="milliseconds"):
        mx.engine.set_loop_block_warn_ms("soon")
    assert loopblock.threshold_ms() >= 0


def test_a_bad_environment_value_fails_at_import_naming_the_variable():
    import os
    import subprocess
    import sys
    env = dict(os.environ, AIOND_LOOP_BLOCK_WARN_MS="soon")
    p = subprocess.run([sys.executable, "-c", "import aiond"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0 and "AIOND_LOOP_BLOCK_WARN_MS='soon'" in p.stderr
