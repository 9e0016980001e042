"""One rank of a ``python -m aiond.launch`` job: runs the script, and ends the
whole job when the script fails.

Without this, a rank whose script raises still runs MPI's finalize at exit,
which waits for the other ranks, while they wait in their next collective
for it until ``AIOND_DIST_TIMEOUT`` (600 s by default). Here an uncaught
exception (or a non-zero ``sys.exit``) prints its traceback, records which
rank failed for the launcher, and aborts the job (``MPI_Abort`` once MPI is
initialised, else an exit that skips finalize), so mpiexec ends the other
ranks at once. This is what ``python -m mpi4py script.py`` does for plain
mpiexec jobs.

    python -m aiond._launch_rank script.py [args]
"""
from __future__ import annotations

import os
import runpy
import signal
import sys
import time
import traceback

STATUS_DIR_ENV = "AIOND_LAUNCH_STATUS_DIR"


def rank():
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return None


def _record(what):
    d = os.environ.get(STATUS_DIR_ENV)
    r = rank()
    if not d or r is None:
        return
    try:
        with open(os.path.join(d, "rank-%d" % r), "w") as f:
            f.write(what)
    except OSError:     # another host: the launcher then names no rank
        pass


def _abort(code):
    sys.stdout.flush()
    sys.stderr.flush()
    # mpiexec tears the job down at the abort, and may drop what it has not
    # yet read of this rank's pipes: give it a moment to forward the traceback
    time.sleep(0.3)
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None:
        try:
            if mpi.Is_initialized() and not mpi.Is_finalized():
                mpi.COMM_WORLD.Abort(code)
        except Exception:  # noqa: BLE001 - fall through to the kill
            pass
    # before MPI_Init an exit status does not make mpiexec end the job (the
    # others may wait for this rank in their MPI_Init); a rank killed does
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        sys.exit("usage: python -m aiond._launch_rank script.py [args]")
    sys.argv = argv
    # whole lines reach mpiexec, which labels each chunk it reads with its rank
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=False)
        except (AttributeError, ValueError):
            pass
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None or code == 0:
            raise
        if not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        _record("exit status %d" % code)
        _abort(code)
    except BaseException as e:  # noqa: BLE001 - any failure ends the job
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__) \
                or tb is not None and tb.tb_frame.f_code.co_filename.startswith("<frozen"):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        _record("%s: %s" % (type(e).__name__, e))
        _abort(1)


if __name__ == "__main__":
    main()
