"""Prometheus text exposition (format 0.0.4) of a Batcher's statistics.

No client library: the handful of series a model server exports are written
here directly, with ``# HELP`` and ``# TYPE`` lines as Prometheus expects.
"""
from __future__ import annotations

__all__ = ["CONTENT_TYPE", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _esc(v) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(v) -> str:
    if v is None:
        return "NaN"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


class _Writer:
    def __init__(self, prefix, labels):
        self.prefix = prefix
        self.base = dict(labels)
        self.lines = []

    def _labels(self, extra):
        lab = dict(self.base)
        lab.update(extra or {})
        if not lab:
            return ""
        return "{" + ",".join('%s="%s"' % (k, _esc(v)) for k, v in lab.items()) + "}"

    def metric(self, name, kind, help_, samples):
        """``samples``: [(suffix, extra labels, value)]."""
        full = self.prefix + name
        self.lines.append("# HELP %s %s" % (full, help_))
        self.lines.append("# TYPE %s %s" % (full, kind))
        for suffix, extra, value in samples:
            self.lines.append("%s%s%s %s" % (full, suffix, self._labels(extra), _num(value)))

    def simple(self, name, kind, help_, value):
        self.metric(name, kind, help_, [("", None, value)])


def render(stats, http_responses=None, loop_lag=None, prefix="aiond_serve_",
           labels=None) -> str:
    """The text of ``GET /metrics`` for ``stats`` (a BatcherStatistics).

    ``http_responses``: {status code: count}; ``loop_lag``: {"max": s, "last": s}
    from the app's loop monitor; ``labels``: added to every sample (e.g. model)."""
    w = _Writer(prefix, labels or {})
    s = stats
    w.simple("queue_depth", "gauge", "Requests waiting to be batched.", s.queue_depth)
    w.simple("queued_rows", "gauge", "Rows of the requests waiting to be batched.",
             s.queued_rows)
    w.simple("batches_in_flight", "gauge", "Batches running in the engine now.", s.in_flight)
    w.simple("max_batch_size", "gauge", "Current max_batch_size (rows).", s.max_batch_size)
    w.simple("max_wait_seconds", "gauge", "Current max_wait.", s.max_wait)
    w.simple("max_queue", "gauge", "Current max_queue (requests).", s.max_queue)
    w.simple("requests_total", "counter", "Requests accepted into the queue.", s.requests)
    w.metric("requests_finished_total", "counter", "Requests by outcome.", [
        ("", {"outcome": "ok"}, s.completed), ("", {"outcome": "model_error"}, s.failed),
        ("", {"outcome": "deadline"}, s.expired), ("", {"outcome": "cancelled"}, s.cancelled)])
    w.simple("rejected_total", "counter",
             "Requests refused because the queue was full or the server was stopping.",
             s.rejected)
    w.simple("invalid_total", "counter", "Requests refused for a wrong shape, dtype or type.",
             s.invalid)
    w.simple("batches_total", "counter", "Batches run.", s.batches)
    w.simple("rows_total", "counter", "Rows run in batches.", s.rows)
    # batch-size histogram with power-of-two buckets up to max_batch_size
    hist = s.batch_size_histogram
    bounds, b = [], 1
    top = max([s.max_batch_size] + list(hist))
    while b < top:
        bounds.append(b)
        b *= 2
    bounds.append(top)
    samples, total = [], 0
    for le in bounds:
        cum = sum(c for size, c in hist.items() if size <= le)
        samples.append(("_bucket", {"le": str(le)}, cum))
    total = sum(hist.values())
    samples.append(("_bucket", {"le": "+Inf"}, total))
    samples.append(("_sum", None, sum(size * c for size, c in hist.items())))
    samples.append(("_count", None, total))
    w.metric("batch_size", "histogram", "Rows per batch.", samples)
    lat = s.latency_ms
    samples = [("", {"quantile": q}, None if lat.get(k) is None else lat[k] / 1e3)
               for q, k in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99"))]
    samples += [("_sum", None, s.latency_sum_s), ("_count", None, s.latency_count)]
    w.metric("request_latency_seconds", "summary",
             "Time from submission to result (quantiles over recent requests).", samples)
    w.simple("throughput_rows_per_second", "gauge", "Recent batch throughput estimate.",
             s.rows_per_s)
    if http_responses is not None:
        w.metric("http_responses_total", "counter", "HTTP responses of /predict by status.",
                 [("", {"code": str(c)}, n) for c, n in sorted(http_responses.items())])
    if loop_lag is not None:
        w.metric("event_loop_lag_seconds", "gauge",
                 "How late the event loop ran a timer (last and max since the last scrape).",
                 [("", {"stat": "last"}, loop_lag.get("last")),
                  ("", {"stat": "max"}, loop_lag.get("max"))])
    return "\n".join(w.lines) + "\n"
