import threading
import warnings

import numpy as np
import pytest

import aiond as mx
from aiond.base import MXNetError

SHAPE = (2, 3)


def full(v):
    return np.full(SHAPE, v, dtype=np.float32)


@pytest.mark.parametrize("name", ["local", "device", "local_allreduce_cpu", "local_allreduce_device"])
def test_types_rank_workers(name):
    kv = mx.kv.create(name)
    assert kv.type == name and kv.rank == 0 and kv.num_workers == 1


def test_push_sums_devices_then_updater_once_per_key():
    kv = mx.kv.create("local")
    kv.init(["a", "b"], [mx.nd.zeros(SHAPE), mx.nd.ones(SHAPE)])
    seen = []

    def upd(key, grad, stored):
        seen.append((key, grad.asnumpy().copy()))
        stored -= grad * 0.5

    kv._set_updater(upd)
    devs = [mx.cpu(i) for i in range(3)]
    kv.push(["a", "b"], [[mx.nd.ones(SHAPE, d) * (i + 1) for i, d in enumerate(devs)],
                         mx.nd.ones(SHAPE) * 2])
    assert [k for k, _ in seen] == ["a", "b"]
    np.testing.assert_array_equal(seen[0][1], full(6))
    outs = [mx.nd.zeros(SHAPE, d) for d in devs]
    kv.pull("a", out=outs)
    for o, d in zip(outs, devs):
        assert o.context == d
        np.testing.assert_array_equal(o.asnumpy(), full(-3))
    out = mx.nd.zeros(SHAPE)
    kv.pull("b", out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(0))


def test_push_without_updater_overwrites_and_pushpull_broadcast():
    kv = mx.kv.create()
    kv.init(7, mx.nd.ones(SHAPE))
    kv.push(7, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE, mx.cpu(1))])
    out = mx.nd.zeros(SHAPE)
    kv.pull(7, out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(2))
    v = mx.nd.ones(SHAPE) * 5
    kv.pushpull(7, v)
    np.testing.assert_array_equal(v.asnumpy(), full(5))
    o = mx.nd.zeros(SHAPE)
    kv.broadcast(8, mx.nd.ones(SHAPE) * 9, out=o)
    np.testing.assert_array_equal(o.asnumpy(), full(9))


def test_init_stores_a_copy_and_pull_is_ordered_after_later_writes():
    kv = mx.kv.create()
    src = mx.nd.ones(SHAPE)
    kv.init(0, src)
    src[:] = 100                      # the store kept a copy
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    out += 1                          # ordered after the pull's copy
    np.testing.assert_array_equal(out.asnumpy(), full(2))


def test_bad_keys_and_values():
    kv = mx.kv.create()
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="cannot mix int and str keys"):
        kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="has not been initialized"):
        kv.push(4, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="has not been initialized"):
        kv.pull(5, out=mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="already initialized"):
        kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="shape"):
        kv.push(3, mx.nd.ones((3, 3)))
    with pytest.raises(MXNetError, match="must be an NDArray"):
        kv.push(3, np.ones(SHAPE))
    with pytest.raises(MXNetError, match="keys must be int or str"):
        kv.init(1.5, mx.nd.ones(SHAPE))
    with pytest.raises(MXNetError, match="unknown kvstore type"):
        mx.kv.create("bogus")
    with pytest.raises(MXNetError, match="not available in aiond"):
        mx.kv.create("horovod")


def test_register_plugin_store_by_name():
    class MyStore(mx.kv.KVStoreBase):
        def __init__(self):
            self.made = True

    mx.kv.KVStoreBase.register(MyStore)
    try:
        kv = mx.kv.create("MyStore")
        assert isinstance(kv, MyStore) and kv.made
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mx.kv.KVStoreBase.register(MyStore)
        assert any("overriding" in str(x.message) for x in w)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("mystore", None)


def test_concurrent_pushes_from_threads_lose_nothing():
    kv = mx.kv.create()
    kv.init(0, mx.nd.zeros(SHAPE))

    def upd(key, grad, stored):
        stored += grad

    kv._set_updater(upd)

    def worker():
        for _ in range(50):     # each update is an in-place engine op on the stored var
            kv.push(0, mx.nd.ones(SHAPE))

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), full(200))
