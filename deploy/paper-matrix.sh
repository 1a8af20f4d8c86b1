#!/usr/bin/env bash
# The source paper's whole experiment on a Docker host, in one command:
#   YCSB workloads A-F x direct / plain / AES / ARIA / 3DES x 1M / 3M / 5M records x 3 repeats,
#   100 client threads, 100,000 operations per cell after a 30 s unrecorded warm-up per session,
#   write concern w:1 (MongoDB 3.6's default, which the paper ran; 8.0's default is majority), one
#   algorithm's collection in the database at a time (load, measure, drop), first on the 3-member
#   stack, then on the 6-member one. Each stack runs as its own Compose project (fle-rs3, fle-rs6) and is stopped
#   (volumes kept) before the next starts.
#
#   deploy/paper-matrix.sh [RUN] [matrix.py options...]
#
# RUN names the results directory, results/RUN/ (default: paper): ledger.jsonl, report.md with
# the 3-vs-6 comparison, results.csv, plots/. Interrupted, it resumes: run the same command again
# and the runner skips every cell its ledger holds. Options after RUN go to deploy/bench/matrix.py
# and override the paper's, e.g. `deploy/paper-matrix.sh try --records 100000 --repeats 1`.
# FLE_TOPOLOGIES="rs3" runs one stack; FLE_DRY_RUN=1 prints the commands instead of running them.
#
# Preflight: MongoDB 8.0 (the stacks' image) is incompatible with Linux kernels 6.19 through
# 7.0.13 (MongoDB 8.0 release notes; SERVER-121912): mongo:8.0.20's members segfault about 30 s
# into load, later 8.0 builds refuse to start. MongoDB's documented fix is the host's kernel
# (7.0.14 or later); no 8.0 image tag is documented to carry a fix. On such a kernel this script
# stops before starting anything, unless FLE_MONGO_GLIBC_TUNABLES=glibc.pthread.rseq=1 (a
# workaround reported by users, not by MongoDB: TCMalloc then runs without its per-CPU caches, so
# the figures are not those of a default 8.0 deployment) or FLE_IGNORE_KERNEL_CHECK=1. The kernel
# is the Docker engine's (`docker info`), else this machine's (`uname -r`); FLE_KERNEL_RELEASE
# overrides both.
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

# "6.19.3-arch1" -> 6019003; "" when the release does not start with major.minor
kernel_number() {
  local major minor patch
  IFS=. read -r major minor patch <<<"${1%%-*}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 0
  [[ "${patch:-0}" =~ ^[0-9]+$ ]] || patch=0
  echo $((major * 1000000 + minor * 1000 + ${patch:-0}))
}

kernel_preflight() {
  local image release number
  image=$(sed -n 's/^x-mongo-image: *&[a-z-]* *//p' docker-compose.yml)
  case "$image" in mongo:8.*) ;; *) return 0 ;; esac   # 8.x vendors the TCMalloc that breaks
  release=${FLE_KERNEL_RELEASE:-}
  if [ -z "$release" ] && [ -z "${FLE_DRY_RUN:-}" ]; then
    release=$(docker info --format '{{.KernelVersion}}' 2>/dev/null || true)
  fi
  release=${release:-$(uname -r)}
  number=$(kernel_number "$release")
  if [ -z "$number" ]; then
    echo "paper-matrix: warning: cannot read the kernel version '$release'; MongoDB 8.0 crashes on 6.19 through 7.0.13" >&2
    return 0
  fi
  if [ "$number" -lt 6019000 ] || [ "$number" -ge 7000014 ]; then return 0; fi
  echo "paper-matrix: the Docker host runs Linux $release; $image is incompatible with kernels 6.19 through 7.0.13" >&2
  echo "  (MongoDB 8.0 release notes, https://www.mongodb.com/docs/manual/release-notes/8.0/; SERVER-121912):" >&2
  echo "  its members would crash about 30 s into load. MongoDB's fix is the kernel: 7.0.14 or later." >&2
  if [ "${FLE_MONGO_GLIBC_TUNABLES:-}" = "glibc.pthread.rseq=1" ]; then
    echo "paper-matrix: warning: going on with GLIBC_TUNABLES=glibc.pthread.rseq=1 in the members (a workaround users" >&2
    echo "  report, not MongoDB): TCMalloc runs without per-CPU caches; say so next to the figures" >&2
  elif [ -n "${FLE_IGNORE_KERNEL_CHECK:-}" ]; then
    echo "paper-matrix: warning: FLE_IGNORE_KERNEL_CHECK is set; going on (a mis-read kernel version, or a patched one)" >&2
  else
    echo "paper-matrix: stopping. Upgrade the host's kernel, or set FLE_MONGO_GLIBC_TUNABLES=glibc.pthread.rseq=1" >&2
    echo "  (user-reported workaround, TCMalloc without per-CPU caches) or FLE_IGNORE_KERNEL_CHECK=1" >&2
    exit 3
  fi
}
kernel_preflight

trap 'echo "paper-matrix: stopped; the stack is left as it is; run the same command again to resume" >&2' ERR
[ -n "${FLE_DRY_RUN:-}" ] || mkdir -p "results/$RUN"   # the runner writes it as this user

for topology in $TOPOLOGIES; do
  case "$topology" in
    rs3) files=(-f docker-compose.yml) ;;
    rs6) files=(-f docker-compose.yml -f deploy/compose.rs6.yml) ;;
    *) echo "paper-matrix: unknown topology '$topology' (rs3, rs6)" >&2; exit 2 ;;
  esac
  stack=("${compose[@]}" -p "fle-$topology" "${files[@]}")
  echo "paper-matrix: $topology: building the images (bench's too: \`up\` leaves profile-gated services alone) and starting the stack"
  run "${stack[@]}" --profile bench build
  run "${stack[@]}" up -d
  echo "paper-matrix: $topology: the matrix into results/$RUN (cells already in its ledger are skipped)"
  run "${stack[@]}" --profile bench run --rm --user "$(id -u):$(id -g)" bench \
    --topology "$topology" --out "results/$RUN" --write-concern w1 \
    --title "YCSB matrix on MongoDB 8.0 replica sets of 3 and 6 members (the source paper's parameters)" \
    --note "Docker Compose stacks (docker-compose.yml, deploy/compose.rs6.yml): one shard, a replica set of 3 or 6 mongod 8.0 members limited to ${FLE_MEMBER_CPUS:-4} CPUs and ${FLE_MEMBER_MEMORY:-8g} each, behind mongos; write concern w:1." \
    "$@"
  echo "paper-matrix: $topology: done; stopping the stack (its volumes stay; 'docker compose -p fle-$topology down -v' drops them)"
  run "${stack[@]}" down
done
echo "paper-matrix: report in results/$RUN/report.md"
