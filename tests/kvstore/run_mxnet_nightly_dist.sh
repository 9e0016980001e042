#!/usr/bin/env bash
# Run MXNet 1.9.1's own distributed kvstore tests (tests/nightly/dist_*_kvstore.py)
# against aiond under mpiexec. Nothing of MXNet is committed: the files are
# extracted from a git mirror into a temporary folder and deleted afterwards.
#
#   tests/kvstore/run_mxnet_nightly_dist.sh GITDIR [NPROCS]
#
# GITDIR: a git directory holding apache/mxnet with tag 1.9.1. Uses the venv
# next to this checkout (.venv/bin/python and its mpiexec) and the `mxnet`
# alias stub of ../shared/peer/stubs when present, else aiond.mxnet_alias.
set -u
gitdir=$1; n=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$root/.venv/bin/python; mpiexec=$root/.venv/bin/mpiexec
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for f in nightly/dist_sync_kvstore.py nightly/dist_async_kvstore.py nightly/test_kvstore.py \
         python/unittest/common.py python/common/models.py; do
  git --git-dir="$gitdir" show "1.9.1:tests/$f" > "$work/$(basename "$f")"
done
# the test was written for Python 2: a float shape
sed -i 's#(num_rows/2, 2)#(num_rows//2, 2)#' "$work/dist_sync_kvstore.py"
stubs=$root/../../shared/peer/stubs
[ -d "$stubs" ] || stubs=/work/shared/peer/stubs
if [ -d "$stubs/mxnet" ]; then cp -r "$stubs/mxnet" "$stubs/nose" "$work/"
else "$py" -m aiond.mxnet_alias install --target "$work" >/dev/null; fi
cd "$work"
fail=0
for t in default_cpu compressed_cpu gluon_type_cpu gluon_step_cpu gluon_sparse_step_cpu invalid_cpu; do
  if PYTHONPATH=$work timeout 600 "$mpiexec" -n "$n" "$py" dist_sync_kvstore.py --type "$t" > "$t.log" 2>&1
  then echo "dist_sync_kvstore.py --type $t: ok"
  else echo "dist_sync_kvstore.py --type $t: FAILED"; tail -20 "$t.log"; fail=1; fi
done
if PYTHONPATH=$work timeout 600 "$mpiexec" -n "$n" "$py" dist_async_kvstore.py > async.log 2>&1
then echo "dist_async_kvstore.py: ok"; else echo "dist_async_kvstore.py: FAILED"; tail -20 async.log; fail=1; fi
exit $fail
