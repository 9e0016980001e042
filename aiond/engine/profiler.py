"""Records each op the engine runs - name, thread, start, end, the vars it
read and wrote - and writes Chrome trace / Perfetto JSON.

Off by default and free when off: ``Engine.push`` checks one attribute and,
when a profiler is recording, wraps the op's kernel in a timing closure.
"""
from __future__ import annotations

import json
import os
import threading
import time

__all__ = ["Profiler"]


class Profiler:
    def __init__(self, filename="profile.json", aggregate_stats=False):
        self.filename = filename
        self.aggregate_stats = aggregate_stats
        self.events = []
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        self._ids = {}

    def _var_id(self, v):
        # stable small ids for vars (ids of live objects may be reused later)
        i = self._ids.get(id(v))
        if i is None:
            i = self._ids[id(v)] = len(self._ids)
        return i

    def wrap(self, fn, name, reads, writes, split=None):
        rd = [self._var_id(v) for v in reads]
        wr = [self._var_id(v) for v in writes]
        events = self.events
        perf = time.perf_counter
        t0 = self._t0

        def timed():
            start = perf()
            try:
                return fn() if fn is not None else None
            finally:
                end = perf()
                events.append({"name": name, "ph": "X", "pid": os.getpid(),
                               "tid": threading.current_thread().name,
                               "ts": (start - t0) * 1e6, "dur": (end - start) * 1e6,
                               "cat": "operator", "args": {"reads": rd, "writes": wr}})
        return timed

    def trace(self) -> dict:
        return {"traceEvents": list(self.events), "displayTimeUnit": "ms"}

    def aggregate(self) -> str:
        stats = {}
        for e in self.events:
            s = stats.setdefault(e["name"], [0, 0.0, float("inf"), 0.0])
            s[0] += 1
            s[1] += e["dur"]
            s[2] = min(s[2], e["dur"])
            s[3] = max(s[3], e["dur"])
        lines = ["%-32s %8s %14s %12s %12s %12s" % ("Name", "Calls", "Total (us)", "Min (us)",
                                                      "Max (us)", "Avg (us)")]
        for name, (n, tot, mn, mx) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
            lines.append("%-32s %8d %14.1f %12.1f %12.1f %12.1f" % (name, n, tot, mn, mx, tot / n))
        return "\n".join(lines)

    def dump(self, filename=None):
        with open(filename or self.filename, "w") as f:
            json.dump(self.trace(), f)
