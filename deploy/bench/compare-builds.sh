#!/usr/bin/env bash
# Two builds of the proxy side by side: the CPU per operation of each proxy process (fle-bench
# overhead: inserts and reads by _id, 8 threads, a plain collection and an AES-GCM one of ten
# fields), same KMS, embedded backend and policy, rounds in alternating order; prints the median and
# every round's ratio new/old (CPU without the JIT compilers' share). What a change costs, measured
# in one run on a shared machine:
#   git worktree add /tmp/old <rev> && (cd /tmp/old/proxy && mvn -q package -DskipTests)
#   deploy/bench/compare-builds.sh /tmp/old/proxy/target/fle-proxy.jar proxy/target/fle-proxy.jar
# ROUNDS (8), SECONDS_PER_PHASE (5), WARMUP (120 s) tune it; the report is left in $OUT (a temp dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD=$(realpath "$1") NEW=$(realpath "$2")
BENCH=proxy/bench/target/fle-bench.jar
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d)}
RUN=$OUT/run; mkdir -p "$RUN"
free_port() { "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
KMS_PORT=$(free_port) B=$(free_port) PO=$(free_port) PN=$(free_port)
kms/kms init --dir "$RUN/kms" --port "$KMS_PORT" >/dev/null
kms/kms serve --dir "$RUN/kms" >"$RUN/kms.log" 2>&1 & pids+=($!)
wait_port "$KMS_PORT"
kms/kms bootstrap --dir "$RUN/kms" >/dev/null
java -jar "$NEW" backend --port "$B" >"$RUN/backend.log" 2>&1 & pids+=($!)
config() { # config NAME PORT: a proxy on PORT, the AES-256 bootstrap key on bench.aes_NAME
  cat >"$RUN/$1.yaml" <<YAML
listen: 127.0.0.1:$2
upstream: 127.0.0.1:$B
transport: epoll
kmip: { host: 127.0.0.1, port: $KMS_PORT, ca: $RUN/kms/ca.pem, clientCert: $RUN/kms/proxy.pem, clientKey: $RUN/kms/proxy.key }
envelopeSubtype: 0
collections:
  bench.aes_$1: { key: 89d6d529-a2fe-31dd-ae60-3cb35458dcc0, fields: "*" }
YAML
}
config old "$PO"; config new "$PN"
java -jar "$OLD" proxy --config "$RUN/old.yaml" >"$RUN/old.log" 2>&1 & OPID=$!; pids+=($OPID)
java -jar "$NEW" proxy --config "$RUN/new.yaml" >"$RUN/new.log" 2>&1 & NPID=$!; pids+=($NPID)
wait_port "$B"; wait_port "$PO"; wait_port "$PN"
target() { echo "kind=$1,uri=mongodb://127.0.0.1:$2,pid=$3,transport=epoll,name=$4,collection=$5${6:+,suite=$6}"; }
java -jar "$BENCH" overhead --no-alloc --threads 8 --seconds "${SECONDS_PER_PHASE:-5}" --rounds "${ROUNDS:-8}" \
  --warmup "${WARMUP:-120}" --target "kind=direct,uri=mongodb://127.0.0.1:$B" \
  --target "$(target proxy-plain "$PO" "$OPID" "old no policy" plain_old)" \
  --target "$(target proxy-plain "$PN" "$NPID" "new no policy" plain_new)" \
  --target "$(target encrypted "$PO" "$OPID" "old AES_GCM" aes_old AES_GCM)" \
  --target "$(target encrypted "$PN" "$NPID" "new AES_GCM" aes_new AES_GCM)" \
  --out "$OUT" --note "compare-builds: $OLD (old) vs $NEW (new)" >"$RUN/bench.out" 2>&1
"$PYTHON" - "$OUT/overhead.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def per_round(target):  # CPU ms per 1,000 operations, inserts and reads together, JIT compilers' share left out
    out = {}
    for r in rows:
        if r["target"] == target and r["cpu_ms"]:
            d = out.setdefault(r["round"], [0.0, 0])
            d[0] += float(r["cpu_ms"]) - float(r["jit_cpu_ms"] or 0)
            d[1] += int(r["ops"])
    return {k: v[0] / v[1] * 1000 for k, v in out.items()}
for what in ("no policy", "AES_GCM"):
    old, new = per_round(f"old {what}"), per_round(f"new {what}")
    ratios = sorted(new[k] / old[k] for k in old)
    print(f"{what}: new/old CPU per operation {statistics.median(ratios):.3f} (rounds {', '.join(f'{x:.3f}' for x in ratios)})")
PY
echo "compare-builds: report in $OUT/overhead.md"
