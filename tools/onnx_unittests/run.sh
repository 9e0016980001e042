#!/usr/bin/env bash
# Run Apache MXNet 1.9.1's own ONNX tests (tests/python-pytest/onnx) against a
# module: real MXNet (the baseline) or aiond (imported as `mxnet` through the
# alias package of tools/mxnet_unittests/stubs, or $PEER_STUBS).
#
#   tools/onnx_unittests/run.sh GITDIR PYTHON MODULE OUTDIR [FILE...]
#
# GITDIR  a git directory holding apache/mxnet with tag 1.9.1
# PYTHON  an interpreter with pytest, pytest-timeout, onnx, onnxruntime, numpy<1.24
#         and MODULE importable (for aiond: PYTHONPATH=<checkout>)
# MODULE  mxnet | aiond
# OUTDIR  where the JUnit XML, the logs and summary.tsv go
# FILE    test file stems (default: test_operators)
#
# TEST_IDS_FILE=<file of pytest ids, one a line> runs only those ids of each file
# (a sample, when the ~11,800 parametrized cases of test_operators take too long).
#
# The test files are extracted into a temporary folder for the run and deleted
# afterwards; nothing of MXNet is committed here.
set -u
if [ $# -lt 4 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  [ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; } && exit 0
  exit 2
fi
gitdir=$1; py=$2; module=$3; out=$4; shift 4
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(test_operators)
here=$(cd "$(dirname "$0")" && pwd)
stubs=${PEER_STUBS:-$here/../mxnet_unittests/stubs}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
out=$(cd "$out" && pwd)
git --git-dir="$gitdir" archive 1.9.1:tests/python-pytest onnx | tar -x -C "$work"
cd "$work/onnx"
if [ "$module" = aiond ]; then cp -r "$stubs/mxnet" .; fi
printf 'file\tpassed\tfailed\terror\tskipped\n' > "$out/summary.tsv"
for f in "${files[@]}"; do
  [ -f "$f.py" ] || { echo "no $f.py" >&2; continue; }
  MXNET_TEST_SEED=${MXNET_TEST_SEED:-1234} timeout ${ONNX_TEST_TIMEOUT:-3600} "$py" -m pytest -q \
    -p no:cacheprovider --timeout=300 -o junit_family=xunit1 --junitxml="$out/$f.xml" \
    $(if [ -n "${TEST_IDS_FILE:-}" ]; then grep "^$f.py::" "$TEST_IDS_FILE"; else echo "$f.py"; fi) \
    > "$out/$f.log" 2>&1
  "$py" "$here/../mxnet_unittests/junit_summary.py" "$out/$f.xml" "$f" >> "$out/summary.tsv"
done
column -t "$out/summary.tsv"
