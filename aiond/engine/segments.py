"""Bulk segments (MXNet's bulk execution): many ops pushed as one engine op.

A serial chain of medium-sized ops - a hybridized forward, a backward, an
optimizer step - costs the engine one registration, one hand-off to a
worker and one release per op; on a loop of such chains that overhead, not
the kernels, sets the speed. Inside ``with engine.segment():`` the ops the
calling thread pushes are kept in push order instead, and pushed together
as one op (the *segment*) that reads what its members read from outside and
writes what they write. A worker runs the members one after another, with
no lock, queue or thread switch between them.

What stays as without segments:
* every push returns at once, with an ``Opr`` of its own (a *member*);
* the order of this thread's ops, and of other threads' ops on the same
  vars, is the order of the pushes: a segment is pushed before this thread
  pushes anything that is not a member, and before it waits;
* errors: a member that fails poisons only the vars it (and members after
  it that read them) write, and names its op and the user's line that
  opened the segment; the other members run.

A segment is flushed when it reaches its size (the scope's limit), when the
thread waits on anything, pushes an op with its own executor, or leaves the
outermost ``segment()``.
"""
from __future__ import annotations

from .var import Failure

__all__ = ["Builder", "Runner", "TraceError"]


class TraceError(RuntimeError):
    """What was traced cannot become a plan (it waited for a value, or
    pushed work that is not a plain op); the caller runs it op by op."""


class Builder:
    """The open segment of one thread (thread-local, never shared).

    A *tracing* builder (``Engine.trace()``) only collects: its members are
    never run, waits and ops with their own executor raise ``TraceError``."""
    __slots__ = ("members", "limit", "depth", "inline", "origin", "name", "tracing")

    def __init__(self, limit, name, tracing=False):
        self.members = []
        self.limit = limit
        self.depth = 1
        # True: every member is a small registry kernel; CALLER (2): every
        # member is a registry kernel (scheduler.py); False: some member is not
        self.inline = True
        self.origin = None
        self.name = name
        self.tracing = tracing


class Runner:
    """The kernel of a segment op: runs its members in push order.

    ``vfail`` maps each var a member wrote to the failure that poisoned it
    (None: written fine); the engine's ``finish`` applies it per var."""
    __slots__ = ("members", "origin", "engine", "vfail")

    def __init__(self, members, origin, engine):
        self.members = members
        self.origin = origin
        self.engine = engine
        self.vfail = None

    def __call__(self):
        vf = {}
        engine = self.engine
        cpu = engine.cpu
        for m in self.members:
            fail = None
            for v in m.reads:
                f = vf[v] if v in vf else v.exc
                if f is not None:
                    fail = f
                    break
            else:
                if m.rw:
                    for v in m.writes:
                        f = vf[v] if v in vf else v.exc
                        if f is not None:
                            fail = f
                            break
            if fail is None and m.fn is not None:
                try:
                    if m.split is not None:
                        m.result = cpu.run_parallel(m)
                    else:
                        m.result = m.fn()
                except BaseException as e:  # noqa: BLE001 - every failure poisons
                    fail = Failure(m.name, m.origin or self.origin, e)
                    if type(e) is KeyboardInterrupt:
                        # Ctrl-C on the user's thread running this segment:
                        # what it did not run is poisoned, and the interrupt
                        # goes on to the user (Engine._run_inline), who is
                        # told of it there and not again by waitall()
                        fail.reported = True
                        for r in self.members:
                            if not r.done:
                                r.failure = fail
                                for v in r.writes:
                                    vf[v] = fail
                                r.done = True
                        self.vfail = vf
                        raise
                    engine.failures.append(fail)
            m.failure = fail
            for v in m.writes:
                vf[v] = fail
            m.done = True
        self.vfail = vf
