"""python -m aiond.launch: a rank whose script fails ends the job at once
(not after AIOND_DIST_TIMEOUT), the launcher names the rank, and each
output line starts with its rank."""
import os
import subprocess
import sys
import time

import pytest

from .test_dist import needs_mpi

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = [needs_mpi, pytest.mark.slow, pytest.mark.timeout(300)]


def _launch(tmp_path, body):
    script = tmp_path / "train.py"
    script.write_text(body)
    env = dict(os.environ, PYTHONPATH=ROOT)
    t0 = time.monotonic()
    # the others would wait 200 s for the failed rank if the job were not ended
    p = subprocess.run([sys.executable, "-m", "aiond.launch", "-n", "2", "--timeout", "200",
                        str(script)], capture_output=True, text=True, timeout=250, env=env)
    return p, time.monotonic() - t0


def test_a_rank_that_raises_ends_the_job(tmp_path):
    p, took = _launch(tmp_path, (
        "import aiond as mx\n"
        "kv = mx.kv.create('dist_sync')\n"
        "kv.init(0, mx.nd.zeros((2,)))\n"
        "print('rank %d started' % kv.rank)\n"
        "if kv.rank == 1:\n"
        "    raise RuntimeError('rank one broke')\n"
        "v = mx.nd.ones((2,))\n"
        "kv.pushpull(0, v)\n"
        "print(v.asnumpy())\n"))
    assert p.returncode != 0
    assert took < 100, "the job waited for the failed rank (%.0f s)" % took
    assert "aiond.launch: rank 1 failed (RuntimeError: rank one broke); the job was ended" \
        in p.stderr
    out = p.stdout.splitlines()
    assert "[0] rank 0 started" in out and "[1] rank 1 started" in out, p.stdout
    # the traceback starts at the user's script, each of its lines labelled
    assert "[1] Traceback (most recent call last):" in p.stdout + p.stderr
    assert "_launch_rank" not in p.stdout + p.stderr.replace("aiond.launch:", "")


def test_a_rank_that_exits_before_mpi_ends_the_job(tmp_path):
    p, took = _launch(tmp_path, (
        "import os, sys\n"
        "if os.environ.get('PMI_RANK') == '1':\n"
        "    sys.exit(3)\n"
        "import aiond as mx\n"
        "kv = mx.kv.create('dist_sync')\n"
        "kv.init(0, mx.nd.zeros((2,)))\n"
        "kv.pushpull(0, mx.nd.ones((2,)))\n"
        "mx.nd.waitall()\n"))
    assert p.returncode != 0
    assert took < 100, "the job waited for the failed rank (%.0f s)" % took
    assert "aiond.launch: rank 1 failed (exit status 3); the job was ended" in p.stderr


def test_a_job_that_succeeds_exits_zero_with_labelled_lines(tmp_path):
    p, _ = _launch(tmp_path, "import sys\nprint('hello', 'from', 'a', 'rank')\n")
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.splitlines()) == ["[0] hello from a rank", "[1] hello from a rank"]
    assert "aiond.launch" not in p.stderr
