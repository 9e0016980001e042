"""Records what the runtime does and writes Chrome trace / Perfetto JSON.

Each op the engine runs (name, thread, start, end, the vars it read and
wrote), the user's own annotations (``mx.profiler`` Task, Frame, Event,
Counter, Marker) and, when asked, the bytes of storage in use per device.
Optionally it keeps MXNet's aggregate statistics (count, total, min, max,
average per name, grouped by category) for ``mx.profiler.dumps()``.

The trace answers *why* an op ran when it did: each thread is a track; an
op's push is a ``push:<name>`` span on the pushing thread (a marker: its
length is the profiler's own bookkeeping) and its run a span on the thread
that ran it, with ``args.queue_us`` (push to start) split into ``deps_us``
(waiting for the ops it depends on) and ``dispatch_us`` (ready, not yet
running); flow arrows ("s"/"f" events) lead from the push to the run and
from every op it had to wait for (the last writer of a var it reads; for a
var it writes, the readers since that write, else the writer). An op that
runs inside another wrapped op on the same thread (a member of a bulk
segment) is a span nested in it.

Off by default and free when off: ``Engine.push`` checks one attribute and,
when a profiler is recording, wraps the op's kernel in a timing closure.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import struct
import threading
import time

__all__ = ["Profiler", "MEMORY_CATEGORY", "CUSTOM_CATEGORY", "custom_op_scope"]

MEMORY_CATEGORY = "Device Storage"
CUSTOM_CATEGORY = "Custom Operator"
_scope = threading.local()
_tls = threading.local()      # .ops: the wrapped ops running on this thread, innermost last


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


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


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
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def avg(self):
        if self.counter:
            return (self.max - self.min) / 2
        return self.total / self.count if self.count else 0.0

    def key(self, sort_by):
        return {"total": self.total, "avg": self.avg(), "min": self.min, "max": self.max,
                "count": self.count}[sort_by]


class _Op:
    """One profiled op, from its push to the end of its run: where and when
    it was pushed, the ops it waits for (until it runs), and where and when
    it ran (``end`` stays None until it finished). A finished op is kept as
    it is in the event list and becomes trace events only when written, so
    recording costs the running program little."""
    __slots__ = ("id", "name", "cat", "push_tid", "push_ts", "push_end", "push_epoch",
                 "deps", "ready", "tid", "ts", "end", "parent", "epoch", "reads", "writes",
                 "flows", "members")

    def __init__(self, op_id, name, cat, push_tid, push_ts, push_epoch):
        # the rest is set by Profiler.wrap (push_end, deps, reads, writes),
        # by the run (parent) and at its end (everything else)
        self.id = op_id
        self.name = name
        self.cat = cat
        self.push_tid = push_tid
        self.push_ts = push_ts
        self.push_epoch = push_epoch
        self.end = None


_MAX_READERS = 32   # readers kept per var: the ones a later write waits on
_NS = 0.001         # one nanosecond in trace microseconds: binds a flow inside its span


def _us(t):
    # trace timestamps in whole nanoseconds, so viewers and the trace
    # processor see the same span edges the flows were placed between
    return round(t, 3)


class Profiler:
    """One recording: trace events and (if ``aggregate_stats``) statistics.

    The trace has one track per thread (``tid`` is the OS thread id, named
    by a ``thread_name`` metadata event): every op's run is a span on the
    thread that ran it, its push a short ``push`` span on the thread that
    pushed it, and flow arrows join each op to the ops it waited for (the
    last writer of a var it reads; for a var it writes, the readers since
    that write or else the writer) and its push to its run. The push-to-run
    wait is the span's ``args.queue_us`` and the "operator queue" statistic.

    ``events`` holds what was recorded since the last dump: trace event
    dicts, and each finished op as its ``_Op`` record, turned into events
    when written (``trace()`` returns them all as trace events).
    """

    QUEUE_CATEGORY = "operator queue"

    def __init__(self, filename="profile.json", aggregate_stats=False):
        self.filename = filename
        self.aggregate_stats = aggregate_stats
        self.events = []
        self.stats = {}             # category -> name -> _Stat
        # re-entrant: a storage freed by the garbage collector while this
        # thread holds the lock reports its memory from inside
        self._lock = threading.RLock()
        self._dep_lock = threading.Lock()   # the vars' last writer/readers
        self._t0 = time.perf_counter()
        self._op_ids = itertools.count(1)
        self._flow_ids = itertools.count(1)
        self._var_ids = itertools.count(0)
        self._threads = {}          # tid -> thread name, every thread seen
        self._named = set()         # tids whose name the current trace file has
        self._epoch = 0             # trace files finished so far
        self._pid = os.getpid()
        self._mem = {}              # device name -> bytes in use
        self._dump_file = None      # the trace file a continuous dump is appending to
        self._dump_first = True
        # device executors holding ops this profiler timed whose spans are
        # not in yet (their end events were not seen done): flushed on output
        self.device_sources = set()

    # ---------------------------------------------------------------- time
    def now_us(self):
        """Microseconds since this recording began (trace timestamps)."""
        return (time.perf_counter() - self._t0) * 1e6

    def _tid(self):
        """This thread's track: its OS thread id, its name noted once."""
        tid = threading.get_native_id()
        if tid not in self._threads:
            self._threads[tid] = threading.current_thread().name
        return tid

    def _aggregate(self, cat, name, value, counter=False):
        if not self.aggregate_stats:
            return
        with self._lock:
            self._add_stat(cat, name, value, counter)

    def _add_stat(self, cat, name, value, counter=False):
        # (lock held)
        by_name = self.stats.get(cat)
        if by_name is None:
            by_name = self.stats[cat] = {}
        s = by_name.get(name)
        if s is None:
            s = by_name[name] = _Stat(counter)
        s.add(value)

    # ---------------------------------------------------------------- ops
    def _var_state(self, v):
        # [profiler, small id, last writer _Op, readers since that write];
        # a state left by an earlier profiler is started afresh
        st = [self, next(self._var_ids), None, []]
        try:
            v.prof = st
        except AttributeError:          # not an engine Var: track nothing for it
            pass
        return st

    def _depend(self, op, reads, writes):
        """The vars' ids, and ``op`` noted as their latest reader/writer;
        ``op.deps`` gets the earlier ops it must wait for, as
        (kind, producer) pairs."""
        deps = []
        with self._dep_lock:
            rd = []
            for v in reads:
                st = getattr(v, "prof", None)
                if st is None or st[0] is not self:
                    st = self._var_state(v)
                rd.append(st[1])
                if st[2] is not None:
                    deps.append(("read-after-write", st[2]))
                readers = st[3]
                readers.append(op)
                if len(readers) > _MAX_READERS:
                    del readers[0]
            wr = []
            for v in writes:
                st = getattr(v, "prof", None)
                if st is None or st[0] is not self:
                    st = self._var_state(v)
                wr.append(st[1])
                if st[3]:
                    deps.extend(("write-after-read", r) for r in st[3])
                elif st[2] is not None:
                    deps.append(("write-after-write", st[2]))
                st[2] = op
                st[3] = []
        op.deps = deps
        op.reads, op.writes = rd, wr

    def wrap(self, fn, name, reads, writes, split=None):
        """``fn`` timed: its run becomes a complete ('X') 'operator' event.

        Called at push, on the pushing thread. An op wrapped here that runs
        inside another wrapped op on the same thread (the members of a bulk
        segment) is recorded as nested in it; a ``fn`` with a ``members``
        attribute (objects with ``.name``) lists their names in its span's
        ``args.members``."""
        perf = time.perf_counter
        t0 = self._t0
        push = perf()
        cat = "operator"
        scope = getattr(_scope, "name", None)
        if scope is not None:           # pushed by a custom operator's code
            name = "%s::%s" % (scope, name)
            cat = CUSTOM_CATEGORY
        op = _Op(next(self._op_ids), name, cat, self._tid(), (push - t0) * 1e6, self._epoch)
        self._depend(op, reads, writes)
        op.push_end = (perf() - t0) * 1e6

        def timed():
            start = perf()
            stack = getattr(_tls, "ops", None)
            if stack is None:
                stack = _tls.ops = []
            op.parent = stack[-1] if stack else None
            stack.append(op)
            try:
                return fn() if fn is not None else None
            finally:
                end = perf()
                stack.pop()
                self._ran(op, fn, (start - t0) * 1e6, (end - t0) * 1e6)
        return timed

    def _ran(self, op, fn, start, end):
        """``op`` ran from ``start`` to ``end`` (µs) on this thread: note
        the flows from the ops it waited for, and its statistics."""
        epoch = self._epoch
        deps, op.deps = op.deps, None   # history must not keep every earlier op alive
        ready = op.push_end
        flows = []
        if deps:
            seen = set() if len(deps) > 1 else None     # one arrow per producer
            for kind, p in deps:
                if p.end is None or self._inside(p, op):
                    continue            # still running: this op encloses it
                if seen is not None:
                    if p.id in seen:
                        continue
                    seen.add(p.id)
                if p.end > ready:
                    ready = p.end
                if p.epoch == epoch:    # else its span is in a trace file already closed
                    flows.append((kind, p.tid, p.ts, p.end))
        op.flows = flows
        op.ready = ready
        members = getattr(fn, "members", None)
        op.members = None if members is None else [getattr(m, "name", str(m))
                                                   for m in members]
        op.tid = self._tid()
        op.ts = start
        op.epoch = epoch
        op.end = end
        self.events.append(op)
        if self.aggregate_stats:
            with self._lock:
                self._add_stat(op.cat, op.name, end - start)
                self._add_stat(self.QUEUE_CATEGORY, op.name, max(start - op.push_ts, 0.0))

    @staticmethod
    def _inside(p, op):
        # ``p`` ran nested in ``op`` (a member of the segment ``op``)
        q = p.parent
        while q is not None:
            if q is op:
                return True
            q = q.parent
        return False

    def _op_events(self, op):
        """The trace events of a finished op: its push span, its run span
        and the flow arrows into the run."""
        pid = self._pid
        push_ts = _us(op.push_ts)
        ts, stop = _us(op.ts), _us(op.end)
        queue = _us(max(ts - push_ts, 0.0))
        # queued = waiting for the ops it depends on + ready but not started
        dispatch = _us(max(op.ts - op.ready, 0.0))
        args = {"op": op.id, "reads": op.reads, "writes": op.writes, "queue_us": queue,
                "deps_us": _us(max(queue - dispatch, 0.0)), "dispatch_us": dispatch}
        if op.parent is not None:
            args["parent"] = op.parent.id
        if op.members is not None:
            args["members"] = op.members
        out = [{"name": "push:" + op.name, "ph": "X", "pid": pid, "tid": op.push_tid,
                "ts": push_ts, "dur": _us(max(op.push_end - op.push_ts, 2 * _NS)),
                "cat": "push", "args": {"op": op.id}},
               {"name": op.name, "ph": "X", "pid": pid, "tid": op.tid, "ts": ts,
                "dur": _us(stop - ts), "cat": op.cat, "args": args}]
        f_ts = min(_us(ts + _NS), stop)      # inside the run span, before any member
        ids = self._flow_ids
        if op.push_epoch == op.epoch:
            fid = next(ids)
            out.append({"name": "push", "ph": "s", "cat": "push", "id": fid, "pid": pid,
                        "tid": op.push_tid, "ts": _us(push_ts + _NS)})
            out.append({"name": "push", "ph": "f", "bp": "e", "cat": "push", "id": fid,
                        "pid": pid, "tid": op.tid, "ts": f_ts})
        for kind, p_tid, p_ts, p_end in op.flows:
            # a flow binds to the slice last begun on its track at its time
            # (the trace processor does not close finished slices first):
            # just after the producer's start, before any member of it began
            fid = next(ids)
            out.append({"name": kind, "ph": "s", "cat": "dependency", "id": fid, "pid": pid,
                        "tid": p_tid, "ts": min(_us(_us(p_ts) + _NS), _us(p_end))})
            out.append({"name": kind, "ph": "f", "bp": "e", "cat": "dependency", "id": fid,
                        "pid": pid, "tid": op.tid, "ts": f_ts})
        return out

    def _expand(self, events):
        out = []
        for e in events:
            if type(e) is _Op:
                out.extend(self._op_events(e))
            else:
                out.append(e)
        return out

    # ---------------------------------------------------------------- user annotations
    def duration(self, name, cat, start_us, end_us, aggregate_cat=None):
        """A span the user marked (Task, Frame, Event): a complete event."""
        dur = max(end_us - start_us, 0.0)
        self.events.append({"name": name, "ph": "X", "pid": self._pid,
                            "tid": self._tid(), "ts": _us(start_us),
                            "dur": _us(dur), "cat": cat})
        self._aggregate(aggregate_cat or cat, name, dur)

    def device_span(self, track, track_name, name, start_us, end_us):
        """An op's run on a device stream (timed by CUDA events) as a
        complete event on that stream's own track."""
        if track not in self._threads:
            self._threads[track] = track_name
        dur = max(end_us - start_us, 0.0)
        self.events.append({"name": name, "ph": "X", "pid": self._pid, "tid": track,
                            "ts": _us(start_us), "dur": _us(dur), "cat": "operator",
                            "args": {"device": track_name}})
        self._aggregate("operator", name, dur)

    def counter(self, name, cat, value):
        """A counter's new value: a 'C' event; aggregated as a counter."""
        self.events.append({"name": name, "ph": "C", "pid": self._pid,
                            "tid": self._tid(), "ts": _us(self.now_us()),
                            "cat": cat, "args": {name: value}})
        self._aggregate(cat, name, value, counter=True)

    def instant(self, name, cat, scope):
        """An instant marker ('i'); ``scope`` is 'g', 'p' or 't'."""
        self.events.append({"name": name, "ph": "i", "pid": self._pid,
                            "tid": self._tid(), "ts": _us(self.now_us()),
                            "cat": cat, "s": scope})

    def memory(self, device, delta):
        """Storage of ``delta`` bytes taken (or given back, < 0) on ``device``."""
        with self._lock:
            v = self._mem[device] = self._mem.get(device, 0) + delta
        self.counter("Memory: %s" % device, MEMORY_CATEGORY, v)

    # ---------------------------------------------------------------- output
    def _thread_names(self, tids, process=True):
        """'M' events naming the process and the tracks of ``tids``."""
        meta = [{"name": "process_name", "ph": "M", "pid": self._pid,
                 "args": {"name": "aiond"}}] if process else []
        return meta + [{"name": "thread_name", "ph": "M", "pid": self._pid, "tid": tid,
                        "args": {"name": self._threads[tid]}} for tid in sorted(tids)]

    def flush_devices(self):
        """Bring in the device spans still pending (their ops may have been
        timed before a stop): waits for those ops to finish."""
        for src in list(self.device_sources):
            src.flush_timed()

    def trace(self) -> dict:
        """The events not yet dumped, with every track's name, as a dict."""
        self.flush_devices()
        return {"traceEvents": (self._thread_names(list(self._threads))
                                + self._expand(list(self.events))),
                "displayTimeUnit": "ms"}

    def dump(self, filename=None, finished=True):
        """Write the events recorded since the last dump to the trace file,
        as MXNet's continuous dump does: the first dump starts the file, later
        ones append, and ``finished`` closes its JSON (a later dump starts
        a new file). Written events are dropped from memory."""
        self.flush_devices()
        filename = filename or self.filename
        with self._lock:
            n = len(self.events)
            new = self.events[:n]
            del self.events[:n]
            start = self._dump_file != filename
            if start:
                self._named = set()
            tids = [t for t in list(self._threads) if t not in self._named]
            self._named.update(tids)
            new = self._thread_names(tids, process=start) + self._expand(new)
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
            if finished:
                # spans written so far are in a closed file: later flows
                # must not start from them
                self._epoch += 1

    def reset_stats(self):
        with self._lock:
            self.stats.clear()

    def _sorted(self, by_name, sort_by, ascending):
        # MXNet pops a max-heap of (value, name), the value negated when
        # ascending: equal values come out by name, last name first
        items = list(by_name.items())
        sign = -1 if ascending else 1
        items.sort(key=lambda kv: (sign * kv[1].key(sort_by), kv[0]), reverse=True)
        return items

    def aggregate(self, format="table", sort_by="total", ascending=False) -> str:
        """MXNet's aggregate statistics: a table (ms, kB) or JSON with
        ``Time``, ``Memory`` and ``Unit``; entries sorted by ``sort_by``."""
        self.flush_devices()
        if sort_by not in _SORT_KEYS:
            raise ValueError("sort_by must be one of %s, got %r" % (_SORT_KEYS, sort_by))
        with self._lock:
            snapshot = {c: dict(m) for c, m in self.stats.items()}
        if format == "json":
            return self._json(snapshot, sort_by, ascending)
        return self._table(snapshot, sort_by, ascending)

    @staticmethod
    def _values(s, is_memory):
        # durations are kept in microseconds and shown in ms, memory in bytes
        # shown in kB: MXNet divides by 1000 and prints the float32 result
        out = {"Count": s.count}
        if not is_memory:
            out["Total"] = _f32(s.total / 1000)
        out["Min"] = _f32(s.min / 1000)
        out["Max"] = _f32(s.max / 1000)
        out["Avg"] = _f32(s.avg() / 1000)
        return out

    def _json(self, snapshot, sort_by, ascending):
        res = {"Time": {}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
        for cat, by_name in snapshot.items():
            is_memory = cat in (MEMORY_CATEGORY, "Pool Memory")
            dst = res["Memory" if is_memory else "Time"].setdefault(cat, {})
            for name, s in self._sorted(by_name, sort_by, ascending):
                # C++'s setprecision(4): four significant digits
                dst[name] = {k: (v if k == "Count" else float("%.4g" % v))
                             for k, v in self._values(s, is_memory).items()}
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
        return "\n".join(lines) + "\n"
