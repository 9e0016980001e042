"""Install hints name commands that work from a clone: the extras of
pyproject.toml (quoted for zsh) and the packages each stands for."""
import os
import re

from aiond._extras import EXTRAS, install_hint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pyproject_extras():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    block = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    out = {}
    for m in re.finditer(r"^(\w+) = \[(.*?)\]\s*$", block, re.M | re.S):
        out[m.group(1)] = [re.split(r"[<>=\[;]", p.strip().strip('"'))[0]
                           for p in m.group(2).split('",') if p.strip()]
    return out


def test_the_hints_name_the_extras_of_pyproject():
    extras = _pyproject_extras()
    for name, packages in EXTRAS.items():
        assert [p.lower() for p in packages] == [p.lower() for p in extras[name]], name
    assert install_hint("dist") == ("pip install -e '.[dist]' in aiond's source folder "
                                    "(or: pip install mpi4py mpich)")


def test_no_hint_names_a_package_the_index_does_not_have():
    bad = re.compile(r"pip install '?aiond\[")
    found = []
    # aiond/engine is changed on another branch; its GPU hint is moved there
    for folder in ("aiond", "examples", "benchmarks"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            if os.path.relpath(dirpath, ROOT).startswith(os.path.join("aiond", "engine")):
                continue
            for f in files:
                if f.endswith((".py", ".md")):
                    p = os.path.join(dirpath, f)
                    if bad.search(open(p, encoding="utf-8").read()):
                        found.append(os.path.relpath(p, ROOT))
    if bad.search(open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()):
        found.append("README.md")
    assert found == []
