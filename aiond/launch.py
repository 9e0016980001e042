"""Launch a data-parallel job: ``python -m aiond.launch -n 4 [-H hostfile] train.py [args]``.

The options are MXNet's ``tools/launch.py`` where they make sense for an
MPI job (aiond's distributed stores have no servers or scheduler: every
process is a worker):

* ``-n/--num-workers N``  number of worker processes;
* ``-H/--hostfile FILE``  the machines (one per line, ``host`` or
  ``host:slots``; MPICH's Hydra starts the remote processes over ssh);
* ``--launcher local|ssh|mpi``  all three run ``mpiexec`` (``local``
  refuses a hostfile); MXNet's ``sge``/``yarn`` are not supported;
* ``--env VAR`` passes the launcher's ``VAR`` on to the workers (repeatable),
  ``--env-worker VAR:value`` sets it for them;
* ``-s/--num-servers``, ``--env-server`` are accepted and ignored (warning);
* ``--mpiexec PATH`` (default: the one next to this Python, which the
  ``mpich`` wheel of ``pip install -e '.[dist]'`` installs, else ``PATH``);
* ``--timeout S`` sets ``AIOND_DIST_TIMEOUT`` for the workers;
* ``--dry-run`` prints the command instead of running it.

The command is run as given; a first word ending in ``.py`` is run with
this Python, and a rank whose script raises (or exits non-zero) ends the
whole job at once: the other ranks are stopped instead of waiting for it
until ``AIOND_DIST_TIMEOUT``, and the launcher names the failed rank. Each
line the ranks print starts with its rank (``[1] ...``, as ``mpiexec -l``).
The exit status is mpiexec's (non-zero when any worker failed).
"""
from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from ._extras import install_hint
from ._launch_rank import STATUS_DIR_ENV

__all__ = ["build_command", "main"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m aiond.launch",
                                description="Launch a distributed aiond job with mpiexec")
    p.add_argument("-n", "--num-workers", required=True, type=int,
                   help="number of worker processes to launch")
    p.add_argument("-s", "--num-servers", type=int,
                   help="ignored: aiond's MPI stores need no servers")
    p.add_argument("-H", "--hostfile", type=str,
                   help="the hosts to run the workers on (one per line, host or host:slots)")
    p.add_argument("--launcher", type=str, default="mpi",
                   choices=["local", "ssh", "mpi", "sge", "yarn"],
                   help="local, ssh and mpi all use mpiexec")
    p.add_argument("--env-server", action="append", default=[],
                   help="ignored: there are no server processes")
    p.add_argument("--env-worker", action="append", default=[],
                   help="VAR:value to set in the workers' environment")
    p.add_argument("--env", action="append", default=[],
                   help="VAR (or VAR:value) passed from this environment to the workers")
    p.add_argument("--mpiexec", type=str, default=None, help="the mpiexec to use")
    p.add_argument("--timeout", type=float, default=None,
                   help="AIOND_DIST_TIMEOUT for the workers (seconds)")
    p.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    p.add_argument("command", nargs="+", help="the program to run (train.py args...)")
    return p


def _find_mpiexec(given):
    if given:
        return given
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("aiond.launch: no mpiexec found; %s (the mpich wheel "
                         "provides one) or pass --mpiexec" % install_hint("dist"))
    return found


def _pair(item, what):
    if ":" not in item:
        raise SystemExit("aiond.launch: %s takes VAR:value, got %r" % (what, item))
    k, v = item.split(":", 1)
    return k, v


def build_command(args, unknown=()):
    """The mpiexec command line and the environment for ``args``."""
    if args.num_workers < 1:
        raise SystemExit("aiond.launch: -n must be >= 1")
    if args.launcher in ("sge", "yarn"):
        raise SystemExit("aiond.launch: launcher %r is not supported; use mpi, ssh or local"
                         % args.launcher)
    if args.launcher == "local" and args.hostfile:
        raise SystemExit("aiond.launch: --launcher local runs on this machine; drop -H")
    if args.num_servers or args.env_server:
        warnings.warn("aiond.launch: -s/--env-server are ignored: aiond's MPI kvstores "
                      "have no server processes", stacklevel=2)
    cmd = [_find_mpiexec(args.mpiexec), "-n", str(args.num_workers)]
    if args.hostfile:
        if not os.path.exists(args.hostfile):
            raise SystemExit("aiond.launch: hostfile %s does not exist" % args.hostfile)
        cmd += ["-f", args.hostfile]
    env = dict(os.environ)
    genv = {}
    for item in args.env:
        if ":" in item:
            k, v = _pair(item, "--env")
        else:
            k, v = item, os.environ.get(item)
            if v is None:
                raise SystemExit("aiond.launch: --env %s is not set here" % item)
        genv[k] = v
    for item in args.env_worker:
        k, v = _pair(item, "--env-worker")
        genv[k] = v
    if args.timeout is not None:
        genv["AIOND_DIST_TIMEOUT"] = repr(float(args.timeout))
    for k, v in genv.items():
        # -genv reaches remote hosts too; the local environment gets it as well
        cmd += ["-genv", k, v]
        env[k] = v
    prog = list(args.command) + list(unknown)
    if prog[0].endswith(".py"):
        # a rank whose script fails ends the job (see aiond/_launch_rank.py)
        prog = [sys.executable, "-m", "aiond._launch_rank"] + prog
    return cmd + _rank_labels(cmd[0]) + prog, env


def _rank_labels(mpiexec):
    """mpiexec's option that starts each output line with its rank (as ``mpiexec -l``)."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    if "HYDRA" in out:          # MPICH, Intel MPI
        return ["-l"]
    if "Open MPI" in out or "OpenRTE" in out:
        return ["--tag-output"]
    return []


def main(argv=None):
    args, unknown = _parser().parse_known_args(argv)
    cmd, env = build_command(args, unknown)
    if args.dry_run:
        print(" ".join(shlex.quote(c) for c in cmd))
        return 0
    with tempfile.TemporaryDirectory(prefix="aiond-launch-") as status:
        env[STATUS_DIR_ENV] = status
        proc = subprocess.Popen(cmd, env=env)

        def forward(signum, _frame):
            proc.send_signal(signum)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, forward)
        rc = proc.wait()
        if rc != 0:
            failed = sorted((int(f.split("-")[1]), open(os.path.join(status, f)).read())
                            for f in os.listdir(status) if f.startswith("rank-"))
            if failed:
                print("aiond.launch: %s; the job was ended" % "; ".join(
                    "rank %d failed (%s)" % rf for rf in failed), file=sys.stderr, flush=True)
            else:
                print("aiond.launch: the job failed (mpiexec exit status %d)" % rc,
                      file=sys.stderr, flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
