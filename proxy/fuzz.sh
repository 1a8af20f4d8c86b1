#!/usr/bin/env bash
# `make fuzz`: coverage-guided fuzzing of every fuzz target (proxy/src/test/java/dev/fleproxy/fuzz)
# with Jazzer, one Maven run per target (Jazzer fuzzes one @FuzzTest per JVM), and the leak fuzzer
# (proxy/tests/test_leak_fuzz.py, the real jar and KMS), FUZZ_SECONDS of fuzzing in all (default
# 300), shared equally by the targets (each also costs 15-30 s of start-up). The corpus grows in proxy/.cifuzz-corpus (kept between runs, not committed); a
# crashing input is written to src/test/resources/dev/fleproxy/fuzz/<Class>Inputs/<method>/crash-…,
# where `mvn test` replays it from then on (commit it with the fix). Raw logs go to
# results/fuzz/logs/, the figures per target (executions, coverage, crashes) to
# results/fuzz/summary.md. Exits non-zero when a target found something or did not run.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
total="${FUZZ_SECONDS:-300}"
mvn_cmd="${MVN:-mvn -B -ntp}"
targets="${FUZZ_TARGETS:-WireFuzzTest#frameDecoder WireFuzzTest#opMsg RequestRewriteFuzzTest#commands \
RequestRewriteFuzzTest#rawRequests ReplyDecryptionFuzzTest#replies}"
# and the leak fuzzer (proxy/tests/test_leak_fuzz.py): generated commands through the real proxy, with
# a recording relay before the backend, for an equal share of the time (LEAK_FUZZ=0: not run)
leak="${LEAK_FUZZ:-1}"
count=$(( $(wc -w <<<"$targets") + (leak == 1 ? 1 : 0) ))
seconds=$(( total / count ))
[ "$seconds" -ge 10 ] || seconds=10
out="$root/results/fuzz"
logs="$out/logs"
mkdir -p "$logs"

cd "$here"
$mvn_cmd -q test-compile || { echo "fuzz: the tests do not compile" >&2; exit 1; }

rows=()
findings=()
failed=0
for t in $targets; do
  name="${t//#/.}"
  log="$logs/$name.log"
  echo "fuzz: $t for ${seconds} s (log: ${log#"$root"/})"
  start=$(date +%s)
  # -max_total_time and the other libFuzzer flags come last on Jazzer's command line, so they
  # override the @FuzzTest(maxDuration) of the source.
  JAZZER_FUZZ=1 $mvn_cmd test -Dtest="$t" -Dsurefire.failIfNoSpecifiedTests=false -Dsurefire.exitTimeout=5 \
    -Djazzer.internal.arg.0=fuzz -Djazzer.internal.arg.1="-max_total_time=$seconds" \
    -Djazzer.internal.arg.2=-print_final_stats=1 >"$log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | awk '{print $2}')
  [ -n "$execs" ] || execs=$(grep -o '^Done [0-9]* runs' "$log" | tail -1 | awk '{print $2}')
  ran=$(grep -o '^Done [0-9]* runs in [0-9]* second' "$log" | tail -1 | awk '{print $5}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | awk '{print $2}')
  stats=$(grep -E '^#[0-9]+[[:space:]].*cov: [0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$stats")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$stats")
  corp=$(sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$stats")
  crashes=$(grep -c 'Test unit written to' "$log")
  if [ "$crashes" -gt 0 ]; then
    result="FINDING"
    what=$(grep -m1 -o 'FuzzTestFindingException: .*' "$log" | sed 's/FuzzTestFindingException: //' | cut -c1-200)
    while IFS= read -r f; do findings+=("\`$t\`: ${f#"$root"/proxy/} (${what:-see the log})"); done \
      < <(grep -o 'Test unit written to .*' "$log" | sed 's/Test unit written to //')
  elif [ "$rc" -ne 0 ] || [ -z "$execs" ]; then
    result="did not run (exit $rc; see the log)"
  else
    result="ok"
  fi
  [ "$result" = "ok" ] || failed=1
  rows+=("| \`$t\` | ${ran:-?} | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $crashes | $result |")
  echo "fuzz: $t: ${execs:-?} executions in ${ran:-?} s (${wall} s with Maven), coverage ${cov:-?} edges, ${crashes} crash(es): $result"
done

if [ "$leak" = 1 ]; then
  log="$logs/leak-fuzz.log"
  seed="${LEAK_FUZZ_SEED:-$(date +%s)000}"  # new seeds each run, unless one is asked for
  echo "fuzz: the leak fuzzer for ${seconds} s from seed $seed (log: ${log#"$root"/})"
  start=$(date +%s)
  (cd "$root" && FLE_LEAK_FUZZ_SECONDS="$seconds" FLE_LEAK_FUZZ_SEED="$seed" FLE_LEAK_FUZZ_REPORT="$out/leak-fuzz.md" \
    "${PYTHON:-.venv/bin/python}" -m pytest -q -p no:cacheprovider proxy/tests/test_leak_fuzz.py) >"$log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  cases=$(sed -n 's/.*: \([0-9,]*\) cases, seeds.*/\1/p' "$out/leak-fuzz.md" 2>/dev/null | tr -d ,)
  if [ "$rc" -eq 0 ]; then result="ok"; else result="FINDING (see ${out#"$root"/}/leak-fuzz.md and the log)"; failed=1; fi
  [ -n "$cases" ] || { result="did not run (exit $rc; see the log)"; failed=1; }
  rate=$([ -n "$cases" ] && [ "$wall" -gt 0 ] && echo $(( cases / wall )) || echo "?")
  rows+=("| leak fuzzer (\`proxy/tests/test_leak_fuzz.py\`, seeds from $seed) | $wall | ${cases:-?} | $rate | – | – | – | – | $result |")
  [ "$rc" -eq 0 ] || findings+=("leak fuzzer: ${out#"$root"/}/leak-fuzz.md")
  echo "fuzz: leak fuzzer: ${cases:-?} cases in $wall s: $result"
fi

{
  echo "# Fuzzing summary"
  echo
  echo "\`make fuzz FUZZ_SECONDS=$total\` ($seconds s per target) on $(date -u +%Y-%m-%d), Jazzer 0.24.0 (libFuzzer), $(java -version 2>&1 | head -1),"
  echo "$(uname -m), $(nproc) cores. Coverage is libFuzzer's count of covered edges in the instrumented classes"
  echo "(the project's own, dev.fleproxy.**); features (ft) also count hit-count buckets and comparisons; corpus"
  echo "is the number of inputs kept / their total size. The corpus carries over between runs (proxy/.cifuzz-corpus)."
  echo
  echo "| target | seconds | executions | exec/s | coverage (edges) | features | corpus | crashes | result |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  if [ ${#findings[@]} -gt 0 ]; then
    echo "Crashing inputs (replayed by \`mvn test\` from now on):"
    echo
    printf -- '- %s\n' "${findings[@]}"
  else
    echo "No crashes."
  fi
} >"$out/summary.md"
echo "fuzz: summary in ${out#"$root"/}/summary.md"
cat "$out/summary.md"
exit $failed
