#!/usr/bin/env bash
# The main job on one machine: start the KMS (PyKMIP, mutual TLS) with its bootstrap keys, the
# embedded backend and the proxy with one encrypted collection per cipher suite; show the keys as
# the proxy resolves them; run the scaled-down YCSB matrix (deploy/bench/matrix.py) against the
# backend directly, through the proxy without policy and on each encrypted collection; write
# results/embedded/ (report.md, results.csv, plots/); stop everything.
# DEMO_JOB=overhead (make bench-overhead) runs the overhead benchmark instead: the same policy in
# one proxy per transport (nio, epoll, io_uring where it starts) and a byte relay per transport in
# front of the backend (proxy/bench/target/fle-bench.jar relay), and on epoll one more proxy with a
# TLS listener (certificate from the KMS CA: kms proxy-tls); the benchmark (fle-bench.jar overhead)
# reads each relay's and proxy's CPU per operation and probes allocation with JFR.
set -euo pipefail
cd "$(dirname "$0")/.."

JAR=proxy/target/fle-proxy.jar
BENCH_JAR=proxy/bench/target/fle-bench.jar
RUN=$(mktemp -d)
THREADS=${DEMO_THREADS:-8}
SECONDS_PER_PHASE=${DEMO_SECONDS:-5}   # overhead: length of each insert and read phase
ROUNDS=${DEMO_ROUNDS:-3}               # overhead: rounds, in alternating order (figures: the median)
SIDE_ROUNDS=${DEMO_SIDE_BY_SIDE_ROUNDS:-5}  # overhead-metrics: rounds of each pair's twins loaded at once (rule 5)
WARMUP=${DEMO_WARMUP:-180}  # overhead: seconds of unreported load first, shared by the processes (JIT warm-up: 30 s each)
JOB=${DEMO_JOB:-matrix}     # matrix (the YCSB lab, default), paper-cell (make bench-paper-cell: workload A
                            # at the paper's 1,000,000 records, plain / AES / 3DES), overhead (make bench-overhead) or
                            # overhead-metrics (make bench-metrics: rule 5 over pairs of proxies on epoll) or
                            # rewrap (make bench-rewrap: rewrap's speed, alone and under YCSB load)
if [ "$JOB" = paper-cell ]; then   # one cell of the paper's matrix at its size; the backend holds it in memory
  RECORDS=${DEMO_RECORDS:-1000000} WORKLOADS=${DEMO_WORKLOADS:-a} ALGORITHMS=${DEMO_ALGORITHMS:-plain,aes,3des}
  REPEATS=${DEMO_REPEATS:-2} CELL_SECONDS=${DEMO_CELL_SECONDS:-30} DEMO_FIRST_WARMUP_SECONDS=${DEMO_FIRST_WARMUP_SECONDS:-0}
  DEMO_WARMUP_SECONDS=${DEMO_WARMUP_SECONDS:-10} BACKEND_HEAP=${DEMO_BACKEND_HEAP:-14g}
fi
RECORDS=${DEMO_RECORDS:-${RECORDS:-2000,6000,10000}}
WORKLOADS=${DEMO_WORKLOADS:-${WORKLOADS:-a,b,c,d,e,f}}
ALGORITHMS=${DEMO_ALGORITHMS:-${ALGORITHMS:-direct,plain,aes,aria,3des}}
REPEATS=${DEMO_REPEATS:-${REPEATS:-2}}
CELL_SECONDS=${DEMO_CELL_SECONDS:-${CELL_SECONDS:-3}}  # matrix: each cell's measured window, per algorithm
BACKEND_HEAP=${DEMO_BACKEND_HEAP:-${BACKEND_HEAP:-}}   # the embedded backend's -Xmx (default: the JVM's)
E_SECONDS=${DEMO_E_SECONDS:-4}               # matrix: workload E's window (each scan returns up to 100 records)
SLICE_SECONDS=${DEMO_SLICE_SECONDS:-0.25}    # matrix: the algorithms take turns in slices this long
WARMUP_SECONDS=${DEMO_WARMUP_SECONDS:-0.25}  # matrix: unrecorded, per cell and algorithm, before its window
FIRST_WARMUP_SECONDS=${DEMO_FIRST_WARMUP_SECONDS:-15}  # matrix: unrecorded, per algorithm, before the first session
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
# scrape_every SECONDS PORT PID [FAST]: GET /metrics on 127.0.0.1:PORT every SECONDS while PID lives
# (bash only: no curl on a fresh machine), as Prometheus would; what it reads is thrown away. For
# the first FAST seconds, every 0.2 s: the warm-up's share, so that the JIT has compiled the scrape
# path by the time anything is measured, as it has in a proxy that has run for an hour.
scrape_every() {
  local until=$((SECONDS + ${4:-0}))
  while kill -0 "$3" 2>/dev/null; do
    { exec 3<>"/dev/tcp/127.0.0.1/$2" && printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && cat <&3 >/dev/null; } 2>/dev/null || true
    exec 3<&- 2>/dev/null
    if [ "$SECONDS" -lt "$until" ]; then sleep 0.2; else sleep "$1"; fi
  done
}
# wait_started PID PORT: 0 once PORT listens, 1 as soon as the process PID has exited.
wait_started() {
  for _ in $(seq 1 150); do
    kill -0 "$1" 2>/dev/null || return 1
    (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && return 0
    sleep 0.2
  done
  echo "demo: nothing listening on port $2; see $RUN/*.log" >&2
  return 1
}

# Each job writes into a new folder of its own (build/runs/JOB-TIME/) and what it wrote replaces
# the committed results only once it has completed (publish), so a run that stops half-way leaves
# results/ as they were and its partial output where it says.
RUNS=build/runs
stage() { # stage FINAL: prints a new, empty folder for a job whose results go to FINAL
  mkdir -p "$RUNS"
  mktemp -d "$RUNS/$(basename "$1")-$(date -u +%Y%m%dT%H%M%SZ)-XXXX"
}
publish() { # publish STAGED FINAL [whole]: FINAL's entries of the same names replaced by STAGED's
  # (or, with `whole`, FINAL replaced as a whole); STAGED is left empty and removed
  local staged=$1 final=$2
  if [ "${3:-}" = whole ]; then
    rm -rf "$final"; mkdir -p "$(dirname "$final")"; mv "$staged" "$final"
  else
    mkdir -p "$final"
    for entry in "$staged"/* "$staged"/.[!.]*; do
      [ -e "$entry" ] || continue
      rm -rf "${final:?}/$(basename "$entry")"
      mv "$entry" "$final/"
    done
    rmdir "$staged"
  fi
  echo "demo: results of $staged now in $final"
}

pids=()
staged_note=
cleanup() {
  local status=$?
  [ -n "$staged_note" ] && [ "$status" != 0 ] && echo "demo: stopped (status $status): $staged_note" >&2
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
java ${BACKEND_HEAP:+-Xmx$BACKEND_HEAP} -jar "$JAR" backend --port "$BACKEND_PORT" >"$RUN/backend.log" 2>&1 &
BACKEND_PID=$!
pids+=($BACKEND_PID)
ADMIN_PORT=$(free_port)
cat >"$RUN/proxy.yaml" <<YAML
listen: 127.0.0.1:$PROXY_PORT
upstream: 127.0.0.1:$BACKEND_PORT
admin: 127.0.0.1:$ADMIN_PORT        # /metrics: the matrix reads what the proxy adds per request
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
  bench.aes_m: { key: 89d6d529-a2fe-31dd-ae60-3cb35458dcc0, fields: "*" }  # the same, for the proxy with metrics
  bench.aria: { key: da6fd698-4681-3bb5-88ad-d1d9d68b1df6, fields: "*" }   # ARIA-256, ARIA_GCM
  bench.lea:  { key: $(key LEA-256), fields: "*" }                        # LEA_GCM
  bench.seed: { key: $(key SEED-128), fields: "*" }                       # SEED_CBC_HMAC
  bench.tdes: { key: 93a7f87f-458c-31be-ad16-d5dfa2fc1bae, fields: "*" }   # 3DES, TDES_CBC_HMAC
  bench.evaluated: { key: 89d6d529-a2fe-31dd-ae60-3cb35458dcc0, fields: { x: {} } }  # queries the proxy evaluates
YAML
java -jar "$JAR" proxy --config "$RUN/proxy.yaml" >"$RUN/proxy.log" 2>&1 &
PROXY_PID=$!
pids+=($PROXY_PID)
wait_port "$BACKEND_PORT"
wait_port "$PROXY_PORT"
wait_port "$ADMIN_PORT"

echo "demo: the keys as the proxy resolves them over KMIP (fingerprint = first 8 bytes of SHA-256, never the key)"
java -jar "$JAR" keys --config "$RUN/proxy.yaml" \
  89d6d529-a2fe-31dd-ae60-3cb35458dcc0 da6fd698-4681-3bb5-88ad-d1d9d68b1df6 93a7f87f-458c-31be-ad16-d5dfa2fc1bae \
  $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).values()))' "$KMS_DIR/bootstrap.json")

if [ "$JOB" = rewrap ]; then
  # What a key change costs on a live collection (issue 16): rewrap moves YCSB collections from 3DES
  # to AES alone and under a YCSB workload on the same collection; deploy/bench/rewrap_bench.py
  # drives the policy (SIGHUP), the loads, the runs and the checks, and writes the report.
  FINAL=results/embedded/rewrap
  OUT=$(stage "$FINAL")
  staged_note="what it wrote is in $OUT; $FINAL was left as it was"
  "$PYTHON" -m deploy.bench.rewrap_bench --proxy-port "$PROXY_PORT" --proxy-pid "$PROXY_PID" \
    --backend-pid "$BACKEND_PID" --config "$RUN/proxy.yaml" --proxy-log "$RUN/proxy.log" \
    --old-key 93a7f87f-458c-31be-ad16-d5dfa2fc1bae --new-key 89d6d529-a2fe-31dd-ae60-3cb35458dcc0 \
    --records "${DEMO_REWRAP_RECORDS:-5000}" --seconds "${DEMO_REWRAP_SECONDS:-15}" \
    --repeats "${DEMO_REPEATS:-3}" --ramp "${DEMO_REWRAP_RAMP:-60}" --threads "$THREADS" --jar "$JAR" --out "$OUT" \
    --command "make bench-rewrap (DEMO_REWRAP_RECORDS=${DEMO_REWRAP_RECORDS:-5000} DEMO_REWRAP_SECONDS=${DEMO_REWRAP_SECONDS:-15} DEMO_REPEATS=${DEMO_REPEATS:-3})"
  publish "$OUT" "$FINAL" whole
  exit 0
fi

if [ "$JOB" = overhead-metrics ]; then
  # The cost of metrics (rule 5 of the overhead benchmark), judged over PAIRS pairs of fresh proxy
  # processes on epoll with the policy above: one without `admin:`, its twin with it and /metrics
  # scraped every 5 s as Prometheus would. Two JVMs of one configuration differ by a few per cent
  # in CPU per operation for as long as they live, so one pair cannot resolve 3 %: each pair is
  # warmed side by side for WARMUP seconds and gets SIDE_ROUNDS rounds in which both are loaded at
  # the same time, and deploy/bench/metrics_cost.py judges all pairs' rounds together (the JIT
  # compilers' CPU apart: fle-bench reads it per phase). DEMO_METRICS_CONTROL=1 runs the same with the twin also
  # without `admin:` (an A/A run: what the method reads when there is nothing to find).
  # DEMO_METRICS_TWIN=audit (make bench-audit) gives the twin `identities:` and `audit:` instead of
  # `admin:`: the same method judges what identities and the audit trail cost.
  PAIRS=${DEMO_METRICS_PAIRS:-6}
  SCRAPE=${DEMO_METRICS_SCRAPE_SECONDS:-5}  # how often the twin's /metrics is fetched; 0: never (the data path alone)
  control=${DEMO_METRICS_CONTROL:-0}
  TWIN=${DEMO_METRICS_TWIN:-metrics}
  FINAL=${DEMO_METRICS_OUT:-results/embedded/metrics-overhead}
  if [ "$TWIN" = audit ]; then SCRAPE=0 FINAL=${DEMO_METRICS_OUT:-results/embedded/audit-overhead}; fi
  [ "$control" = 1 ] && FINAL=${DEMO_METRICS_OUT:-results/embedded/metrics-overhead-control}
  OUT=$(stage "$FINAL")
  staged_note="what it wrote is in $OUT; $FINAL was left as it was"
  sed -e "/^upstream: /a transport: epoll" -e '/^admin: /d' "$RUN/proxy.yaml" >"$RUN/proxy-off.yaml"
  start_twin() { # start_twin NAME PORT [ADMIN_PORT]: a proxy of proxy-off.yaml on PORT; prints its pid
    { sed -e "s/^listen: .*/listen: 127.0.0.1:$2/" "$RUN/proxy-off.yaml"
      if [ -n "${3:-}" ] && [ "$TWIN" = audit ]; then
        printf 'identities:\n  bench: { user: "bench@admin" }\naudit:\n  file: %s\n  key: %s\n' \
          "$RUN/audit-$1/audit.log" 89d6d529-a2fe-31dd-ae60-3cb35458dcc0
      elif [ -n "${3:-}" ]; then
        echo "admin: 127.0.0.1:$3"
      fi; } >"$RUN/proxy-$1.yaml"
    java -jar "$JAR" proxy --config "$RUN/proxy-$1.yaml" >"$RUN/proxy-$1.log" 2>&1 &
    echo $!
  }
  for k in $(seq 1 "$PAIRS"); do
    off_port=$(free_port) on_port=$(free_port) admin_port=$(free_port)
    # counterbalanced: in even pairs the twin with metrics starts first and takes the other
    # collections (an A/A run showed the second-started process ~2 % cheaper, within noise)
    start_on() { if [ "$control" = 1 ]; then start_twin "on-$k" "$on_port"; else start_twin "on-$k" "$on_port" "$admin_port"; fi; }
    if [ $((k % 2)) = 0 ]; then
      on_pid=$(start_on); off_pid=$(start_twin "off-$k" "$off_port"); mine=(plain aes) theirs=(plain_m aes_m)
    else
      off_pid=$(start_twin "off-$k" "$off_port"); on_pid=$(start_on); mine=(plain_m aes_m) theirs=(plain aes)
    fi
    pids+=($off_pid $on_pid)
    wait_started "$off_pid" "$off_port" && wait_started "$on_pid" "$on_port" \
      || { echo "demo: pair $k did not start: $(tail -q -n 1 "$RUN/proxy-off-$k.log" "$RUN/proxy-on-$k.log")" >&2; exit 1; }
    if [ "$control" != 1 ] && [ "$TWIN" != audit ]; then
      wait_port "$admin_port"
      if [ "$SCRAPE" != 0 ]; then
        scrape_every "$SCRAPE" "$admin_port" "$on_pid" "$WARMUP" &
        pids+=($!)
      fi
    fi
    echo "demo: pair $k of $PAIRS: proxy without $TWIN (pid $off_pid), twin $([ "$control" = 1 ] && echo "also without (A/A control)" || ([ "$TWIN" = audit ] && echo "with identities and the audit trail") || echo "with the admin listener") (pid $on_pid)"
    off="uri=mongodb://127.0.0.1:$off_port,pid=$off_pid,transport=epoll"
    on="uri=mongodb://127.0.0.1:$on_port,pid=$on_pid,transport=epoll,metrics=true"
    # collections of their own: the twins run at the same time
    java -jar "$BENCH_JAR" overhead --target "kind=direct,uri=mongodb://127.0.0.1:$BACKEND_PORT" \
      --target "kind=proxy-plain,$off,collection=${theirs[0]}" --target "kind=encrypted,$off,suite=AES_GCM,collection=${theirs[1]}" \
      --target "kind=proxy-plain,$on,collection=${mine[0]}" --target "kind=encrypted,$on,suite=AES_GCM,collection=${mine[1]}" \
      --threads "$THREADS" --seconds "$SECONDS_PER_PHASE" --rounds "$ROUNDS" --side-by-side-rounds "$SIDE_ROUNDS" \
      --warmup "$WARMUP" --no-alloc --out "$OUT/pair-$k" --crypto-results results/crypto/results.csv \
    --note "Pair $k of $PAIRS$([ "$control" = 1 ] && echo ", A/A control: the twin marked metrics=true runs without \`admin:\` too")$([ "$TWIN" = audit ] && echo ", the twin marked metrics=true runs with \`identities:\` and \`audit:\` (no admin listener)"): embedded backend, KMS, two proxies on epoll and the client on one $(nproc)-core machine, $(date -u +%Y-%m-%d) (\`make bench-$TWIN\`)."
    kill "$off_pid" "$on_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do   # gone before the next pair starts (they are not this shell's children)
      kill -0 "$off_pid" 2>/dev/null || kill -0 "$on_pid" 2>/dev/null || break
      sleep 0.1
    done
  done
  "$PYTHON" -m deploy.bench.metrics_cost --out "$OUT/metrics-cost.md" $([ "$control" = 1 ] && echo --control) \
    --feature "$TWIN" --scrape-seconds "$SCRAPE" --command "make bench-$TWIN (DEMO_METRICS_PAIRS=$PAIRS DEMO_METRICS_SCRAPE_SECONDS=$SCRAPE DEMO_SIDE_BY_SIDE_ROUNDS=$SIDE_ROUNDS DEMO_SECONDS=$SECONDS_PER_PHASE DEMO_THREADS=$THREADS DEMO_METRICS_CONTROL=$control)" \
    "$OUT"/pair-*/overhead.csv
  publish "$OUT" "$FINAL" whole
  echo "demo: wrote $FINAL/metrics-cost.md (and each pair's overhead.md in $FINAL/pair-N/)"
  exit 0
fi

if [ "$JOB" = overhead ]; then
  FINAL=results/embedded
  OUT=$(stage overhead)
  staged_note="what it wrote is in $OUT; $FINAL/overhead.md and overhead.csv were left as they were"
  transports="nio epoll io_uring" everything=1
  # Per transport, a byte relay in front of the backend (the floor) and a proxy with the same
  # policy as above plus `transport: X`; targets grouped by transport, so that what is compared
  # runs close in time: the relay, the proxy without policy, AES-GCM, and on epoll every other
  # suite. A transport whose relay or proxy does not start here is left out, with a line. The
  # allocation probe records AES-GCM on epoll (insert and read) and, for contrast, the reads of
  # the proxy without policy and of the relay on epoll. On epoll only (to keep the run short), a
  # second proxy with the same configuration plus a `tls:` listener gives the proxy without policy
  # and AES-GCM over TLS (tls=true targets: reported beside their plaintext twins, never judged);
  # its certificate is issued from the KMS CA for localhost and 127.0.0.1, which the client trusts.
  targets=(--target "kind=direct,uri=mongodb://127.0.0.1:$BACKEND_PORT")
  tls_args=() tls_note=()
  for transport in $transports; do
    relay_port=$(free_port)
    java -jar "$BENCH_JAR" relay --listen "127.0.0.1:$relay_port" --upstream "127.0.0.1:$BACKEND_PORT" \
      --transport "$transport" >"$RUN/relay-$transport.log" 2>&1 &
    relay_pid=$!
    pids+=($relay_pid)
    port=$(free_port)
    sed -e "s/^listen: .*/listen: 127.0.0.1:$port/" -e "/^upstream: /a transport: $transport" -e '/^admin: /d' \
      "$RUN/proxy.yaml" >"$RUN/proxy-$transport.yaml"
    java -jar "$JAR" proxy --config "$RUN/proxy-$transport.yaml" >"$RUN/proxy-$transport.log" 2>&1 &
    proxy_pid=$!
    pids+=($proxy_pid)
    if ! wait_started "$relay_pid" "$relay_port" || ! wait_started "$proxy_pid" "$port"; then
      echo "demo: transport $transport left out: $(tail -q -n 1 "$RUN/relay-$transport.log" "$RUN/proxy-$transport.log")"
      kill "$relay_pid" "$proxy_pid" 2>/dev/null || true
      continue
    fi
    echo "demo: $transport: relay on 127.0.0.1:$relay_port (pid $relay_pid), proxy on 127.0.0.1:$port (pid $proxy_pid)"
    uri="mongodb://127.0.0.1:$port"
    common="pid=$proxy_pid,transport=$transport"
    if [ "$transport" = epoll ]; then epoll_uri=$uri epoll_pid=$proxy_pid; fi
    read_probe="" both_probe=""
    if [ "$transport" = epoll ] && [ "$everything" = 1 ]; then read_probe=",alloc=read" both_probe=",alloc=both"; fi
    targets+=(--target "kind=relay,uri=mongodb://127.0.0.1:$relay_port,pid=$relay_pid,transport=$transport$read_probe"
              --target "kind=proxy-plain,uri=$uri,$common$read_probe"
              --target "kind=encrypted,uri=$uri,$common,suite=AES_GCM,collection=aes$both_probe")
    if [ "$transport" = epoll ] && [ "$everything" = 1 ]; then
      kms/kms proxy-tls --dir "$KMS_DIR" --name localhost --name 127.0.0.1 --force >/dev/null
      tls_port=$(free_port)
      { sed -e "s/^listen: .*/listen: 127.0.0.1:$tls_port/" "$RUN/proxy-$transport.yaml"
        printf 'tls:\n  cert: %s\n  key: %s\n' "$KMS_DIR/proxy-tls.pem" "$KMS_DIR/proxy-tls.key"
      } >"$RUN/proxy-$transport-tls.yaml"
      java -jar "$JAR" proxy --config "$RUN/proxy-$transport-tls.yaml" >"$RUN/proxy-$transport-tls.log" 2>&1 &
      tls_pid=$!
      pids+=($tls_pid)
      if wait_started "$tls_pid" "$tls_port"; then
        echo "demo: $transport: proxy with a TLS listener on 127.0.0.1:$tls_port (pid $tls_pid)"
        tls_uri="mongodb://127.0.0.1:$tls_port/?tls=true"
        tls_common="pid=$tls_pid,transport=$transport,tls=true"
        targets+=(--target "kind=proxy-plain,uri=$tls_uri,$tls_common"
                  --target "kind=encrypted,uri=$tls_uri,$tls_common,suite=AES_GCM,collection=aes")
        tls_args=(--tls-ca "$KMS_DIR/ca.pem")
        provider=$(grep -o 'TLS by .*' "$RUN/proxy-$transport-tls.log" | head -n 1 || true)
        tls_note=(--note "TLS targets: the proxy on $transport with a \`tls:\` listener (certificate from the KMS CA for localhost and 127.0.0.1), the client trusting that CA${provider:+; its log: $provider}.")
      else
        echo "demo: TLS on $transport left out: $(tail -n 1 "$RUN/proxy-$transport-tls.log")"
        kill "$tls_pid" 2>/dev/null || true
      fi
    fi
    if [ "$transport" = epoll ] && [ "$everything" = 1 ]; then
      targets+=(--target "kind=encrypted,uri=$uri,$common,suite=ARIA_GCM,collection=aria"
                --target "kind=encrypted,uri=$uri,$common,suite=LEA_GCM,collection=lea"
                --target "kind=encrypted,uri=$uri,$common,suite=SEED_CBC_HMAC,collection=seed"
                --target "kind=encrypted,uri=$uri,$common,suite=TDES_CBC_HMAC,collection=tdes")
    fi
  done
  echo "demo: overhead benchmark, $THREADS threads, ${SECONDS_PER_PHASE}s per phase, $ROUNDS rounds, ${WARMUP}s warm-up"
  java -jar "$BENCH_JAR" overhead "${targets[@]}" \
    --threads "$THREADS" --seconds "$SECONDS_PER_PHASE" --rounds "$ROUNDS" --warmup "$WARMUP" --out "$OUT" \
    --crypto-results results/crypto/results.csv ${tls_args[@]+"${tls_args[@]}"} \
    --note "Embedded backend (mongo-java-server, in memory), KMS, a relay and a proxy per transport (one policy) and the client on one $(nproc)-core machine, $(date -u +%Y-%m-%d) (\`make bench-overhead\`)." \
    ${tls_note[@]+"${tls_note[@]}"}
  if [ -n "${epoll_pid:-}" ]; then
    echo "demo: what a query the proxy evaluates costs, per candidate (proxy on epoll)"
    "$PYTHON" -m deploy.bench.evaluated_cost --uri "$epoll_uri" --pid "$epoll_pid" --collection bench.evaluated \
      --append "$OUT/overhead.md" --rounds "${DEMO_EVALUATED_ROUNDS:-5}"
  fi
  publish "$OUT" "$FINAL"
  echo "demo: wrote $FINAL/overhead.md and $FINAL/overhead.csv"
  exit 0
fi

# The scaled-down matrix: the paper's 1:3:5 record counts, A–F, direct / plain / AES / ARIA / 3DES,
# repeats interleaved, and within each workload's window the algorithms take turns in quarter-second
# slices (per record count and repeat: load every algorithm's collection, then per workload a short
# warm-up and the window, then drop them), the proxy's and the backend's CPU time read from /proc at
# every switch. A fresh ledger each time: the demo measures, it does not resume an older run.
# The matrix's files (report.md, results.csv, plots/, ledger.jsonl, matrix.json, raw/) replace
# those in results/embedded when it completes; the other reports there stay.
if [ "$JOB" = paper-cell ]; then
  records_text=$(python3 -c 'import sys; print(" / ".join(f"{int(x):,}" for x in sys.argv[1].split(",")))' "$RECORDS")
  FINAL=${DEMO_OUT:-results/embedded/paper-cell}
  TITLE="YCSB workload A at the paper's size on the embedded backend"
  notes=(
    --note "Embedded backend (mongo-java-server, in memory, -Xmx$BACKEND_HEAP), KMS, proxy and YCSB on one $(nproc)-core machine, $(date -u +%Y-%m-%d) (\`make bench-paper-cell\`); the figures show relative costs, not what a replica set does."
    --note "One cell of the paper's matrix at its size: workload $WORKLOADS, $records_text records (YCSB's ten 100-byte fields), $ALGORITHMS, $REPEATS repeats; each repeat loads every algorithm's collection (so all of them are in the backend's memory at once) and gives each ${CELL_SECONDS} s of $THREADS threads in its window, instead of 100,000 operations of 100 threads."
    --note "Warm-up: the loads of $records_text records per algorithm (the JIT of client, proxy and backend), then ${DEMO_WARMUP_SECONDS} s per algorithm of the workload unrecorded before each window."
    --note "Same-window measurement: per record count and repeat, every algorithm's collection is loaded, and in each workload's window the client's threads work on one algorithm for ${SLICE_SECONDS} s, stop, and move to the next (order rotated between repeats), until each has had its seconds; so the machine's drifts (this shared machine's CPU time per operation moves 5–15 % within seconds, for every process at once) fall on all algorithms alike, and a ratio compares figures measured in the same seconds."
    )
else
  FINAL=${DEMO_OUT:-results/embedded}
  TITLE="YCSB matrix on the embedded backend (scaled down)"
  notes=(
    --note "Embedded backend (mongo-java-server, in memory), KMS, proxy and YCSB on one $(nproc)-core machine, $(date -u +%Y-%m-%d) (\`make demo\`); the figures show relative costs, not what a replica set does."
    --note "Record counts $RECORDS keep the paper's 1:3:5 ratio at 1/500 of its 1M/3M/5M (the embedded backend keeps them in memory); each cell is ${CELL_SECONDS} seconds per algorithm (E: ${E_SECONDS} s) of $THREADS threads instead of 100,000 operations of 100 threads, so the whole matrix fits in about 12 minutes."
    --note "Steady state: one YCSB JVM runs every session, and the proxy and the backend run throughout; before the first session, every algorithm gets ${FIRST_WARMUP_SECONDS} unrecorded seconds over all six workloads (the JIT of client, proxy and backend: a fresh JVM here needs tens of seconds to reach its steady throughput), and before each window every algorithm runs ${WARMUP_SECONDS} s of its workload unrecorded."
    --note "Same-window measurement: per record count and repeat, every algorithm's collection is loaded, and in each workload's window the client's threads work on one algorithm for ${SLICE_SECONDS} s, stop, and move to the next (order rotated between repeats), until each has had its seconds; so the machine's drifts (this shared machine's CPU time per operation moves 5–15 % within seconds, for every process at once) fall on all algorithms alike, and a ratio compares figures measured in the same seconds."
    --note "Workload E: the embedded backend reads a range scan (_id >= k sorted, with a limit) from its bound in _id order and stops at the limit (the launcher's indexes, since 2026-12-01; before, it read and sorted the whole collection for every scan, and E did tens of operations per second here); each scan returns up to 100 records for the proxy to decrypt, so E costs the proxy the most per operation."
  )
fi
OUT=$(stage "$JOB")
staged_note="what it wrote is in $OUT; $FINAL was left as it was"
echo "demo: YCSB matrix: records $RECORDS, workloads $WORKLOADS, algorithms $ALGORITHMS, $REPEATS repeats, $THREADS threads"
"$PYTHON" -m deploy.bench.matrix \
  --direct "mongodb://127.0.0.1:$BACKEND_PORT" --proxy "mongodb://127.0.0.1:$PROXY_PORT" \
  --proxy-pid "$PROXY_PID" --backend-pid "$BACKEND_PID" --proxy-metrics "http://127.0.0.1:$ADMIN_PORT/metrics" \
  --topology embedded --algorithms "$ALGORITHMS" --records "$RECORDS" --workloads "$WORKLOADS" \
  --repeats "$REPEATS" --threads "$THREADS" --operations 10000000 --seconds "$CELL_SECONDS" \
  --interleave slice --slice-seconds "$SLICE_SECONDS" \
  --seconds-for "e=$E_SECONDS" --warmup-seconds "$WARMUP_SECONDS" --first-warmup-seconds "$FIRST_WARMUP_SECONDS" \
  --out "$OUT" --title "$TITLE" "${notes[@]}"
publish "$OUT" "$FINAL"
echo "demo: wrote $FINAL/report.md, $FINAL/results.csv and $FINAL/plots/"
