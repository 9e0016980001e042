"""Run the MXNet code of *Dive into Deep Learning* against aiond.

    python tools/d2l/run_d2l.py CLONE [--chapters preliminaries,linear-regression,...]
        [--out /tmp/d2l-run] [--epochs 1] [--samples 256] [--timeout 900]

CLONE is a clone of github.com/d2l-ai/d2l-en (a work tree, or a bare git
directory: files are then read from its HEAD). For each chosen chapter
(``chapter_<name>``) and each of its sections, the code cells of the MXNet
tab (``%%tab mxnet``, ``%%tab all``, cells with no tab; or an older
``#@tab mxnet`` first line) are written into ``OUT/<chapter>/<section>.py``
and run in a fresh interpreter with ``import mxnet`` resolving to aiond and
the clone's ``d2l`` package (``d2l/mxnet.py``) importable. Each cell runs
even when an earlier one failed (as a reader pressing on would); a cell
passes when it raises nothing. Nothing of D2L is copied into this
repository: the scripts are generated under OUT.

No network is needed: downloads are replaced by synthetic data of the same
shapes and formats (Fashion-MNIST images and labels, the Time Machine text,
the English-French pairs, the airfoil table, the Kaggle house-price CSVs),
``d2l.Trainer`` runs at most ``--epochs`` epochs, each synthetic image
dataset has ``--samples`` examples and images are resized to at most
``--max-image`` pixels a side. Plots go to matplotlib's Agg backend.

Prints, per chapter, cells run / cells passing, and writes OUT/report.json
with every failing cell's error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

CHAPTERS = ("preliminaries", "linear-regression", "linear-classification",
            "multilayer-perceptrons", "builders-guide", "convolutional-neural-networks",
            "convolutional-modern", "recurrent-neural-networks",
            "attention-mechanisms-and-transformers", "optimization")
# the brief's names for chapters the clone spells otherwise
ALIASES = {"linear-networks": "linear-regression"}

_CELL = re.compile(r"^```\{\.python \.input[^}]*\}[^\n]*\n(.*?)^```", re.S | re.M)


class Clone:
    """Files of a d2l-en clone: a work tree, or a git directory's HEAD."""

    def __init__(self, path):
        self.path = path
        self.git = not os.path.isdir(os.path.join(path, "d2l"))

    def read(self, rel):
        if not self.git:
            with open(os.path.join(self.path, rel), encoding="utf-8") as f:
                return f.read()
        return subprocess.run(["git", "--git-dir", self.path, "show", "HEAD:" + rel],
                              check=True, capture_output=True, text=True).stdout

    def listdir(self, rel):
        if not self.git:
            return sorted(os.listdir(os.path.join(self.path, rel)))
        out = subprocess.run(["git", "--git-dir", self.path, "ls-tree", "--name-only",
                              "HEAD", rel + "/"], check=True, capture_output=True,
                             text=True).stdout
        return sorted(os.path.basename(p) for p in out.split())


def mxnet_cells(markdown):
    """The MXNet tab's code cells of one section, in order."""
    cells = []
    sel = re.search(r"tab\.interact_select\((.*?)\)", markdown)
    if sel and "mxnet" not in sel.group(1):
        return cells                     # a section without MXNet code
    for m in _CELL.finditer(markdown):
        lines = m.group(1).splitlines()
        tabs = None
        if lines and lines[0].startswith("%%tab"):
            tabs = lines[0][len("%%tab"):]
            lines = lines[1:]
        elif lines and lines[0].startswith("#@tab"):
            tabs = lines[0][len("#@tab"):]
            lines = lines[1:]
        if tabs is not None:
            names = {t.strip() for t in tabs.replace(",", " ").split()}
            if "all" not in names and "mxnet" not in names:
                continue
        # notebook magics and shell lines mean nothing to a script
        body = [ln for ln in lines if not ln.lstrip().startswith(("%", "!"))]
        src = "\n".join(body).strip("\n")
        if "tab.interact_select" in src or not src.strip():
            continue
        cells.append(src)
    return cells


_PRELUDE = r'''
import os, sys, json, time, signal, traceback, zipfile, io
os.environ.setdefault("MPLBACKEND", "Agg")
import numpy as _onp

# ``import mxnet`` is aiond
import importlib, importlib.abc, importlib.util
class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "mxnet" or name.startswith("mxnet."):
            return importlib.util.spec_from_loader(name, self)
    def create_module(self, spec):
        return importlib.import_module("aiond" + spec.name[len("mxnet"):])
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, _Alias())
import aiond
sys.modules["mxnet"] = aiond

try:        # D2L's pandas code predates pandas 3's string dtype
    import pandas as _pd
    _pd.options.future.infer_string = False
except Exception:
    pass

EPOCHS = int(os.environ.get("D2L_EPOCHS", "1"))
SAMPLES = int(os.environ.get("D2L_SAMPLES", "256"))
_rs = _onp.random.RandomState(0)

# ---- synthetic data in place of downloads (same shapes and formats)
from aiond import gluon as _gluon
class _FashionMNIST(_gluon.data.Dataset):
    """Fashion-MNIST's shapes: uint8 28x28x1 images, int32 labels 0-9."""
    def __init__(self, root=None, train=True, transform=None):
        rs = _onp.random.RandomState(1 if train else 2)
        n = SAMPLES
        self._label = rs.randint(0, 10, n).astype(_onp.int32)
        base = rs.randint(0, 255, (10, 28, 28, 1))
        noise = rs.randint(0, 60, (n, 28, 28, 1))
        self._data = _onp.clip(base[self._label] + noise, 0, 255).astype(_onp.uint8)
        self._transform = transform
    def __getitem__(self, i):
        from aiond import np as _np, nd as _nd
        from aiond.util import is_np_array
        img = (_np if is_np_array() else _nd).array(self._data[i], dtype=_onp.uint8)
        if self._transform is not None:
            return self._transform(img, self._label[i])
        return img, self._label[i]
    def __len__(self):
        return len(self._label)
_gluon.data.vision.FashionMNIST = _FashionMNIST
_gluon.data.vision.datasets.FashionMNIST = _FashionMNIST

_WORDS = ("the time traveller said and of a in that it was he his we i you to at for "
          "machine thing dimension space which had psychologist medical man filby very "
          "into they there is our this be one with as have not on but so").split()

def _text(n_words, seed=0):
    rs = _onp.random.RandomState(seed)
    lines, w = [], rs.choice(_WORDS, n_words)
    for k in range(0, n_words, 12):
        lines.append(" ".join(w[k:k + 12]))
    return "\n".join(lines) + "\n"

def _fra():
    rs = _onp.random.RandomState(3)
    en = "go run i lost he ran help jump stop wait hello i see i try we won".split()
    fr = "va cours j'ai perdu il courait aide saute arrete attends bonjour je vois essaye".split()
    rows = []
    for _ in range(600):
        k = rs.randint(1, 4)
        rows.append(" ".join(rs.choice(en, k)) + " .\t" + " ".join(rs.choice(fr, k)) + " !")
    return "\n".join(rows) + "\n"

def _synthetic_file(fname):
    base = os.path.basename(fname)
    if base == "timemachine.txt":
        data = _text(30000).encode()
    elif base == "fra-eng.zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("fra-eng/fra.txt", _fra())
        data = buf.getvalue()
    elif base == "airfoil_self_noise.dat":
        x = _rs.rand(1503, 5) * [20000, 20, 0.3, 70, 0.05]
        y = 130 - x[:, :1] / 1000 + _rs.randn(1503, 1)
        data = "\n".join("\t".join("%g" % v for v in row)
                         for row in _onp.hstack([x, y])).encode() + b"\n"
    elif base.startswith("kaggle_house_pred_"):
        test = "test" in base
        n = 1459 if test else 1460
        rs = _onp.random.RandomState(4 if test else 5)
        cols = ["Id", "MSSubClass", "MSZoning", "LotFrontage", "LotArea", "Street",
                "YearBuilt", "GrLivArea"]
        rows = [",".join(cols + ([] if test else ["SalePrice"]))]
        for i in range(n):
            r = [str(i + 1 + (1460 if test else 0)), str(rs.choice([20, 60, 70])),
                 rs.choice(["RL", "RM", "FV"]),
                 "NA" if rs.rand() < 0.1 else str(rs.randint(40, 120)),
                 str(rs.randint(5000, 20000)), rs.choice(["Pave", "Grvl"]),
                 str(rs.randint(1900, 2010)), str(rs.randint(600, 3000))]
            if not test:
                r.append(str(rs.randint(50000, 500000)))
            rows.append(",".join(r))
        data = ("\n".join(rows) + "\n").encode()
    else:
        raise RuntimeError("no network here and no synthetic stand-in for %s" % base)
    with open(fname, "wb") as f:
        f.write(data)

def _offline_download(url, folder="../data", sha1_hash=None):
    import d2l.mxnet as d2l
    if not url.startswith("http"):
        url, sha1_hash = d2l.DATA_HUB[url]
    os.makedirs(folder, exist_ok=True)
    fname = os.path.join(folder, url.split("/")[-1])
    if not os.path.exists(fname):
        _synthetic_file(fname)
    return fname

MAX_IMAGE = int(os.environ.get("D2L_MAX_IMAGE", "0"))

def _patch_d2l():
    import d2l.mxnet as d2l
    d2l.download = _offline_download
    if MAX_IMAGE:
        # "small sizes": the modern CNNs' 224x224 inputs capped (every net of
        # the chapter still has spatial extent left at 96)
        fm = d2l.FashionMNIST.__init__
        def small(self, batch_size=64, resize=(28, 28)):
            fm(self, batch_size, tuple(min(r, MAX_IMAGE) for r in resize))
        d2l.FashionMNIST.__init__ = small
    init = d2l.Trainer.__init__
    def capped(self, max_epochs, *a, **k):
        init(self, min(max_epochs, EPOCHS), *a, **k)
    d2l.Trainer.__init__ = capped

class _CellTimeout(Exception):
    pass

def _alarm(signum, frame):
    raise _CellTimeout("cell ran past %s s" % os.environ["D2L_CELL_TIMEOUT"])

class tab:
    """d2lbook's tab switch, as a notebook of the MXNet tab sees it."""
    @staticmethod
    def selected(*names):
        return "mxnet" in names or "all" in names

def _run(cells, report):
    ns = {"__name__": "__main__", "tab": tab}
    signal.signal(signal.SIGALRM, _alarm)
    res = []
    for k, src in enumerate(cells):
        t0 = time.time()
        signal.alarm(int(os.environ.get("D2L_CELL_TIMEOUT", "300")))
        try:
            exec(compile(src, "<cell %d>" % k, "exec"), ns)
            err = None
        except BaseException as e:     # a cell's failure, recorded; the next cell runs
            if isinstance(e, KeyboardInterrupt):
                raise
            tb = traceback.extract_tb(e.__traceback__)
            where = [f for f in tb if "aiond" in f.filename] or tb
            err = "%s: %s @ %s:%s" % (type(e).__name__, str(e)[:300],
                                      where[-1].filename, where[-1].lineno)
        finally:
            signal.alarm(0)
        if "d2l.mxnet" in sys.modules and not getattr(sys.modules["d2l.mxnet"], "_offline", 0):
            _patch_d2l()
            sys.modules["d2l.mxnet"]._offline = 1
        res.append({"cell": k, "ok": err is None, "error": err,
                    "seconds": round(time.time() - t0, 2)})
        with open(report, "w") as f:
            json.dump(res, f)
        try:
            import matplotlib.pyplot as plt
            plt.close("all")
        except Exception:
            pass
'''


def write_script(path, cells):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# generated by tools/d2l/run_d2l.py; not part of any repository\n")
        f.write("import sys\nimport d2l_offline\n")
        f.write("\nCELLS = %r\n" % (cells,))
        f.write("d2l_offline._run(CELLS, sys.argv[1])\n")


def install_d2l(clone, out):
    """The clone's d2l package and the offline harness (a module of its own, so
    that DataLoader workers, fresh interpreters, can import the synthetic
    datasets they get by pickle)."""
    pkg = os.path.join(out, "lib", "d2l")
    os.makedirs(pkg, exist_ok=True)
    for name in ("__init__.py", "mxnet.py"):
        with open(os.path.join(pkg, name), "w", encoding="utf-8") as f:
            f.write(clone.read("d2l/" + name))
    with open(os.path.join(out, "lib", "d2l_offline.py"), "w", encoding="utf-8") as f:
        f.write('"""generated by tools/d2l/run_d2l.py"""\n' + _PRELUDE)
    return os.path.dirname(pkg)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("clone", help="a clone of github.com/d2l-ai/d2l-en (work tree or git dir)")
    p.add_argument("--chapters", default=",".join(CHAPTERS))
    p.add_argument("--sections", default="", help="comma-separated section names to run only")
    p.add_argument("--out", default="/tmp/d2l-run")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--timeout", type=int, default=900, help="seconds per section")
    p.add_argument("--cell-timeout", type=int, default=300)
    p.add_argument("--max-image", type=int, default=96,
                   help="cap on d2l.FashionMNIST's resize (0: as written, 224 for the "
                        "modern CNNs)")
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args(argv)
    clone = Clone(args.clone)
    os.makedirs(args.out, exist_ok=True)
    lib = install_d2l(clone, args.out)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([lib] + [x for x in [env.get("PYTHONPATH")] if x])
    env.update(D2L_EPOCHS=str(args.epochs), D2L_SAMPLES=str(args.samples),
               D2L_CELL_TIMEOUT=str(args.cell_timeout), MPLBACKEND="Agg",
               D2L_MAX_IMAGE=str(args.max_image))
    only = {s for s in args.sections.split(",") if s}
    report = {}
    for ch in [c.strip() for c in args.chapters.split(",") if c.strip()]:
        ch = ALIASES.get(ch, ch)
        cdir = "chapter_" + ch
        odir = os.path.join(args.out, ch)
        os.makedirs(odir, exist_ok=True)
        chap = report[ch] = {"cells": 0, "passed": 0, "sections": {}}
        for md in clone.listdir(cdir):
            sec = md[:-3]
            if not md.endswith(".md") or (only and sec not in only):
                continue
            cells = mxnet_cells(clone.read(cdir + "/" + md))
            if not cells:
                continue
            # not the section name: a script "pandas.py" would shadow pandas
            script = os.path.join(odir, "sec_" + sec.replace("-", "_") + ".py")
            rep = os.path.join(odir, sec + ".json")
            write_script(script, cells)
            if os.path.exists(rep):
                os.remove(rep)
            # the data directory ('../data') is relative to the section's cwd
            cwd = os.path.join(odir, "run")
            os.makedirs(cwd, exist_ok=True)
            try:
                proc = subprocess.run([args.python, script, rep], cwd=cwd, env=env,
                                      capture_output=True, text=True, timeout=args.timeout)
                tail = proc.stderr[-2000:]
            except subprocess.TimeoutExpired:
                tail = "section ran past %d s" % args.timeout
            done = json.load(open(rep)) if os.path.exists(rep) else []
            ok = sum(r["ok"] for r in done)
            fails = [r for r in done if not r["ok"]]
            if len(done) < len(cells):
                fails.append({"cell": len(done), "ok": False,
                              "error": "the interpreter stopped: " + tail.strip()[-500:]})
            chap["sections"][sec] = {"cells": len(cells), "passed": ok, "failures": fails}
            chap["cells"] += len(cells)
            chap["passed"] += ok
            print("%-40s %-32s %3d/%3d" % (ch, sec, ok, len(cells)), flush=True)
        print("%-40s %-32s %3d/%3d" % (ch, "TOTAL", chap["passed"], chap["cells"]), flush=True)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("cells passing: %d/%d" % (sum(c["passed"] for c in report.values()),
                                     sum(c["cells"] for c in report.values())))


if __name__ == "__main__":
    main()
