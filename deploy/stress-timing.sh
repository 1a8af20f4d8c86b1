#!/usr/bin/env bash
# Runs tests that wait on time over and over while both cores are busy, and stops at the first
# failure (its output shown). Used by `make test-timing-stress`:
#   deploy/stress-timing.sh [-n N] COMMAND [COMMAND]...
# Each round runs every COMMAND (by bash, from the current directory) once; N rounds (default 20,
# or $STRESS_ROUNDS). The load: `stress-ng --cpu NPROC` ($STRESS_CPUS workers if set, e.g. 1 for each
# of two loops run side by side), or as many busy loops without it; it is stopped on any exit.
# A line per run: round, command, seconds, load average.
set -uo pipefail
rounds=${STRESS_ROUNDS:-20}
if [ "${1:-}" = "-n" ]; then rounds=${2:?-n needs a number}; shift 2; fi
[ $# -gt 0 ] || { echo "usage: stress-timing.sh [-n N] COMMAND [COMMAND]..." >&2; exit 2; }
cores=${STRESS_CPUS:-$(nproc)}
log=$(mktemp)
stress=()
stop() {
  [ ${#stress[@]} -gt 0 ] && kill "${stress[@]}" 2>/dev/null && wait "${stress[@]}" 2>/dev/null
  rm -f "$log"
}
trap stop EXIT
trap 'exit 130' INT TERM
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$cores" --quiet &
  stress+=($!)
  load="stress-ng --cpu $cores"
else
  for _ in $(seq "$cores"); do (while :; do :; done) & stress+=($!); done
  load="$cores busy loops"
fi
echo "== stress-timing: $rounds rounds of $# command(s) under $load"
start=$SECONDS
for round in $(seq "$rounds"); do
  for cmd in "$@"; do
    t0=$SECONDS
    if ! bash -c "$cmd" >"$log" 2>&1; then
      cat "$log"
      echo "== stress-timing: FAILED in round $round of $rounds: $cmd ($((SECONDS - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg))"
      exit 1
    fi
    echo "== round $round/$rounds passed ($((SECONDS - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)): $cmd"
  done
done
echo "== stress-timing: $rounds rounds passed in a row ($((SECONDS - start)) s) under $load"
