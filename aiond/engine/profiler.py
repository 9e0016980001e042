"""Records what the runtime does and writes Chrome trace / Perfetto JSON.

Each op the engine runs (name, thread, start, end, the vars it read and
wrote), the user's own annotations (``mx.profiler`` Task, Frame, Event,
Counter, Marker) and, when asked, the bytes of storage in use per device.
Optionally it keeps MXNet's aggregate statistics (count, total, min, max,
average per name, grouped by category) for ``mx.profiler.dumps()``.

Off by default and free when off: ``Engine.push`` checks one attribute and,
when a profiler is recording, wraps the op's kernel in a timing closure.
"""
from __future__ import annotations

import contextlib
import json
import os
import threading
import time

__all__ = ["Profiler", "MEMORY_CATEGORY", "CUSTOM_CATEGORY", "custom_op_scope"]

MEMORY_CATEGORY = "Device Storage"
CUSTOM_CATEGORY = "Custom Operator"
_scope = threading.local()


@contextlib.contextmanager
def custom_op_scope(name):
    """Run a custom operator's Python code (``name``: its op type, or
    ``_backward_<type>``) as MXNet's profiler sees it: the code itself is a
    ``<name>::pure_python`` span and every op it pushes is recorded as
    ``<name>::<op>``, both in the 'Custom Operator' category."""
    from . import get
    prev = getattr(_scope, "name", None)
    _scope.name = name
    p = get().prof
    start = p.now_us() if p is not None else None
    try:
        yield
    finally:
        _scope.name = prev
        if p is not None and get().prof is p:
            p.duration(name + "::pure_python", CUSTOM_CATEGORY, start, p.now_us())
_SORT_KEYS = ("total", "avg", "min", "max", "count")


class _Stat:
    """MXNet's AggregateStats::StatData: a duration or a counter."""
    __slots__ = ("counter", "count", "total", "min", "max")

    def __init__(self, counter):
        self.counter = counter
        self.count = 0
        self.total = 0.0
        self.min = float("inf")
        self.max = 0.0

    def add(self, value):
        self.count += 1
        if self.counter:
            self.total = value          # a counter's "total" is its last value
        else:
            self.total += value
        self.min = min(self.min, value)
        self.max = max(self.max, value)

    def avg(self):
        if self.counter:
            return (self.max - self.min) / 2
        return self.total / self.count if self.count else 0.0

    def key(self, sort_by):
        return {"total": self.total, "avg": self.avg(), "min": self.min, "max": self.max,
                "count": self.count}[sort_by]


class Profiler:
    """One recording: trace events and (if ``aggregate_stats``) statistics."""

    def __init__(self, filename="profile.json", aggregate_stats=False):
        self.filename = filename
        self.aggregate_stats = aggregate_stats
        self.events = []
        self.stats = {}             # category -> name -> _Stat
        # re-entrant: a storage freed by the garbage collector while this
        # thread holds the lock reports its memory from inside
        self._lock = threading.RLock()
        self._t0 = time.perf_counter()
        self._ids = {}
        self._pid = os.getpid()
        self._mem = {}              # device name -> bytes in use
        self._dump_file = None      # the trace file a continuous dump is appending to
        self._dump_first = True

    # ---------------------------------------------------------------- time
    def now_us(self):
        """Microseconds since this recording began (trace timestamps)."""
        return (time.perf_counter() - self._t0) * 1e6

    def _var_id(self, v):
        # stable small ids for vars (ids of live objects may be reused later)
        i = self._ids.get(id(v))
        if i is None:
            i = self._ids[id(v)] = len(self._ids)
        return i

    def _aggregate(self, cat, name, value, counter=False):
        if not self.aggregate_stats:
            return
        with self._lock:
            by_name = self.stats.setdefault(cat, {})
            s = by_name.get(name)
            if s is None:
                s = by_name[name] = _Stat(counter)
            s.add(value)

    # ---------------------------------------------------------------- ops
    def wrap(self, fn, name, reads, writes, split=None):
        """``fn`` timed: its run becomes a complete ('X') 'operator' event."""
        rd = [self._var_id(v) for v in reads]
        wr = [self._var_id(v) for v in writes]
        cat = "operator"
        scope = getattr(_scope, "name", None)
        if scope is not None:           # pushed by a custom operator's code
            name = "%s::%s" % (scope, name)
            cat = CUSTOM_CATEGORY
        events = self.events
        perf = time.perf_counter
        t0 = self._t0
        pid = self._pid

        def timed():
            start = perf()
            try:
                return fn() if fn is not None else None
            finally:
                end = perf()
                dur = (end - start) * 1e6
                events.append({"name": name, "ph": "X", "pid": pid,
                               "tid": threading.current_thread().name,
                               "ts": (start - t0) * 1e6, "dur": dur,
                               "cat": cat, "args": {"reads": rd, "writes": wr}})
                self._aggregate(cat, name, dur)
        return timed

    # ---------------------------------------------------------------- user annotations
    def duration(self, name, cat, start_us, end_us, aggregate_cat=None):
        """A span the user marked (Task, Frame, Event): a complete event."""
        dur = max(end_us - start_us, 0.0)
        self.events.append({"name": name, "ph": "X", "pid": self._pid,
                            "tid": threading.current_thread().name, "ts": start_us,
                            "dur": dur, "cat": cat})
        self._aggregate(aggregate_cat or cat, name, dur)

    def counter(self, name, cat, value):
        """A counter's new value: a 'C' event; aggregated as a counter."""
        self.events.append({"name": name, "ph": "C", "pid": self._pid,
                            "tid": threading.current_thread().name, "ts": self.now_us(),
                            "cat": cat, "args": {name: value}})
        self._aggregate(cat, name, value, counter=True)

    def instant(self, name, cat, scope):
        """An instant marker ('i'); ``scope`` is 'g', 'p' or 't'."""
        self.events.append({"name": name, "ph": "i", "pid": self._pid,
                            "tid": threading.current_thread().name, "ts": self.now_us(),
                            "cat": cat, "s": scope})

    def memory(self, device, delta):
        """Storage of ``delta`` bytes taken (or given back, < 0) on ``device``."""
        with self._lock:
            v = self._mem[device] = self._mem.get(device, 0) + delta
        self.counter("Memory: %s" % device, MEMORY_CATEGORY, v)

    # ---------------------------------------------------------------- output
    def trace(self) -> dict:
        return {"traceEvents": list(self.events), "displayTimeUnit": "ms"}

    def dump(self, filename=None, finished=True):
        """Write the events recorded since the last dump to the trace file,
        as MXNet's continuous dump does: the first dump starts the file, later
        ones append, and ``finished`` closes its JSON (a later dump starts
        a new file). Written events are dropped from memory."""
        filename = filename or self.filename
        with self._lock:
            n = len(self.events)
            new = self.events[:n]
            del self.events[:n]
            start = self._dump_file != filename
            with open(filename, "w" if start else "a") as f:
                if start:
                    f.write('{\n    "traceEvents": [\n')
                    self._dump_first = True
                for e in new:
                    if not self._dump_first:
                        f.write(",\n")
                    self._dump_first = False
                    f.write(json.dumps(e))
                if finished:
                    f.write('\n    ],\n    "displayTimeUnit": "ms"\n}\n')
            self._dump_file = None if finished else filename

    def reset_stats(self):
        with self._lock:
            self.stats.clear()

    def _sorted(self, by_name, sort_by, ascending):
        items = list(by_name.items())
        items.sort(key=lambda kv: (kv[1].key(sort_by), kv[0]), reverse=not ascending)
        return items

    def aggregate(self, format="table", sort_by="total", ascending=False) -> str:
        """MXNet's aggregate statistics: a table (ms, kB) or JSON with
        ``Time``, ``Memory`` and ``Unit``; entries sorted by ``sort_by``."""
        if sort_by not in _SORT_KEYS:
            raise ValueError("sort_by must be one of %s, got %r" % (_SORT_KEYS, sort_by))
        with self._lock:
            snapshot = {c: dict(m) for c, m in self.stats.items()}
        if format == "json":
            return self._json(snapshot, sort_by, ascending)
        return self._table(snapshot, sort_by, ascending)

    @staticmethod
    def _values(s, is_memory):
        # durations are kept in microseconds and shown in ms; memory in bytes -> kB
        scale = 1e-3
        out = {"Count": s.count}
        if not is_memory:
            out["Total"] = round(s.total * scale, 4)
        out["Min"] = round(s.min * scale, 4)
        out["Max"] = round(s.max * scale, 4)
        out["Avg"] = round(s.avg() * scale, 4)
        return out

    def _json(self, snapshot, sort_by, ascending):
        res = {"Time": {}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
        for cat, by_name in snapshot.items():
            is_memory = cat in (MEMORY_CATEGORY, "Pool Memory")
            dst = res["Memory" if is_memory else "Time"].setdefault(cat, {})
            for name, s in self._sorted(by_name, sort_by, ascending):
                dst[name] = self._values(s, is_memory)
        return json.dumps(res, indent=4)

    def _table(self, snapshot, sort_by, ascending):
        lines = ["", "Profile Statistics:",
                 "\tNote the difference in units for different entries."]
        for cat, by_name in snapshot.items():
            is_memory = cat in (MEMORY_CATEGORY, "Pool Memory")
            lines += [cat, "================="]
            if is_memory:
                lines.append("%-25s%16s %16s %16s %16s" % ("Name", "Total Count", "Min Use  (kB)",
                                                           "Max Use  (kB)", "Avg Use  (kB)"))
                lines.append("%-25s%16s %16s %16s %16s" % ("----", "-----------", "-------------",
                                                           "-------------", "-------------"))
            else:
                lines.append("%-25s%16s %16s %16s %16s %16s" % (
                    "Name", "Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)",
                    "Avg Time (ms)"))
                lines.append("%-25s%16s %16s %16s %16s %16s" % (
                    "----", "-----------", "---------", "-------------", "-------------",
                    "-------------"))
            for name, s in self._sorted(by_name, sort_by, ascending):
                v = self._values(s, is_memory)
                if is_memory:
                    lines.append("%-25s%16d %16.4f %16.4f %16.4f"
                                 % (name, v["Count"], v["Min"], v["Max"], v["Avg"]))
                else:
                    lines.append("%-25s%16d %16.4f %16.4f %16.4f %16.4f"
                                 % (name, v["Count"], v["Total"], v["Min"], v["Max"], v["Avg"]))
            lines.append("")
        return "\n".join(lines)
