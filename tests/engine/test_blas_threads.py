"""BLAS threads follow the workers' load (aiond/engine/blas.py): every core
for one running kernel, one thread each while several run, and the engine's
own GEMM splits only where BLAS cannot be steered."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import aiond as mx
from aiond.engine import blas
from aiond.ops.registry import get as get_op

from .gates import TIMEOUT, clean_engine, wait_for  # noqa: F401

eng = mx.engine.get()


def _blas_threads():
    from threadpoolctl import threadpool_info
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def _steerable():
    mx.nd.ones(1).wait_to_read()        # starts the workers, which run setup
    eng.cpu._start()
    return blas.state.dynamic


needs_dynamic = pytest.mark.skipif(
    not _steerable(), reason="numpy's BLAS is not OpenBLAS on pthreads with 2+ threads")


@needs_dynamic
@pytest.mark.skipif(eng.cpu.nworkers < 2, reason="needs two CPU workers")
def test_two_kernels_at_once_narrow_blas_and_idle_widens_it():
    gate = threading.Event()
    started = [threading.Event(), threading.Event()]
    seen = [None, None]
    eng.cpu._start()

    def kernel(k):
        def run():
            started[k].set()
            assert gate.wait(TIMEOUT)
            seen[k] = _blas_threads()
        return run

    outs = [mx.nd.zeros(1) for _ in range(2)]
    oprs = [eng.push(kernel(k), (), (outs[k]._st.var,), "probe%d" % k) for k in range(2)]
    try:
        for k in range(2):
            wait_for(started[k], "kernel %d to start" % k)
    finally:
        gate.set()
    for o in oprs:
        eng.wait_opr(o, "test")
    # both ran at once: neither may have used a multi-threaded BLAS
    assert seen == [[1], [1]]
    mx.nd.waitall()
    assert blas.state.cur == blas.state.wide >= 2
    assert _blas_threads() == [blas.state.wide]


@needs_dynamic
def test_one_kernel_alone_gets_every_blas_thread():
    seen = []
    out = mx.nd.zeros(1)
    mx.nd.waitall()
    opr = eng.push(lambda: seen.append(_blas_threads()), (), (out._st.var,), "probe")
    eng.wait_opr(opr, "test")
    assert seen == [[blas.state.wide]]


def _count_splits(monkeypatch):
    calls = []
    cpu = type(eng.cpu)
    for name in ("run_split", "run_ranges"):
        orig = getattr(cpu, name)

        def wrapped(self, *a, _orig=orig, _name=name):
            calls.append(_name)
            return _orig(self, *a)
        monkeypatch.setattr(cpu, name, wrapped)
    return calls


@needs_dynamic
def test_matmuls_are_left_to_blas_threads(monkeypatch):
    calls = _count_splits(monkeypatch)
    a = np.random.rand(512, 512).astype(np.float32)
    A = mx.nd.array(a)
    mx.nd.waitall()
    y = mx.nd.dot(A, A)
    np.testing.assert_allclose(y.asnumpy(), a @ a, rtol=1e-4)
    z = mx.nd.FullyConnected(A, A, num_hidden=512, no_bias=True)
    np.testing.assert_allclose(z.asnumpy(), a @ a.T, rtol=1e-4)
    assert calls == []


@pytest.mark.parametrize("hybrid", [False, True])
def test_engine_row_splits_still_exact_when_blas_is_pinned(monkeypatch, hybrid):
    """With a BLAS the engine cannot steer, FullyConnected and dot are split
    by rows over the workers again; results must not change."""
    monkeypatch.setattr(blas.state, "dynamic", False)
    calls = _count_splits(monkeypatch)
    rs = np.random.RandomState(3)
    x = rs.rand(256, 300).astype(np.float32)
    w = rs.rand(200, 300).astype(np.float32)
    b = rs.rand(200).astype(np.float32)
    net = mx.gluon.nn.Dense(200, in_units=300)
    net.initialize()
    net.weight.set_data(mx.nd.array(w))
    net.bias.set_data(mx.nd.array(b))
    if hybrid:
        net.hybridize()
    for _ in range(3):
        X = mx.nd.array(x)
        X.attach_grad()
        with mx.autograd.record():
            y = net(X)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), x @ w.T + b, rtol=1e-4)
        np.testing.assert_allclose(X.grad.asnumpy(), np.ones((256, 200), np.float32) @ w,
                                   rtol=1e-4)
    d = mx.nd.dot(mx.nd.array(x), mx.nd.array(w), transpose_b=True)
    np.testing.assert_allclose(d.asnumpy(), x @ w.T, rtol=1e-4)
    if eng.cpu.nworkers > 1:
        assert calls, "a pinned BLAS must leave big matmuls to the engine's row split"


def test_fixed_thread_count_from_the_environment():
    code = ("import aiond as mx; mx.engine.get().cpu._start(); "
            "from aiond.engine import blas; from threadpoolctl import threadpool_info; "
            "print(blas.state.dynamic, [i['num_threads'] for i in threadpool_info() "
            "if i['user_api'] == 'blas'])")
    env = dict(os.environ, AIOND_BLAS_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out[0] == "False"
    assert out[1:] in (["[1]"], ["[]"])
