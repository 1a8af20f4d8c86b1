#!/usr/bin/env bash
# Runs test suites one after another, each even when an earlier one failed, and ends with one
# summary line and a non-zero status if any failed. Used by `make test`:
#   deploy/run-suites.sh LABEL NAME COMMAND [NAME COMMAND]...
# COMMAND is run by bash from the current directory; its output goes through unchanged. Every test
# a suite skipped is named with its reason (deploy/list-skips.py reads the output and the JUnit
# reports), after that suite and again before the summary: a green line must not hide what did
# not run here.
set -uo pipefail
here=$(dirname "$0")
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
label=${1:?usage: run-suites.sh LABEL NAME COMMAND [NAME COMMAND]...}
shift
[ $(($# % 2)) -eq 0 ] && [ $# -gt 0 ] || { echo "run-suites: NAME COMMAND pairs expected" >&2; exit 2; }
total=0
failed=()
skipped=()
while [ $# -gt 0 ]; do
  name=$1 cmd=$2
  shift 2
  total=$((total + 1))
  echo "== $label: $name: $cmd"
  start=$SECONDS since=$(date +%s.%N)   # reports older than this are an earlier suite's
  log="$logs/$total.log"
  if bash -c "$cmd" 2>&1 | tee "$log"; then
    echo "== $label: $name: passed ($((SECONDS - start)) s)"
  else
    status=$?
    echo "== $label: $name: FAILED with status $status ($((SECONDS - start)) s)"
    failed+=("$name")
  fi
  while IFS= read -r line; do
    [ -n "$line" ] && skipped+=("$name: $line") && echo "== $label: $name: skipped $line"
  done < <(python3 "$here/list-skips.py" "$log" "$since" || echo "(list-skips.py failed: skips not listed)")
done
if [ ${#skipped[@]} -gt 0 ]; then
  echo "$label: ${#skipped[@]} skipped, each for the reason given:"
  printf '  %s\n' "${skipped[@]}"
fi
passed=$((total - ${#failed[@]}))
if [ ${#failed[@]} -eq 0 ]; then
  echo "$label: $total suites, $passed passed${skipped[0]+, ${#skipped[@]} skipped (named above)}"
else
  joined=$(printf '%s, ' "${failed[@]}")
  echo "$label: $total suites, $passed passed, ${#failed[@]} failed: ${joined%, }${skipped[0]+; ${#skipped[@]} skipped (named above)}"
  exit 1
fi
