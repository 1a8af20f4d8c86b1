#!/usr/bin/env bash
# The main job on one machine: start the KMS (PyKMIP, mutual TLS) with its bootstrap keys, the
# embedded backend and the proxy with one encrypted collection per cipher suite; show the keys as
# the proxy resolves them; run the scaled-down YCSB matrix (deploy/bench/matrix.py) against the
# backend directly, through the proxy without policy and on each encrypted collection; write
# results/embedded/ (report.md, results.csv, plots/); stop everything.
# DEMO_JOB=overhead runs the per-suite overhead benchmark instead (make bench-overhead).
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=proxy/target/fle-proxy.jar
OUT=results/embedded
RUN=$(mktemp -d)
THREADS=${DEMO_THREADS:-8}
SECONDS_PER_PHASE=${DEMO_SECONDS:-8}
WARMUP=${DEMO_WARMUP:-60}   # seconds of unreported load first, spread over the targets (JIT warm-up)
JOB=${DEMO_JOB:-matrix}     # matrix (the YCSB lab, default) or overhead (issue 5's per-suite benchmark)
RECORDS=${DEMO_RECORDS:-10000,30000,50000}
WORKLOADS=${DEMO_WORKLOADS:-a,b,c,d,e,f}
ALGORITHMS=${DEMO_ALGORITHMS:-direct,plain,aes,aria,3des}
REPEATS=${DEMO_REPEATS:-1}
OPERATIONS=${DEMO_OPERATIONS:-4000}
E_OPERATIONS=${DEMO_E_OPERATIONS:-50}
WARMUP_OPERATIONS=${DEMO_WARMUP_OPERATIONS:-8000}   # unrecorded, per algorithm, before the first cell
PYTHON=${PYTHON:-.venv/bin/python}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 1 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.2
  done
  echo "demo: nothing listening on port $1; see $RUN/*.log" >&2
  return 1
}

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

BACKEND_PORT=$(free_port)
PROXY_PORT=$(free_port)
KMS_PORT=$(free_port)
KMS_DIR="$RUN/kms"

echo "demo: KMS on 127.0.0.1:$KMS_PORT (certificates and database in $KMS_DIR)"
kms/kms init --dir "$KMS_DIR" --port "$KMS_PORT" >/dev/null
kms/kms serve --dir "$KMS_DIR" >"$RUN/kms.log" 2>&1 &
pids+=($!)
wait_port "$KMS_PORT"
kms/kms bootstrap --dir "$KMS_DIR"
key() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$KMS_DIR/bootstrap.json" "$1"; }
echo "demo: embedded backend on 127.0.0.1:$BACKEND_PORT, proxy on 127.0.0.1:$PROXY_PORT (logs in $RUN)"
java -jar "$JAR" backend --port "$BACKEND_PORT" >"$RUN/backend.log" 2>&1 &
pids+=($!)
cat >"$RUN/proxy.yaml" <<YAML
listen: 127.0.0.1:$PROXY_PORT
upstream: 127.0.0.1:$BACKEND_PORT
kmip:
  host: 127.0.0.1
  port: $KMS_PORT
  ca: kms/ca.pem
  clientCert: kms/proxy.pem
  clientKey: kms/proxy.key
envelopeSubtype: 0            # the embedded backend cannot store subtype 6
collections:                  # every field but _id encrypted, one collection per suite
  ycsb.usertable_aes:  { key: 89d6d529-a2fe-31dd-ae60-3cb35458dcc0, fields: "*" }   # the benchmark matrix
  ycsb.usertable_aria: { key: da6fd698-4681-3bb5-88ad-d1d9d68b1df6, fields: "*" }
  ycsb.usertable_3des: { key: 93a7f87f-458c-31be-ad16-d5dfa2fc1bae, fields: "*" }
  ycsb.usertable_seed: { key: $(key SEED-128), fields: "*" }
  ycsb.usertable_lea:  { key: $(key LEA-256), fields: "*" }
  bench.aes:  { key: 89d6d529-a2fe-31dd-ae60-3cb35458dcc0, fields: "*" }   # AES-256, AES_GCM
  bench.aria: { key: da6fd698-4681-3bb5-88ad-d1d9d68b1df6, fields: "*" }   # ARIA-256, ARIA_GCM
  bench.lea:  { key: $(key LEA-256), fields: "*" }                        # LEA_GCM
  bench.seed: { key: $(key SEED-128), fields: "*" }                       # SEED_CBC_HMAC
  bench.tdes: { key: 93a7f87f-458c-31be-ad16-d5dfa2fc1bae, fields: "*" }   # 3DES, TDES_CBC_HMAC
YAML
java -jar "$JAR" proxy --config "$RUN/proxy.yaml" >"$RUN/proxy.log" 2>&1 &
pids+=($!)
wait_port "$BACKEND_PORT"
wait_port "$PROXY_PORT"

echo "demo: the keys as the proxy resolves them over KMIP (fingerprint = first 8 bytes of SHA-256, never the key)"
java -jar "$JAR" keys --config "$RUN/proxy.yaml" \
  89d6d529-a2fe-31dd-ae60-3cb35458dcc0 da6fd698-4681-3bb5-88ad-d1d9d68b1df6 93a7f87f-458c-31be-ad16-d5dfa2fc1bae \
  $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).values()))' "$KMS_DIR/bootstrap.json")

if [ "$JOB" = overhead ]; then
  echo "demo: overhead benchmark, $THREADS threads, ${SECONDS_PER_PHASE}s per phase: direct, proxy without policy, each suite"
  java -jar "$JAR" overhead \
    --direct "mongodb://127.0.0.1:$BACKEND_PORT" --proxy "mongodb://127.0.0.1:$PROXY_PORT" \
    --encrypted AES-256-GCM=aes --encrypted ARIA-256-GCM=aria --encrypted LEA-256-GCM=lea \
    --encrypted SEED-128-CBC-HMAC=seed --encrypted 3DES-CBC-HMAC=tdes \
    --threads "$THREADS" --seconds "$SECONDS_PER_PHASE" --rounds 2 --warmup "$WARMUP" --out "$OUT" \
    --note "Embedded backend (mongo-java-server, in memory), proxy and client on one $(nproc)-core machine, $(date -u +%Y-%m-%d)."
  echo "demo: wrote $OUT/overhead.md and $OUT/overhead.csv"
  exit 0
fi

# The scaled-down matrix: the paper's 1:3:5 record counts, A–F, direct / plain / AES / ARIA / 3DES,
# one repeat. A fresh ledger each time: the demo measures, it does not resume an older run.
rm -f "$OUT/ledger.jsonl" "$OUT/matrix.json"
echo "demo: YCSB matrix: records $RECORDS, workloads $WORKLOADS, algorithms $ALGORITHMS, $THREADS threads"
"$PYTHON" deploy/bench/matrix.py \
  --direct "mongodb://127.0.0.1:$BACKEND_PORT" --proxy "mongodb://127.0.0.1:$PROXY_PORT" \
  --topology embedded --algorithms "$ALGORITHMS" --records "$RECORDS" --workloads "$WORKLOADS" \
  --repeats "$REPEATS" --threads "$THREADS" --operations "$OPERATIONS" --operations-for "e=$E_OPERATIONS" \
  --warmup "$WARMUP_OPERATIONS" \
  --out "$OUT" --title "YCSB matrix on the embedded backend (scaled down)" \
  --note "Embedded backend (mongo-java-server, in memory), KMS, proxy and YCSB on one $(nproc)-core machine, $(date -u +%Y-%m-%d); the figures show relative costs, not what a replica set does." \
  --note "Record counts $RECORDS keep the paper's 1:3:5 ratio at 1/100 of its 1M/3M/5M; $OPERATIONS operations per cell instead of 100,000 and $THREADS threads instead of 100, so the whole matrix fits in about 10 minutes." \
  --note "Workload E runs $E_OPERATIONS operations per cell: the embedded backend reads its whole collection for every range scan (about 26 ms at 10k records), so E is far slower here than on mongod." \
  --note "Before the first cell, $WARMUP_OPERATIONS unrecorded operations of workload A per algorithm warm the proxy and the backend; each cell is still a fresh YCSB JVM, whose own JIT warm-up lowers every algorithm alike." \
  --note "One repeat per cell: on this shared machine cells differ by tens of percent from run to run, so read the tables for large effects only."
echo "demo: wrote $OUT/report.md, $OUT/results.csv and $OUT/plots/"
