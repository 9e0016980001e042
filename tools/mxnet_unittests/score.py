"""Score a peer-suite run against the tests that pass on MXNet 1.9.1 itself.

    python3 tools/mxnet_unittests/score.py OUTDIR [--baseline FILE] [--write-baseline]

--write-baseline stores the passing test ids of OUTDIR (a run on real MXNet)
as the baseline (default mxnet_passing.txt beside this script; --baseline names another).
Without it, prints per file how many of MXNet's passing tests also pass in
OUTDIR, and the total.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "mxnet_passing.txt")


def passing(outdir):
    ids = set()
    for x in glob.glob(os.path.join(outdir, "test_*.xml")):
        try:
            root = ET.parse(x).getroot()
        except ET.ParseError:
            continue
        for tc in root.iter("testcase"):
            if not any(c.tag in ("failure", "error", "skipped") for c in tc):
                ids.add(f"{tc.get('classname')}::{tc.get('name')}")
    return ids


if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    raise SystemExit(0 if len(sys.argv) > 1 else 2)
ids = passing(sys.argv[1])
if "--baseline" in sys.argv:
    BASE = sys.argv[sys.argv.index("--baseline") + 1]
if "--write-baseline" in sys.argv:
    with open(BASE, "w") as f:
        f.write("\n".join(sorted(ids)) + "\n")
    print(len(ids), "baseline ids written")
    raise SystemExit
base = set(open(BASE).read().split())
by_file = {}
for t in base:
    f = t.split("::")[0]
    by_file.setdefault(f, [0, 0])[1] += 1
    if t in ids:
        by_file[f][0] += 1
for f, (p, n) in sorted(by_file.items()):
    print(f"{f:24s} {p:4d}/{n:<4d}")
tp = sum(p for p, _ in by_file.values()); tn = sum(n for _, n in by_file.values())
print(f"total {tp}/{tn} = {100 * tp / tn:.1f}% of what passes on MXNet 1.9.1")
