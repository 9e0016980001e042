"""How the OS schedules the engine's workers and the event loops they serve.

Two settings, both Linux only (elsewhere nothing changes):

* ``AIOND_WORKER_SCHED``: the workers' policy. 'auto' (the default) gives
  them ``SCHED_BATCH`` once an event loop awaits results: the same share of
  the cores, but a woken worker does not preempt a running thread. That
  includes a process at a lower priority: beside a nice-19 job a woken
  ``SCHED_BATCH`` worker waited for the scheduler's tick (4 ms at 250 Hz),
  and a server lost a fifth of its requests per second. So under 'auto'
  the workers take the normal policy back while processes at a lower
  priority than this one use the cores it may run on (``NicedLoad``: the
  kernel's count of niced CPU time in ``/proc/stat``, every half second).
* ``AIOND_LOOP_SLICE_US``: the time slice of a thread whose event loop
  awaits results (default 100 µs, the kernel's minimum; 0 leaves it alone).
  Under Linux's EEVDF scheduler (6.6 and later; custom slices from 6.12) a
  thread that wakes preempts the running one only when its deadline, one
  slice after it became eligible, comes first. With the default slice
  (1.4 ms on a 2-core machine here), a loop waking from ``epoll_wait`` on
  a core busy with a worker waited out the rest of the worker's slice: its
  timers ran 1-2 ms late in a serving benchmark (``serve_lag.py``, loop
  lag p99 ~2.1 ms) while its own work was at most 0.4 ms an iteration. A
  short slice lets it in at once. The nice
  value and policy stay as they were; no privilege is needed. Threads the
  loop's thread starts later get the default slice again (the kernel's
  reset-on-fork flag), and a thread at a negative nice value (already
  favoured) or under another policy is left alone.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ..base import MXNetError

__all__ = ["worker_policy", "set_policy", "loop_slice_ns", "short_slice", "NicedLoad"]

_SCHED_POLICIES = ("auto", "batch", "other")
# sched_setattr(2) has no libc wrapper nor Python binding: the raw syscall
_SYS_SCHED_SETATTR = {"x86_64": 314, "amd64": 314, "aarch64": 274, "arm64": 274}
_SLICE_MIN_US, _SLICE_MAX_US = 100, 100000      # the kernel clamps custom slices to these
_RESET_ON_FORK = 0x01       # SCHED_FLAG_RESET_ON_FORK


def worker_policy():
    """``AIOND_WORKER_SCHED``: 'auto' (the default: ``SCHED_BATCH`` once an
    event loop awaits results), 'batch' (from the start) or 'other' (the
    OS's normal policy, as the threads that push). Returns (mode, the
    batch policy or None where the OS has none)."""
    v = os.environ.get("AIOND_WORKER_SCHED", "auto").strip().lower()
    if v not in _SCHED_POLICIES:
        raise MXNetError("environment variable AIOND_WORKER_SCHED=%r: expected one of %s"
                         % (v, ", ".join(_SCHED_POLICIES)))
    batch = getattr(os, "SCHED_BATCH", None) if hasattr(os, "sched_setscheduler") else None
    return v, batch


def set_policy(policy):
    """Give the calling thread ``policy`` (None: leave it)."""
    if policy is None:
        return
    try:
        # pid 0: this thread (Linux schedules threads, not processes)
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError:     # a sandbox that forbids it: run as the other threads do
        pass


def loop_slice_ns():
    """``AIOND_LOOP_SLICE_US`` in nanoseconds (0: leave loops' slices alone)."""
    raw = os.environ.get("AIOND_LOOP_SLICE_US", "100").strip().lower()
    if raw in ("0", "off", "none"):
        return 0
    try:
        us = int(raw)
    except ValueError:
        us = -1
    if not _SLICE_MIN_US <= us <= _SLICE_MAX_US:
        raise MXNetError("environment variable AIOND_LOOP_SLICE_US=%r: expected 0 (off) or "
                         "microseconds from %d to %d" % (raw, _SLICE_MIN_US, _SLICE_MAX_US))
    return us * 1000


_libc = None


def short_slice(ns):
    """Ask the kernel for a ``ns`` time slice for the calling thread, keeping
    its policy (only the normal one, ``SCHED_OTHER``, is changed) and nice
    value (only one of 0 or more: reset-on-fork, which keeps the threads it
    starts on the default slice, would also reset their negative nice).
    Returns whether the kernel took it; a kernel without custom slices
    takes the call and ignores the value."""
    global _libc
    if not ns or not sys.platform.startswith("linux"):
        return False
    nr = _SYS_SCHED_SETATTR.get(os.uname().machine.lower())
    if nr is None:
        return False
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            return False
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        if nice < 0:
            return False
        import ctypes
        import struct
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        # struct sched_attr, first version (48 bytes): size, policy, flags,
        # nice, priority, runtime (the slice of a fair task), deadline, period
        attr = ctypes.create_string_buffer(
            struct.pack("=IIQiIQQQ", 48, os.SCHED_OTHER, _RESET_ON_FORK, nice, 0, ns, 0, 0), 48)
        return _libc.syscall(nr, 0, attr, 0) == 0
    except (OSError, AttributeError, ValueError):
        return False


def _niced_ticks(cpus):
    """CPU time spent by niced tasks (nice > 0) on ``cpus`` since boot, in
    clock ticks (the ``nice`` column of ``/proc/stat``); None where there is
    no such file."""
    total = 0
    try:
        with open("/proc/stat", "rb") as f:
            for line in f:
                if not line.startswith(b"cpu"):
                    break
                fields = line.split()
                name = fields[0][3:]
                if name and int(name) in cpus:
                    total += int(fields[2])
    except (OSError, ValueError, IndexError):
        return None
    return total


def _own_niced_ticks():
    """This process's own share of the niced time (its user time, when it
    runs at a positive nice value itself), in clock ticks."""
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) <= 0:
            return 0
        return os.times().user * _TICKS
    except (AttributeError, OSError):
        return 0


try:
    _TICKS = os.sysconf("SC_CLK_TCK")
except (AttributeError, ValueError, OSError):
    _TICKS = 100


class NicedLoad:
    """Whether processes at a lower priority than this one (a positive nice
    value) keep taking CPU time on the cores this process may use.

    Read at most every ``interval`` seconds by whichever worker asks
    (``due``), from the kernel's per-CPU count of niced time; this process's
    own niced time does not count. A share of one core at or above
    ``share`` over the last interval is a neighbour worth preempting."""

    def __init__(self, interval=0.5, share=0.05, read=_niced_ticks, own=_own_niced_ticks,
                 clock=time.monotonic, cpus=None, ticks_per_s=None):
        self.interval, self.share = interval, share
        self._tps = ticks_per_s or _TICKS
        self._read, self._own, self._clock = read, own, clock
        self._cpus = cpus
        self._next = 0.0
        self._last = None        # (time, niced ticks, own ticks)
        self.present = False

    def due(self):
        """True once per interval: the caller should call ``update``."""
        now = self._clock()
        if now < self._next:
            return False
        self._next = now + self.interval
        return True

    def update(self):
        """Take a new reading; returns ``present``."""
        cpus = self._cpus
        if cpus is None:
            try:
                cpus = os.sched_getaffinity(0)
            except (AttributeError, OSError):
                cpus = range(os.cpu_count() or 1)
        ticks = self._read(cpus)
        if ticks is None:
            self.present = False
            return False
        now, own = self._clock(), self._own()
        last, self._last = self._last, (now, ticks, own)
        if last is not None and now > last[0]:
            others = (ticks - last[1]) - (own - last[2])
            self.present = others >= self.share * (now - last[0]) * self._tps
        return self.present
