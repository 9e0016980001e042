"""`with mx.cpu():` entered from many threads (and tasks) at once: each keeps
its own stack (the context objects are shared singletons)."""
import asyncio
import threading

import aiond as mx


def test_threads_entering_one_context_at_once():
    errors = []
    start = threading.Event()

    def run():
        try:
            start.wait(10)
            for _ in range(500):
                with mx.cpu():
                    with mx.cpu(1):
                        assert mx.current_context() == mx.cpu(1)
                    assert mx.current_context() == mx.cpu()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts:
        t.start()
    start.set()
    for t in ts:
        t.join(30)
    assert not errors
    assert mx.current_context() == mx.cpu()


def test_tasks_interleaving_inside_one_context():
    async def task(dev, ev_in, ev_out):
        with mx.cpu(dev):
            ev_in.set()
            await ev_out.wait()
            assert mx.current_context() == mx.cpu(dev)
        return mx.current_context()

    async def main():
        a_in, b_in, go = asyncio.Event(), asyncio.Event(), asyncio.Event()
        ta = asyncio.ensure_future(task(1, a_in, go))
        tb = asyncio.ensure_future(task(2, b_in, go))
        await a_in.wait()
        await b_in.wait()
        go.set()
        return await asyncio.gather(ta, tb)
    assert asyncio.run(main()) == [mx.cpu(), mx.cpu()]
