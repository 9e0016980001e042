"""``python -m aiond.serve``: serve an exported model over HTTP with dynamic batching.

    python -m aiond.serve --symbol model-symbol.json --params model-0000.params \\
        --input-shape 1,784 --port 8080
    python -m aiond.serve --model-repository models/ --port 8080

Every model is served with the Open Inference Protocol (``/v2/...``, what
Triton's and KServe's clients speak); a single model also on ``/predict``.
A repository folder holds one subfolder per model (see
:mod:`aiond.serve.repository` for its config file); a model that fails to
load is reported (``POST /v2/repository/index``, the log) and the others serve.

The files are those written by MXNet 1.x or aiond (Gluon ``export()`` or a
Module checkpoint). See ``--help`` for the batching options. SIGTERM or
Ctrl-C stops taking connections, lets the requests in flight and the queued
batches finish, then exits.
"""
from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import socket
import sys

from .._extras import install_hint

_WORKERS_ENV = "AIOND_CPU_WORKERS"


def _shape(text):
    try:
        dims = tuple(int(d) for d in text.replace("(", "").replace(")", "").split(",")
                     if d.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a shape like 1,784" % text) from None
    if len(dims) < 1:
        raise argparse.ArgumentTypeError("the shape needs at least the batch axis")
    return dims


def _ints(text):
    try:
        return sorted({int(d) for d in text.split(",") if d.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a list like 16,32,64" % text) from None


def _warmup_input(spec, shape, dtype):
    """The warm-up batch: ``random``/``zeros``/``ones`` of ``shape``, or one
    request's input read from a .npy or JSON file."""
    import numpy as np
    if spec == "random":
        return np.random.RandomState(0).uniform(0, 1, shape).astype(dtype)
    if spec == "zeros":
        return np.zeros(shape, dtype)
    if spec == "ones":
        return np.ones(shape, dtype)
    if spec.endswith(".npy"):
        x = np.load(spec, allow_pickle=False)
    else:
        import json
        with open(spec) as f:
            obj = json.load(f)
        if isinstance(obj, dict):
            obj = next((obj[k] for k in ("data", "inputs", "instances") if k in obj), None)
        x = np.array(obj, dtype=dtype)
    x = np.asarray(x, dtype=dtype)
    if x.ndim == len(shape) - 1:
        x = x[None]
    if x.ndim != len(shape):
        raise ValueError("expected an input of shape %s (or one row of it), got %s"
                         % (shape[1:], x.shape))
    return x


class _DefaultsOnce(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless it has no default
    (None, a flag) or its help already says what the default is."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.default in (None, False, argparse.SUPPRESS) or "default" in text.lower()
                or action.option_strings == [] or "%(default)" in text):
            return text
        return text + " (default: %(default)s)"


def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m aiond.serve",
        description="Serve an MXNet/aiond model (prefix-symbol.json + prefix-NNNN.params), "
                    "or every model of a repository folder, over HTTP (and gRPC with "
                    "--grpc-port) with dynamic batching. The Open Inference Protocol "
                    "(KServe v2, Triton's clients): /v2/health/live, /v2/models/NAME, "
                    "POST /v2/models/NAME[/versions/V]/infer (JSON or binary tensors), "
                    "POST /v2/repository/index and .../models/NAME/load|unload. A single "
                    "model also on POST /predict: JSON ({\"data\": [[...]]}) or raw "
                    "little-endian tensors (Content-Type: application/octet-stream, "
                    "X-Tensor-Shape, X-Tensor-Dtype). GET /health; GET /metrics (Prometheus).",
        formatter_class=_DefaultsOnce)
    m = p.add_argument_group("model")
    m.add_argument("--model-repository", default=None, metavar="DIR",
                   help="serve every model in DIR (one subfolder per model: "
                        "prefix-symbol.json, prefix-NNNN.params per version, or a .onnx "
                        "file; config.json "
                        "or config.toml); replaces --symbol and the options below")
    m.add_argument("--symbol", default=None, help="graph JSON (prefix-symbol.json), or an "
                                                  ".onnx model file (no --params)")
    m.add_argument("--params", default=None,
                   help="parameters (prefix-0000.params); omit for a model without any")
    m.add_argument("--input-shape", default=None, type=_shape,
                   help="shape of one request, batch axis first (1,784): requests of "
                        "1..max-batch-size rows are accepted; -1 marks a variable axis")
    m.add_argument("--input-name", default=None,
                   help="the graph's input variable (default: its only non-parameter input)")
    m.add_argument("--dtype", default="float32", help="input dtype")
    m.add_argument("--name", default=None, help="model name in /health and /metrics "
                                                 "(default: the symbol file's prefix)")
    b = p.add_argument_group("batching")
    b.add_argument("--max-batch-size", type=int, default=32,
                   help="rows in one batch (Triton max_batch_size, Ray max_batch_size)")
    b.add_argument("--max-wait-ms", type=float, default=2.0,
                   help="how long a batch may wait to grow while another one runs "
                        "(Triton max_queue_delay, Ray batch_wait_timeout_s); an idle "
                        "model runs what is queued at once")
    b.add_argument("--max-queue", type=int, default=1024,
                   help="queued requests before new ones get 503 with Retry-After")
    b.add_argument("--max-in-flight", type=int, default=None,
                   help="batches running in the engine at once (default: 2, or 1 with one "
                        "engine worker: a second batch would only wait in the engine, while "
                        "the queue it left keeps growing into a fuller batch; with one "
                        "worker, in three A/B runs over HTTP (benchmarks/bench_serve_ab.py) "
                        "this gave the same or up to 1.5x the req/s with lower p99 latency, "
                        "loop lag and CPU per request)")
    b.add_argument("--timeout-ms", type=float, default=None,
                   help="default per-request deadline (504 when it passes); clients may "
                        "send X-Timeout-Ms")
    b.add_argument("--buckets", type=_ints, default=None,
                   help="pad variable-length inputs along --pad-axis to these lengths "
                        "(e.g. 16,32,64)")
    b.add_argument("--pad-axis", type=int, default=1, help="axis padded to --buckets")
    b.add_argument("--pad-value", type=float, default=0.0, help="padding value")
    h = p.add_argument_group("server")
    h.add_argument("--host", default="127.0.0.1", help="address to listen on")
    h.add_argument("--port", type=int, default=8080, help="port (0: any free port)")
    h.add_argument("--http", choices=["httptools", "h11"], default="httptools",
                   help="uvicorn's HTTP parser: httptools (C, the 'serve' extra; falls back "
                        "to h11 when missing) or h11 (pure Python)")
    h.add_argument("--grpc-port", type=int, default=None,
                   help="also serve the inference protocol over gRPC on this port (0: any "
                        "free port; needs the 'grpc' extra: %s)"
                        % install_hint("grpc").replace("%", "%%"))
    h.add_argument("--max-body-bytes", type=int, default=16 << 20,
                   help="larger request bodies get 413")
    c = p.add_argument_group("connection limits (slow and hostile clients)")
    c.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds from a connection's opening, or a kept-alive request's "
                        "first byte, to the end of its headers (408 and close after)")
    c.add_argument("--body-timeout", type=float, default=30.0,
                   help="seconds a client may take to send a request body (408 and close)")
    c.add_argument("--keepalive-timeout", type=float, default=5.0,
                   help="seconds an idle kept-alive connection stays open")
    c.add_argument("--max-connections", type=int, default=1000,
                   help="open connections; more get 503 with Retry-After")
    c.add_argument("--max-connections-per-client", type=int, default=100,
                   help="open connections from one client address; more get 503")
    c.add_argument("--max-header-count", type=int, default=100,
                   help="headers in one request; more get 431")
    c.add_argument("--max-header-bytes", type=int, default=16384,
                   help="bytes of a request line and headers; more get 431")
    h.add_argument("--graceful-timeout", type=float, default=30.0,
                   help="seconds SIGTERM waits for requests in flight before cancelling them")
    h.add_argument("--workers", type=int, default=None,
                   help="engine CPU worker threads (sets %s). Default: that variable if "
                        "set, else one less than the cores (at least 1), which leaves a "
                        "core to the event loop: on 2 cores this halved the loop lag at "
                        "the same batched throughput" % _WORKERS_ENV)
    h.add_argument("--no-warmup", action="store_true",
                   help="skip running one batch before listening")
    h.add_argument("--warmup-data", default="random",
                   help="what the warm-up batch holds: 'random' (uniform in [0, 1)), "
                        "'zeros', 'ones', or a file with one request's input (.npy, or "
                        "JSON as POSTed to /predict); a warm-up failure stops the server "
                        "with the model's error")
    h.add_argument("--log-level", default="info",
                   choices=["critical", "error", "warning", "info", "debug"])
    return p


def _reexec_with_workers(n):
    """The engine reads AIOND_CPU_WORKERS when aiond is imported (before this
    module runs): re-execute once with it set."""
    if os.environ.get(_WORKERS_ENV) == str(n):
        return
    env = dict(os.environ)
    env[_WORKERS_ENV] = str(n)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "aiond.serve"] + sys.argv[1:], env)


def missing_serve_extra():
    """None, or a one-line message naming what of the 'serve' extra is missing."""
    missing = []
    for mod in ("starlette", "uvicorn"):
        try:
            __import__(mod)
        except ModuleNotFoundError:
            missing.append(mod)
    if not missing:
        return None
    return ("aiond.serve needs the 'serve' extra (%s not installed): %s"
            % (" and ".join(missing), install_hint("serve")))


def main(argv=None):
    args = build_parser().parse_args(argv)
    msg = missing_serve_extra()
    if msg:
        sys.exit(msg)
    workers = args.workers
    if workers is None and _WORKERS_ENV not in os.environ:
        workers = max(1, (os.cpu_count() or 1) - 1)
    if workers is not None:
        if workers < 1:
            sys.exit("--workers must be >= 1")
        if argv is None:
            _reexec_with_workers(workers)
    import numpy as np
    import aiond as mx
    from .batcher import load_model
    from .http import create_app

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s: %(message)s")
    log = logging.getLogger("aiond.serve")
    from .limits import ConnectionStats
    try:
        args.limits = _limits(args)
    except ValueError as e:
        sys.exit("aiond.serve: %s" % e)
    if not args.body_timeout > 0:
        sys.exit("aiond.serve: --body-timeout must be > 0, got %r" % args.body_timeout)
    stats = args.connection_stats = ConnectionStats()
    if args.model_repository is not None:
        if args.symbol is not None:
            sys.exit("aiond.serve: give --model-repository or --symbol, not both")
        if not os.path.isdir(args.model_repository):
            sys.exit("aiond.serve: --model-repository %s is not a folder"
                     % args.model_repository)
        app = create_app(repository=args.model_repository, max_body_bytes=args.max_body_bytes,
                         grpc_address=_grpc_address(args), body_timeout=args.body_timeout,
                         connection_stats=stats, grpc_limits=args.limits)
        _listen(app, args, log, "repository %s" % args.model_repository)
        return
    if args.symbol is None or args.input_shape is None:
        sys.exit("aiond.serve: give --symbol and --input-shape (or --model-repository)")
    name = args.name or os.path.basename(args.symbol).rsplit("-symbol", 1)[0]
    if name.endswith(".onnx") and not args.name:
        name = name[:-len(".onnx")]
    try:
        model = load_model(args.symbol, args.params, input_name=args.input_name)
    except (mx.base.MXNetError, ValueError, OSError) as e:
        sys.exit("aiond.serve: cannot load the model: %s" % e)
    sample = tuple(None if d < 0 else d for d in args.input_shape[1:])
    try:
        dtype = np.dtype(args.dtype)
    except TypeError:
        sys.exit("aiond.serve: --dtype %r is not a dtype" % args.dtype)
    if not args.no_warmup:
        shape = (1,) + tuple(d if d is not None else (args.buckets or [1])[0] for d in sample)
        try:
            x = _warmup_input(args.warmup_data, shape, dtype)
        except (OSError, ValueError) as e:
            sys.exit("aiond.serve: --warmup-data %s: %s" % (args.warmup_data, e))
        try:
            out = model(mx.nd.array(x, dtype=dtype))
            out = out if isinstance(out, (list, tuple)) else [out]
            for o in out:
                o.wait_to_read()
        except Exception as e:  # noqa: BLE001 - whatever the model raises, say so clearly
            sys.exit("aiond.serve: warm-up failed: the model raised on --warmup-data %s "
                     "(shape %s, %s): %s: %s\nPass a valid request with --warmup-data FILE, "
                     "or --no-warmup." % (args.warmup_data, x.shape, dtype.name,
                                          type(e).__name__, e))
    # the inputs' and outputs' names and shapes on /v2 come from create_app,
    # as for a model of a repository or an app of your own
    app = create_app(model, sample_shape=sample, dtype=dtype, name=name,
                     max_body_bytes=args.max_body_bytes, max_batch_size=args.max_batch_size,
                     max_wait=args.max_wait_ms / 1e3, max_queue=args.max_queue,
                     max_in_flight=_in_flight(args, mx),
                     timeout=None if args.timeout_ms is None else args.timeout_ms / 1e3,
                     buckets=args.buckets, pad_axis=args.pad_axis, pad_value=args.pad_value,
                     grpc_address=_grpc_address(args), input_name=args.input_name,
                     body_timeout=args.body_timeout, connection_stats=stats,
                     grpc_limits=args.limits)
    _listen(app, args, log, "model %r" % name)


def _limits(args):
    from .limits import ServerLimits
    return ServerLimits(header_timeout=args.header_timeout,
                        keepalive_timeout=args.keepalive_timeout,
                        max_connections=args.max_connections,
                        max_connections_per_client=args.max_connections_per_client,
                        max_header_count=args.max_header_count,
                        max_header_bytes=args.max_header_bytes).check()


def _in_flight(args, mx):
    if args.max_in_flight is not None:
        return args.max_in_flight
    return min(2, mx.engine.statistics().workers)


def _grpc_address(args):
    if args.grpc_port is None:
        return None
    try:
        import grpc  # noqa: F401
    except ImportError:
        sys.exit("aiond.serve: --grpc-port needs grpcio: %s" % install_hint("grpc"))
    host = "[%s]" % args.host if ":" in args.host else args.host
    return "%s:%d" % (host, args.grpc_port)


def _listen(app, args, log, what):
    import uvicorn
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it a response written in two parts waits for the client's delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as e:
        sys.exit("cannot listen on %s:%d: %s" % (args.host, args.port, e))
    sock.listen(2048)     # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    from ._uvicorn import coalescing_protocol
    from .limits import ConnectionStats, ServerLimits, limited_protocol
    # httptools (the 'serve' extra) with a response's writes joined into one
    # system call; h11 when httptools is missing; either under the limits
    base = None if args.http == "h11" else coalescing_protocol()
    if base is None:
        from uvicorn.protocols.http.h11_impl import H11Protocol as base
    limits = getattr(args, "limits", None) or ServerLimits()
    stats = getattr(args, "connection_stats", None) or ConnectionStats()
    http = limited_protocol(base, limits, stats)
    config = uvicorn.Config(app, host=args.host, port=port, log_level=args.log_level,
                            timeout_graceful_shutdown=args.graceful_timeout,
                            access_log=False, http=http,
                            timeout_keep_alive=limits.keepalive_timeout,
                            h11_max_incomplete_event_size=limits.max_header_bytes)
    # one line, whatever the log level (scripts and tests wait for it)
    print("aiond.serve: %s listening on http://%s:%d" % (what, args.host, port),
          file=sys.stderr, flush=True)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT (stop accepting, finish the
    # requests in flight, then the app's lifespan drains the batcher), and then
    # re-raises the signal against the handler found before it: ours records it,
    # so a graceful stop exits with status 0
    got = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: got.append(signum))
    # what is loaded by now (aiond, numpy, the model, uvicorn) lives as long
    # as the server: kept out of the cyclic collector's full passes, which
    # under load otherwise stop the event loop ~20 ms every few seconds
    gc.collect()
    gc.freeze()
    uvicorn.Server(config).run(sockets=[sock])
    print("aiond.serve: stopped%s" % ("" if not got else " (%s)" % signal.Signals(got[0]).name),
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
