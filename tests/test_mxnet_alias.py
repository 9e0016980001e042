"""`python -m aiond.mxnet_alias install|uninstall|status`: the opt-in
``mxnet`` import name for aiond, tested in temporary site directories and a
fresh venv (never the running environment)."""
import os
import subprocess
import sys
import venv

import pytest

import aiond
from aiond import mxnet_alias

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(aiond.__file__)))
_NUMPY_SITE = os.path.dirname(os.path.dirname(os.path.abspath(__import__("numpy").__file__)))


def _run(code, site, python=sys.executable, env_extra=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([site, _ROOT, _NUMPY_SITE])
    env.update(env_extra)
    return subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=site)


CHECK = r"""
import sys
import mxnet, aiond
import mxnet.gluon.nn as mnn
from mxnet import nd, gluon
from mxnet.gluon.nn import Dense
assert mxnet.__version__ == "1.9.1", mxnet.__version__
assert aiond.__version__ != "1.9.1"
assert mxnet.nd is aiond.nd and nd is aiond.nd
assert mnn is aiond.gluon.nn and sys.modules["mxnet.gluon.nn"] is aiond.gluon.nn
assert aiond.gluon.nn.__spec__.name == "aiond.gluon.nn"
assert Dense is aiond.gluon.nn.Dense
assert mxnet.nd.ones((2, 3)).sum().asscalar() == 6.0
try:
    import mxnet.no_such_module
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("mxnet.no_such_module imported")
print("OK", mxnet.__file__)
"""


def test_install_import_uninstall(tmp_path):
    site = str(tmp_path)
    pkg = mxnet_alias.install(site)
    assert os.path.isfile(os.path.join(pkg, "__init__.py"))
    assert mxnet_alias.status(site).startswith("aiond alias installed")
    infos = [e for e in os.listdir(site) if e.endswith(".dist-info")]
    assert len(infos) == 1 and infos[0].startswith("aiond_mxnet_alias-")
    record = open(os.path.join(site, infos[0], "RECORD")).read()
    assert "mxnet/__init__.py,sha256=" in record
    r = _run(CHECK, site)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK " + os.path.join(site, "mxnet"))
    # installing again is fine (replaces the alias)
    mxnet_alias.install(site)
    assert mxnet_alias.uninstall(site) is True
    assert os.listdir(site) == []
    assert mxnet_alias.uninstall(site) is False
    assert mxnet_alias.status(site).startswith("no mxnet")


@pytest.mark.parametrize("dist", ["mxnet-1.9.1.dist-info", "mxnet_cu112-1.9.1.dist-info",
                                  "mxnet_mkl-1.6.0.dist-info"])
def test_refuses_real_mxnet_dist(tmp_path, dist):
    os.makedirs(tmp_path / dist)
    with pytest.raises(mxnet_alias.RealMXNetInstalled, match="real MXNet"):
        mxnet_alias.install(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == [dist]
    assert mxnet_alias.status(str(tmp_path)).startswith("real MXNet")


def test_refuses_foreign_package_and_uninstall_leaves_it(tmp_path):
    pkg = tmp_path / "mxnet"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("__version__ = '1.9.1'\n")
    with pytest.raises(mxnet_alias.RealMXNetInstalled):
        mxnet_alias.install(str(tmp_path))
    assert mxnet_alias.uninstall(str(tmp_path)) is False
    assert (pkg / "__init__.py").read_text() == "__version__ = '1.9.1'\n"


def test_cli_refusal_exit_code(tmp_path):
    os.makedirs(tmp_path / "mxnet-1.9.1.dist-info")
    r = subprocess.run([sys.executable, "-m", "aiond.mxnet_alias", "install", "--target",
                        str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "real MXNet" in r.stderr


@pytest.mark.slow
def test_fresh_venv_default_target(tmp_path):
    """In a fresh venv the alias goes to that venv's site-packages."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    py = str(env_dir / "bin" / "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    # aiond and numpy come after the venv's own site-packages (a .pth file),
    # so the venv's mxnet wins over any other on the path
    with open(os.path.join(site, "aiond_test_paths.pth"), "w") as f:
        f.write(_ROOT + "\n" + _NUMPY_SITE + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([py, "-m", "aiond.mxnet_alias", "install"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.path.isdir(os.path.join(site, "mxnet"))
    r = subprocess.run([py, "-c", CHECK], env=env, capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert os.path.join(site, "mxnet") in r.stdout
    r = subprocess.run([py, "-m", "aiond.mxnet_alias", "uninstall"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "removed" in r.stdout
    assert not os.path.exists(os.path.join(site, "mxnet"))
