#!/usr/bin/env bash
# The benchmark runner container: deploy/bench/matrix.py against this stack's mongos (direct) and
# proxy; every argument goes to the runner (see README, "The YCSB lab"), e.g.
#   docker compose run --rm bench --topology rs3 --out results/mine --records 100000 --workloads a,c
set -euo pipefail
cd /fle
exec /opt/venv/bin/python deploy/bench/matrix.py \
  --direct "${FLE_DIRECT_URL:-mongodb://mongos:27017}" --proxy "${FLE_PROXY_URL:-mongodb://proxy:27018}" "$@"
