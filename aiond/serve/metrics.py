"""Prometheus text exposition (format 0.0.4) of a Batcher's statistics.

No client library: the handful of series a model server exports are written
here directly, with ``# HELP`` and ``# TYPE`` lines as Prometheus expects.
"""
from __future__ import annotations

__all__ = ["CONTENT_TYPE", "render", "render_models"]

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


def _model_metrics(s):
    """[(name, kind, help, [(suffix, extra labels, value)])] of one model."""
    m = []

    def simple(name, kind, help_, value):
        m.append((name, kind, help_, [("", None, value)]))
    simple("queue_depth", "gauge", "Requests waiting to be batched.", s.queue_depth)
    simple("queued_rows", "gauge", "Rows of the requests waiting to be batched.",
           s.queued_rows)
    simple("batches_in_flight", "gauge", "Batches running in the engine now.", s.in_flight)
    simple("max_batch_size", "gauge", "Current max_batch_size (rows).", s.max_batch_size)
    simple("max_wait_seconds", "gauge", "Current max_wait.", s.max_wait)
    simple("max_queue", "gauge", "Current max_queue (requests).", s.max_queue)
    simple("requests_total", "counter", "Requests accepted into the queue.", s.requests)
    simple("high_priority_requests_total", "counter",
           "Requests accepted with the high priority.", s.high_priority)
    m.append(("requests_finished_total", "counter", "Requests by outcome.", [
        ("", {"outcome": "ok"}, s.completed), ("", {"outcome": "model_error"}, s.failed),
        ("", {"outcome": "deadline"}, s.expired), ("", {"outcome": "cancelled"}, s.cancelled)]))
    simple("rejected_total", "counter",
           "Requests refused because the queue was full or the server was stopping.",
           s.rejected)
    simple("invalid_total", "counter", "Requests refused for a wrong shape, dtype or type.",
           s.invalid)
    simple("batches_total", "counter", "Batches run.", s.batches)
    simple("rows_total", "counter", "Rows run in batches.", s.rows)
    # batch-size histogram with power-of-two buckets up to max_batch_size
    hist = s.batch_size_histogram
    bounds, b = [], 1
    top = max([s.max_batch_size] + list(hist))
    while b < top:
        bounds.append(b)
        b *= 2
    bounds.append(top)
    samples = []
    for le in bounds:
        cum = sum(c for size, c in hist.items() if size <= le)
        samples.append(("_bucket", {"le": str(le)}, cum))
    total = sum(hist.values())
    samples.append(("_bucket", {"le": "+Inf"}, total))
    samples.append(("_sum", None, sum(size * c for size, c in hist.items())))
    samples.append(("_count", None, total))
    m.append(("batch_size", "histogram", "Rows per batch.", samples))

    def summary(name, help_, ms, total_s, count):
        ms = ms or {}
        samples = [("", {"quantile": q}, None if ms.get(k) is None else ms[k] / 1e3)
                   for q, k in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99"))]
        samples += [("_sum", None, total_s), ("_count", None, count)]
        m.append((name, "summary", help_, samples))
    summary("request_latency_seconds",
            "Time from submission to result (quantiles over recent requests).",
            s.latency_ms, s.latency_sum_s, s.latency_count)
    summary("queue_seconds", "Time from submission until the request's batch started "
            "(quantiles over recent requests).", s.queue_ms, s.queue_sum_s, s.queue_count)
    summary("compute_seconds", "Time a batch took to run (quantiles over recent batches).",
            s.compute_ms, s.compute_sum_s, s.batches)
    simple("throughput_rows_per_second", "gauge", "Recent batch throughput estimate.",
           s.rows_per_s)
    return m


def render_models(models, http_responses=None, loop_lag=None, prefix="aiond_serve_",
                  connections=None) -> str:
    """The text of ``GET /metrics``: ``models`` is [(labels, BatcherStatistics)]
    (labels such as {"model": name, "version": v}); each metric's samples
    for every model follow its one ``# HELP``/``# TYPE`` header.

    ``http_responses``: {status code: count}; ``loop_lag``: {"max": s, "last": s}
    from the app's loop monitor; ``connections``: the server's
    ``limits.ConnectionStats``."""
    order, groups = [], {}
    for labels, stats in models:
        for name, kind, help_, samples in _model_metrics(stats):
            if name not in groups:
                order.append(name)
                groups[name] = (kind, help_, [])
            groups[name][2].extend((suf, dict(labels, **(extra or {})), v)
                                   for suf, extra, v in samples)
    w = _Writer(prefix, {})
    for name in order:
        kind, help_, samples = groups[name]
        w.metric(name, kind, help_, samples)
    if http_responses is not None:
        w.metric("http_responses_total", "counter", "HTTP responses of /predict and /v2 "
                 "inference by status.",
                 [("", {"code": str(c)}, n) for c, n in sorted(http_responses.items())])
    if loop_lag is not None:
        w.metric("event_loop_lag_seconds", "gauge",
                 "How late the event loop ran a timer (last and max since the last scrape).",
                 [("", {"stat": "last"}, loop_lag.get("last")),
                  ("", {"stat": "max"}, loop_lag.get("max"))])
    if connections is not None:
        w.simple("connections_open", "gauge", "HTTP connections open now.", connections.open)
        w.metric("connections_closed_total", "counter", "HTTP connections the server closed "
                 "or refused for breaking a limit, by the limit.",
                 [("", {"reason": r}, n) for r, n in connections.closed.items()])
    return "\n".join(w.lines) + "\n"


def render(stats, http_responses=None, loop_lag=None, prefix="aiond_serve_",
           labels=None) -> str:
    """``render_models`` for one model's ``stats``; ``labels`` go on its samples."""
    return render_models([(labels or {}, stats)], http_responses, loop_lag, prefix)
