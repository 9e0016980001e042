"""The GPU executor against the CuPy test double (``tests/fakecupy.py``):
stream choice, event dependencies, no host syncs between GPU ops, copy /
compute overlap, host wake-ups, poisoning, cancellation, the memory bound.

Orderings are forced with gates: ``stream.block(gate)`` enqueues a "kernel"
that runs until the gate opens, so everything behind it on that stream (and
on streams waiting for its events) provably has not completed meanwhile.
"""
import asyncio
import subprocess
import sys
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.engine import gpu as _gpu

TIMEOUT = 10.0


def _ex(i=0):
    return _gpu.executor(mx.gpu(i))


class _Gate:
    """Block a stream's thread until opened (always opened on exit)."""

    def __init__(self, stream):
        self.ev = threading.Event()
        stream.block(self.ev)

    def open(self):
        self.ev.set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.ev.set()


def test_import_aiond_does_not_import_cupy():
    # a finder that notes every attempt to import CuPy, installed or not
    code = ("import sys\n"
            "class F:\n"
            "    seen = []\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('cupy', 'cupyx'):\n"
            "            F.seen.append(name)\n"
            "        return None\n"
            "sys.meta_path.insert(0, F())\n"
            "import aiond as mx\n"
            "(mx.nd.ones((2,)) + 1).asnumpy(); mx.nd.waitall()\n"
            "assert 'aiond.engine.gpu' not in sys.modules\n"
            "print(F.seen)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_missing_cupy_is_a_clear_error():
    code = ("import sys; sys.modules['cupy'] = None\n"
            "import aiond as mx\n"
            "assert mx.context.num_gpus() == 0\n"
            "try:\n"
            "    mx.nd.zeros((2,), ctx=mx.gpu(0))\n"
            "except mx.base.MXNetError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install aiond[gpu]" in out.stdout
    assert "CuPy" in out.stdout


def test_no_device_is_a_clear_error(fake_gpu):
    with pytest.raises(MXNetError, match=r"gpu\(5\) is not available: only 2 GPU"):
        mx.nd.ones((2,), ctx=mx.gpu(5))


def test_creation_copies_and_reads_both_ways(fake_gpu):
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = mx.nd.array(src, ctx=mx.gpu(0))
    assert a.context == mx.gpu(0)
    np.testing.assert_array_equal(a.asnumpy(), src)
    z = mx.nd.zeros((2, 3), ctx=mx.gpu(1), dtype="int32")
    assert z.dtype == np.int32 and z.context == mx.gpu(1)
    np.testing.assert_array_equal(z.asnumpy(), 0)
    np.testing.assert_array_equal(mx.nd.arange(5, ctx=mx.gpu(0)).asnumpy(), np.arange(5))
    # host -> device -> other device -> host, with a cast on the way back
    b = a.as_in_context(mx.gpu(1))
    assert b.context == mx.gpu(1)
    c = (b * 2).copyto(mx.cpu())
    assert c.context == mx.cpu()
    np.testing.assert_array_equal(c.asnumpy(), src * 2)
    d = mx.nd.zeros((3, 4), dtype="float64")
    (a + 1).copyto(d)
    np.testing.assert_array_equal(d.asnumpy(), src + 1)
    e = mx.nd.array(src).copyto(mx.gpu(0))
    e[1] = 7
    e[0, 1:3] = np.array([5, 6])
    want = src.copy()
    want[1] = 7
    want[0, 1:3] = [5, 6]
    np.testing.assert_array_equal(e.asnumpy(), want)
    assert a.as_in_context(mx.gpu(0)) is a
    assert float((a.sum()).asscalar()) == src.sum()


def test_views_copy_between_devices_and_into_views(fake_gpu):
    # a view's array is made on its own device (the double, like CuPy without
    # peer access, refuses array calls on another device's arrays)
    src = np.arange(24, dtype=np.float32).reshape(6, 4)
    a = mx.nd.array(src, ctx=mx.gpu(0))
    rows = a[2:4].copyto(mx.gpu(1))                 # a view (offset) of gpu(0)
    assert rows.context == mx.gpu(1)
    np.testing.assert_array_equal(rows.asnumpy(), src[2:4])
    whole = mx.nd.zeros((6, 4), ctx=mx.gpu(1))
    whole[1:3] = a[4:6]                             # view -> view across devices
    want = np.zeros((6, 4), np.float32)
    want[1:3] = src[4:6]
    np.testing.assert_array_equal(whole.asnumpy(), want)
    back = mx.nd.zeros((2, 4), ctx=mx.gpu(0))
    whole[1:3].copyto(back)
    np.testing.assert_array_equal(back.asnumpy(), src[4:6])
    parts = mx.gluon.utils.split_and_load(a, [mx.gpu(1), mx.gpu(0)])
    for p_, ctx, lo in zip(parts, (mx.gpu(1), mx.gpu(0)), (0, 3)):
        assert p_.context == ctx
        np.testing.assert_array_equal(p_.asnumpy(), src[lo:lo + 3])


def test_await_read_and_wait_to_read(fake_gpu):
    a = mx.nd.ones((4,), ctx=mx.gpu(0)) * 3

    async def main():
        return await a.read()
    np.testing.assert_array_equal(asyncio.run(main()), [3, 3, 3, 3])
    a.wait_to_read()


def test_save_and_load_gpu_arrays(fake_gpu, tmp_path):
    """As MXNet: a GPU array is saved with its GPU in the file and loads back
    onto that GPU where there is one (``ctx=`` overrides)."""
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = mx.nd.array(src, ctx=mx.gpu(1))
    f = str(tmp_path / "x.params")
    mx.nd.save(f, {"a": a, "b": (a * 2).as_in_context(mx.cpu()), "c": a.as_in_context(mx.gpu(0))})
    import struct
    raw = open(f, "rb").read()
    assert struct.pack("<ii", 2, 1) in raw and struct.pack("<ii", 2, 0) in raw
    got = mx.nd.load(f)
    assert got["a"].context == mx.gpu(1) and got["c"].context == mx.gpu(0)
    assert got["b"].context == mx.cpu()
    np.testing.assert_array_equal(got["a"].asnumpy(), src)
    np.testing.assert_array_equal(got["b"].asnumpy(), src * 2)
    on_cpu = mx.nd.load(f, ctx=mx.cpu())
    assert on_cpu["a"].context == mx.cpu()
    got = mx.nd.load_frombuffer(raw)
    assert got["a"].context == mx.gpu(1)
    # the default context does not move them: a CPU-saved array stays on the
    # CPU under `with mx.gpu(0)` (MXNet's NDArray::Load keeps the file's context)
    with mx.gpu(0):
        for got in (mx.nd.load(f), mx.nd.load_frombuffer(raw)):
            assert got["b"].context == mx.cpu()
            assert got["a"].context == mx.gpu(1) and got["c"].context == mx.gpu(0)
        assert mx.nd.load(f, ctx=mx.gpu(1))["b"].context == mx.gpu(1)


def test_num_gpus_and_memory_info(fake_gpu):
    assert mx.context.num_gpus() == 2
    free0, total = mx.context.gpu_memory_info(0)
    keep = mx.nd.zeros((1 << 20,), ctx=mx.gpu(0))
    keep.wait_to_read()
    free1, total1 = mx.context.gpu_memory_info(0)
    assert total1 == total and free0 - free1 >= 4 << 20
    with pytest.raises(MXNetError):
        mx.context.gpu_memory_info(3)


def test_contexts_must_agree(fake_gpu):
    a = mx.nd.ones((2,), ctx=mx.gpu(0))
    b = mx.nd.ones((2,), ctx=mx.gpu(1))
    with pytest.raises(MXNetError, match="same context"):
        a + b
    with pytest.raises(MXNetError, match="same context"):
        a + mx.nd.ones((2,))


def test_dependent_chain_has_no_host_sync(fake_gpu):
    """1,000 dependent ops are all launched while the device is still busy
    with the first: nothing waits on the host between them."""
    x = mx.nd.zeros((8,), ctx=mx.gpu(0))
    x.wait_to_read()
    ex = _ex()
    syncs, hostf, launched = fake_gpu.syncs, fake_gpu.host_funcs, ex.launched
    with _Gate(ex.compute) as gate:
        y = x
        for _ in range(1000):
            y = y + 1
        # every op is on the device's queue already, the first still "running"
        assert ex.launched - launched == 1000
        assert fake_gpu.syncs == syncs and fake_gpu.host_funcs == hostf
        rd = y._push_copy()
        assert not rd.done          # a host read waits for the device...
        gate.open()
    from .gates import wait_done
    wait_done(rd)                   # ...and is woken by a host callback
    np.testing.assert_array_equal(rd.result, 1000)
    assert fake_gpu.syncs == syncs  # never a blocking synchronize
    assert fake_gpu.host_funcs == hostf + 1


def test_copies_overlap_compute(fake_gpu):
    """A host->device copy and its read run on the copy stream while the
    compute stream is busy; compute on the copied array waits for the copy
    on the device (an event), not on the host."""
    ex = _ex()
    busy = mx.nd.ones((4,), ctx=mx.gpu(0))
    busy.wait_to_read()
    with _Gate(ex.compute) as gate:
        z = busy * 2                        # queued behind the busy kernel
        src = np.arange(4, dtype=np.float32)
        a = mx.nd.array(src, ctx=mx.gpu(0))  # H2D on the copy stream
        np.testing.assert_array_equal(a.asnumpy(), src)   # done while compute is busy
        b = a + 1                            # compute: waits for the copy's event
        rb = b._push_copy()
        rz = z._push_copy()
        assert not rb.done and not rz.done
        gate.open()
    np.testing.assert_array_equal(b.asnumpy(), src + 1)
    np.testing.assert_array_equal(z.asnumpy(), 2)
    assert fake_gpu.syncs == 0


def test_double_detects_a_missing_wait(fake_gpu):
    """The race check the fixture relies on does catch unordered streams."""
    import fakecupy
    cp = sys.modules["cupy"]
    s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()
    with s1:
        a = cp.ones((4,), dtype=np.float32)
        a *= 2
    with s2:
        b = a + 1
    assert any("without waiting" in r for r in fakecupy.S.races)
    with s1:
        c = a * 4       # overwriting what s2 read, without waiting for s2
        a += c
    assert any("overwrites a buffer read on" in r for r in fakecupy.S.races)
    fakecupy.S.races.clear()
    ev = cp.cuda.Event()
    with s1:
        d = cp.ones((4,), dtype=np.float32)
        d *= 3
    ev.record(s1)
    s2.wait_event(ev)
    with s2:
        e = d + 1
    assert not fakecupy.S.races
    del b, e


def test_kernel_error_poisons_and_names_the_op(fake_gpu):
    good = mx.nd.ones((3,), ctx=mx.gpu(0))
    bad = mx.nd.random.uniform(low=2, high=1, shape=(3,), ctx=mx.gpu(0))
    y = bad + 1
    z = y * 2
    with pytest.raises(MXNetError) as ei:
        z.asnumpy()
    msg = str(ei.value)
    assert "_random_uniform" in msg and "test_gpu_executor.py" in msg
    assert isinstance(ei.value.__cause__, ValueError)
    np.testing.assert_array_equal((good + 1).asnumpy(), 2)   # the engine goes on
    mx.nd.waitall()         # reported once, by the read
    w = mx.nd.random.uniform(low=2, high=1, shape=(3,), ctx=mx.gpu(0)) + 1
    with pytest.raises(MXNetError, match="_random_uniform"):
        mx.nd.waitall()     # unread: waitall reports it
    with pytest.raises(MXNetError):
        w.wait_to_read()


def test_cancelling_an_await_leaves_the_array(fake_gpu):
    ex = _ex()
    a = mx.nd.ones((3,), ctx=mx.gpu(0))
    a.wait_to_read()

    async def main(gate):
        y = a * 5
        task = asyncio.ensure_future(y.read())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.open()
        return await y.read()
    with _Gate(ex.compute) as gate:
        got = asyncio.run(main(gate))
    np.testing.assert_array_equal(got, 5)


def test_waitall_waits_for_the_device(fake_gpu):
    ex = _ex()
    a = mx.nd.ones((3,), ctx=mx.gpu(0))
    a.wait_to_read()
    finished = threading.Event()
    with _Gate(ex.compute) as gate:
        b = a + 1
        t = threading.Thread(target=lambda: (mx.nd.waitall(), finished.set()))
        t.start()
        # waitall has asked both streams for a callback and sleeps on it
        assert not finished.is_set()
        gate.open()
        assert finished.wait(TIMEOUT)
        t.join(TIMEOUT)
    np.testing.assert_array_equal(b.asnumpy(), 2)


def test_inflight_bytes_bound_holds_the_producer(fake_gpu):
    ex = _ex()
    a = mx.nd.ones((1024,), ctx=mx.gpu(0))
    a.wait_to_read()
    old = ex.max_inflight
    ex.max_inflight = 64 << 10           # 16 ops of 4 KiB
    progress = []
    hostf = fake_gpu.host_funcs
    try:
        with _Gate(ex.compute) as gate:
            def produce():
                y = a
                for i in range(64):
                    y = y + 1
                    progress.append(i)
                produce.y = y
            t = threading.Thread(target=produce)
            t.start()
            # the producer went over the bound and waits for a host callback
            import time
            deadline = time.monotonic() + TIMEOUT
            while fake_gpu.host_funcs == hostf:
                assert time.monotonic() < deadline
                threading.Event().wait(0.001)
            assert len(progress) < 64
            gate.open()
            t.join(TIMEOUT)
        assert len(progress) == 64
        np.testing.assert_array_equal(produce.y.asnumpy(), 65)
    finally:
        ex.max_inflight = old


def test_random_is_seeded_per_device(fake_gpu):
    mx.random.seed(7)
    a0 = mx.nd.random.uniform(shape=(5,), ctx=mx.gpu(0)).asnumpy()
    a1 = mx.nd.random.uniform(shape=(5,), ctx=mx.gpu(1)).asnumpy()
    mx.random.seed(7)
    b0 = mx.nd.random.uniform(shape=(5,), ctx=mx.gpu(0)).asnumpy()
    np.testing.assert_array_equal(a0, b0)
    assert not np.array_equal(a0, a1)


def test_naive_engine_runs_gpu_ops_at_push(fake_gpu):
    with mx.engine.naive():
        a = mx.nd.ones((2,), ctx=mx.gpu(0))
        b = a + 2
        np.testing.assert_array_equal(b.asnumpy(), 3)
        with pytest.raises(MXNetError):
            mx.nd.random.uniform(low=2, high=1, shape=(2,), ctx=mx.gpu(0))


def test_profiler_puts_gpu_ops_on_stream_tracks(fake_gpu, tmp_path):
    f = str(tmp_path / "trace.json")
    mx.profiler.set_config(profile_all=True, filename=f)
    mx.profiler.set_state("run")
    try:
        a = mx.nd.array(np.ones((4,)), ctx=mx.gpu(0))
        b = (a * 3).sum()
        b.asnumpy()
        mx.nd.waitall()
    finally:
        mx.profiler.set_state("stop")
    mx.profiler.dump()
    import json
    with open(f) as fh:
        ev = json.load(fh)["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    spans = [(tracks.get(e["tid"]), e["name"]) for e in ev if e.get("ph") == "X"]
    assert ("gpu(0) compute stream", "_mul_scalar") in spans
    assert ("gpu(0) compute stream", "sum") in spans
    assert ("gpu(0) copy stream", "_copyto") in spans
    assert ("gpu(0) copy stream", "read") in spans


def test_gpu_ops_timed_before_a_stop_are_in_the_dump(fake_gpu, tmp_path):
    """Ops still queued on the device when the profiler stops (no waitall,
    no read): their spans are not lost, dump and dumps wait for them."""
    f = str(tmp_path / "trace.json")
    mx.profiler.set_config(profile_all=True, filename=f, aggregate_stats=True)
    x = mx.nd.ones((6,), ctx=mx.gpu(0))
    x.wait_to_read()
    ex = _ex()
    with _Gate(ex.compute) as gate:
        mx.profiler.set_state("run")
        try:
            y = mx.nd.sqrt(x * 4) + 1
            assert ex._timed            # on the device's queue, not finished
        finally:
            mx.profiler.set_state("stop")
        gate.open()
    table = mx.profiler.dumps()
    assert "_mul_scalar" in table and "sqrt" in table and "_plus_scalar" in table
    mx.profiler.dump()
    import json
    with open(f) as fh:
        ev = json.load(fh)["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    spans = {(tracks.get(e["tid"]), e["name"]) for e in ev if e.get("ph") == "X"}
    for op in ("_mul_scalar", "sqrt", "_plus_scalar"):
        assert ("gpu(0) compute stream", op) in spans
    assert not ex._timed
    np.testing.assert_array_equal(y.asnumpy(), 3)


def test_threads_pushing_gpu_work_at_once(fake_gpu):
    """Several threads push dependent GPU work on shared and own arrays, with
    copies between devices and reads meanwhile: results as if serial, and the
    double sees nothing unordered across streams."""
    shared = mx.nd.zeros((16,), ctx=mx.gpu(0))
    results = {}
    errors = []
    start = threading.Barrier(4)

    def worker(k):
        try:
            start.wait(TIMEOUT)
            own = mx.nd.ones((16,), ctx=mx.gpu(k % 2)) * k
            for i in range(50):
                own = own + 1
                if i % 10 == 0:
                    peek = shared.as_in_context(mx.gpu(k % 2))   # reads racing the writer
                    own = own + peek * 0
            results[k] = own.copyto(mx.cpu()).asnumpy()
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in ts:
        t.start()
    start.wait(TIMEOUT)
    for _ in range(100):
        shared += 1
    for t in ts:
        t.join(TIMEOUT)
    assert not errors, errors
    for k in range(3):
        np.testing.assert_array_equal(results[k], k + 50)
    np.testing.assert_array_equal(shared.asnumpy(), 100)


def test_host_copies_complete_before_a_host_kernel_reads_them_on_cupy_12():
    """CuPy 12's asnumpy(a, stream=s) only starts the copy (no ``blocking``
    argument): the host side of a GPU op then waits for the stream itself."""
    from aiond.ndarray import _gpu as ndgpu
    events = []

    class Stream:
        def synchronize(self):
            events.append("sync")

    class CuPy12:
        @staticmethod
        def asnumpy(a, stream=None, order="C", out=None):
            events.append("copy started")
            return np.array(a)
    s = Stream()
    got = ndgpu.to_host(CuPy12, [1.0, 2.0], s)
    np.testing.assert_array_equal(got, [1, 2])
    assert events == ["copy started", "sync"]
