"""The CPU workers run under SCHED_BATCH on Linux once an event loop awaits
results (AIOND_WORKER_SCHED=auto; 'batch' from the start, 'other' never):
the loop, waking from epoll, gets a core before them. The threads that push
keep the normal policy, and so do the workers of a plain training loop."""
import asyncio
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import aiond as mx

pytestmark = pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"),
                                reason="SCHED_BATCH is a Linux scheduling policy")

_PROBE = """
import asyncio, json, os, threading
import aiond as mx
cpu = mx.engine.get().cpu

def on_workers():
    # one op per worker, each held until all run at once: every worker takes one
    # (waited for with a plain event: waitall would run a queued one itself)
    n = cpu.nworkers
    gate = threading.Barrier(n, timeout=30)
    done = threading.Semaphore(0)
    def op():
        gate.wait()
        done.release()
    arrs = [mx.nd.zeros((4,), ctx=mx.cpu()) for _ in range(n)]
    for a in arrs:
        mx.engine.push(op, writes=(a,), name="probe")
    for _ in range(n):
        assert done.acquire(timeout=30)
    mx.nd.waitall()

def policies():
    return sorted({os.sched_getscheduler(t) for t in cpu.native_ids})

on_workers()
plain = policies()
async def main():
    x = mx.nd.ones((64, 64), ctx=mx.cpu())
    return await mx.nd.dot(x, x).read()     # an event loop awaits a result
asyncio.run(main())
on_workers()
print(json.dumps({"plain": plain, "served": policies(), "nworkers": cpu.nworkers,
                  "started": len(cpu.native_ids),
                  "pusher": os.sched_getscheduler(threading.get_native_id())}))
"""


def _probe(value):
    env = dict(os.environ)
    env.pop("AIOND_ENGINE", None)
    env.pop("AIOND_CPU_WORKERS", None)
    if value is None:
        env.pop("AIOND_WORKER_SCHED", None)
    else:
        env["AIOND_WORKER_SCHED"] = value
    return subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("value,plain,served", [
    (None, "SCHED_OTHER", "SCHED_BATCH"),           # auto: batch once a loop awaits
    ("auto", "SCHED_OTHER", "SCHED_BATCH"),
    ("batch", "SCHED_BATCH", "SCHED_BATCH"),
    (" Other ", "SCHED_OTHER", "SCHED_OTHER")])
def test_workers_take_the_policy_and_the_pushing_thread_keeps_its_own(value, plain, served):
    r = _probe(value)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["started"] == got["nworkers"] >= 1
    assert got["plain"] == [getattr(os, plain)]
    assert got["served"] == [getattr(os, served)]
    assert got["pusher"] == os.SCHED_OTHER


def test_a_bad_value_fails_at_import_naming_the_variable():
    r = _probe("idle")
    assert r.returncode != 0
    assert "AIOND_WORKER_SCHED='idle'" in r.stderr and "batch, other" in r.stderr


def test_in_this_process_workers_serving_a_loop_are_batch_and_results_hold():
    if mx.engine.is_naive():
        pytest.skip("the naive engine has no workers")
    if os.environ.get("AIOND_WORKER_SCHED", "auto").strip().lower() not in ("auto", "batch"):
        pytest.skip("AIOND_WORKER_SCHED is set to another policy for this run")
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096

    async def main():
        x = mx.nd.array(a, ctx=mx.cpu())
        return await mx.nd.dot(x, x).read()
    np.testing.assert_allclose(asyncio.run(main()), a @ a, rtol=1e-5)
    cpu = mx.engine.get().cpu
    # a worker takes the policy with its next item: one held op per worker
    # (waited for with a plain event: waitall would run a queued one itself)
    gate = threading.Barrier(cpu.nworkers, timeout=30)
    done = threading.Semaphore(0)

    def op():
        gate.wait()
        done.release()
    hold = [mx.nd.zeros((4,), ctx=mx.cpu()) for _ in range(cpu.nworkers)]
    for h in hold:
        mx.engine.push(op, writes=(h,), name="probe")
    for _ in hold:
        assert done.acquire(timeout=30)
    mx.nd.waitall()
    assert len(cpu.native_ids) == cpu.nworkers
    assert {os.sched_getscheduler(t) for t in cpu.native_ids} == {os.SCHED_BATCH}
    assert os.sched_getscheduler(threading.get_native_id()) == os.SCHED_OTHER
