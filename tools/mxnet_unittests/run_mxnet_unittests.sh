#!/usr/bin/env bash
# Run Apache MXNet 1.9.1's own Python unit tests (a peer's test suite that no
# one here wrote) against a module: real MXNet (the baseline) or aiond
# (imported as `mxnet` through a thin alias package).
#
#   tools/mxnet_unittests/run_mxnet_unittests.sh GITDIR PYTHON MODULE OUTDIR [FILE...]
#
# GITDIR  a git directory holding apache/mxnet with tag 1.9.1 (a fetched mirror)
# PYTHON  the interpreter (must have pytest, pytest-timeout and MODULE importable)
# MODULE  mxnet | aiond
# OUTDIR  where junit XML and summary.tsv go
# FILE    test file stems (default: the CPU core list below)
#
# Limits: MXNET_TEST_TIMEOUT seconds a test (default 120), MXNET_FILE_TIMEOUT
# seconds a file (default 1200); raise them on a busy machine.
#
# Nothing of MXNet is committed or built here: the test files are extracted
# into a temporary folder for the run and deleted afterwards.
set -u
if [ $# -lt 4 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  [ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; } && exit 0
  exit 2
fi
gitdir=$1; py=$2; module=$3; out=$4; shift 4
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(test_ndarray test_autograd test_symbol test_executor test_infer_shape
  test_infer_type test_attr test_engine test_exc_handling test_gluon test_gluon_trainer test_loss
  test_gluon_data test_gluon_utils test_init test_optimizer test_kvstore test_random test_metric
  test_profiler test_thread_local test_operator)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
# archive the subtree only: a mirror may lack blobs elsewhere in the tree
mkdir -p "$work/tests/python"
git --git-dir="$gitdir" archive 1.9.1:tests/python unittest common train | tar -x -C "$work/tests/python"
cp "$work"/tests/python/common/*.py "$work"/tests/python/train/test_bucketing.py "$work"/tests/python/unittest/
cp -r "$here/stubs/nose" "$work/tests/python/unittest/"
if [ "$module" = aiond ]; then cp -r "$here/stubs/mxnet" "$work/tests/python/unittest/"; fi
cd "$work/tests/python/unittest"
printf 'file\tpassed\tfailed\terror\tskipped\n' > "$out/summary.tsv"
for f in "${files[@]}"; do
  [ -f "$f.py" ] || { echo "no $f.py" >&2; continue; }
  MXNET_TEST_SEED=${MXNET_TEST_SEED:-1234} timeout "${MXNET_FILE_TIMEOUT:-1200}" "$py" -m pytest -q \
    -p no:cacheprovider --timeout="${MXNET_TEST_TIMEOUT:-120}" -o junit_family=xunit1 --junitxml="$out/$f.xml" "$f.py" > "$out/$f.log" 2>&1
  "$py" "$here/junit_summary.py" "$out/$f.xml" "$f" >> "$out/summary.tsv"
done
column -t "$out/summary.tsv"
