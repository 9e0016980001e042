"""Dynamic batching: ``await batcher(x)`` for one request, one forward per batch.

    net = mx.gluon.SymbolBlock.imports("mlp-symbol.json", ["data"], "mlp-0000.params")
    batcher = Batcher(net, max_batch_size=64, max_wait=0.002, max_queue=1024)
    y = await batcher(x)        # x: (k, 784) numpy or NDArray -> y: (k, 10) numpy

A request is an array whose first axis is the batch axis (``k >= 1`` rows).
Concurrent requests are concatenated along that axis, run as one forward
through the engine, and the result is split back per request, in order.

Policy (the names are those of Ray Serve ``@serve.batch``, Triton's dynamic
batcher and TorchServe):

* **Drain first.** When the model is idle, whatever is queued runs at once:
  no timer wait, so a lone request pays no batching delay.
* While ``max_in_flight`` batches already run, the queue simply grows.
  When a slot is free but another batch still runs, the next batch waits
  until it holds ``max_batch_size`` rows, ``max_wait`` seconds have passed
  since its oldest request arrived, or the model goes idle.
* ``max_queue`` bounds the queued requests: a full queue rejects at once
  with :class:`Overloaded`, whose ``retry_after`` is an estimate of the
  seconds needed to drain the queue.
* A request's deadline (``timeout=`` per call, or the batcher's default)
  fails it with :class:`DeadlineExceeded` when it passes; a queued request
  that expired is dropped before it is batched; one whose batch is already
  running gets the error at its deadline and its rows are discarded.
* Cancelling the await removes the request from the queue; a cancelled
  request inside a running batch does not disturb the others.
* A bad input is rejected when it is submitted (:class:`InvalidInput`,
  naming what was expected). When the model fails on a batch, each request
  of it is re-run alone, so only the requests that fail alone fail
  (:class:`ModelError`, the reason in the message and as ``__cause__``).
* Variable-length inputs may be padded to ``buckets`` along ``pad_axis``;
  requests are batched with others of the same bucket (and, without
  buckets, of the same shape and dtype).
* Models with several inputs (``num_inputs``): a request is a tuple of
  arrays with the same number of rows; each input is batched along axis 0
  and the model is called with one batch per input. Several outputs (a
  tuple) are split back per request the same way.
* Two priority levels: a request submitted with ``priority=1`` goes before
  every queued ``priority=0`` request when the next batch is formed (a batch
  is topped up with normal requests of the same shape).

The event loop only schedules: the inputs are stacked once in numpy and
copied into one NDArray, the model pushes its ops to the engine, and the
batch is awaited with ``await out.read()``; nothing blocks the loop.

The exception tree::

    ServeError (MXNetError)
     ├── Overloaded                the queue is full; ``retry_after`` seconds
     │    └── BatcherClosed        the batcher is shutting down
     ├── DeadlineExceeded          (also TimeoutError) the deadline passed
     ├── InvalidInput              (also ValueError) wrong shape, dtype or type
     └── ModelError                the model failed on this request
"""
from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import math
import time
from functools import partial

import numpy as np

from ..engine import statistics as _engine_statistics
from ..ndarray import NDArray
from .. import ndarray as nd

__all__ = ["Batcher", "BatcherStatistics", "ServeError", "Overloaded", "BatcherClosed",
           "DeadlineExceeded", "InvalidInput", "ModelError", "ExecutorModel", "load_model"]

log = logging.getLogger("aiond.serve")
perf = time.perf_counter

_LATENCY_WINDOW = 4096     # latencies kept for the percentiles
_SCAN_LIMIT = 256          # queued requests of other shapes looked past per batch


from .errors import (BatcherClosed, DeadlineExceeded, InvalidInput, ModelError,  # noqa: E402
                     Overloaded, ServeError)
from .stats import BatcherStatistics, _percentiles  # noqa: E402


# ------------------------------------------------------------- requests
_QUEUED, _RUNNING, _DONE = 0, 1, 2
_WANT_NONE, _WANT_ANY, _WANT_SLOT, _WANT_FULL = 0, 1, 2, 3


class _Request:
    __slots__ = ("x", "rows", "key", "length", "fut", "t0", "deadline", "timer", "state",
                 "high")

    def __init__(self, x, rows, key, length, fut, t0):
        self.high = False
        self.x = x
        self.rows = rows
        self.key = key
        self.length = length
        self.fut = fut
        self.t0 = t0
        self.deadline = None
        self.timer = None
        self.state = _QUEUED


def _shape_str(shape):
    return "(" + ", ".join("n" if d is None else str(d) for d in shape) + \
        ("," if len(shape) == 1 else "") + ")"


# ----------------------------------------------------------------- batcher
class Batcher:
    """Batch concurrent ``await batcher(x)`` calls into one forward of ``model``.

    ``model``: any callable taking one NDArray (the batch) and returning an
    NDArray, a list/tuple of NDArrays (one result per output), a numpy array,
    or an awaitable of one of these: a Gluon Block, a hybridized or imported
    SymbolBlock, a function. A bound ``Executor`` is wrapped in
    :class:`ExecutorModel`.

    Options:
      max_batch_size  rows in one batch (a request of more rows is refused)
      max_wait        seconds a batch may wait to grow while the model is busy
      max_queue       queued requests before new ones get :class:`Overloaded`
      max_in_flight   batches running at once (the engine overlaps them)
      timeout         default per-request deadline in seconds (None: none)
      sample_shape    expected shape of one row (None entries: any length)
      dtype           the model's input dtype (inputs are cast when safe)
      buckets, pad_axis, pad_value, unpad
                      pad variable-length inputs along ``pad_axis`` (an axis
                      of the request, >= 1) up to the smallest bucket that
                      fits; with ``unpad`` the outputs are cropped back along
                      the same axis where they have the bucket's length
      ctx             the context of the batch arrays (default: cpu)
      num_inputs      inputs of the model: above 1, a request is a tuple of that
                      many arrays, and ``sample_shape``/``dtype`` are lists (one
                      entry per input, None for any)
      numpy_model     the model takes and returns numpy arrays (Python pre- or
                      post-processing, BYTES tensors); it runs on the event loop,
                      so it must be light, or return an awaitable
    """

    # results handed out per event-loop iteration: over HTTP each one wakes a
    # handler that writes its response, so 64 at once held the loop for
    # milliseconds; 8 halved the server's loop lag p99 and the latency p99
    # at the same req/s (bench_serve.py --mode sockets, RESULTS.md)
    deliver_chunk = 8

    def __init__(self, model, *, max_batch_size=32, max_wait=0.002, max_queue=1024,
                 max_in_flight=2, timeout=None, sample_shape=None, dtype=None,
                 buckets=None, pad_axis=1, pad_value=0, unpad=True, ctx=None, name="model",
                 num_inputs=1, numpy_model=False):
        if _is_executor(model):
            model = ExecutorModel(model)
        if not callable(model):
            raise TypeError("model must be callable on an NDArray, got %s"
                            % type(model).__name__)
        self._model = model
        self.name = str(name)
        self._max_batch_size = _positive_int("max_batch_size", max_batch_size)
        self._max_wait = _non_negative("max_wait", max_wait)
        self._max_queue = _positive_int("max_queue", max_queue)
        self._max_in_flight = _positive_int("max_in_flight", max_in_flight)
        self._timeout = None if timeout is None else _non_negative("timeout", timeout)
        self._n_in = _positive_int("num_inputs", num_inputs)
        self._numpy_model = bool(numpy_model)
        if self._n_in > 1:
            dts = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * self._n_in
            sss = list(sample_shape) if sample_shape is not None else [None] * self._n_in
            if len(dts) != self._n_in or len(sss) != self._n_in:
                raise ValueError("num_inputs=%d needs that many dtypes and sample shapes"
                                 % self._n_in)
            self._dtypes = [None if d is None else np.dtype(d) for d in dts]
            self._sample_shapes = [None if ss is None else _sample(ss) for ss in sss]
            dtype = sample_shape = None
            self._pad_inputs = []
            if buckets:
                # the inputs with a variable pad_axis are padded, to one bucket
                ax = int(pad_axis)
                if ax < 1 or any(ss is None for ss in self._sample_shapes):
                    raise ValueError("buckets with several inputs need every sample_shape "
                                     "and pad_axis >= 1")
                self._pad_inputs = [i for i, ss in enumerate(self._sample_shapes)
                                    if len(ss) >= ax and ss[ax - 1] is None]
                if not self._pad_inputs:
                    raise ValueError("no input has a variable axis %d to pad to buckets" % ax)
        self._dtype = None if dtype is None else np.dtype(dtype)
        self._sample_shape = None
        if sample_shape is not None:
            self._sample_shape = _sample(sample_shape)
        self._buckets = None
        if buckets:
            self._buckets = sorted({_positive_int("bucket", b) for b in buckets})
            if int(pad_axis) < 1:
                raise ValueError("pad_axis must be >= 1 (axis 0 is the batch axis), got %r"
                                 % (pad_axis,))
            if self._sample_shape is not None and int(pad_axis) > len(self._sample_shape):
                raise ValueError("pad_axis %d is not an axis of requests of shape %s"
                                 % (pad_axis, _shape_str((None,) + self._sample_shape)))
            if self._sample_shape is not None and \
                    self._sample_shape[int(pad_axis) - 1] is not None:
                # every request would have that length: padding it can only refuse them
                raise ValueError("buckets pad a variable-length axis, but axis %d of requests "
                                 "of shape %s has the fixed length %d"
                                 % (pad_axis, _shape_str((None,) + self._sample_shape),
                                    self._sample_shape[int(pad_axis) - 1]))
        self._pad_axis = int(pad_axis)
        self._pad_value = pad_value
        self._unpad = bool(unpad)
        self._ctx = ctx
        # state, all touched on the bound loop only
        self._loop = None
        self._task = None
        self._q = collections.deque()
        self._qh = collections.deque()      # priority=1 requests
        self._depth = 0
        self._queued_rows = 0
        self._dead = 0
        self._in_flight = 0
        self._batch_tasks = set()
        self._waiter = None
        self._want = _WANT_NONE
        self._closing = False
        # statistics
        self._n = dict(requests=0, completed=0, failed=0, rejected=0, invalid=0, expired=0,
                       cancelled=0, batches=0, rows=0)
        self._hist = collections.Counter()
        self._lat = collections.deque(maxlen=_LATENCY_WINDOW)
        self._qlat = collections.deque(maxlen=_LATENCY_WINDOW)
        self._clat = collections.deque(maxlen=_LATENCY_WINDOW)
        self._q_sum = self._c_sum = 0.0
        self._q_count = self._n_high = 0
        self._lat_sum = 0.0
        self._lat_count = 0
        self._rate = 0.0
        self._last_done = 0.0           # time.time() of the last batch's end

    # ---------------------------------------------------------- settings
    @property
    def max_batch_size(self) -> int:
        return self._max_batch_size

    @property
    def max_wait(self) -> float:
        return self._max_wait

    @property
    def max_queue(self) -> int:
        return self._max_queue

    @property
    def max_in_flight(self) -> int:
        return self._max_in_flight

    @property
    def dtype(self):
        return self._dtype

    @property
    def sample_shape(self):
        return self._sample_shape

    @property
    def num_inputs(self) -> int:
        return self._n_in

    @property
    def model(self):
        return self._model

    def set_max_batch_size(self, n: int):
        """Change the batch size limit; applies to the next batch formed."""
        self._max_batch_size = _positive_int("max_batch_size", n)
        self._poke()

    def set_max_wait(self, seconds: float):
        """Change how long a batch may wait to grow; applies at once."""
        self._max_wait = _non_negative("max_wait", seconds)
        self._poke()

    def set_max_in_flight(self, n: int):
        self._max_in_flight = _positive_int("max_in_flight", n)
        self._poke()

    def _poke(self):
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._wake()
        else:
            loop.call_soon_threadsafe(self._wake)

    # ------------------------------------------------------------ submit
    def __call__(self, x, *, timeout=None, deadline=None, priority=0):
        """Submit one request; returns an awaitable of its result (numpy).

        ``x``: numpy array, array-like or NDArray whose first axis is the
        batch axis. ``timeout`` (seconds from now) or ``deadline`` (a
        ``time.monotonic()`` value) override the batcher's default deadline.
        Raises at once :class:`InvalidInput`, :class:`Overloaded` or
        :class:`BatcherClosed`; the awaitable raises :class:`DeadlineExceeded`
        or :class:`ModelError`. Cancelling the awaitable cancels the request.
        A numpy ``x`` is read when its batch is stacked: do not modify it
        before the result arrives. The result is a view of the batch's output.
        ``priority=1`` puts the request ahead of the ``priority=0`` ones.
        """
        loop = self._loop
        if loop is None:
            loop = self._bind()
        elif asyncio.get_running_loop() is not loop:
            raise RuntimeError("this Batcher runs on another event loop; create one "
                               "Batcher per event loop")
        if self._closing:
            self._n["rejected"] += 1
            raise BatcherClosed("the batcher %r is shutting down" % self.name,
                                self._retry_after())
        if self._depth >= self._max_queue:
            self._n["rejected"] += 1
            raise Overloaded("the queue of %r is full (%d requests waiting)"
                             % (self.name, self._depth), self._retry_after())
        try:
            if self._n_in > 1:
                arr, rows, key, length = self._prepare_multi(x)
            else:
                arr, rows, key, length = self._prepare(x)
        except InvalidInput:
            self._n["invalid"] += 1
            raise
        t0 = perf()
        fut = loop.create_future()
        req = _Request(arr, rows, key, length, fut, t0)
        if timeout is None and deadline is None:
            timeout = self._timeout
        if deadline is not None:
            dl = t0 + (float(deadline) - time.monotonic())
            if timeout is not None:
                dl = min(dl, t0 + float(timeout))
        elif timeout is not None:
            dl = t0 + float(timeout)
        else:
            dl = None
        if dl is not None:
            if dl <= t0:
                self._n["expired"] += 1
                raise DeadlineExceeded("the deadline of this request had passed "
                                       "when it was submitted")
            req.deadline = dl
            req.timer = loop.call_at(loop.time() + (dl - t0), self._expire, req)
        fut.add_done_callback(partial(self._request_done, req))
        if priority:
            req.high = True
            self._n_high += 1
            self._qh.append(req)
        else:
            self._q.append(req)
        self._depth += 1
        self._queued_rows += rows
        self._n["requests"] += 1
        want = self._want
        if want == _WANT_ANY or (want == _WANT_FULL and
                                 self._queued_rows >= self._max_batch_size):
            self._wake()
        return fut

    def submit(self, x, *, timeout=None, deadline=None):
        """The same as ``batcher(x)``."""
        return self(x, timeout=timeout, deadline=deadline)

    def _bind(self):
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._task = loop.create_task(self._schedule(), name="aiond-batcher-%s" % self.name)
        return loop

    def _prepare(self, x):
        """(array, rows, batching key, length along pad_axis) or InvalidInput."""
        if isinstance(x, NDArray):
            shape, dtype = x.shape, np.dtype(x.dtype)
        else:
            if not isinstance(x, np.ndarray):
                try:
                    x = np.asarray(x)
                except (TypeError, ValueError) as e:
                    raise InvalidInput("expected an array of numbers, got %s (%s)"
                                       % (type(x).__name__, e)) from None
            shape, dtype = x.shape, x.dtype
        if dtype.kind not in "biuf" and not (self._numpy_model and dtype.kind in "OSU"):
            raise InvalidInput("expected an array of numbers%s, got dtype %s"
                               % ("" if self._dtype is None else
                                  " (dtype %s)" % self._dtype.name, dtype))
        if len(shape) < 1 or shape[0] < 1:
            raise InvalidInput("expected an array whose first axis is the batch axis, with "
                               "at least one row; got shape %s" % (shape,))
        rows = shape[0]
        if rows > self._max_batch_size:
            raise InvalidInput("a request may hold at most max_batch_size=%d rows, got %d"
                               % (self._max_batch_size, rows))
        want_dt = self._dtype
        if want_dt is not None and dtype != want_dt:
            if not np.can_cast(dtype, want_dt, casting="same_kind") and not (
                    want_dt.kind == "O" and dtype.kind in "SU"):
                raise InvalidInput("expected dtype %s, got %s" % (want_dt.name, dtype.name))
            x = x.astype(want_dt)
            dtype = want_dt
        sample = shape[1:]
        ss = self._sample_shape
        if ss is not None:
            if len(sample) != len(ss) or any(e is not None and e != d
                                             for e, d in zip(ss, sample)):
                raise InvalidInput("expected shape %s (n rows of %s), got %s"
                                   % (_shape_str((None,) + ss), _shape_str(ss),
                                      _shape_str(shape)))
        length = None
        if self._buckets is not None:
            ax = self._pad_axis
            if ax >= len(shape):
                raise InvalidInput("expected at least %d axes to pad along axis %d, got "
                                   "shape %s" % (ax + 1, ax, _shape_str(shape)))
            if isinstance(x, NDArray):
                raise InvalidInput("padding to buckets needs numpy inputs, got an NDArray")
            length = shape[ax]
            for b in self._buckets:
                if b >= length:
                    break
            else:
                raise InvalidInput("axis %d has length %d, more than the largest bucket %d"
                                   % (ax, length, self._buckets[-1]))
            sample = sample[:ax - 1] + (b,) + sample[ax:]
        return x, rows, (sample, dtype), length

    def _prepare_multi(self, x):
        """_prepare for a tuple of arrays, one per input (the inputs with a
        variable pad_axis padded to one bucket: their lengths must agree)."""
        if isinstance(x, dict) or not isinstance(x, (tuple, list)) or len(x) != self._n_in \
                or not all(isinstance(a, (np.ndarray, NDArray)) for a in x):
            raise InvalidInput("this model takes %d inputs: expected a tuple of %d arrays, "
                               "got %s" % (self._n_in, self._n_in, type(x).__name__))
        xs, keys, rows = [], [], None
        dt0, ss0, b0 = self._dtype, self._sample_shape, self._buckets
        self._buckets = None
        try:
            for i, (a, dt, ss) in enumerate(zip(x, self._dtypes, self._sample_shapes)):
                self._dtype, self._sample_shape = dt, ss
                try:
                    a, r, key, _ = self._prepare(a)
                except InvalidInput as e:
                    raise InvalidInput("input %d: %s" % (i, e)) from None
                if rows is not None and r != rows:
                    raise InvalidInput("the inputs have different numbers of rows (%d and %d)"
                                       % (rows, r))
                rows = r
                xs.append(a)
                keys.append(key)
        finally:
            self._dtype, self._sample_shape, self._buckets = dt0, ss0, b0
        length = None
        if b0 is not None:
            ax = self._pad_axis
            lengths = {xs[i].shape[ax] for i in self._pad_inputs}
            if len(lengths) != 1:
                raise InvalidInput("inputs %s are padded together along axis %d; their "
                                   "lengths differ (%s)" % (self._pad_inputs, ax,
                                                            sorted(lengths)))
            if any(isinstance(xs[i], NDArray) for i in self._pad_inputs):
                raise InvalidInput("padding to buckets needs numpy inputs, got an NDArray")
            (length,) = lengths
            b = next((b for b in b0 if b >= length), None)
            if b is None:
                raise InvalidInput("axis %d has length %d, more than the largest bucket %d"
                                   % (ax, length, b0[-1]))
            for i in self._pad_inputs:
                sample, dt = keys[i]
                keys[i] = (sample[:ax - 1] + (b,) + sample[ax:], dt)
        return tuple(xs), rows, tuple(keys), length

    # -------------------------------------------------- request lifecycle
    def _drop(self, req):
        """A queued request leaves the queue without being batched."""
        if req.state == _QUEUED:
            req.state = _DONE
            self._depth -= 1
            self._queued_rows -= req.rows
            self._dead += 1

    def _expire(self, req):
        fut = req.fut
        if fut.done():
            return
        self._drop(req)
        self._n["expired"] += 1
        fut.set_exception(DeadlineExceeded(
            "the deadline of this request passed after %.1f ms (%s)"
            % (1e3 * (perf() - req.t0), "in the queue" if req.state != _RUNNING
               else "while its batch ran")))

    def _request_done(self, req, fut):
        if req.timer is not None:
            req.timer.cancel()
        if fut.cancelled():
            self._n["cancelled"] += 1
            self._drop(req)
            # cancelled entries stay in the deque until popped: compact it when
            # they dominate (never inside _take, which iterates over it)
            if self._dead > 64 and self._dead > (len(self._q) + len(self._qh)) // 2:
                self._q = collections.deque(r for r in self._q if r.state == _QUEUED)
                self._qh = collections.deque(r for r in self._qh if r.state == _QUEUED)
                self._dead = 0

    def _retry_after(self):
        rate = self._rate
        backlog = self._queued_rows + self._in_flight * self._max_batch_size
        if rate <= 0:
            return 1.0
        return min(60.0, max(self._max_wait, 0.001, backlog / rate))

    # --------------------------------------------------------- scheduler
    def _wake(self):
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def _sleep(self, want, due=None):
        loop = self._loop
        w = self._waiter = loop.create_future()
        self._want = want
        h = None if due is None else loop.call_at(due, self._wake)
        try:
            await w
        finally:
            self._want = _WANT_NONE
            self._waiter = None
            if h is not None:
                h.cancel()

    async def _schedule(self):
        loop = self._loop
        try:
            while True:
                if not self._depth:
                    if self._closing:
                        return
                    await self._sleep(_WANT_ANY)
                    continue
                if self._in_flight >= self._max_in_flight or (
                        self._in_flight and not _engine_has_room()):
                    await self._sleep(_WANT_SLOT)
                    continue
                if (self._in_flight and not self._closing
                        and self._queued_rows < self._max_batch_size):
                    oldest = self._oldest()
                    if oldest is not None:
                        left = oldest.t0 + self._max_wait - perf()
                        if left > 0:
                            await self._sleep(_WANT_FULL, loop.time() + left)
                            continue
                batch, rows = self._take()
                if batch:
                    self._launch(batch, rows)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # a bug here must not leave callers waiting forever
            log.exception("aiond.serve: the batcher %r scheduler failed", self.name)
            self._fail_queued(ServeError("the batcher's scheduler failed: %r" % (e,)))
            raise

    def _oldest(self):
        a, b = self._oldest_in(self._qh), self._oldest_in(self._q)
        if a is None or b is None:
            return a or b
        return a if a.t0 <= b.t0 else b

    def _oldest_in(self, q):
        while q:
            r = q[0]
            if r.state == _QUEUED and not r.fut.done():
                return r
            q.popleft()
            if r.state == _QUEUED:
                self._drop(r)
            self._dead -= 1
        return None

    def _take(self):
        """Pop the next batch: the oldest live request (of high priority when
        there is one) and the following ones of the same key, up to
        max_batch_size rows, in order; high-priority requests first."""
        taken, rows, key = [], 0, None
        if self._qh:
            taken, rows, key = self._take_from(self._qh, taken, rows, key)
        if rows < self._max_batch_size:
            taken, rows, key = self._take_from(self._q, taken, rows, key)
        return taken, rows

    def _take_from(self, q, taken, rows, key):
        cap = self._max_batch_size
        keep = None
        now = perf()
        scanned = 0
        while q:
            r = q.popleft()
            if r.state != _QUEUED or r.fut.done():
                if r.state == _QUEUED:
                    self._drop(r)
                self._dead -= 1
                continue
            if r.deadline is not None and now >= r.deadline:
                self._expire(r)
                self._dead -= 1
                continue
            if key is None:
                key = r.key
            if r.key == key and (rows + r.rows <= cap or not taken):
                r.state = _RUNNING
                self._depth -= 1
                self._queued_rows -= r.rows
                taken.append(r)
                rows += r.rows
                if rows >= cap:
                    break
            else:
                if keep is None:
                    keep = []
                keep.append(r)
                scanned += 1
                if r.key == key or scanned >= _SCAN_LIMIT:
                    break
        if keep:
            q.extendleft(reversed(keep))
        return taken, rows, key

    def _launch(self, batch, rows):
        self._in_flight += 1
        self._n["batches"] += 1
        self._n["rows"] += rows
        self._hist[rows] += 1
        t = self._loop.create_task(self._run_batch(batch, rows))
        self._batch_tasks.add(t)
        t.add_done_callback(self._batch_tasks.discard)

    def _fail_queued(self, exc):
        for q in (self._qh, self._q):
            while q:
                r = q.popleft()
                if r.state == _QUEUED:
                    r.state = _DONE
                    if not r.fut.done():
                        r.fut.set_exception(exc)
        self._depth = self._queued_rows = self._dead = 0

    # ------------------------------------------------------------- batches
    async def _run_batch(self, batch, rows):
        t_start = perf()
        qlat = self._qlat
        for r in batch:
            d = t_start - r.t0
            qlat.append(d)
            self._q_sum += d
        self._q_count += len(batch)
        try:
            try:
                outs, multi = await self._forward(batch, rows)
                err = self._check_rows(outs, rows)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - isolated below
                err = e
            if err is None:
                self._deliver(batch, outs, multi)
            else:
                await self._isolate(batch, err)
        except asyncio.CancelledError:
            for r in batch:
                if not r.fut.done():
                    r.fut.set_exception(BatcherClosed("the batcher was closed while this "
                                                      "request ran", 1.0))
            raise
        finally:
            now = perf()
            dt = max(now - t_start, 1e-6)
            self._clat.append(dt)
            self._c_sum += dt
            self._last_done = time.time()
            rate = rows / dt * min(self._in_flight, self._max_in_flight)
            self._rate = rate if self._rate <= 0 else 0.8 * self._rate + 0.2 * rate
            self._in_flight -= 1
            want = self._want
            if want == _WANT_SLOT or (want == _WANT_FULL and not self._in_flight):
                self._wake()

    def _stack(self, batch, rows):
        if self._n_in > 1:
            pads = self._pad_inputs if self._buckets is not None else ()
            return tuple(self._pad(batch, rows, batch[0].key[i], i) if i in pads else
                         self._cat([r.x[i] for r in batch]) for i in range(self._n_in))
        if self._buckets is not None:
            return self._pad(batch, rows, batch[0].key, None)
        return self._cat([r.x for r in batch])

    def _pad(self, batch, rows, key, i):
        """The batch of input ``i`` (None: the only one) padded to its bucket."""
        sample, dtype = key
        out = np.full((rows,) + sample, self._pad_value, dtype=dtype)
        off = 0
        ax = self._pad_axis
        for r in batch:
            idx = [slice(off, off + r.rows)] + [slice(None)] * len(sample)
            idx[ax] = slice(0, r.length)
            out[tuple(idx)] = r.x if i is None else r.x[i]
            off += r.rows
        return out

    def _cat(self, xs):
        if any(isinstance(x, NDArray) for x in xs):
            ctx = self._ctx
            xs = [x if isinstance(x, NDArray) else nd.array(x, ctx=ctx, dtype=x.dtype)
                  for x in xs]
            return xs[0] if len(xs) == 1 else nd.concat(*xs, dim=0)
        return xs[0] if len(xs) == 1 else np.concatenate(xs, axis=0)

    async def _forward(self, batch, rows):
        """Run the model on the stacked batch; ([numpy per output], multi)."""
        xs = self._stack(batch, rows)
        if self._n_in == 1:
            xs = (xs,)
        if self._numpy_model:
            xs = [x.asnumpy() if isinstance(x, NDArray) else x for x in xs]
        else:
            xs = [x if isinstance(x, NDArray) else nd.array(x, ctx=self._ctx, dtype=x.dtype)
                  for x in xs]
        out = self._model(*xs)
        if inspect.isawaitable(out):
            out = await out
        if isinstance(out, NDArray):
            return [await out.read()], False
        if isinstance(out, (list, tuple)):
            pending = [o.read() if isinstance(o, NDArray) else None for o in out]
            res = []
            for o, p in zip(out, pending):
                res.append(await p if p is not None else np.asarray(o))
            return res, True
        return [np.asarray(out)], False

    @staticmethod
    def _check_rows(outs, rows):
        for i, o in enumerate(outs):
            if o.ndim < 1 or o.shape[0] != rows:
                return ModelError("the model's output %d has shape %s for a batch of %d "
                                  "rows: its first axis must be the batch axis"
                                  % (i, o.shape, rows))
        return None

    def _deliver(self, batch, outs, multi, start=0, off=0):
        # Results go out deliver_chunk requests per loop iteration: the callers
        # resume in small bursts, so other callbacks (timers, sockets) are not
        # held up behind a whole batch of them.
        end = min(len(batch), start + self.deliver_chunk)
        now = perf()
        lat = self._lat
        n_ok = 0
        unpad = self._unpad and self._buckets is not None
        for i in range(start, end):
            r = batch[i]
            n = r.rows
            fut = r.fut
            r.state = _DONE
            if not fut.done():
                if multi:
                    res = tuple(self._crop(o[off:off + n], r) if unpad else o[off:off + n]
                                for o in outs)
                else:
                    res = outs[0][off:off + n]
                    if unpad:
                        res = self._crop(res, r)
                fut.set_result(res)
                d = now - r.t0
                lat.append(d)
                self._lat_sum += d
                n_ok += 1
            off += n
        self._lat_count += n_ok
        self._n["completed"] += n_ok
        if end < len(batch):
            self._loop.call_soon(self._deliver, batch, outs, multi, end, off)

    def _crop(self, o, r):
        ax = self._pad_axis
        key = r.key if self._n_in == 1 else r.key[self._pad_inputs[0]]
        bucket = key[0][ax - 1]
        if o.ndim > ax and o.shape[ax] == bucket and r.length != bucket:
            idx = [slice(None)] * o.ndim
            idx[ax] = slice(0, r.length)
            return o[tuple(idx)]
        return o

    async def _isolate(self, batch, err):
        live = [r for r in batch if not r.fut.done()]
        if len(live) <= 1:
            for r in live:
                self._fail(r, err)
            return

        async def solo(r):
            if r.fut.done():
                return
            try:
                outs, multi = await self._forward([r], r.rows)
                e = self._check_rows(outs, r.rows)
            except asyncio.CancelledError:
                raise
            except Exception as ex:  # noqa: BLE001 - this request's own failure
                e = ex
            if e is None:
                self._deliver([r], outs, multi)
            else:
                self._fail(r, e)
        await asyncio.gather(*(solo(r) for r in live))

    def _fail(self, r, err):
        r.state = _DONE
        if r.fut.done():
            return
        self._n["failed"] += 1
        if isinstance(err, ModelError):
            exc = err
        else:
            exc = ModelError("the model failed on this request: %s: %s"
                             % (type(err).__name__, err))
            exc.__cause__ = err
        r.fut.set_exception(exc)

    # ---------------------------------------------------------- lifecycle
    def stop_accepting(self):
        """Refuse new requests from now on (:class:`BatcherClosed`); what is
        queued still runs. ``aclose`` then waits for it."""
        self._closing = True
        self._poke()

    async def aclose(self, drain=True):
        """Stop taking requests; with ``drain`` run everything queued, else
        fail it with :class:`BatcherClosed`; then wait for the running batches."""
        self._closing = True
        if self._loop is None:
            return
        if self._loop.is_closed():
            return
        if asyncio.get_running_loop() is not self._loop:
            fut = asyncio.run_coroutine_threadsafe(self.aclose(drain), self._loop)
            await asyncio.wrap_future(fut)
            return
        if not drain:
            self._fail_queued(BatcherClosed("the batcher %r was closed" % self.name, 1.0))
        self._wake()
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                if not self._task.cancelled():
                    raise
            except Exception:  # noqa: BLE001 - logged by the scheduler
                pass
        while self._batch_tasks:
            await asyncio.gather(*list(self._batch_tasks), return_exceptions=True)

    close = aclose

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()

    @property
    def closing(self) -> bool:
        return self._closing

    # --------------------------------------------------------- statistics
    def statistics(self) -> BatcherStatistics:
        """Queue depth, batches in flight, counters, the batch-size
        histogram and latency percentiles (ms) of recent requests."""
        n = dict(self._n)
        # may be called from another thread while the loop appends: retry the copies
        for _ in range(8):
            try:
                lat = list(self._lat)
                qlat, clat = list(self._qlat), list(self._clat)
                hist = dict(sorted(self._hist.items()))
                break
            except RuntimeError:
                continue
        else:
            lat, hist, qlat, clat = [], {}, [], []
        return BatcherStatistics(
            queue_depth=self._depth, queued_rows=self._queued_rows, in_flight=self._in_flight,
            max_batch_size=self._max_batch_size, max_wait=self._max_wait,
            max_queue=self._max_queue, max_in_flight=self._max_in_flight,
            requests=n["requests"], completed=n["completed"], failed=n["failed"],
            rejected=n["rejected"], invalid=n["invalid"], expired=n["expired"],
            cancelled=n["cancelled"], batches=n["batches"], rows=n["rows"],
            batch_size_histogram=hist,
            latency_ms=_percentiles(lat), latency_count=self._lat_count,
            latency_sum_s=self._lat_sum, rows_per_s=round(self._rate, 1),
            queue_ms=_percentiles(qlat), queue_sum_s=self._q_sum, queue_count=self._q_count,
            compute_ms=_percentiles(clat), compute_sum_s=self._c_sum,
            high_priority=self._n_high, last_batch_time=self._last_done)

    def __repr__(self):
        return ("<Batcher %r max_batch_size=%d max_wait=%gs max_queue=%d queued=%d "
                "in_flight=%d>" % (self.name, self._max_batch_size, self._max_wait,
                                   self._max_queue, self._depth, self._in_flight))


def _engine_has_room():
    """Whether the engine is far from its pending bounds (a push past them would
    block the event loop): another batch may then be pushed next to ours."""
    st = _engine_statistics()
    return (st.pending_ops * 2 < st.max_pending_ops
            and st.bytes_held * 2 < st.max_pending_bytes)


def _sample(shape):
    return tuple(None if d is None or int(d) < 0 else int(d) for d in shape)


def _positive_int(name, v):
    try:
        i = int(v)
    except (TypeError, ValueError):
        raise TypeError("%s must be an integer, got %r" % (name, v)) from None
    if i < 1 or i != v:
        raise ValueError("%s must be an integer >= 1, got %r" % (name, v))
    return i


def _non_negative(name, v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError("%s must be a number of seconds, got %r" % (name, v)) from None
    if not f >= 0 or math.isinf(f):
        raise ValueError("%s must be a finite number of seconds >= 0, got %r" % (name, v))
    return f


from .models import ExecutorModel, _is_executor, load_model  # noqa: E402,F401 - their old home
