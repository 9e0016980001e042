"""``mx.profiler`` (MXNet 1.9.1 names): record every op the engine runs, the
user's own annotations and the storage in use, and write a Chrome trace
(chrome://tracing, ui.perfetto.dev); keep aggregate statistics.

    mx.profiler.set_config(profile_all=True, filename='trace.json',
                           aggregate_stats=True)
    mx.profiler.set_state('run')
    ...                                   # ops to look at
    mx.nd.waitall()
    mx.profiler.set_state('stop')
    mx.profiler.dump()                    # writes trace.json
    print(mx.profiler.dumps())            # per-op aggregate table (or format='json')

The trace shows why ops ran when they did: one track per thread (engine
workers, every pushing thread), each op's run on the track of the thread
that ran it, a ``push:<op>`` span where it was pushed, ``args.queue_us``
(push to start; ``deps_us`` of it waiting for other ops, ``dispatch_us``
ready but not yet running) and flow arrows from the push and from each op
it waited for. ``dumps()`` adds the push-to-start times per op name as the
"operator queue" category.

Annotations: ``Domain`` groups ``Task``/``Frame`` spans, ``Counter`` values
and ``Marker`` instants under its name; an ``Event`` is a span of its own.
They record while the profiler runs and is not paused. With
``profile_memory`` the bytes of storage in use per device are a counter
("Memory: cpu/0" in the "Device Storage" category). aiond's engine does not
tell symbolic from imperative ops: ``profile_symbolic`` or
``profile_imperative`` (or ``profile_all``) records every op.
"""
from __future__ import annotations

import os
import threading

from .base import MXNetError
from .engine import get as _get_engine
from .engine import storage as _storage
from .engine.profiler import Profiler

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume",
           "profiler_set_config", "profiler_set_state", "dump_profile", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker"]


def _p_bool(v):
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "1"):
            return True
        if s in ("false", "0"):
            return False
        raise ValueError("expected a bool, got %r" % v)
    return bool(v)


def _p_process(v):
    if v not in ("worker", "server"):
        raise ValueError("expected 'worker' or 'server', got %r" % (v,))
    return v


# MXNet's ProfileConfigParam: name -> (parser, default)
_OPTIONS = {
    "profile_all": (_p_bool, False),
    "profile_symbolic": (_p_bool, True),
    "profile_imperative": (_p_bool, True),
    "profile_memory": (_p_bool, True),
    "profile_api": (_p_bool, True),
    "filename": (str, "profile.json"),
    "continuous_dump": (_p_bool, False),
    "dump_period": (float, 1.0),
    "aggregate_stats": (_p_bool, False),
    "profile_process": (_p_process, "worker"),
}

_config = {k: d for k, (_, d) in _OPTIONS.items()}
_lock = threading.RLock()
_prof = None
_state = "stop"
_paused = False
_dumper = None


def set_config(**kwargs):
    """Set up the profiler (keyword arguments only): ``filename``,
    ``profile_all``, ``profile_symbolic``, ``profile_imperative``,
    ``profile_memory``, ``profile_api``, ``continuous_dump``,
    ``dump_period`` (seconds between the periodic dumps of
    ``continuous_dump``), ``aggregate_stats``, ``profile_process``."""
    bad = set(kwargs) - set(_OPTIONS)
    if bad:
        raise MXNetError("profiler.set_config: unknown option(s) %s; expected some of %s"
                         % (sorted(bad), sorted(_OPTIONS)))
    parsed = {}
    for k, v in kwargs.items():
        try:
            parsed[k] = _OPTIONS[k][0](v)
        except (TypeError, ValueError) as e:
            raise MXNetError("profiler.set_config: invalid value %r for %s: %s"
                             % (v, k, e)) from None
    with _lock:
        _config.update(parsed)
        # as MXNet: the output file is removed, a new trace starts with the next dump
        try:
            os.unlink(_config["filename"])
        except OSError:
            pass
        if _prof is not None:
            _prof._dump_file = None       # the next dump starts the (new) file
            _prof.filename = _config["filename"]
            _prof.aggregate_stats = _config["aggregate_stats"]
        _apply()


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated MXNet spelling of ``set_config(profile_<mode>=True, filename=...)``."""
    import warnings
    warnings.warn("profiler.profiler_set_config() is deprecated. "
                  "Please use profiler.set_config() instead")
    set_config(**{"profile_" + mode: True, "filename": filename})


def _records_ops():
    c = _config
    return c["profile_all"] or c["profile_symbolic"] or c["profile_imperative"]


def _records_memory():
    return _config["profile_all"] or _config["profile_memory"]


def _recording():
    """The running, unpaused profiler, or None."""
    p = _prof
    if p is None or _state != "run" or _paused:
        return None
    return p


def _memory_hook(ctx, delta):
    p = _recording()
    if p is not None:
        p.memory("%s/%d" % (ctx.device_type, ctx.device_id), delta)


def _apply():
    """Point the engine and the storage at the profiler as the state says."""
    p = _recording()
    _get_engine().prof = p if (p is not None and _records_ops()) else None
    _storage.mem_hook = _memory_hook if (p is not None and _records_memory()) else None
    _start_dumper()


def _start_dumper():
    global _dumper
    want = _prof is not None and _state == "run" and _config["continuous_dump"]
    if want and _dumper is None:
        stop = threading.Event()

        def loop():
            while not stop.wait(max(float(_config["dump_period"]), 0.01)):
                with _lock:
                    if _prof is not None:
                        try:
                            _prof.dump(_config["filename"], finished=False)
                        except OSError:
                            pass
        t = threading.Thread(target=loop, name="aiond-profiler-dump", daemon=True)
        _dumper = (t, stop)
        t.start()
    elif not want and _dumper is not None:
        _dumper[1].set()
        _dumper = None


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' stops it (what was recorded is kept
    for ``dump``/``dumps``)."""
    global _prof, _state, _paused
    if state not in ("run", "stop"):
        raise MXNetError("profiler state must be 'run' or 'stop', got %r" % (state,))
    _p_process(profile_process)
    with _lock:
        if state == "run" and _prof is None:
            _prof = Profiler(_config["filename"], _config["aggregate_stats"])
        _state = state
        _paused = state != "run"          # running again also ends a pause
        _apply()


def profiler_set_state(state="stop"):
    """Deprecated MXNet spelling of ``set_state``."""
    import warnings
    warnings.warn("profiler.profiler_set_state() is deprecated. "
                  "Please use profiler.set_state() instead")
    set_state(state)


def state():
    return _state


def pause(profile_process="worker"):
    """Stop recording for a while (``resume`` goes on)."""
    global _paused
    _p_process(profile_process)
    with _lock:
        _paused = True
        _apply()


def resume(profile_process="worker"):
    """Go on recording after ``pause``."""
    global _paused
    _p_process(profile_process)
    with _lock:
        _paused = False
        _apply()


def dump(finished=True, profile_process="worker"):
    """Write the Chrome trace to the configured file: the events recorded
    since the last dump (continuous dumps append to the file);
    ``finished=True`` completes the file's JSON, and a later dump starts a
    new one."""
    _p_process(profile_process)
    with _lock:
        if _prof is None:
            raise MXNetError("profiler.dump: nothing was recorded; call set_state('run') first")
        _prof.dump(_config["filename"], finished=bool(finished))


def dump_profile():
    """Deprecated MXNet spelling of ``dump(True)``."""
    import warnings
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead")
    dump(True)


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """The aggregate statistics (``aggregate_stats=True``) as a table or as
    JSON (``format='json'``: ``Time``, ``Memory``, ``Unit``), entries of
    each category sorted by ``sort_by`` ('total', 'avg', 'min', 'max',
    'count'); ``reset`` clears them after."""
    assert format in ("table", "json"), \
        "Invalid value provided for format: {0}. Support: 'table', 'json'".format(format)
    assert sort_by in ("total", "avg", "min", "max", "count"), \
        "Invalid value provided for sort_by: {0}. Support: 'total', 'avg', 'min', 'max', " \
        "'count'".format(sort_by)
    assert ascending in (False, True), \
        "Invalid value provided for ascending: {0}. Support: False, True".format(ascending)
    assert reset in (False, True), \
        "Invalid value provided for reset: {0}. Support: False, True".format(reset)
    with _lock:
        p = _prof if _prof is not None else Profiler(_config["filename"], True)
        out = p.aggregate(format, sort_by, bool(ascending))
        if reset:
            p.reset_stats()
    return out


# ------------------------------------------------------------------ annotations


class Domain:
    """A profiling domain: groups tasks, frames, counters and markers into
    one category of the trace."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Span:
    """start()/stop() timing; one trace event per pass."""
    _kind = ""

    def __init__(self, name, category, stat_category=None):
        self.name = name
        self._category = category
        self._stat_category = stat_category or category
        self._start = None

    def start(self):
        """Start timing scope for this object."""
        p = _recording()
        self._start = (p, p.now_us()) if p is not None else None

    def stop(self):
        """Stop timing scope for this object."""
        began, self._start = self._start, None
        p = _recording()
        if began is None or p is None or began[0] is not p:
            return
        p.duration(self.name, self._category, began[1], p.now_us(), self._stat_category)

    def __str__(self):
        return self.name


class Task(_Span):
    """A logical unit of work of one thread; every pass of a task is
    aggregated under its domain."""

    def __init__(self, domain, name):
        super().__init__(name, "%s,task" % domain.name, domain.name)
        self.domain = domain


class Frame(_Span):
    """A frame: each pass between start() and stop() is its own period."""

    def __init__(self, domain, name):
        super().__init__(name, "%s,frame" % domain.name, domain.name)
        self.domain = domain


class Event(_Span):
    """A span of the user's code (category 'event')."""

    def __init__(self, name):
        super().__init__(name, "event")


class Counter:
    """A value tracked over time (a 'C' trace event per change)."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self._value = 0
        if value is not None:
            self.set_value(value)

    def _send(self):
        p = _recording()
        if p is not None:
            p.counter(self.name, self.domain.name, self._value)

    def set_value(self, value):
        self._value = int(value)
        self._send()

    def increment(self, delta=1):
        self._value += int(delta)
        self._send()

    def decrement(self, delta=1):
        self._value -= int(delta)
        self._send()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker:
    """An instant in time."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope="process"):
        """Mark now; ``scope`` is 'global', 'process', 'thread', 'task' or 'marker'."""
        if scope not in _SCOPES:
            raise MXNetError("profiler.Marker.mark: scope must be one of %s, got %r"
                             % (sorted(_SCOPES), scope))
        p = _recording()
        if p is not None:
            p.instant(self.name, "%s,instant_marker" % self.domain.name, _SCOPES[scope])



profiler_kvstore_handle = None


def set_kvstore_handle(handle):
    """Record the kvstore whose server processes ``profile_process='server'``
    calls address (MXNet's kvstore sets it when created). aiond's stores
    have no server processes, so such calls act on this process."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle
