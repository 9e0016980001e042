#!/usr/bin/env bash
# Runs aiond's three benchmarks one after another (never two at once: the
# machine has 2 cores), appends their JSON lines to
# benchmarks/results/<UTC stamp>.jsonl (command lines and progress in
# <stamp>.log next to it) and prints a markdown summary of the targets.
#
# Environment:
#   AIOND_PY      interpreter with aiond installed (default: .venv/bin/python)
#   MXNET_PY      interpreter with mxnet 1.x: passed as --mxnet-python (unset: no MXNet)
#   BENCHES       subset, e.g. "dispatch parallel" (default: "startup dispatch parallel")
#   REPEATS       --repeats for every script (default: each script's own)
#   DISPATCH_ARGS / PARALLEL_ARGS / STARTUP_ARGS   extra flags per script
#   OUT           output file (default: benchmarks/results/<UTC stamp>.jsonl)
# Example (smoke):
#   MXNET_PY=.venvs/mxnet/bin/python REPEATS=1 DISPATCH_ARGS="--small-ops 2000" \
#       benchmarks/run.sh
set -u
cd "$(dirname "$0")/.."
AIOND_PY=${AIOND_PY:-.venv/bin/python}
BENCHES=${BENCHES:-"startup dispatch parallel"}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-benchmarks/results/$STAMP.jsonl}
LOG=${OUT%.jsonl}.log
mkdir -p "$(dirname "$OUT")"

common=()
[ -n "${REPEATS:-}" ] && common+=(--repeats "$REPEATS")
[ -n "${MXNET_PY:-}" ] && common+=(--mxnet-python "$MXNET_PY")

status=0
for b in $BENCHES; do
  case $b in
    dispatch) extra=${DISPATCH_ARGS:-} ;;
    parallel) extra=${PARALLEL_ARGS:-} ;;
    startup)  extra=${STARTUP_ARGS:-} ;;
    *) echo "unknown benchmark: $b" >&2; status=2; continue ;;
  esac
  # shellcheck disable=SC2206  # extra flags are meant to be word-split
  cmd=("$AIOND_PY" "benchmarks/bench_$b.py" "${common[@]}" $extra)
  echo "== ${cmd[*]}" | tee -a "$LOG" >&2
  t0=$(date +%s)
  if ! "${cmd[@]}" >>"$OUT" 2>>"$LOG"; then
    echo "   FAILED (see $LOG): $(tail -n 1 "$LOG")" >&2
    status=1
  fi
  echo "   $(( $(date +%s) - t0 )) s" >&2
done

echo >&2
echo "results: $OUT   log: $LOG" >&2
echo
python3 benchmarks/_common.py summarize "$OUT" 2>/dev/null \
  || "$AIOND_PY" benchmarks/_common.py summarize "$OUT"
exit $status
