"""Fixtures of the op tests."""
import time

import pytest

import aiond as mx


class SplitRanges(list):
    """The sizes of the ranges the CPU workers ran (``_run_chunk``), and
    ``idle()``: wait until no worker runs or has queued work (ranges go
    only to idle workers)."""

    def __init__(self):
        super().__init__()
        self.cpu = mx.engine.get().cpu

    def idle(self, timeout=10):
        deadline = time.monotonic() + timeout
        while (self.cpu.busy or not self.cpu._q.empty()) and time.monotonic() < deadline:
            time.sleep(0.001)
        del self[:]


@pytest.fixture
def split_ranges(monkeypatch):
    from aiond.engine import cpu as cpu_mod
    ranges = SplitRanges()
    orig = cpu_mod.CPUExecutor._run_chunk

    def run_chunk(self, chunk):
        ranges.append(chunk.hi - chunk.lo)
        return orig(self, chunk)
    monkeypatch.setattr(cpu_mod.CPUExecutor, "_run_chunk", run_chunk)
    return ranges
