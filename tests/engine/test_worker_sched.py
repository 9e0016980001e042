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

_HOLD_EACH_WORKER = """
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
"""

_PROBE = _HOLD_EACH_WORKER + """
on_workers()
plain = policies()
async def main():
    x = mx.nd.ones((64, 64), ctx=mx.cpu())
    return await mx.nd.dot(x, x).read()     # an event loop awaits a result
asyncio.run(main())
if cpu._niced is not None:
    # whatever else runs on this machine: no niced neighbour is seen
    cpu._niced.due = lambda: False
on_workers()
print(json.dumps({"plain": plain, "served": policies(), "nworkers": cpu.nworkers,
                  "started": len(cpu.native_ids),
                  # (the loop's thread took a short slice, reset on fork)
                  "pusher": os.sched_getscheduler(threading.get_native_id())
                            & ~os.SCHED_RESET_ON_FORK}))
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
    watch = cpu._niced
    if watch is not None:
        # whatever else runs on this machine (or ran before this test): the
        # workers' next items read a verdict of no niced neighbour
        cpu._niced = _NoNeighbour()
    try:
        _hold_each_worker_once_and_check_batch(cpu)
    finally:
        cpu._niced = watch


class _NoNeighbour:
    """A NicedLoad that always reads no lower-priority neighbour."""
    present = False

    def due(self):
        return True

    def update(self):
        return False


def _hold_each_worker_once_and_check_batch(cpu):
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
    assert (os.sched_getscheduler(threading.get_native_id())
            & ~os.SCHED_RESET_ON_FORK) == os.SCHED_OTHER


# ------------------------------------------------ the awaiting loop's time slice
_SLICE_PROBE = """
import asyncio, json, os, sys, threading
if len(sys.argv) > 1:
    # a nice value of at least argv[1], or exactly a negative one (os.nice is
    # relative: nice(-2) is 17 under nice -n 19)
    want = int(sys.argv[1])
    if want < 0 or want > os.getpriority(os.PRIO_PROCESS, 0):
        os.setpriority(os.PRIO_PROCESS, 0, want)
import aiond as mx

def me():
    tid = threading.get_native_id()
    sl = None
    with open("/proc/self/task/%d/sched" % tid) as f:
        for line in f:
            if line.startswith("se.slice"):
                sl = int(line.split(":")[1])
    return {"slice": sl, "nice": os.getpriority(os.PRIO_PROCESS, tid),
            "policy": os.sched_getscheduler(0) & ~os.SCHED_RESET_ON_FORK}

before = me()
x = mx.nd.ones((64, 64))
mx.nd.dot(x, x).asnumpy()             # a plain thread's waits change nothing
plain = me()
async def main():
    y = mx.nd.dot(x, x)
    await y.read()
    return me()
served = asyncio.run(main())
other = {}
def thread():                         # another thread that never awaits keeps its own
    mx.nd.dot(x, x).asnumpy()
    other.update(me())
t = threading.Thread(target=thread)
t.start(); t.join()
print(json.dumps({"before": before, "plain": plain, "served": served, "other": other}))
"""


def _slice_probe(value, *args):
    env = dict(os.environ)
    env.pop("AIOND_ENGINE", None)
    if value is None:
        env.pop("AIOND_LOOP_SLICE_US", None)
    else:
        env["AIOND_LOOP_SLICE_US"] = value
    return subprocess.run([sys.executable, "-c", _SLICE_PROBE] + list(args), env=env,
                          capture_output=True, text=True, timeout=120)


def _sched_slices_shown():
    try:
        with open("/proc/self/sched") as f:
            return any(line.startswith("se.slice") for line in f)
    except OSError:
        return False


slices = pytest.mark.skipif(not _sched_slices_shown(),
                            reason="this kernel does not show a thread's time slice "
                                   "(/proc/<pid>/sched has no se.slice)")


@slices
@pytest.mark.parametrize("value,want", [(None, 100_000), ("250", 250_000), (" 100 ", 100_000)])
def test_a_thread_whose_loop_awaits_results_takes_a_short_slice(value, want):
    r = _slice_probe(value)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    default = got["before"]["slice"]
    assert default > want              # the kernel's default slice is longer
    assert got["plain"] == got["before"]
    assert got["served"]["slice"] == want
    assert got["served"]["policy"] == os.SCHED_OTHER
    assert got["served"]["nice"] == got["before"]["nice"]
    assert got["other"]["slice"] == default      # (threads it starts included)


@slices
@pytest.mark.parametrize("value", ["0", "off"])
def test_the_loop_slice_can_be_left_alone(value):
    r = _slice_probe(value)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["served"]["slice"] == got["before"]["slice"]


@slices
def test_the_short_slice_keeps_the_threads_nice_value():
    r = _slice_probe(None, "3")
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["before"]["nice"] == got["served"]["nice"] >= 3
    assert got["served"]["slice"] == 100_000


@pytest.mark.parametrize("value", ["50", "200000", "fast", "-1"])
def test_a_bad_loop_slice_fails_at_import_naming_the_variable(value):
    r = _slice_probe(value)
    assert r.returncode != 0
    assert "AIOND_LOOP_SLICE_US=%r" % value in r.stderr and "100 to 100000" in r.stderr


def test_a_thread_under_another_policy_keeps_it():
    from aiond.engine import ossched
    got = {}

    def thread():
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        got["took"] = ossched.short_slice(100_000)
        got["policy"] = os.sched_getscheduler(0)
    t = threading.Thread(target=thread)
    t.start()
    t.join()
    assert got == {"took": False, "policy": os.SCHED_BATCH}


@slices
def test_a_thread_at_a_negative_nice_value_is_left_alone():
    r = _slice_probe(None, "-2")
    if r.returncode != 0 and "PermissionError" in r.stderr:
        pytest.skip("setting a negative nice value needs privileges this run lacks "
                    "(CAP_SYS_NICE or RLIMIT_NICE)")
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    assert got["before"]["nice"] == -2, got      # what the probe asked for, whatever ran it
    assert got["served"]["nice"] == -2
    assert got["served"]["slice"] == got["before"]["slice"]


# ---------------------------- a neighbour at a lower priority (ossched.NicedLoad)
class _Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def _niced(readings, own=None, interval=0.5, share=0.05):
    """A NicedLoad over scripted /proc/stat readings (ticks at 100 a second)."""
    from aiond.engine import ossched
    clock = _Clock()
    it = iter(readings)
    owns = iter(own) if own is not None else None
    w = ossched.NicedLoad(interval=interval, share=share, read=lambda cpus: next(it),
                          own=(lambda: next(owns)) if owns is not None else (lambda: 0),
                          clock=clock, cpus={0, 1}, ticks_per_s=100)
    return w, clock


def test_niced_time_of_other_processes_marks_a_lower_priority_neighbour():
    # half a second is 50 ticks of one core; 5 % of a core is 2.5 ticks
    w, clock = _niced([1000, 1002, 1030, 1031, 1031])
    assert w.update() is False                  # the first reading is a baseline
    clock.t += 0.5
    assert w.update() is False                  # 2 ticks: below 5 % of a core
    clock.t += 0.5
    assert w.update() is True                   # 28 ticks: a neighbour
    clock.t += 0.5
    assert w.update() is False                  # 1 tick: gone again
    clock.t += 0.5
    assert w.update() is False and w.present is False


def test_this_processs_own_niced_time_does_not_count():
    # run at a positive nice value itself: its own user time is in the column
    w, clock = _niced([0, 40, 80], own=[0, 39, 50])
    w.update()
    clock.t += 0.5
    assert w.update() is False                  # 40 ticks, 39 of them ours
    clock.t += 0.5
    assert w.update() is True                   # 40 ticks, 11 ours: 29 others'


def test_without_proc_stat_nothing_is_assumed():
    w, clock = _niced([None, None])
    assert w.update() is False
    clock.t += 1
    assert w.update() is False


def test_the_reading_is_due_once_per_interval():
    w, clock = _niced([])
    assert w.due() is True
    assert w.due() is False
    clock.t += 0.49
    assert w.due() is False
    clock.t += 0.02
    assert w.due() is True and w.due() is False


def test_the_real_proc_stat_sees_a_nice_19_busy_loop():
    from aiond.engine import ossched
    if ossched._niced_ticks(os.sched_getaffinity(0)) is None:
        pytest.skip("no /proc/stat here")
    busy = subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", "while True: pass"])
    try:
        w = ossched.NicedLoad(interval=0.3)
        w.update()
        seen = False
        for _ in range(40):              # up to ~12 s on a machine busy with other work
            threading.Event().wait(0.3)
            if w.update():
                seen = True
                break
        assert seen, "a nice-19 busy loop was not seen in /proc/stat's niced time"
    finally:
        busy.kill()
        busy.wait()


_NICED_PROBE = _HOLD_EACH_WORKER + """
class Verdict:
    # what NicedLoad would say, scripted: a reading is due before every item
    present = False
    def due(self):
        return True
    def update(self):
        return self.present

async def main():
    x = mx.nd.ones((64, 64), ctx=mx.cpu())
    return await mx.nd.dot(x, x).read()
asyncio.run(main())
watch = cpu._niced
verdict = Verdict()
if watch is not None:       # (a policy asked for by name has no watch to script)
    cpu._niced = verdict
on_workers()
out = {"watch": type(watch).__name__, "quiet": policies()}
verdict.present = True
on_workers()
out["beside"] = policies()
verdict.present = False
on_workers()
out["after"] = policies()
print(json.dumps(out))
"""


@pytest.mark.parametrize("value", [None, "batch", "other"])
def test_a_lower_priority_neighbour_sends_serving_workers_back_to_the_normal_policy(value):
    env = dict(os.environ)
    env.pop("AIOND_ENGINE", None)
    env.pop("AIOND_CPU_WORKERS", None)
    env.pop("AIOND_WORKER_SCHED", None)
    if value is not None:
        env["AIOND_WORKER_SCHED"] = value
    r = subprocess.run([sys.executable, "-c", _NICED_PROBE], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout)
    if value is None:       # auto: batch while nothing niced runs, normal beside it
        assert got == {"watch": "NicedLoad", "quiet": [os.SCHED_BATCH],
                       "beside": [os.SCHED_OTHER], "after": [os.SCHED_BATCH]}
    else:                   # a policy asked for by name is kept whatever runs beside
        want = [getattr(os, "SCHED_" + value.upper())]
        assert got == {"watch": "NoneType", "quiet": want, "beside": want, "after": want}
