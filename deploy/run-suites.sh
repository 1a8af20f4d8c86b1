#!/usr/bin/env bash
# Runs test suites one after another, each even when an earlier one failed, and ends with one
# summary line and a non-zero status if any failed. Used by `make test`:
#   deploy/run-suites.sh LABEL NAME COMMAND [NAME COMMAND]...
# COMMAND is run by bash from the current directory; its output goes through unchanged.
set -uo pipefail
label=${1:?usage: run-suites.sh LABEL NAME COMMAND [NAME COMMAND]...}
shift
[ $(($# % 2)) -eq 0 ] && [ $# -gt 0 ] || { echo "run-suites: NAME COMMAND pairs expected" >&2; exit 2; }
total=0
failed=()
while [ $# -gt 0 ]; do
  name=$1 cmd=$2
  shift 2
  total=$((total + 1))
  echo "== $label: $name: $cmd"
  start=$SECONDS
  if bash -c "$cmd"; then
    echo "== $label: $name: passed ($((SECONDS - start)) s)"
  else
    status=$?
    echo "== $label: $name: FAILED with status $status ($((SECONDS - start)) s)"
    failed+=("$name")
  fi
done
passed=$((total - ${#failed[@]}))
if [ ${#failed[@]} -eq 0 ]; then
  echo "$label: $total suites, $passed passed"
else
  joined=$(printf '%s, ' "${failed[@]}")
  echo "$label: $total suites, $passed passed, ${#failed[@]} failed: ${joined%, }"
  exit 1
fi
