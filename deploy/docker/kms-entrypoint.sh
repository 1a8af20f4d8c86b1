#!/usr/bin/env bash
# The KMS container's main process:
#   1. at first start, the CA and certificates, made here into the KMS volume (never in an image,
#      never in the repository); later starts leave them alone;
#   2. PyKMIP over mutual TLS;
#   3. the bootstrap keys (idempotent): the source paper's AES-256, ARIA-256 and 3DES under their
#      UUIDs, plus SEED, LEA, AES-128 and ARIA-128;
#   4. the proxy's credentials (the CA certificate, its KMIP client certificate and key, its TLS
#      listener certificate and key for the names proxy, localhost and 127.0.0.1; not the CA key,
#      not the admin's) copied into their own volume, the keys readable by the proxy's user only;
#   5. a ready file for the healthcheck; then waits on PyKMIP, passing SIGTERM on.
# Paths and ports come from the environment so the tests can run this script outside a container.
set -euo pipefail

KMS_DIR=${FLE_KMS_DIR:-/kms}
CREDENTIALS=${FLE_PROXY_CREDENTIALS:-/proxy-credentials}
PROXY_UID=${FLE_PROXY_UID:-10001}
BIND=${FLE_KMS_BIND:-0.0.0.0}
PORT=${FLE_KMS_PORT:-5696}
READY=${FLE_KMS_READY_FILE:-/tmp/kms-ready}
KMS=${FLE_KMS_CLI:-kms}

say() { echo "kms-entrypoint: $*"; }
rm -f "$READY"

"$KMS" init --dir "$KMS_DIR" --bind "$BIND" --port "$PORT"
"$KMS" proxy-tls --dir "$KMS_DIR" --name proxy --name localhost --name 127.0.0.1
"$KMS" serve --dir "$KMS_DIR" --port "$PORT" &
server=$!
stop() {
  say "stopping PyKMIP"
  kill -TERM "$server" 2>/dev/null || true
}
trap stop TERM INT

for _ in $(seq 1 150); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { say "PyKMIP exited before listening (see $KMS_DIR/server.log)"; exit 1; }
  sleep 0.2
done
"$KMS" bootstrap --dir "$KMS_DIR"

mkdir -p "$CREDENTIALS"
install -m 0644 "$KMS_DIR/ca.pem" "$CREDENTIALS/ca.pem"
install -m 0644 "$KMS_DIR/proxy.pem" "$CREDENTIALS/proxy.pem"
install -m 0600 "$KMS_DIR/proxy.key" "$CREDENTIALS/proxy.key"
install -m 0644 "$KMS_DIR/proxy-tls.pem" "$CREDENTIALS/proxy-tls.pem"
install -m 0600 "$KMS_DIR/proxy-tls.key" "$CREDENTIALS/proxy-tls.key"
chown "$PROXY_UID" "$CREDENTIALS/proxy.key" "$CREDENTIALS/proxy-tls.key"
say "proxy credentials in $CREDENTIALS (ca.pem, proxy.pem, proxy.key, proxy-tls.pem, proxy-tls.key for uid $PROXY_UID)"
touch "$READY"
say "ready on $BIND:$PORT"

# wait returns early when a trapped signal arrives; wait again for PyKMIP's own shutdown.
status=0
wait "$server" || status=$?
if kill -0 "$server" 2>/dev/null; then
  wait "$server" || status=$?
fi
rm -f "$READY"
exit "$status"
