"""The seam between scheduling and running: an ``Executor`` runs ready ops.

The scheduler decides *when* an op may run (all its vars granted); an
executor decides *where and how*. CPU ops go to ``CPUExecutor`` (a worker
pool), ops whose kernel is a coroutine to ``AsyncExecutor`` (the engine
loop). A GPU executor plugs in the same way without touching the scheduler:

* ``submit(opr)`` is called once per ready op, from any thread, and must
  not block (queue the op, enqueue a kernel on a CuPy stream, ...);
* when the op's work is complete - for a GPU, from a
  ``Stream.launch_host_func`` callback hopping to the engine loop, never a
  blocking synchronize - the executor calls
  ``engine.dispatch_all(engine.finish(opr, failure))``, where ``failure`` is
  ``None`` or a ``Failure`` naming the op (``engine.failures.append`` it);
* before running, it checks ``engine._poisoned(opr)`` and finishes a
  poisoned op with that failure instead of running it.

An op is routed to an executor by passing ``executor=`` to ``Engine.push``.
"""
from __future__ import annotations

__all__ = ["Executor"]


class Executor:
    """Base class of executors (see the module docstring for the contract)."""

    def submit(self, opr) -> None:
        raise NotImplementedError("The 'submit' method must be implemented.")
