"""Group why the tests that pass on MXNet 1.9.1 do not pass in a run of aiond.

    python3 tools/mxnet_unittests/failure_causes.py OUTDIR --baseline FILE [--top N] [--tests] [--present-only]

OUTDIR is a run_mxnet_unittests.sh output folder (junit XML per file), FILE a
baseline list written by score.py --write-baseline. For every baseline id that
does not pass in OUTDIR it takes the first error line (the junit message, or
for a file that failed to import, the first `E   ` line of the collection
error, which kills every test of that file) and prints, per file and then over
all files, each cause with how many baseline tests it kills and a kind:
missing module, missing attribute/operator (module-level name), missing
method (object attribute), numerical mismatch, timeout, or the exception type.
--tests also lists the test names under each cause; --present-only leaves out
baseline files that have no junit XML in OUTDIR (a run of a few files).
"""
import collections
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET


def first_e_line(text):
    for line in (text or "").splitlines():
        if line.startswith("E   "):
            return line[4:].strip()
    return ""


def classify(msg):
    if msg.startswith("assert "):
        msg = "AssertionError: " + msg
    m = re.match(r"(\w+(?:\.\w+)*)(?::|$)", msg)
    etype = m.group(1).split(".")[-1] if m else "?"
    if etype in ("ModuleNotFoundError", "ImportError"):
        return "missing module/name"
    if etype == "AttributeError":
        if re.search(r"module '[\w.]+' has no attribute", msg):
            return "missing attribute/operator"
        return "missing method/attribute on object"
    if msg.startswith("Failed: Timeout"):
        return "timeout (120 s)"
    if etype == "AssertionError" and re.search(
            r"not (almost )?equal|exceeds tolerance|Mismatch|mismatch|Arrays are not", msg):
        return "numerical mismatch"
    if etype == "AssertionError":
        return "assertion (other)"
    if etype == "NotImplementedError":
        return "not implemented"
    return etype


def load(outdir):
    status = {}      # id -> (state, message)
    collect = {}     # file -> message of its collection error
    for x in glob.glob(os.path.join(outdir, "test_*.xml")):
        stem = os.path.basename(x)[:-4]
        try:
            root = ET.parse(x).getroot()
        except ET.ParseError:
            collect[stem] = "junit XML unreadable (file timed out or crashed)"
            continue
        for tc in root.iter("testcase"):
            tid = f"{tc.get('classname')}::{tc.get('name')}"
            state, msg = "pass", ""
            for c in tc:
                if c.tag in ("failure", "error", "skipped"):
                    state = c.tag
                    msg = (c.get("message") or "").strip()
                    if not msg or msg in ("collection failure", "failed on setup with"):
                        msg = first_e_line(c.text) or msg
                    elif msg.startswith("failed on setup") or msg.startswith("failed on teardown"):
                        msg = first_e_line(c.text) or msg
                    lines = [l.strip() for l in msg.splitlines() if l.strip()]
                    msg = lines[0] if lines else ""
                    if msg.endswith(":") and len(lines) > 1:  # "AssertionError:" then the text
                        msg = msg + " " + lines[1]
            if tc.get("classname") in ("", None) and tc.get("name") == stem and state != "pass":
                collect[stem] = msg
            status[tid] = (state, msg)
    return status, collect


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help") or "--baseline" not in sys.argv:
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
    outdir = sys.argv[1]
    base = sys.argv[sys.argv.index("--baseline") + 1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 8
    show_tests = "--tests" in sys.argv
    status, collect = load(outdir)
    ids = sorted(set(open(base).read().split()))
    if "--present-only" in sys.argv:  # only files that have junit XML in OUTDIR
        present = {os.path.basename(x)[:-4] for x in glob.glob(os.path.join(outdir, "test_*.xml"))}
        ids = [t for t in ids if t.split("::")[0].split(".")[0] in present]
    per_file = collections.defaultdict(lambda: collections.defaultdict(list))
    totals = collections.Counter()
    for tid in ids:
        f, name = tid.split("::", 1)
        if f in collect:
            msg = "[file does not import] " + collect[f]
            kind = classify(collect[f])
        elif tid not in status:
            msg, kind = "not run (file missing from OUTDIR or test not collected)", "not run"
        else:
            state, msg = status[tid]
            if state == "pass":
                continue
            kind = "skipped" if state == "skipped" else classify(msg)
        msg = re.sub(r"\S*/(?=tests/python/)", "", msg)[:220]
        per_file[f][(kind, msg)].append(name)
        totals[(kind, msg)] += 1
    kinds = collections.Counter()
    for (kind, _), n in totals.items():
        kinds[kind] += n
    for f in sorted(per_file, key=lambda f: -sum(len(v) for v in per_file[f].values())):
        causes = per_file[f]
        n = sum(len(v) for v in causes.values())
        print(f"\n## {f}: {n} baseline tests not passing")
        for (kind, msg), names in sorted(causes.items(), key=lambda kv: -len(kv[1]))[:top]:
            print(f"  {len(names):4d}  [{kind}] {msg}")
            if show_tests:
                print("        " + " ".join(sorted(names)))
        if len(causes) > top:
            print(f"        ... {len(causes) - top} more causes")
    print("\n## by kind, all files")
    for kind, n in kinds.most_common():
        print(f"  {n:4d}  {kind}")
    print("\n## top causes, all files")
    for (kind, msg), n in totals.most_common(top * 3):
        print(f"  {n:4d}  [{kind}] {msg}")


main()
