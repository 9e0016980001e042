"""A Batcher's statistics snapshot and the percentiles it reports."""
from __future__ import annotations

import dataclasses
import math

__all__ = ["BatcherStatistics"]


@dataclasses.dataclass(frozen=True)
class BatcherStatistics:
    """A snapshot of a Batcher's counters (``batcher.statistics()``)."""
    queue_depth: int            # requests waiting to be batched
    queued_rows: int            # their rows
    in_flight: int              # batches running now
    max_batch_size: int
    max_wait: float             # seconds
    max_queue: int
    max_in_flight: int
    requests: int               # accepted requests
    completed: int              # requests answered with a result
    failed: int                 # requests failed by the model (ModelError)
    rejected: int               # refused with Overloaded (queue full or closing)
    invalid: int                # refused with InvalidInput
    expired: int                # failed with DeadlineExceeded
    cancelled: int              # cancelled by their caller
    batches: int                # forwards run (not counting solo re-runs)
    rows: int                   # rows run in those batches
    batch_size_histogram: dict  # {rows in a batch: number of batches}
    latency_ms: dict            # p50/p90/p99/max/mean over the last 4096 requests
    latency_count: int
    latency_sum_s: float        # all completed requests, for Prometheus
    rows_per_s: float           # recent throughput (EWMA)
    queue_ms: dict = None       # time from submission to its batch starting (percentiles)
    queue_sum_s: float = 0.0
    queue_count: int = 0
    compute_ms: dict = None     # time a batch took to run (percentiles)
    compute_sum_s: float = 0.0
    high_priority: int = 0      # requests accepted with priority=1
    last_batch_time: float = 0.0  # time.time() when the last batch ended (0: none yet)

    @property
    def mean_batch_size(self) -> float:
        return self.rows / self.batches if self.batches else 0.0


def _percentiles(xs):
    if not xs:
        return {"p50": None, "p90": None, "p99": None, "max": None, "mean": None}
    s = sorted(xs)
    n = len(s)

    def q(p):
        return round(1e3 * s[min(n - 1, int(math.ceil(p / 100.0 * n)) - 1)], 3)
    return {"p50": q(50), "p90": q(90), "p99": q(99), "max": round(1e3 * s[-1], 3),
            "mean": round(1e3 * sum(s) / n, 3)}
