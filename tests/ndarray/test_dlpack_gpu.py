"""DLPack exchange of GPU arrays with another CUDA library (CuPy itself here,
on the CuPy double): capsules share the device buffer, ``to_dlpack_for_*``
wait for the device as MXNet's WaitToRead/WaitToWrite do, and a CUDA
capsule comes back as an array on ``mx.gpu(i)``."""
import ctypes
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError
from aiond.engine import gpu as _gpu


def test_a_gpu_array_goes_to_cupy_and_back_sharing_its_buffer(fake_gpu):
    import cupy
    a = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3), ctx=mx.gpu(1))
    theirs = cupy.from_dlpack(a.to_dlpack_for_read())       # another library's view
    assert theirs.device.id == 1
    with cupy.cuda.Device(1):
        np.testing.assert_array_equal(cupy.asnumpy(theirs), np.arange(6).reshape(2, 3))
    mine = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(a))
    assert mine.context == mx.gpu(1) and mine.shape == (2, 3) and mine.dtype == np.float32
    np.testing.assert_array_equal((mine * 2).asnumpy(), 2 * np.arange(6).reshape(2, 3))
    # the other library writes through its view (on its own, default stream)
    w = cupy.from_dlpack(mx.nd.to_dlpack_for_write(a))
    with cupy.cuda.Device(1):
        w[...] = 7
    np.testing.assert_array_equal(a.asnumpy(), np.full((2, 3), 7))
    assert not fake_gpu.races


def test_to_dlpack_waits_for_the_device_before_handing_the_buffer_over(fake_gpu):
    if mx.engine.statistics().naive:
        pytest.skip("the naive engine runs every op at its push")
    x = mx.nd.ones((4,), ctx=mx.gpu(0))
    x.wait_to_read()
    ex = _gpu.executor(mx.gpu(0))
    gate = threading.Event()
    ex.compute.block(gate)
    y = x * 5                           # held on the device behind the gate
    got = {}

    def take():
        got["cap"] = y.to_dlpack_for_read()
    t = threading.Thread(target=take)
    t.start()
    t.join(0.2)
    assert t.is_alive() and "cap" not in got    # still waiting for the device
    gate.set()
    t.join(10)
    import cupy
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(got["cap"])), 5)


def test_a_bare_cuda_capsule_names_its_device_inside(fake_gpu):
    import cupy
    with cupy.cuda.Device(1):
        src = cupy.arange(5, dtype=np.float32)
    cap = src.toDlpack()                # a bare "dltensor" capsule, as torch gives
    got = mx.nd.from_dlpack(cap)
    assert got.context == mx.gpu(1)
    np.testing.assert_array_equal(got.asnumpy(), np.arange(5))
    with pytest.raises(MXNetError, match="from_dlpack"):
        mx.nd.from_dlpack(cap)          # a capsule is consumed once


def test_host_capsules_still_load_on_the_cpu_and_sparse_arrays_refuse(fake_gpu):
    a = np.arange(3, dtype=np.float64)
    got = mx.nd.from_dlpack(a.__dlpack__())
    assert got.context == mx.cpu()
    np.testing.assert_array_equal(got.asnumpy(), a)
    sp = mx.nd.array(np.eye(3, dtype=np.float32), ctx=mx.gpu(0)).tostype("csr")
    with pytest.raises(MXNetError, match="dense"):
        sp.to_dlpack_for_read()
    with pytest.raises(MXNetError, match="from_dlpack"):
        mx.nd.from_dlpack(ctypes.pythonapi.PyCapsule_New)     # not a capsule at all
