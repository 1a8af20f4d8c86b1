#!/usr/bin/env bash
# The main job on one machine: start the embedded backend and the proxy, run the benchmark
# against both (direct vs through the proxy), write results/embedded/, stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=proxy/target/fle-proxy.jar
OUT=results/embedded
RUN=$(mktemp -d)
THREADS=${DEMO_THREADS:-8}
SECONDS_PER_PHASE=${DEMO_SECONDS:-10}

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
echo "demo: embedded backend on 127.0.0.1:$BACKEND_PORT, proxy on 127.0.0.1:$PROXY_PORT (logs in $RUN)"
java -jar "$JAR" backend --port "$BACKEND_PORT" >"$RUN/backend.log" 2>&1 &
pids+=($!)
printf 'listen: 127.0.0.1:%s\nupstream: 127.0.0.1:%s\n' "$PROXY_PORT" "$BACKEND_PORT" >"$RUN/proxy.yaml"
java -jar "$JAR" proxy --config "$RUN/proxy.yaml" >"$RUN/proxy.log" 2>&1 &
pids+=($!)
wait_port "$BACKEND_PORT"
wait_port "$PROXY_PORT"

echo "demo: overhead benchmark, $THREADS threads, ${SECONDS_PER_PHASE}s per phase, direct and proxy alternating"
java -jar "$JAR" overhead \
  --direct "mongodb://127.0.0.1:$BACKEND_PORT" --proxy "mongodb://127.0.0.1:$PROXY_PORT" \
  --threads "$THREADS" --seconds "$SECONDS_PER_PHASE" --rounds 2 --out "$OUT" \
  --note "Embedded backend (mongo-java-server, in memory), proxy and client on one $(nproc)-core machine, $(date -u +%Y-%m-%d)."
echo "demo: wrote $OUT/overhead.md and $OUT/overhead.csv"
