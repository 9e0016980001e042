"""README.md's Python code blocks run as written, so they stay true.

Every ```python block is run in a fresh interpreter from the repository
root (they need no network and no server; a block that would must be
written as a shell block instead). The sample model repository README
serves is built and loaded too."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def python_blocks():
    text = open(README, encoding="utf-8").read()
    return [(text[:m.start()].count("\n") + 2, m.group(1))
            for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M)]


def test_readme_has_the_examples_a_new_user_needs():
    code = "\n".join(b for _, b in python_blocks())
    for what in ("await c.read()", "mx.model.load_checkpoint", "SymbolBlock.imports",
                 "mx.profiler.dump()"):
        assert what in code, what


@pytest.mark.parametrize("line,block", python_blocks(), ids=lambda v: str(v)[:20])
def test_python_block_runs(line, block, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", block], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=240)
    assert p.returncode == 0, "README.md line %d:\n%s" % (line, p.stderr[-3000:])
    assert "Warning" not in p.stderr, p.stderr[-3000:]


def test_shell_commands_name_files_that_exist():
    text = open(README, encoding="utf-8").read()
    for path in set(re.findall(r"\b((?:examples|benchmarks|aiond)/[\w./-]+\.py)\b", text)):
        assert os.path.exists(os.path.join(ROOT, path)), path


def test_the_model_repository_walkthrough(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "examples/make_model_repository.py", str(tmp_path)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    from aiond.serve.repository import load_served
    for name in ("mlp", "seqpool"):
        assert load_served(str(tmp_path / name))
