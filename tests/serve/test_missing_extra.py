"""Without the 'serve' extra, the command line and the example say what to
install in one line instead of a ModuleNotFoundError traceback."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HINT = "pip install -e '.[serve]'"


def _run(code, *args):
    env = dict(os.environ, PYTHONPATH=ROOT, AIOND_CPU_WORKERS="1")
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _without(mod, then):
    return "import sys; sys.modules[%r] = None\n%s" % (mod, then)


def test_the_cli_names_the_missing_extra_in_one_line():
    p = _run(_without("uvicorn", "import sys, runpy; sys.argv = ['aiond.serve'] + "
                                 "sys.argv[1:]; runpy.run_module('aiond.serve', "
                                 "run_name='__main__')"),
             "--symbol", "m-symbol.json", "--input-shape", "1,4")
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == [
        "aiond.serve needs the 'serve' extra (uvicorn not installed): %s in aiond's source "
        "folder (or: pip install starlette uvicorn httptools orjson)" % HINT]


def test_create_app_without_starlette_raises_with_the_hint():
    p = _run(_without("starlette", "from aiond.serve import create_app\n"
                                   "try:\n    create_app(lambda x: x)\n"
                                   "except ModuleNotFoundError as e:\n    print(e.name, e)"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("starlette aiond.serve.http needs Starlette")
    assert HINT in p.stdout


def test_the_example_checks_before_it_trains():
    p = _run(_without("uvicorn", "import sys, runpy; sys.argv = ['serve_mlp.py', '--prefix', "
                                 "'/nonexistent/x']; runpy.run_path('examples/serve_mlp.py', "
                                 "run_name='__main__')"))
    assert p.returncode == 1
    assert "epoch" not in p.stderr
    assert p.stderr.strip().startswith("aiond.serve needs the 'serve' extra (uvicorn")
