"""``mx.profiler`` (MXNet 1.9.1 names): record every op the engine runs and
write a Chrome trace (chrome://tracing, ui.perfetto.dev).

    mx.profiler.set_config(profile_all=True, filename='trace.json')
    mx.profiler.set_state('run')
    ...                                   # ops to look at
    mx.nd.waitall()
    mx.profiler.set_state('stop')
    mx.profiler.dump()                    # writes trace.json
    print(mx.profiler.dumps())            # per-op aggregate table
"""
from __future__ import annotations

from .base import MXNetError
from .engine import get as _get_engine
from .engine.profiler import Profiler

__all__ = ["set_config", "set_state", "state", "dump", "dumps", "pause", "resume"]

_config = {"filename": "profile.json", "aggregate_stats": False}
_prof = None
_state = "stop"


def set_config(**kwargs):
    """Accepts MXNet's keys; ``filename`` and ``aggregate_stats`` are used,
    the ``profile_*`` switches are accepted (every op is recorded)."""
    known = {"filename", "aggregate_stats", "profile_all", "profile_symbolic", "profile_imperative",
             "profile_memory", "profile_api", "continuous_dump", "dump_period", "profile_process"}
    bad = set(kwargs) - known
    if bad:
        raise MXNetError("profiler.set_config: unknown option(s) %s; expected some of %s"
                         % (sorted(bad), sorted(known)))
    _config.update({k: v for k, v in kwargs.items() if k in ("filename", "aggregate_stats")})


def set_state(state="stop", profile_process="worker"):
    """'run' starts recording, 'stop' stops it (recorded events are kept)."""
    global _prof, _state
    if state not in ("run", "stop"):
        raise MXNetError("profiler state must be 'run' or 'stop', got %r" % (state,))
    eng = _get_engine()
    if state == "run":
        if _prof is None:
            _prof = Profiler(_config["filename"], _config["aggregate_stats"])
        eng.prof = _prof
    else:
        eng.prof = None
    _state = state


def state():
    return _state


def pause(profile_process="worker"):
    _get_engine().prof = None


def resume(profile_process="worker"):
    if _prof is not None and _state == "run":
        _get_engine().prof = _prof


def dump(finished=True, profile_process="worker"):
    """Write the Chrome trace to the configured file."""
    if _prof is None:
        raise MXNetError("profiler.dump: nothing was recorded; call set_state('run') first")
    _prof.dump(_config["filename"])


def dumps(reset=False):
    """The per-op aggregate table (calls, total/min/max/avg microseconds)."""
    global _prof
    if _prof is None:
        return ""
    out = _prof.aggregate()
    if reset:
        _prof.events.clear()
    return out
