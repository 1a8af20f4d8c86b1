#!/usr/bin/env bash
# The source paper's whole experiment on a Docker host, in one command:
#   YCSB workloads A-F x direct / plain / AES / ARIA / 3DES x 1M / 3M / 5M records x 3 repeats,
#   100 client threads, 100,000 operations per cell, write concern w:1 (MongoDB 3.6's default,
#   which the paper ran; 8.0's default is majority), first on the 3-member stack, then on the
#   6-member one. Each stack runs as its own Compose project (fle-rs3, fle-rs6) and is stopped
#   (volumes kept) before the next starts.
#
#   deploy/paper-matrix.sh [RUN] [matrix.py options...]
#
# RUN names the results directory, results/RUN/ (default: paper): ledger.jsonl, report.md with
# the 3-vs-6 comparison, results.csv, plots/. Interrupted, it resumes: run the same command again
# and the runner skips every cell its ledger holds. Options after RUN go to deploy/bench/matrix.py
# and override the paper's, e.g. `deploy/paper-matrix.sh try --records 100000 --repeats 1`.
# FLE_TOPOLOGIES="rs3" runs one stack; FLE_DRY_RUN=1 prints the commands instead of running them.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN=${1:-paper}
shift || true
case "$RUN" in
  -*|*/*|"") echo "paper-matrix: the first argument names the run (a directory under results/), not '$RUN'" >&2; exit 2 ;;
esac
TOPOLOGIES=${FLE_TOPOLOGIES:-rs3 rs6}

if [ -n "${FLE_DRY_RUN:-}" ]; then
  compose=(docker compose)
  run() { printf '+'; printf ' %q' "$@"; echo; }
else
  if docker compose version >/dev/null 2>&1; then
    compose=(docker compose)
  elif command -v docker-compose >/dev/null 2>&1; then
    compose=(docker-compose)
  else
    echo "paper-matrix: neither 'docker compose' nor 'docker-compose' is installed" >&2
    exit 2
  fi
  run() { "$@"; }
fi

trap 'echo "paper-matrix: stopped; the stack is left as it is; run the same command again to resume" >&2' ERR
[ -n "${FLE_DRY_RUN:-}" ] || mkdir -p "results/$RUN"   # the runner writes it as this user

for topology in $TOPOLOGIES; do
  case "$topology" in
    rs3) files=(-f docker-compose.yml) ;;
    rs6) files=(-f docker-compose.yml -f deploy/compose.rs6.yml) ;;
    *) echo "paper-matrix: unknown topology '$topology' (rs3, rs6)" >&2; exit 2 ;;
  esac
  stack=("${compose[@]}" -p "fle-$topology" "${files[@]}")
  echo "paper-matrix: $topology: building and starting the stack"
  run "${stack[@]}" up -d --build
  echo "paper-matrix: $topology: the matrix into results/$RUN (cells already in its ledger are skipped)"
  run "${stack[@]}" --profile bench run --rm --user "$(id -u):$(id -g)" bench \
    --topology "$topology" --out "results/$RUN" --property mongodb.writeConcern=w1 \
    --title "YCSB matrix on MongoDB 8.0 replica sets of 3 and 6 members (the source paper's parameters)" \
    --note "Docker Compose stacks (docker-compose.yml, deploy/compose.rs6.yml): one shard, a replica set of 3 or 6 mongod 8.0 members limited to ${FLE_MEMBER_CPUS:-4} CPUs and ${FLE_MEMBER_MEMORY:-8g} each, behind mongos; write concern w:1." \
    "$@"
  echo "paper-matrix: $topology: done; stopping the stack (its volumes stay; 'docker compose -p fle-$topology down -v' drops them)"
  run "${stack[@]}" down
done
echo "paper-matrix: report in results/$RUN/report.md"
