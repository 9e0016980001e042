"""DataLoader: mini-batches from a dataset, loaded in the background.

MXNet 1.9.1's ``gluon.data.DataLoader`` with the same arguments. With
``num_workers > 0`` batches are loaded by worker *processes* (or threads with
``thread_pool=True``), ``prefetch`` (default ``2 * num_workers``) of them in
flight, so loading overlaps the training loop. ``async for batch in loader``
works inside a coroutine without blocking its event loop.

How worker processes are run, and why:

* **Fresh interpreters, never fork.** aiond's engine runs its own threads
  (event loop, CPU workers); a forked child inherits their locks and state but
  not the threads, and hangs at its first engine op. Workers are started like
  multiprocessing's 'spawn' (``sys.executable -c ...`` via ``subprocess``),
  and get the dataset and ``batchify_fn`` pickled, once, at start-up.
* **Not multiprocessing.Process.** A 'spawn' or 'forkserver' context leaves a
  resource-tracker (and a fork-server) process behind for the life of the
  program and re-imports the main script in every worker; here no helper
  process is started, workers run in their own session (Ctrl-C goes to the
  training loop only), and the main script is imported in a worker only when
  the pickled dataset refers to something it defines (then, as with 'spawn',
  the script needs an ``if __name__ == '__main__':`` guard).
* **Plain pipes, numpy on the wire.** Each worker has a task pipe and a result
  pipe. Workers batchify to numpy; the arrays travel out-of-band (pickle
  protocol 5) and the main process makes one NDArray per field. A worker's
  exception is re-raised in the training loop with the worker's traceback in
  its message; a worker that dies, or a batch slower than ``timeout``, stops
  all workers and raises. Workers persist across epochs and stop when the
  loader is garbage collected, ``close()``d, or at interpreter exit.
"""
from __future__ import annotations

import itertools
import os
import pickle
import struct
import sys
import threading
import time
import weakref

import numpy as np

from ... import ndarray as nd
from ...base import MXNetError
from ...context import cpu, cpu_pinned
from ...ndarray import NDArray
from ...util import is_np_array
from . import _worker_pickle
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]

_IN_WORKER = False          # set in worker processes
_STARTUP_TIMEOUT = 60.0     # seconds a worker may take to start (Python, imports, unpickling)
_AIOND_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


# ---------------------------------------------------------------- batchify
class _NDLeaf:
    """A numpy array that becomes an NDArray in the main process."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __reduce__(self):
        return _NDLeaf, (self.array,)


def _np_batchify(data):
    """``default_batchify_fn`` in numpy: NDArray fields come back as _NDLeaf."""
    first = data[0]
    if isinstance(first, NDArray):
        return _NDLeaf(np.stack([d.asnumpy() for d in data]))
    if isinstance(first, tuple):
        return [_np_batchify(field) for field in zip(*data)]
    return _NDLeaf(np.asarray(data))


def _from_wire(obj, ctx=None):
    """_NDLeaf -> NDArray (one copy), recursively through lists and tuples."""
    t = type(obj)
    if t is _NDLeaf:
        a = obj.array
        if is_np_array():   # MXNet's batchify makes mx.np arrays under NumPy semantics
            from ... import numpy as _mx_np
            return _mx_np.array(a, ctx=ctx, dtype=a.dtype)
        return nd.array(a, ctx=ctx, dtype=a.dtype)
    if t is list:
        return [_from_wire(o, ctx) for o in obj]
    if t is tuple:
        return tuple(_from_wire(o, ctx) for o in obj)
    if t is dict:
        return {k: _from_wire(v, ctx) for k, v in obj.items()}
    return obj


def _to_wire(obj):
    """NDArrays -> _NDLeaf(numpy), recursively: what a worker sends back."""
    if isinstance(obj, NDArray):
        return _NDLeaf(obj.asnumpy())
    t = type(obj)
    if t is list:
        return [_to_wire(o) for o in obj]
    if t is tuple:
        return tuple(_to_wire(o) for o in obj)
    if t is dict:
        return {k: _to_wire(v) for k, v in obj.items()}
    return obj


def default_batchify_fn(data):
    """Collate samples into a batch, as MXNet: NDArray samples are stacked
    (dtype kept); tuple samples give a *list* with one batch per field;
    anything else goes through ``np.asarray`` (so Python floats give float64
    and ints int64, as in MXNet) and becomes one NDArray of that dtype."""
    return _from_wire(_np_batchify(data))


def default_mp_batchify_fn(data):
    """MXNet's multi-worker default (it stacked into shared memory); in aiond
    workers batchify to numpy, so this is ``default_batchify_fn``."""
    return _from_wire(_np_batchify(data))


_DEFAULT_BATCHIFY = (default_batchify_fn, default_mp_batchify_fn)


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


# ------------------------------------------------------------ wire format
def _send(conn, obj):
    bufs = []
    head = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    raws = [b.raw() for b in bufs]
    conn.send_bytes(struct.pack("<I%dQ" % len(raws), len(raws), *[r.nbytes for r in raws])
                    + head)
    for r in raws:
        conn.send_bytes(r)


def _recv(conn):
    head = conn.recv_bytes()
    n, = struct.unpack_from("<I", head)
    sizes = struct.unpack_from("<%dQ" % n, head, 4)
    bufs = []
    for size in sizes:
        b = bytearray(size)
        conn.recv_bytes_into(b)
        bufs.append(b)
    return pickle.loads(memoryview(head)[4 + 8 * n:], buffers=bufs)


# ------------------------------------------------------------ worker side
class _KeyErrorMessage(str):
    """KeyError's str() is repr() of its argument; keep the traceback readable."""

    def __repr__(self):
        return self


def _format_error(e):
    import traceback
    try:
        etype = pickle.dumps(type(e))
    except Exception:
        etype = None
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return etype, type(e).__name__, text


class _WorkerUnpickler(pickle.Unpickler):
    """Imports the parent's main script (as ``__mp_main__``) only when the
    pickle needs something defined there."""
    main = None

    def find_class(self, module, name):
        if module == "__main__" and self.main is not None:
            _import_main(*self.main)
            self.main = None
        return super().find_class(module, name)


def _import_main(main_name, main_path):
    import runpy
    import types
    if main_name is not None:
        if main_name == "__main__" or main_name.endswith(".__main__"):
            return
        module = types.ModuleType("__mp_main__")
        module.__dict__.update(runpy.run_module(main_name, run_name="__mp_main__",
                                                alter_sys=True))
        sys.modules["__main__"] = sys.modules["__mp_main__"] = module
    elif main_path is not None:
        from multiprocessing import spawn
        spawn.import_main_path(main_path)


def _worker_entry():
    """Runs in a worker process: ``python -c '...; _worker_entry()' TASK_FD RESULT_FD ID``."""
    import signal
    from multiprocessing.connection import Connection
    global _IN_WORKER
    _IN_WORKER = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    task_fd, res_fd, wid = (int(a) for a in sys.argv[1:4])
    tasks = Connection(task_fd, writable=False)
    results = Connection(res_fd, readable=False)
    try:
        setup = tasks.recv_bytes()
        payload = tasks.recv_bytes()
    except (EOFError, OSError):
        os._exit(0)
    try:
        prep, seed = pickle.loads(setup)
        sys.path[:] = prep["sys_path"]
        sys.argv[:] = prep["sys_argv"]
        import io
        unpickler = _WorkerUnpickler(io.BytesIO(payload))
        unpickler.main = (prep["main_name"], prep["main_path"])
        dataset, batchify_fn = unpickler.load()
        seed += wid                     # distinct random augmentations per worker
        np.random.seed(seed % (1 << 32))
        import random
        random.seed(seed)
        from ... import random as mx_random
        mx_random.seed(seed % (1 << 31))
    except BaseException as e:
        _send_quiet(results, ("fatal", None, None, _format_error(e)))
        os._exit(1)
    if batchify_fn in _DEFAULT_BATCHIFY:
        batchify_fn = _np_batchify
    _send_quiet(results, ("ready", None, None, None))
    _worker_loop(tasks, results, dataset, batchify_fn)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _send_quiet(conn, msg):
    try:
        _send(conn, msg)
    except Exception:
        pass


def _worker_loop(tasks, results, dataset, batchify_fn):
    import queue
    inbox = queue.SimpleQueue()

    def reader():
        # drains the task pipe at once so the main process never blocks
        # sending a task while this worker blocks sending a result
        try:
            while True:
                inbox.put(tasks.recv_bytes())
        except (EOFError, OSError):
            inbox.put(None)

    threading.Thread(target=reader, name="aiond-worker-reader", daemon=True).start()
    while True:
        msg = inbox.get()
        if msg is None:
            return
        gen, idx, samples = pickle.loads(msg)
        try:
            out = ("ok", gen, idx, _to_wire(batchify_fn([dataset[i] for i in samples])))
            try:
                _send(results, out)
                continue
            except (BrokenPipeError, ConnectionError, EOFError):
                return
            except Exception as e:       # the batch does not pickle
                out = ("err", gen, idx, _format_error(e))
        except Exception as e:
            out = ("err", gen, idx, _format_error(e))
        try:
            _send(results, out)
        except OSError:
            return


# ------------------------------------------------------------ main side
def _prep_data():
    main = sys.modules.get("__main__")
    main_name = getattr(getattr(main, "__spec__", None), "name", None)
    main_path = None
    if main_name is None and getattr(main, "__file__", None):
        main_path = os.path.abspath(main.__file__)
    return {"sys_path": [os.getcwd() if p == "" else p for p in sys.path],
            "sys_argv": list(sys.argv), "main_name": main_name, "main_path": main_path}


def _pickle_payload(dataset, batchify_fn, num_workers):
    try:
        return _worker_pickle.dumps((dataset, batchify_fn))
    except Exception as e:
        raise TypeError(
            "DataLoader(num_workers=%d) loads in worker processes, which get the dataset and "
            "batchify_fn by pickle, and pickling failed: %s: %s. Define datasets, transforms "
            "and batchify functions at module level (lambdas and local functions do not "
            "pickle), or pass thread_pool=True to load in threads."
            % (num_workers, type(e).__name__, e)) from e


def _seed_from_numpy():
    """A worker seed that follows ``np.random.seed`` without drawing from
    numpy's RNG (so shuffling stays as in MXNet for a given seed)."""
    keys, pos = np.random.get_state()[1:3]
    return (int(keys[pos % len(keys)]) * 2654435761 + int(pos)) % (1 << 62)


def _stop_workers(procs, tasks, results, grace):
    """Close the pipes (workers exit on EOF), then SIGTERM/SIGKILL stragglers;
    every worker is reaped, so no zombie is left."""
    import subprocess
    for c in itertools.chain(tasks, results):
        try:
            c.close()
        except OSError:
            pass
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(2.0)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class _ProcessPool:
    """``num_workers`` worker processes with a task and a result pipe each."""

    def __init__(self, num_workers, dataset, batchify_fn, pin_ctx):
        if _IN_WORKER:
            raise RuntimeError(
                "DataLoader(num_workers>0) was created inside a DataLoader worker process: the "
                "main script was imported there to unpickle something it defines. Put the "
                "script's top-level code under `if __name__ == '__main__':`.")
        import multiprocessing.spawn
        import subprocess
        from multiprocessing.connection import Connection
        payload = _pickle_payload(dataset, batchify_fn, num_workers)
        setup = pickle.dumps((_prep_data(), _seed_from_numpy()), protocol=pickle.HIGHEST_PROTOCOL)
        self._ctx = pin_ctx or cpu()
        self.procs, self._tasks, self._results = [], [], []
        self._finalizer = weakref.finalize(self, _stop_workers, self.procs, self._tasks,
                                           self._results, 0.5)
        env = dict(os.environ)
        env.setdefault("AIOND_CPU_WORKERS", "1")
        exe = multiprocessing.spawn.get_executable()
        cmd = [exe, *subprocess._args_from_interpreter_flags(), "-c",
               "import sys; sys.path.insert(0, %r); from aiond.gluon.data.dataloader "
               "import _worker_entry; _worker_entry()" % _AIOND_PARENT]
        try:
            for wid in range(num_workers):
                task_r, task_w = os.pipe()
                res_r, res_w = os.pipe()
                try:
                    p = subprocess.Popen(cmd + [str(task_r), str(res_w), str(wid)],
                                         pass_fds=(task_r, res_w), env=env,
                                         stdin=subprocess.DEVNULL,
                                         start_new_session=True)
                finally:
                    os.close(task_r)
                    os.close(res_w)
                self.procs.append(p)
                self._tasks.append(Connection(task_w, readable=False))
                self._results.append(Connection(res_r, writable=False))
            for wid, conn in enumerate(self._tasks):   # workers start up meanwhile
                try:
                    conn.send_bytes(setup)
                    conn.send_bytes(payload)
                except OSError:
                    p = self.procs[wid]
                    raise MXNetError("DataLoader worker process %d (pid %d) failed to start "
                                     "(exit code %s); its error is printed above"
                                     % (wid, p.pid, p.poll())) from None
        except BaseException:
            self.shutdown()
            raise
        self._outstanding = [0] * num_workers
        self._ready = [False] * num_workers
        self._buffers = {}
        self._gens = itertools.count()
        self._lock = threading.RLock()
        self._next = 0

    @property
    def closed(self):
        return not self._finalizer.alive

    def shutdown(self, grace=0.5):
        if self._finalizer.alive:
            self._finalizer.detach()
            _stop_workers(self.procs, self._tasks, self._results, grace)

    def open_gen(self):
        g = next(self._gens)
        self._buffers[g] = {}
        return g

    def close_gen(self, gen, handles):
        self._buffers.pop(gen, None)       # late results of ``gen`` are dropped

    def submit(self, gen, idx, samples):
        msg = pickle.dumps((gen, idx, samples), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            n = len(self.procs)
            w = min(range(n), key=lambda i: (self._outstanding[i], (i - self._next) % n))
            self._next = (w + 1) % n
            self._outstanding[w] += 1
            try:
                self._tasks[w].send_bytes(msg)
            except OSError:
                pass        # the worker died: result() finds its pipe closed and says so
            except BaseException:
                self.shutdown(grace=0)    # a message cut in half (Ctrl-C): stream is lost
                raise
        return w

    def result(self, w, gen, idx, timeout):
        # ``timeout`` counts from when the worker is up: starting a Python
        # process is not what the user's timeout is about
        with self._lock:
            deadline = time.monotonic() + (timeout if self._ready[w]
                                           else max(timeout, _STARTUP_TIMEOUT))
            if self.closed:
                raise MXNetError("DataLoader workers were stopped (after an error or close())")
            buf = self._buffers.get(gen)
            while buf is None or idx not in buf:
                conn = self._results[w]
                left = deadline - time.monotonic()
                if left <= 0 or not conn.poll(left):
                    self._raise_timeout(w, idx, timeout if self._ready[w] else
                                        max(timeout, _STARTUP_TIMEOUT))
                try:
                    msg = _recv(conn)
                except (EOFError, OSError):
                    self._raise_died(w, idx)
                except BaseException:
                    self.shutdown(grace=0)    # a message read in half (Ctrl-C): stream is lost
                    raise
                if msg[0] == "ready":
                    self._ready[w] = True
                    deadline = time.monotonic() + timeout
                    continue
                if msg[0] == "fatal":
                    self._raise_fatal(w, msg[3])
                self._outstanding[w] -= 1
                b = self._buffers.get(msg[1])
                if b is not None:
                    b[msg[2]] = msg
                buf = self._buffers.get(gen)
            msg = buf.pop(idx)
        if msg[0] == "err":
            self._raise_error(w, idx, msg[3])
        return _from_wire(msg[3], self._ctx)

    # -------------------------------------------------------- failures
    def _raise_timeout(self, w, idx, timeout):
        import multiprocessing
        pid = self.procs[w].pid
        ready = self._ready[w]
        self.shutdown(grace=0)
        if not ready:
            raise multiprocessing.TimeoutError(
                "DataLoader worker %d (pid %d) did not start within %s s (starting Python and "
                "unpickling the dataset); all workers were stopped." % (w, pid, timeout))
        raise multiprocessing.TimeoutError(
            "DataLoader timed out after %s s waiting for batch %d from worker %d (pid %d); all "
            "workers were stopped. If loading a batch is just slow (heavy transforms, slow "
            "disk), pass a larger timeout= to DataLoader." % (timeout, idx, w, pid))

    def _raise_died(self, w, idx):
        import signal
        import subprocess
        p = self.procs[w]
        try:
            code = p.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        how = "exit code %s" % code
        if code is not None and code < 0:
            try:
                how = "signal %s" % signal.Signals(-code).name
            except ValueError:
                how = "signal %d" % -code
        self.shutdown(grace=0)
        raise MXNetError(
            "DataLoader worker process %d (pid %d) exited unexpectedly (%s) while loading batch "
            "%d; all workers were stopped.%s" % (w, p.pid, how, idx,
                                                 " SIGKILL is often the out-of-memory killer."
                                                 if code == -9 else ""))

    def _raise_fatal(self, w, info):
        pid = self.procs[w].pid
        self.shutdown(grace=0)
        raise MXNetError(
            "DataLoader worker process %d (pid %d) failed to start: it could not unpickle the "
            "dataset and batchify_fn. Workers are fresh Python processes: what the dataset "
            "uses must be importable there (a script's own classes are found by importing the "
            "script, which needs an `if __name__ == '__main__':` guard; classes defined "
            "interactively cannot be used, pass thread_pool=True instead).\nOriginal %s"
            % (w, pid, info[2]))

    def _raise_error(self, w, idx, info):
        pid = self.procs[w].pid
        self.shutdown(grace=0)
        etype_bytes, name, text = info
        msg = ("Caught %s in DataLoader worker process %d (pid %d) while loading batch %d.\n"
               "Original %s" % (name, w, pid, idx, text))
        etype = RuntimeError
        if etype_bytes is not None:
            try:
                etype = pickle.loads(etype_bytes)
            except Exception:
                pass
        try:
            exc = etype(_KeyErrorMessage(msg) if etype is KeyError else msg)
            if msg not in str(exc):
                raise TypeError
        except Exception:
            exc = RuntimeError(msg)
        raise exc


def _thread_work(dataset, batchify_fn, samples, pin_ctx):
    batch = batchify_fn([dataset[i] for i in samples])
    if pin_ctx is not None:
        batch = _as_in_context(batch, pin_ctx)
    return batch


def _thread_loop(inbox):
    while True:
        item = inbox.get()
        if item is None:
            return
        fut, args = item
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(_thread_work(*args))
            except BaseException as e:
                fut.set_exception(e)
        # an idle thread must not keep the last batch, its exception or the
        # frames of its traceback (and so the loader) alive
        del item, fut, args


def _stop_threads(inbox, n):
    import queue
    while True:                     # cancel what has not started
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            break
        if item is not None:
            item[0].cancel()
    for _ in range(n):
        inbox.put(None)


class _ThreadPool:
    """``num_workers`` daemon threads of this process (``thread_pool=True``).

    Daemon threads, as MXNet's ThreadPool: a slow or stuck ``__getitem__``
    never delays interpreter exit (a ThreadPoolExecutor's threads would be
    joined, queued batches included).
    """

    def __init__(self, num_workers, dataset, batchify_fn, pin_ctx):
        import queue
        self._inbox = queue.SimpleQueue()
        for i in range(num_workers):
            threading.Thread(target=_thread_loop, args=(self._inbox,), daemon=True,
                             name="aiond-dataloader-%d" % i).start()
        self._args = (dataset, batchify_fn)
        self._pin = pin_ctx
        self._finalizer = weakref.finalize(self, _stop_threads, self._inbox, num_workers)

    @property
    def closed(self):
        return not self._finalizer.alive

    def shutdown(self, grace=0):
        self._finalizer()

    def open_gen(self):
        return None

    def close_gen(self, gen, handles):
        for fut in handles:
            fut.cancel()

    def submit(self, gen, idx, samples):
        import concurrent.futures
        fut = concurrent.futures.Future()
        self._inbox.put((fut, self._args + (samples, self._pin)))
        return fut

    def result(self, fut, gen, idx, timeout):
        import concurrent.futures
        import multiprocessing
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            raise multiprocessing.TimeoutError(
                "DataLoader timed out after %s s waiting for batch %d from its worker threads. "
                "If loading a batch is just slow, pass a larger timeout= to DataLoader."
                % (timeout, idx)) from None


class _MultiWorkerIter:
    """One epoch over a worker pool: batches in order, ``prefetch`` ahead."""

    def __init__(self, pool, batch_sampler, prefetch, timeout, on_exhausted=None):
        self._pool = pool
        self._batch_sampler = batch_sampler
        self._iter = iter(batch_sampler)
        self._timeout = timeout
        self._on_exhausted = on_exhausted
        self._gen = pool.open_gen()
        self._pending = {}
        self._sent = self._rcvd = 0
        self._closed = False
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def __iter__(self):
        return self

    def _push_next(self):
        samples = next(self._iter, None)
        if samples is None:
            return
        self._pending[self._sent] = self._pool.submit(self._gen, self._sent, samples)
        self._sent += 1

    def __next__(self):
        if self._closed:
            raise StopIteration
        try:
            self._push_next()
            if self._rcvd == self._sent:
                self.close()
                if self._on_exhausted is not None:
                    self._on_exhausted()
                raise StopIteration
            idx = self._rcvd
            handle = self._pending.pop(idx)
            batch = self._pool.result(handle, self._gen, idx, self._timeout)
        except StopIteration:
            raise
        except BaseException:
            self.close()
            raise
        self._rcvd += 1
        return batch

    next = __next__

    def close(self):
        if not self._closed:
            self._closed = True
            self._pool.close_gen(self._gen, list(self._pending.values()))
            self._pending.clear()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# ------------------------------------------------------------ async
_END = object()


def _step(state):
    if state[1] is None:
        state[1] = iter(state[0])
    return next(state[1], _END)


def _in_daemon_thread(fn, *args):
    """Run ``fn`` on a new daemon thread (never delays interpreter exit)."""
    import concurrent.futures
    fut = concurrent.futures.Future()

    def run():
        if not fut.set_running_or_notify_cancel():
            return
        try:
            fut.set_result(fn(*args))
        except BaseException as e:
            fut.set_exception(e)

    threading.Thread(target=run, name="aiond-dataloader-async", daemon=True).start()
    return fut


class _AsyncLoaderIter:
    """``async for``: each batch is waited for on a thread, never on the loop.

    Cancelling the ``await`` leaves the batch being loaded in place: the next
    ``__anext__`` returns it, so no batch is lost or loaded twice.
    """

    def __init__(self, loader):
        self._state = [loader, None]     # [loader, sync iterator once started]
        self._fut = None
        self._done = False

    def __aiter__(self):
        return self

    async def __anext__(self):
        import asyncio
        if self._done:
            raise StopAsyncIteration
        if self._fut is None or self._fut.cancelled():
            self._fut = _in_daemon_thread(_step, self._state)
        fut = self._fut
        try:
            item = await asyncio.wrap_future(fut)
        except asyncio.CancelledError:
            raise
        except BaseException:
            self._fut = None
            self._done = True
            raise
        self._fut = None
        if item is _END:
            self._done = True
            raise StopAsyncIteration
        return item

    async def aclose(self):
        self._done = True
        it = self._state[1]
        if isinstance(it, _MultiWorkerIter):
            it.close()


# ------------------------------------------------------------ DataLoader
class DataLoader:
    """Loads data from a dataset and returns mini-batches (MXNet 1.9.1).

    Parameters are MXNet's: ``dataset``, ``batch_size``, ``shuffle``,
    ``sampler``, ``last_batch`` ('keep', 'discard', 'rollover'),
    ``batch_sampler``, ``batchify_fn``, ``num_workers``, ``pin_memory``,
    ``pin_device_id``, ``prefetch`` (default ``2 * num_workers``),
    ``thread_pool``, ``timeout`` (seconds per batch) and ``auto_reload``.

    With ``num_workers > 0`` the dataset and ``batchify_fn`` are pickled to
    worker processes (see the module docstring); with ``thread_pool=True``
    they run on threads of this process instead. ``async for`` works too::

        async for data, label in loader:
            ...
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise ValueError("timeout must be positive, given {}".format(timeout))
        self._timeout = timeout

        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless "
                                 "batch_sampler is specified")
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(
                sampler, batch_size, last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must "
                             "not be specified if batch_sampler is specified.")

        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        if batchify_fn is None:
            batchify_fn = default_mp_batchify_fn if num_workers > 0 else default_batchify_fn
        self._batchify_fn = batchify_fn
        self._pool = None
        self._iter = None
        if self._num_workers > 0:
            self._pool = self._make_pool()
        self.auto_reload = auto_reload
        if self.auto_reload:
            self.refresh()

    def _pin_ctx(self):
        return cpu_pinned(self._pin_device_id) if self._pin_memory else None

    def _make_pool(self):
        kind = _ThreadPool if self._thread_pool else _ProcessPool
        return kind(self._num_workers, self._dataset, self._batchify_fn, self._pin_ctx())

    def __iter__(self):
        it = self._iter if self._iter is not None else self._prefetch_iter()
        self._iter = None
        return it

    def __aiter__(self):
        return _AsyncLoaderIter(self)

    def _exhausted(self):
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self):
        ref = weakref.ref(self)

        def on_exhausted():
            loader = ref()
            if loader is not None:
                loader._exhausted()

        if self._num_workers == 0:
            return self._same_process_iter(on_exhausted)
        if self._pool is None or self._pool.closed:
            self._pool = self._make_pool()
        return _MultiWorkerIter(self._pool, self._batch_sampler, self._prefetch,
                                self._timeout, on_exhausted)

    def _same_process_iter(self, on_exhausted):
        dataset, batchify_fn, pin = self._dataset, self._batchify_fn, self._pin_ctx()
        for batch in self._batch_sampler:
            ret = batchify_fn([dataset[idx] for idx in batch])
            if pin is not None:
                ret = _as_in_context(ret, pin)
            yield ret
        on_exhausted()

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Start the next epoch's iterator now (its prefetch begins)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the prefetched iterator; prefetching starts at ``iter()``."""
        self._iter = None

    def close(self):
        """Stop the worker processes or threads now (they also stop when the
        loader is garbage collected, and at exit). Iterating again restarts them.

        There is no ``__del__``: iterators hold the pool too, so that
        ``for b in DataLoader(...)`` keeps its workers; the pool's finalizer
        stops them when the loader and its iterators are all gone."""
        self._iter = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

