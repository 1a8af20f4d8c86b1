#!/usr/bin/env bash
# The benchmark runner container: the matrix runner (python -m deploy.bench.matrix) against this stack's mongos (direct) and
# proxy; every argument goes to the runner (see docs/benchmarks.md, "The YCSB lab"), e.g.
#   docker compose run --rm bench --topology rs3 --out results/mine --records 100000 --workloads a,c
# The proxy's port speaks TLS with a certificate from the KMS's CA (ca.pem, mounted from the
# credentials volume): pymongo takes it as tlsCAFile, YCSB's Java driver from a trust store made here.
set -euo pipefail
cd /fle
CA=${FLE_PROXY_CA:-/kms-credentials/ca.pem}
PROXY_URL=${FLE_PROXY_URL:-mongodb://proxy:27018/?tls=true&tlsCAFile=$CA}
if [ -f "$CA" ]; then
  # a JKS store loads without its store password (which only guards integrity; it holds one public certificate)
  store=/tmp/fle-proxy-ca.jks
  rm -f "$store"
  keytool -importcert -noprompt -alias fle-kms-ca -file "$CA" -keystore "$store" -storetype JKS \
    -storepass fle-proxy-ca >/dev/null 2>&1
  export JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS:-} -Djavax.net.ssl.trustStore=$store -Djavax.net.ssl.trustStoreType=JKS"
fi
# The stack shares the proxy's PID namespace with this container (pid: service:proxy): its java
# process is visible here, so the runner can record its CPU time per operation.
proxy_pid=
for dir in /proc/[0-9]*; do
  if tr '\0' ' ' <"$dir/cmdline" 2>/dev/null | grep -q 'fle-proxy.jar proxy'; then proxy_pid=${dir#/proc/}; break; fi
done
[ -n "$proxy_pid" ] || echo "bench: the proxy's process is not visible here; its CPU per operation is not recorded" >&2
# The proxy's admin listener (admin: in deploy/proxy/proxy.yaml): what it adds per request, per cell.
METRICS_URL=${FLE_PROXY_METRICS_URL-http://proxy:9464/metrics}
exec /opt/venv/bin/python -m deploy.bench.matrix \
  --direct "${FLE_DIRECT_URL:-mongodb://mongos:27017}" --proxy "$PROXY_URL" ${proxy_pid:+--proxy-pid "$proxy_pid"} \
  ${METRICS_URL:+--proxy-metrics "$METRICS_URL"} "$@"
