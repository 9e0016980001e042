"""The CPU workers run under SCHED_BATCH on Linux (AIOND_WORKER_SCHED): a
thread that wakes up, such as an event loop back from epoll, gets a core
before them. The threads that push keep the normal policy."""
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
async def main():
    x = mx.nd.ones((64, 64), ctx=mx.cpu())
    return await mx.nd.dot(x, x).read()     # an event loop's op runs on a worker
asyncio.run(main())
cpu = mx.engine.get().cpu
print(json.dumps({"workers": [os.sched_getscheduler(t) for t in cpu.native_ids],
                  "nworkers": cpu.nworkers,
                  "pusher": os.sched_getscheduler(threading.get_native_id())}))
"""


def _probe(value):
    env = dict(os.environ)
    env.pop("AIOND_ENGINE", None)
    if value is None:
        env.pop("AIOND_WORKER_SCHED", None)
    else:
        env["AIOND_WORKER_SCHED"] = value
    return subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("value,policy", [(None, "SCHED_BATCH"), ("batch", "SCHED_BATCH"),
                                          (" Other ", "SCHED_OTHER")])
def test_workers_take_the_policy_and_the_pushing_thread_keeps_its_own(value, policy):
    r = _probe(value)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert len(got["workers"]) == got["nworkers"] >= 1
    assert set(got["workers"]) == {getattr(os, policy)}
    assert got["pusher"] == os.SCHED_OTHER


def test_a_bad_value_fails_at_import_naming_the_variable():
    r = _probe("idle")
    assert r.returncode != 0
    assert "AIOND_WORKER_SCHED='idle'" in r.stderr and "batch, other" in r.stderr


def test_in_this_process_every_worker_is_batch_and_results_hold():
    if mx.engine.is_naive():
        pytest.skip("the naive engine has no workers")
    if os.environ.get("AIOND_WORKER_SCHED", "batch").strip().lower() != "batch":
        pytest.skip("AIOND_WORKER_SCHED is set to another policy for this run")
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096

    async def main():
        x = mx.nd.array(a, ctx=mx.cpu())
        return await mx.nd.dot(x, x).read()
    np.testing.assert_allclose(asyncio.run(main()), a @ a, rtol=1e-5)
    cpu = mx.engine.get().cpu
    assert len(cpu.native_ids) == cpu.nworkers
    assert {os.sched_getscheduler(t) for t in cpu.native_ids} == {os.SCHED_BATCH}
    assert os.sched_getscheduler(threading.get_native_id()) == os.SCHED_OTHER
