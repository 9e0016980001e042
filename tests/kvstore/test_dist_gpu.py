"""The synchronous distributed stores with values on GPU contexts.

Without a GPU these run on the CuPy test double (``tests/fakecupy.py``, two
devices): in this process through the ``fake_gpu`` fixture, and under
``mpiexec -n 2`` with the double installed in every rank (dist_worker.py's
``gpu_*`` scenarios). The double checks the ordering a real GPU needs (a
copy that did not wait for its producer's event is a race) and counts host
synchronizations. The NCCL path needs real CuPy, NCCL and a GPU per rank:
its test is marked ``gpu`` and skipped elsewhere."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import aiond as mx

from .test_dist import _same_on_every_rank, dw, needs_mpi, run_mpi


# ------------------------------------------------------------ one worker
def test_gpu_values_single_process(fake_gpu, tmp_path):
    kv = mx.kv.create("dist_device_sync")
    assert kv.num_workers == 1
    dw.gpu_sums(mx, kv, str(tmp_path))
    got = np.load(tmp_path / "gpu_sums-0.npz")
    np.testing.assert_array_equal(got["big"], np.arange(300000, dtype=np.float64))
    for dt in ("float16", "int8", "uint8", "int64"):
        assert got[dt].dtype == np.dtype(dt) and (got[dt] == 1).all()


def test_gpu_list_is_reduced_on_the_device_then_staged_once(fake_gpu):
    kv = mx.kv.create("dist_sync")
    kv.init("w", mx.nd.zeros((4,), ctx=mx.gpu(1)))
    before = kv._stage.copies
    kv.push("w", [mx.nd.ones((4,), ctx=mx.gpu(0)) * 2, mx.nd.ones((4,), ctx=mx.gpu(1)) * 3])
    assert kv._stage.copies == before + 1        # one device->host copy for the key
    o = mx.nd.zeros((4,), ctx=mx.gpu(1))
    kv.pull("w", out=o)
    assert o.context == mx.gpu(1)
    np.testing.assert_array_equal(o.asnumpy(), 5)
    assert fake_gpu.syncs == 0


def test_collective_waits_for_the_gpu_producer_without_a_host_sync(fake_gpu):
    """A value whose kernel is still queued behind a busy stream: push
    returns at once, the collective runs only once the device produced the
    value (its copy waited on the producer's event, on the device), and no
    thread synchronized a stream or the device."""
    from aiond.engine import gpu as _gpu
    kv = mx.kv.create("dist_device_sync")
    kv.init(3, mx.nd.zeros((6,), ctx=mx.gpu(0)))
    out = mx.nd.zeros((6,), ctx=mx.gpu(0))
    kv.pull(3, out=out)
    out.wait_to_read()
    ct = kv._ct
    gate = threading.Event()
    try:
        _gpu.executor(mx.gpu(0)).compute.block(gate)
        v = mx.nd.ones((6,), ctx=mx.gpu(0)) * 7       # behind the gate on the device
        jobs = ct.stats["jobs"]
        kv.pushpull(3, v, out=out)                   # returns: nothing waits for the device
        assert ct.stats["jobs"] == jobs, "the collective ran before its GPU input existed"
    finally:
        gate.set()
    np.testing.assert_array_equal(out.asnumpy(), 7)
    assert ct.stats["jobs"] == jobs + 1
    assert fake_gpu.syncs == 0, fake_gpu.sync_where[:5]


def test_dist_async_with_gpu_values(fake_gpu):
    kv = mx.kv.create("dist_async")
    kv.init(1, mx.nd.ones((5,), ctx=mx.gpu(1)))
    kv.set_optimizer(mx.optimizer.create("test", learning_rate=1.0, rescale_grad=1.0))
    g = [mx.nd.ones((5,), ctx=mx.gpu(0)), mx.nd.ones((5,), ctx=mx.gpu(1)) * 2]
    out = [mx.nd.zeros((5,), ctx=mx.gpu(1)), mx.nd.zeros((5,))]
    kv.pushpull(1, g, out=out)
    assert out[0].context == mx.gpu(1)
    for o in out:
        np.testing.assert_array_equal(o.asnumpy(), 4)      # w += lr * sum
    o = mx.nd.zeros((5,), ctx=mx.gpu(0))
    kv.pull(1, out=o)
    np.testing.assert_array_equal(o.asnumpy(), 4)
    assert fake_gpu.syncs == 0


def test_gpu_trainer_single_process_matches_the_host(fake_gpu):
    steps, per = 4, 8
    xs, ys = dw._data(0, steps * per)
    ref = dw.gluon_ref(mx, 1)
    for ctxs in ([mx.gpu(0)], [mx.gpu(0), mx.gpu(1)]):
        got = dw.train_gluon_gpu(mx, "dist_device_sync", xs, ys, steps, per, ctxs)
        assert len(got) == len(ref)
        for a, b in zip(got.values(), ref.values()):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ mpiexec -n 2
@needs_mpi
@pytest.mark.slow
@pytest.mark.parametrize("nccl", ["staged", "fake-nccl", "nccl-on-rank-0-only"])
def test_gpu_values_and_trainer_on_two_ranks(tmp_path, nccl):
    """Staged through the host; and through the NCCL path, with a double of
    ``cupy.cuda.nccl`` (tests/kvstore/fakenccl.py: checks the unique id was
    broadcast, and that the reduction stream waited for its inputs)."""
    env = {"KV_TYPE": "dist_device_sync", "AIOND_DIST_CHUNK_BYTES": "65536"}
    if nccl == "fake-nccl":
        env["FAKE_NCCL"] = "1"
    elif nccl == "nccl-on-rank-0-only":
        # the ranks vote: one can't, so none uses NCCL (and nobody hangs)
        env["FAKE_NCCL"] = "rank0"
        run_mpi(2, "gpu_sums", tmp_path, env=env)
        return
    run_mpi(2, "gpu_sums,gpu_trainer", tmp_path, env=env)
    sums = _same_on_every_rank(tmp_path, "gpu_sums", 2)
    np.testing.assert_array_equal(sums["big"], np.arange(300000, dtype=np.float64) * 3)
    for dt in ("float16", "float32", "float64", "uint8", "int8", "int32", "int64"):
        assert sums[dt].dtype == np.dtype(dt) and (sums[dt] == 3).all()
    ref = dw.gluon_ref(mx, 2)
    for tag in ("one", "two"):
        got = _same_on_every_rank(tmp_path, "gpu_trainer_" + tag, 2)   # bit-identical
        assert len(got) == len(ref)
        for a, b in zip(got.values(), ref.values()):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ NCCL (real GPUs)
def _nccl_gpus():
    try:
        import cupy
        from cupy.cuda import nccl
        if not getattr(nccl, "available", True):
            return 0
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no CuPy, NCCL, driver or device
        return 0


@pytest.mark.gpu
@needs_mpi
@pytest.mark.skipif(_nccl_gpus() < 2,
                    reason="needs real CuPy with NCCL and two GPUs")
def test_dist_device_sync_reduces_with_nccl_on_two_gpus(tmp_path):
    run_mpi(2, "nccl_sums", tmp_path, env={"KV_TYPE": "dist_device_sync"})


def test_failed_gpu_producer_fails_the_pull_not_the_store(fake_gpu):
    kv = mx.kv.create("dist_device_sync")
    kv.init(1, mx.nd.ones((3,), ctx=mx.gpu(0)))
    g = mx.nd.ones((3,), ctx=mx.gpu(0))

    def boom():
        raise ValueError("kernel failed on purpose")
    mx.engine.push(boom, writes=[g])
    kv.pushpull(1, g)
    with pytest.raises(mx.base.MXNetError, match="kernel failed on purpose"):
        g.asnumpy()
    v = mx.nd.ones((3,), ctx=mx.gpu(0)) * 4
    kv.pushpull(1, v)
    np.testing.assert_array_equal(v.asnumpy(), 4)
    mx.nd.waitall()
