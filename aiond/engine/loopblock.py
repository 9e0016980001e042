"""A warning when a blocking wrapper blocks a running event loop.

``asnumpy()``, ``wait_to_read()``, ``waitall()`` (and what calls them:
``asscalar()``, ``float(x)``, printing an array) block the calling thread
until the value exists. In a plain script that is what they are for; in a
coroutine it stops every other task of the loop meanwhile, silently (an
8 s stall was measured in a handler), where ``await x.read()`` would have
waited without blocking anything. So when one of them blocks a running
loop's thread for longer than ``AIOND_LOOP_BLOCK_WARN_MS`` (default 20 ms;
0 or ``off``: never), a ``LoopBlockedWarning`` names the line that called
it and the await to use instead, once per line. Only the waits that did
block are timed: a value already computed costs nothing here.
"""
from __future__ import annotations

import os
import threading
import warnings

from ..base import MXNetError

__all__ = ["LoopBlockedWarning", "set_threshold_ms", "threshold_ms", "blocked"]

_DEFAULT_MS = 20.0


class LoopBlockedWarning(RuntimeWarning):
    """A blocking wrapper blocked a running asyncio event loop."""


def _parse(raw, source):
    v = str(raw).strip().lower()
    if v in ("0", "off", "none", "false"):
        return 0.0
    try:
        ms = float(v)
    except ValueError:
        ms = -1.0
    if not ms >= 0 or ms != ms or ms == float("inf"):
        raise MXNetError("%s=%r: expected milliseconds (a number >= 0) or 'off'" % (source, raw))
    return ms


_threshold_s = _parse(os.environ.get("AIOND_LOOP_BLOCK_WARN_MS", _DEFAULT_MS),
                      "environment variable AIOND_LOOP_BLOCK_WARN_MS") / 1e3
_seen = set()           # call sites already warned about
_lock = threading.Lock()


def threshold_ms():
    """How long a blocking wrapper may block a running loop before it warns
    (0: never)."""
    return _threshold_s * 1e3


def set_threshold_ms(ms):
    """Set the threshold in milliseconds (0 or 'off': never warn); returns
    the previous one. Call sites already warned about are warned about
    again after a change."""
    global _threshold_s
    prev = _threshold_s * 1e3
    _threshold_s = _parse(ms, "set_threshold_ms(ms)") / 1e3
    with _lock:
        _seen.clear()
    return prev


def blocked(what, seconds, site):
    """``what`` (e.g. 'asnumpy()') called at ``site`` (filename, lineno)
    blocked a running loop's thread for ``seconds``."""
    if not _threshold_s or seconds < _threshold_s:
        return
    with _lock:
        if site in _seen:
            return
        _seen.add(site)
    filename, lineno = site
    if what.startswith("waitall"):
        instead = ("await the arrays you need (`await x.read()`), or run it off the loop "
                   "(`await loop.run_in_executor(None, mx.nd.waitall)`)")
    else:
        instead = "use `await x.read()`, which waits without blocking the loop"
    warnings.warn_explicit(
        "%s blocked the running event loop for %.0f ms: every other task of the loop "
        "waited meanwhile. In a coroutine, %s. Warned once per line; "
        "AIOND_LOOP_BLOCK_WARN_MS sets the threshold (0 turns it off)"
        % (what, seconds * 1e3, instead), LoopBlockedWarning, filename, lineno, module="aiond")
