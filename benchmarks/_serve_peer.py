"""A model server for ``bench_serve.py --mode sockets``, run by any interpreter.

    python benchmarks/_serve_peer.py BACKEND [--site DIR] [--max-batch-size N ...]

BACKEND:
  aiond   aiond.serve.http.create_app (the MLP as model "mlp": /predict and /v2),
          with the CLI's defaults unless told otherwise (AIOND_CPU_WORKERS = cores - 1)
  torch   a Starlette route /predict: the torch MLP per request in
          ``loop.run_in_executor(None, ...)`` (torch's default threads)
  mxnet   a Starlette route /predict: ``y = net(nd.array(x))`` on the loop,
          ``await run_in_executor(None, y.asnumpy)`` (MXNet's engine runs it)
  numpy   a Starlette route /predict: the numpy forward in the executor

Every backend runs behind the same server: uvicorn (httptools and uvloop when
importable: the line printed at start says which), one process. ``--site``
adds a site-packages folder at the END of sys.path (the peers' interpreters
take starlette/uvicorn from aiond's venv, their own numpy first).
``GET /_lag/start`` starts a 1 ms ticker on the server's loop,
``GET /_lag/stop`` stops it and returns how late it ran (ms percentiles).
Prints ``PORT <n> <loop> <http>`` on stdout once listening.
"""
import argparse
import asyncio
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("backend", choices=["aiond", "torch", "mxnet", "numpy"])
    p.add_argument("--site", default=None)
    p.add_argument("--max-batch-size", type=int, default=32)
    p.add_argument("--max-wait-ms", type=float, default=2.0)
    p.add_argument("--max-in-flight", type=int, default=None,
                   help="default: the CLI's (2, or 1 with one engine worker)")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--switch-interval", type=float, default=None,
                   help="sys.setswitchinterval (seconds) in the server process")
    p.add_argument("--coalesce", action="store_true",
                   help="uvicorn's httptools protocol with each connection's writes per loop "
                        "iteration joined (aiond/serve/_uvicorn.py), for every backend")
    p.add_argument("--profile", default=None, metavar="FILE",
                   help="cProfile the event-loop thread between /_lag/start and /_lag/stop")
    p.add_argument("--deliver-chunk", type=int, default=None,
                   help="Batcher.deliver_chunk: results handed out per loop iteration")
    a = p.parse_args()
    if a.switch_interval:
        sys.setswitchinterval(a.switch_interval)
    if a.site:
        sys.path.append(a.site)
    if a.backend == "aiond" and "AIOND_CPU_WORKERS" not in os.environ:
        # the CLI's default: one worker less than the cores, at least 1
        os.environ["AIOND_CPU_WORKERS"] = str(a.workers or max(1, (os.cpu_count() or 1) - 1))
    sys.path.insert(0, HERE)
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from bench_serve import SIZES, _plain_app, build_net, make_weights, numpy_forward

    ws = make_weights()
    if a.backend == "aiond":
        import aiond as mx
        from aiond.serve import Batcher
        from aiond.serve.http import create_app
        if a.deliver_chunk:
            Batcher.deliver_chunk = a.deliver_chunk
        net = build_net(mx, ws)
        in_flight = a.max_in_flight or min(2, mx.engine.statistics().workers)
        app = create_app(net, sample_shape=(SIZES[0],), name="mlp",
                         outputs=[("scores", "FP32", [SIZES[-1]])],
                         max_batch_size=a.max_batch_size, max_wait=a.max_wait_ms / 1e3,
                         max_in_flight=in_flight, max_queue=4096)
        routes = list(app.router.routes)
    else:
        if a.backend == "torch":
            import torch
            layers = []
            for k, (W, b) in enumerate(ws):
                lin = torch.nn.Linear(W.shape[1], W.shape[0])
                with torch.no_grad():
                    lin.weight.copy_(torch.from_numpy(W))
                    lin.bias.copy_(torch.from_numpy(b))
                layers.append(lin)
                if k < len(ws) - 1:
                    layers.append(torch.nn.ReLU())
            tnet = torch.nn.Sequential(*layers).eval()

            def run(x):
                with torch.inference_mode():
                    return tnet(torch.from_numpy(x)).numpy()

            async def forward(x):
                return await asyncio.get_running_loop().run_in_executor(None, run, x)
        elif a.backend == "mxnet":
            import mxnet as mx
            net = build_net(mx, ws)

            async def forward(x):
                y = net(mx.nd.array(x))
                return await asyncio.get_running_loop().run_in_executor(None, y.asnumpy)
        else:
            fwd = numpy_forward(ws)

            async def forward(x):
                return await asyncio.get_running_loop().run_in_executor(None, fwd, x)

        routes = list(_plain_app(forward).router.routes)
        app = None

    lag = {"task": None, "lags": []}

    async def ticker(lags):
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append(time.perf_counter() - t0 - 0.001)

    prof = {}

    async def lag_start(request):
        if a.profile:
            import cProfile
            prof["p"] = cProfile.Profile()
            prof["p"].enable()
        lag["lags"] = []
        lag["task"] = asyncio.ensure_future(ticker(lag["lags"]))
        return JSONResponse({})

    async def lag_stop(request):
        if lag["task"] is not None:
            lag["task"].cancel()
        if prof:
            prof.pop("p").dump_stats(a.profile)
        s = sorted(lag["lags"])

        def q(p):
            return 1e3 * s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))] if s else None
        out = {"lag_p50_ms": q(50), "lag_p99_ms": q(99), "lag_max_ms": q(100), "ticks": len(s)}
        if a.backend == "aiond":
            st = app.state.batcher.statistics()
            out["mean_batch_size"] = round(st.mean_batch_size, 1)
        return JSONResponse(out)

    routes += [Route("/_lag/start", lag_start), Route("/_lag/stop", lag_stop)]
    if app is None:
        app = Starlette(routes=routes)
    else:
        app.router.routes[:] = routes
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    http = "auto"
    if a.coalesce:
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "_aiond_uvicorn", os.path.join(HERE, "..", "aiond", "serve", "_uvicorn.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        http = mod.coalescing_protocol() or "auto"
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            http=http)
    config.load()
    loop_name = "uvloop" if config.loop in ("auto", "uvloop") and _has("uvloop") else "asyncio"
    http_name = getattr(config.http_protocol_class, "__qualname__", "?") if a.coalesce else \
        config.http_protocol_class.__module__.rsplit(".", 1)[-1]
    print("PORT %d %s %s" % (sock.getsockname()[1], loop_name, http_name), flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def _has(mod):
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


if __name__ == "__main__":
    main()
