"""Opt-in ``mxnet`` import name for aiond, so code and libraries that say
``import mxnet`` (GluonCV, GluonNLP, old training scripts) run unchanged.

    python -m aiond.mxnet_alias install      # into this interpreter's site-packages
    python -m aiond.mxnet_alias status
    python -m aiond.mxnet_alias uninstall
    python -m aiond.mxnet_alias install --target DIR   # any directory on sys.path

``install`` writes a small ``mxnet`` package (and an
``aiond_mxnet_alias-<version>.dist-info`` recording its files, so ``pip list``
shows it and ``pip uninstall aiond-mxnet-alias`` removes it too). Under that
name ``mxnet`` is a module of its own whose attributes are aiond's
(``mxnet.nd is aiond.nd``) and ``mxnet.X`` *is* the module ``aiond.X``; its
``__version__`` is ``'1.9.1'``, the MXNet API level aiond implements, so
libraries' version checks pass, while ``aiond.__version__`` stays aiond's own.

It refuses to install where a real MXNet is installed (an ``mxnet*``
distribution, or an ``mxnet`` package or module it did not write), and
``uninstall`` removes only what ``install`` wrote.

This module imports nothing from aiond beyond its version string: it is a
tool that writes files, not part of the runtime.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import os
import re
import shutil
import sys
import sysconfig

__all__ = ["install", "uninstall", "status", "RealMXNetInstalled", "MXNET_API_VERSION"]

MXNET_API_VERSION = "1.9.1"
DIST_NAME = "aiond_mxnet_alias"
_MARKER = "_AIOND_MXNET_ALIAS = True"

_PACKAGE_SOURCE = '''"""``mxnet`` -> aiond: written by ``python -m aiond.mxnet_alias install``;
remove with ``python -m aiond.mxnet_alias uninstall``.

``mxnet`` is a module of its own whose attributes are aiond's, and
``mxnet.X`` is the module ``aiond.X``. ``mxnet.__version__`` is the MXNet API
level aiond implements; ``aiond.__version__`` is aiond's own version."""
import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import sys as _sys

import aiond as _aiond

_AIOND_MXNET_ALIAS = True
__version__ = "{api}"
__path__ = []          # a package, but every submodule comes from aiond (below)


class _AiondAlias(_abc.MetaPathFinder, _abc.Loader):
    """Finds ``mxnet.X`` as the module ``aiond.X`` (the same module object)."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("mxnet."):
            return None
        real = "aiond" + name[len("mxnet"):]
        try:
            found = real in _sys.modules or _util.find_spec(real) is not None
        except ImportError:
            found = False
        if not found:
            return None
        return _util.spec_from_loader(name, self)

    def create_module(self, spec):
        mod = _importlib.import_module("aiond" + spec.name[len("mxnet"):])
        self._specs = getattr(self, "_specs", {{}})
        self._specs[spec.name] = getattr(mod, "__spec__", None)
        return mod

    def exec_module(self, module):
        # importlib set module.__spec__ to the alias's spec: give aiond.X its own back
        alias = getattr(module, "__spec__", None)
        spec = getattr(self, "_specs", {{}}).pop(getattr(alias, "name", None), None)
        if spec is not None:
            module.__spec__ = spec


def __getattr__(name):
    return getattr(_aiond, name)


def __dir__():
    return sorted(set(globals()) | set(dir(_aiond)))


if not any(isinstance(f, _AiondAlias) or type(f).__name__ == "_AiondAlias"
           for f in _sys.meta_path):
    _sys.meta_path.insert(0, _AiondAlias())
'''


class RealMXNetInstalled(RuntimeError):
    """A real MXNet is installed where the alias would go."""


def _default_target():
    return sysconfig.get_paths()["purelib"]


def _norm(name):
    return re.sub(r"[-_.]+", "_", name).lower()


def _real_mxnet_dists(target):
    """Names of installed distributions in ``target`` that provide MXNet
    (mxnet, mxnet-cu112, mxnet-mkl, mxnet-native, ...)."""
    found = []
    try:
        entries = os.listdir(target)
    except FileNotFoundError:
        return found
    for e in entries:
        if not (e.endswith(".dist-info") or e.endswith(".egg-info")):
            continue
        name = _norm(e.rsplit(".", 1)[0].split("-")[0])
        if name == "mxnet" or name.startswith("mxnet_"):
            found.append(e)
    return found


def _is_alias_package(path):
    init = os.path.join(path, "__init__.py")
    try:
        with open(init, encoding="utf-8") as f:
            return _MARKER in f.read()
    except OSError:
        return False


def _check_no_real_mxnet(target):
    dists = _real_mxnet_dists(target)
    if dists:
        raise RealMXNetInstalled(
            "a real MXNet is installed in %s (%s); refusing to shadow it with the aiond "
            "alias. Use a separate environment for aiond, or uninstall MXNet first."
            % (target, ", ".join(sorted(dists))))
    pkg = os.path.join(target, "mxnet")
    if os.path.isdir(pkg) and not _is_alias_package(pkg):
        raise RealMXNetInstalled("%s is an mxnet package that aiond did not write (a real "
                                 "MXNet?); refusing to replace it" % pkg)
    for mod in ("mxnet.py",):
        if os.path.exists(os.path.join(target, mod)):
            raise RealMXNetInstalled("%s exists; refusing to shadow it"
                                     % os.path.join(target, mod))


def _dist_info(target):
    from . import __version__
    return os.path.join(target, "%s-%s.dist-info" % (DIST_NAME, __version__))


def _record_line(target, path):
    with open(path, "rb") as f:
        data = f.read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (os.path.relpath(path, target).replace(os.sep, "/"), digest,
                                len(data))


def install(target=None) -> str:
    """Install the ``mxnet`` alias into ``target`` (default: this
    interpreter's site-packages). Returns the package path. Raises
    :class:`RealMXNetInstalled` if a real MXNet is there."""
    from . import __version__
    target = os.path.abspath(target or _default_target())
    _check_no_real_mxnet(target)
    os.makedirs(target, exist_ok=True)
    _remove(target)                         # an older alias (any aiond version)
    pkg = os.path.join(target, "mxnet")
    os.makedirs(pkg)
    init = os.path.join(pkg, "__init__.py")
    with open(init, "w", encoding="utf-8") as f:
        f.write(_PACKAGE_SOURCE.format(api=MXNET_API_VERSION))
    info = _dist_info(target)
    os.makedirs(info)
    files = {
        "METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: the `mxnet` "
                    "import name for aiond (MXNet API %s)\n"
                    % (DIST_NAME.replace("_", "-"), __version__, MXNET_API_VERSION),
        "INSTALLER": "aiond.mxnet_alias\n",
        "top_level.txt": "mxnet\n",
    }
    for name, text in files.items():
        with open(os.path.join(info, name), "w", encoding="utf-8") as f:
            f.write(text)
    lines = [_record_line(target, init)]
    lines += [_record_line(target, os.path.join(info, n)) for n in sorted(files)]
    lines.append("%s/RECORD,," % os.path.basename(info))
    with open(os.path.join(info, "RECORD"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return pkg


def _alias_infos(target):
    try:
        entries = os.listdir(target)
    except FileNotFoundError:
        return []
    return [os.path.join(target, e) for e in entries
            if e.startswith(DIST_NAME + "-") and e.endswith(".dist-info")]


def _remove(target):
    removed = False
    pkg = os.path.join(target, "mxnet")
    if os.path.isdir(pkg) and _is_alias_package(pkg):
        shutil.rmtree(pkg)
        removed = True
    for info in _alias_infos(target):
        shutil.rmtree(info)
        removed = True
    return removed


def uninstall(target=None) -> bool:
    """Remove the alias from ``target``; True if something was removed.
    Never touches an ``mxnet`` package that ``install`` did not write."""
    return _remove(os.path.abspath(target or _default_target()))


def status(target=None) -> str:
    target = os.path.abspath(target or _default_target())
    pkg = os.path.join(target, "mxnet")
    if _real_mxnet_dists(target) or (os.path.isdir(pkg) and not _is_alias_package(pkg)):
        return "real MXNet installed in %s" % target
    if _is_alias_package(pkg):
        return "aiond alias installed in %s" % target
    return "no mxnet in %s" % target


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m aiond.mxnet_alias",
                                 description="Install or remove the `mxnet` import name "
                                             "for aiond.")
    ap.add_argument("command", choices=("install", "uninstall", "status"))
    ap.add_argument("--target", default=None,
                    help="directory to (un)install into (default: site-packages of %s)"
                         % sys.executable)
    args = ap.parse_args(argv)
    if args.command == "install":
        try:
            pkg = install(args.target)
        except RealMXNetInstalled as e:
            print("aiond.mxnet_alias: %s" % e, file=sys.stderr)
            return 1
        print("installed %s: `import mxnet` now gives aiond (MXNet API %s)"
              % (pkg, MXNET_API_VERSION))
    elif args.command == "uninstall":
        print("removed" if uninstall(args.target) else "nothing to remove")
    else:
        print(status(args.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
