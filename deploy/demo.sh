#!/usr/bin/env bash
# The main job on one machine: start the KMS (PyKMIP, mutual TLS) with its bootstrap keys, the
# embedded backend and the proxy with one encrypted collection per cipher suite; show the keys as
# the proxy resolves them; run the benchmark against the backend directly, through the proxy
# without policy and on each encrypted collection; write results/embedded/; stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=proxy/target/fle-proxy.jar
OUT=results/embedded
RUN=$(mktemp -d)
THREADS=${DEMO_THREADS:-8}
SECONDS_PER_PHASE=${DEMO_SECONDS:-8}
WARMUP=${DEMO_WARMUP:-60}   # seconds of unreported load first, spread over the targets (JIT warm-up)

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

echo "demo: overhead benchmark, $THREADS threads, ${SECONDS_PER_PHASE}s per phase: direct, proxy without policy, each suite"
java -jar "$JAR" overhead \
  --direct "mongodb://127.0.0.1:$BACKEND_PORT" --proxy "mongodb://127.0.0.1:$PROXY_PORT" \
  --encrypted AES-256-GCM=aes --encrypted ARIA-256-GCM=aria --encrypted LEA-256-GCM=lea \
  --encrypted SEED-128-CBC-HMAC=seed --encrypted 3DES-CBC-HMAC=tdes \
  --threads "$THREADS" --seconds "$SECONDS_PER_PHASE" --rounds 2 --warmup "$WARMUP" --out "$OUT" \
  --note "Embedded backend (mongo-java-server, in memory), proxy and client on one $(nproc)-core machine, $(date -u +%Y-%m-%d)."
echo "demo: wrote $OUT/overhead.md and $OUT/overhead.csv"
