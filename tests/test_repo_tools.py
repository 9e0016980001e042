"""Every runner README.md names is in the repository and starts: a figure
in README must be reproducible from a clone alone."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
# ("MXNet tools/launch.py" is MXNet's own script, named for its options)
SCRIPTS = sorted(set(re.findall(r"(?<!MXNet )\b((?:tools|benchmarks)/[\w./-]+\.(?:py|sh))\b",
                                README)))


def test_readme_names_no_file_outside_the_repository():
    assert "../shared" not in README
    assert "tools/mxnet_unittests/run_mxnet_unittests.sh" in SCRIPTS
    assert "benchmarks/anchors/serve_lag.py" in SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS)
def test_runner_exists_and_prints_its_usage(path):
    full = os.path.join(ROOT, path)
    assert os.path.isfile(full), path
    cmd = ["bash", full] if path.endswith(".sh") else [sys.executable, full]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run(cmd + ["--help"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, (path, r.stderr[-2000:])
    assert "usage" in (r.stdout + r.stderr).lower() or path.endswith(".sh") \
        or "python" in r.stdout.lower(), r.stdout[:500]


def test_mxnet_runner_refuses_missing_arguments_with_its_usage():
    r = subprocess.run(["bash", os.path.join(ROOT, "tools/mxnet_unittests/run_mxnet_unittests.sh")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "GITDIR" in r.stdout


def test_score_counts_a_run_against_the_baseline(tmp_path):
    # a junit file in which one baseline test passed and one failed
    base = open(os.path.join(ROOT, "tools/mxnet_unittests/mxnet_passing.txt")).read().split()
    ids = [t for t in base if t.startswith("test_attr::")][:2]
    cases = "".join('<testcase classname="%s" name="%s"%s' % (
        t.split("::")[0], t.split("::")[1], "/>" if i == 0 else "><failure message='x'/></testcase>")
        for i, t in enumerate(ids))
    (tmp_path / "test_attr.xml").write_text("<testsuite>%s</testsuite>" % cases)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools/mxnet_unittests/score.py"),
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    n = sum(1 for t in base if t.startswith("test_attr::"))
    assert re.search(r"test_attr\s+1/%d\b" % n, r.stdout), r.stdout
