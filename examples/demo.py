"""aiond's main demo: the same runtime used from a plain script and from an
async application, side by side.

    python examples/demo.py

1. Plain script (MXNet style): ops return at once, the value arrives when
   you ask for it with asnumpy(); independent chains overlap on the cores.
2. Async application: a ticker coroutine keeps ticking every 5 ms while
   another coroutine awaits a long computation with ``await x.read()``.
"""
import asyncio
import time

import numpy as np

import aiond as mx

N = 1 << 21          # 2 Mi float32 = 8 MB per array


def plain_script():
    print("== plain script ==")
    a = mx.nd.ones((2, 3))
    b = a * 2 + 1
    print("b = a * 2 + 1 ->", b.asnumpy().tolist())

    xs = [mx.nd.array(np.random.uniform(size=N).astype(np.float32)) for _ in range(4)]
    mx.nd.waitall()
    t0 = time.perf_counter()
    for _ in range(10):                          # 4 independent chains of sin(x) + 1
        xs = [mx.nd.sin(x) + 1.0 for x in xs]
    t_push = time.perf_counter() - t0
    results = [x.asnumpy() for x in xs]          # blocks this thread until done
    t_aiond = time.perf_counter() - t0

    ys = [r.copy() for r in results]
    t0 = time.perf_counter()
    for _ in range(10):
        ys = [np.sin(y) + 1.0 for y in ys]
    t_numpy = time.perf_counter() - t0
    print("pushed 80 ops in %.1f ms (they return at once)" % (t_push * 1e3))
    print("4 chains x 10 steps: aiond %.3f s, numpy one after another %.3f s (%.2fx)"
          % (t_aiond, t_numpy, t_numpy / t_aiond))
    s = mx.nd.sum(mx.nd.ones((1000, 1000)))
    print("sum of a 1000x1000 ones array:", s.asscalar())


async def async_app():
    print("== async application ==")
    ticks = []
    stop = asyncio.Event()

    async def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.005)

    async def long_computation():
        m = mx.nd.array(np.random.uniform(-1, 1, (512, 512)).astype(np.float32))
        eye = mx.nd.array(np.eye(512, dtype=np.float32))
        x = m
        for _ in range(300):
            x = mx.nd.dot(x, eye)                # returns at once
        t0 = time.perf_counter()
        out = await x.read()                     # the loop keeps running meanwhile
        dt = time.perf_counter() - t0
        np.testing.assert_allclose(out, m.asnumpy(), rtol=1e-4, atol=1e-4)
        return t0, dt

    tick_task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.02)
    t0, dt = await long_computation()
    stop.set()
    await tick_task
    window = [t for t in ticks if t0 <= t <= t0 + dt]
    gaps = np.diff([t0] + window + [t0 + dt]) if window else np.array([dt])
    print("awaited 300 chained 512x512 dots for %.2f s; the ticker ticked %d times "
          "meanwhile (largest gap %.1f ms)" % (dt, len(window), gaps.max() * 1e3))


if __name__ == "__main__":
    plain_script()
    asyncio.run(async_app())
    print("demo OK")
